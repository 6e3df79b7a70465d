/* hs_topo: builders that turn a cluster description into a link graph (topology/topo.h).
 *
 * Latency placement: a path's latency is the sum of its links'. Scale-up links carry half the scale-up
 * latency each (GPU -> switch -> GPU sums to one hop); GPU <-> NIC links carry half the NIC latency each;
 * every link leaving a switch carries one switch-hop latency. So NIC to NIC through a 2-tier fat-tree costs
 * nic latency + 3 switch hops, the figure the analytical model (sim/coll/coll.c) uses. */
#include "topology/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

typedef struct vinfo {
	unsigned char kind;
	int node; /* -1: fabric; a domain's switches: the domain's first node */
	int idx;  /* NIC: index in node; switch: serial number; host: 0 */
	int dom;  /* scale-up domain (hs_cluster_domain_of); -1: fabric */
} vinfo;

struct hs_topo {
	const hs_cluster *c;
	int nv, nl;
	size_t vcap, lcap;
	vinfo *v;
	hs_link *l;
	int *out_off, *out; /* CSR over from */
	int *in_off, *in;   /* CSR over to */
	int *nic0, *nicn;   /* nnodes: first NIC vertex of each node (contiguous) and how many */
	int *upsw;          /* nnodes: scale-up switch, -1 */
	int *dnic0, *dnicn; /* ndomains: first NIC vertex of each domain and how many (a domain's nodes are
			     * built one after another, so its NICs are contiguous too) */
	int top;            /* a top-tier switch, -1 */
	int has_nics;
	int nsw;            /* switches made so far (names) */
};

static int add_v(hs_topo *t, enum hs_vkind k, int node, int idx)
{
	hs_xgrow(&t->v, &t->vcap, (size_t)t->nv + 1, sizeof *t->v);
	t->v[t->nv] = (vinfo){(unsigned char)k, node, idx, node >= 0 ? hs_cluster_node_domain(t->c, node) : -1};
	return t->nv++;
}

static int add_sw(hs_topo *t, int node) { return add_v(t, HS_V_SWITCH, node, t->nsw++); }

static void add_l(hs_topo *t, int a, int b, double bw_Bps, double lat_s)
{
	hs_xgrow(&t->l, &t->lcap, (size_t)t->nl + 1, sizeof *t->l);
	t->l[t->nl++] = (hs_link){a, b, hs_rate_from_Bps(bw_Bps), hs_time_from_s(lat_s)};
}

/* A physical link: both directions, each with its own latency. */
static void add_pair(hs_topo *t, int a, int b, double bw, double lat_ab, double lat_ba)
{
	add_l(t, a, b, bw, lat_ab);
	add_l(t, b, a, bw, lat_ba);
}

/* ---- scale-up, one node: one builder per layout (topology/kind.h), each for a node of p > 1 GPUs ---- */

/* Every GPU of a scale-up domain to its switch (NVSwitch, NVL72), the up-switch of each node of the domain.
 * A domain may span nodes (an NVL72 rack: 18 trays of 4 GPUs on one NVLink switch domain), built once, before
 * its nodes' NICs. Its GPUs may be split over `parts` switches (NVL36x2: one per rack of 36), every pair of
 * them joined by a link that carries a whole part's GPU bandwidth, so the split blocks nothing; crossing it
 * adds one scale-up hop. The switch vertices belong to the domain's first node (they are not fabric). */
static void up_domain(hs_topo *t, const hs_node_group *g, int node0, int gpu0)
{
	int parts = g->scaleup_props->parts, per = g->domain / parts, sw0 = t->nv;
	double half = g->scaleup_lat / 2;
	for (int k = 0; k < parts; k++)
		add_sw(t, node0);
	for (int i = 0; i < g->domain; i++)
		add_pair(t, gpu0 + i, sw0 + i / per, g->scaleup_bw, half, half);
	for (int a = 0; a < parts; a++)
		for (int b = a + 1; b < parts; b++)
			add_pair(t, sw0 + a, sw0 + b, g->scaleup_bw * per, half, half);
	for (int k = 0; k < g->nodes_per_domain; k++)
		t->upsw[node0 + k] = sw0 + k * g->gpus_per_node / per;
}

/* All-to-all point-to-point links; each GPU's bandwidth is spread over its p-1 peers (MI300X: 7 x 64 GB/s
 * xGMI links; DGX-1 style NVLink meshes). */
