/* Route-aware time factors for the closed forms (sim/coll/coll_impl.h): how long a set of concurrent inter-node
 * transfers takes when they share the links of the routed topology.
 *
 * The closed forms give each node its NIC share. On a torus, a dragonfly, an oversubscribed Clos or between WAN
 * sites the transfers of one collective step meet on fabric links and share them. A demand here is a directed
 * node-to-node transfer with a weight (bytes per byte of the algorithm's unit). It is split into channels, one
 * per NIC the sending node's ranks use (m of them, weight w/m each), channel c leaving by NIC c and arriving
 * at NIC c (mod its count) of the other node (rail-aligned, as topology/route.c routes). Each channel is routed
 * NIC -> switch -> ... -> switch -> NIC on the shortest paths of the built topology, spread evenly over equal
 * next hops at every switch (ideal ECMP, so the answer does not depend on a hash: with one hashed path per
 * channel a full-bisection fat-tree would show collisions no adaptive fabric has). A link's load is the weight
 * crossing it (fractions where spread). With every demand of the set under way at once,
 *
 *     T = max( max over links of load / bandwidth, max over nodes of the weight it sends / its NIC share )
 *
 * seconds per byte of unit weight. On these routes no schedule finishes sooner (a link cannot drain faster),
 * and every demand sending at the constant rate w/T fits every link, so T is the makespan of the set on fixed
 * split routes: a static load count, not a simulation. What it leaves out: shortest paths only (no adaptive
 * or non-minimal routing, which would spread a hot link's load), demands that start together and end
 * together (no pipelining between an algorithm's steps, no early finishers freeing links for the rest), and
 * the NIC share on the sending side only. For a ring (one edge per node, weight 1) 1/T is the slowest edge's
 * bandwidth: each channel min(NIC share / m, link bandwidth / load) times m.
 *
 * The sets the closed forms use (hs_coll_route): the ring's edges, the double binary tree's edges up and down,
 * all-to-all's node pairs, and each halving-doubling step across nodes.
 *
 * Clos fabrics without oversubscription (fat-tree, rail-optimised, multi-plane) are not routed: a leaf's
 * uplinks carry all its NICs' bandwidth and channels spread evenly, so no link drains slower than the NICs
 * that feed it and the answer is the NIC share (tests/unit/coll/test_coll.c routes them anyway and checks this). That
 * keeps `hetsim sweep` on those fabrics from building the link graph.
 *
 * Cost: the link graph is built once per cluster (kept with it, hs_cluster_memo); per rank set one
 * breadth-first search over the fabric's switches per distinct destination switch, shared by every set, then
 * per set and destination one pass over the switches that spreads all the channels arriving there at once,
 * plus one step per channel (all-to-all: nodes^2 x NICs). The last few rank sets' answers are cached, since
 * hs_coll_time is called once per message size. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_flow.h"
#include "sim/coll/coll_impl.h"
#include "topology/route.h"
#include "topology/topo.h"

#define MEMO_SETS 8 /* rank sets remembered: a step's TP/DP/PP/EP/CP groups fit */

typedef struct rset {
	int n;
	int *ranks;
	int ok; /* 0: routes do not apply */
	hs_coll_route r;
} rset;

/* An explicit graph's rank set (hs_coll_xgraph_factors). */
typedef struct xset {
	int n;
	int *ranks;
	int ok;
	hs_coll_xroute r;
} xset;

typedef struct netmemo {
	hs_topo *t;            /* NULL when the topology does not build: callers keep the NIC share */
	int nsw;               /* fabric switches (node -1) */
	int *swi;              /* [nv]: index of a fabric switch, -1 for other vertices */
	int *out_off, *out;    /* CSR over fabric switches: links to other fabric switches */
	int *out_to;           /* [out]: the switch index a link leads to */
	double *out_bw;        /* [out]: its bytes/s */
	int *in_off, *in;      /* the same by destination */
	int *in_from;          /* [in]: the switch index a link comes from */
	int *nic_sw;           /* [nv]: for a NIC, the index of its fabric switch (-1: none) */
	int *nic_up, *nic_dn;  /* [nv]: for a NIC, its links NIC -> switch and switch -> NIC */
	pthread_mutex_t mu;    /* guards sets */
	rset sets[MEMO_SETS];
	int next;
	/* device-to-device routes, as the flow model routes them (topology/route.c, its defaults: one ECMP path,
	 * splits by bandwidth); made on first use, used under mu (its route cache grows) */
	hs_router *rt;
	xset xsets[MEMO_SETS];
	int xnext;
} netmemo;

