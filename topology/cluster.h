/* hs_cluster: the machine a scenario runs on. A list of node groups (each with its GPU type, GPUs per node,
 * scale-up domain and NICs) joined by a scale-out fabric; devices are numbered 0..ngpus-1 group by group,
 * node by node. Built from a scenario's `cluster:` mapping; the links and routes behind it are the
 * network models' business (sim/net/net.h). */
#ifndef HS_CLUSTER_H
#define HS_CLUSTER_H

#include "config/yaml.h"
#include "sim/base/err.h"
#include "sim/base/time.h"
#include "topology/device.h"
#include "topology/host.h"
#include "topology/kind.h"

typedef struct hs_cluster hs_cluster;

typedef struct hs_node_group {
	char name[64];
	int nodes;
	int gpus_per_node;
	hs_device_type gpu;
	/* scale-up: per GPU, per direction */
	char scaleup_kind[32]; /* nvswitch, nvlink-mesh, pcie, xgmi, ... */
	const hs_scaleup_kind *scaleup_props; /* the kind's table entry: layout and properties (kind.h) */
	double scaleup_bw;     /* bytes/s */
	double scaleup_lat;    /* seconds */
	int scaleup_p2p;       /* GPUs reach each other directly (0: PCIe without P2P, through host memory) */
	int scaleup_reduce;    /* the scale-up switch reduces (NVLS); default on for nvl72 */
	int domain;            /* GPUs per scale-up domain: gpus_per_node, or a multiple of it when the domain
				* spans nodes (an NVL72 rack: 72 over 18 nodes of 4, each node with its own NICs) */
	int nodes_per_domain;  /* domain / gpus_per_node */
	double pcie_bw;        /* bytes/s per GPU per direction of its PCIe link (host, NIC, non-bridged peers) */
	/* scale-out NICs */
	double nic_bw;         /* bytes/s per NIC per direction */
	int nics_per_node;
	double nic_lat;        /* seconds */
	/* `fabric_profile:` of the group, else of the cluster: a fitted fabric file (calib/fabric.h), its path
	 * resolved against the scenario's folder; "" for none. `fabric_profile_at` is "file:line:col" of the key,
	 * for messages. The profile itself is loaded and attached by hs_fabprof_attach. */
	char fabric_profile[512];
	char fabric_profile_at[320];
	hs_host_spec host;     /* `host:`: the GPUs' link to host memory and the host memory (host.described 0: none) */
} hs_node_group;

/* One link of an explicit graph (fabric kind `explicit`): endpoints are device names `gpu<i>` or names of
 * the fabric's `switches`, numbered here as devices 0..ngpus-1, then switches ngpus.. in listed order. */
typedef struct hs_xlink {
	int a, b;
	double bw;   /* bytes/s per direction */
	double lat;  /* seconds */
	int duplex;  /* 1: both directions; 0: a -> b only */
} hs_xlink;

/* ECMP: how a switch picks among equally short next hops (fabric key `ecmp`). */
enum hs_ecmp {
	HS_ECMP_HASH,  /* a hash of (source, destination, rail): one path per flow, collisions as they fall */
	HS_ECMP_DMODK, /* destination mod k (InfiniBand fat-tree routing): a function of the destination alone */
};

typedef struct hs_fabric_spec {
	char kind[32];         /* fat-tree, rail-optimized, ... */
	const hs_fabric_kind *props; /* the kind's table entry: layout and properties (kind.h) */
	int tiers;
	double oversubscription; /* >= 1 */
	double latency;        /* seconds per switch hop */
	int reduce;            /* the switches reduce in the network (SHARP) */
	int ecmp;              /* enum hs_ecmp: how a switch picks among equal next hops (topology/route.h) */
	int radix;             /* ports per switch (fat-tree, rail-optimized, multi-plane) */
	int planes;            /* multi-plane: independent planes; NIC i of a node is in plane i mod planes */
	int dims[3];           /* torus: size of each dimension (0: unused) */
	int routers_per_group; /* dragonfly */
	int nics_per_router;   /* dragonfly */
	double link_bw;        /* dragonfly and torus router-to-router links, bytes/s per direction */
	double wan_bw;         /* wan: link between two sites (node groups), bytes/s per direction */
	double wan_lat;        /* wan: seconds */
	int nswitches;         /* explicit */
	char (*switch_names)[64];
	int nxlinks;
	hs_xlink *xlinks;
	char where[256];       /* "file:line:col: cluster.fabric", for errors found later (a topology not connected) */
} hs_fabric_spec;