static void up_mesh(hs_topo *t, const hs_node_group *g, int node, int gpu0)
{
	int p = g->gpus_per_node;
	for (int i = 0; i < p; i++)
		for (int j = i + 1; j < p; j++)
			add_pair(t, gpu0 + i, gpu0 + j, g->scaleup_bw / (p - 1), g->scaleup_lat, g->scaleup_lat);
}

/* Bridged pairs (0-1, 2-3, ...); everything else crosses the PCIe switch. */
static void up_bridge(hs_topo *t, const hs_node_group *g, int node, int gpu0)
{
	int p = g->gpus_per_node;
	double half = g->scaleup_lat / 2;
	for (int i = 0; i + 1 < p; i += 2)
		add_pair(t, gpu0 + i, gpu0 + i + 1, g->scaleup_bw, g->scaleup_lat, g->scaleup_lat);
	int sw = add_sw(t, node);
	for (int i = 0; i < p; i++)
		add_pair(t, gpu0 + i, sw, g->pcie_bw, half, half);
}

/* A PCIe switch. With peer-to-peer, GPUs meet at the switch (which is not an up-switch: it cannot reduce).
 * Without, a copy goes up to host memory and down again. Directed links make the detour the only path: GPUs
 * send into `up`, which only reaches the host; the host only reaches `down`, which only reaches GPUs. Every
 * sender shares up -> host, every receiver host -> down (the switch's one host link, one per direction). */
static void up_pcie(hs_topo *t, const hs_node_group *g, int node, int gpu0)
{
	int p = g->gpus_per_node;
	double bw = g->scaleup_bw, half = g->scaleup_lat / 2;
	if (g->scaleup_p2p) {
		int sw = add_sw(t, node);
		for (int i = 0; i < p; i++)
			add_pair(t, gpu0 + i, sw, bw, half, half);
		return;
	}
	int up = add_sw(t, node), host = add_v(t, HS_V_HOST, node, 0), down = add_sw(t, node);
	double q = g->scaleup_lat / 4;
	for (int i = 0; i < p; i++) {
		add_l(t, gpu0 + i, up, bw, q);
		add_l(t, down, gpu0 + i, bw, q);
	}
	add_l(t, up, host, bw, q);
	add_l(t, host, down, bw, q);
}

/* No scale-up links: devices of the node meet through the NICs. */
static void up_none(hs_topo *t, const hs_node_group *g, int node, int gpu0) {}

typedef void (*up_builder)(hs_topo *t, const hs_node_group *g, int node, int gpu0);
static const up_builder up_builders[HS_UP_LAYOUTS] = {
	[HS_UP_SWITCH] = NULL /* up_domain */, [HS_UP_MESH] = up_mesh, [HS_UP_BRIDGE] = up_bridge,
	[HS_UP_PCIE] = up_pcie,     [HS_UP_NONE] = up_none,
};

/* A node's scale-up (unless its domain's switches, laid out by up_domain, join it) and its NICs. */
static void build_node(hs_topo *t, const hs_node_group *g, int node, int gpu0)
{
	int p = g->gpus_per_node;
	if (g->scaleup_props->layout != HS_UP_SWITCH)
		t->upsw[node] = -1;
	if (p > 1 && g->scaleup_props->layout != HS_UP_SWITCH)
		up_builders[g->scaleup_props->layout](t, g, node, gpu0);
	/* NICs: NIC i hangs off device i * p / nics (GPUDirect RDMA through a shared PCIe switch) */
	int nn = g->nics_per_node;
	t->nic0[node] = t->nv;
	t->nicn[node] = nn;
	for (int i = 0; i < nn; i++) {
		int nic = add_v(t, HS_V_NIC, node, i);
		int own = (int)((long)i * p / nn);
		/* the owner's NICs share its own PCIe link (hs_cluster_gpu_pcie_bw): each at most its part of it */
		/* NICs j with floor(j p / nn) == own: j from ceil(own nn / p) to ceil((own + 1) nn / p) - 1 */
		long lo = ((long)own * nn + p - 1) / p, hi = ((long)(own + 1) * nn + p - 1) / p;
		int shared = (int)(hi - lo);
		double bw = g->pcie_bw / shared < g->nic_bw ? g->pcie_bw / shared : g->nic_bw;
		add_pair(t, gpu0 + own, nic, bw, g->nic_lat / 2, g->nic_lat / 2);
	}
}

/* ---- scale-out ---- */

