/* Double binary tree (NCCL's tree): a chain of the node's ranks inside each node, two complementary binary
 * trees across nodes, each carrying half the data; reduce goes up while broadcast comes down, pipelined.
 *
 * Latency: up and down the tree, 2((ppn-1) intra hops + ceil(log2 nnodes) inter hops).
 * Bandwidth: a rank in the middle of a chain sends S (its half in each tree, once up and once down), so
 * scale-up carries 2S per GPU when ppn >= 3 and S when ppn == 2. Across nodes a node is interior in one tree
 * and a leaf in the other: its NICs send 2S (4 tree edges x S/2), except for two nodes where each tree is a
 * single edge and a node sends S. bw_tree is the node's NIC share, lowered where the two trees' edges (both
 * ways at once, S/2 each) meet on routed links (sim/coll/coll_route.c). Only all-reduce uses the tree, as in NCCL. */
#include <math.h>

#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	/* on an explicit graph whose scale-up domains hold several of the ranks the tree chains them, which the
	 * closed form does not route (hs_coll_grp.xtree): NCCL's tuner model and AUTO leave it out there */
	return op == HS_COLL_ALL_REDUCE && !(g->xgraph && !g->xtree);
}

void hs_coll_tree_terms(const hs_coll_grp *g, double *t_up, double *t_net)
{
	int p = g->ppn, N = g->nnodes;
	*t_up = p >= 3 ? 2 / g->bw_up : p == 2 ? 1 / g->bw_up : 0;
	*t_net = N > 2 ? 2 / g->bw_tree : N == 2 ? 1 / g->bw_tree : 0;
}

static double tree_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	(void)op;
	int p = g->ppn, N = g->nnodes;
	double lat = 2.0 * ((p - 1) * g->lat_up + (N > 1 ? ceil(log2((double)N)) * g->lat_net : 0));
	double t_up, t_net;
	hs_coll_tree_terms(g, &t_up, &t_net);
	return lat + S * (t_up > t_net ? t_up : t_net);
}

/* Parent of node x in NCCL's btree over N nodes (-1 for the root, node 0). Node x > 0 with lowest set bit
 * b sits between the subtrees of x - b and x + b; its parent is the node one level up on the same side
 * (clear b, set 2b), or x - b when that is beyond the last node. */
static int btree_parent(int x, int N)
{
	if (x == 0)
		return -1;
	int b = x & -x;
	int up = (x & ~b) | (b << 1);
	return up < N ? up : x & ~b;
}

int hs_coll_dtree_parent(int x, int N, int t)
{
	if (t == 0)
		return btree_parent(x, N);
	if (N % 2) {
		int u = btree_parent((x - 1 + N) % N, N);
		return u < 0 ? -1 : (u + 1) % N;
	}
	int u = btree_parent(N - 1 - x, N);
	return u < 0 ? -1 : N - 1 - u;
}

const hs_coll_algo_ops hs_coll_tree = {HS_ALGO_TREE, supports, tree_time};
