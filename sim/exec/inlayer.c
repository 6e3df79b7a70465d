/* Collectives inside compute tasks on the network (flow fidelity with layer_collectives: network).
 *
 * A compute task's op range may hold TP, CP or EP collectives. At the closed forms they are part of the task's
 * time (hs_ops_time); here the task runs as segments instead: the kernels up to the next collective as one
 * event, then the collective on the network, on every lane of the rep's group (beside the next kernel when
 * the op overlaps it), then the next segment. The collective's time beyond the kernel it hides behind is
 * exposed communication of its group. EP all-to-alls of reps that form one EP group start when every member
 * has reached them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

#define EPG_BIT (1ull << 63) /* a network callback's arg names an EP rendezvous, not a rep */

/* Lanes of an in-layer group of kind k: the groups of that kind among the ranks a rep stands for that differ
 * only in the other TP x CP index (TP: one per CP index, CP: one per TP index, EP: one per TP x CP pair), all
 * running at once; 1 where one lane stands for all (hs_exec_lanes_contend is 0, as for the comm tasks' lanes). */
static int inlayer_lanes(const struct ex *x, enum hs_group k)
{
	const hs_parallel *p = x->s->par;
	if (!x->contend)
		return 1;
	switch (k) {
	case HS_GROUP_TP: return p->cp;
	case HS_GROUP_CP: return p->tp;
	case HS_GROUP_EP: return p->tp * p->cp;
	default: return 1;
	}
}

/* The n ranks of lane `lane` of group kind k of replica d; lane 0 is hs_build_group's group. */
static void lane_ranks(const hs_parallel *p, enum hs_group k, int lane, int d, int stage, int n, int *out)
{
	for (int i = 0; i < n; i++)
		switch (k) {
		case HS_GROUP_TP: out[i] = hs_build_rank(p, i, lane, d, stage); break;
		case HS_GROUP_CP: out[i] = hs_build_rank(p, lane, i, d, stage); break;
		case HS_GROUP_EP:
			out[i] = hs_build_rank(p, lane % p->tp, lane / p->tp, d / p->ep * p->ep + i, stage);
			break;
		default: out[i] = -1; break;
		}
}

/* Every group of kind k that rep i runs for an in-layer collective: its lanes (above), and, when the rep
 * stands for all replicas (symmetry) and the group leaves its node on a fabric where lanes contend, the
 * lanes of every replica's group too, since their traffic meets on the same fabric links (an EP all-to-all
 * beside the other replicas' on an oversubscribed spine). A group inside one node meets other replicas'
 * traffic only on its own node's scale-up, so replica 0's stands for all (DESIGN.md: simulate what differs,
 * once); that keeps TP, which is inside a node nearly always, at one group per lane. */
static void inlayer_groups(struct ex *x, int i, enum hs_group k)
{
	const hs_parallel *p = x->s->par;
	struct rep *r = &x->reps[i];
	const hs_rep *rp = &x->g->reps[i];
	int n = r->grp_n[k], lanes = inlayer_lanes(x, k), nrep = 1, step = 1;
	int spans = 0;
	for (int q = 1; q < n; q++)
		spans |= hs_cluster_domain_of(x->s->cluster, r->grp[k][q]) != hs_cluster_domain_of(x->s->cluster, r->grp[k][0]);
	if (spans && x->contend && x->g->nreps == p->pp && p->dp > 1) {
		step = k == HS_GROUP_EP ? p->ep : 1; /* EP groups are runs of ep replicas */
		nrep = (p->dp + step - 1) / step;
	}
	r->lane_n[k] = lanes * nrep;
	r->lane_rk[k] = hs_xmalloc((size_t)r->lane_n[k] * n * sizeof(int));
	for (int d = 0, l = 0; d < nrep; d++)
		for (int ln = 0; ln < lanes; ln++, l++)
			lane_ranks(p, k, ln, rp->dp_index + d * step, rp->stage, n, r->lane_rk[k] + (size_t)l * n);
}

/* Every rep's lane groups, its EP rendezvous (without symmetry the replicas of one EP group are reps of their
 * own) and each sliced task's index among its slices. */
