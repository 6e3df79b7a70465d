/* hs_net: the network a scenario runs on: topology, routes, a model from the name-to-model table, and
 * per-link statistics. Transfers pass through here (hs_net_xfer) so that every byte is counted once. */
#include "sim/net/net.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/net_impl.h"

const hs_net_entry hs_net_models[] = {
	{"analytical", &hs_net_analytical, "alpha-beta over the route's bottleneck, no contention"},
	{"flow", &hs_net_flow, "max-min fair sharing on routed paths, updated incrementally"},
	{"packet", NULL, "packets, queues and credits: implemented by the scale-up fabric model (sim/fabric/)"},
#ifdef HS_HAVE_NS3
	{"ns3", &hs_net_ns3, "packets on ns-3 point-to-point links and drop-tail queues, window-limited lossless "
			     "transport (sim/net/net_ns3.cc)"},
#else
	{"ns3", NULL, "not built: install libns3-dev (make deps)"},
#endif
	{NULL, NULL, NULL},
};

const hs_net_ops *hs_net_find(const char *name, hs_err *err)
{
	for (const hs_net_entry *e = hs_net_models; e->name; e++)
		if (name && !strcmp(name, e->name)) {
			if (!e->ops)
				hs_err_set(err, HS_EINPUT, "network model '%s' is not available here (%s)", name, e->note);
			return e->ops;
		}
	hs_err_set(err, HS_EINPUT, "network model '%s' is not known (expected analytical, flow or ns3)", name ? name : "");
	return NULL;
}

hs_net *hs_net_create(const hs_cluster *c, const char *model, hs_engine *eng, hs_err *err)
{
	const hs_net_ops *ops = hs_net_find(model, err);
	if (!ops)
		return NULL;
	hs_topo *t = hs_topo_build(c, err);
	if (!t)
		return NULL;
	hs_net *n = hs_xcalloc(1, sizeof *n);
	n->c = c;
	n->t = t;
	n->ops = ops;
	n->eng = eng;
	n->t_created = hs_engine_now(eng);
	n->router = hs_router_create(t);
	n->m = ops->create(t, eng, err);
	n->channels = 1;
	n->ring_order = 1;
	n->split = 1;
	n->symmetry = 1;
	n->ring_hops = 1;
	n->free_head = -1;
	n->link_bytes = hs_xcalloc((size_t)(hs_topo_nlinks(t) ? hs_topo_nlinks(t) : 1), sizeof *n->link_bytes);
	if (!n->m) {
		hs_net_free(n);
		return NULL;
	}
	return n;
}

static void memo_clear(hs_symmemo *e);

void hs_net_free(hs_net *n)
{
	if (!n)
		return;
	if (n->m)
		n->ops->destroy(n->m);
	hs_router_free(n->router);
	hs_topo_free(n->t);
	hs_netsym_scratch_free(&n->sc);
	for (int i = 0; n->memo && i < HS_SYMMEMO_SLOTS; i++)
		memo_clear(&n->memo[i]);
	free(n->memo);
	free(n->runs);
	free(n->x);
	free(n->link_bytes);
	free(n->rb);
	free(n->rpend);
	free(n->series);
	free(n);
}

void hs_net_set_channels(hs_net *n, int ch) { n->channels = ch < 1 ? 1 : ch > HS_NET_MAX_CHANNELS ? HS_NET_MAX_CHANNELS : ch; }

void hs_net_set_spread(hs_net *n, int on) { n->spread = on != 0; }

void hs_net_set_rails(hs_net *n, const int *rails, int count)
{
	n->nrails = rails && count > 0 ? (count > HS_NET_MAX_CHANNELS ? HS_NET_MAX_CHANNELS : count) : 0;
	for (int i = 0; i < n->nrails; i++)
		n->rails[i] = rails[i];
}
void hs_net_set_chunk(hs_net *n, double bytes) { n->chunk = bytes > 0 ? bytes : 0; }
void hs_net_set_window(hs_net *n, int slices) { n->window = slices > 0 ? slices : 0; }
void hs_net_set_ring_order(hs_net *n, int on) { n->ring_order = on; }
void hs_net_set_symmetry(hs_net *n, int on) { n->symmetry = on != 0; }
void hs_net_set_ring_hops(hs_net *n, int on) { n->ring_hops = on != 0; }
hs_net_sym_stat hs_net_sym_stats(const hs_net *n) { return n->sst; }
void hs_net_set_split(hs_net *n, int on)
{
	n->split = on;
	hs_router_set_proportional(n->router, on);
}