static void memo_free(void *p)
{
	netmemo *m = p;
	hs_topo_free(m->t);
	free(m->swi);
	free(m->out_off);
	free(m->out);
	free(m->out_to);
	free(m->out_bw);
	free(m->in_off);
	free(m->in);
	free(m->in_from);
	free(m->nic_sw);
	free(m->nic_up);
	free(m->nic_dn);
	for (int i = 0; i < MEMO_SETS; i++) {
		free(m->sets[i].ranks);
		free(m->xsets[i].ranks);
	}
	hs_router_free(m->rt);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

static int fabric_switch(const hs_topo *t, int v) { return hs_topo_vkind(t, v) == HS_V_SWITCH && hs_topo_vnode(t, v) < 0; }

static netmemo *memo_build(const hs_cluster *c)
{
	netmemo *m = hs_xcalloc(1, sizeof *m);
	pthread_mutex_init(&m->mu, NULL);
	hs_err err = {0};
	m->t = hs_topo_build(c, &err);
	if (!m->t)
		return m;
	const hs_topo *t = m->t;
	int nv = hs_topo_nvertices(t), nl = hs_topo_nlinks(t);
	m->swi = hs_xmalloc((size_t)nv * sizeof *m->swi);
	m->nic_sw = hs_xmalloc((size_t)nv * sizeof *m->nic_sw);
	m->nic_up = hs_xmalloc((size_t)nv * sizeof *m->nic_up);
	m->nic_dn = hs_xmalloc((size_t)nv * sizeof *m->nic_dn);
	for (int v = 0; v < nv; v++) {
		m->swi[v] = fabric_switch(t, v) ? m->nsw++ : -1;
		m->nic_sw[v] = m->nic_up[v] = m->nic_dn[v] = -1;
	}
	m->out_off = hs_xcalloc((size_t)m->nsw + 1, sizeof *m->out_off);
	m->in_off = hs_xcalloc((size_t)m->nsw + 1, sizeof *m->in_off);
	int nss = 0;
	for (int l = 0; l < nl; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (m->swi[L->from] >= 0 && m->swi[L->to] >= 0) {
			m->out_off[m->swi[L->from] + 1]++;
			m->in_off[m->swi[L->to] + 1]++;
			nss++;
		} else if (hs_topo_vkind(t, L->from) == HS_V_NIC && m->swi[L->to] >= 0) {
			m->nic_up[L->from] = l;
			m->nic_sw[L->from] = m->swi[L->to];
		} else if (hs_topo_vkind(t, L->to) == HS_V_NIC && m->swi[L->from] >= 0)
			m->nic_dn[L->to] = l;
	}
	for (int s = 0; s < m->nsw; s++) {
		m->out_off[s + 1] += m->out_off[s];
		m->in_off[s + 1] += m->in_off[s];
	}
	m->out = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->out);
	m->in = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->in);
	int *po = hs_xmalloc((size_t)(m->nsw ? m->nsw : 1) * sizeof *po);
	int *pi = hs_xmalloc((size_t)(m->nsw ? m->nsw : 1) * sizeof *pi);
	memcpy(po, m->out_off, (size_t)m->nsw * sizeof *po);
	memcpy(pi, m->in_off, (size_t)m->nsw * sizeof *pi);
	for (int l = 0; l < nl; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (m->swi[L->from] >= 0 && m->swi[L->to] >= 0) {
			m->out[po[m->swi[L->from]]++] = l;
			m->in[pi[m->swi[L->to]]++] = l;
		}
	}
	free(po);
	free(pi);
	m->out_to = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->out_to);
	m->out_bw = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->out_bw);
	m->in_from = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->in_from);
	for (int j = 0; j < nss; j++) {
		const hs_link *L = hs_topo_link(t, m->out[j]);
		m->out_to[j] = m->swi[L->to];
		m->out_bw[j] = hs_rate_to_Bps(L->bw);
		m->in_from[j] = m->swi[hs_topo_link(t, m->in[j])->from];
	}
	return m;
}

static netmemo *memo_get(const hs_cluster *c)
{
	netmemo *m = hs_cluster_memo(c);
	return m ? m : hs_cluster_memo_set(c, memo_build(c), memo_free);
}

/* ---- the group's nodes ---- */

/* A node of the group (a scale-up domain: a node, or an NVL72 rack's trays): its ranks' NIC share A, as
 * hs_coll_grp_init counts it, over the m NICs it needs. */
typedef struct gnode {
	int node, first, k; /* cluster node, first rank index in the list, ranks on it */
	double A;
	int m, nics;
	int base; /* its NICs' first slot among the group's NICs (loads: NIC links after the fabric's) */
} gnode;

static int cmp_node(const void *a, const void *b)
{
	const gnode *x = a, *y = b;
	if (x->node != y->node)
		return (x->node > y->node) - (x->node < y->node);
	return (x->first > y->first) - (x->first < y->first);
}

static int cmp_first(const void *a, const void *b)
{
	const gnode *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* The group's nodes in order of first appearance in ranks[] (*N of them); *by_node (if not NULL) receives the
 * same sorted by cluster node, with `first` replaced by the index in the first list. */
static gnode *group_nodes(const hs_cluster *c, const hs_topo *t, const int *ranks, int n, int *N, gnode **by_node)
{
	gnode *nd = hs_xmalloc((size_t)n * sizeof *nd);
	for (int i = 0; i < n; i++)
		nd[i] = (gnode){hs_cluster_domain_of(c, ranks[i]), i, 1, 0, 0, 0, 0}; /* scale-up domains */
	qsort(nd, (size_t)n, sizeof *nd, cmp_node);
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (k && nd[k - 1].node == nd[i].node)
			nd[k - 1].k++;
		else
			nd[k++] = nd[i];
	}
	qsort(nd, (size_t)k, sizeof *nd, cmp_first);
	for (int u = 0; u < k; u++) {
		const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, ranks[nd[u].first]));
		double total = hs_cluster_domain_nic_bw(c, nd[u].node), per_gpu = total / g->domain;
		nd[u].A = nd[u].k * per_gpu < total ? nd[u].k * per_gpu : total;
		nd[u].nics = hs_topo_domain_nnics(t, nd[u].node);
		int mch = (int)ceil(nd[u].A / g->nic_bw - 1e-9);
		nd[u].m = mch < 1 ? 1 : mch > nd[u].nics ? nd[u].nics : mch;
		nd[u].base = u ? nd[u - 1].base + nd[u - 1].nics : 0;
	}
	if (by_node) {
		*by_node = hs_xmalloc((size_t)(k ? k : 1) * sizeof **by_node);
		for (int u = 0; u < k; u++) {
			(*by_node)[u] = nd[u];
			(*by_node)[u].first = u;
		}
		qsort(*by_node, (size_t)k, sizeof **by_node, cmp_node);
	}
	*N = k;
	return nd;
}