void hs_exec_inlayer_setup(struct ex *x)
{
	const hs_graph *g = x->g;
	const hs_parallel *p = x->s->par;
	for (int i = 0; i < g->nreps; i++) {
		struct rep *r = &x->reps[i];
		r->epg = -1;
		for (int k = 0; k < HS_GROUP_COUNT; k++) {
			if (r->grp_n[k] > 1 && (k == HS_GROUP_TP || k == HS_GROUP_CP || k == HS_GROUP_EP))
				inlayer_groups(x, i, (enum hs_group)k);
		}
	}
	if (p->ep > 1 && g->nreps > p->pp) {
		int per = (p->dp + p->ep - 1) / p->ep;
		x->nepg = p->pp * per;
		x->epg = hs_xcalloc((size_t)x->nepg, sizeof *x->epg);
		for (int i = 0; i < x->nepg; i++)
			x->epg[i].reps = hs_xmalloc((size_t)p->ep * sizeof(int));
		for (int i = 0; i < g->nreps; i++) {
			struct epgrp *e = &x->epg[g->reps[i].stage * per + g->reps[i].dp_index / p->ep];
			x->reps[i].epg = (int)(e - x->epg);
			if (e->members < p->ep)
				e->reps[e->members++] = i;
		}
	}
	x->slice = hs_xcalloc(g->ntasks ? g->ntasks : 1, sizeof *x->slice);
	for (int i = 0; i < g->nreps; i++) {
		const struct rep *r = &x->reps[i];
		const hs_task *prev = NULL;
		uint32_t pi = 0;
		for (size_t q = 0; q < r->qn[HS_S_COMPUTE]; q++) {
			uint32_t ti = r->queue[HS_S_COMPUTE][q];
			const hs_task *t = &g->tasks[ti];
			if (t->scale < 1 && prev && prev->op_first == t->op_first && prev->op_count == t->op_count &&
			    prev->scale == t->scale && x->slice[pi] + 1 < lround(1 / t->scale))
				x->slice[ti] = (uint16_t)(x->slice[pi] + 1);
			prev = t;
			pi = ti;
		}
	}
}

void hs_exec_inlayer_reset(struct ex *x)
{
	for (int i = 0; i < x->nepg; i++)
		x->epg[i].arrived = 0;
}

void hs_exec_inlayer_free(struct ex *x)
{
	for (int i = 0; x->reps && i < x->g->nreps; i++)
		for (int k = 0; k < HS_GROUP_COUNT; k++) {
			free(x->reps[i].lane_rk[k]);
			x->reps[i].lane_rk[k] = NULL;
		}
	for (int i = 0; i < x->nepg; i++)
		free(x->epg[i].reps);
	free(x->epg);
	free(x->slice);
	x->epg = NULL;
	x->nepg = 0;
	x->slice = NULL;
}

static int net_comm(const struct rep *r, const hs_op *o)
{
	return o->kind == HS_OP_COMM && r->grp_n[o->group] > 1 && o->bytes > 0;
}

static void seg_next(struct ex *x, int rep);

/* One part of the segment's collective (a lane, the overlapped kernel, or the EP rendezvous) has ended. */
static void seg_part_done(struct ex *x, int rep)
{
	struct rep *r = &x->reps[rep];
	if (--r->seg.pending > 0)
		return;
	/* the collective's time beyond the kernel it hides behind (the EP rendezvous may have started it after
	 * that kernel began, so this can be negative) */
	double took = hs_exec_step_s(x, hs_engine_now(x->eng)) - hs_exec_step_s(x, r->seg.comm_start);
	double c = took - r->seg.hide;
	if (c > 0)
		r->res->exposed_s[r->seg.group] += c;
	if (x->o->record_inlayer)
		hs_exec_inl_push(x, r->seg.task, r->seg.comm_op, hs_exec_step_s(x, r->seg.comm_start),
				 hs_exec_step_s(x, hs_engine_now(x->eng)));
	r->seg.lag -= took / r->seg.f; /* the host went on issuing while the device waited (in unscaled time) */
	seg_next(x, rep);
}

static void seg_net_done(void *ctx, uint64_t arg)
{
	struct ex *x = ctx;
	if (!(arg & EPG_BIT)) {
		seg_part_done(x, (int)arg);
		return;
	}
	struct epgrp *g = &x->epg[arg & ~EPG_BIT];
	if (--g->lanes_left > 0)
		return;
	for (int m = 0; m < g->members; m++)
		seg_part_done(x, g->reps[m]);
}

static void seg_hide_ev(hs_engine *eng, void *ctx, uint64_t rep)
{
	(void)eng;
	seg_part_done(ctx, (int)rep);
}

/* Start in-layer collective o on every lane of rep r's group; each lane's completion (each send of a ring
 * step) calls back with arg. Returns the number of callbacks to expect. */
