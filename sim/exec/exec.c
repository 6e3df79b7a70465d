/* The executor's core: readiness, streams, rendezvous and the step loop (sim/exec/exec.h says what it does).
 *
 * A task starts when its dependencies are done and its stream is free; it ends by an engine event, and its
 * successors become ready. Compute tasks take their op range's time (layer_time.c, memoised per range and
 * node group), or run as segments when the network carries the collectives inside them (inlayer.c).
 * Collectives and sends take their time from the communication interface, closed form (comm_closed.c) or
 * network (comm_net.c); the core does not know which. Accounting into hs_result is result.c's.
 *
 * Times are hs_time; the seconds of op timing and the closed forms become hs_time where they are scheduled
 * (here for compute tasks, in comm_closed.c for communication), and figures become seconds where they are
 * added to a rep's result. */
#include "sim/exec/exec.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/profile.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/exec/exec_impl.h"
#include "sim/exec/plan.h"
#include "sim/exec/range_cache.h"

/* Communication by fidelity. Packet fidelity runs the collectives inside a scale-up domain on the packet
 * fabric model and the rest on the flow network (comm_packet.c). */
static const hs_exec_comm_ops *const comm_by_fidelity[] = {
	[HS_FID_ANALYTICAL] = &hs_exec_comm_closed,
	[HS_FID_FLOW] = &hs_exec_comm_net,
	[HS_FID_PACKET] = &hs_exec_comm_packet,
};

static const hs_profile *profile_for(struct ex *x, const hs_device_type *dev)
{
	return hs_profile_cache_get(x->profiles, dev->profile, x->err);
}

void hs_exec_rep_env(struct ex *x, struct rep *r, hs_op_env *e)
{
	*e = (hs_op_env){.prof = r->prof, .dev = r->dev, .cluster = x->s->cluster, .coll_algo = x->s->coll_algo,
			 .memo = x->opmemo};
	hs_op_env_host(e, x->s->train->recipe);
	if (r->kkey) {
		e->kmemo = hs_range_cache_kernels(x->rcache);
		e->kkey = r->kkey;
	}
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		e->grp[k] = r->grp[k];
		e->grp_n[k] = r->grp_n[k];
		e->cgrp[k] = r->grp_n[k] > 1 ? &r->cg[k] : NULL;
	}
	if (x->packet) { /* in-layer collectives inside a domain on the packet model (comm_packet.c) */
		e->coll_time = hs_exec_packet_coll_time;
		e->coll_ctx = x;
	}
}

static size_t memo_slot(uint64_t key, uint32_t first, uint32_t count, size_t cap)
{
	uint64_t h = (key * 0x9e3779b97f4a7c15ull) ^ (first * 0xbf58476d1ce4e5b9ull) ^ count;
	return (size_t)(h >> 20) & (cap - 1);
}

/* Where rep r's range [first, first + count) has the ops of a range that x->env_rep's rep times the same way:
 * that rep and range, when they are another key of the memo. */
static int range_alias(struct ex *x, struct rep *r, int stage, const hs_op_range *or, uint32_t first,
		       struct rep **cr, int *cstage, uint32_t *cfirst)
{
	if (!x->env_rep)
		return 0;
	int e = x->env_rep[r - x->reps];
	*cr = &x->reps[e];
	*cstage = x->g->reps[e].stage;
	*cfirst = or ? or->canon : first;
	return *cfirst != first || *cstage != stage;
}

static uint32_t range_add(struct ex *x, struct rep *r, int stage, uint64_t key, uint32_t first, uint32_t count);

uint32_t hs_exec_range_index(struct ex *x, struct rep *r, int stage, uint32_t first, uint32_t count)
{
	uint64_t key = ((uint64_t)(uint32_t)stage << 32) | (uint32_t)r->ngroup;
	size_t i = memo_slot(key, first, count, x->nslot);
	for (;; i = (i + 1) & (x->nslot - 1)) {
		uint32_t q = x->mslot[i];
		if (!q)
			break;
		const struct memo *m = &x->memo[q - 1];
		if (m->key == key && m->first == first && m->count == count)
			return q - 1;
	}
	return range_add(x, r, stage, key, first, count);
}

/* Range [first, first + count) of rep r (memo key `key`), not timed yet: its cost from the same ops timed the
 * same way, or timed; returns its index. Apart from the lookup, which a step makes for every compute task, so
 * that the lookup stays small. */