/* A device of the node (for its group): the node's first device. */
static int node_gpu0(const hs_topo *t, int node)
{
	for (int g = hs_cluster_ngroups(t->c) - 1; g >= 0; g--)
		if (hs_cluster_first_node(t->c, g) <= node)
			return hs_cluster_first_gpu(t->c, g) +
			       (node - hs_cluster_first_node(t->c, g)) * hs_cluster_group(t->c, g)->gpus_per_node;
	return 0;
}

typedef struct nicref {
	int v;     /* vertex */
	int node;
	int idx;   /* index in node */
	double bw; /* bytes/s */
} nicref;

/* One uplink of a leaf with D down ports, U up ports and oversubscription o, whose `attached` NICs have
 * `down` bytes/s in all: a full leaf's NIC bandwidth / (o U), at the attached NICs' mean speed. */
static double uplink_bw(double down, int attached, int D, double o, int U)
{
	return attached > 0 ? down / attached * D / o / U : 0;
}

/* Attach NIC to switch: NIC -> switch costs nothing, switch -> NIC one switch hop. */
static void attach(hs_topo *t, const nicref *n, int sw, double fl) { add_pair(t, n->v, sw, n->bw, 0, fl); }

/* Leaves D = radix * o / (1 + o) down ports, at least 1 and at most radix - 1. */
static int leaf_down_ports(int R, double o)
{
	int D = (int)lround(R * o / (1 + o));
	return D < 1 ? 1 : D > R - 1 ? R - 1 : D;
}

/* A fat-tree over nics[0..n-1]. Leaves have D = radix * o / (1 + o) down ports and U = radix - D up ports,
 * one to each of U spines (2 tiers), or to U aggregation switches of the leaf's pod (3 tiers: pods of
 * radix/2 leaves, each aggregation switch with radix/2 links up to its own core switches). A full leaf's
 * uplinks together carry its NICs' bandwidth divided by the oversubscription; a leaf that is not full has
 * the same uplinks (a switch's ports run at their speed whatever hangs below them), so each uplink carries
 * D x the leaf's mean NIC bandwidth / (o U), and likewise an aggregation switch's core links are those of a
 * full pod. (Sizing them by the NICs attached gave the one NIC on a last, nearly empty leaf 1/U of its
 * bandwidth per hashed path.) Returns the first switch of the top tier; *ntop (if not NULL) receives how
 * many top-tier switches follow it contiguously. */
static int fat_tree(hs_topo *t, const nicref *nics, int n, int tiers, int radix, double o, double fl, int *ntop)
{
	if (ntop)
		*ntop = n == 0 ? 0 : 1;
	if (n == 0)
		return -1;
	if (tiers <= 1) {
		int sw = add_sw(t, -1);
		for (int i = 0; i < n; i++)
			attach(t, &nics[i], sw, fl);
		return sw;
	}
	int D = leaf_down_ports(radix, o);
	int U = radix - D;
	int L = (n + D - 1) / D;
	int *leaf = hs_xmalloc((size_t)L * sizeof *leaf);
	double *down = hs_xcalloc((size_t)L, sizeof *down); /* then: one uplink's bandwidth */
	for (int l = 0; l < L; l++)
		leaf[l] = add_sw(t, -1);
	for (int i = 0; i < n; i++) {
		attach(t, &nics[i], leaf[i / D], fl);
		down[i / D] += nics[i].bw;
	}
	for (int l = 0; l < L; l++) {
		int attached = l < L - 1 ? D : n - l * D;
		down[l] = uplink_bw(down[l], attached, D, o, U);
	}
	int top = leaf[0];
	if (L > 1 && tiers == 2) {
		int s0 = t->nv;
		for (int s = 0; s < U; s++)
			add_sw(t, -1);
		for (int l = 0; l < L; l++)
			for (int s = 0; s < U; s++)
				add_pair(t, leaf[l], s0 + s, down[l], fl, fl);
		top = s0;
		if (ntop)
			*ntop = U;
	} else if (L > 1) {
		int pod = radix / 2 > 0 ? radix / 2 : 1, P = (L + pod - 1) / pod, C = radix / 2 > 0 ? radix / 2 : 1;
		int core0 = -1;
		if (P > 1) {
			core0 = t->nv;
			for (int s = 0; s < U * C; s++)
				add_sw(t, -1);
		}
		for (int p = 0; p < P; p++) {
			int a0 = t->nv, nl = 0;
			double agg_down = 0;
			for (int a = 0; a < U; a++)
				add_sw(t, -1);
			for (int l = p * pod; l < L && l < (p + 1) * pod; l++, nl++) {
				for (int a = 0; a < U; a++)
					add_pair(t, leaf[l], a0 + a, down[l], fl, fl);
				agg_down += down[l];
			}
			if (P > 1) /* sized for a full pod of `pod` leaves, at the pod's mean leaf uplink */
				for (int a = 0; a < U; a++)
					for (int c = 0; c < C; c++)
						add_pair(t, a0 + a, core0 + a * C + c, agg_down / nl * pod / C, fl, fl);
			top = P > 1 ? core0 : a0;
		}
		if (ntop)
			*ntop = P > 1 ? U * C : U;
	}
	free(leaf);
	free(down);
	return top;
}

