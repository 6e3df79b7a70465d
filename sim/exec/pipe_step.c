/* The closed-form pipeline step: a step timed from its stages' schedule items (hs_build.pipe) without a task
 * graph, for sweeps, where building and walking ~3,400 tasks per point cost ~1,000 instructions a task.
 *
 * It is closed_step.c's recurrence, start = max(stream free, dependencies' ends), end = start + duration,
 * evaluated on the tasks the build would make, as they would be made: emit_item (models/build.c) turns a
 * schedule item into a compute task, sliced by gradient bucket when it finalises its chunk's gradients, a
 * reduction per slice on the comm stream, and a send to the neighbour stage on the p2p stream; the forward of a
 * chunk waits for the previous chunk's send of that micro-batch, a backward for the next chunk's send and its own
 * forward; finish_rep adds the optimizer after the last compute and every reduction, and ZeRO 1-2's all-gather
 * of the updated parameters. A rep's tasks of one stream run in the order they are made, which is the order of
 * its items, and the stages advance round-robin while what an item needs exists, as the build walks them, so
 * one pass over the items evaluates the recurrence: O(items), a few dozen instructions each, no task stored.
 *
 * Exactness. Durations come from the same functions at the same arguments as closed_step.c's (the op-range
 * costs, hs_time_from_s of the same seconds, the closed forms' times of the same tasks), the waits are charged
 * by the same rule (the dependency that completed last, the first of equal ones; exec.c), and the sums are
 * added per rep in the same order, so the result is the closed step's, which is the event run's. Where two
 * dependencies of different charge end at the same instant the event run's order decides: the walk stops and
 * the caller plans the task graph (HS_EXEC_NEEDS_GRAPH). The build gives items only where emit_item and
 * finish_rep add nothing else (hs_build_step_items). No timeline is kept (hs_result.spans has no task): what a
 * sweep's row needs is the step's figures. tests/unit/exec/test_closed_step.c compares the walk with the event
 * run on every point of a layout space it applies to (every schedule it takes, ZeRO 0-2, tied embeddings on one
 * stage), and bench_sweep its rows with the graph's closed form on a 2,160-point space. */
#include <math.h>
#include <stdlib.h>

#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

#define NONE ((hs_time)-1) /* no such task (yet) */
#define NOKIND (-1)

/* What a compute task's wait is charged to: the dependency that completed last (exec.c, begin()). */
struct cause {
	int kind;      /* enum hs_task_kind, NOKIND: no dependency */
	double xfer_s; /* HS_T_SEND: its transfer's seconds */
};

/* What one compute task of a (chunk, kind, share) adds to its rep's result, as hs_exec_add_compute and
 * closed_step.c's pass 2 add it: the products formed once (the same products, so the same sums). Every class
 * and group is added, the zero terms too: a sum that starts at +0.0 and adds terms that are zero or positive is
 * never -0.0, and x + 0.0 is x for every other x, so the sums' bits are those of adding the nonzero terms only,
 * in fewer instructions than a loop over the nonzero ones (add5). */
struct inc {
	hs_time dur;
	double comp, flops;
	double cls[HS_TC_COUNT], comm[HS_GROUP_COUNT];
};

static void inc_of(struct inc *a, const struct memo *m, double scale)
{
	double f = scale * 1.0;
	*a = (struct inc){.comp = m->c.comp * f, .flops = m->c.flops * scale};
	double d = m->c.comp * f; /* closed_step.c's compute_s */
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		d += m->c.comm[k] * scale;
	a->dur = hs_time_from_s(d);
	for (int k = 0; k < HS_TC_COUNT; k++)
		a->cls[k] = m->c.cls[k] * f;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		a->comm[k] = m->c.comm[k] * scale;
}

/* d[0..4] += s[0..4], written out: a loop of five was not unrolled at -O2, and cost more than the indexed
 * loops over the nonzero terms it replaced. */
_Static_assert(HS_TC_COUNT == 5 && HS_GROUP_COUNT == 5, "add5 adds five classes and five groups");
static inline void add5(double *restrict d, const double *restrict s)
{
	d[0] += s[0];
	d[1] += s[1];
	d[2] += s[2];
	d[3] += s[3];
	d[4] += s[4];
}

