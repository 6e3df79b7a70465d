/* Inside the collectives module: what every algorithm file sees. Not a public header.
 *
 * hs_coll_grp summarises a group of ranks on a cluster as the closed forms need it: how many nodes it spans,
 * ranks per node, and the bottleneck bandwidth and latency of an intra-node hop (scale-up) and of an
 * inter-node hop (NIC + fabric). Each algorithm is a table entry (hs_coll_algo_ops) whose `time` gives the
 * idle-network seconds of an operation it supports. */
#ifndef HS_COLL_IMPL_H
#define HS_COLL_IMPL_H

#include "sim/coll/coll.h"

#define HS_COLL_HD_STEPS 24 /* halving-doubling steps: distances 2^0 .. 2^23 (at most 2^24 devices) */

typedef struct hs_coll_grp {
	int n;          /* ranks */
	int nnodes;     /* scale-up domains spanned (nodes, unless a domain spans nodes as an NVL72 rack does) */
	int ppn;        /* ranks on the most populated node */
	int ppn_min;    /* ranks on the least populated node */
	double bw_up;   /* bytes/s per GPU per direction inside a node (min over spanned nodes) */
	double lat_up;  /* seconds per intra-node hop (max) */
	double bw_node; /* bytes/s per node per direction leaving the node for this group's ranks (min) */
	double bw_nic;  /* bytes/s per GPU: the GPU's share of its node's NICs (min) */
	/* Route-aware inter-node bandwidths (sim/coll/coll_route.c): what bw_node becomes where an algorithm's
	 * concurrent inter-node transfers share routed links (the NIC share before the oversubscription when
	 * none is shared beyond its capacity), or bw_node where routes do not apply. */
	double bw_ring; /* bytes/s per node along the ring's inter-node edges; ring, hierarchical and the node ring
			 * of in-switch use it */
	double bw_tree; /* bytes/s per node for the double binary tree's inter-node term */
	double bw_a2a;  /* bytes/s per node of the direct exchange: ppn (n - ppn) pieces take that many / bw_a2a */
	double bw_hd[HS_COLL_HD_STEPS]; /* bytes/s per rank of the halving-doubling step at distance 2^i across
					 * nodes; 0: not routed (bw_node / ppn) */
	double lat_net; /* seconds per inter-node hop: NIC + switch hops of the fabric (max) */
	/* send/recv as nccl-tests' sendrecv_perf runs it: rank i sends to rank i+1 (mod n), all at once */
	int p2p_local, p2p_cross; /* some pair stays inside a scale-up domain / leaves it */
	double bw_p2p;  /* bytes/s of the slowest pair that leaves its domain: its own NIC (shared with the other
			 * ranks of its node that send across), at both ends */
	int inswitch_up;  /* every spanned node's scale-up can reduce in the switch (NVLS) */
	double nvls_eff;  /* fraction of the scale-up bandwidth NVLS's multimem operations reach (min over nodes;
			   * hs_coll_nvls_efficiency) */
	int inswitch_net; /* the fabric can reduce in the switch (SHARP) */
	int nics;         /* across nodes: NICs per scale-up domain (min over nodes); 0 inside one node */
	double nic_path;  /* bytes/s of a GPU's path to its NIC in NCCL's figures (coll.c nic_path; min over nodes),
			   * what NCCL's search starts from (sim/coll/nccl_search.h) */
	int arch;         /* the oldest architecture among the group's devices (enum hs_arch) */
	int nccl_ver;     /* the cluster's NCCL release, major*100 + minor; 0: the newest modelled (nccl_tuner.h) */
	int host_bounce;  /* some node's ranks reach each other only through host memory (PCIe without P2P) */
	int up_pcie;      /* some node's scale-up is PCIe */
	/* the fitted fabric profile of the group's node groups (calib/fabric.h) when they all have the same one,
	 * else NULL; coll_nccl.c applies it to the NCCL model's time */
	const struct hs_fabprof *fab;
	/* an explicit graph (fabric kind explicit; sim/coll/coll_route.c): every rank is its own endpoint (nnodes
	 * = n, ppn = 1: the graph lists no scale-up), every bandwidth above is its algorithm's transfers routed on
	 * the listed links as the flow model routes them, and only the algorithms those routes describe run
	 * (hs_coll_xgraph_routed) */
	int xgraph;
	int xtree;        /* explicit graph: the tree and hierarchical are routed (no domain holds two ranks) */
} hs_coll_grp;

typedef struct hs_coll_algo_ops {
	enum hs_coll_algo algo;
	int (*supports)(const hs_coll_grp *g, enum hs_coll_op op);
	double (*time)(const hs_coll_grp *g, enum hs_coll_op op, double bytes);
} hs_coll_algo_ops;

extern const hs_coll_algo_ops hs_coll_ring, hs_coll_tree, hs_coll_hd, hs_coll_direct, hs_coll_hier,
	hs_coll_inswitch, hs_coll_nvls, hs_coll_nvls_tree;

/* The tree's bandwidth terms on the group, seconds per byte of the message (sim/coll/coll_tree.c): the intra-node
 * chain's over the scale-up and the NICs'; the closed form's bandwidth time is S x the larger. */
void hs_coll_tree_terms(const hs_coll_grp *g, double *t_up, double *t_net);

/* Bandwidth time of phases phase[0..n-1] (seconds each for the whole message, without latencies: the caller
 * adds the fill's latencies once, as NCCL's 8 steps in flight per connection hide the rest), phase k on
 * resource[k] (phases on one resource share it; resources 0..7): the fill (one chunk through every phase) +
 * the busiest resource's time for the other chunks. */
