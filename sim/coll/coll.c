/* Collectives: names, the group summary every closed form uses, dispatch to the algorithm table, and the
 * automatic choice. The algorithms themselves live in sim/coll_<algo>.c; docs/collectives.md derives each
 * closed form. */
#include "sim/coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_impl.h"
#include "topology/topo.h"

static const char *const op_names[HS_COLL_OP_COUNT] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
						       "broadcast",  "reduce",     "sendrecv"};
static const char *const algo_names[HS_ALGO_COUNT] = {
	"auto", "fastest", "ring", "tree", "halving_doubling", "direct", "hierarchical", "inswitch", "nvls", "nvls_tree"};

const char *hs_coll_op_name(enum hs_coll_op op)
{
	return (unsigned)op < HS_COLL_OP_COUNT ? op_names[op] : "?";
}

const char *hs_coll_algo_name(enum hs_coll_algo a)
{
	return (unsigned)a < HS_ALGO_COUNT ? algo_names[a] : "?";
}

/* Compare ignoring '_', '-' and case, so allreduce, all-reduce and AllReduce all name all_reduce. */
static int loose_eq(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_' || *a == '-')
			a++;
		while (*b == '_' || *b == '-')
			b++;
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
		if (x != y)
			return 0;
		if (!x)
			return 1;
		a++, b++;
	}
}

int hs_coll_op_parse(const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < HS_COLL_OP_COUNT; i++)
		if (loose_eq(s, op_names[i]))
			return i;
	if (loose_eq(s, "alltoallv") || loose_eq(s, "a2a"))
		return HS_COLL_ALL_TO_ALL;
	if (loose_eq(s, "send_recv") || loose_eq(s, "p2p"))
		return HS_COLL_SENDRECV;
	return -1;
}

int hs_coll_algo_parse(const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < HS_ALGO_COUNT; i++)
		if (loose_eq(s, algo_names[i]))
			return i;
	static const struct {
		const char *alias;
		enum hs_coll_algo a;
	} aliases[] = {{"hd", HS_ALGO_HALVING_DOUBLING}, {"rabenseifner", HS_ALGO_HALVING_DOUBLING},
		       {"dbtree", HS_ALGO_TREE},	  {"double_binary_tree", HS_ALGO_TREE},
		       {"hier", HS_ALGO_HIERARCHICAL},	  {"nvlstree", HS_ALGO_NVLS_TREE},
		       {"sharp", HS_ALGO_INSWITCH},	  {"collnet", HS_ALGO_INSWITCH},
		       {"in_switch", HS_ALGO_INSWITCH}, {"best", HS_ALGO_FASTEST}};
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
		if (loose_eq(s, aliases[i].alias))
			return (int)aliases[i].a;
	return -1;
}

double hs_coll_busbw_factor(enum hs_coll_op op, int n)
{
	if (n <= 1)
		return op == HS_COLL_ALL_REDUCE || op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER ||
				       op == HS_COLL_ALL_TO_ALL
			       ? 0
			       : 1;
	switch (op) {
	case HS_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
	case HS_COLL_ALL_GATHER:
	case HS_COLL_REDUCE_SCATTER:
	case HS_COLL_ALL_TO_ALL: return (double)(n - 1) / n;
	default: return 1;
	}
}

/* ---- group summary ---- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sort ascending; a parallelism group's ranks and domains come in order already (hs_build_group), and the sort
 * of every group of every rep was 2% of a sweep point (bench_sweep), so a sorted array is left as it is. */
static void sort_ints(int *a, int n)
{
	for (int i = 1; i < n; i++)
		if (a[i] < a[i - 1]) {
			qsort(a, (size_t)n, sizeof *a, cmp_int);
			return;
		}
}

/* Switch hops of the worst inter-node path: up to the top tier and down again. */
static int fabric_switch_hops(const hs_fabric_spec *f) { return 2 * (f->tiers > 0 ? f->tiers : 1) - 1; }

/* Bytes/s of a routed set whose closed form moves `w` units through a NIC share B, from its route factor T
 * (seconds per unit): w / T, never above B (routes lower the NIC share where links are shared, they do not
 * raise it). T == 0 (nothing leaves a node) keeps B. */
static double route_bw(double B, double w, double T)
{
	return T > 0 && w / T < B ? w / T : B;
}

