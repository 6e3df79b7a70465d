/* Inside the collectives module: what every algorithm file sees. Not a public header.
 *
 * hs_coll_grp summarises a group of ranks on a cluster as the closed forms need it: how many nodes it spans,
 * ranks per node, and the bottleneck bandwidth and latency of an intra-node hop (scale-up) and of an
 * inter-node hop (NIC + fabric). Each algorithm is a table entry (hs_coll_algo_ops) whose `time` gives the
 * idle-network seconds of an operation it supports. */
#ifndef HS_COLL_IMPL_H
#define HS_COLL_IMPL_H

#include "sim/coll.h"

typedef struct hs_coll_grp {
	int n;          /* ranks */
	int nnodes;     /* nodes spanned */
	int ppn;        /* ranks on the most populated node */
	int ppn_min;    /* ranks on the least populated node */
	double bw_up;   /* bytes/s per GPU per direction inside a node (min over spanned nodes) */
	double lat_up;  /* seconds per intra-node hop (max) */
	double bw_node; /* bytes/s per node per direction leaving the node for this group's ranks (min) */
	double bw_nic;  /* bytes/s per GPU: the GPU's share of its node's NICs (min) */
	double bw_ring; /* bytes/s per node along the ring's inter-node edges: bw_node before the oversubscription,
			 * lowered where ring edges share routed links (sim/coll_route.c); ring, hierarchical and
			 * the node ring of in-switch use it, the other algorithms bw_node */
	double lat_net; /* seconds per inter-node hop: NIC + switch hops of the fabric (max) */
	int inswitch_up;  /* every spanned node's scale-up can reduce in the switch (NVLS) */
	int inswitch_net; /* the fabric can reduce in the switch (SHARP) */
	int host_bounce;  /* some node's ranks reach each other only through host memory (PCIe without P2P) */
	int up_pcie;      /* some node's scale-up is PCIe */
} hs_coll_grp;

typedef struct hs_coll_algo_ops {
	enum hs_coll_algo algo;
	int (*supports)(const hs_coll_grp *g, enum hs_coll_op op);
	double (*time)(const hs_coll_grp *g, enum hs_coll_op op, double bytes);
} hs_coll_algo_ops;

extern const hs_coll_algo_ops hs_coll_ring, hs_coll_tree, hs_coll_hd, hs_coll_direct, hs_coll_hier,
	hs_coll_inswitch;

/* Summarise ranks[0..n-1]; -1 with a message when a rank is outside the cluster or repeated. */
int hs_coll_grp_init(hs_coll_grp *g, const hs_cluster *c, const int *ranks, int n, hs_err *err);

/* Bytes/s of the slowest inter-node edge of the ring over ranks[0..n-1] on the routed topology, its links
 * shared by every edge of the ring that crosses them (sim/coll_route.c), at most each node's NIC share; -1
 * when routes do not apply (one node, explicit or no fabric) or, unless `always`, cannot lower the NIC share
 * (Clos fabrics without oversubscription). */
double hs_coll_ring_net_bw(const hs_cluster *c, const int *ranks, int n, int always);

/* One pipelined hop of `bytes` on the slowest link type the group uses: max over intra/inter of a + b/B,
 * where the inter-node bandwidth is the node's NIC share spread over `ranks_sharing` ranks of the node that
 * send across at the same time. */
double hs_coll_hop(const hs_coll_grp *g, double bytes, int ranks_sharing);

/* Time of `op` on a summarised group; *chosen (if not NULL) receives the algorithm that ran. */
double hs_coll_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes,
			enum hs_coll_algo *chosen);

#endif