static uint32_t range_add(struct ex *x, struct rep *r, int stage, uint64_t key, uint32_t first, uint32_t count)
{
	struct rep *cr;
	int cstage;
	uint32_t cfirst;
	hs_ops_cost c = {0};
	int netcomm = 0;
	const hs_op_range *or = hs_build_op_range(x->b, first, count);
	if (range_alias(x, r, stage, or, first, &cr, &cstage, &cfirst)) {
		uint32_t oi = hs_exec_range_index(x, cr, cstage, cfirst, count); /* may grow the table: x->memo after */
		const struct memo *o = &x->memo[oi];
		c = o->c;
		c.rec = NULL;
		netcomm = o->netcomm;
	} else {
		hs_op_env e;
		hs_exec_rep_env(x, r, &e);
		hs_range_cache_cost(x->rcache, &e, x->g->ops + first, count, or ? &or->fp : NULL, or ? or->groups : 0, &c,
				    &netcomm);
	}
	if (2 * (x->nmemo + 1) > x->nslot) { /* keep the slots under half full: double and re-insert */
		free(x->mslot);
		x->nslot *= 2;
		x->mslot = hs_xcalloc(x->nslot, sizeof *x->mslot);
		for (size_t j = 0; j < x->nmemo; j++) {
			const struct memo *o = &x->memo[j];
			size_t q = memo_slot(o->key, o->first, o->count, x->nslot);
			while (x->mslot[q])
				q = (q + 1) & (x->nslot - 1);
			x->mslot[q] = (uint32_t)j + 1;
		}
	}
	/* the entries stay in place but for this growth: an index found before stays valid */
	hs_xgrow(&x->memo, &x->memocap, x->nmemo + 1, sizeof *x->memo);
	size_t i = memo_slot(key, first, count, x->nslot);
	while (x->mslot[i])
		i = (i + 1) & (x->nslot - 1);
	x->mslot[i] = (uint32_t)x->nmemo + 1;
	struct memo *m = &x->memo[x->nmemo];
	memset(m, 0, sizeof *m);
	m->key = key, m->first = first, m->count = count;
	m->c = c;
	m->netcomm = netcomm;
	return (uint32_t)x->nmemo++;
}

struct memo *hs_exec_range_cost(struct ex *x, struct rep *r, int stage, uint32_t first, uint32_t count)
{
	uint32_t i = hs_exec_range_index(x, r, stage, first, count); /* may move x->memo: read it after */
	return &x->memo[i];
}

/* Do reps a and b time every op the same way (hs_exec_rep_env gives them equal environments)? */
static int same_env(const struct rep *a, const struct rep *b)
{
	if (a->dev != b->dev || a->prof != b->prof || a->ngroup != b->ngroup)
		return 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		if (a->grp_n[k] != b->grp_n[k])
			return 0;
		/* hs_coll_grp_init zeroes a summary before filling it, so equal summaries compare equal bytewise */
		if (a->grp_n[k] > 1 && memcmp(&a->cg[k], &b->cg[k], sizeof a->cg[k]) != 0)
			return 0;
	}
	return 1;
}

/* x->env_rep: each rep's first rep of equal environment, among the first few distinct ones. */
static void setup_env_classes(struct ex *x)
{
	enum { MAX_CLASSES = 8 };
	if (x->inlayer || x->packet || x->o->record_inlayer || !x->b->nranges)
		return;
	int cls[MAX_CLASSES], ncls = 0;
	x->env_rep = hs_xmalloc((size_t)(x->g->nreps + 1) * sizeof *x->env_rep);
	for (int i = 0; i < x->g->nreps; i++) {
		int e = i;
		for (int k = 0; k < ncls && e == i; k++)
			if (same_env(&x->reps[i], &x->reps[cls[k]]))
				e = cls[k];
		if (e == i && ncls < MAX_CLASSES)
			cls[ncls++] = i;
		x->env_rep[i] = e;
	}
}
/* Slowdowns, throttling and noise scale a compute task's kernels (not the collectives inside it, which the
 * network times). Noise: each op's time is multiplied by an independent factor of mean 1 and coefficient of
 * variation cv; a task's sum then has mean sum(t) and variance cv^2 sum(t^2), so one factor per task with
 * cv_task = cv * sqrt(sum t^2) / sum t has the same first two moments (drawing per op would cost a draw per
 * kernel for the same answer to second order). */
static double compute_factor(struct ex *x, struct rep *r, const struct memo *m)
{
	const hs_variability *v = x->s->var;
	double f = 1;
	if (v->nrules) {
		double now = hs_time_to_s(hs_engine_now(x->eng));
		double speed = 1;
		for (int i = 0; i < r->ngpus; i++) {
			double sp = hs_variability_speed(v, r->gpus[i], now);
			if (sp < speed || i == 0)
				speed = sp;
		}
		f /= speed;
	}
	if (x->rng && m->c.comp > 0) {
		double cv = v->noise_cv * sqrt(m->c.comp2) / m->c.comp;
		if (cv > 0) {
			if (v->noise == HS_NOISE_LOGNORMAL) {
				double s2 = log1p(cv * cv);
				f *= hs_rng_lognormal(x->rng, -0.5 * s2, sqrt(s2));
			} else {
				f *= hs_rng_gamma(x->rng, 1.0 / (cv * cv), cv * cv);
			}
		}
	}
	return f;
}
/* Task ti starts now. On the compute stream, the idle time before it goes to what kept the stream waiting:
 * the transfer it waited for (exposed pipeline communication up to the transfer's length, bubble beyond), a
 * collective (exposed communication of its group), or a neighbour stage's work (bubble). */