/* What every scale-out builder starts from: the cluster's NICs in node order. */
typedef struct nicset {
	const hs_cluster *c;
	const hs_fabric_spec *f;
	const nicref *nics; /* every NIC, node by node */
	int total;
	const int *first;   /* nnodes + 1: index in nics of each node's first NIC (WAN sites slice it by node) */
	int nn;             /* nodes */
} nicset;

static void out_fat_tree(hs_topo *t, const nicset *s)
{
	const hs_fabric_spec *f = s->f;
	t->top = fat_tree(t, s->nics, s->total, f->tiers, f->radix, f->oversubscription, f->latency, NULL);
}

/* Rail-optimised: NIC r of every node joins rail r's leaves; one spine tier joins all leaves. */
static void out_rails(hs_topo *t, const nicset *s)
{
	const hs_fabric_spec *f = s->f;
	double fl = f->latency, o = f->oversubscription;
	int R = f->radix, total = s->total;
	int maxn = 0;
	for (int node = 0; node < s->nn; node++)
		if (t->nicn[node] > maxn)
			maxn = t->nicn[node];
	nicref *sel = hs_xmalloc((size_t)(total ? total : 1) * sizeof *sel);
	int D = leaf_down_ports(R, o);
	int U = R - D;
	int *leaves = NULL, *lcount = NULL;
	double *ldown = NULL;
	size_t lc = 0, dc = 0, cc = 0;
	int nleaves = 0;
	for (int r = 0; r < maxn; r++) {
		int m = 0;
		for (int i = 0; i < total; i++)
			if (s->nics[i].idx == r)
				sel[m++] = s->nics[i];
		for (int i = 0; i < m; i++) {
			if (i % D == 0) {
				hs_xgrow(&leaves, &lc, (size_t)nleaves + 1, sizeof *leaves);
				hs_xgrow(&ldown, &dc, (size_t)nleaves + 1, sizeof *ldown);
				hs_xgrow(&lcount, &cc, (size_t)nleaves + 1, sizeof *lcount);
				leaves[nleaves] = add_sw(t, -1);
				lcount[nleaves] = 0;
				ldown[nleaves++] = 0;
			}
			attach(t, &sel[i], leaves[nleaves - 1], fl);
			ldown[nleaves - 1] += sel[i].bw;
			lcount[nleaves - 1]++;
		}
	}
	if (nleaves > 1) {
		int s0 = t->nv;
		for (int k = 0; k < U; k++)
			add_sw(t, -1);
		for (int l = 0; l < nleaves; l++)
			for (int k = 0; k < U; k++)
				add_pair(t, leaves[l], s0 + k, uplink_bw(ldown[l], lcount[l], D, o, U), fl, fl);
		t->top = s0;
	} else if (nleaves == 1)
		t->top = leaves[0];
	free(leaves);
	free(lcount);
	free(ldown);
	free(sel);
}

/* Multi-plane: NIC i is in plane i mod planes; each plane is its own fat-tree, planes never meet. */
static void out_planes(hs_topo *t, const nicset *s)
{
	const hs_fabric_spec *f = s->f;
	int groups = f->planes, total = s->total;
	nicref *sel = hs_xmalloc((size_t)(total ? total : 1) * sizeof *sel);
	for (int r = 0; r < groups; r++) {
		int m = 0;
		for (int i = 0; i < total; i++)
			if (s->nics[i].idx % groups == r)
				sel[m++] = s->nics[i];
		int top = fat_tree(t, sel, m, f->tiers, f->radix, f->oversubscription, f->latency, NULL);
		if (t->top < 0)
			t->top = top;
	}
	free(sel);
}

/* Routers with nics_per_router NICs each, groups of routers_per_group routers joined all-to-all by local
 * links, one global link between every pair of groups (router j of group i serves group j's link, j mod a). */
