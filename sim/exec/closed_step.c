/* The closed-form step: a step's timeline computed task by task, without the event queue, where the pattern
 * the executor's semantics reduce to holds. Then it is the event run's answer, not an approximation of it.
 *
 * The pattern. Every duration is fixed before the step starts: compute tasks take their op range's time
 * (layer_time.c, memoised) scaled by their share, and communication tasks the closed forms' time on an idle
 * network (comm_closed.c), so nothing depends on what else is in flight (analytical and packet fidelity), on
 * the time of day (no slowdown or throttling rules), or on a random draw (no noise). No collective waits for
 * members on other reps (symmetry on: one rep per stage, so no rendezvous). Under those conditions the
 * executor's rule, "a task starts when its dependencies are done and its stream is free, streams run their
 * tasks in graph order", is the max-plus recurrence
 *
 *     start(t) = max(end(previous task on t's stream), max over dependencies d of end(d)),
 *     end(t)   = start(t) + duration(t),
 *
 * and because the graph is built in a topological order (models/build.c appends a task after everything it
 * depends on and after the tasks before it on its stream), one pass in graph order evaluates it exactly: cost
 * O(tasks + dependencies), no heap, no events. For 1F1B on p equal stages with no transfers it unrolls to the
 * textbook (m + p - 1)(F + B); the recurrence also carries what that formula does not: per-stage times (the
 * embedding on the first stage, the head on the last), the interleaved and zero-bubble orders, the p2p stream's
 * queue, the gradient buckets' overlap with the last backward, the optimizer and ZeRO's parameter gather, exactly
 * as the executor charges them.
 *
 * The breakdown. The idle time before a compute task goes to the dependency that completed last (exec.c,
 * begin()). When several dependencies end at the same instant the event run charges the one whose event ran
 * last, which the recurrence does not know; when those would be charged differently (a transfer against a
 * collective, two transfers of different lengths) the step is left to the event run rather than guessed.
 *
 * Times are hs_time, as in the event run, from the same seconds rounded by the same function, so the two give
 * the same picoseconds; the per-rep sums are added in the same order (a rep's compute stream, in order), so the
 * breakdown is the same too. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

/* Would a wait caused by task a be charged as one caused by task b? */
static int same_charge(const struct ex *x, uint32_t a, uint32_t b)
{
	const hs_task *ta = &x->g->tasks[a], *tb = &x->g->tasks[b];
	if (ta->kind != tb->kind)
		return 0;
	if (ta->kind == HS_T_SEND)
		return x->ts[a].xfer_s == x->ts[b].xfer_s;
	if (ta->kind == HS_T_COLL)
		return ta->group == tb->group;
	return 1; /* compute: bubble either way */
}

/* The compute time of task t as start_compute() schedules it (compute factor 1: no slowdown, no noise). */
static double compute_s(const hs_task *t, const struct memo *m)
{
	double f = t->scale * 1.0;
	double d = m->c.comp * f;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		d += m->c.comm[k] * t->scale;
	return d;
}

const char *hs_exec_closed_pattern(const struct ex *x, const hs_result *out)
{
	if (x->comm != &hs_exec_comm_closed)
		return "communication on a network model";
	if (x->inlayer)
		return "collectives inside layers on the network";
	if (x->g->nrendezvous) /* none in a build of items: they have one rep per stage */
		return "collectives that meet across replicas (symmetry off)";
	if (x->s->var->nrules)
		return "slowdown or throttling rules";
	if (x->rng)
		return "kernel-time noise";
	if (x->s->par->routing.skew > 0 && x->s->model->experts > 0)
		return "MoE routing drawn per step"; /* hs_exec_routing_load scales the routed work per task */
	if (out->steps != 1)
		return "more than one step";
	return NULL;
}

/* The pattern, and what only a graph's tasks can break it with: host tasks. */
static const char *blocker(const struct ex *x, const hs_result *out)
{
	const char *why = hs_exec_closed_pattern(x, out);
	if (why)
		return why;
	for (size_t i = 0; i < x->g->ntasks; i++)
		if (x->g->tasks[i].kind == HS_T_HOST)
			return "host tasks (offload), timed by the executor's host model";
	return NULL;
}