static void begin(struct ex *x, uint32_t ti)
{
	struct tstate *st = &x->ts[ti];
	const hs_task *t = &x->g->tasks[ti];
	struct rep *r = &x->reps[t->rep];
	hs_time now = hs_engine_now(x->eng);
	st->started = 1;
	st->start = now;
	r->busy[t->stream] = 1;
	if (t->stream != HS_S_COMPUTE)
		return;
	hs_exec_charge_wait(x, r, st->cause, hs_exec_step_s(x, now) - hs_exec_step_s(x, r->idle_since));
}

void hs_exec_charge_wait(struct ex *x, struct rep *r, uint32_t cause, double gap)
{
	if (gap <= 0)
		return;
	const hs_task *c = cause != UINT32_MAX ? &x->g->tasks[cause] : NULL;
	hs_exec_charge(r, c ? c->kind : -1, c ? c->group : 0, c ? x->ts[cause].xfer_s : 0, gap);
}

void hs_exec_charge(struct rep *r, int kind, int group, double xfer_s, double gap)
{
	if (gap <= 0)
		return;
	if (kind == HS_T_SEND) {
		double e = gap < xfer_s ? gap : xfer_s;
		r->res->exposed_s[HS_GROUP_PP] += e;
		r->res->bubble_s += gap - e;
	} else if (kind == HS_T_COLL) {
		r->res->exposed_s[group] += gap;
	} else if (kind == HS_T_HOST) {
		r->res->offload_s += gap;
	} else {
		r->res->bubble_s += gap;
	}
}

static void task_done(struct ex *x, uint32_t ti);

static void step_end_ev(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng, (void)arg;
	struct ex *x = ctx;
	x->step_end(x);
}

static void done_ev(hs_engine *eng, void *ctx, uint64_t ti)
{
	(void)eng;
	task_done(ctx, (uint32_t)ti);
}

/* A compute task's kernels and host waits, scaled by f (its share of the range, slowdowns, noise: a slower
 * device also shortens the waits for the host, which this ignores), and its FLOPs, scaled by its share
 * `share` of the range, into the rep's result; returns the compute time. */
double hs_exec_add_compute(hs_rep_result *res, const hs_task *t, const hs_ops_cost *c, double f, double share)
{
	res->compute_s += c->comp * f;
	if (t->what == HS_W_OPTIMIZER)
		res->optimizer_s += c->comp * f;
	for (int k = 0; k < HS_TC_COUNT; k++)
		res->class_s[k] += c->cls[k] * f;
	res->flops += c->flops * share;
	return c->comp * f;
}

void hs_exec_inl_push(struct ex *x, uint32_t task, uint32_t op, double start_s, double end_s)
{
	hs_xgrow(&x->inl, &x->capinl, x->ninl + 1, sizeof *x->inl);
	x->inl[x->ninl++] = (hs_inl_span){task, op, start_s, end_s};
}

/* Where the collectives inside compute task ti (range m, starting now) run: op timing's places in the range
 * (hs_ops_cost.rec, once per range), the kernels before each scaled by the task's factor f as its compute is,
 * the collectives by its share. */
static void record_inlayer(struct ex *x, struct rep *r, uint32_t ti, struct memo *m, double f, double share)
{
	if (!m->rec_done) {
		hs_op_env e;
		hs_exec_rep_env(x, r, &e);
		hs_ops_cost c = {.rec = &m->rec};
		hs_ops_time(&e, x->g->ops + m->first, m->count, &c);
		m->rec_done = 1;
	}
	double t0 = hs_exec_step_s(x, hs_engine_now(x->eng));
	for (size_t k = 0; k < m->rec.n; k++) {
		const hs_ops_slot *sl = &m->rec.v[k];
		double a = t0 + f * sl->kern_s + share * sl->comm_s;
		hs_exec_inl_push(x, ti, m->first + sl->op, a, a + share * sl->dur_s);
	}
}

/* Compute task ti of rep `rep`: its kernels (scaled by compute_factor) and the closed-form time of the
 * collectives inside it as one event, or, where the network carries those collectives, as segments. */
