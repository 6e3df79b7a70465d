/* A schedule's walk order and dependencies (sim/exec/pipe_prog.h). */
#include "sim/exec/pipe_prog.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

#define HS_PIPE_PROGS_OPS (1u << 20) /* 28 MB of programs per thread at most, as many items as schedules */

/* The items that compute weight gradients (build.c's weight_item). */
static int weight_item(int k) { return k == HS_SI_BWD || k == HS_SI_BWD_WEIGHT; }

/* What the round-robin needs while it orders the items. Items are numbered by stage from the start (first[s]
 * + position), so that what an item waits for is named by those numbers as the item is ordered. */
struct order {
	const hs_pipe *q;
	int pp, v;
	size_t nmc;       /* m * v */
	int32_t *ends;    /* [pp][2][m * v] by stage, the number of each (micro-batch, chunk)'s forward send and
			   * backward send (-1: not yet) */
	uint32_t *pos;    /* [pp] each stage's next position */
	size_t *lastw;    /* [pp * v] position of each chunk's last weight item */
	int *gchunk;      /* [pp * v] the model chunk of each (stage, chunk) */
	int *place;       /* [nchunks][2] where each model chunk runs */
	hs_pipe_prog *p;
};

/* Where model chunk g runs: its (stage, chunk), the same for every micro-batch (hs_pipe_prog_make takes no
 * other schedule). */
static inline void where(const struct order *o, int g, int *s, int *k)
{
	*s = o->place[2 * g];
	*k = o->place[2 * g + 1];
}

enum { FSEND, BSEND };
static int32_t *end_of(const struct order *o, int s, int which, int mb, int chunk)
{
	return &o->ends[((size_t)s * 2 + which) * o->nmc + (size_t)mb * o->v + chunk];
}

/* Stage s's next item into the program, as pipe_step.c's walk takes it (emit_item's tasks): 1, or 0 where it
 * waits for a neighbour's send not made yet. */
static int next(struct order *o, int s)
{
	const hs_pipe *q = o->q;
	uint32_t pos = o->pos[s];
	hs_sched_item it = q->items[s][pos];
	int gchunk = o->gchunk[s * o->v + it.chunk], fwd = it.kind == HS_SI_FWD, ns, nc;
	int32_t need = -1;
	if (fwd && gchunk > 0) {
		where(o, gchunk - 1, &ns, &nc);
		if ((need = *end_of(o, ns, FSEND, it.mb, nc)) < 0)
			return 0;
	} else if ((it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_INPUT) && gchunk < q->nchunks - 1) {
		where(o, gchunk + 1, &ns, &nc);
		if ((need = *end_of(o, ns, BSEND, it.mb, nc)) < 0)
			return 0;
	}
	hs_pipe_prog *p = o->p;
	uint32_t at = p->first[s] + pos;
	hs_pipe_op *op = &p->op[p->n];
	*op = (hs_pipe_op){.need = need, .at = at, .inc = (uint32_t)((s * o->v + it.chunk) * 4 + it.kind),
			   .mb = it.mb, .s = (uint16_t)s, .chunk = (uint16_t)it.chunk, .kind = (uint8_t)it.kind};
	if (need >= 0) /* the send's from the stage ns to this one */
		op->needx = (uint32_t)ns * (uint32_t)o->pp + (uint32_t)s;
	if ((it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_WEIGHT) && o->lastw[s * o->v + it.chunk] == pos)
		op->flags |= HS_PO_LAST_WEIGHT;
	if (fwd ? gchunk < q->nchunks - 1 : (it.kind != HS_SI_BWD_WEIGHT && gchunk > 0)) {
		int ts, tc;
		where(o, fwd ? gchunk + 1 : gchunk - 1, &ts, &tc);
		op->flags |= HS_PO_SENDS;
		op->to = (uint16_t)ts;
		op->sendx = (uint32_t)s * (uint32_t)o->pp + (uint32_t)ts;
		*end_of(o, s, fwd ? FSEND : BSEND, it.mb, it.chunk) = (int32_t)at;
	}
	p->byat[at] = (uint32_t)p->n++;
	o->pos[s] = pos + 1;
	return 1;
}

/* p->first_use: a (stage, chunk, kind) counts twice, as a chunk's last weight item (whose cost is its bucket
 * slices') and as any other. */
