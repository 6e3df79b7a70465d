/* The flow network model: max-min fair sharing of links among the flows crossing them.
 *
 * A flow crosses its route's links, putting coefficient c (its share of the bytes on that link) times its
 * rate on each; a link's flows together stay within its capacity. Rates come from progressive filling
 * (Bertsekas & Gallager, Data Networks, 6.5.2): raise every unfrozen flow's rate together until a link
 * saturates, freeze the flows on it, repeat.
 *
 * Incremental: starting or finishing a flow marks its links dirty. A recompute takes the flows on dirty
 * links (set A), holds every other flow at its rate (their load is subtracted from link capacities), and
 * fills A. Where a flow of A changed rate on a link that also carries flows outside A, that link is dirty
 * for another round, up to MAX_ROUNDS rounds (the closure of a change, pruned where rates do not move).
 * Everything that starts at one instant is one batch: the first start schedules a recompute event at the
 * current time, which runs after the other events of that instant (engine order is time, then sequence).
 *
 * Events: one pending event for the earliest finish (a heap of flows by finish time), and one delivery
 * event per flow at finish + route latency, which calls the flow's callback. A finished flow releases its
 * links at the finish, where the sender hears of it (the `sent` callback, called from the finish event so
 * that what it starts joins that instant's recompute); its last byte arrives one route latency later. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/net.h"

/* Rounds of propagation per recompute. Each round widens the recomputed set by the flows sharing a link
 * with a flow whose rate moved; 4 covers a ring's neighbours on both sides of a changed link. */
#define MAX_ROUNDS 4
/* Relative rate change below which a flow counts as unchanged (double rounding). */
#define RATE_EPS 1e-9

typedef struct fent {
	int f; /* flow */
	int i; /* index in the flow's route */
} fent;

/* A link's load, what its flows put on it (rate x coefficient), is kept as an exact sum of integers: each
 * flow's part rounded to a quantum of the link's bandwidth / 2^50 (about 1e-15 of it; QUANT_BITS), so
 * that sum never drifts and does not depend on the order flows came and went. What flows outside a
 * recompute's set A use is then the load less A's parts, without visiting the other flows: a link of a
 * 64-rank all-to-all carries hundreds of flows, a few of them in A, and that visit was half the run time.
 * Headroom: a load up to 2^12 times the bandwidth fits (a valid allocation stays within 1). */
#define QUANT_BITS 50

typedef struct flink {
	fent *e;
	int n, cap;
	double bw;      /* bytes/ps */
	double scale;   /* quanta per byte/ps: 2^QUANT_BITS / bw rounded to a power of 2 (exact inverse) */
	int64_t load;   /* sum over its flows of part() */
	int64_t sat;    /* load from which the link counts as saturated: bw (1 - 1e-6) */
	/* recompute scratch */
	double res, w;
	int64_t aload;  /* sum of part() over its flows in A */
	int hpos;       /* -2: not involved; -1: involved, not in heap; >= 0 heap position */
	int na;         /* entries of flows in A */
	int dirty;
	int twin;       /* >= 0: carries exactly the flows of that link, at its bandwidth (find_twins); no flow
	                 * enters this one */
} flink;

/* One link of a flow's route, copied from the route with the flow's place in that link's entries: the loops
 * over a flow's links read one array instead of the route's two and a third of positions. */
typedef struct fhop {
	int l;       /* link */
	int pos;     /* the flow's entry in the link's list */
	double coef; /* fraction of the flow's bytes on the link */
} fhop;

/* Hops kept in the flow's own record: an inter-node flow of a fat-tree or rail-optimised cluster has 4 to
 * 6 after twins (find_twins); a longer route (one split over rails) keeps its hops in `ext`. */
#define NHOP_IN 8

/* What a recompute reads and writes of a flow: 64 bytes, then its hops, on cache lines of their own (the
 * flow array is aligned to 64 bytes). The hops were a separate allocation, a cache miss of their own each
 * time a flow was visited or an entry of a link moved. The rest lives apart (fcold). */