static void start_compute(struct ex *x, int rep, uint32_t ti)
{
	struct rep *r = &x->reps[rep];
	const hs_task *t = &x->g->tasks[ti];
	int stage = x->g->reps[rep].stage;
	struct memo *m = hs_exec_range_cost(x, r, stage, t->op_first, t->op_count);
	if (x->inlayer && m->netcomm) {
		/* a gradient-bucket slice of a backward pass runs its share of the ops, so that every collective
		 * in it runs once, whole */
		uint32_t a = t->op_first, b = t->op_first + t->op_count;
		if (t->scale < 1) {
			uint32_t nsl = (uint32_t)lround(1 / t->scale), k = x->slice[ti];
			a = t->op_first + (uint32_t)((uint64_t)t->op_count * k / nsl);
			b = t->op_first + (uint32_t)((uint64_t)t->op_count * (k + 1) / nsl);
		}
		m = hs_exec_range_cost(x, r, stage, a, b - a);
		double f = compute_factor(x, r, m);
		hs_exec_add_compute(r->res, t, &m->c, f, 1);
		begin(x, ti);
		hs_exec_seg_start(x, rep, ti, a, b - a, f, task_done);
		return;
	}
	double f = t->scale * compute_factor(x, r, m);
	double d = hs_exec_add_compute(r->res, t, &m->c, f, t->scale);
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		r->res->exposed_s[k] += m->c.comm[k] * t->scale;
		d += m->c.comm[k] * t->scale;
	}
	double load = hs_exec_routing_load(x, rep, ti, m);
	if (load != 1) {
		/* the routed experts' kernels and the EP all-to-alls take `load` times their uniform time: the
		 * busiest rank's share sets when the combine completes for every rank of the group */
		hs_ops_cost extra = {.comp = (load - 1) * m->routed_s, .flops = (load - 1) * m->routed_flops};
		for (int k = 0; k < HS_TC_COUNT; k++)
			extra.cls[k] = (load - 1) * m->routed_cls[k];
		d += hs_exec_add_compute(r->res, t, &extra, f, t->scale);
		double ep = (load - 1) * m->c.comm[HS_GROUP_EP] * t->scale;
		r->res->exposed_s[HS_GROUP_EP] += ep;
		d += ep;
	}
	if (x->o->record_inlayer && m->netcomm)
		record_inlayer(x, r, ti, m, f, t->scale);
	begin(x, ti);
	hs_engine_after(x->eng, hs_time_from_s(d), done_ev, x, ti); /* op timing's seconds become hs_time here */
}

/* Seconds of host task t of rep `rep` on the rep's first device (its stage's ranks sit on one node group):
 * a copy at the device's host link (host.h: PCIe or NVLink-C2C, per GPU per direction, each GPU its own link
 * as on HGX boards and Grace superchips); the CPU optimizer at the node's host memory bandwidth shared by its
 * GPUs' processes, which all step at once (every rank of the job offloads). The scenario checked that every
 * group describes both, so a zero rate here is a bug. */
static double host_time(struct ex *x, int rep, const hs_task *t)
{
	const hs_rep *rp = &x->g->reps[rep];
	const hs_cluster *c = x->s->cluster;
	int gpu = hs_build_rank(x->s->par, 0, 0, rp->dp_index, rp->stage);
	if (t->what == HS_W_CPU_OPTIMIZER) {
		double bw = hs_cluster_host_mem_bw(c, gpu);
		int gpn = hs_cluster_group(c, hs_cluster_group_of(c, gpu))->gpus_per_node;
		if (bw <= 0) {
			fprintf(stderr, "hetsim: internal error: CPU optimizer on a node without host memory bandwidth\n");
			abort();
		}
		return t->bytes * gpn / bw;
	}
	double bw = hs_cluster_host_link_bw(c, gpu);
	if (bw <= 0) {
		fprintf(stderr, "hetsim: internal error: host copy on a device without a host link\n");
		abort();
	}
	return t->bytes / bw;
}

/* Start the next task of rep's stream if the stream is free and the task is ready. */
static void try_start(struct ex *x, int rep, int stream)
{
	struct rep *r = &x->reps[rep];
	if (r->busy[stream] || r->qpos[stream] >= r->qn[stream])
		return;
	uint32_t ti = r->queue[stream][r->qpos[stream]];
	struct tstate *st = &x->ts[ti];
	if (st->waiting)
		return;
	const hs_task *t = &x->g->tasks[ti];
	if (t->kind == HS_T_COMPUTE) {
		start_compute(x, rep, ti);
		return;
	}
	if (t->kind == HS_T_HOST) {
		begin(x, ti);
		hs_engine_after(x->eng, hs_time_from_s(host_time(x, rep, t)), done_ev, x, ti);
		return;
	}
	if (t->kind == HS_T_COLL && t->rendezvous >= 0) {
		/* occupy the stream while waiting for the other members, as a collective kernel does */
		struct rv *v = &x->rv[t->rendezvous];
		hs_time now = hs_engine_now(x->eng);
		r->busy[stream] = 1;
		st->arrive = now;
		v->tasks[v->arrived++] = ti;
		if (v->arrived < v->members)
			return;
		for (int k = 0; k < v->members; k++) {
			uint32_t mi = v->tasks[k];
			x->reps[x->g->tasks[mi].rep].res->straggler_wait_s +=
				hs_exec_step_s(x, now) - hs_exec_step_s(x, x->ts[mi].arrive);
			begin(x, mi);
		}
		x->comm->start(x, ti, v->tasks, v->members, task_done);
		return;
	}
	begin(x, ti);
	x->comm->start(x, ti, &ti, 1, task_done);
}

