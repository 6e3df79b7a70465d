/* Halving-doubling (Rabenseifner): reduce-scatter by recursive halving, then all-gather by recursive
 * doubling. Step k (k = 1..log2 n) exchanges S/2^k with the partner at distance 2^(k-1). Ranks are laid out
 * node by node, so steps at distance < ranks per node stay inside the node and the rest cross it, where all
 * ranks of a node send at once and share its NICs; where the step's exchanges meet on routed links, the
 * step's own route-aware bandwidth per rank (bw_hd, sim/coll/coll_route.c) replaces that share. A count that is
 * not a power of two folds the extra ranks in before and out after, one full-size exchange each (not
 * route-aware: one hop at the NIC share). */
#include <math.h>

#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	(void)g;
	return op == HS_COLL_ALL_REDUCE || op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER;
}

/* One halving (or doubling) sweep over S bytes. */
static double sweep(const hs_coll_grp *g, int pow2, double S)
{
	double t = 0;
	int k = 1;
	for (int d = 1; d < pow2; d *= 2, k++) {
		double b = S / ldexp(1.0, k);
		if (d < g->ppn || g->nnodes == 1)
			t += g->lat_up + b / g->bw_up;
		else
			t += g->lat_net + b / (g->bw_hd[k - 1] > 0 ? g->bw_hd[k - 1] : g->bw_node / g->ppn);
	}
	return t;
}

static double hd_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	int pow2 = 1;
	while (pow2 * 2 <= g->n)
		pow2 *= 2;
	double extra = pow2 == g->n ? 0 : 2 * hs_coll_hop(g, S, 1);
	double one = sweep(g, pow2, S);
	return (op == HS_COLL_ALL_REDUCE ? 2 * one : one) + extra;
}

const hs_coll_algo_ops hs_coll_hd = {HS_ALGO_HALVING_DOUBLING, supports, hd_time};