typedef struct fflow {
	double rem, rate;
	double old;   /* rate before this round */
	hs_time t_upd, t_fin;
	fhop *ext;    /* [xcap] hops when nl > NHOP_IN */
	int nl, xcap;
	int hpos;     /* finish heap position, -1 */
	int mark;     /* 0 not in A; 1 in A, unfrozen; 2 in A, frozen */
	fhop in[NHOP_IN];
} fflow;

static fhop *hops(fflow *f)
{
	return f->nl <= NHOP_IN ? f->in : f->ext;
}

typedef struct fcold {
	hs_time lat; /* the route's */
	hs_net_done sent, done;
	void *ctx;
	uint64_t arg;
	int next_free;
} fcold;

/* A finish heap entry carries its key: sifting compares within the heap instead of reaching into flows
 * scattered over the flow array (a quarter of the run time of a 1,024-GPU tree all-reduce went there). */
typedef struct lhent {
	double key; /* <= the link's share (lazy: see the link heap) */
	int l;
} lhent;

typedef struct fhent {
	hs_time t; /* the flow's t_fin */
	int f;
} fhent;

struct hs_net_model {
	const hs_topo *t;
	hs_engine *eng;
	flink *lk;
	int nlk;
	fflow *fl;          /* aligned to 64 bytes inside flraw */
	void *flraw;
	fcold *fc;          /* [nfl], beside fl */
	size_t nfl, capfl, capfc, active;
	int free_head;
	int *dirty, ndirty;
	int *aff;
	size_t naff, capaff;
	int *inv;           /* [nlk] links involved in a round */
	size_t ninv;
	lhent *lh;          /* link heap (progressive filling) */
	int nlh;
	fhent *fh;          /* finish heap */
	size_t nfh, capfh;
	int ev_pending, rc_pending;
	hs_time ev_t;
	hs_event_id ev;
};

/* ---- link heap by share res/w ----
 *
 * Progressive filling pops the link of least share, freezes its flows, and takes what they use off the
 * other links they cross. That never lowers another link's share (x <= res/w gives (res - xc)/(w - c) >=
 * res/w), so the heap is lazy: an entry's key is a lower bound of its link's share, raised only when the
 * entry reaches the top. Where rounding does lower a share (a link tied with the one popped), the key
 * follows at once. The link popped is then the one of least (share, id), as with keys kept exact, and a
 * freeze costs a division per link instead of a sift (about 220 sifts per recompute in a 64-rank
 * all-to-all). */

static double share(const hs_net_model *m, int l)
{
	const flink *k = &m->lk[l];
	double r = k->res > 0 ? k->res : 0;
	return r / k->w;
}

/* Ties go to the lower link id: the order links leave the heap then depends on their shares alone, not on
 * how the heap got there, so reorganising the heap work cannot move a result. */
static int lh_less(const lhent *a, const lhent *b)
{
	/* without branches: which of two shares is less is a coin toss the predictor loses */
	return (a->key < b->key) | ((a->key == b->key) & (a->l < b->l));
}

/* A 4-ary heap (half the depth of a binary one; the children of an entry share a cache line or two), sifted
 * by moving a hole rather than swapping, so a link's heap position is written once per move. */
#define LH_D 4

static void lh_put(hs_net_model *m, int i, lhent x)
{
	m->lh[i] = x;
	m->lk[x.l].hpos = i;
}

static void lh_up(hs_net_model *m, int i)
{
	lhent x = m->lh[i];
	while (i > 0 && lh_less(&x, &m->lh[(i - 1) / LH_D])) {
		lh_put(m, i, m->lh[(i - 1) / LH_D]);
		i = (i - 1) / LH_D;
	}
	lh_put(m, i, x);
}