/* Index in the group of cluster node `node`, -1 if none of the ranks is on it. */
static int node_index(const gnode *by_node, int N, int node)
{
	int lo = 0, hi = N - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (by_node[mid].node == node)
			return by_node[mid].first;
		if (by_node[mid].node < node)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* ---- routing a set of demands ---- */

typedef struct dem {
	int a, b; /* group node indices */
	double w;
} dem;

/* A set of demands run at once: the listed ones, or (all_pairs) every ordered pair u != v with weight k_u k_v,
 * enumerated as needed rather than stored (nodes^2 of them). */
typedef struct dset {
	const dem *d;
	int n;
	int all_pairs;
} dset;

typedef struct scratch {
	int *dist;  /* [nsw] hops to the current destination switch, -1: unreachable */
	int *queue; /* [nsw] the search's order: nondecreasing distance, queue[0] the destination */
	int nq;
	double *amt; /* [nsw] weight waiting at a switch */
} scratch;

static void bfs_to(const netmemo *m, scratch *s, int dst)
{
	for (int i = 0; i < m->nsw; i++)
		s->dist[i] = -1;
	int h = 0, q = 0;
	s->dist[dst] = 0;
	s->queue[q++] = dst;
	while (h < q) {
		int u = s->queue[h++];
		for (int i = m->in_off[u]; i < m->in_off[u + 1]; i++) {
			int w = m->in_from[i];
			if (s->dist[w] < 0) {
				s->dist[w] = s->dist[u] + 1;
				s->queue[q++] = w;
			}
		}
	}
	s->nq = q;
}

/* Move every weight waiting at a switch to the destination of the current search, evenly over every next hop
 * one step closer, adding what crosses each switch-to-switch link to load[] (indexed as m->out). Farthest
 * switches first (the search's order reversed), so a switch has received everything from farther away
 * before it passes it on. */
static void spread(const netmemo *m, scratch *s, double *load)
{
	for (int i = s->nq - 1; i > 0; i--) {
		int u = s->queue[i], k = 0;
		if (s->amt[u] == 0)
			continue;
		for (int j = m->out_off[u]; j < m->out_off[u + 1]; j++)
			k += s->dist[m->out_to[j]] == s->dist[u] - 1;
		double f = s->amt[u] / k;
		s->amt[u] = 0;
		for (int j = m->out_off[u]; j < m->out_off[u + 1]; j++) {
			int w = m->out_to[j];
			if (s->dist[w] != s->dist[u] - 1)
				continue;
			s->amt[w] += f;
			load[j] += f;
		}
	}
	s->amt[s->queue[0]] = 0;
}

/* A destination NIC: NIC j of group node v, on fabric switch sw. */
typedef struct slot {
	int sw, v, j;
} slot;

static int cmp_slot(const void *a, const void *b)
{
	const slot *x = a, *y = b;
	if (x->sw != y->sw)
		return (x->sw > y->sw) - (x->sw < y->sw);
	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->j > y->j) - (x->j < y->j);
}

/* Loads of one set: the fabric's switch-to-switch links as m->out orders them, then for each NIC of the group
 * its link up to the switch and its link down from it. */
static size_t nic_up_slot(const netmemo *m, const gnode *g, int c)
{
	return (size_t)m->out_off[m->nsw] + 2 * (size_t)(g->base + c);
}

/* One demand u -> v of weight w, arriving at NIC j of v: its channels c = j, j + nics_v, ... below m_u wait at
 * their NICs' switches for spread(), and load the NIC links. -1 when a NIC has no fabric switch or the
 * destination switch (s->dist) cannot be reached from it. */
static int inject(const netmemo *m, scratch *s, double *load, const gnode *nd, int u, int v, int j, double w)
{
	double f = w / nd[u].m;
	for (int c = j; c < nd[u].m; c += nd[v].nics) {
		int a = hs_topo_domain_nic(m->t, nd[u].node, c);
		if (m->nic_sw[a] < 0 || s->dist[m->nic_sw[a]] < 0)
			return -1;
		s->amt[m->nic_sw[a]] += f;
		load[nic_up_slot(m, &nd[u], c)] += f;
		load[nic_up_slot(m, &nd[v], j) + 1] += f;
	}
	return 0;
}

/* T of each of sets[0..nsets-1] (sim/coll/coll_impl.h) over the group nodes nd[0..N-1], all sets routed together
 * (one search per destination switch serves them all); -1 when some NIC is not joined to the fabric. */
