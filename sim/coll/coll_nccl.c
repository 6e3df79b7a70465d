/* NCCL's cost model over our physical links (sim/coll/coll_nccl.h). The structure follows NCCL's tuner
 * (src/graph/tuning.cc: time = latency + bytes / algorithm bandwidth, per algorithm and protocol). What is rated
 * (the choice) and what is charged (the time) are kept apart:
 *   - rated: across nodes on NVLink scale-up, the tree and the ring's all-reduce as NCCL's tuner rates them, by
 *     what its topology search finds (sim/coll/nccl_search.h: channels, bwIntra, bwInter; bwIntra on two nodes
 *     or fewer); elsewhere, and for the other operations, by the closed form on the cluster's links; with the
 *     cluster's release's latencies and refinements;
 *   - charged: every algorithm's closed form on the cluster's links, NCCL's protocol efficiencies and
 *     per-channel limits, and the newest release's latencies, each hop at least the cluster's own hop latency
 *     (scale-up, NIC and switches), since an older tuner's constants decided what the old library ran, not how
 *     long a hop takes.
 * Other constants (NCCL 2.12-2.29 src/graph/tuning.cc and src/graph/topo.h; none fitted to logs):
 *   LL moves 8 bytes per 16 (data + flag) and needs a round of polling: ring LL runs at 1/4 of the link
 *   (1/3 inside a node for gathers), tree LL at 1/3.8; LL128 moves 120 of 128 bytes: 0.92 (0.7 when one
 *   rank per node sends and receives through the same NIC); NCCL rates the tree at .92 of its graph.
 *   Link efficiency of NCCL's copies (topo.h's per-link speeds against the raw link): NVLink 20 of 25 GB/s
 *   per link (0.8), PCIe Gen3 x16 12 of 15.75 GB/s (0.76), network 0.92 (NIC goodput after headers).
 *   LL128 is enabled only on NVLink, as NCCL enables it by default.
 * Without PCIe peer-to-peer NCCL's SHM transport bounces through host memory: every concurrently sending
 * GPU of the node shares the switch's host link, and when data flows both ways at once the root complex
 * delivers 0.7 of its one-way rate (PCIe flow-control and read-completion overhead, as p2pBandwidthLatencyTest
 * shows for bidirectional copies on Gen3). */
#include "sim/coll/coll_nccl.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "calib/fabric.h"
#include "sim/coll/coll_impl.h"
#include "sim/coll/nccl_search.h"
#include "sim/coll/nccl_tuner.h"

enum { P_LL = HS_NCCL_LL, P_LL128 = HS_NCCL_LL128, P_SIMPLE = HS_NCCL_SIMPLE };
enum { HW_NVL = HS_NCCL_HW_NVLINK, HW_PCI = HS_NCCL_HW_PCI, HW_NET = HS_NCCL_HW_NET };

#define EFF_NVLINK 0.8
#define EFF_PCIE 0.76
#define EFF_NET 0.92
#define PCIE_DUPLEX 0.7

static const char *const proto_names[HS_PROTO_COUNT] = {"auto", "LL", "LL128", "Simple"};

const char *hs_coll_proto_name(enum hs_coll_proto p)
{
	return (unsigned)p < HS_PROTO_COUNT ? proto_names[p] : "?";
}

int hs_coll_proto_parse(const char *s)
{
	for (int i = 0; s && i < HS_PROTO_COUNT; i++)
		if (strcasecmp(s, proto_names[i]) == 0)
			return i;
	return -1;
}

/* Do both directions of the host path carry data at once? Everything but a chain (broadcast, reduce) and a
 * one-way send does. */
static int bidirectional(enum hs_coll_op op, int n)
{
	return n > 1 && op != HS_COLL_BROADCAST && op != HS_COLL_REDUCE && op != HS_COLL_SENDRECV;
}

/* The group as NCCL's copies see it: links derated to what NCCL reaches, no latency (NCCL's latencies
 * are added separately). */
