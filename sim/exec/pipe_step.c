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
 * its items, and the stages advance round-robin, an item each where what it needs exists (any order that takes
 * an item after what it waits for gives the same times), so one pass over the items evaluates the recurrence:
 * O(items), no task stored, and fewer where the program repeats (walk_items takes a steady state's cycles as
 * shifted copies). That order and which item each
 * waits for depend on the schedule alone: pipe_prog.c finds them once per schedule (kept across a thread's
 * steps), and the walk does per item the recurrence's arithmetic (about 60 instructions), then adds each
 * stage's tasks to its rep's sums in order (about 30).
 *
 * Exactness. Durations come from the same functions at the same arguments as closed_step.c's (the op-range
 * costs, hs_time_from_s of the same seconds, the closed forms' times of the same tasks), the waits are charged
 * by the same rule (the dependency that completed last, the first of equal ones; exec.c), and the sums are
 * added per rep in the same order (a rep's sums are its own: adding them stage by stage after timing every
 * item adds the same terms in the same order as adding them as each is timed), so the result is the closed
 * step's, which is the event run's. Which order the stages' items are timed in changes no time (each is a
 * function of the ends it waits for); it changes only the order in which op ranges and transfers are first
 * timed, which are each a function of their own key. Where two
 * dependencies of different charge end at the same instant the event run's order decides: the walk stops and
 * the caller plans the task graph (HS_EXEC_NEEDS_GRAPH). The build gives items only where emit_item and
 * finish_rep add nothing else (hs_build_step_items). No timeline is kept (hs_result.spans has no task): what a
 * sweep's row needs is the step's figures. tests/unit/exec/test_closed_step.c compares the walk with the event
 * run on every point of a layout space it applies to (every schedule it takes, ZeRO 0-2, tied embeddings on one
 * stage), and bench_sweep its rows with the graph's closed form on a 2,160-point space. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"
#include "sim/exec/pipe_prog.h"
#include "sim/exec/range_cache.h"

#define NONE ((hs_time)-1) /* no such task (yet) */
#define NOKIND (-1)

/* What a compute task's wait is charged to: the dependency that completed last (exec.c, begin()). */
struct cause {
	int kind;      /* enum hs_task_kind, NOKIND: no dependency */
	double xfer_s; /* HS_T_SEND: its transfer's seconds */
};

/* Two doubles added lane by lane: each lane's sum is the scalar sum of its two doubles, bit for bit (IEEE
 * addition, no contraction in ISO C); the rep's twelve sums that every compute task adds to go as six pairs
 * (-Wpedantic takes gcc's and clang's vector extension). */
typedef double pair __attribute__((vector_size(16)));
enum { NPAIR = 6 };

/* hs_rep_result's twelve sums as pairs: {compute, flops}, {class 0, 1}, {2, 3}, {4, exposed 0}, {exposed 1, 2},
 * {3, 4}; and the waits' sum. */
struct sums {
	pair v[NPAIR];
	double bubble;
};

_Static_assert(HS_TC_COUNT == 5 && HS_GROUP_COUNT == 5, "the pairs hold five classes and five groups");

static void sums_load(struct sums *a, const hs_rep_result *r)
{
	double d[2 * NPAIR] = {r->compute_s, r->flops};
	memcpy(d + 2, r->class_s, sizeof r->class_s);
	memcpy(d + 2 + HS_TC_COUNT, r->exposed_s, sizeof r->exposed_s);
	memcpy(a->v, d, sizeof d);
	a->bubble = r->bubble_s;
}

static void sums_store(hs_rep_result *r, const struct sums *a)
{
	double d[2 * NPAIR];
	memcpy(d, a->v, sizeof d);
	r->compute_s = d[0];
	r->flops = d[1];
	memcpy(r->class_s, d + 2, sizeof r->class_s);
	memcpy(r->exposed_s, d + 2 + HS_TC_COUNT, sizeof r->exposed_s);
	r->bubble_s = a->bubble;
}

