/* Collective communication: what an operation over a group of devices costs.
 *
 * hs_coll_time is the analytical path (closed forms over the cluster's links, as NCCL's algorithms move
 * bytes). Sizes follow nccl-tests: `bytes` is the per-rank buffer for all-reduce, broadcast and reduce, the
 * total output for all-gather, the total input for reduce-scatter, and each rank's send buffer for all-to-all. */
#ifndef HS_COLL_H
#define HS_COLL_H

#include "models/ops.h" /* enum hs_coll_op */
#include "sim/base/err.h"
#include "topology/cluster.h"

enum hs_coll_algo {
	HS_ALGO_AUTO,    /* NCCL's tuner choice (sim/coll/coll_nccl.c), as NCCL runs the call */
	HS_ALGO_FASTEST, /* the fastest ideal closed form (the rule AUTO followed before NCCL's tuner) */
	HS_ALGO_RING,
	HS_ALGO_TREE, /* double binary tree */
	HS_ALGO_HALVING_DOUBLING,
	HS_ALGO_DIRECT,
	HS_ALGO_HIERARCHICAL,
	HS_ALGO_INSWITCH,  /* in-switch reduction, phases one after the other (SHARP across nodes) */
	HS_ALGO_NVLS,      /* NVLink SHARP inside one scale-up domain (sim/coll/coll_nvls.c) */
	HS_ALGO_NVLS_TREE, /* NVLS inside nodes, NCCL's tree across them, pipelined (coll_nvls_tree.c) */
	HS_ALGO_COUNT
};

const char *hs_coll_op_name(enum hs_coll_op op);   /* "all_reduce", ... */
const char *hs_coll_algo_name(enum hs_coll_algo a); /* "auto", "fastest", "ring", "tree", ... */
int hs_coll_op_parse(const char *s);                /* -1 if unknown */
int hs_coll_algo_parse(const char *s);              /* -1 if unknown */

/* Seconds for `op` over devices ranks[0..n-1] of cluster `c`, idle network. n == 1 costs 0.
 * This is the physical closed form: hop latencies and the bottleneck bandwidth of the links the algorithm
 * uses (a ring all-reduce is exactly 2(n-1)(alpha + S/(nB))), with no protocol overheads; hs_coll_nccl_time
 * (sim/coll/coll_nccl.h) adds NCCL's channels, protocols and launch latencies. An algorithm the operation lacks
 * runs the operation's default (hs_coll_default_algo), as NCCL does. AUTO runs the algorithm NCCL's tuner picks
 * for this size and group (the same rule hs_coll_nccl_time uses, so training steps and `hetsim coll` agree);
 * FASTEST runs the fastest supported closed form.
 * Returns -1 when a rank is outside the cluster or repeated (hs_coll_check says why). */
double hs_coll_time(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n,
		    double bytes);

/* 0 when the closed forms can time collectives on `c` with algorithm setting `algo` (AUTO, FASTEST or one
 * algorithm), else -1 and why. On an explicit graph (fabric kind `explicit`) the closed forms route their
 * transfers over the listed links (sim/coll/coll_route.c); an algorithm whose transfers they do not route there
 * (NVLS, NVLS-tree and in-switch: the graph lists no reducing switch; the tree and hierarchical where a
 * scale-up domain holds several GPUs, which the flow model chains inside the domain) is refused with a message
 * naming the flow fidelity. AUTO and FASTEST choose among the routed algorithms. */
int hs_coll_closed_form_check(const hs_cluster *c, enum hs_coll_algo algo, hs_err *err);
#define HS_COLL_XGRAPH_MAX 512 /* devices of an explicit graph the closed forms route (every pair per group) */

/* Per-link bytes (issue 19): add to load[l], for every link l of hs_coll_link_topo(c), scale x the bytes that
 * `op` of `bytes` with algorithm setting `algo` over ranks[0..n-1] carries across it, each transfer of the
 * algorithm routed as the flow model routes it (topology/route.c; across nodes by the sender's own NIC, or the
 * ring's channels, below), ranks in the flow model's ring order. The transfers are those of the flow model's programs (sim/net/netcoll_*.c): ring (and its chain for broadcast
 * and reduce), direct, the tree with one rank per scale-up domain, halving-doubling over a power of two. 0
 * done; -1 (nothing added) for another algorithm, or when the topology does not build. */