static hs_coll_grp effective(const hs_coll_grp *g, enum hs_coll_op op)
{
	hs_coll_grp e = *g;
	e.lat_up = e.lat_net = 0;
	e.bw_up *= g->up_pcie ? EFF_PCIE : EFF_NVLINK;
	if (g->host_bounce) {
		/* concurrent senders of a node share its host link */
		int senders = op == HS_COLL_BROADCAST || op == HS_COLL_REDUCE ? g->ppn - 1 : g->ppn;
		if (op == HS_COLL_SENDRECV)
			senders = 1;
		e.bw_up /= senders > 1 ? senders : 1;
		if (bidirectional(op, g->n))
			e.bw_up *= PCIE_DUPLEX;
	}
	e.bw_node *= EFF_NET;
	e.bw_ring *= EFF_NET;
	e.bw_tree *= EFF_NET;
	e.bw_a2a *= EFF_NET;
	for (int i = 0; i < HS_COLL_HD_STEPS; i++)
		e.bw_hd[i] *= EFF_NET;
	e.bw_nic *= EFF_NET;
	return e;
}

static double log2i(int n)
{
	int l = 0;
	while ((1 << (l + 1)) <= n)
		l++;
	return l;
}

/* NCCL's latency of one (algorithm, protocol), in seconds, with the constants of release band T (tuning.cc,
 * ncclTopoTuneModel; sim/coll/nccl_tuner.c). */
static double latency(const hs_nccl_tuner *T, const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo a, int p,
		      int physical)
{
	int n = g->n, N = g->nnodes, ppn = g->ppn;
	int intra_hw = g->up_pcie ? HW_PCI : HW_NVL;
	double ll = T->ll_intra_x18 && N > 1 && p == P_LL ? 1.8 : 1;
	double us;
	hs_nccl_tuner Tp;
	if (physical) {
		/* NCCL's per-hop constants were measured on NVIDIA's reference systems; a path whose links take
		 * longer (the cluster's scale-up latency, the NIC and switch hops of its fabric: hs_coll_grp lat_up,
		 * lat_net) takes at least that long a hop */
		Tp = *T;
		for (int al = 0; al < 2; al++)
			for (int pr = 0; pr < 3; pr++) {
				if (Tp.hw_lat[intra_hw][al][pr] < g->lat_up * 1e6)
					Tp.hw_lat[intra_hw][al][pr] = g->lat_up * 1e6;
				if (Tp.hw_lat[HW_NET][al][pr] < g->lat_net * 1e6)
					Tp.hw_lat[HW_NET][al][pr] = g->lat_net * 1e6;
			}
		T = &Tp;
	}
	switch (a) {
	case HS_ALGO_TREE:
		us = T->base_lat[0][p] + 2 * ((ppn - 1) * T->hw_lat[intra_hw][0][p] * ll + log2i(N) * T->hw_lat[HW_NET][0][p]);
		break;
	case HS_ALGO_INSWITCH:
		us = (ppn > 1 ? T->nvls_lat[0] : 0) + (N > 1 ? T->nvls_lat[1] : 0);
		break;
	case HS_ALGO_NVLS: /* tuning.cc: latency = intraLat, no base latency */
		us = T->nvls_lat[0];
		break;
	case HS_ALGO_NVLS_TREE: /* tuning.cc: intraLat + 2 log2(nNodes) interLat */
		us = T->nvls_lat[0] + 2 * log2i(N) * T->nvls_tree_net;
		break;
	case HS_ALGO_DIRECT:
		/* NCCL's send/recv and all-to-all: one launch, one hop (the network's when any peer is remote) */
		us = T->base_lat[1][p] + T->hw_lat[N > 1 ? HW_NET : intra_hw][1][p];
		break;
	default: { /* ring, and what NCCL runs as rings */
		if (op == HS_COLL_BROADCAST || op == HS_COLL_REDUCE) { /* pipelined chain */
			us = T->base_lat[1][p] + T->hw_lat[N > 1 ? HW_NET : intra_hw][1][p];
			break;
		}
		int ar = op == HS_COLL_ALL_REDUCE, ag = op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER;
		int steps = ar ? 2 * (n - 1) : ag ? n - 1 : n;
		int inter = N == 1 ? 0 : T->inter_steps_exact ? (ar ? 2 * (N - 1) : N - 1) : ar ? 2 * N : ag ? N - 1 : N;
		double intra = T->hw_lat[intra_hw][1][p] * ll;
		if (T->net_overhead && N > 1) { /* getNetOverhead: 1 us (x3 for Simple) */
			double ovh = p == P_SIMPLE ? 3.0 : 1.0;
			if (intra < ovh)
				intra = ovh;
		}
		double net = T->ppn1_tree_net && ppn == 1 ? T->hw_lat[HW_NET][0][p] : T->hw_lat[HW_NET][1][p];
		us = T->base_lat[1][p] + (steps - inter) * intra + inter * net;
		break;
	}
	}
	return us * 1e-6;
}