const hs_topo *hs_net_topo(const hs_net *n) { return n->t; }
hs_router *hs_net_router(hs_net *n) { return n->router; }
hs_engine *hs_net_engine(hs_net *n) { return n->eng; }
double hs_net_bytes_injected(const hs_net *n) { return n->injected; }
uint64_t hs_net_transfers(const hs_net *n) { return n->transfers; }
int hs_net_nlinks(const hs_net *n) { return hs_topo_nlinks(n->t); }

/* Spread `bytes` evenly over [t0, t1] into series[0..nbuckets) (times since the network was created). With
 * sym, widen its range of buckets touched. */
static void spread(const hs_net *n, double *series, hs_time t0, hs_time t1, double bytes, hs_symrun *sym)
{
	double a = (double)(t0 - n->t_created) / n->bucket_ps, b = (double)(t1 - n->t_created) / n->bucket_ps;
	if (b <= a)
		b = a + 1e-9;
	if (sym) {
		int k0 = (int)a, k1 = (int)b < n->nbuckets ? (int)b : n->nbuckets - 1;
		sym->kmin = k0 < sym->kmin ? k0 : sym->kmin;
		sym->kmax = k1 > sym->kmax ? k1 : sym->kmax;
	}
	for (int k = (int)a; k <= (int)b && k < n->nbuckets; k++) {
		double lo = k > a ? k : a, hi = k + 1 < b ? k + 1 : b;
		double frac = (hi - lo) / (b - a);
		if (frac > 0)
			series[k] += bytes * frac;
	}
}

/* Bytes carried on route r, for its links (fold). */
static void route_bytes(hs_net *n, const hs_route *r, double bytes)
{
	size_t id = (size_t)r->id;
	if (id >= n->caprb) {
		size_t cap = n->caprb;
		hs_xgrow(&n->rb, &n->caprb, id + 1, sizeof *n->rb);
		memset(n->rb + cap, 0, (n->caprb - cap) * sizeof *n->rb);
	}
	if (!n->rb[id].r) {
		n->rb[id].r = r;
		if (n->npend == n->cappend)
			hs_xgrow(&n->rpend, &n->cappend, n->npend + 1, sizeof *n->rpend);
		n->rpend[n->npend++] = (int)id;
	}
	n->rb[id].bytes += bytes;
}

/* Memo entry e's pairs' bytes from runs timed alone onto its routes. */
static void solo_flush(hs_net *n, hs_symmemo *e)
{
	if (!(e->solo_bytes > 0))
		return;
	for (int m = 0; m < e->solo_m; m++)
		route_bytes(n, e->routes[m], e->solo_bytes);
	e->solo_bytes = 0;
	n->solo_pending--;
}

void hs_net_solo_carried(hs_net *n, hs_symmemo *e, hs_time t0, const hs_time *fin, double bytes)
{
	if (n->series) {
		for (int m = 0; m < e->solo_m; m++)
			hs_net_timed_carried(n, e->routes[m], t0, t0 + fin[m], bytes);
		return;
	}
	n->solo_pending += !(e->solo_bytes > 0);
	e->solo_bytes += bytes;
}

/* The routes' pending bytes onto their links, in the order the routes were first used. */
static void fold(hs_net *n)
{
	for (int k = 0; n->solo_pending && k < HS_SYMMEMO_SLOTS; k++)
		solo_flush(n, &n->memo[k]);
	for (size_t p = 0; p < n->npend; p++) {
		int id = n->rpend[p];
		const hs_route *r = n->rb[id].r;
		for (int i = 0; i < r->nl; i++)
			n->link_bytes[r->link[i]] += n->rb[id].bytes * r->coef[i];
		n->rb[id] = (struct hs_net_rb){NULL, 0};
	}
	n->npend = 0;
}