static void lh_down(hs_net_model *m, int i)
{
	lhent x = m->lh[i];
	for (;;) {
		int c = LH_D * i + 1, end = c + LH_D < m->nlh ? c + LH_D : m->nlh, s = c;
		if (c >= m->nlh)
			break;
		for (int j = c + 1; j < end; j++)
			s = lh_less(&m->lh[j], &m->lh[s]) ? j : s;
		if (!lh_less(&m->lh[s], &x))
			break;
		lh_put(m, i, m->lh[s]);
		i = s;
	}
	lh_put(m, i, x);
}

static void lh_remove(hs_net_model *m, int l)
{
	int i = m->lk[l].hpos;
	if (i < 0)
		return;
	m->nlh--;
	if (i != m->nlh) {
		int moved = m->lh[m->nlh].l;
		m->lh[i] = m->lh[m->nlh];
		m->lk[moved].hpos = i;
		lh_up(m, i);
		if (m->lk[moved].hpos == i)
			lh_down(m, i);
	}
	m->lk[l].hpos = -1;
}

/* The candidates for the next bottleneck: every link of this round's flows. */
static void lh_build(hs_net_model *m)
{
	m->nlh = 0;
	for (size_t i = 0; i < m->ninv; i++) {
		int l = m->inv[i];
		m->lh[m->nlh] = (lhent){share(m, l), l};
		m->lk[l].hpos = m->nlh++;
	}
	/* bottom-up: sifting down only (an element sifted up here would leave the one it displaced above
	 * children it has not been compared with) */
	if (m->nlh > 1)
		for (int i = (m->nlh - 2) / LH_D; i >= 0; i--)
			lh_down(m, i);
}

/* The next bottleneck, the link of least (share, id) among those whose flows of A are not all frozen
 * (w > 1e-12: a link whose last such flow froze elsewhere leaves the candidates when it is next looked
 * at), and its share in *x; -1 when none is left. The link leaves the candidates (hpos -1). */
static int lh_next(hs_net_model *m, double *x)
{
	while (m->nlh) {
		int l = m->lh[0].l;
		if (m->lk[l].w <= 1e-12) {
			lh_remove(m, l);
			continue;
		}
		double y = share(m, l);
		if (y != m->lh[0].key) { /* its share rose since it was keyed */
			m->lh[0].key = y;
			lh_down(m, 0);
			continue;
		}
		lh_remove(m, l);
		*x = y;
		return l;
	}
	return -1;
}

/* ---- finish heap ---- */

/* 4-ary and sifted by a moving hole, as the link heap (each move writes a flow's heap position, a cache
 * miss into the flow array). Ties go to the lower flow id, so flows finishing together leave in one order
 * whatever the heap's shape. */
#define FH_D 4

static int fh_less(const fhent *x, const fhent *y)
{
	return x->t < y->t || (x->t == y->t && x->f < y->f);
}

static void fh_put(hs_net_model *m, size_t i, fhent e)
{
	m->fh[i] = e;
	m->fl[e.f].hpos = (int)i;
}

static void fh_fix(hs_net_model *m, size_t i)
{
	fhent x = m->fh[i];
	size_t i0 = i;
	while (i > 0 && fh_less(&x, &m->fh[(i - 1) / FH_D])) {
		fh_put(m, i, m->fh[(i - 1) / FH_D]);
		i = (i - 1) / FH_D;
	}
	if (i == i0)
		for (;;) {
			size_t c = FH_D * i + 1, end = c + FH_D < m->nfh ? c + FH_D : m->nfh, s = c;
			if (c >= m->nfh)
				break;
			for (size_t j = c + 1; j < end; j++)
				if (fh_less(&m->fh[j], &m->fh[s]))
					s = j;
			if (!fh_less(&m->fh[s], &x))
				break;
			fh_put(m, i, m->fh[s]);
			i = s;
		}
	fh_put(m, i, x);
}