const char *hs_exec_closed_step(struct ex *x, hs_result *out)
{
	const char *why = blocker(x, out);
	if (why)
		return why;
	const hs_graph *g = x->g;
	size_t nr = (size_t)g->nreps;
	hs_time t0 = hs_engine_now(x->eng);
	x->step_start = t0;
	hs_time *free_at = hs_xmalloc((nr * HS_S_COUNT + 1) * sizeof *free_at);
	/* each compute task's range cost for pass 2, as an index (the table may grow, moving its entries) */
	uint32_t *mr = hs_xmalloc((g->ntasks + 1) * sizeof *mr);
	/* the last few (rep, range, share) seen and their cost and duration: a rep's micro-batches repeat a few
	 * ranges at one share each, and the range lookup and the sum of the duration were a tenth of the step */
	enum { NTC = 64 };
	struct tcache {
		int32_t rep;
		uint32_t first, count, idx;
		double scale;
		hs_time dur;
	} tc[NTC];
	for (int k = 0; k < NTC; k++)
		tc[k].rep = -1;
	for (size_t i = 0; i < nr * HS_S_COUNT; i++)
		free_at[i] = t0;
	/* pass 1: the timeline */
	for (size_t i = 0; i < g->ntasks && !why; i++) {
		const hs_task *t = &g->tasks[i];
		struct tstate *st = &x->ts[i];
		*st = (struct tstate){.cause = UINT32_MAX};
		if (t->kind == HS_T_COLL && t->rendezvous >= 0) {
			why = "a collective with a rendezvous";
			break;
		}
		hs_time ready = t0;
		int tie = 0;
		for (uint32_t k = 0; k < t->dep_count; k++) {
			uint32_t d = g->deps[t->dep_first + k];
			if (d >= i) {
				why = "a dependency later in the graph than its task";
				break;
			}
			hs_time e = x->ts[d].end;
			if (st->cause == UINT32_MAX || e > ready) {
				ready = e > ready ? e : ready;
				st->cause = d;
				tie = 0;
			} else if (e == ready && !same_charge(x, st->cause, d)) {
				tie = 1;
			}
		}
		if (why)
			break;
		hs_time *fa = &free_at[(size_t)t->rep * HS_S_COUNT + t->stream];
		hs_time start = ready > *fa ? ready : *fa;
		if (tie && t->stream == HS_S_COMPUTE && start > *fa) {
			why = "two waits of different kinds end at the same instant";
			break;
		}
		hs_time dur;
		if (t->kind == HS_T_COMPUTE) {
			struct tcache *c = &tc[((t->op_first * 0x9e3779b1u) ^ (uint32_t)t->rep * 0x85ebca6bu ^ t->op_count) >>
					       26 & (NTC - 1)];
			if (c->rep != t->rep || c->first != t->op_first || c->count != t->op_count || c->scale != t->scale) {
				struct rep *r = &x->reps[t->rep];
				uint32_t mi = hs_exec_range_index(x, r, g->reps[t->rep].stage, t->op_first, t->op_count);
				*c = (struct tcache){.rep = t->rep, .first = t->op_first, .count = t->op_count, .idx = mi,
						     .scale = t->scale, .dur = hs_time_from_s(compute_s(t, &x->memo[mi]))};
			}
			mr[i] = c->idx;
			dur = c->dur;
		} else {
			st->xfer_s = hs_exec_comm_closed_time(x, (uint32_t)i);
			dur = hs_time_from_s(st->xfer_s);
		}
		st->start = start;
		st->end = start + dur;
		st->started = st->done = 1;
		*fa = st->end;
	}
	free(free_at);
	if (why) {
		free(mr);
		return why;
	} /* nothing is accounted yet: the event run starts from a clean state */
	/* pass 2: the accounting, task by task as the event run charges it (each rep's compute stream in order) */
	hs_time *idle = hs_xmalloc((nr + 1) * sizeof *idle);
	for (size_t i = 0; i < nr; i++) {
		idle[i] = t0;
		x->reps[i].last_end = t0;
	}
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		const struct tstate *st = &x->ts[i];
		struct rep *r = &x->reps[t->rep];
		if (st->end > r->last_end)
			r->last_end = st->end;
		if (t->kind != HS_T_COMPUTE)
			continue;
		const struct memo *m = &x->memo[mr[i]];
		double f = t->scale * 1.0;
		hs_exec_add_compute(r->res, t, &m->c, f, t->scale);
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			r->res->exposed_s[k] += m->c.comm[k] * t->scale;
		hs_exec_charge_wait(x, r, st->cause, hs_exec_step_s(x, st->start) - hs_exec_step_s(x, idle[t->rep]));
		idle[t->rep] = st->end;
	}
	free(idle);
	free(mr);
	hs_exec_account_step(x, 0, out);
	return NULL;
}