/* Task ti has ended: free its stream, release its successors, and start what became ready. */
static void task_done(struct ex *x, uint32_t ti)
{
	struct tstate *st = &x->ts[ti];
	const hs_task *t = &x->g->tasks[ti];
	struct rep *r = &x->reps[t->rep];
	hs_time now = hs_engine_now(x->eng);
	st->done = 1;
	st->end = now;
	r->busy[t->stream] = 0;
	r->qpos[t->stream]++;
	if (now > r->last_end)
		r->last_end = now;
	/* a collective on the compute stream (a traced workload's collective inside a layer) is a wait of the
	 * stream: the next task's begin() charges it to the collective's group, as a layer's blocking collective
	 * is charged in a built-in workload */
	if (t->stream == HS_S_COMPUTE && t->kind != HS_T_COLL)
		r->idle_since = now;
	if (++x->ndone == x->g->ntasks && x->step_end) /* after what else runs at this instant */
		hs_engine_after(x->eng, 0, step_end_ev, x, 0);
	for (uint32_t k = x->succ_first[ti]; k < x->succ_first[ti + 1]; k++) {
		uint32_t s = x->succ[k];
		x->ts[s].cause = ti;
		if (--x->ts[s].waiting == 0) {
			const hs_task *n = &x->g->tasks[s];
			try_start(x, n->rep, n->stream);
		}
	}
	try_start(x, t->rep, t->stream);
}

/* A summary of ranks[0..n-1] already made for one of reps[0..nrep-1]'s groups, or for one of rep r's groups
 * before kind k; NULL: none. A summary is a function of the cluster and the ordered ranks, and a pipeline's
 * stages share their PP group (every stage's rep the same ranks), so the reps of a step summarise it once. */
static const hs_coll_grp *grp_made(const struct rep *reps, int nrep, const struct rep *r, int k, const int *ranks,
				   int n)
{
	for (int i = 0; i <= nrep; i++) {
		const struct rep *q = i < nrep ? &reps[i] : r;
		for (int j = 0; j < (q == r ? k : HS_GROUP_COUNT); j++)
			if (q->grp_n[j] == n && q->grp[j][0] == ranks[0] &&
			    memcmp(q->grp[j], ranks, (size_t)n * sizeof *ranks) == 0)
				return &q->cg[j];
	}
	return NULL;
}

/* The groups rep i's ranks belong to, summarised once for the closed forms. */
static void rep_groups(struct ex *x, int i)
{
	const hs_workload *s = x->s;
	const hs_parallel *p = s->par;
	struct rep *r = &x->reps[i];
	const hs_rep *rp = &x->g->reps[i];
	int sizes[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp, [HS_GROUP_DP] = p->dp,
				     [HS_GROUP_EP] = p->ep, [HS_GROUP_PP] = p->pp};
	/* the groups' ranks in one block (grp[0] holds it; five allocations a rep were 1% of a sweep point) */
	size_t all = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		all += (size_t)(sizes[k] > 0 ? sizes[k] : 0);
	int *block = hs_xmalloc((all ? all : 1) * sizeof(int));
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		r->grp[k] = block;
		block += sizes[k] > 0 ? sizes[k] : 0;
		r->grp_n[k] = hs_build_group(p, (enum hs_group)k, rp->dp_index, rp->stage, r->grp[k]);
		if (r->grp_n[k] <= 1)
			continue;
		const hs_coll_grp *made = grp_made(x->reps, i, r, k, r->grp[k], r->grp_n[k]);
		if (made) {
			memcpy(&r->cg[k], made, sizeof *made); /* padding too: same_env and the range cache compare bytes */
			continue;
		}
		/* not zeroed whole (1 KB a group was 0.3% of a sweep point): hs_err_set reads the code, writes the rest */
		hs_err e;
		e.code = HS_OK;
		e.msg[0] = '\0';
		/* the scenario's strategy divides the cluster, so its groups are valid; a failure is a bug */
		if (hs_range_cache_grp_init(x->rcache, s->cluster_id, &r->cg[k], s->cluster, r->grp[k], r->grp_n[k], &e)) {
			fprintf(stderr, "hetsim: internal error: group of kind %d: %s\n", k, e.msg);
			abort();
		}
	}
}

/* Every rep: its device and profile, its groups, the devices it stands for, its memory. -1 when a profile
 * cannot be loaded. */