static void fh_set(hs_net_model *m, int f)
{
	fflow *x = &m->fl[f];
	if (x->hpos < 0) {
		hs_xgrow(&m->fh, &m->capfh, m->nfh + 1, sizeof *m->fh);
		x->hpos = (int)m->nfh++;
	}
	m->fh[x->hpos] = (fhent){x->t_fin, f};
	fh_fix(m, (size_t)x->hpos);
}

static void fh_pop(hs_net_model *m)
{
	m->fl[m->fh[0].f].hpos = -1;
	m->nfh--;
	if (m->nfh) {
		m->fh[0] = m->fh[m->nfh];
		fh_fix(m, 0);
	}
}

/* ---- model ---- */

/* A NIC joined to one GPU and one switch (a NIC per GPU, as on rail-optimised and fat-tree clusters)
 * relays every path that enters it to its other side: no route starts or ends at a NIC, and routes are
 * simple paths. So GPU->NIC and NIC->switch carry the same flows with the same coefficients, as do
 * switch->NIC and NIC->GPU, and where the two have one bandwidth they always have one share: the lower
 * id leaves the link heap first and the other, its flows all frozen, never binds. The higher id is left
 * out of every flow (a quarter of an inter-node flow's links, with the heap work of each tie). */
static void find_twins(hs_net_model *m)
{
	const hs_topo *t = m->t;
	int nv = hs_topo_nvertices(t);
	int *nin = hs_xcalloc((size_t)nv, sizeof *nin), *nout = hs_xcalloc((size_t)nv, sizeof *nout);
	int(*in)[2] = hs_xmalloc((size_t)nv * sizeof *in), (*out)[2] = hs_xmalloc((size_t)nv * sizeof *out);
	for (int l = 0; l < m->nlk; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (nin[L->to] < 2)
			in[L->to][nin[L->to]] = l;
		nin[L->to]++;
		if (nout[L->from] < 2)
			out[L->from][nout[L->from]] = l;
		nout[L->from]++;
	}
	for (int v = 0; v < nv; v++) {
		if (hs_topo_vkind(t, v) != HS_V_NIC || nin[v] != 2 || nout[v] != 2)
			continue;
		int a = hs_topo_link(t, in[v][0])->from, b = hs_topo_link(t, in[v][1])->from;
		if (a == b)
			continue;
		for (int i = 0; i < 2; i++) {
			int li = in[v][i], from = hs_topo_link(t, li)->from;
			/* the way out to the other neighbour */
			int lo = hs_topo_link(t, out[v][0])->to != from ? out[v][0] : out[v][1];
			if (hs_topo_link(t, lo)->to == from || m->lk[li].bw != m->lk[lo].bw)
				continue;
			if (li < lo)
				m->lk[lo].twin = li;
			else
				m->lk[li].twin = lo;
		}
	}
	free(nin), free(nout), free(in), free(out);
}

static hs_net_model *create(const hs_topo *t, hs_engine *eng, hs_err *err)
{
	(void)err;
	hs_net_model *m = hs_xcalloc(1, sizeof *m);
	m->t = t;
	m->eng = eng;
	m->nlk = hs_topo_nlinks(t);
	m->lk = hs_xcalloc((size_t)(m->nlk ? m->nlk : 1), sizeof *m->lk);
	for (int l = 0; l < m->nlk; l++) {
		flink *k = &m->lk[l];
		k->bw = hs_topo_link(t, l)->bw;
		k->scale = k->bw > 0 ? ldexp(1, QUANT_BITS - ilogb(k->bw)) : 1;
		k->sat = (int64_t)(k->bw * (1 - 1e-6) * k->scale);
		k->twin = -1;
		m->lk[l].hpos = -2;
	}
	m->dirty = hs_xmalloc((size_t)(m->nlk ? m->nlk : 1) * sizeof *m->dirty);
	m->inv = hs_xmalloc((size_t)(m->nlk ? m->nlk : 1) * sizeof *m->inv);
	m->lh = hs_xmalloc((size_t)(m->nlk ? m->nlk : 1) * sizeof *m->lh);
	m->free_head = -1;
	find_twins(m);
	return m;
}