/* A communication task's seconds (NAN: not asked yet) and its duration, converted once. */
struct xfer {
	double s;
	hs_time dur;
};

struct stage {
	const hs_sched_item *it;
	size_t n, pos;
	hs_time cfree, mfree, pfree; /* compute, comm and p2p streams free */
	hs_time idle;                /* end of the last compute task (the accounting's idle mark) */
	hs_time last_end;
	hs_time *fsend, *bsend, *ftask; /* [m * v] ends of a (micro-batch, chunk)'s sends and forward; NONE */
	double *fsx, *bsx;              /* [m * v] those sends' seconds */
	size_t *last_weight;            /* [v] position of the chunk's last weight-gradient item */
	int any_compute;
	hs_time last_compute;
	hs_time *buckets;               /* ends of the step's gradient reductions, in order */
	size_t nbuckets;
	/* [v][kind] the op range's memo index + 1 (0: not timed yet), and the durations at share 1 and at one
	 * bucket slice */
	/* the seconds of a send to each stage and of each chunk's bucket reduction (NAN: not asked yet): the closed
	 * forms' answer depends on nothing else (comm_closed.c), and asking per task was a third of the walk */
	struct xfer *send_s, *bucket_s;
	uint32_t (*mi)[4];
	/* [v][kind][sliced] dur NONE until formed (a flag of its own was 1% of a point's instructions; a duration
	 * of HS_TIME_MAX, which reads as NONE, is formed again each time, to the same value) */
	struct inc (*inc)[4][2];
	int *gchunk;                    /* [v] the model chunk of each local chunk */
};

struct walk {
	struct ex *x;
	const hs_pipe *q;
	struct stage *st;
	int pp;
	hs_time t0;
	int *place;     /* [nchunks][2] the (stage, chunk) of each model chunk where no micro-batch moves it; else NULL */
};

/* Where model chunk g of micro-batch mb runs (hs_sched_place). */
static inline void place(const struct walk *w, int mb, int g, int *s, int *k)
{
	if (w->place) {
		*s = w->place[2 * g];
		*k = w->place[2 * g + 1];
	} else {
		hs_sched_place(w->q->sched, w->pp, w->q->v, w->q->m, mb, g, s, k);
	}
}

/* The items that compute weight gradients (build.c's weight_item). */
static int weight_item(enum hs_si_kind k) { return k == HS_SI_BWD || k == HS_SI_BWD_WEIGHT; }

/* Would a wait caused by a be charged as one caused by b? (closed_step.c's same_charge; the only collective
 * a compute task here waits for is a data-parallel reduction) */
static int same_charge(const struct cause *a, const struct cause *b)
{
	if (a->kind != b->kind)
		return 0;
	return a->kind == HS_T_SEND ? a->xfer_s == b->xfer_s : 1;
}

/* Fold dependency end e of charge c into (ready, cause, tie), as closed_step.c's pass 1 does. */
static void dep(hs_time e, struct cause c, hs_time *ready, struct cause *cause, int *tie)
{
	if (cause->kind == NOKIND || e > *ready) {
		*ready = e > *ready ? e : *ready;
		*cause = c;
		*tie = 0;
	} else if (e == *ready && !same_charge(cause, &c)) {
		*tie = 1;
	}
}

/* The memo of stage s's op range [first, first + count). */
static const struct memo *range(struct walk *w, int s, const uint32_t ol[2], uint32_t *slot)
{
	if (!*slot)
		*slot = hs_exec_range_index(w->x, &w->x->reps[s], s, ol[0], ol[1]) + 1;
	return &w->x->memo[*slot - 1];
}

/* Run a compute task of stage s (the optimizer's where `opt`) adding *a, ready at `ready` with `cause`.
 * Returns its end, or NONE where a tie leaves the charge to the event run's order. Inline, as comm() is: the
 * walk makes them per task, and gcc -O2 kept both out of line, their calls 7% of a sweep point's instructions
 * (bench_sweep --callgrind, 2026-12-02). */