static int setup_reps(struct ex *x, const hs_build *b, hs_result *out)
{
	const hs_workload *s = x->s;
	const hs_graph *g = x->g;
	int symmetry = hs_plan_symmetric(s, g);
	for (int i = 0; i < g->nreps; i++) {
		struct rep *r = &x->reps[i];
		const hs_rep *rp = &g->reps[i];
		r->res = &out->reps[i];
		r->res->stage = rp->stage;
		r->res->dp_index = rp->dp_index;
		r->dev = hs_plan_rep_device(s, rp, symmetry, &r->ngroup);
		r->res->device = r->dev->name;
		/* the previous rep's where the device type is the same (asking the cache by name per rep was 1% of
		 * a sweep point) */
		r->prof = i > 0 && x->reps[i - 1].dev == r->dev ? x->reps[i - 1].prof : profile_for(x, r->dev);
		if (!r->prof)
			return -1;
		/* the kernels' times kept across the thread's steps, where it keeps op-range costs */
		r->kkey = !x->rcache                             ? NULL
			  : i > 0 && x->reps[i - 1].dev == r->dev ? x->reps[i - 1].kkey
								  : hs_range_cache_kernel_key(x->rcache, r->dev,
											      x->s->train->recipe ? x->s->train->recipe->aten_kernels
														  : hs_recipe_default()->aten_kernels);
		rep_groups(x, i);
		if (s->var->nrules) {
			const hs_parallel *p = s->par;
			int d0 = symmetry ? 0 : rp->dp_index, d1 = symmetry ? p->dp : rp->dp_index + 1;
			r->gpus = hs_xmalloc((size_t)(d1 - d0) * p->tp * p->cp * sizeof *r->gpus);
			for (int d = d0; d < d1; d++)
				for (int c = 0; c < p->cp; c++)
					for (int t = 0; t < p->tp; t++)
						r->gpus[r->ngpus++] = hs_build_rank(p, t, c, d, rp->stage);
		}
		const hs_stage_info *si = &b->stages[rp->stage];
		r->res->mem_bytes = si->mem.total;
		/* headroom is the smallest device's, which need not be the one that paces the rep */
		int small;
		r->res->mem_capacity = hs_plan_rep_smallest(s, rp, symmetry, &small)->hbm_bytes - s->par->memory_reserve;
	}
	return 0;
}

/* Stream queues (tasks in graph order), successor lists (CSR), rendezvous membership. */
static void setup_streams(struct ex *x)
{
	const hs_graph *g = x->g;
	x->succ_first = hs_xcalloc(g->ntasks + 1, sizeof *x->succ_first);
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		struct rep *r = &x->reps[t->rep];
		hs_xgrow(&r->queue[t->stream], &r->qcap[t->stream], r->qn[t->stream] + 1, sizeof(uint32_t));
		r->queue[t->stream][r->qn[t->stream]++] = (uint32_t)i;
		x->ts[i].waiting = t->dep_count;
		x->ts[i].cause = UINT32_MAX;
		for (uint32_t k = 0; k < t->dep_count; k++)
			x->succ_first[g->deps[t->dep_first + k] + 1]++;
	}
	for (size_t i = 0; i < g->ntasks; i++)
		x->succ_first[i + 1] += x->succ_first[i];
	x->succ = hs_xmalloc((g->ndeps ? g->ndeps : 1) * sizeof *x->succ);
	uint32_t *fill = hs_xcalloc(g->ntasks + 1, sizeof *fill);
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		for (uint32_t k = 0; k < t->dep_count; k++) {
			uint32_t d = g->deps[t->dep_first + k];
			x->succ[x->succ_first[d] + fill[d]++] = (uint32_t)i;
		}
	}
	free(fill);
	if (g->nrendezvous) {
		x->rv = hs_xcalloc((size_t)g->nrendezvous, sizeof *x->rv);
		for (size_t i = 0; i < g->ntasks; i++)
			if (g->tasks[i].kind == HS_T_COLL && g->tasks[i].rendezvous >= 0)
				x->rv[g->tasks[i].rendezvous].members++;
		for (int i = 0; i < g->nrendezvous; i++)
			x->rv[i].tasks = hs_xcalloc((size_t)x->rv[i].members + 1, sizeof(uint32_t));
	}
}

/* The engine until its queue is empty; with a progress hook, in slices of simulated time (events run in the
 * same order: a slice ends between two instants). */
static void run_engine(struct ex *x)
{
	const hs_simopts *o = x->o;
	if (!o->progress || !(x->horizon_s > 0)) {
		hs_engine_run(x->eng, HS_TIME_MAX);
		return;
	}
	hs_time slice = hs_time_from_s(x->horizon_s / 1000);
	slice = slice ? slice : 1;
	hs_progress p = {.horizon_s = x->horizon_s};
	hs_time t = hs_engine_now(x->eng), gap = slice;
	while (hs_engine_pending(x->eng)) {
		/* an empty slice doubles the next, so a quiet stretch costs a few calls, not one per slice */
		t = t > HS_TIME_MAX - gap ? HS_TIME_MAX : t + gap;
		if (!hs_engine_run(x->eng, t)) {
			gap = gap > HS_TIME_MAX / 2 ? HS_TIME_MAX : 2 * gap;
			continue;
		}
		gap = slice;
		p.sim_s = hs_time_to_s(hs_engine_now(x->eng));
		p.events = hs_engine_executed(x->eng);
		o->progress(o->progress_ctx, &p);
	}
	p.final = 1;
	o->progress(o->progress_ctx, &p);
}