static int route_sets(const netmemo *m, const gnode *nd, int N, const dset *sets, int nsets, double *T)
{
	const hs_topo *t = m->t;
	int ns = m->nsw ? m->nsw : 1, bad = 0;
	for (int u = 0; u < N; u++)
		bad |= nd[u].nics == 0;
	if (bad)
		return -1;
	int ntot = 0;
	for (int u = 0; u < N; u++)
		ntot += nd[u].k;
	/* the weight each node sends (NIC share bound), and the listed demands by (destination, set) */
	double *W = hs_xcalloc((size_t)N * nsets, sizeof *W);
	int *off = hs_xcalloc((size_t)N * nsets + 1, sizeof *off);
	int *maxm = hs_xcalloc((size_t)N, sizeof *maxm); /* channels arriving at a node: max m of its senders */
	int ne = 0;
	for (int si = 0; si < nsets; si++) {
		if (sets[si].all_pairs) {
			/* node v hears from every other node: the largest m, or the second largest at its holder */
			int top = 0, m2 = 0;
			for (int u = 1; u < N; u++)
				if (nd[u].m > nd[top].m)
					top = u;
			for (int u = 0; u < N; u++)
				if (u != top && nd[u].m > m2)
					m2 = nd[u].m;
			for (int u = 0; u < N; u++) {
				W[(size_t)si * N + u] += (double)nd[u].k * (ntot - nd[u].k);
				int mu = u == top ? m2 : nd[top].m;
				if (mu > maxm[u])
					maxm[u] = mu;
			}
			continue;
		}
		for (int i = 0; i < sets[si].n; i++) {
			const dem *d = &sets[si].d[i];
			if (d->a == d->b)
				continue;
			W[(size_t)si * N + d->a] += d->w;
			off[(size_t)d->b * nsets + si + 1]++;
			if (nd[d->a].m > maxm[d->b])
				maxm[d->b] = nd[d->a].m;
			ne++;
		}
	}
	for (int i = 0; i < N * nsets; i++)
		off[i + 1] += off[i];
	dem *ent = hs_xmalloc((size_t)(ne ? ne : 1) * sizeof *ent);
	int *fill = hs_xmalloc((size_t)N * nsets * sizeof *fill);
	memcpy(fill, off, (size_t)N * nsets * sizeof *fill);
	for (int si = 0; si < nsets; si++)
		for (int i = 0; !sets[si].all_pairs && i < sets[si].n; i++) {
			const dem *d = &sets[si].d[i];
			if (d->a != d->b)
				ent[fill[(size_t)d->b * nsets + si]++] = *d;
		}
	free(fill);
	for (int si = 0; si < nsets; si++) {
		T[si] = 0;
		for (int u = 0; u < N; u++) {
			double x = W[(size_t)si * N + u] / nd[u].A;
			if (x > T[si])
				T[si] = x;
		}
	}
	/* destination NICs that channels arrive at, grouped by their switch */
	slot *sl = NULL;
	size_t slcap = 0;
	int nsl = 0;
	for (int v = 0; v < N && !bad; v++)
		for (int j = 0; j < nd[v].nics && j < maxm[v]; j++) {
			int b = hs_topo_domain_nic(t, nd[v].node, j);
			bad |= m->nic_sw[b] < 0 || m->nic_dn[b] < 0;
			hs_xgrow(&sl, &slcap, (size_t)nsl + 1, sizeof *sl);
			sl[nsl++] = (slot){bad ? -1 : m->nic_sw[b], v, j};
		}
	size_t nl = nic_up_slot(m, &nd[N - 1], nd[N - 1].nics);
	double *load = hs_xcalloc(nl * nsets, sizeof *load);
	scratch s = {0};
	s.dist = hs_xmalloc((size_t)ns * sizeof *s.dist);
	s.queue = hs_xmalloc((size_t)ns * sizeof *s.queue);
	s.amt = hs_xcalloc((size_t)ns, sizeof *s.amt);
	if (!bad && nsl > 0) /* none when no demand leaves a node */
		qsort(sl, (size_t)nsl, sizeof *sl, cmp_slot);
	for (int i0 = 0, i1; i0 < nsl && !bad; i0 = i1) {
		for (i1 = i0; i1 < nsl && sl[i1].sw == sl[i0].sw; i1++)
			;
		bfs_to(m, &s, sl[i0].sw);
		for (int si = 0; si < nsets && !bad; si++) {
			double *ld = load + si * nl;
			int any = 0;
			for (int q = i0; q < i1 && !bad; q++) {
				int v = sl[q].v, j = sl[q].j;
				if (sets[si].all_pairs) {
					for (int u = 0; u < N && !bad; u++)
						if (u != v && j < nd[u].m) {
							bad |= inject(m, &s, ld, nd, u, v, j, (double)nd[u].k * nd[v].k);
							any = 1;
						}
					continue;
				}
				for (int e = off[(size_t)v * nsets + si]; e < off[(size_t)v * nsets + si + 1] && !bad; e++)
					if (j < nd[ent[e].a].m) {
						bad |= inject(m, &s, ld, nd, ent[e].a, v, j, ent[e].w);
						any = 1;
					}
			}
			if (any && !bad)
				spread(m, &s, ld);
		}
	}
	for (int si = 0; si < nsets && !bad; si++) {
		const double *ld = load + si * nl;
		for (int j = 0; j < m->out_off[m->nsw]; j++)
			if (ld[j] / m->out_bw[j] > T[si])
				T[si] = ld[j] / m->out_bw[j];
		for (int u = 0; u < N; u++)
			for (int c = 0; c < nd[u].nics; c++) {
				size_t x = nic_up_slot(m, &nd[u], c);
				if (ld[x] == 0 && ld[x + 1] == 0)
					continue;
				/* a loaded slot's link exists: inject() and the destination slots checked it */
				int a = hs_topo_domain_nic(t, nd[u].node, c);
				double up = ld[x] > 0 ? ld[x] / hs_rate_to_Bps(hs_topo_link(t, m->nic_up[a])->bw) : 0;
				double dn = ld[x + 1] > 0 ? ld[x + 1] / hs_rate_to_Bps(hs_topo_link(t, m->nic_dn[a])->bw) : 0;
				if (up > T[si])
					T[si] = up;
				if (dn > T[si])
					T[si] = dn;
			}
	}
	free(s.dist);
	free(s.queue);
	free(s.amt);
	free(load);
	free(sl);
	free(ent);
	free(maxm);
	free(off);
	free(W);
	return bad ? -1 : 0;
}

/* ---- the closed forms' sets ---- */

static void push(dem **d, size_t *cap, int *n, int a, int b, double w)
{
	hs_xgrow(d, cap, (size_t)*n + 1, sizeof **d);
	(*d)[(*n)++] = (dem){a, b, w};
}

