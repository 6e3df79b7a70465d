/* A schedule's walk order and dependencies (sim/exec/pipe_prog.h). */
#include "sim/exec/pipe_prog.h"

#include <stdlib.h>

#include "sim/base/alloc.h"

#define HS_PIPE_PROGS_OPS (1u << 20) /* 28 MB of programs per thread at most, as many items as schedules */

/* The items that compute weight gradients (build.c's weight_item). */
static int weight_item(int k) { return k == HS_SI_BWD || k == HS_SI_BWD_WEIGHT; }

/* What the round-robin needs while it orders the items: per stage [m * v] the program index of each
 * (micro-batch, chunk)'s forward send, backward send and forward (-1: not yet), its position, the position of
 * each chunk's last weight item and each chunk's model chunk. */
struct order {
	const hs_pipe *q;
	int pp;
	int32_t *ends; /* [3 * pp * m * v]: fsend, bsend, ftask */
	size_t *pos, *lastw;
	int *gchunk, *place; /* [pp * v]; [nchunks][2], NULL where a micro-batch moves a chunk */
	hs_pipe_op *op;
	size_t n;
};

static void where(const struct order *o, int mb, int g, int *s, int *k)
{
	if (o->place) {
		*s = o->place[2 * g];
		*k = o->place[2 * g + 1];
	} else {
		hs_sched_place(o->q->sched, o->pp, o->q->v, o->q->m, mb, g, s, k);
	}
}

static int32_t *fsend(const struct order *o, int s) { return o->ends + (size_t)3 * o->q->m * o->q->v * s; }
static int32_t *bsend(const struct order *o, int s) { return fsend(o, s) + (size_t)o->q->m * o->q->v; }
static int32_t *ftask(const struct order *o, int s) { return bsend(o, s) + (size_t)o->q->m * o->q->v; }

/* Stage s's next item into the program, as pipe_step.c's walk takes it (emit_item's tasks): 1, or 0 where it
 * waits for a neighbour's send not made yet. */
static int next(struct order *o, int s)
{
	const hs_pipe *q = o->q;
	int v = q->v;
	hs_sched_item it = q->items[s][o->pos[s]];
	int idx = it.mb * v + it.chunk, gchunk = o->gchunk[s * v + it.chunk], fwd = it.kind == HS_SI_FWD;
	hs_pipe_op p = {.need = -1, .fwd = -1, .inc = (uint32_t)((s * v + it.chunk) * 4 + it.kind), .mb = it.mb,
			.s = (uint16_t)s, .chunk = (uint16_t)it.chunk, .kind = (uint8_t)it.kind};
	int waits = 0;
	if (fwd && gchunk > 0) {
		int ps, pc;
		where(o, it.mb, gchunk - 1, &ps, &pc);
		p.need = fsend(o, ps)[it.mb * v + pc];
		waits = 1;
	} else if ((it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_INPUT) && gchunk < q->nchunks - 1) {
		int ns, nc;
		where(o, it.mb, gchunk + 1, &ns, &nc);
		p.need = bsend(o, ns)[it.mb * v + nc];
		waits = 1;
	}
	if (waits && p.need < 0)
		return 0;
	if (waits)
		p.needx = o->op[p.need].sendx;
	int32_t self = (int32_t)o->n;
	if (fwd)
		ftask(o, s)[idx] = self;
	else
		p.fwd = ftask(o, s)[idx];
	if (weight_item(it.kind) && o->lastw[s * v + it.chunk] == o->pos[s])
		p.flags |= HS_PO_LAST_WEIGHT;
	if (fwd ? gchunk < q->nchunks - 1 : (it.kind != HS_SI_BWD_WEIGHT && gchunk > 0)) {
		int ts, tc;
		where(o, it.mb, fwd ? gchunk + 1 : gchunk - 1, &ts, &tc);
		p.flags |= HS_PO_SENDS;
		p.to = (uint16_t)ts;
		p.sendx = (uint32_t)s * (uint32_t)o->pp + (uint32_t)ts;
		(fwd ? fsend(o, s) : bsend(o, s))[idx] = self;
	}
	o->op[o->n++] = p;
	o->pos[s]++;
	return 1;
}

/* Number p's items by stage, and name the items they wait for by those numbers. */
static void number(hs_pipe_prog *p, int pp)
{
	p->first = hs_xcalloc((size_t)pp + 1, sizeof *p->first);
	p->byat = hs_xmalloc((p->n ? p->n : 1) * sizeof *p->byat);
	for (size_t i = 0; i < p->n; i++)
		p->first[p->op[i].s + 1]++;
	for (int s = 0; s < pp; s++)
		p->first[s + 1] += p->first[s];
	uint32_t *next = hs_xmalloc((size_t)pp * sizeof *next);
	for (int s = 0; s < pp; s++)
		next[s] = p->first[s];
	for (size_t i = 0; i < p->n; i++) {
		hs_pipe_op *o = &p->op[i];
		o->at = next[o->s]++;
		p->byat[o->at] = (uint32_t)i;
		/* what it waits for comes before it: numbered already */
		if (o->need >= 0)
			o->need = (int32_t)p->op[o->need].at;
		if (o->fwd >= 0)
			o->fwd = (int32_t)p->op[o->fwd].at;
	}
	free(next);
}

hs_pipe_prog *hs_pipe_prog_make(const hs_pipe *q, int pp)
{
	int v = q->v;
	if (pp < 1 || pp >= UINT16_MAX || v < 1 || v > UINT16_MAX || q->nchunks < 1)
		return NULL;
	size_t total = 0, nmc = (size_t)q->m * v;
	for (int s = 0; s < pp; s++)
		total += q->nitems[s];
	if (total > INT32_MAX)
		return NULL;
	size_t nends = 3 * nmc * (size_t)pp;
	struct order o = {.q = q, .pp = pp, .ends = hs_xmalloc((nends ? nends : 1) * sizeof *o.ends),
			  .pos = hs_xcalloc((size_t)pp, sizeof *o.pos), .lastw = hs_xcalloc((size_t)pp * v, sizeof *o.lastw),
			  .gchunk = hs_xmalloc((size_t)pp * v * sizeof *o.gchunk),
			  .op = hs_xmalloc((total ? total : 1) * sizeof *o.op)};
	for (size_t i = 0; i < nends; i++)
		o.ends[i] = -1;
	for (int s = 0; s < pp; s++) {
		for (size_t i = 0; i < q->nitems[s]; i++)
			if (weight_item(q->items[s][i].kind))
				o.lastw[s * v + q->items[s][i].chunk] = i;
		for (int k = 0; k < v; k++)
			o.gchunk[s * v + k] = hs_sched_chunk_of(q->sched, pp, v, s, k);
	}
	if (!hs_sched_place_by_mb(q->sched)) {
		o.place = hs_xmalloc(2 * (size_t)q->nchunks * sizeof *o.place);
		for (int g = 0; g < q->nchunks; g++)
			hs_sched_place(q->sched, pp, v, q->m, 0, g, &o.place[2 * g], &o.place[2 * g + 1]);
	}
	int progress = 1;
	while (progress) {
		progress = 0;
		for (int s = 0; s < pp; s++)
			while (o.pos[s] < q->nitems[s] && next(&o, s))
				progress = 1;
	}
	hs_pipe_prog *p = hs_xmalloc(sizeof *p);
	*p = (hs_pipe_prog){.op = o.op, .n = o.n, .stuck = o.n < total};
	number(p, pp);
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