static void out_dragonfly(hs_topo *t, const nicset *s)
{
	const hs_fabric_spec *f = s->f;
	double fl = f->latency;
	int p = f->nics_per_router, a = f->routers_per_group, total = s->total;
	int nr = (total + p - 1) / p, ng = (nr + a - 1) / a;
	int r0 = t->nv;
	for (int r = 0; r < nr; r++)
		add_sw(t, -1);
	for (int i = 0; i < total; i++)
		attach(t, &s->nics[i], r0 + i / p, fl);
	for (int g = 0; g < ng; g++)
		for (int i = g * a; i < nr && i < (g + 1) * a; i++)
			for (int j = i + 1; j < nr && j < (g + 1) * a; j++)
				add_pair(t, r0 + i, r0 + j, f->link_bw, fl, fl);
	for (int gi = 0; gi < ng; gi++)
		for (int gj = gi + 1; gj < ng; gj++) {
			int ri = gi * a + gj % a, rj = gj * a + gi % a;
			if (ri >= nr)
				ri = gi * a;
			if (rj >= nr)
				rj = gj * a;
			add_pair(t, r0 + ri, r0 + rj, f->link_bw, fl, fl);
		}
	t->top = r0;
}

/* One router per node, its NICs attached; wrap-around links to the next router in each dimension. */
static void out_torus(hs_topo *t, const nicset *s)
{
	const hs_fabric_spec *f = s->f;
	double fl = f->latency;
	int nd = f->props->dims, nn = s->nn;
	int r0 = t->nv;
	for (int node = 0; node < nn; node++)
		add_sw(t, -1);
	for (int i = 0; i < s->total; i++)
		attach(t, &s->nics[i], r0 + s->nics[i].node, fl);
	int stride = 1;
	for (int d = 0; d < nd; d++) {
		int sz = f->dims[d];
		if (sz > 1)
			for (int node = 0; node < nn; node++) {
				int coord = node / stride % sz;
				if (sz == 2 && coord == 1)
					continue; /* a ring of two is one link */
				int nb = node + ((coord + 1) % sz - coord) * stride;
				add_pair(t, r0 + node, r0 + nb, f->link_bw, fl, fl);
			}
		stride *= sz;
	}
	t->top = r0;
}

/* Each node group is a site with its own fat-tree; a gateway per site joins its top tier and every other
 * site's gateway over a WAN link. */
static void out_wan(hs_topo *t, const nicset *s)
{
	const hs_cluster *c = s->c;
	const hs_fabric_spec *f = s->f;
	double fl = f->latency;
	int ng = hs_cluster_ngroups(c);
	int *gw = hs_xmalloc((size_t)ng * sizeof *gw);
	for (int g = 0; g < ng; g++) {
		int a = s->first[hs_cluster_first_node(c, g)];
		int b = s->first[hs_cluster_first_node(c, g) + hs_cluster_group(c, g)->nodes];
		int ntop;
		int top = fat_tree(t, s->nics + a, b - a, f->tiers, f->radix, f->oversubscription, fl, &ntop);
		gw[g] = add_sw(t, -1);
		/* connect the gateway to every switch of the site's top tier (they follow `top`). Only those: in a
		 * 3-tier site of several pods the aggregation switches are made after the cores, and joining them
		 * too gave the gateway a shortcut below the top tier. */
		for (int k = top; k >= 0 && k < top + ntop; k++)
			add_pair(t, k, gw[g], f->wan_bw, fl, fl);
		if (t->top < 0)
			t->top = top;
	}
	for (int i = 0; i < ng; i++)
		for (int j = i + 1; j < ng; j++)
			add_pair(t, gw[i], gw[j], f->wan_bw, f->wan_lat, f->wan_lat);
	free(gw);
}

/* No scale-out fabric: nodes are not joined (check_connected says so when a cluster needs them to be). */
static void out_none(hs_topo *t, const nicset *s) {}

/* One builder per layout of topology/kind.h; EXPLICIT is laid out by build_explicit, before any node. */
typedef void (*out_builder)(hs_topo *t, const nicset *s);
static const out_builder out_builders[HS_OUT_LAYOUTS] = {
	[HS_OUT_FAT_TREE] = out_fat_tree,   [HS_OUT_RAILS] = out_rails, [HS_OUT_PLANES] = out_planes,
	[HS_OUT_DRAGONFLY] = out_dragonfly, [HS_OUT_TORUS] = out_torus, [HS_OUT_WAN] = out_wan,
	[HS_OUT_NONE] = out_none,
};