static inline hs_time compute(struct walk *w, int s, int opt, const struct inc *a, hs_time ready, const struct cause *cause,
		       int tie)
{
	struct ex *x = w->x;
	struct stage *st = &w->st[s];
	hs_time start = ready > st->cfree ? ready : st->cfree;
	if (tie && start > st->cfree)
		return NONE;
	hs_time end = start + a->dur;
	struct rep *r = &x->reps[s];
	hs_rep_result *res = r->res;
	res->compute_s += a->comp;
	if (opt)
		res->optimizer_s += a->comp;
	add5(res->class_s, a->cls);
	res->flops += a->flops;
	add5(res->exposed_s, a->comm);
	/* idle is cfree here (both are the last compute's end): no wait, no gap to charge (it would be 0) */
	if (start > st->idle)
		hs_exec_charge(r, cause->kind, HS_GROUP_DP, cause->xfer_s,
			       hs_exec_step_s(x, start) - hs_exec_step_s(x, st->idle));
	st->idle = end;
	st->cfree = end;
	if (end > st->last_end)
		st->last_end = end;
	st->any_compute = 1;
	st->last_compute = end;
	return end;
}

/* A communication task t of stage s on stream end *free after `ready`; its seconds kept in *memo (t is only
 * read when *memo is not set yet). */
static inline hs_time comm(struct walk *w, int s, const hs_task *t, hs_time ready, hs_time *free_at, struct xfer *memo)
{
	struct stage *st = &w->st[s];
	if (isnan(memo->s)) {
		memo->s = hs_exec_comm_closed_task(w->x, t);
		memo->dur = hs_time_from_s(memo->s);
	}
	hs_time start = ready > *free_at ? ready : *free_at;
	hs_time end = start + memo->dur;
	*free_at = end;
	if (end > st->last_end)
		st->last_end = end;
	return end;
}

/* Stage s's next item, as emit_item makes its tasks: 1 done, 0 waiting for a neighbour's send, -1 a tie. */
static int item(struct walk *w, int s)
{
	const hs_pipe *q = w->q;
	struct stage *st = &w->st[s];
	int v = q->v;
	hs_sched_item it = st->it[st->pos];
	int idx = it.mb * v + it.chunk;
	int gchunk = st->gchunk[it.chunk];
	int fwd = it.kind == HS_SI_FWD;
	hs_time need = NONE;
	struct cause nc = {HS_T_SEND, 0};
	if (fwd && gchunk > 0) {
		int ps, pc;
		place(w, it.mb, gchunk - 1, &ps, &pc);
		need = w->st[ps].fsend[it.mb * v + pc];
		nc.xfer_s = w->st[ps].fsx[it.mb * v + pc];
		if (need == NONE)
			return 0;
	} else if ((it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_INPUT) && gchunk < q->nchunks - 1) {
		int ns, ncn;
		place(w, it.mb, gchunk + 1, &ns, &ncn);
		need = w->st[ns].bsend[it.mb * v + ncn];
		nc.xfer_s = w->st[ns].bsx[it.mb * v + ncn];
		if (need == NONE)
			return 0;
	}
	int sidx = s * v + it.chunk;
	int finalises = q->reduce && weight_item(it.kind) && st->last_weight[it.chunk] == st->pos;
	int nslices = finalises ? q->nslices[sidx] : 1;
	int sl1 = nslices > 1;
	struct inc *a = &st->inc[it.chunk][it.kind][sl1];
	if (a->dur == NONE)
		inc_of(a, range(w, s, q->ol[sidx][it.kind], &st->mi[it.chunk][it.kind]), 1.0 / nslices);
	hs_time end = NONE;
	for (int sl = 0; sl < nslices; sl++) {
		hs_time ready = w->t0;
		struct cause cause = {NOKIND, 0};
		int tie = 0;
		if (sl == 0) {
			if (need != NONE)
				dep(need, nc, &ready, &cause, &tie);
			if (!fwd && st->ftask[idx] != NONE)
				dep(st->ftask[idx], (struct cause){HS_T_COMPUTE, 0}, &ready, &cause, &tie);
		}
		end = compute(w, s, 0, a, ready, &cause, tie);
		if (end == NONE)
			return -1;
		if (finalises) {
			hs_task cl = {.kind = HS_T_COLL, .group = HS_GROUP_DP, .coll = (uint8_t)q->grad_coll, .rep = s,
				      .peer = -1, .bytes = q->bucket_bytes[sidx], .rendezvous = -1};
			st->buckets[st->nbuckets++] = comm(w, s, &cl, end, &st->mfree, &st->bucket_s[it.chunk]);
		}
	}
	if (fwd)
		st->ftask[idx] = end;
	int sends = fwd ? gchunk < q->nchunks - 1 : (it.kind != HS_SI_BWD_WEIGHT && gchunk > 0);
	if (sends) {
		int tg = fwd ? gchunk + 1 : gchunk - 1, ts, tc;
		place(w, it.mb, tg, &ts, &tc);
		hs_time e;
		struct xfer *xm = &st->send_s[ts];
		if (isnan(xm->s)) {
			hs_task t = {.kind = HS_T_SEND, .stream = HS_S_P2P, .what = HS_W_P2P, .rep = s, .peer = ts,
				     .mb = it.mb, .chunk = it.chunk, .bytes = q->act_bytes, .rendezvous = -1};
			e = comm(w, s, &t, end, &st->pfree, xm);
		} else {
			e = comm(w, s, NULL, end, &st->pfree, xm);
		}
		double xs = xm->s;
		if (fwd) {
			st->fsend[idx] = e;
			st->fsx[idx] = xs;
		} else {
			st->bsend[idx] = e;
			st->bsx[idx] = xs;
		}
	}
	st->pos++;
	return 1;
}

