/* hs_router: shortest paths with ECMP and rail alignment, cached (topology/route.h).
 *
 * Distances to a destination come from one breadth-first search over in-links; the last DIST_SLOTS
 * destinations' distance arrays are kept (a ring all-reduce asks for n destinations, each once per route,
 * and routes themselves are cached, so the search runs once per distinct route at most). A search goes only
 * as far as the source asked about needs, and resumes from where it stopped when a farther source asks: a
 * breadth-first search labels every vertex of level L before it expands the first of them, so once the source
 * is labelled every vertex nearer the destination is, which is all a walk down the distances reads. A ring's
 * hop inside a leaf then searches the leaf, not the fabric (on 65,536 GPUs the searches of the whole fabric
 * were half of a training step's time at flow fidelity). Inside a scale-up
 * domain (a node, or the trays of an NVL72 rack) the search is restricted to the domain's own vertices but its
 * NICs, so the scale-up is preferred to a detour through the fabric whenever it connects the two devices. */
#include "topology/route.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

#define DIST_SLOTS 64

typedef struct centry {
	int src, dst, rail;
	hs_route *r;
} centry;

struct hs_router {
	const hs_topo *t;
	int nv;
	int kpaths, proportional;
	/* ECMP (enum hs_ecmp, the fabric's `ecmp`): with HS_ECMP_DMODK a walk takes next hop (key mod k) among k,
	 * then divides the key by k for the next choice, the key being the destination's ordinal (dord) */
	int dmodk;
	int *dord;               /* [nv]: a NIC's place among the NICs in vertex order; other vertices their id */
	uint64_t dkey;           /* the key of the route being built */
	/* distance cache */
	int *slot_of;            /* [nv]: slot holding distances to v, -1 */
	int slot_dst[DIST_SLOTS];
	int *dist[DIST_SLOTS];
	int *lab[DIST_SLOTS];    /* the vertices labelled, in the search's order (its queue) */
	size_t labcap[DIST_SLOTS];
	int nlab[DIST_SLOTS], head[DIST_SLOTS]; /* labelled; expanded */
	int next_slot;
	/* scratch for restricted searches */
	int *ldist, *queue, *touched;
	/* route cache: open addressing */
	centry *tab;
	size_t cap, used;
	/* path assembly */
	int *buf;
	size_t bufcap;
	int nbuf;
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

hs_router *hs_router_create(const hs_topo *t)
{
	hs_router *r = hs_xcalloc(1, sizeof *r);
	r->t = t;
	r->nv = hs_topo_nvertices(t);
	r->kpaths = 1;
	r->proportional = 1;
	r->slot_of = hs_xmalloc((size_t)r->nv * sizeof *r->slot_of);
	for (int i = 0; i < r->nv; i++)
		r->slot_of[i] = -1;
	for (int i = 0; i < DIST_SLOTS; i++)
		r->slot_dst[i] = -1;
	r->ldist = hs_xmalloc((size_t)r->nv * sizeof *r->ldist);
	for (int i = 0; i < r->nv; i++)
		r->ldist[i] = -1;
	r->queue = hs_xmalloc((size_t)r->nv * sizeof *r->queue);
	r->touched = hs_xmalloc((size_t)r->nv * sizeof *r->touched);
	r->cap = 1024;
	r->tab = hs_xcalloc(r->cap, sizeof *r->tab);
	const hs_cluster *c = hs_topo_cluster(t);
	r->dmodk = c && hs_cluster_fabric(c) && hs_cluster_fabric(c)->ecmp == HS_ECMP_DMODK;
	r->dord = hs_xmalloc((size_t)(r->nv ? r->nv : 1) * sizeof *r->dord);
	for (int v = 0, k = 0; v < r->nv; v++)
		r->dord[v] = hs_topo_vkind(t, v) == HS_V_NIC ? k++ : v;
	return r;
}

void hs_router_free(hs_router *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->cap; i++)
		if (r->tab[i].r) {
			free(r->tab[i].r->link);
			free(r->tab[i].r->coef);
			free(r->tab[i].r);
		}
	free(r->tab);
	for (int i = 0; i < DIST_SLOTS; i++)
		free(r->dist[i]), free(r->lab[i]);
	free(r->slot_of);
	free(r->ldist);
	free(r->queue);
	free(r->touched);
	free(r->dord);
	free(r->buf);
	free(r);
}