/* hs_coll_route for ranks[0..n-1]; -1 when routes do not apply. */
static int compute(const hs_cluster *c, const netmemo *m, const int *ranks, int n, hs_coll_route *r)
{
	int N;
	gnode *by_node;
	gnode *nd = group_nodes(c, m->t, ranks, n, &N, &by_node);
	memset(r, 0, sizeof *r);
	if (N < 2) {
		free(nd);
		free(by_node);
		return -1;
	}
	int ppn = 0;
	for (int u = 0; u < N; u++)
		ppn = nd[u].k > ppn ? nd[u].k : ppn;
	int pow2 = 1;
	while (pow2 * 2 <= n)
		pow2 *= 2;
	int *gi = hs_xmalloc((size_t)n * sizeof *gi); /* group node of each rank */
	for (int i = 0; i < n; i++)
		gi[i] = node_index(by_node, N, hs_cluster_domain_of(c, ranks[i]));
	/* sets: ring, tree, all-to-all, then the halving-doubling steps across nodes */
	enum { RING, TREE, A2A, HD };
	dset sets[HD + HS_COLL_HD_STEPS];
	dem *d[HD + HS_COLL_HD_STEPS] = {0};
	size_t cap[HD + HS_COLL_HD_STEPS] = {0};
	int cnt[HD + HS_COLL_HD_STEPS] = {0};
	for (int e = 0; e < N; e++)
		push(&d[RING], &cap[RING], &cnt[RING], e, (e + 1) % N, 1);
	for (int tr = 0; tr < 2; tr++)
		for (int x = 0; x < N; x++) {
			int p = hs_coll_dtree_parent(x, N, tr);
			if (p >= 0) {
				push(&d[TREE], &cap[TREE], &cnt[TREE], x, p, 0.5);
				push(&d[TREE], &cap[TREE], &cnt[TREE], p, x, 0.5);
			}
		}
	int hd_step[HS_COLL_HD_STEPS], nhd = 0;
	for (int i = 0; i < HS_COLL_HD_STEPS && (1 << i) < pow2; i++) {
		int dd = 1 << i;
		if (dd < ppn)
			continue; /* inside the node in the closed form */
		int k = HD + nhd;
		for (int j = 0; j < pow2; j++)
			push(&d[k], &cap[k], &cnt[k], gi[j], gi[j ^ dd], 1);
		hd_step[nhd++] = i;
	}
	int nsets = HD + nhd;
	for (int k = 0; k < nsets; k++)
		sets[k] = (dset){d[k], cnt[k], k == A2A};
	double T[HD + HS_COLL_HD_STEPS];
	int rc = route_sets(m, nd, N, sets, nsets, T);
	if (rc == 0) {
		r->ring = T[RING];
		r->tree = T[TREE];
		r->a2a = T[A2A];
		for (int k = 0; k < nhd; k++)
			r->hd[hd_step[k]] = T[HD + k];
	}
	for (int k = 0; k < nsets; k++)
		free(d[k]);
	free(gi);
	free(nd);
	free(by_node);
	return rc;
}

/* Clos fabrics at full bisection: the NIC share holds (the header's argument), no routing needed. */
static int full_bisection(const hs_fabric_spec *f) { return f->oversubscription <= 1 && f->props->clos; }

static int routable(const hs_fabric_spec *f) { return f->props->routed; }

int hs_coll_route_factors(const hs_cluster *c, const int *ranks, int n, int always, hs_coll_route *r)
{
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	if (n < 2 || !routable(f) || (!always && full_bisection(f)))
		return -1;
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MEMO_SETS; i++)
		if (m->sets[i].n == n && !memcmp(m->sets[i].ranks, ranks, (size_t)n * sizeof *ranks)) {
			int ok = m->sets[i].ok;
			*r = m->sets[i].r;
			pthread_mutex_unlock(&m->mu);
			return ok ? 0 : -1;
		}
	pthread_mutex_unlock(&m->mu);
	int ok = compute(c, m, ranks, n, r) == 0;
	pthread_mutex_lock(&m->mu);
	rset *s = &m->sets[m->next];
	m->next = (m->next + 1) % MEMO_SETS;
	s->ranks = hs_xrealloc(s->ranks, (size_t)n * sizeof *s->ranks);
	memcpy(s->ranks, ranks, (size_t)n * sizeof *ranks);
	s->n = n;
	s->ok = ok;
	s->r = *r;
	pthread_mutex_unlock(&m->mu);
	return ok ? 0 : -1;
}

double hs_coll_ring_net_bw(const hs_cluster *c, const int *ranks, int n, int always)
{
	hs_coll_route r;
	if (hs_coll_route_factors(c, ranks, n, always, &r) || !(r.ring > 0))
		return -1;
	return 1 / r.ring;
}

double hs_coll_route_time(const hs_cluster *c, const int *ranks, int n, const hs_coll_demand *d, int nd)
{
	if (n < 1 || !routable(hs_cluster_fabric(c)))
		return -1;
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	int N;
	gnode *by_node;
	gnode *g = group_nodes(c, m->t, ranks, n, &N, &by_node);
	dem *dd = hs_xmalloc((size_t)(nd ? nd : 1) * sizeof *dd);
	int bad = 0;
	for (int i = 0; i < nd && !bad; i++) {
		dd[i] = (dem){node_index(by_node, N, d[i].src), node_index(by_node, N, d[i].dst), d[i].w};
		bad = dd[i].a < 0 || dd[i].b < 0;
	}
	double T = -1;
	dset set = {dd, nd, 0};
	if (!bad && route_sets(m, g, N, &set, 1, &T))
		T = -1;
	free(dd);
	free(g);
	free(by_node);
	return T;
}

/* ---- explicit graphs and per-link bytes: device-to-device routes ---- */

/* The memo's router, made on first use; the caller holds m->mu. */
static hs_router *router(netmemo *m)
{
	if (!m->rt)
		m->rt = hs_router_create(m->t);
	return m->rt;
}

/* The rail a transfer from device a leaves by, as the flow model picks it (sim/net/net.c, hs_net_home_rail):
 * the device's own NIC where every device has one, else every rail (-1, split). The ECMP hash of an explicit
 * graph's paths takes it too. */