#define HS_COLL_MAX_CHANNELS 64
/* The channels a group's ring runs on, as the flow model opens them (sim/coll/coll_flow.h, the plan both
 * fidelities use; sim/net/netcoll_ring.c): n channels, channel c crossing nodes on rail rails[c] (n > 1), or
 * one whose crossings split over every rail (spread). NULL: one channel on each sender's own NIC. */
typedef struct hs_coll_channels {
	int n;
	int rails[HS_COLL_MAX_CHANNELS];
	int spread;
} hs_coll_channels;
int hs_coll_link_bytes(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n,
		       double bytes, double scale, const hs_coll_channels *ch, double *load);
/* The same for one transfer of `bytes` from device src to device dst (a pipeline send), routed as the flow
 * model routes hs_net_send. */
int hs_coll_link_bytes_send(const hs_cluster *c, int src, int dst, double bytes, double scale, double *load);
/* The link graph hs_coll_link_bytes indexes (built once per cluster), NULL when it does not build. */
const struct hs_topo *hs_coll_link_topo(const hs_cluster *c);

/* 0 when ranks[0..n-1] is a valid group of `c` (distinct devices inside the cluster), else -1 and why. */
int hs_coll_check(const hs_cluster *c, const int *ranks, int n, hs_err *err);
/* Whether `algo` implements `op` on this group (AUTO always does). */
int hs_coll_supported(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n);
/* Ring for the reductions and gathers, direct for all-to-all and send/recv. */
enum hs_coll_algo hs_coll_default_algo(enum hs_coll_op op);
/* The algorithm AUTO picks for this call: NCCL's tuner choice (sim/coll/coll_nccl.c). */
enum hs_coll_algo hs_coll_auto_algo(const hs_cluster *c, enum hs_coll_op op, const int *ranks, int n, double bytes);
/* The concrete algorithm `algo` runs for this call: AUTO as hs_coll_auto_algo, FASTEST the fastest closed form,
 * an algorithm the operation lacks the operation's default. */
enum hs_coll_algo hs_coll_resolve_algo(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo,
				       const int *ranks, int n, double bytes);

/* NCCL's double binary tree over N nodes (src/graph/trees.cc): the parent of node x in tree t (0 or 1), -1 at
 * a root. Tree 0 is NCCL's btree; tree 1 its mirror image (x -> N-1-x) for even N, its shift by one for odd N,
 * so a node is interior in at most one of them. The closed form's route-aware factor (sim/coll/coll_route.c) and
 * the step-by-step tree (sim/net/netcoll_tree.c) both take the shape from here. */
int hs_coll_dtree_parent(int x, int N, int t);

/* NVLS's efficiency on a device: NCCL's per-architecture nvlsEfficiency (sim/coll/coll_nvls.c cites it); 1 for
 * an architecture NCCL lists none for. */
double hs_coll_nvls_efficiency(const hs_device_type *d);

/* Pipelined phases (hierarchical, NVLS-tree): a message is cut into chunks of HS_COLL_PIPE_CHUNK bytes of the
 * per-rank buffer, and every phase works on a different chunk at once. The step-by-step programs
 * (sim/net/netcoll_pipe.c) cut it the same way, so the two agree on an idle network. 1 MiB is the flow
 * model's default slice (the tree's, docs/collectives.md); NCCL's own is per channel (512 KiB Simple steps,
 * 128 KiB NVLS chunks), so with its 8-16 channels a message step is of the same order. */
#define HS_COLL_PIPE_CHUNK 1048576.0

/* nccl-tests' bus-bandwidth factor for `op` over n ranks: busbw = algbw * factor. */
double hs_coll_busbw_factor(enum hs_coll_op op, int n);

#endif