/* Send/recv pairs i -> i+1: which stay in their scale-up domain, and the slowest of those that leave it. A
 * pair that leaves goes through the sender's own NIC and PCIe path, not its node's (NCCL's p2p takes the NIC
 * next to the GPU): bounded by one NIC and by the node's NICs over the node's ranks that send across at once,
 * and likewise at the receiver. */
enum { GRP_STACK = 128, P2P_STACK_NODES = 512 }; /* ranks, nodes summarised without an allocation */

/* dom[i]: the scale-up domain of ranks[i]; nd: room for n. Each rank's domain and node are looked up once, and
 * the per-node counts are an array that is only read where it was set (not zeroed: the summary of each group of
 * every rep was 7% of a sweep point, bench_sweep 2026-12, most of it here). */
static void p2p_pairs(hs_coll_grp *g, const hs_cluster *c, const int *ranks, const int *dom, int *nd, int n)
{
	g->bw_p2p = INFINITY;
	if (n < 2)
		return;
	for (int i = 0; i < n; i++) {
		if (dom[i] == dom[(i + 1) % n])
			g->p2p_local = 1;
		else
			g->p2p_cross = 1;
	}
	if (!g->p2p_cross)
		return;
	int nn = hs_cluster_nnodes(c);
	int buf[2 * P2P_STACK_NODES];
	int *cnt = nn <= P2P_STACK_NODES ? buf : hs_xmalloc(2 * (size_t)nn * sizeof *cnt);
	int *snd = cnt, *rcv = cnt + nn;
	for (int i = 0; i < n; i++)
		nd[i] = hs_cluster_node_of(c, ranks[i]);
	for (int i = 0; i < n; i++)
		if (dom[i] != dom[(i + 1) % n])
			snd[nd[i]] = rcv[nd[(i + 1) % n]] = 0;
	for (int i = 0; i < n; i++)
		if (dom[i] != dom[(i + 1) % n]) {
			snd[nd[i]]++;
			rcv[nd[(i + 1) % n]]++;
		}
	for (int i = 0; i < n; i++) {
		int b = (i + 1) % n;
		if (dom[i] == dom[b])
			continue;
		for (int e = 0; e < 2; e++) {
			int end = e ? ranks[b] : ranks[i];
			const hs_node_group *ng = hs_cluster_group(c, hs_cluster_group_of(c, end));
			int k = e ? rcv[nd[b]] : snd[nd[i]];
			double bw = ng->nic_bw * ng->nics_per_node / k;
			if (ng->nic_bw < bw)
				bw = ng->nic_bw;
			/* and the rank's own PCIe link, which its GPUDirect RDMA traffic crosses (hs_cluster_gpu_pcie_bw:
			 * its node group's) */
			double pcie = ng->pcie_bw;
			if (pcie > 0 && pcie < bw)
				bw = pcie;
			if (bw < g->bw_p2p)
				g->bw_p2p = bw;
		}
	}
	if (cnt != buf)
		free(cnt);
}

/* What NCCL's topology search starts from for a node group (sim/coll/nccl_search.h): its NICs (those of every
 * tray of a rack-scale domain) and the rate of a GPU's path to its NIC in NCCL's figures, the NIC's or, when
 * lower, the GPU's PCIe link at NCCL's rate (src/graph/topo.cc kvDictPciGen, width x speed / 80: a
 * Gen3 x16 link is 12 GB/s, Gen4 24, Gen5 48, 24/31.5 of each generation's raw rate). */
static void nic_path(const hs_node_group *ng, int *nics, double *bw)
{
	*nics = ng->nics_per_node * (ng->nodes_per_domain > 0 ? ng->nodes_per_domain : 1);
	double pci = 24.0 / 31.5 * ng->pcie_bw;
	*bw = ng->nic_bw < pci ? ng->nic_bw : pci;
}

/* An explicit graph: the listed links are the only ones (no scale-up, no NICs), so every rank is its own
 * endpoint and each algorithm's bandwidth is its transfers routed on the graph (sim/coll/coll_route.c), as the
 * flow model routes them. The closed forms then read: ring hop = lat + piece x T_ring (its slowest shared
 * link), tree 2 ceil(log2 n) lat + S x T_tree, direct lat + (S/n) x T_a2a, halving-doubling step k lat +
 * S/2^k x T_hd(k); the latency is the slowest ring edge's route. */
