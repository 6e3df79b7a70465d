/* Collective communication: what an operation over a group of devices costs.
 *
 * hs_coll_time is the analytical path (closed forms over the cluster's links, as NCCL's algorithms move
 * bytes). Sizes follow nccl-tests: `bytes` is the per-rank buffer for all-reduce, broadcast and reduce, the
 * total output for all-gather, the total input for reduce-scatter, and each rank's send buffer for all-to-all. */
#ifndef HS_COLL_H
#define HS_COLL_H

#include "models/ops.h" /* enum hs_coll_op */
#include "sim/err.h"
#include "topology/cluster.h"

enum hs_coll_algo {
	HS_ALGO_AUTO,
	HS_ALGO_RING,
	HS_ALGO_TREE, /* double binary tree */
	HS_ALGO_HALVING_DOUBLING,
	HS_ALGO_DIRECT,
	HS_ALGO_HIERARCHICAL,
	HS_ALGO_INSWITCH, /* NVLS / SHARP */
	HS_ALGO_COUNT
};

const char *hs_coll_op_name(enum hs_coll_op op);   /* "all_reduce", ... */
const char *hs_coll_algo_name(enum hs_coll_algo a); /* "auto", "ring", "tree", ... */
int hs_coll_op_parse(const char *s);                /* -1 if unknown */
int hs_coll_algo_parse(const char *s);              /* -1 if unknown */

/* Seconds for `op` over devices ranks[0..n-1] of cluster `c`, idle network. n == 1 costs 0. */
double hs_coll_time(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n,
		    double bytes);

/* nccl-tests' bus-bandwidth factor for `op` over n ranks: busbw = algbw * factor. */
double hs_coll_busbw_factor(enum hs_coll_op op, int n);

#endif