static int home_rail(const hs_cluster *c, int a)
{
	const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, a));
	return g->nics_per_node == g->gpus_per_node ? hs_cluster_local_rank(c, a) : -1;
}

#define RAIL_HOME (-2) /* route_add: the sender's home rail */

/* The route a -> b (vertices) on `rail` (RAIL_HOME: a's home rail; -1 split over every rail), NULL if none.
 * The caller holds m->mu. */
static const hs_route *route_on(netmemo *m, int a, int b, int rail)
{
	hs_err e = {0};
	if (rail == RAIL_HOME)
		rail = a < hs_cluster_ngpus(hs_topo_cluster(m->t)) ? home_rail(hs_topo_cluster(m->t), a) : -1;
	return hs_route_get(router(m), a, b, rail, &e);
}

/* Add w x each link's share of the route a -> b (vertices) on `rail` (route_on) to load[] (per link of the
 * topology), and its latency (seconds) to *lat as a maximum; -1 when there is no route. The caller holds m->mu. */
static int route_add_on(netmemo *m, int a, int b, int rail, double w, double *load, double *lat)
{
	if (a == b || w == 0)
		return 0;
	const hs_route *r = route_on(m, a, b, rail);
	if (!r)
		return -1;
	for (int i = 0; i < r->nl; i++)
		load[r->link[i]] += w * r->coef[i];
	if (lat && hs_time_to_s(r->lat) > *lat)
		*lat = hs_time_to_s(r->lat);
	return 0;
}

static int route_add(netmemo *m, int a, int b, double w, double *load, double *lat)
{
	return route_add_on(m, a, b, RAIL_HOME, w, load, lat);
}

/* max over links of load / bandwidth (seconds per byte of unit weight), clearing load[] for the next set. */
static double load_T(const netmemo *m, double *load)
{
	double T = 0;
	for (int l = 0; l < hs_topo_nlinks(m->t); l++) {
		if (load[l] > 0) {
			double x = load[l] / hs_rate_to_Bps(hs_topo_link(m->t, l)->bw);
			T = x > T ? x : T;
		}
		load[l] = 0;
	}
	return T;
}

/* Whether some scale-up domain holds two of ranks[0..n-1]. */
static int shares_domain(const hs_cluster *c, const int *ranks, int n)
{
	int nd = hs_cluster_ndomains(c), rc = 0;
	char *seen = hs_xcalloc((size_t)nd, 1);
	for (int i = 0; i < n && !rc; i++) {
		int d = hs_cluster_domain_of(c, ranks[i]);
		rc = seen[d];
		seen[d] = 1;
	}
	free(seen);
	return rc;
}

/* ranks[0..n-1] in the flow model's ring order (sim/net/netcoll.c, ring_order on: by node group, scale-up
 * domain, device), into out[]. */
static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static void ring_order(const hs_cluster *c, const int *ranks, int n, int *out)
{
	uint64_t *k = hs_xmalloc((size_t)n * sizeof *k);
	for (int i = 0; i < n; i++)
		k[i] = (uint64_t)hs_cluster_group_of(c, ranks[i]) << 48 | (uint64_t)hs_cluster_domain_of(c, ranks[i]) << 24 |
		       (uint64_t)ranks[i];
	qsort(k, (size_t)n, sizeof *k, cmp_u64);
	for (int i = 0; i < n; i++)
		out[i] = (int)(k[i] & 0xffffff);
	free(k);
}

/* hs_coll_xroute of ranks[0..n-1] on an explicit graph; -1 when some pair has no route. Holds m->mu. */
static int xcompute(const hs_cluster *c, netmemo *m, const int *ranks, int n, hs_coll_xroute *r)
{
	memset(r, 0, sizeof *r);
	double *load = hs_xcalloc((size_t)hs_topo_nlinks(m->t), sizeof *load);
	int bad = 0;
	double lat = 0, junk = 0;
	/* the ring: rank i to rank i + 1, in the group's order, as the flow model's ring sends */
	for (int i = 0; i < n && !bad; i++)
		bad |= route_add(m, ranks[i], ranks[(i + 1) % n], 1, load, &lat);
	r->ring = load_T(m, load);
	r->lat = lat;
	/* the double binary tree over the ranks (each its own endpoint), every edge both ways, weight 1/2 */
	r->tree_routed = !shares_domain(c, ranks, n);
	for (int tr = 0; tr < 2 && !bad && r->tree_routed; tr++)
		for (int x = 0; x < n && !bad; x++) {
			int p = hs_coll_dtree_parent(x, n, tr);
			if (p >= 0)
				bad |= route_add(m, ranks[x], ranks[p], 0.5, load, &junk) ||
				       route_add(m, ranks[p], ranks[x], 0.5, load, &junk);
		}
	r->tree = load_T(m, load);
	/* every ordered pair, weight 1 */
	for (int i = 0; i < n && !bad; i++)
		for (int j = 0; j < n && !bad; j++)
			bad |= route_add(m, ranks[i], ranks[j], 1, load, &junk);
	r->a2a = load_T(m, load);
	/* halving-doubling: the step at distance d pairs rank j with j ^ d among the first power of two */
	int pow2 = 1;
	while (pow2 * 2 <= n)
		pow2 *= 2;
	for (int i = 0; i < HS_COLL_HD_STEPS && (1 << i) < pow2 && !bad; i++) {
		for (int j = 0; j < pow2 && !bad; j++)
			bad |= route_add(m, ranks[j], ranks[j ^ (1 << i)], 1, load, &junk);
		r->hd[i] = load_T(m, load);
	}
	free(load);
	return bad ? -1 : 0;
}