static int xgraph_init(hs_coll_grp *g, const hs_cluster *c, const int *ranks, int n, hs_err *err)
{
	hs_coll_xroute r;
	if (hs_coll_xgraph_factors(c, ranks, n, &r))
		return hs_err_set(err, HS_EINPUT, "%s: kind explicit: some device of the group has no route to another "
				  "(expected links that join them)", hs_cluster_fabric(c)->where);
	g->xgraph = 1;
	g->xtree = r.tree_routed;
	g->nnodes = n;
	g->ppn = g->ppn_min = 1;
	g->inswitch_up = g->inswitch_net = 0; /* the graph lists no reducing switch */
	g->host_bounce = g->up_pcie = 0;
	g->lat_up = g->lat_net = r.lat;
	double ring = r.ring > 0 ? 1 / r.ring : INFINITY;
	g->bw_ring = g->bw_node = g->bw_nic = g->bw_up = ring;
	g->bw_tree = r.tree > 0 ? (n > 2 ? 2 : 1) / r.tree : INFINITY; /* tree_time's 2S (n > 2) or S over it */
	g->bw_a2a = r.a2a > 0 ? (n - 1) / r.a2a : INFINITY;           /* exchange's (n-1) pieces over it */
	for (int i = 0; i < HS_COLL_HD_STEPS; i++)
		g->bw_hd[i] = r.hd[i] > 0 ? 1 / r.hd[i] : 0;
	/* sendrecv_perf's pairs i -> i+1 are the ring's edges */
	g->p2p_local = 0;
	g->p2p_cross = 1;
	g->bw_p2p = ring;
	return 0;
}

/* Whether algorithm a's transfers are routed on the group's graph (always, off explicit graphs). */
static int xgraph_routed(const hs_coll_grp *g, enum hs_coll_algo a)
{
	if (!g->xgraph)
		return 1;
	switch (a) {
	case HS_ALGO_RING:
	case HS_ALGO_DIRECT:
	case HS_ALGO_HALVING_DOUBLING: return 1;
	case HS_ALGO_TREE:
	case HS_ALGO_HIERARCHICAL: return g->xtree;
	default: return 0;
	}
}