static void xdone(void *ctx, uint64_t arg)
{
	hs_net *n = ctx;
	hs_xrec x = n->x[arg];
	n->x[arg].next_free = n->free_head;
	n->free_head = (int)arg;
	if (x.r) {
		route_bytes(n, x.r, x.bytes);
		if (n->series) {
			/* spread evenly over [t0, now - latency] */
			hs_time t1 = hs_engine_now(n->eng) - x.r->lat;
			for (int i = 0; i < x.r->nl; i++)
				spread(n, n->series + (size_t)x.r->link[i] * n->nbuckets, x.t0, t1, x.bytes * x.r->coef[i], NULL);
		}
	} else if (x.sym) {
		x.sym->bytes[x.cls] += x.bytes;
		if (x.sym->series)
			spread(n, x.sym->series + (size_t)x.cls * n->nbuckets, x.t0,
			       hs_engine_now(n->eng) - x.sym->sym->c_lat[x.cls], x.bytes, x.sym);
	}
	x.done(x.ctx, x.arg);
}

/* The last byte has left: the record stays until done. */
static void xsent(void *ctx, uint64_t arg)
{
	hs_net *n = ctx;
	n->x[arg].sent(n->x[arg].ctx, n->x[arg].arg);
}

static int rec(hs_net *n, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
	       uint64_t arg, hs_symrun *sym, int cls)
{
	int id;
	if (n->free_head >= 0) {
		id = n->free_head;
		n->free_head = n->x[id].next_free;
	} else {
		hs_xgrow(&n->x, &n->capx, n->nx + 1, sizeof *n->x);
		id = (int)n->nx++;
	}
	n->x[id] = (hs_xrec){r, bytes, hs_engine_now(n->eng), sent, done, ctx, arg, -1, sym, cls, -1};
	return id;
}

int hs_net_hold(hs_net *n, const hs_route *r, double *rate, void (*broken)(void *ctx, uint64_t arg), void *ctx,
		uint64_t arg)
{
	if (!n->symmetry || !n->ops->hold || !r)
		return -1;
	int h = n->ops->hold(n->m, r, NULL, 0, rate, broken, ctx, arg);
	n->sst.holds += h >= 0;
	return h;
}

int hs_net_hold_links(hs_net *n, const int *links, int nlinks, void (*broken)(void *ctx, uint64_t arg), void *ctx,
		      uint64_t arg)
{
	if (!n->symmetry || !n->ops->hold || !n->ops->solo || nlinks < 1)
		return -1;
	return n->ops->hold(n->m, NULL, links, nlinks, NULL, broken, ctx, arg);
}

int hs_net_solo(hs_net *n, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin, double *rem)
{
	return n->ops->solo ? n->ops->solo(n->m, r, nr, bytes, stop, fin, rem) : -1;
}

void hs_net_unhold(hs_net *n, int h) { n->ops->unhold(n->m, h); }

int hs_net_fill(hs_net *n, const hs_route *const *r, int k, double *rate)
{
	if (!n->ops->fill)
		return -1;
	n->ops->fill(n->m, r, k, rate);
	return 0;
}

void hs_net_timed_started(hs_net *n, long count, double bytes)
{
	n->injected += bytes;
	if (count >= 0)
		n->transfers += (uint64_t)count;
	else
		n->transfers -= (uint64_t)-count;
}

void hs_net_timed_carried(hs_net *n, const hs_route *r, hs_time t0, hs_time t1, double bytes)
{
	route_bytes(n, r, bytes);
	if (n->series)
		for (int i = 0; i < r->nl; i++)
			spread(n, n->series + (size_t)r->link[i] * n->nbuckets, t0, t1, bytes * r->coef[i], NULL);
}

static void later_ev(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	xdone(ctx, arg);
}

void hs_net_later(hs_net *n, hs_time delay, hs_net_done done, void *ctx, uint64_t arg)
{
	int id = rec(n, NULL, 0, NULL, done, ctx, arg, NULL, -1);
	hs_engine_after(n->eng, delay, later_ev, n, (uint64_t)id);
}

int hs_net_xfer(hs_net *n, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		uint64_t arg)
{
	if (!(bytes > 0)) {
		if (sent)
			hs_net_later(n, 0, sent, ctx, arg);
		hs_net_later(n, r ? r->lat : 0, done, ctx, arg);
		return -1;
	}
	int id = rec(n, r, bytes, sent, done, ctx, arg, NULL, -1);
	n->injected += bytes;
	n->transfers++;
	if (!n->ops->xstart) {
		n->ops->start(n->m, r, bytes, sent ? xsent : NULL, xdone, n, (uint64_t)id);
		return -1;
	}
	int h = n->ops->xstart(n->m, r, bytes, sent ? xsent : NULL, xdone, n, (uint64_t)id);
	n->x[id].h = h; /* after the start: a break it caused may have grown n->x */
	return id;
}