/* What one compute task of a (chunk, kind, share) adds to its rep's result, as hs_exec_add_compute and
 * closed_step.c's pass 2 add it, as the pairs of struct sums: the products formed once (the same products, so
 * the same sums). Every class and group is added, the zero terms too: a sum that starts at +0.0 and adds terms
 * that are zero or positive is never -0.0, and x + 0.0 is x for every other x, so the sums' bits are those of
 * adding the nonzero terms only, in fewer instructions than a loop over the nonzero ones. */
struct inc {
	pair v[NPAIR];
	double comp; /* v[0][0], for the optimizer's share */
	hs_time dur;
};

static void inc_of(struct inc *a, const struct memo *m, double scale)
{
	double f = scale * 1.0;
	double d = m->c.comp * f; /* closed_step.c's compute_s */
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		d += m->c.comm[k] * scale;
	a->dur = hs_time_from_s(d);
	a->comp = m->c.comp * f;
	double t[2 * NPAIR] = {a->comp, m->c.flops * scale};
	for (int k = 0; k < HS_TC_COUNT; k++)
		t[2 + k] = m->c.cls[k] * f;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		t[2 + HS_TC_COUNT + k] = m->c.comm[k] * scale;
	memcpy(a->v, t, sizeof t);
}

/* Written out: gcc -O2 neither unrolls the loop of six nor keeps the pairs in registers through it. */
_Static_assert(NPAIR == 6, "sums_add adds six pairs");
static inline void sums_add(struct sums *a, const struct inc *c)
{
	a->v[0] += c->v[0];
	a->v[1] += c->v[1];
	a->v[2] += c->v[2];
	a->v[3] += c->v[3];
	a->v[4] += c->v[4];
	a->v[5] += c->v[5];
}

enum { EXPOSED_PP = 2 + HS_TC_COUNT + HS_GROUP_PP }; /* exposed_s[HS_GROUP_PP]'s place in the pairs */

/* The wait `gap` before a compute task charged to `kind` into a, as hs_exec_charge charges it, for the kinds an
 * item waits for (a send, a compute task, nothing): what it charges to exposed PP communication. */
static inline void charge(struct sums *a, int kind, double xfer_s, double gap)
{
	if (gap <= 0)
		return;
	if (kind == HS_T_SEND) {
		double e = gap < xfer_s ? gap : xfer_s;
		a->v[EXPOSED_PP / 2][EXPOSED_PP % 2] += e;
		a->bubble += gap - e;
	} else {
		a->bubble += gap;
	}
}

/* A communication task's seconds (NAN: not asked yet) and its duration, converted once. */
struct xfer {
	double s;
	hs_time dur;
};

struct stage {
	hs_time cfree, mfree, pfree; /* compute, comm and p2p streams free */
	hs_time last_end;
	hs_time *buckets; /* ends of the step's gradient reductions, in order */
	size_t nbuckets;
	struct rep *r;
};

/* What the timing of an item leaves for its stage's accounting: its (first) compute task's start, its (last)
 * end, what it adds, its bucket slices (1 where it has none) and what its wait is charged to (enum
 * hs_task_kind, NOKIND). */
struct rec {
	hs_time start, end;
	const struct inc *a;
	int32_t nslices;
	int32_t cause;
};

/* The walk times every item first, in the program's order, and adds what each adds to its rep's result after,
 * stage by stage, the sums in registers, in the order of the stage's tasks: the rep's sums are the same sums
 * in the same order as a walk that adds each task's as it times it, which kept them in memory (a third of
 * the walk's instructions). */
struct walk {
	struct ex *x;
	const hs_pipe *q;
	const hs_pipe_prog *p;
	struct stage *st;
	int pp;
	hs_time t0;
	struct rec *rec; /* [n] by stage (hs_pipe_prog.first) */
	hs_time *send;   /* [n] by stage: the end of its send, where it sends */
	/* the seconds of a send from each stage to each stage [pp * pp] and of each chunk's bucket reduction
	 * [pp * v] (NAN: not asked yet): the closed forms' answer depends on nothing else (comm_closed.c), and
	 * asking per task was a third of the walk */
	struct xfer *send_s, *bucket_s;
	uint32_t *mi; /* [pp * v * 4] the op range's memo index + 1 of each (stage, chunk, kind); 0: not timed yet */
	/* [pp * v * 4][sliced] dur NONE until formed (a flag of its own was 1% of a point's instructions; a duration
	 * of HS_TIME_MAX, which reads as NONE, is formed again each time, to the same value) */
	struct inc (*inc)[2];
	int periodic;    /* extrapolate a repeating stretch (hs_pipe_period) */
	int skip;        /* it did: periods skip_j + 1 .. skip_j + skip_k * skip_c are periods skip_j - skip_c + 1 ..
			  * skip_j, skip_k times over, shifted */
	uint32_t skip_j, skip_c, skip_k;
};

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