void hs_exec_begin_step(struct ex *x)
{
	const hs_graph *g = x->g;
	x->step_start = hs_engine_now(x->eng);
	x->ndone = 0;
	x->ninl = 0; /* the trace shows the last step */
	for (size_t i = 0; i < g->ntasks; i++)
		x->ts[i] = (struct tstate){.waiting = g->tasks[i].dep_count, .cause = UINT32_MAX};
	for (int i = 0; i < g->nrendezvous; i++)
		x->rv[i].arrived = 0;
	hs_exec_inlayer_reset(x);
	x->comm->reset(x);
	for (int i = 0; i < g->nreps; i++) {
		struct rep *r = &x->reps[i];
		memset(r->qpos, 0, sizeof r->qpos);
		memset(r->busy, 0, sizeof r->busy);
		r->idle_since = x->step_start;
		r->last_end = x->step_start;
	}
	for (int i = 0; i < g->nreps; i++)
		for (int k = 0; k < HS_S_COUNT; k++)
			try_start(x, i, k);
}

int hs_exec_check_step(struct ex *x, hs_err *err)
{
	const hs_graph *g = x->g;
	for (size_t i = 0; i < g->ntasks; i++)
		if (!x->ts[i].done)
			return hs_err_set(err, HS_EINTERNAL, "internal error: task %zu (rep %d, stream %d) never ran: the "
							     "graph deadlocks",
					  i, g->tasks[i].rep, g->tasks[i].stream);
	return 0;
}

/* Run the steps one after another; each starts when the previous one has ended everywhere (the optimizer step
 * closes it). -1 with err when a task never ran. */
static int run_steps(struct ex *x, hs_result *out, hs_err *err)
{
	for (int st = 0; st < out->steps; st++) {
		x->step = st; /* routing.c keys its draws by the step */
		hs_exec_begin_step(x);
		run_engine(x);
		if (hs_exec_check_step(x, err))
			return -1;
		hs_exec_account_step(x, st, out);
	}
	return 0;
}

void hs_exec_close(struct ex *x)
{
	const hs_graph *g = x->g;
	x->comm->close(x);
	free(x->route_buf);
	free(x->route_memo);
	for (int i = 0; i < g->nreps; i++) {
		for (int k = 0; k < HS_S_COUNT; k++)
			free(x->reps[i].queue[k]);
		free(x->reps[i].grp[0]); /* every group's ranks: one block (rep_groups) */
		free(x->reps[i].gpus);
	}
	if (x->rv)
		for (int i = 0; i < g->nrendezvous; i++)
			free(x->rv[i].tasks);
	free(x->rv);
	if (x->own_profiles)
		hs_profile_cache_free(x->profiles);
	hs_op_memo_free(x->opmemo);
	free(x->reps);
	free(x->ts);
	free(x->succ);
	free(x->succ_first);
	for (size_t i = 0; i < x->nmemo; i++)
		free(x->memo[i].rec.v);
	free(x->memo);
	free(x->mslot);
	free(x->env_rep);
	free(x->inl);
	if (!x->shared_eng)
		hs_engine_destroy(x->eng);
	hs_rng_destroy(x->rng);
}

/* Zero rep r but for its group summaries: rep_groups writes each that is valid (grp_n > 1) before anything
 * reads it, and nothing reads the others (zeroing them, 1.7 KB a rep, was 0.6% of a sweep point). */
static void rep_zero(struct rep *r)
{
	size_t a = offsetof(struct rep, cg), b = a + sizeof r->cg;
	memset(r, 0, a);
	memset((char *)r + b, 0, sizeof *r - b);
}

/* hs_exec_open, with the event run's stream queues and successor lists (streams: 1) or without them (0: the
 * closed-form step walks the graph in order and needs neither; hs_exec_step sets them up where it falls back
 * to the event run). */
