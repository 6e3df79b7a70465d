/* In-switch reduction (NVLS on NVSwitch, SHARP in the fabric). Inside a node each GPU pushes its buffer
 * to the switch once and receives the reduced result once: two hop latencies and S over scale-up, instead
 * of the ring's 2(n-1)/n S. Across nodes: with SHARP the fabric reduces too (2 hops, S over the NICs);
 * without it each local rank runs an inter-node ring on its S/ppn share, as NCCL's NVLS-tree does. */
#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	if (op != HS_COLL_ALL_REDUCE)
		return 0;
	if (g->ppn > 1 && !g->inswitch_up)
		return 0;
	if (g->ppn == 1 && !g->inswitch_net)
		return 0;
	return 1;
}

static double inswitch_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	(void)op;
	int p = g->ppn, N = g->nnodes;
	double t = 0;
	if (p > 1)
		t += 2 * g->lat_up + S / g->bw_up;
	if (N > 1) {
		if (g->inswitch_net)
			t += 2 * g->lat_net + S / g->bw_node;
		else
			t += 2.0 * (N - 1) * (g->lat_net + S / N / g->bw_ring); /* a ring over the nodes */
	}
	return t;
}

const hs_coll_algo_ops hs_coll_inswitch = {HS_ALGO_INSWITCH, supports, inswitch_time};