/* finish_rep: the optimizer after the last compute and every reduction, then ZeRO 1-2's gather. 0, or -1 at
 * a tie. */
static int finish(struct walk *w, int s)
{
	const hs_pipe *q = w->q;
	struct stage *st = &w->st[s];
	hs_time ready = w->t0;
	struct cause cause = {NOKIND, 0};
	int tie = 0;
	if (st->any_compute)
		dep(st->last_compute, (struct cause){HS_T_COMPUTE, 0}, &ready, &cause, &tie);
	for (size_t b = 0; b < st->nbuckets; b++)
		dep(st->buckets[b], (struct cause){HS_T_COLL, 0}, &ready, &cause, &tie);
	uint32_t slot = 0;
	struct inc a;
	inc_of(&a, range(w, s, q->opt[s], &slot), 1.0);
	hs_time end = compute(w, s, 1, &a, ready, &cause, tie);
	if (end == NONE)
		return -1;
	if (q->gather_bytes[s] > 0) {
		hs_task ag = {.kind = HS_T_COLL, .group = HS_GROUP_DP, .coll = HS_COLL_ALL_GATHER, .rep = s, .peer = -1,
			      .bytes = q->gather_bytes[s], .rendezvous = -1};
		struct xfer memo = {NAN, 0};
		comm(w, s, &ag, end, &st->mfree, &memo);
	}
	return 0;
}

int hs_exec_items_ok(const hs_workload *w, const hs_simopts *o)
{
	if (o->fidelity != HS_FID_ANALYTICAL || o->record_links || o->record_inlayer || !o->closed_form)
		return 0;
	if (w->var->nrules || w->var->noise != HS_NOISE_NONE || (w->var->steps > 1))
		return 0;
	if (w->par->routing.skew > 0 && w->model->experts > 0) /* hs_exec_routing_load scales the routed work */
		return 0;
	return 1;
}