static void first_uses(hs_pipe_prog *p, int pp, int v)
{
	size_t nk = (size_t)pp * v * 4;
	unsigned char *seen = hs_xcalloc(2 * nk + (size_t)pp * pp, 1), *sent = seen + 2 * nk;
	p->first_use = hs_xmalloc((p->n ? p->n : 1) * sizeof *p->first_use);
	p->nfirst = 0;
	for (size_t i = 0; i < p->n; i++) {
		const hs_pipe_op *o = &p->op[i];
		unsigned char *k = &seen[2 * o->inc + (o->flags & HS_PO_LAST_WEIGHT ? 1 : 0)];
		int first = !*k || (o->flags & HS_PO_SENDS && !sent[o->sendx]);
		*k = 1;
		if (o->flags & HS_PO_SENDS)
			sent[o->sendx] = 1;
		if (first)
			p->first_use[p->nfirst++] = (uint32_t)i;
	}
	free(seen);
}

/* Does item b repeat item a, a period on (hs_pipe_period: the same stage, kind, chunk, cost and sends, its
 * numbers by stage and those of what it waits for moved on by their stages' shifts sh)? */
static int repeats(const hs_pipe_op *a, const hs_pipe_op *b, const uint32_t *sh, int pp)
{
	if (a->s != b->s || a->kind != b->kind || a->chunk != b->chunk || a->inc != b->inc || a->flags != b->flags ||
	    a->to != b->to || a->sendx != b->sendx || a->needx != b->needx || b->at != a->at + sh[a->s])
		return 0;
	if ((a->need < 0) != (b->need < 0) || (a->need >= 0 && (uint32_t)b->need != (uint32_t)a->need + sh[a->needx / pp]))
		return 0;
	return 1;
}

/* Items per period len from the program's middle item on: the shifts into sh; 0 where len is not a period
 * there. */
static int period_at(const hs_pipe_prog *p, int pp, size_t mid, size_t len, uint32_t *sh)
{
	memset(sh, 0, (size_t)pp * sizeof *sh);
	for (size_t i = mid; i < mid + len; i++) {
		const hs_pipe_op *a = &p->op[i], *b = &p->op[i + len];
		if (a->s != b->s || b->at <= a->at || (sh[a->s] && sh[a->s] != b->at - a->at))
			return 0;
		sh[a->s] = b->at - a->at;
	}
	for (size_t i = mid; i < mid + len; i++)
		if (!repeats(&p->op[i], &p->op[i + len], sh, pp))
			return 0;
	return 1;
}

/* The longest stretch of p that repeats (hs_pipe_period), found around the middle of the program: where a
 * pipeline's steady state is, if it has one. */
static void find_period(hs_pipe_prog *p, int pp)
{
	hs_pipe_period *pe = &p->per;
	size_t n = p->n, mid = n / 2, len = 0;
	if (p->stuck || n < 16)
		return;
	uint32_t *sh = hs_xcalloc((size_t)pp, sizeof *sh);
	for (size_t l = 1; mid + 2 * l <= n && l <= n / 4 && !len; l++) {
		const hs_pipe_op *a = &p->op[mid], *b = &p->op[mid + l];
		if (a->s == b->s && a->inc == b->inc && a->flags == b->flags && period_at(p, pp, mid, l, sh))
			len = l;
	}
	size_t start = mid, end = mid + len;
	while (len && start > 0 && repeats(&p->op[start - 1], &p->op[start - 1 + len], sh, pp))
		start--;
	while (len && end < n && repeats(&p->op[end - len], &p->op[end], sh, pp))
		end++;
	size_t count = len ? (end - start) / len : 0;
	end = start + count * len;
	/* how far back the stretch's items read (from its second period on), and the items after it into it */
	int near = 1;
	for (size_t i = start + len; count && near && i < n; i++) {
		const hs_pipe_op *o = &p->op[i];
		if (o->need < 0)
			continue;
		size_t at = p->byat[o->need];
		near = i < end ? i - at <= len : at < start || at >= end || at + len >= end;
	}
	if (!len || !near || count < 4 || count > UINT32_MAX) {
		free(sh);
		return;
	}
	/* each stage's items of a period are consecutive numbers by stage, so many as its shift */
	pe->at0 = hs_xmalloc((size_t)pp * sizeof *pe->at0);
	pe->sends = hs_xcalloc((size_t)pp, 1);
	uint32_t *seen = hs_xcalloc((size_t)pp, sizeof *seen);
	int ok = 1;
	for (size_t i = start; i < start + len; i++) {
		const hs_pipe_op *o = &p->op[i];
		if (!seen[o->s])
			pe->at0[o->s] = o->at;
		ok &= o->at == pe->at0[o->s] + seen[o->s]++;
		pe->sends[o->s] |= (o->flags & HS_PO_SENDS) != 0;
	}
	for (int s = 0; s < pp; s++)
		ok &= seen[s] == sh[s];
	free(seen);
	if (!ok) {
		free(sh);
		free(pe->at0);
		free(pe->sends);
		*pe = (hs_pipe_period){0};
		return;
	}
	*pe = (hs_pipe_period){.start = (uint32_t)start, .len = (uint32_t)len, .count = (uint32_t)count, .shift = sh,
			       .at0 = pe->at0, .sends = pe->sends};
}