int hs_coll_grp_init(hs_coll_grp *g, const hs_cluster *c, const int *ranks, int n, hs_err *err)
{
	memset(g, 0, sizeof *g);
	g->n = n;
	if (n <= 0)
		return hs_err_set(err, HS_EINPUT, "a collective needs at least one rank (got %d)", n);
	int ngpus = hs_cluster_ngpus(c);
	/* dom: each rank's domain in the group's order; nodes: the same sorted; sorted: the ranks sorted; nd:
	 * p2p_pairs' */
	int stack[4 * GRP_STACK];
	int *buf = n <= GRP_STACK ? stack : hs_xmalloc(4 * (size_t)n * sizeof *buf);
	int *dom = buf, *nodes = buf + n, *sorted = buf + 2 * (size_t)n, *nd = buf + 3 * (size_t)n;
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= ngpus) {
			if (buf != stack)
				free(buf);
			return hs_err_set(err, HS_EINPUT,
					  "rank %d of the group names device %d, outside the cluster (expected 0 to %d)",
					  i, ranks[i], ngpus - 1);
		}
		sorted[i] = ranks[i];
		/* "nodes" here are scale-up domains: an NVL72 rack's 18 trays are one (topology/cluster.h) */
		nodes[i] = dom[i] = hs_cluster_domain_of(c, ranks[i]);
	}
	sort_ints(sorted, n);
	for (int i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1]) {
			int dup = sorted[i];
			if (buf != stack)
				free(buf);
			return hs_err_set(err, HS_EINPUT, "device %d appears twice in the group (expected distinct devices)",
					  dup);
		}
	sort_ints(nodes, n);
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	g->bw_up = INFINITY;
	g->bw_node = INFINITY;
	g->bw_nic = INFINITY;
	g->ppn_min = n;
	g->inswitch_up = 1;
	g->inswitch_net = f->reduce;
	g->nvls_eff = 1;
	g->nccl_ver = hs_cluster_nccl_version(c);
	g->fab = hs_cluster_fabprof(c, hs_cluster_domain_group(c, nodes[0]));
	double pcie_node = INFINITY;
	for (int i = 0; i < n;) {
		int j = i;
		while (j < n && nodes[j] == nodes[i])
			j++;
		int k = j - i;
		/* a domain belongs to exactly one node group */
		int dg = hs_cluster_domain_group(c, nodes[i]);
		if (hs_cluster_fabprof(c, dg) != g->fab)
			g->fab = NULL; /* node groups with different profiles (or some without): none applies */
		const hs_node_group *ng = hs_cluster_group(c, dg);
		g->nnodes++;
		if (k > g->ppn)
			g->ppn = k;
		if (k < g->ppn_min)
			g->ppn_min = k;
		if (k > 1) {
			if (ng->scaleup_bw < g->bw_up)
				g->bw_up = ng->scaleup_bw;
			if (ng->scaleup_lat > g->lat_up)
				g->lat_up = ng->scaleup_lat;
		}
		if (!ng->scaleup_reduce)
			g->inswitch_up = 0;
		if (i == 0 || (int)ng->gpu.arch < g->arch)
			g->arch = (int)ng->gpu.arch;
		int nics;
		double path;
		nic_path(ng, &nics, &path);
		if (i == 0 || nics < g->nics)
			g->nics = nics;
		if (i == 0 || path < g->nic_path)
			g->nic_path = path;
		double eff = hs_coll_nvls_efficiency(&ng->gpu);
		if (eff < g->nvls_eff)
			g->nvls_eff = eff;
		if (!ng->scaleup_p2p && k > 1)
			g->host_bounce = 1;
		if (ng->scaleup_props->pcie && k > 1)
			g->up_pcie = 1;
		/* the direct exchange's NIC traffic crosses each sending rank's own PCIe link as well */
		if (k * ng->pcie_bw < pcie_node)
			pcie_node = k * ng->pcie_bw;
		double nic_total = hs_cluster_domain_nic_bw(c, nodes[i]);
		double per_gpu = nic_total / ng->domain;
		double avail = k * per_gpu < nic_total ? k * per_gpu : nic_total;
		if (avail < g->bw_node)
			g->bw_node = avail;
		if (per_gpu < g->bw_nic)
			g->bw_nic = per_gpu;
		double lat = ng->nic_lat + fabric_switch_hops(f) * f->latency;
		if (lat > g->lat_net)
			g->lat_net = lat;
		i = j;
	}
	if (g->nnodes == 1)
		g->nics = 0;
	p2p_pairs(g, c, ranks, dom, nd, n);
	if (buf != stack)
		free(buf);
	if (f->props->layout == HS_OUT_EXPLICIT && n > 1)
		return xgraph_init(g, c, ranks, n, err);
	g->bw_ring = g->bw_tree = g->bw_a2a = g->bw_node;
	if (g->nnodes > 1) {
		/* Each algorithm's inter-node transfers routed at once, each link shared by those crossing it; where
		 * routes do not apply, the worst case below. */
		hs_coll_route r;
		double B = g->bw_node, o = f->oversubscription;
		if (hs_coll_route_factors(c, ranks, n, 0, &r) == 0) {
			g->bw_ring = route_bw(B, 1, r.ring);
			g->bw_tree = route_bw(B, g->nnodes > 2 ? 2 : 1, r.tree);
			g->bw_a2a = route_bw(B, (double)g->ppn * (n - g->ppn), r.a2a);
			for (int i = 0; i < HS_COLL_HD_STEPS; i++)
				g->bw_hd[i] = route_bw(B / g->ppn, 1, r.hd[i]);
		} else
			g->bw_ring = g->bw_tree = g->bw_a2a = B / o;
		if (pcie_node < g->bw_a2a)
			g->bw_a2a = pcie_node;
		/* Worst case: every byte crosses the oversubscribed tier (docs/topology.md). */
		g->bw_node /= o;
		g->bw_p2p /= o;
		g->bw_nic /= o;
	}
	return 0;
}

double hs_coll_hop(const hs_coll_grp *g, double bytes, int ranks_sharing)
{
	double t = 0;
	if (g->ppn > 1)
		t = g->lat_up + bytes / g->bw_up;
	if (g->nnodes > 1) {
		double bw = g->bw_node / (ranks_sharing > 0 ? ranks_sharing : 1);
		double tn = g->lat_net + bytes / bw;
		if (tn > t)
			t = tn;
	}
	return t;
}

/* ---- dispatch ---- */