static int exec_open(struct ex *x, const hs_workload *s, const hs_simopts *o, const hs_build *b,
		     hs_profile_cache *cache, double horizon_s, const hs_exec_share *share, int streams, hs_result *out,
		     hs_err *err)
{
	memset(out, 0, sizeof *out);
	const hs_graph *g = &b->graph;
	*x = (struct ex){.s = s, .o = o, .b = b, .horizon_s = horizon_s, .g = g, .err = err, .profiles = cache,
			 .comm = comm_by_fidelity[o->fidelity]};
	if (share) {
		x->eng = share->eng;
		x->shared_eng = 1;
		x->shared_net = share->net;
		x->dev0 = share->dev0;
	}
	if (!x->profiles) {
		x->profiles = hs_profile_cache_create();
		x->own_profiles = 1;
	} else if (hs_build_memo_on()) {
		/* the caller's cache outlives this step; HETSIM_BUILD_MEMO=0 turns this reuse off with the build's,
		 * so that the baseline of bench_sweep computes every range afresh and its rows check the reuse */
		x->rcache = hs_range_cache_of(x->profiles);
	}
	x->opmemo = hs_op_memo_create();
	if (!x->eng)
		x->eng = hs_engine_create();
	/* not zeroed: every step sets each task's state before it reads it (hs_exec_begin_step, or the closed
	 * step as it walks; zeroing it was 4% of a sweep point's instructions) */
	x->ts = hs_xmalloc((g->ntasks ? g->ntasks : 1) * sizeof *x->ts);
	x->reps = hs_xmalloc((g->nreps ? (size_t)g->nreps : 1) * sizeof *x->reps);
	for (int i = 0; i < g->nreps; i++)
		rep_zero(&x->reps[i]);
	out->reps = hs_xcalloc((size_t)g->nreps, sizeof *out->reps);
	out->nreps = g->nreps;
	{
		/* the distinct op ranges (hs_build.ranges; else about 3 per (stage, chunk): forward and backward, or
		 * its input and weight halves, the bucket slices sharing the backward's) and the optimizer per stage,
		 * on each node group, and the canonical ranges that aliases take the cost of: room for all at once, so
		 * that the table does not grow in the common case (it grows past that: traced graphs). Only the slots
		 * are zeroed (zeroing a table of entries many times too big was 8% of a sweep point). */
		size_t est = x->b->nranges ? x->b->nranges
					   : (size_t)(3 * s->par->pp * s->par->vstages + s->par->pp);
		est = 2 * (est + (size_t)s->par->pp) * (size_t)hs_cluster_ngroups(s->cluster);
		x->memo = hs_xmalloc(est * sizeof *x->memo);
		x->memocap = est;
		x->nslot = 64;
		while (x->nslot < 2 * est)
			x->nslot *= 2;
		x->mslot = hs_xcalloc(x->nslot, sizeof *x->mslot);
	}
	if (setup_reps(x, b, out))
		return -1;
	if (streams)
		setup_streams(x);
	if (x->comm->open(x, err))
		return -1;
	setup_env_classes(x);
	out->steps = s->var->steps > 0 ? s->var->steps : 1;
	out->step_times = hs_xcalloc((size_t)out->steps, sizeof *out->step_times);
	if (s->var->noise != HS_NOISE_NONE)
		x->rng = hs_rng_create(o->seed, 1 /* stream: per-op noise */);
	return 0;
}

int hs_exec_open(struct ex *x, const hs_workload *s, const hs_simopts *o, const hs_build *b,
		 hs_profile_cache *cache, double horizon_s, const hs_exec_share *share, hs_result *out, hs_err *err)
{
	return exec_open(x, s, o, b, cache, horizon_s, share, 1, out, err);
}

int hs_exec_step(const hs_workload *s, const hs_simopts *o, const hs_build *b, hs_profile_cache *cache,
		 double horizon_s, hs_result *out, hs_err *err)
{
	struct ex x;
	int rc = -1;
	/* packet fidelity's communication tasks are the packet model's and the flow network's: no closed step */
	int closed = o->closed_form && o->fidelity != HS_FID_PACKET;
	/* the closed step needs no stream queues, but the network's in-layer lanes (comm_net.c) and the closed
	 * forms' per-link bytes (comm_closed.c) read them: those set them up at open, as before */
	int lazy = closed && o->fidelity == HS_FID_ANALYTICAL && !o->record_links;
	if (exec_open(&x, s, o, b, cache, horizon_s, NULL, !lazy, out, err))
		goto out;
	const char *why = !closed ? "not asked for" : b->pipe ? hs_exec_pipe_step(&x, out) : hs_exec_closed_step(&x, out);
	if (why && b->pipe) { /* a build without tasks: the caller plans the graph and runs that */
		rc = HS_EXEC_NEEDS_GRAPH;
		goto out;
	}
	out->closed_form = why ? 0 : b->pipe ? 2 : 1;
	out->event_why = o->closed_form ? why : NULL;
	if (why && lazy)
		setup_streams(&x); /* the closed step left nothing accounted: the event run starts afresh */
	if (why && run_steps(&x, out, err))
		goto out;
	x.comm->collect(&x, out);
	hs_exec_aggregate(&x, b, out);
	rc = 0;
out:
	hs_exec_close(&x);
	if (rc)
		hs_result_free(out);
	return rc;
}