int hs_coll_xgraph_factors(const hs_cluster *c, const int *ranks, int n, hs_coll_xroute *r)
{
	if (n < 2 || hs_cluster_fabric(c)->props->layout != HS_OUT_EXPLICIT)
		return -1;
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MEMO_SETS; i++)
		if (m->xsets[i].n == n && !memcmp(m->xsets[i].ranks, ranks, (size_t)n * sizeof *ranks)) {
			int ok = m->xsets[i].ok;
			*r = m->xsets[i].r;
			pthread_mutex_unlock(&m->mu);
			return ok ? 0 : -1;
		}
	/* the flow model runs the group in its ring order */
	int *rk = hs_xmalloc((size_t)n * sizeof *rk);
	ring_order(c, ranks, n, rk);
	int ok = xcompute(c, m, rk, n, r) == 0;
	free(rk);
	xset *s = &m->xsets[m->xnext];
	m->xnext = (m->xnext + 1) % MEMO_SETS;
	s->ranks = hs_xrealloc(s->ranks, (size_t)n * sizeof *s->ranks);
	memcpy(s->ranks, ranks, (size_t)n * sizeof *ranks);
	s->n = n;
	s->ok = ok;
	s->r = *r;
	pthread_mutex_unlock(&m->mu);
	return ok ? 0 : -1;
}

const hs_topo *hs_coll_link_topo(const hs_cluster *c)
{
	return memo_get(c)->t;
}

/* The transfers of `op` with algorithm `a` over ranks[0..n-1] of S bytes (nccl-tests' sizes, sim/coll/coll.h), as
 * the flow model's step-by-step programs send them (sim/net/netcoll_*.c): emit(va, vb, bytes) per transfer
 * between vertices of the link graph (devices, and the scale-up switch for NVLS), the bytes summed over the
 * whole operation. -1, before emitting anything, for an algorithm whose transfers are not listed here. */
typedef int (*emit_fn)(void *ctx, int va, int vb, int rail, double bytes);

/* NVLS (sim/net/netcoll_nvls.c): the group by scale-up domain (in order of first appearance), equal ranks per
 * domain, every domain with a scale-up switch; *byn[q * ppn + l] is the index of domain q's l-th rank. */
static int nvls_layout(const hs_cluster *c, const hs_topo *t, const int *ranks, int n, int *N, int *ppn, int **byn)
{
	int *dom = hs_xmalloc((size_t)n * sizeof *dom), *cnt = hs_xcalloc((size_t)n, sizeof *cnt);
	int *nid = hs_xmalloc((size_t)n * sizeof *nid), k = 0, ok = 1;
	for (int i = 0; i < n; i++) {
		int d = hs_cluster_domain_of(c, ranks[i]), q = 0;
		while (q < k && nid[q] != d)
			q++;
		if (q == k)
			nid[k++] = d;
		dom[i] = q;
		cnt[q]++;
		ok &= hs_topo_upswitch(t, hs_cluster_node_of(c, ranks[i])) >= 0;
	}
	for (int q = 0; q < k; q++)
		ok &= cnt[q] == cnt[0];
	*N = k;
	*ppn = cnt[0];
	*byn = NULL;
	if (ok && cnt[0] > 1) {
		*byn = hs_xmalloc((size_t)n * sizeof **byn);
		memset(cnt, 0, (size_t)n * sizeof *cnt);
		for (int i = 0; i < n; i++)
			(*byn)[dom[i] * *ppn + cnt[dom[i]]++] = i;
	}
	free(dom);
	free(cnt);
	free(nid);
	return *byn ? 0 : -1;
}