void hs_router_set_kpaths(hs_router *r, int k) { r->kpaths = k < 1 ? 1 : k > 64 ? 64 : k; }
void hs_router_set_proportional(hs_router *r, int on) { r->proportional = on; }
size_t hs_router_cached(const hs_router *r) { return r->used; }

/* Breadth-first search towards dst over in-links into d[]; devices other than the ends are not relayed
 * through. dom >= 0 restricts the search to that scale-up domain's non-NIC vertices. Returns the number of vertices
 * touched (listed in r->touched when d is the scratch array). */
/* One step of the search: label u's unlabelled in-neighbours into q[n..] (room for u's in-degree); returns the
 * new n. */
static int expand(const hs_topo *t, int u, int dst, int dom, int *d, int *q, int n)
{
	if (u != dst && hs_topo_vkind(t, u) == HS_V_GPU)
		return n;
	int f, c;
	hs_topo_in(t, u, &f, &c);
	for (int i = f; i < f + c; i++) {
		int w = hs_topo_link(t, hs_topo_in_link(t, i))->from;
		if (d[w] >= 0)
			continue;
		if (dom >= 0 && (hs_topo_vdomain(t, w) != dom || hs_topo_vkind(t, w) == HS_V_NIC))
			continue;
		d[w] = d[u] + 1;
		q[n++] = w;
	}
	return n;
}

static int bfs(hs_router *r, int dst, int dom, int *d)
{
	int h = 0, q = 0;
	d[dst] = 0;
	r->queue[q++] = dst;
	while (h < q)
		q = expand(r->t, r->queue[h++], dst, dom, d, r->queue, q);
	return q;
}

/* Distances to dst, searched at least as far as src (bfs's rules, dom -1); the slot's search resumes. */
static const int *global_dist(hs_router *r, int dst, int src)
{
	int s = r->slot_of[dst];
	if (s < 0) {
		s = r->next_slot;
		r->next_slot = (r->next_slot + 1) % DIST_SLOTS;
		if (r->slot_dst[s] >= 0) {
			r->slot_of[r->slot_dst[s]] = -1;
			for (int i = 0; i < r->nlab[s]; i++)
				r->dist[s][r->lab[s][i]] = -1;
		}
		if (!r->dist[s]) {
			r->dist[s] = hs_xmalloc((size_t)r->nv * sizeof *r->dist[s]);
			for (int i = 0; i < r->nv; i++)
				r->dist[s][i] = -1;
		}
		hs_xgrow(&r->lab[s], &r->labcap[s], 1, sizeof *r->lab[s]);
		r->dist[s][dst] = 0;
		r->lab[s][0] = dst;
		r->nlab[s] = 1, r->head[s] = 0;
		r->slot_dst[s] = dst;
		r->slot_of[dst] = s;
	}
	int *d = r->dist[s], h = r->head[s], n = r->nlab[s];
	while (d[src] < 0 && h < n) {
		int u = r->lab[s][h++], f, c;
		hs_topo_in(r->t, u, &f, &c);
		hs_xgrow(&r->lab[s], &r->labcap[s], (size_t)n + (size_t)c, sizeof *r->lab[s]);
		n = expand(r->t, u, dst, -1, d, r->lab[s], n);
	}
	r->head[s] = h, r->nlab[s] = n;
	return d;
}

static void push(hs_router *r, int l)
{
	hs_xgrow(&r->buf, &r->bufcap, (size_t)r->nbuf + 1, sizeof *r->buf);
	r->buf[r->nbuf++] = l;
}

