/* NCCL's topology search, summarised in closed form (sim/coll/nccl_search.c).
 *
 * NCCL's tuner does not rate its algorithms by the links themselves: it rates them by what its topology search
 * found for each graph (src/graph/search.cc, ncclTopoCompute), a number of channels and a per-channel speed
 * inside the node (bwIntra) and across nodes (bwInter), each a step of the release's speed array. The tuner
 * (src/graph/tuning.cc) then takes nChannels x bwInter as the ring's bus bandwidth, and for the tree nChannels
 * x bwIntra on two nodes or fewer, nChannels x bwInter on more. This module gives those figures for a group
 * that spans nodes, for the release the cluster names (cluster.nccl.version), without the search's recursion:
 *   - the ring: one channel per NIC at the first step of the speed array that the GPU's path to its NIC carries
 *     (search.cc ncclTopoSearchInit: maxBw is the GPU-NIC path's rate), lowered while the channels do not fit
 *     in the GPU's NVLink; then ncclTopoDupChannels doubles the channels at half the speed each from 25 GB/s
 *     (with the release's exceptions);
 *   - the tree (NCCL_TOPO_PATTERN_BALANCED_TREE): the ring's channels (init.cc gives it the ring's count) at the
 *     ring's bwInter, then pass 2 raises bwIntra step by step while it is below twice bwInter and the channels
 *     fit in the GPU's NVLink at the new speed ("increase bwIntra for trees (2 nodes or collnet)").
 * With one GPU per node the tree is NCCL's plain TREE pattern (no intra-node links bound the raise; tuning.cc
 * rates it x0.85 from 2.18). */
#ifndef HS_NCCL_SEARCH_H
#define HS_NCCL_SEARCH_H

typedef struct hs_nccl_graph {
	int nch;          /* channels */
	double bw_intra;  /* bytes/s per channel inside a node */
	double bw_inter;  /* bytes/s per channel across nodes */
	int tree_pattern; /* the plain TREE pattern (one GPU per node) */
} hs_nccl_graph;

typedef struct hs_nccl_search_in {
	int ver;         /* release, major*100 + minor; 0: the newest modelled */
	int arch;        /* enum hs_arch of the oldest device of the group */
	int nics;        /* NICs per scale-up domain (min over the group's domains) */
	double nic_path; /* bytes/s of a GPU's path to its NIC in NCCL's figures: min(NIC, PCIe at NCCL's rate) */
	double nvlink;   /* bytes/s per GPU per direction of its intra-node links in NCCL's figures */
	int ppn;         /* ranks per node */
} hs_nccl_search_in;

/* The ring's and the tree's graphs of a group across nodes. Returns -1 (graphs zeroed) when there is no NIC to
 * search from (nics or nic_path not positive). */
int hs_nccl_search(const hs_nccl_search_in *in, hs_nccl_graph *ring, hs_nccl_graph *tree);

#endif