static int transfers(const hs_cluster *c, netmemo *m, const hs_coll_channels *ch, enum hs_coll_op op,
		     enum hs_coll_algo a, const int *ranks, int n, double S, emit_fn emit, void *ctx)
{
	int rc = 0;
	switch (a) {
	case HS_ALGO_RING: {
		/* a chain 0 -> 1 -> ... -> n-1 (broadcast, reduce), S on each edge; or the ring, 2(n-1) (all-reduce)
		 * or n-1 steps of S/n to the successor. Over ch's channels as netcoll_ring.c runs them: channel c
		 * on rail ch->rails[c] with a share of the bytes proportional to its ring's (chain's) slowest route,
		 * one channel on the sender's home rail, or on every rail where ch->spread */
		int chain = op == HS_COLL_BROADCAST || op == HS_COLL_REDUCE;
		if (!chain && op != HS_COLL_ALL_REDUCE && op != HS_COLL_ALL_GATHER && op != HS_COLL_REDUCE_SCATTER)
			return -1;
		double per = chain ? S : (op == HS_COLL_ALL_REDUCE ? 2.0 : 1.0) * (n - 1) * S / n;
		int C = ch && ch->n > 1 ? ch->n : 1, edges = chain ? n - 1 : n;
		double w[HS_COLL_MAX_CHANNELS], sum = 0;
		/* channel k's ring enters each whole node at its NIC's device (hs_coll_ring_channel_order) */
		int *ord = hs_xmalloc((size_t)C * n * sizeof *ord);
		for (int k = 0; k < C; k++)
			hs_coll_ring_channel_order(c, ranks, n, C > 1 && !chain ? ch->rails[k] : -1, ord + (size_t)k * n);
		for (int k = 0; k < C; k++) {
			const int *o = ord + (size_t)k * n;
			w[k] = 1;
			if (C > 1 && m) {
				double b = 1e300;
				for (int i = 0; i < edges; i++) {
					const hs_route *r = route_on(m, o[i], o[(i + 1) % n], ch->rails[k]);
					if (r && r->bw < b)
						b = r->bw;
				}
				w[k] = b;
			}
			sum += w[k];
		}
		for (int k = 0; k < C && !rc; k++) {
			int rail = C > 1 ? ch->rails[k] : ch && ch->spread ? -1 : RAIL_HOME;
			const int *o = ord + (size_t)k * n;
			for (int i = 0; i < edges && !rc; i++)
				rc = emit(ctx, o[i], o[(i + 1) % n], rail, per * w[k] / sum);
		}
		free(ord);
		return rc;
	}
	case HS_ALGO_DIRECT:
		if (op == HS_COLL_SENDRECV) { /* sendrecv_perf: every rank S to the next */
			for (int i = 0; i < n && !rc; i++)
				rc = emit(ctx, ranks[i], ranks[(i + 1) % n], RAIL_HOME, S);
			return rc;
		}
		if (op == HS_COLL_BROADCAST || op == HS_COLL_REDUCE)
			return -1;
		for (int i = 0; i < n && !rc; i++) /* a piece of S/n to every other rank (twice for all-reduce) */
			for (int j = 0; j < n && !rc; j++)
				if (i != j)
					rc = emit(ctx, ranks[i], ranks[j], RAIL_HOME, (op == HS_COLL_ALL_REDUCE ? 2.0 : 1.0) * S / n);
		return rc;
	case HS_ALGO_TREE:
		/* with one rank per domain every rank is a tree node (no chains): each tree carries S/2 once up
		 * and once down every edge */
		if (op != HS_COLL_ALL_REDUCE || shares_domain(c, ranks, n))
			return -1;
		for (int tr = 0; tr < 2 && !rc; tr++)
			for (int x = 0; x < n && !rc; x++) {
				int p = hs_coll_dtree_parent(x, n, tr);
				if (p >= 0)
					rc = emit(ctx, ranks[x], ranks[p], RAIL_HOME, S / 2) || emit(ctx, ranks[p], ranks[x], RAIL_HOME, S / 2);
			}
		return rc;
	case HS_ALGO_HALVING_DOUBLING: {
		/* a power of two only (the fold of extra ranks is left out): step at distance d exchanges S/2^k
		 * with j ^ d, once (all-gather, reduce-scatter) or twice (all-reduce: halving, then doubling) */
		if ((n & (n - 1)) || !(op == HS_COLL_ALL_REDUCE || op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER))
			return -1;
		int k = 1;
		for (int d = 1; d < n && !rc; d *= 2, k++)
			for (int j = 0; j < n && !rc; j++)
				rc = emit(ctx, ranks[j], ranks[j ^ d], RAIL_HOME, (op == HS_COLL_ALL_REDUCE ? 2.0 : 1.0) * S / ldexp(1.0, k));
		return rc;
	}
	case HS_ALGO_NVLS:
	case HS_ALGO_NVLS_TREE: {
		/* all-reduce through each domain's switch: a GPU sends S (reduce) + S/p (multicast store) up and
		 * receives S/p + S down, each at 1/e of its bytes (NVLS's efficiency, the lowest of the group's
		 * devices); across domains local index l's S/p all-reduced in a ring over the domains. Groups the
		 * flow model runs as a ring (unequal domains, no switch) are the ring here too. */
		int N, ppn, *byn;
		if (op != HS_COLL_ALL_REDUCE)
			return -1;
		if (nvls_layout(c, m->t, ranks, n, &N, &ppn, &byn))
			return transfers(c, m, NULL, op, HS_ALGO_RING, ranks, n, S, emit, ctx);
		double e = 1;
		for (int i = 0; i < n; i++) {
			double x = hs_coll_nvls_efficiency(hs_cluster_device(c, ranks[i]));
			e = x < e ? x : e;
		}
		for (int i = 0; i < n && !rc; i++) {
			int sw = hs_topo_upswitch(m->t, hs_cluster_node_of(c, ranks[i]));
			rc = emit(ctx, ranks[i], sw, RAIL_HOME, (S + S / ppn) / e) || emit(ctx, sw, ranks[i], RAIL_HOME, (S / ppn + S) / e);
		}
		int *idx = hs_xmalloc((size_t)N * sizeof *idx);
		for (int l = 0; l < ppn && N > 1 && !rc; l++) {
			for (int q = 0; q < N; q++)
				idx[q] = ranks[byn[q * ppn + l]];
			rc = transfers(c, m, NULL, op, HS_ALGO_RING, idx, N, S / ppn, emit, ctx);
		}
		free(idx);
		free(byn);
		return rc;
	}
	default: return -1;
	}
}

struct lb_ctx {
	netmemo *m;
	double *load;
	double scale;
};

static int lb_emit(void *p, int va, int vb, int rail, double bytes)
{
	struct lb_ctx *x = p;
	return route_add_on(x->m, va, vb, rail, bytes * x->scale, x->load, NULL);
}

int hs_coll_link_bytes(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int n,
		       double bytes, double scale, const hs_coll_channels *ch, double *load)
{
	if (n < 2 || bytes <= 0)
		return 0;
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	enum hs_coll_algo a = hs_coll_resolve_algo(c, op, algo, ranks, n, bytes);
	int *rk = hs_xmalloc((size_t)n * sizeof *rk);
	if (op != HS_COLL_SENDRECV && op != HS_COLL_BROADCAST && op != HS_COLL_REDUCE)
		ring_order(c, ranks, n, rk);
	else
		memcpy(rk, ranks, (size_t)n * sizeof *rk);
	pthread_mutex_lock(&m->mu);
	struct lb_ctx x = {m, load, scale};
	int rc = transfers(c, m, ch, op, a, rk, n, bytes, lb_emit, &x);
	pthread_mutex_unlock(&m->mu);
	free(rk);
	return rc;
}

int hs_coll_link_bytes_send(const hs_cluster *c, int src, int dst, double bytes, double scale, double *load)
{
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	pthread_mutex_lock(&m->mu);
	int rc = route_add(m, src, dst, bytes * scale, load, NULL);
	pthread_mutex_unlock(&m->mu);
	return rc;
}