/* How much slower than Simple a protocol moves bytes (a factor on the bandwidth time); 0: not enabled. */
static double proto_bw(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo a, int p)
{
	if (p == P_SIMPLE)
		return 1;
	if (a == HS_ALGO_INSWITCH || a == HS_ALGO_NVLS || a == HS_ALGO_NVLS_TREE)
		return 0; /* NVLS, NVLS-tree and SHARP run Simple only */
	if (p == P_LL128) {
		if (g->up_pcie || g->host_bounce)
			return 0;
		if (a == HS_ALGO_TREE)
			return 1; /* enabled; the tree's factors are in tree_rating and tree_charged */
		return g->ppn < 2 ? 0.7 : 0.92;
	}
	if (a == HS_ALGO_TREE)
		return 1;
	int reduce_like = g->nnodes > 1 || op == HS_COLL_ALL_REDUCE || op == HS_COLL_REDUCE;
	return reduce_like ? 0.25 : 1.0 / 3.0;
}

/* NCCL's size correction of the tree's bandwidth, by protocol and log2(bytes / 64) for 64 B to 256 MiB, 1
 * above ("Trees are not perfectly sticking to the model for medium sizes"; src/graph/tuning.cc,
 * treeCorrectionFactor, identical in NCCL 2.19.3 and 2.23.4). */