/* Walk from src to dst along decreasing distance, ECMP-hashed; appends links. -1 if unreachable. */
static int walk(hs_router *r, const int *d, int src, int dst, int dom, uint64_t h)
{
	const hs_topo *t = r->t;
	if (d[src] < 0)
		return -1;
	int u = src;
	uint64_t key = r->dkey;
	while (u != dst) {
		int f, c, cand[64], nc = 0;
		hs_topo_out(t, u, &f, &c);
		for (int i = f; i < f + c; i++) {
			int l = hs_topo_out_link(t, i), w = hs_topo_link(t, l)->to;
			if (d[w] != d[u] - 1 || d[w] < 0)
				continue;
			if (w != dst && hs_topo_vkind(t, w) == HS_V_GPU)
				continue;
			if (dom >= 0 && (hs_topo_vdomain(t, w) != dom || hs_topo_vkind(t, w) == HS_V_NIC))
				continue;
			if (nc < 64)
				cand[nc++] = l;
		}
		if (!nc)
			return -1;
		int l;
		if (nc == 1)
			l = cand[0];
		else if (r->dmodk) { /* D-mod-k: key mod k here, key / k at the next choice up */
			l = cand[key % (uint64_t)nc];
			key /= (uint64_t)nc;
		} else
			l = cand[mix(h ^ (uint64_t)u * 0x100000001b3ULL) % (uint64_t)nc];
		push(r, l);
		u = hs_topo_link(t, l)->to;
	}
	return 0;
}

/* A path inside one scale-up domain (restricted search), or -1. */
static int seg_intra(hs_router *r, int src, int dst, uint64_t h)
{
	if (src == dst)
		return 0;
	int dom = hs_topo_vdomain(r->t, dst);
	int q = bfs(r, dst, dom, r->ldist);
	int rc = walk(r, r->ldist, src, dst, dom, h);
	for (int i = 0; i < q; i++)
		r->ldist[r->queue[i]] = -1;
	return rc;
}

/* The link a -> b, or -1. Searched from the end with fewer links: a switch's last hop to a NIC scanned the
 * switch's every port (one switch of 65,536 ports: quadratic in a ring's routes). Either side gives the
 * lowest id of a -> b, so the choice never moves a route. */
static int link_between(const hs_topo *t, int a, int b)
{
	int f, c, fi, ci;
	hs_topo_out(t, a, &f, &c);
	hs_topo_in(t, b, &fi, &ci);
	int best = -1;
	if (c <= ci) {
		for (int i = f; i < f + c; i++) {
			int l = hs_topo_out_link(t, i);
			if (hs_topo_link(t, l)->to == b && (best < 0 || l < best))
				best = l;
		}
	} else
		for (int i = fi; i < fi + ci; i++) {
			int l = hs_topo_in_link(t, i);
			if (hs_topo_link(t, l)->from == a && (best < 0 || l < best))
				best = l;
		}
	return best;
}

/* The one vertex other than a GPU that links into v, or -1 when there are none or several. A NIC's only way in
 * from the fabric is its switch port, so every path from outside its node enters through that switch. */
static int single_entry(const hs_topo *t, int v)
{
	int f, c, up = -1;
	hs_topo_in(t, v, &f, &c);
	for (int i = f; i < f + c; i++) {
		int w = hs_topo_link(t, hs_topo_in_link(t, i))->from;
		if (hs_topo_vkind(t, w) == HS_V_GPU)
			continue;
		if (up >= 0 && up != w)
			return -1;
		up = w;
	}
	return up;
}

/* Toward a NIC, route to its switch and add the last hop: distances are then searched once per switch instead
 * of once per NIC (on a 16k-GPU rail-optimised fabric, one breadth-first search serves a leaf's 32 NICs, and the
 * search dominated the cost of building routes). The shortest paths are the same ones. */
static int seg_global(hs_router *r, int src, int dst, uint64_t h)
{
	if (src == dst)
		return 0;
	if (hs_topo_vkind(r->t, dst) == HS_V_NIC) {
		int up = single_entry(r->t, dst);
		if (up >= 0 && up != src && link_between(r->t, src, dst) < 0) {
			if (seg_global(r, src, up, h) < 0)
				return -1;
			push(r, link_between(r->t, up, dst));
			return 0;
		}
	}
	return walk(r, global_dist(r, dst, src), src, dst, -1, h);
}

/* One path from src to dst through NIC ni of the source's node and nj of the destination's (-1: none). */
static int path_via(hs_router *r, int src, int dst, int ni, int nj, uint64_t h)
{
	const hs_topo *t = r->t;
	int a = src, b = dst;
	if (ni >= 0) {
		int o = hs_topo_nic_owner(t, ni);
		if (seg_intra(r, src, o, h) < 0)
			return -1;
		push(r, link_between(t, o, ni));
		a = ni;
	}
	int mark = r->nbuf;
	if (nj >= 0)
		b = nj;
	r->dkey = (uint64_t)r->dord[b]; /* D-mod-k: by the NIC the path arrives at */
	if (seg_global(r, a, b, h) < 0)
		return -1;
	(void)mark;
	if (nj >= 0) {
		int o = hs_topo_nic_owner(t, nj);
		push(r, link_between(t, nj, o));
		if (seg_intra(r, o, dst, h) < 0)
			return -1;
	}
	return 0;
}