int hs_net_xpeek(const hs_net *n, int x, double *rem, hs_time *fin)
{
	if (x < 0 || n->x[x].h < 0 || !n->ops->xpeek)
		return -1;
	return n->ops->xpeek(n->m, n->x[x].h, rem, fin);
}

void hs_net_xtake(hs_net *n, int x)
{
	hs_xrec r = n->x[x];
	double rem;
	hs_time fin;
	int st = n->ops->xpeek(n->m, r.h, &rem, &fin);
	(void)st;
	assert(st == 1 && "a transfer is taken while it is carried");
	n->ops->xtake(n->m, r.h);
	route_bytes(n, r.r, r.bytes - rem);
	if (n->series)
		for (int i = 0; i < r.r->nl; i++)
			spread(n, n->series + (size_t)r.r->link[i] * n->nbuckets, r.t0, hs_engine_now(n->eng),
			       (r.bytes - rem) * r.r->coef[i], NULL);
	n->injected -= rem;
	n->transfers--;
	n->x[x].next_free = n->free_head;
	n->free_head = x;
}

int hs_net_sym_fits(const hs_net *n, const hs_symmemo *e, const int *x, int nx)
{
	if (!n->symmetry || !n->ops->sym_fits || !e || !e->sym)
		return 0;
	int *h = hs_xmalloc((size_t)(nx > 0 ? nx : 1) * sizeof *h);
	for (int k = 0; k < nx; k++)
		h[k] = n->x[x[k]].h;
	int ok = n->ops->sym_fits(n->m, e->sym, h, nx);
	free(h);
	return ok;
}

/* ---- symmetry classes ---- */

static void sym_broken(void *ctx)
{
	hs_symrun *s = ctx;
	s->live = 0;
	s->broken(s->ctx);
}

/* A class transfer cut by a break: what its members carried so far is the class's, and the caller carries
 * their rem bytes on as transfers of their own (which count themselves as injected). */
static void xcut(void *ctx, uint64_t arg, double rem)
{
	hs_net *n = ctx;
	hs_xrec x = n->x[arg];
	n->x[arg].next_free = n->free_head;
	n->free_head = (int)arg;
	hs_symrun *s = x.sym;
	int m = s->sym->mult[x.cls];
	s->bytes[x.cls] += x.bytes - rem;
	if (s->series)
		spread(n, s->series + (size_t)x.cls * n->nbuckets, x.t0, hs_engine_now(n->eng), x.bytes - rem, s);
	n->injected -= m * rem;
	n->transfers -= (uint64_t)m;
	s->cut(s->ctx, x.arg, rem);
}