static const double tree_corr[3][23] = {
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

static double tree_correction(int p, double bytes)
{
	double u = floor(bytes / 64);
	int l = 0;
	while (l < 23 && u >= 2) /* log2i of bytes >> 6 */
		u /= 2, l++;
	return l < 23 ? tree_corr[p][l] : 1.0;
}

/* NCCL's per-channel bus bandwidth limits across nodes, bytes/s (tuning.cc perChMaxTreeBws,
 * perChMaxTreeLL128Bws, perChMaxRingLL128Bws, identical in NCCL 2.12.12, 2.19.3 and 2.23.4), by compute
 * capability (Volta and older, Ampere and Ada (sm_80-89), Hopper and later) and node count (2 nodes, more).
 * Applied across nodes with the channels of NCCL's search (sim/coll/nccl_search.h). */
static const double tree_cap[3][2] = {{18.5e9, 10.0e9}, {23.6e9, 17.8e9}, {41.4e9, 36.0e9}};
static const double tree_ll128_cap[3][2] = {{20e9, 20e9}, {20e9, 20e9}, {36.7e9, 29.0e9}};
static const double ring_ll128_cap[3] = {20e9, 20e9, 36.7e9};

static int cc_index(const hs_coll_grp *g)
{
	switch (g->arch) {
	case HS_ARCH_AMPERE:
	case HS_ARCH_ADA: return 1;
	case HS_ARCH_HOPPER:
	case HS_ARCH_BLACKWELL: return 2;
	default: return 0;
	}
}

/* The row of the caps: before NCCL 2.18 Hopper had Ampere's (nccl_tuner.h, hopper_caps). */
static int cap_index(const hs_coll_grp *g)
{
	int i = cc_index(g);
	return i == 2 && !hs_nccl_tuner_for(g->nccl_ver)->hopper_caps ? 1 : i;
}

static double cap_tree(const hs_coll_grp *g) { return tree_cap[cap_index(g)][g->nnodes > 2]; }

static double cap_ll128(const hs_coll_grp *g, int tree)
{
	return tree ? tree_ll128_cap[cap_index(g)][g->nnodes > 2] : ring_ll128_cap[cap_index(g)];
}

static const enum hs_coll_algo nccl_algos[] = {HS_ALGO_RING,	   HS_ALGO_TREE,	 HS_ALGO_NVLS,
					       HS_ALGO_NVLS_TREE, HS_ALGO_INSWITCH,	 HS_ALGO_DIRECT,
					       HS_ALGO_HIERARCHICAL, HS_ALGO_HALVING_DOUBLING};

static const hs_coll_algo_ops *const ops_of[HS_ALGO_COUNT] = {
	[HS_ALGO_RING] = &hs_coll_ring,		  [HS_ALGO_TREE] = &hs_coll_tree,     [HS_ALGO_HALVING_DOUBLING] = &hs_coll_hd,
	[HS_ALGO_DIRECT] = &hs_coll_direct,	  [HS_ALGO_HIERARCHICAL] = &hs_coll_hier, [HS_ALGO_INSWITCH] = &hs_coll_inswitch,
	[HS_ALGO_NVLS] = &hs_coll_nvls,		  [HS_ALGO_NVLS_TREE] = &hs_coll_nvls_tree,
};

/* What NCCL's tuner considers (tuning.cc, ncclTopoTuneModel and its enable checks): ring and tree for
 * all-reduce, ring for the rest; NVLS on one node and NVLS-tree across nodes where the scale-up reduces in the
 * switch; CollNet (our in-switch with SHARP) only where the fabric reduces; direct for all-to-all and
 * send/recv. Hierarchical and halving-doubling are ours and run only when asked for by name.
 * By release (the algorithm tables of src/include/devcomm.h at the tags): NVLS arrived in 2.17, on one node
 * only (transport/nvls.cc: no support when nNodes > 1), NVLS-tree in 2.18; before them the job runs its ring
 * or tree on an NVLS-capable switch too. */
static int nccl_has(const hs_coll_grp *g, enum hs_coll_algo a, enum hs_coll_op op)
{
	int ver = g->nccl_ver ? g->nccl_ver : HS_NCCL_NEWEST;
	switch (a) {
	case HS_ALGO_DIRECT: return op == HS_COLL_ALL_TO_ALL || op == HS_COLL_SENDRECV;
	case HS_ALGO_RING:
	case HS_ALGO_TREE: return 1;
	case HS_ALGO_NVLS: return ver >= 217;
	case HS_ALGO_NVLS_TREE: return ver >= 218;
	case HS_ALGO_INSWITCH: return g->inswitch_net;
	default: return 0;
	}
}

/* NCCL's "plateau effect of ring" (tuning.cc, ncclTopoGetAlgoTime): an inter-node Simple ring all-reduce pays
 * more latency past a size. Before 2.18, 1.9x from nRanks/16 x 64 KiB; from 2.18, from 64 bytes per channel
 * and rank, 1.4x on compute capability 8.0 and later, 1.9x below. The factor on the latency. */
static double plateau(const hs_nccl_tuner *T, const hs_coll_grp *g, int nch, enum hs_coll_op op, enum hs_coll_algo a,
		      int p, double S)
{
	if (a != HS_ALGO_RING || p != P_SIMPLE || g->nnodes <= 1 || op != HS_COLL_ALL_REDUCE)
		return 1;
	if (!T->plateau_v2)
		return S >= g->n / 16.0 * 65536 ? 1.9 : 1;
	return S / ((nch > 0 ? nch : 1) * (double)g->n) >= 64 ? (cc_index(g) >= 1 ? 1.4 : 1.9) : 1;
}

/* A group as NCCL's tuner sees it: the group, its links as NCCL's copies reach them, and what NCCL's topology
 * search finds on it across nodes (sim/coll/nccl_search.h; channels 0 inside one node or where the search does
 * not apply: explicit graphs, PCIe scale-up). */
typedef struct nccl_view {
	const hs_coll_grp *g, *e;
	hs_nccl_graph ring, tree;
} nccl_view;

static void view_init(nccl_view *v, const hs_coll_grp *g, const hs_coll_grp *e)
{
	memset(v, 0, sizeof *v);
	v->g = g, v->e = e;
	/* The search's view rates the tree and the ring where NCCL's copies go over NVLink, the case its speed
	 * arrays are for; on PCIe scale-up (with host-memory bounce where P2P is off) NCCL's figures are not what
	 * the copies reach: both keep their closed forms' rating there (the fallback of tree_rating) */
	if (g->nnodes > 1 && !g->xgraph && !g->up_pcie && !g->host_bounce) {
		/* the intra-node links in NCCL's figures (topo.h: NVLink 20 of 25 GB/s a link, PCIe 0.76) */
		hs_nccl_search_in in = {g->nccl_ver, g->arch, g->nics, g->nic_path, g->bw_up * EFF_NVLINK, g->ppn};
		hs_nccl_search(&in, &v->ring, &v->tree);
	}
}

/* What NCCL's tuner rates the tree at, as bus bandwidth (tuning.cc, ncclTopoTuneModel; the algorithm bandwidth
 * is half of it, ratio .5): across nodes the search's channels x bwIntra on two nodes or fewer, x bwInter on
 * more; inside one node the chain's link (the search's intra-node graph is not modelled). Then its refinements:
 * 2.12-2.17 hold any bus bandwidth on compute capability 8.0 at 235 GB/s; x.92 and at most perChMaxTreeBw per
 * channel; the plain TREE pattern x.85 (from 2.18); LL /3.8; LL128 x7/9 on one node, x120/128 across, at most
 * perChMaxTreeLL128Bw per channel. */
static double tree_rating(const nccl_view *v, int p)
{
	const hs_coll_grp *g = v->g, *e = v->e;
	const hs_nccl_tuner *T = hs_nccl_tuner_for(g->nccl_ver);
	int nch = v->tree.nch;
	double bus;
	if (nch > 0)
		bus = nch * (g->nnodes <= 2 ? v->tree.bw_intra : v->tree.bw_inter);
	else {
		/* one node, or no search (an explicit graph, PCIe scale-up): the slowest per-GPU link of the tree's
		 * path, across nodes as the closed form's route-aware share sees it */
		bus = e->ppn > 1 ? e->bw_up : INFINITY;
		double net = e->nnodes == 2 ? 2 * e->bw_tree : e->bw_tree;
		if (e->nnodes > 1 && net < bus)
			bus = net;
	}
	if (T->sm80_cap > 0 && g->arch == HS_ARCH_AMPERE && bus > T->sm80_cap)
		bus = T->sm80_cap;
	bus *= 0.92;
	if (nch > 0 && bus > nch * cap_tree(g))
		bus = nch * cap_tree(g);
	if (v->tree.tree_pattern && T->tree_pattern_x085)
		bus *= 0.85;
	if (p == P_LL)
		bus /= 3.8;
	if (p == P_LL128) {
		bus *= g->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
		if (nch > 0 && bus > nch * cap_ll128(g, 1))
			bus = nch * cap_ll128(g, 1);
	}
	return bus;
}

/* What NCCL's tuner rates the ring's all-reduce at across nodes, as algorithm bandwidth (tuning.cc): nChannels x
 * the search's speed (bwIntra = bwInter for a ring); 2.12-2.17's 235 GB/s on compute capability 8.0; LL x1/4;
 * LL128 x0.92 (0.7 with one rank per node), at most perChMaxRingLL128Bw per channel; times nRanks / (2 (nRanks -
 * 1)). llMaxBw (LL's cap by CPU vendor) is not modelled. */
static double ring_rating(const nccl_view *v, int p)
{
	const hs_coll_grp *g = v->g;
	const hs_nccl_tuner *T = hs_nccl_tuner_for(g->nccl_ver);
	int nch = v->ring.nch, n = g->n;
	double bus = nch * v->ring.bw_inter;
	if (T->sm80_cap > 0 && g->arch == HS_ARCH_AMPERE && bus > T->sm80_cap)
		bus = T->sm80_cap;
	if (p == P_LL)
		bus /= 4;
	if (p == P_LL128) {
		bus *= g->ppn < 2 ? 0.7 : 0.92;
		if (bus > nch * cap_ll128(g, 0))
			bus = nch * cap_ll128(g, 0);
	}
	return bus * n / (2.0 * (n - 1));
}

/* The tree's bandwidth time as charged: the closed form's (sim/coll/coll_tree.c, `tb` seconds for S on the
 * group's links as NCCL reaches them) in bus bandwidth 2 S / tb, then what NCCL's kernels reach of it: at most
 * perChMaxTreeBw per channel of the search, LL /3.8, LL128 each link at the efficiency NCCL gives it there
 * (tuning.cc: 7/9 for an NVLink chain, its one-node figure; 120/128 on the network), the slower of the two
 * terms binding, and at most perChMaxTreeLL128Bw per channel, and the size correction (treeCorrectionFactor). No .92: the links' own
 * efficiencies (EFF_*) are already in the closed form. */
static double tree_charged(const nccl_view *v, int p, double S, double tb)
{
	const hs_coll_grp *g = v->g;
	int nch = v->tree.nch;
	if (p == P_LL128) { /* each link at LL128's efficiency on it */
		double t_up, t_net;
		hs_coll_tree_terms(v->e, &t_up, &t_net);
		t_up *= 9.0 / 7.0, t_net *= 128.0 / 120.0;
		tb = S * (t_up > t_net ? t_up : t_net);
	}
	double bus = tb > 0 ? 2 * S / tb : INFINITY;
	if (nch > 0 && bus > nch * cap_tree(g))
		bus = nch * cap_tree(g);
	if (p == P_LL)
		bus /= 3.8;
	if (p == P_LL128 && nch > 0 && bus > nch * cap_ll128(g, 1))
		bus = nch * cap_ll128(g, 1);
	return S / (0.5 * bus * tree_correction(p, S));
}

/* One (algorithm, protocol): returns the time NCCL's tuner rates it at, for the choice; *time_out the time
 * predicted (see below). */
static double one(const nccl_view *v, enum hs_coll_op op, enum hs_coll_algo a, int p, double S, double *lat_out,
		  double *bw_out, double *time_out)
{
	const hs_coll_grp *g = v->g, *e = v->e;
	double f = proto_bw(g, op, a, p);
	if (f <= 0)
		return INFINITY;
	enum hs_coll_algo ran;
	double tb = hs_coll_grp_time(e, op, a, S, &ran), tb_rate;
	int nch = v->ring.nch;
	if (ran == HS_ALGO_TREE) {
		/* the tree is rated as NCCL's tuner rates it, by its search's graph, and charged by the closed form */
		tb_rate = S / (0.5 * tree_rating(v, p) * tree_correction(p, S));
		tb = tree_charged(v, p, S, tb);
	} else {
		tb /= f;
		/* NCCL's per-channel limit on the ring's LL128 bus bandwidth, as busbw = S / tb / ratio */
		if (ran == HS_ALGO_RING && p == P_LL128 && nch > 0) {
			int n = g->n;
			double steps = op == HS_COLL_ALL_REDUCE ? 2.0 * (n - 1)
				       : op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER ? n - 1.0
													 : n;
			double tmin = S * steps / n / (nch * cap_ll128(g, 0));
			if (tb < tmin)
				tb = tmin;
		}
		/* Where NCCL weighs the ring against the tree (all-reduce across nodes) both are rated by their graphs,
		 * so that the choice compares like with like (a one-NIC node holds every node to one channel, a
		 * fabric NCCL does not see slows neither). The other operations run only as rings and keep the closed
		 * form's rating for their protocol: rated by the graph too, a 1 MiB broadcast on 2 x 8 H100 took
		 * longer with more bandwidth (nccl_auto_monotonic), since what is charged is the closed form. */
		tb_rate = ran == HS_ALGO_RING && op == HS_COLL_ALL_REDUCE && v->ring.nch > 0 ? S / ring_rating(v, p) : tb;
	}
	/* Two latencies: the cluster's release rates the candidates, as that release chooses; the time charged is
	 * the newest release's, NVIDIA's latest estimate of what the hardware takes. An older tuner's constants
	 * decided what the old library ran, not how fast the links were. */
	const hs_nccl_tuner *Tv = hs_nccl_tuner_for(g->nccl_ver), *Tn = hs_nccl_tuner_for(0);
	double rate = latency(Tv, g, op, ran, p, 1) * plateau(Tv, g, nch, op, ran, p, S);
	double lat = latency(Tn, g, op, ran, p, 1) * plateau(Tn, g, nch, op, ran, p, S);
	if (lat_out)
		*lat_out = lat;
	if (bw_out)
		*bw_out = tb > 0 ? S / tb : INFINITY;
	if (time_out)
		*time_out = lat + tb;
	return rate + tb_rate;
}

/* NCCL's choice on a summarised group: for every enabled (algorithm, protocol) its time, the fastest wins.
 * `algo` other than AUTO restricts the choice to that algorithm (FASTEST: the fastest ideal closed form). */
static double choose(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, enum hs_coll_proto proto,
		     double bytes, hs_coll_choice *choice)
{
	if (choice)
		*choice = (hs_coll_choice){hs_coll_default_algo(op), HS_PROTO_SIMPLE, 0, INFINITY};
	if (g->n <= 1 || bytes <= 0)
		return 0;
	if (algo == HS_ALGO_FASTEST)
		algo = hs_coll_grp_resolve(g, op, HS_ALGO_FASTEST, bytes);
	hs_coll_grp e = effective(g, op);
	nccl_view v;
	view_init(&v, g, &e);
	double best = INFINITY, blat = 0, bbw = 0, btime = 0;
	enum hs_coll_algo ba = hs_coll_default_algo(op);
	int bp = P_SIMPLE;
	for (size_t i = 0; i < sizeof nccl_algos / sizeof *nccl_algos; i++) {
		enum hs_coll_algo a = nccl_algos[i];
		if (algo == HS_ALGO_AUTO ? !nccl_has(g, a, op) : a != algo)
			continue;
		enum hs_coll_algo run = a;
		if (!ops_of[a]->supports(g, op)) {
			if (algo == HS_ALGO_AUTO)
				continue;
			run = hs_coll_default_algo(op);
		}
		for (int p = P_LL; p <= P_SIMPLE; p++) {
			if (proto != HS_PROTO_AUTO && p != (int)proto - 1)
				continue;
			double lat, bw, tt;
			double t = one(&v, op, run, p, bytes, &lat, &bw, &tt);
			if (t < best) {
				best = t, blat = lat, bbw = bw, ba = run, bp = p, btime = tt;
			}
		}
	}
	if (!isfinite(best)) /* e.g. LL128 asked for on PCIe: run Simple */
		best = one(&v, op, ba, P_SIMPLE, bytes, &blat, &bbw, &btime), bp = P_SIMPLE;
	if (choice)
		*choice = (hs_coll_choice){ba, (enum hs_coll_proto)(bp + 1), blat, bbw};
	return btime;
}

/* The one place a fitted fabric profile (calib/fabric.h) changes a prediction: the tuner's choice stands (NCCL
 * picks by its own model, not by what the cluster measured), and its time becomes the profile's for that
 * collective, scope and protocol: latency_scale * lat + bytes / (efficiency * bw). A group whose nodes
 * have no profile, or whose profile has no entry for the call's scope, keeps the model's time. */
static double fitted(const hs_coll_grp *g, enum hs_coll_op op, double bytes, double t, hs_coll_choice *ch)
{
	if (!g->fab || !(t > 0) || !isfinite(t) || !(ch->bw_Bps > 0))
		return t;
	const hs_fab_entry *e = hs_fabprof_lookup(g->fab, hs_coll_op_name(op), g->nnodes > 1 ? HS_FAB_INTER : HS_FAB_INTRA,
						  hs_coll_proto_name(ch->proto));
	if (!e)
		return t;
	double tf = hs_fab_entry_time(e, bytes, ch->lat_s, ch->bw_Bps);
	ch->lat_s *= e->lat_scale;
	ch->bw_Bps *= e->eff;
	return tf;
}

static double nccl_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo,
			    enum hs_coll_proto proto, double bytes, hs_coll_choice *choice)
{
	hs_coll_choice ch;
	double t = choose(g, op, algo, proto, bytes, &ch);
	t = fitted(g, op, bytes, t, &ch);
	if (choice)
		*choice = ch;
	return t;
}

double hs_coll_nccl_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes)
{
	return nccl_grp_time(g, op, algo, HS_PROTO_AUTO, bytes, NULL);
}

enum hs_coll_algo hs_coll_nccl_pick(const hs_coll_grp *g, enum hs_coll_op op, double bytes)
{
	hs_coll_choice ch;
	choose(g, op, HS_ALGO_AUTO, HS_PROTO_AUTO, bytes, &ch);
	return ch.algo;
}

double hs_coll_nccl_time(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, enum hs_coll_proto proto,
			 const int *ranks, int n, double bytes, hs_coll_choice *choice)
{
	hs_err err = {0};
	hs_coll_grp g;
	if ((unsigned)op >= HS_COLL_OP_COUNT || (unsigned)algo >= HS_ALGO_COUNT || (unsigned)proto >= HS_PROTO_COUNT)
		return -1;
	if (hs_coll_grp_init(&g, c, ranks, n, &err))
		return -1;
	return nccl_grp_time(&g, op, algo, proto, bytes, choice);
}