static int build_fabric(hs_topo *t, const hs_cluster *c, hs_err *err)
{
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	out_builder build = out_builders[f->props->layout];
	if (!build)
		return hs_err_set(err, HS_EINTERNAL, "fabric kind '%s' has no builder", f->kind);
	int nn = hs_cluster_nnodes(c), total = 0;
	for (int node = 0; node < nn; node++)
		total += t->nicn[node];
	/* NICs in node order; first NIC of each node in that list (WAN sites slice it by node) */
	nicref *nics = hs_xmalloc((size_t)(total ? total : 1) * sizeof *nics);
	int *first = hs_xmalloc(((size_t)nn + 1) * sizeof *first);
	for (int node = 0, k = 0; node < nn; node++) {
		int g = hs_cluster_group_of(c, t->v[t->nic0[node]].kind == HS_V_NIC ? node_gpu0(t, node)
										    : 0);
		first[node] = k;
		for (int i = t->nic0[node]; i < t->nic0[node] + t->nicn[node]; i++, k++)
			nics[k] = (nicref){i, node, t->v[i].idx, hs_cluster_group(c, g)->nic_bw};
		first[node + 1] = k;
	}
	build(t, &(nicset){c, f, nics, total, first, nn});
	free(nics);
	free(first);
	return 0;
}

static void build_explicit(hs_topo *t, const hs_fabric_spec *f)
{
	for (int i = 0; i < f->nswitches; i++)
		add_sw(t, -1);
	for (int i = 0; i < f->nxlinks; i++) {
		const hs_xlink *x = &f->xlinks[i];
		add_l(t, x->a, x->b, x->bw, x->lat);
		if (x->duplex)
			add_l(t, x->b, x->a, x->bw, x->lat);
	}
	t->top = f->nswitches ? t->nv - f->nswitches : -1;
}

static void csr(int nv, int nl, const hs_link *l, int by_to, int **off_out, int **arr_out)
{
	int *off = hs_xcalloc((size_t)nv + 1, sizeof *off), *arr = hs_xmalloc((size_t)(nl ? nl : 1) * sizeof *arr);
	for (int i = 0; i < nl; i++)
		off[(by_to ? l[i].to : l[i].from) + 1]++;
	for (int v = 0; v < nv; v++)
		off[v + 1] += off[v];
	int *pos = hs_xmalloc((size_t)(nv ? nv : 1) * sizeof *pos);
	memcpy(pos, off, (size_t)nv * sizeof *pos);
	for (int i = 0; i < nl; i++)
		arr[pos[by_to ? l[i].to : l[i].from]++] = i;
	free(pos);
	*off_out = off;
	*arr_out = arr;
}

/* Does device v own a NIC? */
static int owns_nic(const hs_topo *t, int v)
{
	for (int i = t->out_off[v]; i < t->out_off[v + 1]; i++)
		if (t->v[t->l[t->out[i]].to].kind == HS_V_NIC)
			return 1;
	return 0;
}

/* Reachability without passing through a device (routes never relay through a GPU's memory, except the
 * NIC-sharing detour the router builds on purpose). */
static int reach(const hs_topo *t, int src, int *seen, int *queue)
{
	int h = 0, q = 0, got = 0;
	memset(seen, 0, (size_t)t->nv * sizeof *seen);
	seen[src] = 1;
	queue[q++] = src;
	while (h < q) {
		int u = queue[h++];
		if (t->v[u].kind == HS_V_GPU) {
			got++;
			if (u != src && !(t->has_nics && owns_nic(t, u)))
				continue;
		}
		for (int i = t->out_off[u]; i < t->out_off[u + 1]; i++) {
			int w = t->l[t->out[i]].to;
			if (!seen[w]) {
				seen[w] = 1;
				queue[q++] = w;
			}
		}
	}
	return got;
}

/* A vertex routes may pass through: anything but a device, and a device that owns a NIC (PXN). */
static int transit(const hs_topo *t, int v)
{
	return t->v[v].kind != HS_V_GPU || (t->has_nics && owns_nic(t, v));
}

/* Whether the transit vertices are strongly connected (a search from one along out-links and one along
 * in-links reach them all) and every device has a link to one and a link from one: then every device reaches
 * every other (out into the transit part, across it, in from it). One search each way instead of one per
 * device: with single-GPU nodes every device leads its node, and the per-device searches were quadratic
 * (85% of a 2,048-node ring all-reduce's run). 0: not shown so, and the search per device decides. */
