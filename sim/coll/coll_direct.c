/* Direct: every rank sends to every other rank at once (NCCL's all-to-all and send/recv). A rank sends
 * S/n to each of the n-1 others: (ppn-1) pieces over scale-up, the (n-ppn) others through its node's NICs,
 * which all ppn ranks of the node share; bw_a2a is that share lowered where the transfers of every node pair
 * meet on routed links (sim/coll/coll_route.c, each pair weighted by its rank pairs). All-gather and
 * reduce-scatter move the same pieces; all-reduce is a direct reduce-scatter followed by a direct
 * all-gather. Send/recv is nccl-tests' sendrecv_perf: rank i sends S to rank i+1 over one hop, all at once. */
#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	(void)g;
	return op != HS_COLL_BROADCAST && op != HS_COLL_REDUCE;
}

static double exchange(const hs_coll_grp *g, double S)
{
	int n = g->n, p = g->ppn;
	double piece = S / n;
	double lat = 0, t = 0;
	if (p > 1) {
		lat = g->lat_up;
		t = (p - 1) * piece / g->bw_up;
	}
	if (g->nnodes > 1) {
		double tn = (double)p * (n - p) * piece / g->bw_a2a;
		if (tn > t)
			t = tn;
		if (g->lat_net > lat)
			lat = g->lat_net;
	}
	return lat + t;
}

/* nccl-tests' sendrecv_perf: every rank sends S to the next and receives S from the previous, all at once; the
 * slowest pair decides (hs_coll_grp.bw_p2p: each rank's own NIC and PCIe path across domains). */
static double sendrecv(const hs_coll_grp *g, double S)
{
	double t = 0;
	if (g->p2p_local)
		t = g->lat_up + S / g->bw_up;
	if (g->p2p_cross && g->lat_net + S / g->bw_p2p > t)
		t = g->lat_net + S / g->bw_p2p;
	return t;
}

static double direct_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	switch (op) {
	case HS_COLL_SENDRECV: return sendrecv(g, S);
	case HS_COLL_ALL_REDUCE: return 2 * exchange(g, S);
	default: return exchange(g, S);
	}
}

const hs_coll_algo_ops hs_coll_direct = {HS_ALGO_DIRECT, supports, direct_time};