static void destroy(hs_net_model *m)
{
	if (!m)
		return;
	for (int l = 0; l < m->nlk; l++)
		free(m->lk[l].e);
	for (size_t i = 0; i < m->nfl; i++)
		free(m->fl[i].ext);
	free(m->lk);
	free(m->flraw);
	free(m->fc);
	free(m->dirty);
	free(m->aff);
	free(m->inv);
	free(m->lh);
	free(m->fh);
	free(m);
}

/* A flow's part of a link's load, in quanta, rounded to nearest (inline, where llrint is a call). */
static int64_t part(const flink *k, double rate, double coef)
{
	return (int64_t)(rate * coef * k->scale + 0.5);
}

static void mark_dirty(hs_net_model *m, int l)
{
	if (!m->lk[l].dirty) {
		m->lk[l].dirty = 1;
		m->dirty[m->ndirty++] = l;
	}
}

static void finish_event(hs_engine *eng, void *ctx, uint64_t arg);

static void schedule_finish(hs_net_model *m)
{
	if (!m->nfh || m->fh[0].t == HS_TIME_MAX)
		return;
	hs_time t = m->fh[0].t;
	if (m->ev_pending && m->ev_t <= t)
		return;
	if (m->ev_pending)
		hs_engine_cancel(m->eng, m->ev);
	m->ev = hs_engine_at(m->eng, t, finish_event, m, 0);
	m->ev_t = t;
	m->ev_pending = 1;
}

static void involve(hs_net_model *m, int l)
{
	flink *k = &m->lk[l];
	if (k->hpos != -2)
		return;
	k->hpos = -1;
	k->res = k->bw;
	k->w = 0;
	k->aload = 0;
	k->na = 0;
	m->inv[m->ninv++] = l;
}

