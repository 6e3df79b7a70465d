/* NVLS-tree: all-reduce across nodes as NCCL runs it on NVSwitch systems with NVLS (NCCL >= 2.18,
 * src/device/all_reduce.h runTreeSplit with NVLS, src/graph/connect.cc): inside each node NVLS reduces every
 * GPU's slice through the switch (coll_nvls.c), each GPU takes its reduced slice S/p across nodes over its
 * own NIC share in NCCL's double binary tree (up to the root, reduced, and down again), and multicasts the
 * result back through the switch. The three phases work on different chunks at once (HS_COLL_PIPE_CHUNK), so
 * the time is the fill plus the busiest resource's, not the sum:
 *
 *   NVLink (both directions at once, as in NVLS): t_up  = S (1 + 1/p) / (e B_up)
 *   NICs (per node, as the tree's inter-node term): t_net = f S / B_tree, f = 2 (1 for two nodes: each tree
 *                                                    is one edge and a node sends S, not 2S)
 *   t = 2 a_up + 2 ceil(log2 N) a_net + pipe(t_up, t_net)
 *
 * where pipe = (t_up + t_net) / M + (M - 1)/M max(t_up, t_net) over M chunks (hs_coll_pipe). The reduce and
 * the multicast are on the two directions of the same ports, one resource; the tree on the NICs another.
 * Example, 2 nodes x 8 H100 (450 GB/s, e = 0.85), 8 x 400 Gb/s NICs (B_tree = 400 GB/s): t_up = S/340 GB/s,
 * t_net = S/400 GB/s, so for large S the NVLink side paces it: algbw 340 GB/s, busbw 2 (15/16) 340 = 638 GB/s
 * ideal, where a ring's inter-node edges give busbw 400 GB/s at most. */
#include <math.h>

#include "sim/coll/coll_impl.h"

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	return op == HS_COLL_ALL_REDUCE && g->nnodes > 1 && g->ppn > 1 && g->inswitch_up && !g->up_pcie;
}

static double nvls_tree_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	(void)op;
	int p = g->ppn, N = g->nnodes;
	double lat = 2 * g->lat_up + 2 * ceil(log2((double)N)) * g->lat_net;
	double ph[2] = {S * (1 + 1.0 / p) / (g->nvls_eff * g->bw_up), (N > 2 ? 2 : 1) * S / g->bw_tree};
	static const int res[2] = {0, 1};
	return lat + hs_coll_pipe(ph, res, 2, S);
}

const hs_coll_algo_ops hs_coll_nvls_tree = {HS_ALGO_NVLS_TREE, supports, nvls_tree_time};