double hs_coll_pipe(const double *phase, const int *resource, int nphases, double bytes);

/* The NCCL model's time of `op` on the group (AUTO protocol), with the group's fabric profile applied
 * (sim/coll/coll_nccl.c): what hs_coll_time returns for a group whose nodes have a fitted profile. */
double hs_coll_nccl_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes);
/* AUTO's rule: the algorithm NCCL's tuner picks for `op` of `bytes` on the group (sim/coll/coll_nccl.c). */
enum hs_coll_algo hs_coll_nccl_pick(const hs_coll_grp *g, enum hs_coll_op op, double bytes);
/* The concrete algorithm `algo` runs on the group (AUTO, FASTEST and unsupported ones resolved). */
enum hs_coll_algo hs_coll_grp_resolve(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes);

/* Summarise ranks[0..n-1]; -1 with a message when a rank is outside the cluster or repeated. */
int hs_coll_grp_init(hs_coll_grp *g, const hs_cluster *c, const int *ranks, int n, hs_err *err);

/* Route-aware time factors (sim/coll/coll_route.c). A demand is a directed transfer between two nodes of a group,
 * with a weight in bytes per byte of the algorithm's message unit; a set of demands runs at once. Its factor
 * T is the seconds per byte of unit weight until the last demand is done, on the routed topology with every
 * link shared by the demands that cross it: max over links of load / bandwidth and over nodes of the weight
 * they send / their NIC share (docs/collectives.md, "Route-aware bandwidth"). 0: no demand leaves a node. */
typedef struct hs_coll_demand {
	int src, dst; /* scale-up domain indices (hs_cluster_domain_of: the node where a node is its own
		       * domain), each holding ranks of the group */
	double w;
} hs_coll_demand;

/* The sets the closed forms use, for the group ranks[0..n-1] (nodes in order of first appearance). */
typedef struct hs_coll_route {
	double ring; /* the ring's N edges, node i to node i+1, weight 1: 1/ring is the slowest edge's bytes/s */
	double tree; /* both trees of hs_coll_dtree_parent over the nodes, every edge up and down, weight 1/2 */
	double a2a;  /* every ordered node pair, weight = the rank pairs between them (k_u * k_v) */
	double hd[HS_COLL_HD_STEPS]; /* step at distance 2^i for 2^i >= ranks per node: rank j of the first power
				      * of two exchanges with rank j ^ 2^i, weight 1 per rank; 0 elsewhere */
} hs_coll_route;

/* Fill *r for ranks[0..n-1]; -1 when routes do not apply (one node, explicit or no fabric, a topology that
 * does not build or does not join the group's NICs) or, unless `always`, cannot lower the NIC share (Clos
 * fabrics without oversubscription). Kept per cluster for the last few rank sets. */
int hs_coll_route_factors(const hs_cluster *c, const int *ranks, int n, int always, hs_coll_route *r);

/* T of any demand set d[0..nd-1] over the group ranks[0..n-1] (routed whatever the fabric, not cached); -1
 * when routes do not apply or a demand names a node that holds none of the ranks. */
double hs_coll_route_time(const hs_cluster *c, const int *ranks, int n, const hs_coll_demand *d, int nd);

/* Explicit graphs (fabric kind explicit): the closed forms' sets routed device to device with the flow model's
 * router (topology/route.c, one ECMP path), each link shared by the transfers of the set that cross it, so a
 * 1 GB/s link among 25 GB/s neighbours slows every algorithm whose transfers cross it. Seconds per byte of unit
 * weight, as hs_coll_route (max over links of load / bandwidth); the NIC share does not apply (the graph has
 * no NICs). */
typedef struct hs_coll_xroute {
	double ring;  /* rank i -> rank i+1, weight 1 */
	double tree;  /* hs_coll_dtree_parent over the ranks, every edge both ways, weight 1/2 (tree_routed) */
	double a2a;   /* every ordered rank pair, weight 1 */
	double hd[HS_COLL_HD_STEPS]; /* rank j <-> j ^ 2^i among the first power of two, weight 1 */
	double lat;   /* seconds: the slowest ring edge's route latency */
	int tree_routed; /* no scale-up domain holds two of the ranks: the flow model's tree has no chains then */
} hs_coll_xroute;

/* Fill *r for ranks[0..n-1] on an explicit graph; -1 when the fabric is not explicit, n < 2, or some pair has
 * no route. Kept per cluster for the last few rank sets. */
int hs_coll_xgraph_factors(const hs_cluster *c, const int *ranks, int n, hs_coll_xroute *r);

/* Bytes/s of the slowest inter-node edge of the ring over ranks[0..n-1] (1 / hs_coll_route.ring), at most
 * each node's NIC share; -1 as hs_coll_route_factors. */
double hs_coll_ring_net_bw(const hs_cluster *c, const int *ranks, int n, int always);

/* One pipelined hop of `bytes` on the slowest link type the group uses: max over intra/inter of a + b/B,
 * where the inter-node bandwidth is the node's NIC share spread over `ranks_sharing` ranks of the node that
 * send across at the same time. */
double hs_coll_hop(const hs_coll_grp *g, double bytes, int ranks_sharing);

/* Time of `op` on a summarised group; *chosen (if not NULL) receives the algorithm that ran. */
double hs_coll_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes,
			enum hs_coll_algo *chosen);

#endif