typedef struct lw {
	int l;
	double w;
} lw;

static int cmp_lw(const void *x, const void *y)
{
	const lw *a = x, *b = y;
	return (a->l > b->l) - (a->l < b->l);
}

static hs_route *compute(hs_router *r, int src, int dst, int rail, hs_err *err)
{
	const hs_topo *t = r->t;
	int offs[65], np = 0;
	r->nbuf = 0;
	uint64_t h0 = mix(((uint64_t)(unsigned)src << 32) ^ (uint64_t)(unsigned)dst ^ ((uint64_t)(rail + 1) << 56));
	r->dkey = (uint64_t)r->dord[dst];
	int gs = hs_topo_vkind(t, src) == HS_V_GPU, gd = hs_topo_vkind(t, dst) == HS_V_GPU;
	int ns_node = hs_topo_vnode(t, src), nd_node = hs_topo_vnode(t, dst);
	int ns_dom = hs_topo_vdomain(t, src), nd_dom = hs_topo_vdomain(t, dst);
	offs[0] = 0;
	if (hs_topo_has_nics(t) && ns_dom >= 0 && ns_dom == nd_dom) {
		/* inside a scale-up domain: the scale-up, else through the first switch outside. Across domains
		 * a transfer leaves by a NIC of its own node (an NVL72 tray's), never another node's */
		if (seg_intra(r, src, dst, h0) == 0 || (r->nbuf = 0, seg_global(r, src, dst, h0) == 0))
			offs[++np] = r->nbuf;
	} else if (hs_topo_has_nics(t) && (gs || gd)) {
		int a = gs ? hs_topo_nnics(t, ns_node) : 0, b = gd ? hs_topo_nnics(t, nd_node) : 0;
		int k = rail >= 0 ? 1 : (a > b ? a : b);
		if (k > 64)
			k = 64;
		for (int i = 0; i < k; i++) {
			int ri = rail >= 0 ? rail : i;
			int ni = a ? hs_topo_nic(t, ns_node, ri % a) : -1, nj = b ? hs_topo_nic(t, nd_node, ri % b) : -1;
			int save = r->nbuf;
			if (path_via(r, src, dst, ni, nj, mix(h0 + (uint64_t)i)) == 0)
				offs[++np] = r->nbuf;
			else
				r->nbuf = save;
		}
	} else {
		for (int i = 0; i < r->kpaths; i++) {
			int save = r->nbuf;
			if (seg_global(r, src, dst, mix(h0 + (uint64_t)i)) < 0) {
				r->nbuf = save;
				break;
			}
			int dup = 0;
			for (int p = 0; p < np && !dup; p++)
				dup = offs[p + 1] - offs[p] == r->nbuf - save &&
				      !memcmp(r->buf + offs[p], r->buf + save, (size_t)(r->nbuf - save) * sizeof(int));
			if (dup)
				r->nbuf = save;
			else
				offs[++np] = r->nbuf;
		}
	}
	if (np == 0) {
		char a[80], b[80];
		hs_err_set(err, HS_EINPUT, "no route from %s to %s (the links do not join them)", hs_topo_vname(t, src, a, 80),
			   hs_topo_vname(t, dst, b, 80));
		return NULL;
	}
	/* per path: latency and bottleneck; then the share of bytes each carries */
	double pbw[64], sum = 0;
	hs_time lat = 0;
	for (int p = 0; p < np; p++) {
		hs_time pl = 0;
		double bmin = 1e300;
		for (int i = offs[p]; i < offs[p + 1]; i++) {
			const hs_link *L = hs_topo_link(t, r->buf[i]);
			pl += L->lat;
			if (L->bw < bmin)
				bmin = L->bw;
		}
		pbw[p] = bmin;
		sum += bmin;
		if (pl > lat)
			lat = pl;
	}
	int tot = offs[np];
	lw *v = hs_xmalloc((size_t)(tot ? tot : 1) * sizeof *v);
	for (int p = 0; p < np; p++)
		for (int i = offs[p]; i < offs[p + 1]; i++)
			v[i] = (lw){r->buf[i], r->proportional ? pbw[p] / sum : 1.0 / np};
	qsort(v, (size_t)tot, sizeof *v, cmp_lw);
	hs_route *rt = hs_xcalloc(1, sizeof *rt);
	rt->src = src, rt->dst = dst, rt->npaths = np, rt->lat = lat;
	rt->link = hs_xmalloc((size_t)(tot ? tot : 1) * sizeof *rt->link);
	rt->coef = hs_xmalloc((size_t)(tot ? tot : 1) * sizeof *rt->coef);
	double worst = 0;
	for (int i = 0; i < tot; i++) {
		if (rt->nl && rt->link[rt->nl - 1] == v[i].l)
			rt->coef[rt->nl - 1] += v[i].w;
		else {
			rt->link[rt->nl] = v[i].l;
			rt->coef[rt->nl++] = v[i].w;
		}
	}
	for (int i = 0; i < rt->nl; i++) {
		if (rt->coef[i] > 1)
			rt->coef[i] = 1;
		double x = rt->coef[i] / hs_topo_link(t, rt->link[i])->bw;
		if (x > worst)
			worst = x;
	}
	rt->bw = worst > 0 ? 1 / worst : 1e300;
	free(v);
	return rt;
}