const char *hs_exec_pipe_step(struct ex *x, hs_result *out)
{
	/* closed_step.c's pattern (the build gave items only where nothing else breaks it) */
	const char *why = hs_exec_closed_pattern(x, out);
	if (why)
		return why;
	const hs_pipe *q = x->b->pipe;
	int pp = x->g->nreps, v = q->v;
	struct walk w = {.x = x, .q = q, .pp = pp, .t0 = hs_engine_now(x->eng)};
	x->step_start = w.t0;
	size_t nmc = (size_t)q->m * v;
	if (!hs_sched_place_by_mb(q->sched)) {
		w.place = hs_xmalloc(2 * (size_t)q->nchunks * sizeof *w.place);
		for (int g = 0; g < q->nchunks; g++)
			hs_sched_place(q->sched, pp, v, q->m, 0, g, &w.place[2 * g], &w.place[2 * g + 1]);
	}
	w.st = hs_xcalloc((size_t)pp, sizeof *w.st);
	/* every stage's arrays in one block each (ten allocations a stage were 2% of a sweep point); the sends'
	 * seconds are read only where their end was written, so they start unset */
	hs_time *ends = hs_xmalloc(3 * nmc * pp * sizeof *ends);
	for (size_t i = 0; i < 3 * nmc * pp; i++)
		ends[i] = NONE;
	double *secs = hs_xmalloc(2 * nmc * pp * sizeof *secs);
	size_t *lw = hs_xcalloc((size_t)v * pp, sizeof *lw);
	struct xfer *memo_s = hs_xmalloc(((size_t)pp + v) * pp * sizeof *memo_s);
	for (size_t i = 0; i < ((size_t)pp + v) * pp; i++)
		memo_s[i].s = NAN;
	uint32_t(*mi)[4] = hs_xcalloc((size_t)v * pp, sizeof *mi);
	struct inc(*inc)[4][2] = hs_xmalloc((size_t)v * pp * sizeof *inc);
	for (size_t i = 0; i < (size_t)v * pp; i++)
		for (int k = 0; k < 4; k++)
			inc[i][k][0].dur = inc[i][k][1].dur = NONE;
	int *gchunk = hs_xmalloc((size_t)v * pp * sizeof *gchunk);
	/* a chunk's gradients are final at one item (its last weight item), which adds one reduction per bucket
	 * slice: room for every stage's at once (growing each stage's array was 0.4% of a point) */
	size_t nslices = 0;
	for (int i = 0; q->reduce && i < pp * v; i++)
		nslices += (size_t)q->nslices[i];
	hs_time *buckets = hs_xmalloc((nslices ? nslices : 1) * sizeof *buckets);
	nslices = 0;
	for (int s = 0; s < pp; s++) {
		struct stage *st = &w.st[s];
		st->it = q->items[s];
		st->n = q->nitems[s];
		st->cfree = st->mfree = st->pfree = st->idle = st->last_end = w.t0;
		st->fsend = ends + 3 * nmc * s;
		st->bsend = st->fsend + nmc;
		st->ftask = st->bsend + nmc;
		st->fsx = secs + 2 * nmc * s;
		st->bsx = st->fsx + nmc;
		st->last_weight = lw + (size_t)v * s;
		for (size_t i = 0; i < st->n; i++)
			if (weight_item(st->it[i].kind))
				st->last_weight[st->it[i].chunk] = i;
		st->send_s = memo_s + ((size_t)pp + v) * s;
		st->bucket_s = st->send_s + pp;
		st->mi = mi + (size_t)v * s;
		st->inc = inc + (size_t)v * s;
		st->gchunk = gchunk + (size_t)v * s;
		st->buckets = buckets + nslices;
		for (int k = 0; q->reduce && k < v; k++)
			nslices += (size_t)q->nslices[s * v + k];
		for (int k = 0; k < v; k++)
			st->gchunk[k] = hs_sched_chunk_of(q->sched, pp, v, s, k);
	}
	int tie = 0, progress = 1;
	while (progress && !tie) {
		progress = 0;
		for (int s = 0; s < pp && !tie; s++)
			while (w.st[s].pos < w.st[s].n) {
				int rc = item(&w, s);
				if (rc <= 0) {
					tie = rc < 0;
					break;
				}
				progress = 1;
			}
	}
	for (int s = 0; s < pp && !tie; s++)
		if (w.st[s].pos < w.st[s].n)
			why = "the schedule deadlocks"; /* the build would have refused it first */
	for (int s = 0; s < pp && !tie && !why; s++)
		tie = finish(&w, s) < 0;
	if (tie)
		why = "two waits of different kinds end at the same instant";
	for (int s = 0; s < pp; s++)
		x->reps[s].last_end = w.st[s].last_end;
	free(buckets);
	free(ends);
	free(secs);
	free(lw);
	free(memo_s);
	free(mi);
	free(inc);
	free(gchunk);
	free(w.st);
	free(w.place);
	if (!why)
		hs_exec_account_step(x, 0, out);
	return why;
}
