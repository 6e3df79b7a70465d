/* Ring collectives: every rank sends to its successor. All-reduce is a reduce-scatter then an all-gather,
 * 2(n-1) steps of S/n; all-gather and reduce-scatter are n-1 steps of S/n; broadcast and reduce are a chain
 * pipelined in small chunks, so they cost (n-1) hop latencies plus S over the slowest link. On an idle network
 * every step is one pipelined hop on the slowest link type the ring crosses (hs_coll_hop). */
#include <math.h>

#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	(void)g;
	return op != HS_COLL_ALL_TO_ALL && op != HS_COLL_SENDRECV;
}

/* The slowest bandwidth on the ring: scale-up inside nodes, the ring's routed inter-node edges across them. */
static double bottleneck_bw(const hs_coll_grp *g)
{
	double b = INFINITY;
	if (g->ppn > 1)
		b = g->bw_up;
	if (g->nnodes > 1 && g->bw_ring < b)
		b = g->bw_ring;
	return b;
}

/* hs_coll_hop on the ring's own inter-node bandwidth (bw_ring: its edges' share of the routed links). */
static double hop(const hs_coll_grp *g, double bytes)
{
	hs_coll_grp r = *g;
	r.bw_node = g->bw_ring;
	return hs_coll_hop(&r, bytes, 1);
}

static double ring_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	int n = g->n;
	switch (op) {
	case HS_COLL_ALL_REDUCE: return 2.0 * (n - 1) * hop(g, S / n);
	case HS_COLL_ALL_GATHER:
	case HS_COLL_REDUCE_SCATTER: return (n - 1) * hop(g, S / n);
	case HS_COLL_BROADCAST:
	case HS_COLL_REDUCE: return (n - 1) * hop(g, 0) + S / bottleneck_bw(g);
	default: return hs_coll_hop(g, S, 1);
	}
}

const hs_coll_algo_ops hs_coll_ring = {HS_ALGO_RING, supports, ring_time};