static const hs_coll_algo_ops *const table[HS_ALGO_COUNT] = {
	[HS_ALGO_RING] = &hs_coll_ring,	    [HS_ALGO_TREE] = &hs_coll_tree,	    [HS_ALGO_HALVING_DOUBLING] = &hs_coll_hd,
	[HS_ALGO_DIRECT] = &hs_coll_direct, [HS_ALGO_HIERARCHICAL] = &hs_coll_hier, [HS_ALGO_INSWITCH] = &hs_coll_inswitch,
	[HS_ALGO_NVLS] = &hs_coll_nvls,	    [HS_ALGO_NVLS_TREE] = &hs_coll_nvls_tree,
};

enum hs_coll_algo hs_coll_default_algo(enum hs_coll_op op)
{
	return op == HS_COLL_ALL_TO_ALL || op == HS_COLL_SENDRECV ? HS_ALGO_DIRECT : HS_ALGO_RING;
}

int hs_coll_supported(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n)
{
	if ((unsigned)op >= HS_COLL_OP_COUNT || (unsigned)algo >= HS_ALGO_COUNT)
		return 0;
	if (algo == HS_ALGO_AUTO || algo == HS_ALGO_FASTEST)
		return 1;
	hs_err err = {0};
	hs_coll_grp g;
	if (hs_coll_grp_init(&g, c, ranks, n, &err))
		return 0;
	return table[algo]->supports(&g, op);
}

/* The fastest supported closed form (FASTEST). */
static enum hs_coll_algo fastest(const hs_coll_grp *g, enum hs_coll_op op, double bytes, double *t_out)
{
	double best = INFINITY;
	enum hs_coll_algo ba = hs_coll_default_algo(op);
	for (int a = HS_ALGO_RING; a < HS_ALGO_COUNT; a++) {
		if (!table[a]->supports(g, op) || !xgraph_routed(g, (enum hs_coll_algo)a))
			continue;
		double t = table[a]->time(g, op, bytes);
		if (t < best) {
			best = t;
			ba = (enum hs_coll_algo)a;
		}
	}
	if (t_out)
		*t_out = best;
	return ba;
}

enum hs_coll_algo hs_coll_grp_resolve(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes)
{
	if (algo == HS_ALGO_AUTO) {
		if (g->n <= 1 || bytes <= 0)
			return hs_coll_default_algo(op);
		enum hs_coll_algo a = hs_coll_nccl_pick(g, op, bytes);
		/* on an explicit graph NCCL's choice where the closed forms route it, else the operation's default */
		return xgraph_routed(g, a) ? a : hs_coll_default_algo(op);
	}
	if (algo == HS_ALGO_FASTEST)
		return g->n <= 1 || bytes <= 0 ? hs_coll_default_algo(op) : fastest(g, op, bytes, NULL);
	/* As NCCL does when NCCL_ALGO names an algorithm the operation lacks: run the operation's default (ring,
	 * or direct for all-to-all and send/recv). What the algorithm implements, whether or not the closed forms
	 * route it on an explicit graph: the flow model runs it there. */
	hs_coll_grp h = *g;
	h.xgraph = 0;
	return table[algo]->supports(&h, op) ? algo : hs_coll_default_algo(op);
}

double hs_coll_grp_time(const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo, double bytes,
			enum hs_coll_algo *chosen)
{
	enum hs_coll_algo a = hs_coll_grp_resolve(g, op, algo, bytes);
	/* an algorithm the closed forms do not route on an explicit graph (the flow model runs it; a scenario
	 * that names it is refused at analytical fidelity, hs_coll_closed_form_check) runs the default here */
	if (!xgraph_routed(g, a))
		a = hs_coll_default_algo(op);
	if (chosen)
		*chosen = a;
	if (g->n <= 1 || bytes <= 0)
		return 0;
	return table[a]->time(g, op, bytes);
}

double hs_coll_pipe(const double *phase, const int *resource, int nphases, double bytes)
{
	/* A message of M chunks through phases in order, chunk j of phase k after chunk j of phase k - 1, phases
	 * on one resource sharing it: the first chunk fills the pipeline (every phase's time for one chunk), then
	 * the busiest resource sets the pace for the other M - 1. With busy(r) the summed time of r's phases for
	 * the whole message: T = sum_k t_k / M + (M - 1)/M * max_r busy(r). */
	double M = ceil(bytes / HS_COLL_PIPE_CHUNK), sum = 0, busy[8] = {0}, mx = 0;
	if (M < 1)
		M = 1;
	for (int k = 0; k < nphases; k++) {
		sum += phase[k];
		busy[resource[k] & 7] += phase[k];
	}
	for (int r = 0; r < 8; r++)
		if (busy[r] > mx)
			mx = busy[r];
	return sum / M + (M - 1) / M * mx;
}

