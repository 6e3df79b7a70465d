/* The max-min solver of the flow network model: progressive filling over the flows of dirty links
 * (sim/net/maxmin.h). */
#include "sim/net/maxmin.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/finq.h"

/* A link heap entry carries its key, as the model's finish heap entries do: sifting compares within the heap
 * instead of reaching into links. */
typedef struct hs_maxmin_lhent {
	double key; /* <= the link's share (lazy: see the link heap) */
	int l;
} lhent;

/* ---- link heap by share res/w ----
 *
 * Progressive filling pops the link of least share, freezes its flows, and takes what they use off the
 * other links they cross. That never lowers another link's share (x <= res/w gives (res - xc)/(w - c) >=
 * res/w), so the heap is lazy: an entry's key is a lower bound of its link's share, raised only when the
 * entry reaches the top. Where rounding does lower a share (a link tied with the one popped), the key
 * follows at once. The link popped is then the one of least (share, id), as with keys kept exact, and a
 * freeze costs a division per link instead of a sift (about 220 sifts per recompute in a 64-rank
 * all-to-all). */

static double share(const hs_maxmin *mm, int l)
{
	const hs_maxmin_lscr *k = &mm->lx[l];
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

static void lh_put(hs_maxmin *mm, int i, lhent x)
{
	mm->lh[i] = x;
	mm->lx[x.l].hpos = i;
}

static void lh_up(hs_maxmin *mm, int i)
{
	lhent x = mm->lh[i];
	while (i > 0 && lh_less(&x, &mm->lh[(i - 1) / LH_D])) {
		lh_put(mm, i, mm->lh[(i - 1) / LH_D]);
		i = (i - 1) / LH_D;
	}
	lh_put(mm, i, x);
}

static void lh_down(hs_maxmin *mm, int i)
{
	lhent x = mm->lh[i];
	for (;;) {
		int c = LH_D * i + 1, end = c + LH_D < mm->nlh ? c + LH_D : mm->nlh, s = c;
		if (c >= mm->nlh)
			break;
		for (int j = c + 1; j < end; j++)
			s = lh_less(&mm->lh[j], &mm->lh[s]) ? j : s;
		if (!lh_less(&mm->lh[s], &x))
			break;
		lh_put(mm, i, mm->lh[s]);
		i = s;
	}
	lh_put(mm, i, x);
}

static void lh_remove(hs_maxmin *mm, int l)
{
	int i = mm->lx[l].hpos;
	if (i < 0)
		return;
	mm->nlh--;
	if (i != mm->nlh) {
		int moved = mm->lh[mm->nlh].l;
		mm->lh[i] = mm->lh[mm->nlh];
		mm->lx[moved].hpos = i;
		lh_up(mm, i);
		if (mm->lx[moved].hpos == i)
			lh_down(mm, i);
	}
	mm->lx[l].hpos = -1;
}

/* The candidates for the next bottleneck: every link of this round's flows. */
static void lh_build(hs_maxmin *mm)
{
	mm->nlh = 0;
	for (size_t i = 0; i < mm->ninv; i++) {
		int l = mm->inv[i];
		mm->lh[mm->nlh] = (lhent){share(mm, l), l};
		mm->lx[l].hpos = mm->nlh++;
	}
	/* bottom-up: sifting down only (an element sifted up here would leave the one it displaced above
	 * children it has not been compared with) */
	if (mm->nlh > 1)
		for (int i = (mm->nlh - 2) / LH_D; i >= 0; i--)
			lh_down(mm, i);
}

/* The next bottleneck, the link of least (share, id) among those whose flows of A are not all frozen
 * (w > 1e-12: a link whose last such flow froze elsewhere leaves the candidates when it is next looked
 * at), and its share in *x; -1 when none is left. The link leaves the candidates (hpos -1). */
static int lh_next(hs_maxmin *mm, double *x)
{
	while (mm->nlh) {
		int l = mm->lh[0].l;
		if (mm->lx[l].w <= 1e-12) {
			lh_remove(mm, l);
			continue;
		}
		double y = share(mm, l);
		if (y != mm->lh[0].key) { /* its share rose since it was keyed */
			mm->lh[0].key = y;
			lh_down(mm, 0);
			continue;
		}
		lh_remove(mm, l);
		*x = y;
		return l;
	}
	return -1;
}

/* ---- links and flows ---- */

void hs_maxmin_init(hs_maxmin *mm, int nlk)
{
	memset(mm, 0, sizeof *mm);
	mm->nlk = nlk;
	size_t nl = (size_t)(nlk ? nlk : 1);
	mm->lkraw = hs_xcalloc(1, nl * sizeof *mm->lk + 63);
	mm->lk = (hs_maxmin_link *)(((uintptr_t)mm->lkraw + 63) & ~(uintptr_t)63);
	mm->lx = hs_xcalloc(nl, sizeof *mm->lx);
	for (int l = 0; l < nlk; l++) {
		mm->lk[l].scale = 1;
		mm->lk[l].twin = -1;
		mm->lx[l].hpos = -2;
	}
	mm->dirty = hs_xmalloc((size_t)(nlk ? nlk : 1) * sizeof *mm->dirty);
	mm->inv = hs_xmalloc((size_t)(nlk ? nlk : 1) * sizeof *mm->inv);
	mm->lh = hs_xmalloc((size_t)(nlk ? nlk : 1) * sizeof *mm->lh);
	mm->bn = hs_xmalloc((size_t)(nlk ? nlk : 1) * sizeof *mm->bn);
	mm->exact = 1;
}

void hs_maxmin_set_bw(hs_maxmin *mm, int l, double bw)
{
	hs_maxmin_link *k = &mm->lk[l];
	k->bw = bw;
	k->scale = k->bw > 0 ? ldexp(1, HS_MAXMIN_QUANT_BITS - ilogb(k->bw)) : 1;
	k->sat = (int64_t)(k->bw * (1 - 1e-6) * k->scale);
}

void hs_maxmin_free(hs_maxmin *mm)
{
	for (int l = 0; l < mm->nlk; l++)
		free(mm->lk[l].e);
	for (size_t i = 0; i < mm->nfl; i++)
		free(mm->fl[i].ext);
	free(mm->lkraw);
	free(mm->lx);
	free(mm->flraw);
	free(mm->dirty);
	free(mm->aff);
	free(mm->inv);
	free(mm->lh);
	free(mm->bn);
}

int hs_maxmin_new_flow(hs_maxmin *mm)
{
	if (mm->nfl == mm->capfl) {
		size_t cap = mm->capfl ? 2 * mm->capfl : 64;
		void *raw = hs_xmalloc(cap * sizeof *mm->fl + 63);
		hs_maxmin_flow *fl = (hs_maxmin_flow *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
		if (mm->nfl)
			memcpy(fl, mm->fl, mm->nfl * sizeof *fl);
		free(mm->flraw);
		mm->flraw = raw, mm->fl = fl, mm->capfl = cap;
	}
	int id = (int)mm->nfl++;
	mm->fl[id].ext = NULL;
	mm->fl[id].xcap = 0;
	return id;
}

static void add_hops(hs_maxmin *mm, int id, int nl, const int *link, const double *coef, int mark);

void hs_maxmin_add(hs_maxmin *mm, int id, int nl, const int *link, const double *coef)
{
	add_hops(mm, id, nl, link, coef, 1);
	mm->added = 1;
}

void hs_maxmin_add_rated(hs_maxmin *mm, int id, int nl, const int *link, const double *coef, double rate)
{
	add_hops(mm, id, nl, link, coef, 0);
	hs_maxmin_flow *f = &mm->fl[id];
	f->rate = rate;
	const hs_maxmin_hop *h = hs_maxmin_hops(f);
	for (int i = 0; i < f->nl; i++) {
		hs_maxmin_link *k = &mm->lk[h[i].l];
		k->load += hs_maxmin_part(k, rate, h[i].coef);
		k->ub = rate > k->ub ? rate : k->ub;
	}
}

static void add_hops(hs_maxmin *mm, int id, int nl, const int *link, const double *coef, int mark)
{
	hs_maxmin_flow *f = &mm->fl[id];
	hs_maxmin_hop *h = f->in;
	if (nl > HS_MAXMIN_NHOP_IN) {
		if (f->xcap < nl) {
			f->ext = hs_xrealloc(f->ext, (size_t)nl * sizeof *f->ext);
			f->xcap = nl;
		}
		h = f->ext;
	}
	f->rate = 0;
	f->mark = 0;
	int n = 0;
	for (int i = 0; i < nl; i++) {
		hs_maxmin_link *k = &mm->lk[link[i]];
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
		h[n] = (hs_maxmin_hop){link[i], k->n, coef[i]};
		k->e[k->n++] = (hs_maxmin_ent){id, n};
		if (mark)
			hs_maxmin_mark_dirty(mm, link[i]);
		n++;
	}
	if (h != f->in && n <= HS_MAXMIN_NHOP_IN) /* twins left out made it short */
		memcpy(f->in, h, (size_t)n * sizeof *h);
	f->nl = n;
}

/* A leaving flow frees capacity on every link it crossed, but only a saturated link limits anyone: on a link
 * with spare capacity no flow is bottlenecked (max-min), so removing a flow there changes no rate. Only the
 * saturated ones are marked dirty (within a relative 1e-6, so rounding never hides a binding link). On large
 * fabrics this keeps a recompute to the flows that share the finished flow's bottleneck instead of every flow
 * crossing the same spine. */
void hs_maxmin_remove(hs_maxmin *mm, int id)
{
	hs_maxmin_flow *f = &mm->fl[id];
	const hs_maxmin_hop *h = hs_maxmin_hops(f);
	for (int i = 0; i < f->nl; i++) {
		int l = h[i].l;
		hs_maxmin_link *k = &mm->lk[l];
		int p = h[i].pos;
		if (k->load >= k->sat) {
			hs_maxmin_mark_dirty(mm, l);
			k->dirty = 2; /* by a removal (hs_maxmin_round) */
		}
		k->load -= hs_maxmin_part(k, f->rate, h[i].coef);
		k->e[p] = k->e[--k->n];
		if (p < k->n)
			hs_maxmin_hops(&mm->fl[k->e[p].f])[k->e[p].i].pos = p;
	}
}

/* ---- progressive filling ---- */

static void involve(hs_maxmin *mm, int l)
{
	hs_maxmin_lscr *k = &mm->lx[l];
	if (k->hpos != -2)
		return;
	k->hpos = -1;
	k->res = mm->lk[l].bw;
	k->w = 0;
	k->aload = 0;
	k->na = 0;
	k->bx = -1;
	mm->inv[mm->ninv++] = l;
}

static void uninvolve(hs_maxmin *mm)
{
	for (size_t i = 0; i < mm->ninv; i++)
		mm->lx[mm->inv[i]].hpos = -2;
	mm->ninv = 0;
}

/* Fill A, mm->aff[0..naff), every flow of it unfrozen (mark 1) with its rate before the recompute in old,
 * holding every other flow at its rate. A bottleneck link that also carries flows outside A goes on mm->bn
 * with the share it froze at (bx), for the check that follows. */
static void fill(hs_maxmin *mm)
{
	uninvolve(mm);
	mm->nbn = 0;
	for (size_t a = 0; a < mm->naff; a++) {
		hs_maxmin_flow *f = &mm->fl[mm->aff[a]];
		const hs_maxmin_hop *h = hs_maxmin_hops(f);
		for (int i = 0; i < f->nl; i++) {
			int l = h[i].l;
			involve(mm, l);
			mm->lx[l].w += h[i].coef;
			mm->lx[l].na++;
			mm->lx[l].aload += hs_maxmin_part(&mm->lk[l], f->old, h[i].coef);
		}
	}
	/* flows outside A keep their rates: what they use is not available */
	for (size_t i = 0; i < mm->ninv; i++) {
		const hs_maxmin_link *k = &mm->lk[mm->inv[i]];
		hs_maxmin_lscr *x = &mm->lx[mm->inv[i]];
		if (x->na < k->n)
			x->res = k->bw - (double)(k->load - x->aload) / k->scale;
	}
	lh_build(mm);
	/* progressive filling, until every flow of A is frozen (the links left then carry none) */
	size_t unfrozen = mm->naff;
	double x;
	int bl;
	while (unfrozen && (bl = lh_next(mm, &x)) >= 0) {
		const hs_maxmin_link *k = &mm->lk[bl];
		if (mm->lx[bl].na < k->n) {
			mm->lx[bl].bx = x;
			mm->bn[mm->nbn++] = bl;
		}
		for (int j = 0; j < k->n; j++) {
			hs_maxmin_flow *f = &mm->fl[k->e[j].f];
			if (f->mark != 1)
				continue;
			f->mark = 2;
			unfrozen--;
			/* a flow squeezed to nothing by rounding still creeps forward until the next change */
			f->rate = x > 1e-15 * k->bw ? x : 1e-15 * k->bw;
			const hs_maxmin_hop *h = hs_maxmin_hops(f);
			for (int i = 0; i < f->nl; i++) {
				int ml = h[i].l;
				hs_maxmin_lscr *mk = &mm->lx[ml];
				/* w <= 1e-12: out of the filling; it stays in the heap until it reaches the top,
				 * which it may never do */
				if (ml == bl || mk->hpos < 0 || mk->w <= 1e-12)
					continue;
				mk->res -= x * h[i].coef;
				mk->w -= h[i].coef;
				if (mk->w > 1e-12) {
					double y = share(mm, ml);
					if (y < mm->lh[mk->hpos].key) {
						mm->lh[mk->hpos].key = y;
						lh_up(mm, mk->hpos);
					}
				}
			}
		}
	}
}

/* ---- exactness: every flow has a bottleneck ----
 *
 * An allocation is max-min fair exactly when it is feasible and every flow has a bottleneck: a saturated link
 * on which no flow has a higher rate (Bertsekas & Gallager 6.5.2; with coefficients the same, as filling
 * raises rates, not loads, together). Filling A holds the other flows at their rates, so it is feasible and
 * gives each flow of A a saturated link where no flow of A is faster; what can fail is (a) a flow outside A
 * faster than that share on that link, and (b) a flow outside A whose bottleneck was a link where A's rates
 * moved, which is no longer saturated or now carries a faster flow of A. A flow whose links saw no rate move
 * keeps its bottleneck (the allocation before was exact). Those flows join A and A is filled again, until
 * none is left: A only grows, so this ends, at worst with every flow (a full recompute). The tolerance is the
 * solver's rounding, with room for rates kept within HS_MAXMIN_RATE_EPS of a new one (hs_maxmin_settle). */
#define VTOL 1e-8

static int saturated(const hs_maxmin_link *k, int64_t load)
{
	return (double)load >= k->bw * k->scale * (1 - VTOL);
}

/* A link's load with A at its new rates. */
static int64_t new_load(const hs_maxmin *mm, int l)
{
	const hs_maxmin_lscr *x = &mm->lx[l];
	return x->hpos != -2 ? mm->lk[l].load - x->aload + x->anew : mm->lk[l].load;
}

/* The highest rate on a link now (A at its new rates), once per check. */
static double max_rate(hs_maxmin *mm, int l)
{
	const hs_maxmin_link *k = &mm->lk[l];
	hs_maxmin_lscr *x = &mm->lx[l];
	if (x->mstamp != mm->vstamp) {
		double m = 0;
		for (int j = 0; j < k->n; j++) {
			double r = mm->fl[k->e[j].f].rate;
			m = r > m ? r : m;
		}
		x->mstamp = mm->vstamp;
		x->mrate = m;
	}
	return x->mrate;
}

static int has_bottleneck(hs_maxmin *mm, const hs_maxmin_flow *g)
{
	const hs_maxmin_hop *h = hs_maxmin_hops((hs_maxmin_flow *)g);
	for (int i = 0; i < g->nl; i++) {
		const hs_maxmin_link *k = &mm->lk[h[i].l];
		if (saturated(k, new_load(mm, h[i].l)) && g->rate >= max_rate(mm, h[i].l) * (1 - VTOL))
			return 1;
	}
	return 0;
}

static void join(hs_maxmin *mm, int id, size_t *added)
{
	hs_maxmin_flow *g = &mm->fl[id];
	g->mark = 3; /* in A from the next fill on */
	g->old = g->rate;
	if (mm->naff == mm->capaff)
		hs_xgrow(&mm->aff, &mm->capaff, mm->naff + 1, sizeof *mm->aff);
	mm->aff[mm->naff++] = id;
	(*added)++;
}

/* The flows outside A that the fill left without a bottleneck join A (mark 3); returns how many. */
static size_t check(hs_maxmin *mm)
{
	size_t added = 0;
	mm->vstamp++;
	for (size_t i = 0; i < mm->ninv; i++) {
		hs_maxmin_lscr *k = &mm->lx[mm->inv[i]];
		k->anew = 0;
		k->amo = k->amn = 0;
		k->chg = 0;
	}
	for (size_t a = 0; a < mm->naff; a++) {
		hs_maxmin_flow *f = &mm->fl[mm->aff[a]];
		int moved = fabs(f->rate - f->old) > HS_MAXMIN_RATE_EPS * (f->rate > f->old ? f->rate : f->old);
		const hs_maxmin_hop *h = hs_maxmin_hops(f);
		for (int i = 0; i < f->nl; i++) {
			hs_maxmin_lscr *k = &mm->lx[h[i].l];
			k->anew += hs_maxmin_part(&mm->lk[h[i].l], f->rate, h[i].coef);
			k->chg |= moved;
			k->amo = f->old > k->amo ? f->old : k->amo;
			k->amn = f->rate > k->amn ? f->rate : k->amn;
		}
	}
	/* (a) a bottleneck of A's with a faster flow outside A. The link's bound ub on its flows' rates rules it
	 * out without a visit when it is no more than the share (the flows outside A kept their rates, which it
	 * bounds); a visit makes the bound exact again, counting A's flows at their rates before and after, either
	 * of which they may keep (settle raises it with the rate a flow takes). Before, every such link's flows
	 * were visited: in bench_ep's EP step as many visits as the fills' own. */
	for (int b = 0; b < mm->nbn; b++) {
		hs_maxmin_link *k = &mm->lk[mm->bn[b]];
		double bx = mm->lx[mm->bn[b]].bx;
		if (k->ub <= bx * (1 + VTOL))
			continue;
		double ub = 0;
		for (int j = 0; j < k->n; j++) {
			int id = k->e[j].f;
			const hs_maxmin_flow *g = &mm->fl[id];
			double r = g->mark && g->old > g->rate ? g->old : g->rate;
			ub = r > ub ? r : ub;
			if (!g->mark && g->rate > bx * (1 + VTOL))
				join(mm, id, &added);
		}
		k->ub = ub;
	}
	/* (b) a flow outside A that lost its bottleneck where A's rates moved */
	for (size_t i = 0; i < mm->ninv; i++) {
		int l = mm->inv[i];
		const hs_maxmin_link *k = &mm->lk[l];
		const hs_maxmin_lscr *x = &mm->lx[l];
		if (!x->chg || x->na == k->n)
			continue;
		int was_sat = saturated(k, k->load), is_sat = saturated(k, new_load(mm, l));
		/* nobody's bottleneck; or still saturated with A's fastest no faster than before, so each flow
		 * outside A at the link's top rate before is at it still (omax >= nmax below) */
		if (!was_sat || (is_sat && x->amn <= x->amo))
			continue;
		double nm = 0; /* fastest outside A */
		for (int j = 0; j < k->n; j++) {
			const hs_maxmin_flow *g = &mm->fl[k->e[j].f];
			if (!g->mark && g->rate > nm)
				nm = g->rate;
		}
		double omax = nm > x->amo ? nm : x->amo, nmax = nm > x->amn ? nm : x->amn;
		for (int j = 0; j < k->n; j++) {
			int id = k->e[j].f;
			const hs_maxmin_flow *g = &mm->fl[id];
			if (g->mark || g->rate < omax * (1 - VTOL))
				continue; /* in A, or this link was not its bottleneck */
			if (is_sat && g->rate >= nmax * (1 - VTOL))
				continue; /* still is */
			if (!has_bottleneck(mm, g))
				join(mm, id, &added);
		}
	}
	return added;
}

/* ---- after removals: only the flows that lost their bottleneck ----
 *
 * When flows have only left since the last recompute, no load rose anywhere, so a flow keeps its rate unless
 * it lost its bottleneck, and only a flow on a link a leaving flow left saturated can have lost one (that
 * link is dirty). A flow there that still has a bottleneck, a link saturated at its load now on which its
 * rate is at least the link's bound ub (>= every rate on it), keeps its rate and stays out of A; A is the
 * rest. The exactness check after the fill then brings in whoever A's new rates leave without a bottleneck,
 * as after any fill: the allocation before was max-min, and every flow outside A has a bottleneck that no
 * removal touched or that was checked here. The tolerance (QTOL) is far below the rounding the solver keeps
 * rates at (HS_MAXMIN_RATE_EPS); a bound left high by a faster flow that left only puts a flow in A that
 * might have stayed out. When A is empty nothing moves and there is no fill. In a hashed-ECMP EP step
 * (bench_ep) more than half of the recomputes after a finish move nothing, with two thirds of the flows they
 * visited; A, where a rate does move, is the flows the freed link bound, not every flow crossing it.
 *
 * After arrivals, likewise: a link that a new flow entered and that had capacity to spare (not saturated at
 * the load of the flows already on it; a removal's dirty links are marked so, dirty 2) is nobody's
 * bottleneck, so its rated flows are bound elsewhere and stay out of A; its new flows are in. Should the new
 * flows' rates saturate it, the check after the fill finds the rated flows there faster than its share, and
 * they join A (check (a)). On the NICs of an EP step a pair that starts beside a ring's hops on a link the
 * ring does not fill leaves the ring's flows alone. On a saturated link that only arrivals made dirty, a rated
 * flow below the link's bound ub (so not bound there) that has a bottleneck elsewhere stays out as well; the
 * link's share falling below its rate is again the check's to find.
 *
 * Flows left out are not brought up to now by the caller (their remainders are rounded at other instants),
 * so finish times may differ by a picosecond from a fill over every flow of the dirty links. */
#define QTOL 1e-12

static int bottlenecked(const hs_maxmin *mm, const hs_maxmin_flow *g)
{
	const hs_maxmin_hop *h = hs_maxmin_hops((hs_maxmin_flow *)g);
	for (int i = 0; i < g->nl; i++) {
		const hs_maxmin_link *b = &mm->lk[h[i].l];
		if ((double)b->load >= b->bw * b->scale * (1 - QTOL) && g->rate >= b->ub * (1 - QTOL))
			return 1;
	}
	return 0;
}

/* Whether flow f on dirty link k (dirty: 1 by arrivals only, 2 by a removal; spare: k had capacity to spare)
 * is in A (see above). gone: only removals since the last recompute. */
static int in_a(const hs_maxmin *mm, const hs_maxmin_link *k, const hs_maxmin_flow *f, int gone, int spare)
{
	if (!mm->exact)
		return 1;
	if (gone)
		return !bottlenecked(mm, f);
	if (k->dirty != 1 || f->rate == 0) /* a removal's link, or a new flow */
		return 1;
	return !spare && (f->rate >= k->ub * (1 - QTOL) || !bottlenecked(mm, f));
}

size_t hs_maxmin_round(hs_maxmin *mm)
{
	/* the round before is settled */
	uninvolve(mm);
	if (mm->round == (mm->exact ? 1 : HS_MAXMIN_LEGACY_ROUNDS) || !mm->ndirty) {
		for (int d = 0; d < mm->ndirty; d++)
			mm->lk[mm->dirty[d]].dirty = 0;
		mm->ndirty = 0;
		mm->round = 0;
		mm->added = 0;
		return 0;
	}
	mm->round++;
	/* A: the flows on dirty links; after removals only, those of them left without a bottleneck; on a link
	 * that only arrivals made dirty, the new flows and, where it was saturated, those bound there (above) */
	int gone = mm->exact && !mm->added;
	mm->naff = 0;
	for (int d = 0; d < mm->ndirty; d++) {
		hs_maxmin_link *k = &mm->lk[mm->dirty[d]];
		int spare = (double)k->load < k->bw * k->scale * (1 - QTOL);
		for (int j = 0; j < k->n; j++) {
			hs_maxmin_flow *f = &mm->fl[k->e[j].f];
			if (f->mark || !in_a(mm, k, f, gone, spare))
				continue;
			f->mark = 1;
			f->old = f->rate;
			if (mm->naff == mm->capaff)
				hs_xgrow(&mm->aff, &mm->capaff, mm->naff + 1, sizeof *mm->aff);
			mm->aff[mm->naff++] = k->e[j].f;
		}
		k->dirty = 0;
	}
	mm->ndirty = 0;
	mm->added = 0; /* in A now */
	if (!mm->naff) { /* no flow to fill: nothing moves, and nothing is dirty now */
		mm->quiet += gone;
		mm->round = 0;
		return 0;
	}
	for (;;) {
		fill(mm);
		if (!mm->exact || !check(mm))
			break;
		mm->grows++;
		for (size_t a = 0; a < mm->naff; a++) {
			hs_maxmin_flow *f = &mm->fl[mm->aff[a]];
			f->mark = 1;
			f->rate = f->old;
		}
	}
	return mm->naff;
}

size_t hs_maxmin_recompute(hs_maxmin *mm, hs_finq *fq, hs_time now)
{
	size_t n, inf = 0;
	while ((n = hs_maxmin_round(mm)) > 0)
		for (size_t a = 0; a < n; a++) {
			int id = mm->aff[a];
			hs_maxmin_flow *f = &mm->fl[id];
			f->rem -= f->old * (double)(now - f->t_upd);
			if (f->rem < 0)
				f->rem = 0;
			f->t_upd = now;
			if (!hs_maxmin_settle(mm, f, hs_finq_queued(fq, id)))
				continue;
			hs_time d = hs_time_for(f->rem, f->rate);
			f->t_fin = d > HS_TIME_MAX - now ? HS_TIME_MAX : now + d;
			inf += f->t_fin == HS_TIME_MAX;
			hs_finq_set(fq, id, f->t_fin);
		}
	return inf;
}
