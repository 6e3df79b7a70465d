/* Hierarchical, as NCCL composes NVLink and NICs: inside each node a ring over scale-up, across nodes one
 * ring per local rank over the NICs (the ppn rings run at once and share the node's NICs).
 *   all-reduce:     intra reduce-scatter (S), inter all-reduce (S/ppn), intra all-gather (S)
 *   all-gather:     inter all-gather of each local rank's pieces, then intra all-gather (S/ppn per rank)
 *   reduce-scatter: the mirror image
 * The phases are pipelined over chunks of the message (HS_COLL_PIPE_CHUNK), as NCCL's tree and CollNet
 * pipeline theirs: while the NICs carry chunk j across nodes, NVLink reduces chunk j+1 and gathers chunk j-1.
 * So the time is the latencies of one pass, plus the fill, plus the busiest resource's bandwidth time
 * (hs_coll_pipe); the intra-node phases share the NVLink ports and count as one resource. All-reduce, by
 * hand (a = latency, B = bandwidth; p ranks per node, N nodes):
 *   t_up  = 2 (p-1)/p S / B_up             (reduce-scatter and all-gather, one resource)
 *   t_net = 2 (N-1)/N (S/p) / (B_ring/p)   (the p inter-node rings share the node's NICs)
 *   t     = 2 (p-1) a_up + 2 (N-1) a_net + (t_up + t_net)/M + (M-1)/M max(t_up, t_net)
 * e.g. 2 x 8 GPUs, 300 GB/s NVLink, 8 x 200 Gb/s NICs (B_ring 200 GB/s), S = 1 GiB, M = 1024: t_up = 1.75
 * S/300 GB/s = 6.26 ms, t_net = S/200 GB/s = 5.37 ms, t = 11.6 us + 11.6 ms/1024 + 1023/1024 6.26 ms = 6.27 ms
 * where the phases one after the other took 11.6 ms.
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
	static const int res[2] = {0, 1}; /* NVLink, NICs */
	switch (op) {
	case HS_COLL_ALL_REDUCE: {
		double ph[2] = {up * 2.0 * (p - 1) * (S / p / g->bw_up), net * 2.0 * (N - 1) * (S / p / N / bnet)};
		return up * 2.0 * (p - 1) * g->lat_up + net * 2.0 * (N - 1) * g->lat_net + hs_coll_pipe(ph, res, 2, S);
	}
	case HS_COLL_ALL_GATHER:
	case HS_COLL_REDUCE_SCATTER: {
		double ph[2] = {up * (p - 1) * (S / p / g->bw_up), net * (N - 1) * (S / g->n / bnet)};
		/* S here is the whole output (input): a rank's chunk of it is S/n */
		return net * (N - 1) * g->lat_net + up * (p - 1) * g->lat_up + hs_coll_pipe(ph, res, 2, S / g->n);
	}
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