double hs_coll_time(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n,
		    double bytes)
{
	if ((unsigned)op >= HS_COLL_OP_COUNT || (unsigned)algo >= HS_ALGO_COUNT)
		return -1;
	if (n == 1 && ranks && ranks[0] >= 0 && ranks[0] < hs_cluster_ngpus(c))
		return 0;
	hs_err err = {0};
	hs_coll_grp g;
	if (hs_coll_grp_init(&g, c, ranks, n, &err))
		return -1;
	/* a group with a fitted fabric profile is timed as measured: the NCCL model with its correction */
	if (g.fab)
		return hs_coll_nccl_grp_time(&g, op, algo, bytes);
	return hs_coll_grp_time(&g, op, algo, bytes, NULL);
}

int hs_coll_closed_form_check(const hs_cluster *c, enum hs_coll_algo algo, hs_err *err)
{
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	if (f->props->layout != HS_OUT_EXPLICIT)
		return 0;
	/* the closed forms route every ordered device pair once per group (all-to-all's set): bounded work */
	if (hs_cluster_ngpus(c) > HS_COLL_XGRAPH_MAX)
		return hs_err_set(err, HS_EINPUT,
				  "%s: kind explicit: %d devices; the analytical fidelity routes explicit graphs of at "
				  "most %d (expected the flow fidelity: simulation: {fidelity: flow} in a scenario, "
				  "--fidelity flow for hetsim coll)",
				  f->where, hs_cluster_ngpus(c), HS_COLL_XGRAPH_MAX);
	const char *why = NULL;
	switch (algo) {
	case HS_ALGO_NVLS:
	case HS_ALGO_NVLS_TREE:
	case HS_ALGO_INSWITCH: why = "reduces in a switch, and an explicit graph lists none that reduces"; break;
	case HS_ALGO_TREE:
	case HS_ALGO_HIERARCHICAL:
		for (int g = 0; g < hs_cluster_ngroups(c) && !why; g++)
			if (hs_cluster_group(c, g)->domain > 1)
				why = "chains or rings the GPUs of a scale-up domain, which the closed forms do not route "
				      "on an explicit graph (every GPU its own scale-up domain would: gpus_per_node: 1)";
		break;
	default: break;
	}
	if (!why) {
		/* the closed forms route on the graph: one that does not join every device is an error here, as
		 * at flow fidelity */
		hs_topo *t = hs_topo_build(c, err);
		if (!t)
			return -1;
		hs_topo_free(t);
		return 0;
	}
	return hs_err_set(err, HS_EINPUT,
			  "%s: kind explicit: algorithm %s %s; expected the flow fidelity, which runs it step by step "
			  "over the graph (simulation: {fidelity: flow} in a scenario, --fidelity flow for hetsim coll), "
			  "or an algorithm the closed forms route there (ring, direct, halving_doubling, auto)",
			  f->where, hs_coll_algo_name(algo), why);
}

int hs_coll_check(const hs_cluster *c, const int *ranks, int n, hs_err *err)
{
	hs_coll_grp g;
	return hs_coll_grp_init(&g, c, ranks, n, err);
}

enum hs_coll_algo hs_coll_resolve_algo(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo,
				       const int *ranks, int n, double bytes)
{
	hs_err err = {0};
	hs_coll_grp g;
	if ((unsigned)op >= HS_COLL_OP_COUNT || (unsigned)algo >= HS_ALGO_COUNT)
		return hs_coll_default_algo(op);
	if (hs_coll_grp_init(&g, c, ranks, n, &err))
		return algo == HS_ALGO_AUTO || algo == HS_ALGO_FASTEST ? hs_coll_default_algo(op) : algo;
	return hs_coll_grp_resolve(&g, op, algo, bytes);
}

enum hs_coll_algo hs_coll_auto_algo(const hs_cluster *c, enum hs_coll_op op, const int *ranks, int n, double bytes)
{
	return hs_coll_resolve_algo(c, op, HS_ALGO_AUTO, ranks, n, bytes);
}