static void recompute(hs_net_model *m)
{
	hs_time now = hs_engine_now(m->eng);
	for (int round = 0; round < MAX_ROUNDS && m->ndirty; round++) {
		/* A: the flows on dirty links */
		m->naff = 0;
		for (int d = 0; d < m->ndirty; d++) {
			flink *k = &m->lk[m->dirty[d]];
			k->dirty = 0;
			for (int j = 0; j < k->n; j++) {
				fflow *f = &m->fl[k->e[j].f];
				if (f->mark)
					continue;
				f->mark = 1;
				if (m->naff == m->capaff)
					hs_xgrow(&m->aff, &m->capaff, m->naff + 1, sizeof *m->aff);
				m->aff[m->naff++] = k->e[j].f;
			}
		}
		m->ndirty = 0;
		/* bring A up to now, and load its links */
		m->ninv = 0;
		for (size_t a = 0; a < m->naff; a++) {
			fflow *f = &m->fl[m->aff[a]];
			f->rem -= f->rate * (double)(now - f->t_upd);
			if (f->rem < 0)
				f->rem = 0;
			f->t_upd = now;
			f->old = f->rate;
			const fhop *h = hops(f);
			for (int i = 0; i < f->nl; i++) {
				int l = h[i].l;
				involve(m, l);
				m->lk[l].w += h[i].coef;
				m->lk[l].na++;
				m->lk[l].aload += part(&m->lk[l], f->rate, h[i].coef);
			}
		}
		/* flows outside A keep their rates: what they use is not available */
		for (size_t i = 0; i < m->ninv; i++) {
			flink *k = &m->lk[m->inv[i]];
			if (k->na < k->n)
				k->res = k->bw - (double)(k->load - k->aload) / k->scale;
		}
		lh_build(m);
		/* progressive filling, until every flow of A is frozen (the links left then carry none) */
		size_t unfrozen = m->naff;
		double x;
		int bl;
		while (unfrozen && (bl = lh_next(m, &x)) >= 0) {
			flink *k = &m->lk[bl];
			for (int j = 0; j < k->n; j++) {
				fflow *f = &m->fl[k->e[j].f];
				if (f->mark != 1)
					continue;
				f->mark = 2;
				unfrozen--;
				/* a flow squeezed to nothing by rounding still creeps forward until the next change */
				f->rate = x > 1e-15 * k->bw ? x : 1e-15 * k->bw;
				const fhop *h = hops(f);
				for (int i = 0; i < f->nl; i++) {
					int ml = h[i].l;
					flink *mk = &m->lk[ml];
					/* w <= 1e-12: out of the filling; it stays in the heap until it reaches the top,
					 * which it may never do */
					if (ml == bl || mk->hpos < 0 || mk->w <= 1e-12)
						continue;
					mk->res -= x * h[i].coef;
					mk->w -= h[i].coef;
					if (mk->w > 1e-12) {
						double y = share(m, ml);
						if (y < m->lh[mk->hpos].key) {
							m->lh[mk->hpos].key = y;
							lh_up(m, mk->hpos);
						}
					}
				}
			}
		}
		/* new finish times; links where a moved rate meets flows outside A are dirty again */
		for (size_t a = 0; a < m->naff; a++) {
			int id = m->aff[a];
			fflow *f = &m->fl[id];
			f->mark = 0;
			/* Same rate, to RATE_EPS: the flow keeps its rate and the finish time set with it, and nothing
			 * moves. The filling reaches a share by other sums when other flows are in A, so a rate that
			 * has not moved comes back a few ulps off; in a 64-rank all-to-all 60% of the flows a
			 * recompute visits come back so, 15% exactly equal, 25% moved. Keeping the old rate leaves a
			 * link's flows over its capacity by at most RATE_EPS of it. */
			if (f->hpos >= 0 && fabs(f->rate - f->old) <= RATE_EPS * f->old) {
				f->rate = f->old;
				continue;
			}
			const fhop *h = hops(f);
			for (int i = 0; i < f->nl; i++) {
				flink *k = &m->lk[h[i].l];
				k->load += part(k, f->rate, h[i].coef) - part(k, f->old, h[i].coef);
			}
			hs_time d = hs_time_for(f->rem, f->rate);
			f->t_fin = d > HS_TIME_MAX - now ? HS_TIME_MAX : now + d;
			fh_set(m, id);
			if (fabs(f->rate - f->old) > RATE_EPS * f->rate)
				for (int i = 0; i < f->nl; i++) {
					int l = h[i].l;
					if (m->lk[l].na < m->lk[l].n)
						mark_dirty(m, l);
				}
		}
		for (size_t i = 0; i < m->ninv; i++)
			m->lk[m->inv[i]].hpos = -2;
	}
	/* propagation cut off: later changes will revisit these links */
	for (int d = 0; d < m->ndirty; d++)
		m->lk[m->dirty[d]].dirty = 0;
	m->ndirty = 0;
	schedule_finish(m);
}

static void recompute_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	(void)arg;
	hs_net_model *m = ctx;
	m->rc_pending = 0;
	recompute(m);
}

static void want_recompute(hs_net_model *m)
{
	if (!m->rc_pending) {
		m->rc_pending = 1;
		hs_engine_after(m->eng, 0, recompute_event, m, 0);
	}
}

static void deliver(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	hs_net_model *m = ctx;
	fcold *f = &m->fc[arg];
	hs_net_done done = f->done;
	void *c = f->ctx;
	uint64_t a = f->arg;
	f->next_free = m->free_head;
	m->free_head = (int)arg;
	done(c, a);
}

/* A finishing flow frees capacity on every link it crossed, but only a saturated link limits anyone: on a link
 * with spare capacity no flow is bottlenecked (max-min), so removing a flow there changes no rate. Only the
 * saturated ones are marked dirty (within a relative 1e-6, so rounding never hides a binding link). On large
 * fabrics this keeps a recompute to the flows that share the finished flow's bottleneck instead of every flow
 * crossing the same spine. */