hs_pipe_prog *hs_pipe_prog_make(const hs_pipe *q, int pp)
{
	int v = q->v;
	if (pp < 1 || pp >= UINT16_MAX || v < 1 || v > UINT16_MAX || q->nchunks < 1 || hs_sched_place_by_mb(q->sched))
		return NULL;
	size_t total = 0, nmc = (size_t)q->m * v;
	for (int s = 0; s < pp; s++)
		total += q->nitems[s];
	if (total > INT32_MAX)
		return NULL;
	hs_pipe_prog *p = hs_xmalloc(sizeof *p);
	*p = (hs_pipe_prog){.op = hs_xmalloc((total ? total : 1) * sizeof *p->op),
			    .first = hs_xmalloc(((size_t)pp + 1) * sizeof *p->first),
			    .byat = hs_xmalloc((total ? total : 1) * sizeof *p->byat)};
	p->first[0] = 0;
	for (int s = 0; s < pp; s++)
		p->first[s + 1] = p->first[s] + (uint32_t)q->nitems[s];
	size_t nends = 2 * nmc * (size_t)pp;
	struct order o = {.q = q, .pp = pp, .v = v, .nmc = nmc, .ends = hs_xmalloc((nends ? nends : 1) * sizeof *o.ends),
			  .pos = hs_xcalloc((size_t)pp, sizeof *o.pos), .lastw = hs_xcalloc((size_t)pp * v, sizeof *o.lastw),
			  .gchunk = hs_xmalloc((size_t)pp * v * sizeof *o.gchunk), .p = p};
	for (size_t i = 0; i < nends; i++)
		o.ends[i] = -1;
	for (int s = 0; s < pp; s++) {
		for (size_t i = 0; i < q->nitems[s]; i++)
			if (weight_item(q->items[s][i].kind))
				o.lastw[s * v + q->items[s][i].chunk] = i;
		for (int k = 0; k < v; k++)
			o.gchunk[s * v + k] = hs_sched_chunk_of(q->sched, pp, v, s, k);
	}
	o.place = hs_xmalloc(2 * (size_t)q->nchunks * sizeof *o.place);
	for (int g = 0; g < q->nchunks; g++)
		hs_sched_place(q->sched, pp, v, q->m, 0, g, &o.place[2 * g], &o.place[2 * g + 1]);
	int progress = 1;
	while (progress) {
		progress = 0;
		for (int s = 0; s < pp; s++)
			if (o.pos[s] < q->nitems[s] && next(&o, s))
				progress = 1;
	}
	p->stuck = p->n < total;
	first_uses(p, pp, v);
	find_period(p, pp);
	free(o.ends);
	free(o.pos);
	free(o.lastw);
	free(o.gchunk);
	free(o.place);
	return p;
}

void hs_pipe_prog_free(hs_pipe_prog *p)
{
	if (p) {
		free(p->op);
		free(p->first);
		free(p->byat);
		free(p->first_use);
		free(p->per.shift);
		free(p->per.at0);
		free(p->per.sends);
		free(p);
	}
}

/* A handful of schedules per sweep: a list searched linearly, as the schedule cache's. */
struct entry {
	hs_sched_item *const *items; /* the schedule cache's (the key: it names the schedule) */
	int sched, pp, v, m, nchunks;
	hs_pipe_prog *p;
};

struct hs_pipe_progs {
	struct entry *e;
	size_t n, cap;
	size_t ops; /* held in all */
};

hs_pipe_progs *hs_pipe_progs_create(void) { return hs_xcalloc(1, sizeof(hs_pipe_progs)); }

void hs_pipe_progs_free(hs_pipe_progs *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		hs_pipe_prog_free(c->e[i].p);
	free(c->e);
	free(c);
}

const hs_pipe_prog *hs_pipe_progs_get(hs_pipe_progs *c, const hs_pipe *q, int pp)
{
	if (!c || q->own_items)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct entry *e = &c->e[i];
		if (e->items == q->items && e->sched == q->sched && e->pp == pp && e->v == q->v && e->m == q->m &&
		    e->nchunks == q->nchunks)
			return e->p;
	}
	if (c->ops >= HS_PIPE_PROGS_OPS)
		return NULL;
	hs_pipe_prog *p = hs_pipe_prog_make(q, pp);
	if (!p)
		return NULL;
	hs_xgrow(&c->e, &c->cap, c->n + 1, sizeof *c->e);
	c->e[c->n++] = (struct entry){.items = q->items, .sched = q->sched, .pp = pp, .v = q->v, .m = q->m,
				      .nchunks = q->nchunks, .p = p};
	c->ops += p->n;
	return p;
}