/* A communication task t of stage st on stream end *free after `ready`; its seconds kept in *memo (t is only
 * read when *memo is not set yet). Inline: the walk makes one per send, and gcc -O2 kept it out of line. */
static inline hs_time comm(struct walk *w, struct stage *st, const hs_task *t, hs_time ready, hs_time *free_at,
			   struct xfer *memo)
{
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

/* The reduction of one bucket slice of chunk sidx = s * v + chunk, after its compute task's end. */
static void bucket(struct walk *w, const hs_pipe_op *o, int sidx, hs_time end)
{
	const hs_pipe *q = w->q;
	struct stage *st = &w->st[o->s];
	hs_task cl = {.kind = HS_T_COLL, .group = HS_GROUP_DP, .coll = (uint8_t)q->grad_coll, .rep = o->s, .peer = -1,
		      .bytes = q->bucket_bytes[sidx], .rendezvous = -1};
	st->buckets[st->nbuckets++] = comm(w, st, &cl, end, &st->mfree, &w->bucket_s[sidx]);
}

/* The seconds of item o's send into *xm. */
static void send_time(struct walk *w, const hs_pipe_op *o, struct xfer *xm)
{
	hs_task t = {.kind = HS_T_SEND, .stream = HS_S_P2P, .what = HS_W_P2P, .rep = o->s, .peer = o->to, .mb = o->mb,
		     .chunk = o->chunk, .bytes = w->q->act_bytes, .rendezvous = -1};
	xm->s = hs_exec_comm_closed_task(w->x, &t);
	xm->dur = hs_time_from_s(xm->s);
}

/* The bucket slices item o's compute runs as: a chunk's last weight item's where gradients are reduced (lw
 * holds HS_PO_LAST_WEIGHT), else 1. */
static inline int slices(const struct walk *w, const hs_pipe_op *o, unsigned lw)
{
	return o->flags & lw ? w->q->nslices[o->inc / 4] : 1;
}

/* What item o costs, formed where it is not yet: its op range's (what its compute task adds), its send's
 * seconds. Before the walk, for the items that first need each (hs_pipe_prog.first_use). */
static void form(struct walk *w, const hs_pipe_op *o, unsigned lw)
{
	int nslices = slices(w, o, lw);
	struct inc *a = &w->inc[o->inc][nslices > 1];
	if (a->dur == NONE)
		inc_of(a, range(w, o->s, w->q->ol[o->inc / 4][o->kind], &w->mi[o->inc]), 1.0 / nslices);
	if (o->flags & HS_PO_SENDS && isnan(w->send_s[o->sendx].s))
		send_time(w, o, &w->send_s[o->sendx]);
}

/* Time item o, as emit_item makes its tasks. The item that finalises its chunk's gradients runs as one compute task per bucket slice, each followed by its
 * reduction; the slices after the first wait for nothing but the stream.
 *
 * A backward's task also waits for its own forward (emit_item's edge), which the walk leaves out: that
 * forward ran earlier on the same stage's compute stream, so it has ended by the stream's free instant, and
 * the start, max(ready, stream free), is the same with it or without it. Where the task waits (start past the
 * stream's free instant) the latest dependency is the send, past the forward's end, so the charge is the
 * send's; where it does not, nothing is charged; and a tie of the two would need the forward to end past the
 * stream's free instant, so none stops the walk. (Leaving it out also keeps what an item reads to its
 * neighbours' recent sends, which is what lets a repeating stretch be extrapolated after few periods.) */
static inline void item(struct walk *w, const hs_pipe_op *o, unsigned lw)
{
	struct stage *st = &w->st[o->s];
	hs_time ready = w->t0;
	int kind = NOKIND;
	if (o->need >= 0) {
		ready = w->send[o->need] > ready ? w->send[o->need] : ready;
		kind = HS_T_SEND;
	}
	int nslices = slices(w, o, lw);
	const struct inc *a = &w->inc[o->inc][nslices > 1];
	hs_time start = ready > st->cfree ? ready : st->cfree;
	hs_time end = start + a->dur;
	if (o->flags & lw) {
		bucket(w, o, (int)(o->inc / 4), end);
		for (int sl = 1; sl < nslices; sl++) {
			end += a->dur;
			bucket(w, o, (int)(o->inc / 4), end);
		}
	}
	w->rec[o->at] = (struct rec){.start = start, .end = end, .a = a, .nslices = nslices, .cause = kind};
	st->cfree = end;
	if (end > st->last_end)
		st->last_end = end;
	if (o->flags & HS_PO_SENDS) {
		hs_time s = end > st->pfree ? end : st->pfree;
		st->pfree = s + w->send_s[o->sendx].dur;
		w->send[o->at] = st->pfree;
		if (st->pfree > st->last_end)
			st->last_end = st->pfree;
	}
}

/* The program's items [from, to) in order. The items but a chunk's last weight item (where
 * gradients are reduced) as item() times them, with what they read in locals (through w, gcc -O2 reloaded it
 * at every item); those through item(). */
static void walk_range(struct walk *w, unsigned lw, size_t from, size_t to)
{
	const hs_pipe_op *o = w->p->op + from, *last = w->p->op + to;
	struct rec *rec = w->rec;
	hs_time *send = w->send;
	const hs_time t0 = w->t0;
	struct stage *sts = w->st;
	const struct xfer *sx = w->send_s;
	const struct inc(*inc)[2] = (const struct inc(*)[2])w->inc;
	for (; o < last; o++) {
		if (o->flags & lw) {
			item(w, o, lw);
			continue;
		}
		struct stage *st = &sts[o->s];
		hs_time ready = t0;
		int kind = NOKIND;
		if (o->need >= 0) {
			ready = send[o->need] > ready ? send[o->need] : ready;
			kind = HS_T_SEND;
		}
		const struct inc *a = &inc[o->inc][0];
		hs_time cfree = st->cfree, start = ready > cfree ? ready : cfree;
		hs_time end = start + a->dur, last_end = st->last_end;
		rec[o->at] = (struct rec){.start = start, .end = end, .a = a, .nslices = 1, .cause = (int8_t)kind};
		st->cfree = end;
		last_end = end > last_end ? end : last_end;
		if (o->flags & HS_PO_SENDS) {
			hs_time e = (end > st->pfree ? end : st->pfree) + sx[o->sendx].dur;
			st->pfree = e;
			send[o->at] = e;
			last_end = e > last_end ? e : last_end;
		}
		st->last_end = last_end;
	}
}

/* The stages' last_end at the end of each of the last MAXC + 1 periods, and the longest cycle of periods
 * looked for: a steady state's times may repeat every c periods, not every period (with uneven stages or a
 * slow network, a stage's p2p stream takes turns with its neighbours'); six were seen. */
enum { MAXC = 8 };

/* Did period j of the repeating stretch (hs_pipe_period) end every item and every send of period j - c one
 * length of time later (into *dt)? What period j + 1 reads is then shifted too from what period j + 1 - c read:
 * its stages' streams are free at their last items' ends, and it waits for sends of period j. What each stage
 * has seen last (last_end, kept per period in ring) must have moved on by as much, as the periods skipped move
 * it on. */
static int shifted(const struct walk *w, uint32_t j, uint32_t c, const hs_time *ring, hs_time *dt)
{
	const hs_pipe_period *pe = &w->p->per;
	const hs_pipe_op *op = w->p->op;
	size_t lo = pe->start + (size_t)j * pe->len, hi = lo + pe->len, back = (size_t)c * pe->len;
	hs_time d = w->rec[op[lo].at].end - w->rec[op[lo - back].at].end;
	for (size_t i = lo; i < hi; i++) {
		uint32_t a = op[i].at, b = op[i - back].at;
		if (w->rec[a].end - w->rec[b].end != d || (op[i].flags & HS_PO_SENDS && w->send[a] - w->send[b] != d))
			return 0;
	}
	const hs_time *now = ring + (size_t)(j % (MAXC + 1)) * w->pp, *then = ring + (size_t)((j - c) % (MAXC + 1)) * w->pp;
	for (int s = 0; s < w->pp; s++)
		if (pe->shift[s] && now[s] - then[s] != d)
			return 0;
	*dt = d;
	return 1;
}

/* Periods j - c + 1 .. j repeat every c periods, dt later each time: the next k cycles of c periods are those
 * shifted. The last period they end with is written (what the items after read: hs_pipe_period), each stage's
 * state is moved on, and w->skip set for the accounting. */
static void extrapolate(struct walk *w, uint32_t j, uint32_t c, uint32_t k, hs_time dt)
{
	const hs_pipe_period *pe = &w->p->per;
	const hs_pipe_op *op = w->p->op;
	hs_time by = (hs_time)k * dt;
	size_t back = (size_t)k * c * pe->len, lo = pe->start + (size_t)(j + 1) * pe->len + back - pe->len;
	for (size_t i = lo; i < lo + pe->len; i++) {
		struct rec r = w->rec[op[i - back].at];
		r.start += by;
		r.end += by;
		w->rec[op[i].at] = r;
		if (op[i].flags & HS_PO_SENDS)
			w->send[op[i].at] = w->send[op[i - back].at] + by;
	}
	for (int s = 0; s < w->pp; s++) {
		struct stage *st = &w->st[s];
		if (!pe->shift[s])
			continue;
		st->cfree += by;
		st->last_end += by;
		if (pe->sends[s])
			st->pfree += by;
	}
	w->skip = 1;
	w->skip_j = j;
	w->skip_c = c;
	w->skip_k = k;
}

/* Every item of the program in order. Where the program repeats (hs_pipe_period) and the times of c periods
 * are those of the c before, shifted by one length of time, with every stage's state (max-plus recurrences
 * with integer durations become periodic after a transient, and their cycles can span several periods), the
 * cycles after are that shift on: what an item reads is its stage's state and the sends of the period before,
 * so each period is the one c before shifted, and only the last skipped, which the items after read, is
 * written. */
static void walk_items(struct walk *w, unsigned lw)
{
	const hs_pipe_period *pe = &w->p->per;
	if (!pe->count || !w->periodic) {
		walk_range(w, lw, 0, w->p->n);
		return;
	}
	size_t lo = pe->start + pe->len;
	walk_range(w, lw, 0, lo);
	hs_time *ring = hs_xmalloc((size_t)(MAXC + 1) * w->pp * sizeof *ring);
	for (int s = 0; s < w->pp; s++)
		ring[s] = w->st[s].last_end;
	uint32_t run[MAXC + 1] = {0};
	hs_time len_of[MAXC + 1] = {0};
	size_t resume = pe->start + (size_t)pe->count * pe->len; /* where the walk goes on after the stretch */
	for (uint32_t j = 1; j < pe->count && !w->skip; j++, lo += pe->len) {
		walk_range(w, lw, lo, lo + pe->len);
		hs_time *now = ring + (size_t)(j % (MAXC + 1)) * w->pp;
		for (int s = 0; s < w->pp; s++)
			now[s] = w->st[s].last_end;
		for (uint32_t c = 1; c <= MAXC && c <= j; c++) {
			hs_time d = 0;
			if (!shifted(w, j, c, ring, &d)) {
				run[c] = 0;
				continue;
			}
			run[c] = run[c] && d == len_of[c] ? run[c] + 1 : 1;
			len_of[c] = d;
			uint32_t k = (pe->count - 1 - j) / c;
			if (run[c] >= c && k) {
				extrapolate(w, j, c, k, d);
				resume = pe->start + (size_t)(j + 1 + k * c) * pe->len;
				break;
			}
		}
	}
	free(ring);
	walk_range(w, lw, resume, w->p->n);
}

/* The seconds of the wait from `idle` to `start`: the difference of the two instants' seconds
 * (hs_exec_step_s), as exec.c charges it. */
static double gap_s(const struct walk *w, hs_time start, hs_time idle)
{
	return hs_exec_step_s(w->x, start) - hs_exec_step_s(w->x, idle);
}

/* Stage s's items numbered [lo, hi) by stage added to a in order (hs_exec_add_compute, then the wait's
 * charge, task by task); *idle: the end of the last compute task before them. */
static void account_range(const struct walk *w, struct sums *a, hs_time *idle, uint32_t lo, uint32_t hi)
{
	const hs_pipe_prog *p = w->p;
	for (uint32_t k = lo; k < hi; k++) {
		const struct rec *r = &w->rec[k];
		sums_add(a, r->a);
		if (r->start > *idle) /* no wait, no gap to charge (it would be 0) */
			charge(a, r->cause,
			       r->cause == HS_T_SEND ? w->send_s[p->op[p->byat[k]].needx].s : 0, gap_s(w, r->start, *idle));
		if (r->nslices > 1) /* a chunk's last weight item: its other slices */
			for (int sl = 1; sl < r->nslices; sl++)
				sums_add(a, r->a);
		*idle = r->end;
	}
}

/* Stage s's items' compute tasks added to its rep's result in order. Where the walk extrapolated (w->skip),
 * what the skipped cycles add is what the cycle before them added: its sums, taken once per cycle (to 1e-13
 * of adding every task's, as the cycles' waits are the same integer picoseconds at other instants). */
static void account(struct walk *w, int s)
{
	const hs_pipe_prog *p = w->p;
	const hs_pipe_period *pe = &p->per;
	struct sums a;
	sums_load(&a, w->st[s].r->res);
	hs_time idle = w->t0; /* the end of the last compute task */
	if (!w->skip || !pe->shift[s]) {
		account_range(w, &a, &idle, p->first[s], p->first[s + 1]);
	} else {
		uint32_t sh = pe->shift[s], j0 = pe->at0[s] + (w->skip_j + 1 - w->skip_c) * sh,
			 j1 = pe->at0[s] + (w->skip_j + 1) * sh, past = j1 + w->skip_k * w->skip_c * sh;
		account_range(w, &a, &idle, p->first[s], j0);
		struct sums d = {0};
		account_range(w, &d, &idle, j0, j1);
		double times = (double)w->skip_k + 1;
		pair m = {times, times};
		for (int i = 0; i < NPAIR; i++)
			a.v[i] += d.v[i] * m;
		a.bubble += d.bubble * times;
		idle = w->rec[past - 1].end;
		account_range(w, &a, &idle, past, p->first[s + 1]);
	}
	sums_store(w->st[s].r->res, &a);
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
	if (q->nitems[s]) /* the stage's last compute task (every item ran) */
		dep(st->cfree, (struct cause){HS_T_COMPUTE, 0}, &ready, &cause, &tie);
	for (size_t b = 0; b < st->nbuckets; b++)
		dep(st->buckets[b], (struct cause){HS_T_COLL, 0}, &ready, &cause, &tie);
	uint32_t slot = 0;
	struct inc a;
	inc_of(&a, range(w, s, q->opt[s], &slot), 1.0);
	hs_time start = ready > st->cfree ? ready : st->cfree;
	if (tie && start > st->cfree)
		return -1;
	hs_time end = start + a.dur;
	hs_rep_result *res = st->r->res;
	struct sums sum;
	sums_load(&sum, res);
	sums_add(&sum, &a);
	sums_store(res, &sum);
	res->optimizer_s += a.comp;
	if (start > st->cfree)
		hs_exec_charge(st->r, cause.kind, HS_GROUP_DP, cause.xfer_s, gap_s(w, start, st->cfree));
	st->cfree = end;
	if (end > st->last_end)
		st->last_end = end;
	if (q->gather_bytes[s] > 0) {
		hs_task ag = {.kind = HS_T_COLL, .group = HS_GROUP_DP, .coll = HS_COLL_ALL_GATHER, .rep = s, .peer = -1,
			      .bytes = q->gather_bytes[s], .rendezvous = -1};
		struct xfer memo = {NAN, 0};
		comm(w, st, &ag, end, &st->mfree, &memo);
	}
	return 0;
}

/* HETSIM_PIPE_PERIODIC=0 walks every item (the tests compare the two). */
static int periodic_on(void)
{
	const char *e = getenv("HETSIM_PIPE_PERIODIC");
	return !e || strcmp(e, "0") != 0;
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
	/* the schedule's program, kept across the thread's steps where its items are */
	const hs_pipe_prog *prog = hs_pipe_progs_get(hs_range_cache_progs(x->rcache), q, pp);
	hs_pipe_prog *own = prog ? NULL : hs_pipe_prog_make(q, pp);
	if (!prog)
		prog = own;
	if (!prog)
		return "a pipeline the item walk does not take";
	if (prog->stuck) {
		hs_pipe_prog_free(own);
		return "the schedule deadlocks"; /* the build would have refused it first */
	}
	struct walk w = {.x = x, .q = q, .p = prog, .pp = pp, .t0 = hs_engine_now(x->eng), .periodic = periodic_on()};
	x->step_start = w.t0;
	size_t nk = (size_t)pp * v * 4;
	/* the arrays in one block each (ten allocations a stage were 2% of a sweep point); each item's ends are
	 * read only after it wrote them (the program orders them so), so they start unset */
	w.st = hs_xcalloc((size_t)pp, sizeof *w.st);
	size_t n = prog->n ? prog->n : 1;
	w.rec = hs_xmalloc(n * sizeof *w.rec);
	w.send = hs_xmalloc(n * sizeof *w.send);
	w.send_s = hs_xmalloc(((size_t)pp + v) * pp * sizeof *w.send_s);
	for (size_t i = 0; i < ((size_t)pp + v) * pp; i++)
		w.send_s[i].s = NAN;
	w.bucket_s = w.send_s + (size_t)pp * pp;
	w.mi = hs_xcalloc(nk, sizeof *w.mi);
	w.inc = hs_xmalloc(nk * sizeof *w.inc);
	for (size_t i = 0; i < nk; i++)
		w.inc[i][0].dur = w.inc[i][1].dur = NONE;
	/* a chunk's gradients are final at one item (its last weight item), which adds one reduction per bucket
	 * slice: room for every stage's at once (growing each stage's array was 0.4% of a point) */
	size_t nslices = 0;
	for (int i = 0; q->reduce && i < pp * v; i++)
		nslices += (size_t)q->nslices[i];
	hs_time *buckets = hs_xmalloc((nslices ? nslices : 1) * sizeof *buckets);
	nslices = 0;
	for (int s = 0; s < pp; s++) {
		struct stage *st = &w.st[s];
		st->cfree = st->mfree = st->pfree = st->last_end = w.t0;
		st->r = &x->reps[s];
		st->buckets = buckets + nslices;
		for (int k = 0; q->reduce && k < v; k++)
			nslices += (size_t)q->nslices[s * v + k];
	}
	int tie = 0;
	unsigned lw = q->reduce ? HS_PO_LAST_WEIGHT : 0;
	for (size_t i = 0; i < prog->nfirst; i++)
		form(&w, &prog->op[prog->first_use[i]], lw);
	walk_items(&w, lw);
	uint64_t extra = w.skip ? (uint64_t)w.skip_k * w.skip_c * prog->per.len : 0, all = prog->n;
	for (int s = 0; s < pp && !tie; s++) {
		account(&w, s);
		tie = finish(&w, s) < 0;
	}
	if (tie)
		why = "two waits of different kinds end at the same instant";
	for (int s = 0; s < pp; s++)
		x->reps[s].last_end = w.st[s].last_end;
	free(buckets);
	free(w.rec);
	free(w.send);
	free(w.send_s);
	free(w.mi);
	free(w.inc);
	free(w.st);
	hs_pipe_prog_free(own);
	if (!why) {
		hs_exec_account_step(x, 0, out);
		out->items_walked = all - extra;
		out->items_extrapolated = extra;
	}
	return why;
}