static int connected_fast(const hs_topo *t, int *seen, int *queue)
{
	int start = -1, ntr = 0;
	for (int v = 0; v < t->nv; v++)
		if (transit(t, v)) {
			ntr++;
			if (start < 0)
				start = v;
		}
	if (start < 0)
		return 0;
	for (int dir = 0; dir < 2; dir++) {
		const int *off = dir ? t->in_off : t->out_off, *adj = dir ? t->in : t->out;
		int h = 0, q = 0;
		memset(seen, 0, (size_t)t->nv * sizeof *seen);
		seen[start] = 1;
		queue[q++] = start;
		while (h < q) {
			int u = queue[h++];
			for (int i = off[u]; i < off[u + 1]; i++) {
				int w = dir ? t->l[adj[i]].from : t->l[adj[i]].to;
				if (!seen[w] && transit(t, w)) {
					seen[w] = 1;
					queue[q++] = w;
				}
			}
		}
		if (q != ntr)
			return 0;
	}
	int G = hs_cluster_ngpus(t->c);
	for (int g = 0; g < G; g++) {
		int out = 0, in = 0;
		for (int i = t->out_off[g]; i < t->out_off[g + 1] && !out; i++)
			out = transit(t, t->l[t->out[i]].to);
		for (int i = t->in_off[g]; i < t->in_off[g + 1] && !in; i++)
			in = transit(t, t->l[t->in[i]].from);
		if (!(out && in) && !transit(t, g))
			return 0;
	}
	return 1;
}

static int check_connected(hs_topo *t, hs_err *err)
{
	int G = hs_cluster_ngpus(t->c);
	int *seen = hs_xmalloc((size_t)t->nv * sizeof *seen), *queue = hs_xmalloc((size_t)t->nv * sizeof *queue);
	if (G > 64 && connected_fast(t, seen, queue)) {
		free(seen);
		free(queue);
		return 0;
	}
	/* Every device must reach every other one. Routes relay through a device only to reach a NIC it owns
	 * (PXN), so NIC owners count as transit here; built layouts are regular, so for large clusters the
	 * first device of each node stands for its node. */
	int rc = 0;
	for (int s = 0; s < G && !rc; s++) {
		if (t->has_nics && G > 64 && hs_cluster_local_rank(t->c, s) != 0)
			continue;
		if (reach(t, s, seen, queue) == G)
			continue;
		int miss = 0;
		while (miss < G && seen[miss])
			miss++;
		const hs_fabric_spec *f = hs_cluster_fabric(t->c);
		rc = hs_err_set(err, HS_EINPUT,
				"%s%sthe topology is not connected: gpu%d has no path to gpu%d (fabric '%s' does not join "
				"them; every device must reach every other one through links and switches)",
				f->where, f->where[0] ? ": " : "", s, miss, f->kind);
	}
	free(seen);
	free(queue);
	return rc;
}

hs_topo *hs_topo_build(const hs_cluster *c, hs_err *err)
{
	hs_topo *t = hs_xcalloc(1, sizeof *t);
	t->c = c;
	t->top = -1;
	int G = hs_cluster_ngpus(c), nn = hs_cluster_nnodes(c);
	for (int i = 0; i < G; i++)
		add_v(t, HS_V_GPU, hs_cluster_node_of(c, i), hs_cluster_local_rank(c, i));
	t->nic0 = hs_xcalloc((size_t)nn + 1, sizeof *t->nic0);
	t->nicn = hs_xcalloc((size_t)nn + 1, sizeof *t->nicn);
	t->upsw = hs_xmalloc((size_t)(nn ? nn : 1) * sizeof *t->upsw);
	int nd = hs_cluster_ndomains(c);
	t->dnic0 = hs_xcalloc((size_t)nd + 1, sizeof *t->dnic0);
	t->dnicn = hs_xcalloc((size_t)nd + 1, sizeof *t->dnicn);
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	if (f->props->lists_links) {
		for (int i = 0; i < nn; i++)
			t->upsw[i] = -1;
		build_explicit(t, f);
	} else {
		t->has_nics = 1;
		for (int g = 0; g < hs_cluster_ngroups(c); g++) {
			const hs_node_group *ng = hs_cluster_group(c, g);
			for (int k = 0; k < ng->nodes; k++) {
				int node = hs_cluster_first_node(c, g) + k;
				int gpu0 = hs_cluster_first_gpu(c, g) + k * ng->gpus_per_node;
				if (ng->scaleup_props->layout == HS_UP_SWITCH && k % ng->nodes_per_domain == 0) {
					if (ng->domain > 1)
						up_domain(t, ng, node, gpu0);
					else
						t->upsw[node] = -1;
				}
				build_node(t, ng, node, gpu0);
			}
		}
		for (int node = 0; node < nn; node++) {
			int d = hs_cluster_node_domain(c, node);
			if (!t->dnicn[d])
				t->dnic0[d] = t->nic0[node];
			t->dnicn[d] += t->nicn[node];
		}
		if (build_fabric(t, c, err)) {
			hs_topo_free(t);
			return NULL;
		}
	}
	csr(t->nv, t->nl, t->l, 0, &t->out_off, &t->out);
	csr(t->nv, t->nl, t->l, 1, &t->in_off, &t->in);
	if (G > 1 && check_connected(t, err)) {
		hs_topo_free(t);
		return NULL;
	}
	return t;
}