static void unlink_flow(hs_net_model *m, int id)
{
	fflow *f = &m->fl[id];
	const fhop *h = hops(f);
	for (int i = 0; i < f->nl; i++) {
		int l = h[i].l;
		flink *k = &m->lk[l];
		int p = h[i].pos;
		if (k->load >= k->sat)
			mark_dirty(m, l);
		k->load -= part(k, f->rate, h[i].coef);
		k->e[p] = k->e[--k->n];
		if (p < k->n)
			hops(&m->fl[k->e[p].f])[k->e[p].i].pos = p;
	}
}

static void finish_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)arg;
	hs_net_model *m = ctx;
	hs_time now = hs_engine_now(eng);
	m->ev_pending = 0;
	while (m->nfh && m->fh[0].t <= now) {
		int id = m->fh[0].f;
		fh_pop(m);
		unlink_flow(m, id);
		m->active--;
		hs_engine_after(eng, m->fc[id].lat, deliver, m, (uint64_t)id);
		/* may start flows (and move m->fl, m->fc): nothing of this one is held across the call; new flows
		 * are outside the finish heap until the recompute below rates them */
		if (m->fc[id].sent)
			m->fc[id].sent(m->fc[id].ctx, m->fc[id].arg);
	}
	if (m->ndirty)
		recompute(m);
	else
		schedule_finish(m);
}

static void start(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		  uint64_t arg)
{
	int id;
	if (m->free_head >= 0) {
		id = m->free_head;
		m->free_head = m->fc[id].next_free;
	} else {
		if (m->nfl == m->capfl) {
			size_t cap = m->capfl ? 2 * m->capfl : 64;
			void *raw = hs_xmalloc(cap * sizeof *m->fl + 63);
			fflow *fl = (fflow *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
			if (m->nfl)
				memcpy(fl, m->fl, m->nfl * sizeof *fl);
			free(m->flraw);
			m->flraw = raw, m->fl = fl, m->capfl = cap;
		}
		hs_xgrow(&m->fc, &m->capfc, m->nfl + 1, sizeof *m->fc);
		id = (int)m->nfl++;
		m->fl[id].ext = NULL;
		m->fl[id].xcap = 0;
	}
	fflow *f = &m->fl[id];
	fhop *h = f->in;
	if (r->nl > NHOP_IN) {
		if (f->xcap < r->nl) {
			f->ext = hs_xrealloc(f->ext, (size_t)r->nl * sizeof *f->ext);
			f->xcap = r->nl;
		}
		h = f->ext;
	}
	f->rem = bytes;
	f->rate = 0;
	f->t_upd = hs_engine_now(m->eng);
	f->t_fin = HS_TIME_MAX;
	f->hpos = -1;
	f->mark = 0;
	m->fc[id] = (fcold){r->lat, sent, done, ctx, arg, -1};
	int n = 0;
	for (int i = 0; i < r->nl; i++) {
		flink *k = &m->lk[r->link[i]];
		if (k->twin >= 0) {
			/* links ascend, so the twin, of lower id, is in already */
			int j = n;
			while (j > 0 && h[j - 1].l != k->twin)
				j--;
			assert(j > 0 && "a NIC's twin links are crossed together");
			continue;
		}
		if (k->n == k->cap) {
			k->cap = k->cap ? 2 * k->cap : 4;
			k->e = hs_xrealloc(k->e, (size_t)k->cap * sizeof *k->e);
		}
		h[n] = (fhop){r->link[i], k->n, r->coef[i]};
		k->e[k->n++] = (fent){id, n};
		mark_dirty(m, r->link[i]);
		n++;
	}
	if (h != f->in && n <= NHOP_IN) /* twins left out made it short */
		memcpy(f->in, h, (size_t)n * sizeof *h);
	f->nl = n;
	m->active++;
	want_recompute(m);
}

static size_t active(const hs_net_model *m) { return m->active; }

const hs_net_ops hs_net_flow = {"flow", create, destroy, start, active};