static size_t slot(const hs_router *r, int src, int dst, int rail)
{
	return (size_t)(mix(((uint64_t)(unsigned)src << 32 | (unsigned)dst) ^ ((uint64_t)(rail + 1) * 0x9e37ULL)) &
			(r->cap - 1));
}

const hs_route *hs_route_get(hs_router *r, int src, int dst, int rail, hs_err *err)
{
	if (src < 0 || dst < 0 || src >= r->nv || dst >= r->nv) {
		hs_err_set(err, HS_EINPUT, "route from vertex %d to %d: outside the topology (0 to %d)", src, dst, r->nv - 1);
		return NULL;
	}
	if (src == dst) {
		hs_err_set(err, HS_EINPUT, "route from gpu%d to itself (a transfer needs two ends)", src);
		return NULL;
	}
	if (rail < -1)
		rail = -1;
	for (size_t i = slot(r, src, dst, rail);; i = (i + 1) & (r->cap - 1)) {
		centry *e = &r->tab[i];
		if (!e->r)
			break;
		if (e->src == src && e->dst == dst && e->rail == rail)
			return e->r;
	}
	hs_route *rt = compute(r, src, dst, rail, err);
	if (!rt)
		return NULL;
	if ((r->used + 1) * 2 > r->cap) {
		centry *old = r->tab;
		size_t oc = r->cap;
		r->cap *= 2;
		r->tab = hs_xcalloc(r->cap, sizeof *r->tab);
		for (size_t i = 0; i < oc; i++)
			if (old[i].r) {
				size_t j = slot(r, old[i].src, old[i].dst, old[i].rail);
				while (r->tab[j].r)
					j = (j + 1) & (r->cap - 1);
				r->tab[j] = old[i];
			}
		free(old);
	}
	size_t j = slot(r, src, dst, rail);
	while (r->tab[j].r)
		j = (j + 1) & (r->cap - 1);
	r->tab[j] = (centry){src, dst, rail, rt};
	rt->id = (int)r->used++;
	return rt;
}

static int cmp_link(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int *hs_routes_links(const hs_route *const *r, int n, int *nlinks)
{
	size_t cap = 0;
	for (int m = 0; m < n; m++)
		cap += (size_t)r[m]->nl;
	int *l = hs_xmalloc((cap ? cap : 1) * sizeof *l), k = 0;
	for (int m = 0; m < n; m++)
		for (int i = 0; i < r[m]->nl; i++)
			l[k++] = r[m]->link[i];
	qsort(l, (size_t)k, sizeof *l, cmp_link);
	int u = 0;
	for (int i = 0; i < k; i++)
		if (!u || l[i] != l[u - 1])
			l[u++] = l[i];
	*nlinks = u;
	return l;
}