void hs_topo_free(hs_topo *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->l);
	free(t->out_off);
	free(t->out);
	free(t->in_off);
	free(t->in);
	free(t->nic0);
	free(t->nicn);
	free(t->upsw);
	free(t->dnic0);
	free(t->dnicn);
	free(t);
}

const hs_cluster *hs_topo_cluster(const hs_topo *t) { return t->c; }
int hs_topo_nvertices(const hs_topo *t) { return t->nv; }
int hs_topo_nlinks(const hs_topo *t) { return t->nl; }
const hs_link *hs_topo_link(const hs_topo *t, int l) { return &t->l[l]; }
enum hs_vkind hs_topo_vkind(const hs_topo *t, int v) { return (enum hs_vkind)t->v[v].kind; }
int hs_topo_vnode(const hs_topo *t, int v) { return t->v[v].node; }
int hs_topo_vdomain(const hs_topo *t, int v) { return t->v[v].dom; }
int hs_topo_domain_nnics(const hs_topo *t, int dom) { return t->has_nics ? t->dnicn[dom] : 0; }
int hs_topo_domain_nic(const hs_topo *t, int dom, int i) { return t->dnic0[dom] + i; }
int hs_topo_has_nics(const hs_topo *t) { return t->has_nics; }
int hs_topo_upswitch(const hs_topo *t, int node) { return t->upsw[node]; }
int hs_topo_top_switch(const hs_topo *t) { return t->top; }

int hs_topo_nnics(const hs_topo *t, int node) { return t->has_nics ? t->nicn[node] : 0; }

int hs_topo_nic(const hs_topo *t, int node, int i) { return t->nic0[node] + i; }

int hs_topo_nic_owner(const hs_topo *t, int nicv)
{
	/* the NIC's first link goes to its owner (build_node adds owner <-> NIC right after the NIC) */
	for (int i = t->in_off[nicv]; i < t->in_off[nicv + 1]; i++) {
		int u = t->l[t->in[i]].from;
		if (t->v[u].kind == HS_V_GPU)
			return u;
	}
	return -1;
}

void hs_topo_out(const hs_topo *t, int v, int *first, int *count)
{
	*first = t->out_off[v];
	*count = t->out_off[v + 1] - t->out_off[v];
}
int hs_topo_out_link(const hs_topo *t, int i) { return t->out[i]; }
void hs_topo_in(const hs_topo *t, int v, int *first, int *count)
{
	*first = t->in_off[v];
	*count = t->in_off[v + 1] - t->in_off[v];
}
int hs_topo_in_link(const hs_topo *t, int i) { return t->in[i]; }

const char *hs_topo_vname(const hs_topo *t, int v, char *buf, int len)
{
	const vinfo *x = &t->v[v];
	const hs_fabric_spec *f = hs_cluster_fabric(t->c);
	switch (x->kind) {
	case HS_V_GPU: snprintf(buf, (size_t)len, "gpu%d", v); break;
	case HS_V_NIC: snprintf(buf, (size_t)len, "node%d.nic%d", x->node, x->idx); break;
	case HS_V_HOST: snprintf(buf, (size_t)len, "node%d.host", x->node); break;
	default:
		if (!t->has_nics && x->idx < f->nswitches)
			snprintf(buf, (size_t)len, "%s", f->switch_names[x->idx]);
		else if (x->node >= 0)
			snprintf(buf, (size_t)len, "node%d.switch%d", x->node, x->idx);
		else
			snprintf(buf, (size_t)len, "switch%d", x->idx);
	}
	return buf;
}