/* Parse and build. Errors name file:line:col and the key path ("cluster.groups[0].nic.bandwidth"). */
hs_cluster *hs_cluster_from_yaml(const hs_ynode *cluster, const char *path, hs_err *err);
void hs_cluster_free(hs_cluster *c);
/* The nodes [node0, node0 + nnodes) of c as a cluster of their own, for a job placed on them (sim/study/jobs.h):
 * the same node groups cut to the range (groups outside it dropped), devices numbered in the same order, so
 * device i of the part is device first_gpu(node0) + i of c; the same fabric spec, laid out over the part alone
 * (what the part's closed forms see; a job's traffic on the shared network uses c's own fabric). Fabric
 * profiles are not attached (hs_fabprof_attach). HS_EINPUT when the range leaves c, splits a scale-up domain,
 * or c's fabric lists its own links (kind explicit). */
hs_cluster *hs_cluster_sub(const hs_cluster *c, int node0, int nnodes, hs_err *err);

int hs_cluster_ngpus(const hs_cluster *c);
/* cluster.nccl.version as major*100 + minor (219 for 2.19.3); 0 when the scenario names none. */
int hs_cluster_nccl_version(const hs_cluster *c);
int hs_cluster_ngroups(const hs_cluster *c);
const hs_node_group *hs_cluster_group(const hs_cluster *c, int g);
const hs_fabric_spec *hs_cluster_fabric(const hs_cluster *c);
int hs_cluster_group_of(const hs_cluster *c, int gpu); /* node group of a device */
int hs_cluster_node_of(const hs_cluster *c, int gpu);  /* global node index of a device */
const hs_device_type *hs_cluster_device(const hs_cluster *c, int gpu);
int hs_cluster_nnodes(const hs_cluster *c);
int hs_cluster_local_rank(const hs_cluster *c, int gpu); /* index of a device inside its node */
int hs_cluster_first_gpu(const hs_cluster *c, int g);    /* first device of group g */
int hs_cluster_first_node(const hs_cluster *c, int g);   /* first global node of group g */
/* Scale-up domains: the GPUs that reach each other over the scale-up (NVLink) without a NIC. A node is its own
 * domain unless its group's scale-up spans nodes (`scaleup.domain`); domains are numbered 0..ndomains-1 in
 * device order, so where every node is its own domain the domain index is the node index. */
int hs_cluster_ndomains(const hs_cluster *c);
int hs_cluster_domain_of(const hs_cluster *c, int gpu);      /* domain of a device, -1 outside the cluster */
int hs_cluster_node_domain(const hs_cluster *c, int node);   /* domain of a global node */
int hs_cluster_domain_group(const hs_cluster *c, int dom);   /* node group of a domain */
int hs_cluster_domain_first_node(const hs_cluster *c, int dom);
/* The host link of device `gpu`: bytes/s per direction between it and its node's host memory (PCIe or
 * NVLink-C2C, the group's `host:`), 0 when its group describes none. */
double hs_cluster_host_link_bw(const hs_cluster *c, int gpu);
/* Bytes/s of host memory per node of device `gpu`'s group (`host.memory_bandwidth`), 0 when not given. */
double hs_cluster_host_mem_bw(const hs_cluster *c, int gpu);
/* Bytes/s per direction of every NIC of a domain together (each of its nodes' NICs). */
double hs_cluster_domain_nic_bw(const hs_cluster *c, int dom);
/* Bytes/s per direction of device `gpu`'s own PCIe link, the path of its GPUDirect RDMA traffic to and from
 * the NICs (its group's scaleup.pcie_bandwidth, by default the device type's PCIe figure); 0 for a device outside
 * the cluster. One link per GPU: a node's host link (shared by its GPUs for host offload) is another figure. */
double hs_cluster_gpu_pcie_bw(const hs_cluster *c, int gpu);

/* One derived object kept with the cluster: built on first use by the module that needs it (the collectives'
 * closed forms keep the link graph here, sim/coll/coll_route.c) and freed with the cluster by `free_fn`. The cluster
 * stays read-only to everyone else, and several threads may race to set it: hs_cluster_memo_set keeps the first
 * object set and returns it, freeing `p` when another thread got there first. */
void *hs_cluster_memo(const hs_cluster *c);
/* The fitted fabric profile of node group g (calib/fabric.h), opaque here: NULL until hs_fabprof_attach sets it
 * (once, before the cluster is shared), or when the group names none. The cluster frees it with free_fn. */
struct hs_fabprof;
const struct hs_fabprof *hs_cluster_fabprof(const hs_cluster *c, int g);
void hs_cluster_set_fabprof(hs_cluster *c, int g, struct hs_fabprof *p, void (*free_fn)(struct hs_fabprof *));
void *hs_cluster_memo_set(const hs_cluster *c, void *p, void (*free_fn)(void *));

#endif
