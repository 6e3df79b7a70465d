/* hs_topo: the link-level graph of a cluster, built from its description (topology/cluster.h).
 *
 * Vertices are devices (numbered as the cluster numbers them, so device i is vertex i), NICs, switches and
 * host memory; links are directed, each with a bandwidth (bytes per picosecond) and a latency (picoseconds).
 * A physical link is two directed links, one per direction. Builders lay out every scale-up kind (NVSwitch
 * and NVL72 switches, NVLink mesh and bridges, PCIe trees with and without peer-to-peer, xGMI) and every
 * scale-out kind (fat-tree with 1-3 tiers and oversubscription, rail-optimised, multi-plane, dragonfly, 2D/3D
 * torus, sites joined by WAN links) or take an explicit graph. Memory is linear in vertices and links:
 * adjacency is kept as compressed arrays. docs/topology.md describes every layout. */
#ifndef HS_TOPO_H
#define HS_TOPO_H

#include "sim/base/err.h"
#include "sim/base/time.h"
#include "topology/cluster.h"

typedef struct hs_topo hs_topo;

enum hs_vkind { HS_V_GPU, HS_V_NIC, HS_V_SWITCH, HS_V_HOST };

typedef struct hs_link {
	int from, to;   /* vertices */
	double bw;      /* bytes per picosecond, > 0 */
	hs_time lat;    /* picoseconds */
} hs_link;

/* Build the graph of `c`. Fails (HS_EINPUT) when the result is not connected: every device must reach every
 * other one (the message names a pair that cannot). */
hs_topo *hs_topo_build(const hs_cluster *c, hs_err *err);
void hs_topo_free(hs_topo *t);

const hs_cluster *hs_topo_cluster(const hs_topo *t);
int hs_topo_nvertices(const hs_topo *t);
int hs_topo_nlinks(const hs_topo *t);
const hs_link *hs_topo_link(const hs_topo *t, int l);
enum hs_vkind hs_topo_vkind(const hs_topo *t, int v);
int hs_topo_vnode(const hs_topo *t, int v); /* node of a GPU, NIC, host or scale-up switch; -1 for fabric switches */
/* Scale-up domain of a GPU, NIC, host or scale-up switch (hs_cluster_domain_of); -1 for fabric switches. A
 * domain's own switches (NVL72) report its first node as their node. */
int hs_topo_vdomain(const hs_topo *t, int v);
/* "gpu3", "node1.nic2", "node0.nvswitch", "leaf4", ...: for messages and reports. */
const char *hs_topo_vname(const hs_topo *t, int v, char *buf, int len);

/* Out-links (and in-links) of v: ids *first .. *first + count - 1 index hs_topo_out_link (hs_topo_in_link). */
void hs_topo_out(const hs_topo *t, int v, int *first, int *count);
int hs_topo_out_link(const hs_topo *t, int i);
void hs_topo_in(const hs_topo *t, int v, int *first, int *count);
int hs_topo_in_link(const hs_topo *t, int i);

int hs_topo_has_nics(const hs_topo *t);          /* 0 for explicit graphs: routes are plain shortest paths */
int hs_topo_nnics(const hs_topo *t, int node);    /* NICs of a node */
int hs_topo_nic(const hs_topo *t, int node, int i); /* vertex of NIC i of a node */
int hs_topo_domain_nnics(const hs_topo *t, int dom);    /* NICs of every node of a scale-up domain */
int hs_topo_domain_nic(const hs_topo *t, int dom, int i); /* NIC i of a domain: its nodes' NICs in node order */
int hs_topo_nic_owner(const hs_topo *t, int nicv);  /* the device the NIC hangs off (GPUDirect) */
int hs_topo_upswitch(const hs_topo *t, int node);   /* scale-up switch vertex of a node, -1 if none; the nodes
						     * of a multi-node domain share their domain's (their part's) */
int hs_topo_top_switch(const hs_topo *t);           /* a switch of the fabric's top tier, -1 if none */

#endif
