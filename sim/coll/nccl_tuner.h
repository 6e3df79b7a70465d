/* NCCL's tuner constants by NCCL version (sim/coll/nccl_tuner.c).
 *
 * NCCL picks an algorithm and a protocol per call from its own cost model (src/graph/tuning.cc: time =
 * latency + bytes / bandwidth). Its latencies and a few rules changed between releases, and the algorithm a
 * job runs at a given size follows them: NCCL 2.19-2.22 charge a tree 28 us a hop in Simple, 2.23 and later
 * 4 us inside a node and 14 us across, so the same two nodes switch from ring to tree at different sizes. A
 * cluster names the version it runs (`cluster.nccl.version`); each band below is the releases whose tables are
 * identical. Read from the release tags of github.com/NVIDIA/nccl, src/graph/tuning.cc. */
#ifndef HS_NCCL_TUNER_H
#define HS_NCCL_TUNER_H

enum { HS_NCCL_LL, HS_NCCL_LL128, HS_NCCL_SIMPLE };
enum { HS_NCCL_HW_NVLINK, HS_NCCL_HW_PCI, HS_NCCL_HW_NET };

typedef struct hs_nccl_tuner {
	int first, last;        /* releases, major*100 + minor: 212 for 2.12 */
	const char *name;       /* "2.19-2.22" */
	double base_lat[2][3];  /* us, tree and ring, by protocol (baseLat) */
	double hw_lat[3][2][3]; /* us per hop, by NVLink/PCI/network, tree and ring, protocol (hwLat) */
	double nvls_lat[2];     /* us, NVLS's NVLink and network hops (Simple) */
	double nvls_tree_net;   /* us, NVLS-tree's network hop */
	/* ring all-reduce's network steps: 2 nNodes before 2.23, 2 (nNodes - 1) from 2.23 */
	int inter_steps_exact;
	/* from 2.18: a ring's intra-node hop costs at least the network post overhead (1 us, x3 for Simple) once
	 * the ring leaves the node (getNetOverhead: 1 us on Intel and other CPUs, 2 on AMD) */
	int net_overhead;
	/* the ring Simple all-reduce's "plateau": before 2.18, x1.9 from bytes >= nRanks/16 * 64 KiB; from 2.18,
	 * from bytes / (nChannels nRanks) >= 64, x1.4 on compute capability 8.0 and later, x1.9 below */
	int plateau_v2;
	/* from 2.18 Hopper has its own per-channel tree limits; before, Ampere's */
	int hopper_caps;
	/* to 2.17: LL's intra-node hop costs 1.8x once the collective leaves the node */
	int ll_intra_x18;
	/* from 2.23: with one rank per node a ring's network hop is charged the tree's */
	int ppn1_tree_net;
	/* to 2.17: any bus bandwidth is held at 235 GB/s on compute capability 8.0 ("if (compCap80) busBw =
	 * std::min(busBw, 235.0f)"), bytes/s; 0: no such limit */
	double sm80_cap;
	/* from 2.18: a tree of NCCL's plain TREE pattern (one GPU per node) is rated x0.85 */
	int tree_pattern_x085;
} hs_nccl_tuner;

/* The oldest and newest releases the table covers (topology/cluster.c refuses a cluster.nccl.version before
 * the oldest). */
#define HS_NCCL_OLDEST 212
#define HS_NCCL_NEWEST 229

/* The band of `ver` (major*100 + minor); 0 means the newest. Versions after the newest band use it. NULL
 * for versions before the oldest. */
const hs_nccl_tuner *hs_nccl_tuner_for(int ver);

#endif