static uint64_t key_hash(const int *key, int nkey)
{
	uint64_t h = 0x84222325cbf29ce4ULL ^ (uint64_t)nkey;
	for (int i = 0; i < nkey; i++)
		h = (h ^ (uint64_t)(unsigned)key[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static void memo_clear(hs_symmemo *e)
{
	for (int g = 0; g < e->ngen; g++)
		free(e->gmem[g]), free(e->gdev[g]);
	free(e->gmem), free(e->gdev), free(e->dev);
	if (e->sym)
		hs_netsym_free(e->sym);
	free(e->sym);
	free((void *)e->routes);
	free(e->key);
	free(e->links);
	for (hs_solo_tl *t = e->solo, *nx; t; t = nx) {
		nx = t->next;
		free(t->fin), free(t);
	}
	memset(e, 0, sizeof *e);
}

/* Each key has HS_SYMMEMO_PROBE slots from its hash's: a group whose entry is in use by an open set (a ring
 * still running) leaves another one room beside it. */
#define HS_SYMMEMO_PROBE 4

hs_symmemo *hs_net_memo_get(hs_net *n, const int *key, int nkey)
{
	if (!n->memo)
		return NULL;
	uint64_t h = key_hash(key, nkey);
	for (int k = 0; k < HS_SYMMEMO_PROBE; k++) {
		hs_symmemo *e = &n->memo[(h + (uint64_t)k) % HS_SYMMEMO_SLOTS];
		if (e->key && e->h == h && e->nkey == nkey && !memcmp(e->key, key, (size_t)nkey * sizeof *key))
			return e;
	}
	return NULL;
}

hs_symmemo *hs_net_memo_put(hs_net *n, const int *key, int nkey, int value, hs_netsym *sym, const hs_route **routes)
{
	if (!n->memo)
		n->memo = hs_xcalloc(HS_SYMMEMO_SLOTS, sizeof *n->memo);
	uint64_t h = key_hash(key, nkey);
	hs_symmemo *e = NULL;
	for (int k = 0; k < HS_SYMMEMO_PROBE && (!e || e->key); k++) { /* an empty slot, else one not in use */
		hs_symmemo *x = &n->memo[(h + (uint64_t)k) % HS_SYMMEMO_SLOTS];
		if (!x->refs && (!e || !x->key))
			e = x;
	}
	if (e)
		solo_flush(n, e); /* its runs' bytes onto the links before its routes go */
	if (!e) { /* every slot in use by an open set: this one is not remembered */
		if (sym)
			hs_netsym_free(sym);
		free(sym);
		free((void *)routes);
		return NULL;
	}
	memo_clear(e);
	e->h = h;
	e->key = hs_xmalloc((size_t)(nkey ? nkey : 1) * sizeof *e->key);
	memcpy(e->key, key, (size_t)nkey * sizeof *key);
	e->nkey = nkey;
	e->value = value;
	e->sym = sym;
	e->routes = routes;
	return e;
}

void hs_net_memo_gens(hs_symmemo *e, int ngen, int **gmem, int ndev, int *dev, int **gdev)
{
	e->ngen = ngen, e->gmem = gmem, e->ndev = ndev, e->dev = dev, e->gdev = gdev;
}

hs_netsym *hs_net_sym_find(hs_net *n, const hs_route *const *routes, const int *perm, int M)
{
	return hs_net_sym_find_group(n, routes, &perm, 1, M, NULL);
}

hs_netsym *hs_net_sym_find_group(hs_net *n, const hs_route *const *routes, const int *const *perms, int G, int M,
				 int *passed)
{
	if (!n->symmetry || !n->ops->sym_open || M < 2 || G < 1)
		return NULL;
	if (!n->sc.stamp)
		hs_netsym_scratch_init(&n->sc, hs_topo_nlinks(n->t));
	hs_netsym *sym = hs_xcalloc(1, sizeof *sym);
	if (hs_netsym_find_group(n->t, routes, perms, G, M, &n->sc, passed, sym) || sym->ncls == M) {
		hs_netsym_free(sym);
		free(sym);
		return NULL;
	}
	return sym;
}

static hs_symrun *sym_open(hs_net *n, hs_symmemo *e, void (*broken)(void *ctx),
			   void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx, uint64_t *count, hs_symrun *with)
{
	if (!n->symmetry || !n->ops->sym_open || !e || !e->sym || (with && !n->ops->sym_open_joint))
		return NULL;
	hs_symrun *s = hs_xcalloc(1, sizeof *s);
	s->id = with ? n->ops->sym_open_joint(n->m, e->sym, with->id, sym_broken, s)
		     : n->ops->sym_open(n->m, e->sym, sym_broken, s);
	if (s->id < 0) {
		if (count == &n->sst.sets)
			n->sst.refused++;
		free(s);
		return NULL;
	}
	(*count)++;
	e->refs++;
	s->memo = e;
	s->gmemo = with ? with->gmemo : e;
	if (with)
		s->gmemo->refs++;
	if (s->id >= n->capruns) {
		int cap = 2 * s->id + 4;
		n->runs = hs_xrealloc(n->runs, (size_t)cap * sizeof *n->runs);
		memset(n->runs + n->capruns, 0, (size_t)(cap - n->capruns) * sizeof *n->runs);
		n->capruns = cap;
	}
	n->runs[s->id] = s;
	s->sym = e->sym;
	s->live = 1;
	s->broken = broken, s->cut = cut, s->ctx = ctx;
	s->bytes = hs_xcalloc((size_t)s->sym->ncls, sizeof *s->bytes);
	if (n->series)
		s->series = hs_xcalloc((size_t)s->sym->ncls * (size_t)n->nbuckets, sizeof *s->series);
	s->kmin = n->nbuckets, s->kmax = -1;
	return s;
}

hs_symrun *hs_net_sym_open(hs_net *n, hs_symmemo *e, void (*broken)(void *ctx),
			   void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx)
{
	return sym_open(n, e, broken, cut, ctx, &n->sst.sets, NULL);
}

hs_symrun *hs_net_sym_holder(hs_net *n, const hs_symmemo *e)
{
	if (!n->symmetry || !n->ops->sym_holder || !e || !e->sym)
		return NULL;
	int id = n->ops->sym_holder(n->m, e->sym);
	return id >= 0 && id < n->capruns ? n->runs[id] : NULL;
}

hs_symrun *hs_net_sym_open_joint(hs_net *n, hs_symmemo *e, hs_symrun *with, void (*broken)(void *ctx),
				 void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx)
{
	if (!with || !with->live)
		return NULL;
	/* The live sets on with's generators are its group (two live sets of one ring's classes would reserve
	 * the same links). Each joint one was checked with the ring alone, so with another only where both are
	 * the same entry: then their link permutations agree on the links they share (the same routes), and the
	 * problem with all of them is invariant too. */
	for (int i = 0; i < n->capruns; i++) {
		const hs_symrun *o = n->runs[i];
		if (o && o->live && o->gmemo == with->gmemo && o->memo != with->gmemo && o->memo != e)
			return NULL;
	}
	return sym_open(n, e, broken, cut, ctx, &n->sst.joint, with);
}

hs_symrun *hs_net_sym_reopen(hs_net *n, const hs_symrun *old, void (*broken)(void *ctx),
			     void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx)
{
	return old && !old->live ? sym_open(n, old->memo, broken, cut, ctx, &n->sst.reformed, NULL) : NULL;
}

void hs_net_sym_xfer(hs_net *n, hs_symrun *s, int cls, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		     uint64_t arg)
{
	if (!(bytes > 0)) {
		if (sent)
			hs_net_later(n, 0, sent, ctx, arg);
		hs_net_later(n, s->sym->c_lat[cls], done, ctx, arg);
		return;
	}
	int id = rec(n, NULL, bytes, sent, done, ctx, arg, s, cls);
	int m = s->sym->mult[cls];
	n->injected += m * bytes;
	n->transfers += (uint64_t)m;
	n->sst.flows++;
	n->sst.alone += (uint64_t)n->ops->sym_start(n->m, s->id, cls, bytes, sent ? xsent : NULL, xdone, xcut, n,
						    (uint64_t)id);
}

double hs_net_sym_alone_rate(hs_net *n, hs_symrun *s, int cls)
{
	if (!s->live || !n->ops->sym_alone_rate)
		return 0;
	return n->ops->sym_alone_rate(n->m, s->id, cls);
}

void hs_net_sym_started(hs_net *n, hs_symrun *s, int cls, long count, double bytes)
{
	long m = s->sym->mult[cls];
	n->injected += (double)count * (double)m * bytes;
	if (count >= 0) {
		n->transfers += (uint64_t)(m * count);
		n->sst.flows += (uint64_t)count;
		n->sst.alone += (uint64_t)count;
	} else {
		n->transfers -= (uint64_t)(-m * count);
		n->sst.flows -= (uint64_t)-count;
		n->sst.alone -= (uint64_t)-count;
	}
}

void hs_net_sym_cut_back(hs_net *n, hs_symrun *s, int cls, double rem)
{
	int m = s->sym->mult[cls];
	n->injected -= m * rem;
	n->transfers -= (uint64_t)m;
}

void hs_net_sym_carried(hs_net *n, hs_symrun *s, int cls, hs_time t0, hs_time t1, double bytes)
{
	s->bytes[cls] += bytes;
	if (s->series)
		spread(n, s->series + (size_t)cls * n->nbuckets, t0, t1, bytes, s);
}

void hs_net_sym_close(hs_net *n, hs_symrun *s)
{
	if (!s)
		return;
	if (!s->live)
		n->sst.broken++;
	n->ops->sym_close(n->m, s->id);
	/* by orbit, not by member: every link of an orbit carries the same load (the group permutes them), class c
	 * putting c_coef times a member's bytes on each; so an orbit's per-link bytes are summed over the classes
	 * once and added to each of its links (an all-to-all's 4,032 member routes were 14% of an EP step's
	 * instructions) */
	const hs_netsym *y = s->sym;
	double *ob = hs_xcalloc((size_t)(y->norb ? y->norb : 1), sizeof *ob);
	int nb = s->series && n->series && s->kmax >= s->kmin ? s->kmax - s->kmin + 1 : 0;
	double *os = nb ? hs_xcalloc((size_t)y->norb * (size_t)nb, sizeof *os) : NULL;
	for (int c = 0; c < y->ncls; c++)
		for (int q = y->c_off[c]; q < y->c_off[c + 1]; q++) {
			int o = y->c_orb[q];
			ob[o] += s->bytes[c] * y->c_coef[q];
			for (int k = 0; k < nb; k++)
				os[(size_t)o * nb + k] += s->series[(size_t)c * n->nbuckets + s->kmin + k] * y->c_coef[q];
		}
	for (int o = 0; o < y->norb; o++)
		for (int u = y->orb_off[o]; u < y->orb_off[o + 1]; u++) {
			int l = y->orb_link[u];
			n->link_bytes[l] += ob[o];
			for (int k = 0; k < nb; k++)
				n->series[(size_t)l * n->nbuckets + s->kmin + k] += os[(size_t)o * nb + k];
		}
	free(ob), free(os);
	s->memo->refs--;
	if (s->gmemo != s->memo)
		s->gmemo->refs--;
	n->runs[s->id] = NULL;
	free(s->bytes);
	free(s->series);
	free(s);
}

/* A device with a NIC of its own sends through it, as NCCL does when every GPU has a nearest NIC (one rail per
 * GPU); otherwise the transfer spreads over the node's rails (rail -1). Keeping a flow on its own rail also keeps
 * the flow model's rate computations local: flows of different rails never share a link outside the
 * non-blocking scale-up switch. */
int hs_net_home_rail(const hs_net *n, int src)
{
	/* vertices other than GPUs (switches in in-network reductions) have no NIC of their own */
	if (src < 0 || src >= hs_cluster_ngpus(n->c) || hs_topo_vkind(n->t, src) != HS_V_GPU)
		return -1;
	const hs_node_group *g = hs_cluster_group(n->c, hs_cluster_group_of(n->c, src));
	return g->nics_per_node == g->gpus_per_node ? hs_cluster_local_rank(n->c, src) : -1;
}

int hs_net_send(hs_net *n, int src, int dst, double bytes, hs_net_done done, void *ctx, uint64_t arg, hs_err *err)
{
	int G = hs_cluster_ngpus(n->c);
	if (src < 0 || src >= G || dst < 0 || dst >= G)
		return hs_err_set(err, HS_EINPUT, "send from device %d to device %d: outside the cluster (expected 0 to %d)",
				  src, dst, G - 1);
	if (!(bytes >= 0))
		return hs_err_set(err, HS_EINPUT, "send of %g bytes (expected a size >= 0)", bytes);
	if (src == dst) {
		hs_net_later(n, 0, done, ctx, arg);
		return 0;
	}
	const hs_route *r = hs_route_get(n->router, src, dst, hs_net_home_rail(n, src), err);
	if (!r)
		return -1;
	hs_net_xfer(n, r, bytes, NULL, done, ctx, arg);
	return 0;
}

void hs_net_stats_timeline(hs_net *n, double bucket_s, int nb)
{
	free(n->series);
	n->series = NULL;
	n->nbuckets = 0;
	if (nb <= 0 || !(bucket_s > 0))
		return;
	n->nbuckets = nb;
	n->bucket_ps = bucket_s * HS_PS_PER_S;
	n->series = hs_xcalloc((size_t)hs_topo_nlinks(n->t) * (size_t)nb, sizeof *n->series);
}

void hs_net_link_stats(hs_net *n, int link, hs_net_link_stat *out, double *series, int nb)
{
	fold(n);
	const hs_link *l = hs_topo_link(n->t, link);
	double el = (double)(hs_engine_now(n->eng) - n->t_created);
	out->from = l->from;
	out->to = l->to;
	out->bw_Bps = hs_rate_to_Bps(l->bw);
	out->bytes = n->link_bytes[link];
	out->util = el > 0 ? out->bytes / (l->bw * el) : 0;
	for (int k = 0; series && k < nb; k++)
		series[k] = n->series && k < n->nbuckets ? n->series[(size_t)link * n->nbuckets + k] / (l->bw * n->bucket_ps)
							  : 0;
}
