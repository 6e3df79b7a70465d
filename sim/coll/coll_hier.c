/* Hierarchical, as NCCL composes NVLink and NICs: inside each node a ring over scale-up, across nodes one
 * ring per local rank over the NICs (the ppn rings run at once and share the node's NICs).
 *   all-reduce:     intra reduce-scatter (S), inter all-reduce (S/ppn), intra all-gather (S)
 *   all-gather:     inter all-gather of each local rank's pieces, then intra all-gather (S/ppn per rank)
 *   reduce-scatter: the mirror image
 *   broadcast/reduce: a chain across nodes then inside them, pipelined: latencies add, the slowest link sets
 *   the rate. */
#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	(void)g;
	return op != HS_COLL_ALL_TO_ALL && op != HS_COLL_SENDRECV;
}

static double hier_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	int p = g->ppn, N = g->nnodes;
	double up = p > 1 ? 1 : 0, net = N > 1 ? 1 : 0;
	double bnet = g->bw_ring / p; /* one inter-node ring's share of the NICs (the p rings join the same nodes) */
	switch (op) {
	case HS_COLL_ALL_REDUCE:
		return up * 2.0 * (p - 1) * (g->lat_up + S / p / g->bw_up) +
		       net * 2.0 * (N - 1) * (g->lat_net + S / p / N / bnet);
	case HS_COLL_ALL_GATHER:
	case HS_COLL_REDUCE_SCATTER:
		return net * (N - 1) * (g->lat_net + S / g->n / bnet) + up * (p - 1) * (g->lat_up + S / p / g->bw_up);
	case HS_COLL_BROADCAST:
	case HS_COLL_REDUCE: {
		double b = up ? g->bw_up : g->bw_ring;
		if (net && g->bw_ring < b)
			b = g->bw_ring;
		return net * (N - 1) * g->lat_net + up * (p - 1) * g->lat_up + S / b;
	}
	default: return hs_coll_hop(g, S, 1);
	}
}

const hs_coll_algo_ops hs_coll_hier = {HS_ALGO_HIERARCHICAL, supports, hier_time};