static int inlayer_start(struct ex *x, const struct rep *r, const hs_op *o, uint64_t arg)
{
	int k = o->group, n = r->grp_n[k], lanes = r->lane_n[k], calls = 0, rc = 0;
	hs_err e = {0};
	for (int l = 0; l < lanes && !rc; l++) {
		const int *rk = r->lane_rk[k] + (size_t)l * n;
		if (o->coll == HS_COLL_SENDRECV) {
			/* one ring step: every member sends to the next at once (ring attention's KV blocks) */
			for (int i = 0; i < n && !rc; i++, calls++)
				rc = hs_exec_net_send(x, rk[i], rk[(i + 1) % n], o->bytes, seg_net_done, arg, &e);
		} else {
			rc = hs_exec_net_collective(x, o->coll, rk, n, o->bytes, seg_net_done, arg, &e);
			calls++;
		}
	}
	if (rc) { /* the groups come from the scenario's own checked strategy: a refusal is a bug */
		fprintf(stderr, "hetsim: internal error: the network refused an in-layer collective: %s\n", e.msg);
		abort();
	}
	return calls;
}

/* The segment's kernels have run: start its collective, or end the task. */
static void seg_comm(struct ex *x, int rep)
{
	struct rep *r = &x->reps[rep];
	struct seg *sg = &r->seg;
	hs_time now = hs_engine_now(x->eng);
	if (sg->pos >= sg->end) {
		sg->done(x, sg->task);
		return;
	}
	sg->comm_op = sg->pos;
	const hs_op *o = &x->g->ops[sg->pos++];
	sg->group = o->group;
	sg->hide = 0;
	sg->comm_start = now;
	sg->pending = 0;
	if (o->overlap && sg->pos < sg->end && x->g->ops[sg->pos].kind != HS_OP_COMM) {
		hs_op_env e;
		int c;
		hs_exec_rep_env(x, r, &e);
		sg->hide = hs_op_time(&e, &x->g->ops[sg->pos++], &c) * sg->f;
		sg->pending++;
		hs_engine_after(x->eng, hs_time_from_s(sg->hide), seg_hide_ev, x, (uint64_t)rep);
	}
	if (o->group == HS_GROUP_EP && r->epg >= 0 && x->epg[r->epg].members > 1) {
		struct epgrp *g = &x->epg[r->epg];
		sg->pending++;
		sg->arrive = now;
		if (++g->arrived < g->members)
			return;
		g->arrived = 0;
		for (int m = 0; m < g->members; m++) {
			struct rep *q = &x->reps[g->reps[m]];
			q->res->straggler_wait_s += hs_exec_step_s(x, now) - hs_exec_step_s(x, q->seg.arrive);
			q->seg.comm_start = now;
		}
		g->lanes_left = inlayer_start(x, r, o, EPG_BIT | (uint64_t)r->epg);
		return;
	}
	sg->pending += inlayer_start(x, r, o, (uint64_t)rep);
}

static void seg_kernels_ev(hs_engine *eng, void *ctx, uint64_t rep)
{
	(void)eng;
	seg_comm(ctx, (int)rep);
}

/* Run the kernels up to the next network-carried collective as one event. */
static void seg_next(struct ex *x, int rep)
{
	struct rep *r = &x->reps[rep];
	struct seg *sg = &r->seg;
	const hs_op *ops = x->g->ops;
	hs_op_env e;
	hs_exec_rep_env(x, r, &e);
	uint32_t a = sg->pos;
	while (sg->pos < sg->end && !net_comm(r, &ops[sg->pos]))
		sg->pos++;
	/* the kernels and host waits up to the collective (the host issued them while it ran) */
	hs_ops_cost c = {0};
	hs_ops_time_from(&e, ops + a, sg->pos - a, &sg->lag, &c);
	double comp = c.comp;
	if (sg->pos < sg->end) { /* the host issues the collective; one that is behind holds it back */
		sg->lag += hs_op_issue_s(&e, &ops[sg->pos]);
		if (sg->lag > 0) {
			comp += sg->lag;
			sg->lag = 0;
		}
	}
	if (comp > 0) {
		hs_engine_after(x->eng, hs_time_from_s(comp * sg->f), seg_kernels_ev, x, (uint64_t)rep);
		return;
	}
	seg_comm(x, rep);
}

void hs_exec_seg_start(struct ex *x, int rep, uint32_t task, uint32_t first, uint32_t count, double f,
		       hs_exec_done done)
{
	x->reps[rep].seg = (struct seg){.task = task, .pos = first, .end = first + count, .f = f, .done = done,
					.lag = NAN};
	seg_next(x, rep);
}
