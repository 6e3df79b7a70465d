/* A schedule's walk order and dependencies (sim/exec/pipe_prog.h). */
#include "sim/exec/pipe_prog.h"

#include <stdlib.h>

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
	int32_t *ends;    /* [pp][3][m * v] by stage, the number of each (micro-batch, chunk)'s forward send, backward
			   * send and forward (-1: not yet) */
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

enum { FSEND, BSEND, FTASK };
static int32_t *end_of(const struct order *o, int s, int which, int mb, int chunk)
{
	return &o->ends[((size_t)s * 3 + which) * o->nmc + (size_t)mb * o->v + chunk];
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
	*op = (hs_pipe_op){.need = need, .fwd = -1, .at = at, .inc = (uint32_t)((s * o->v + it.chunk) * 4 + it.kind),
			   .mb = it.mb, .s = (uint16_t)s, .chunk = (uint16_t)it.chunk, .kind = (uint8_t)it.kind};
	if (need >= 0) /* the send's from the stage ns to this one */
		op->needx = (uint32_t)ns * (uint32_t)o->pp + (uint32_t)s;
	int32_t *ft = end_of(o, s, FTASK, it.mb, it.chunk);
	if (fwd)
		*ft = (int32_t)at;
	else
		op->fwd = *ft;
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
	size_t nends = 3 * nmc * (size_t)pp;
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
			while (o.pos[s] < q->nitems[s] && next(&o, s))
				progress = 1;
	}
	p->stuck = p->n < total;
	first_uses(p, pp, v);
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
