/* Communication tasks carried by a network model (sim/net, the flow model: flow fidelity): a collective runs
 * step by step as transfers and a send as one transfer, once per TP x CP lane of the ranks a rep stands for,
 * and the task ends when its last lane has arrived. Contention between tasks in flight is the network's.
 *
 * Opening it also turns on what else the network carries: the collectives inside compute tasks
 * (layer_collectives: network, inlayer.c) and the link-utilisation timeline of the busiest links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_flow.h"
#include "sim/exec/exec_impl.h"

/* One graph task (or the members of one rendezvous) carried by the network as several lanes: the same
 * collective or transfer for every TP x CP index of the ranks a rep stands for, since all of them run at once
 * and share links. */
struct netop {
	int lanes_left;
	uint32_t task;         /* the task, when it ends alone */
	const uint32_t *tasks; /* or the members of its rendezvous (NULL: the task alone) */
	int n;
};

struct netstate {
	hs_exec_done done;    /* the same for every call: the core's */
	int lanes;            /* TP x CP lanes per task: all, or 1 when they are equivalent */
	struct netop *netops; /* tasks in flight (reset every step) */
	size_t nnetops, capnetops;
};

/* The TP x CP lanes of a stage run the same collectives and sends on different devices. When every device has
 * its own NIC on its own rail of a non-blocking rail-optimised (or multi-plane) fabric, the lanes' traffic never
 * shares a link outside the (non-blocking) scale-up switch, so they take the same time and one lane stands for
 * all (DESIGN.md: simulate what differs, once). Otherwise every lane runs and they contend. `symmetry: false`
 * runs every lane. */
int hs_exec_lanes_contend(const hs_workload *s, const hs_simopts *o)
{
	const hs_fabric_spec *f = hs_cluster_fabric(s->cluster);
	if (!o->symmetry || !f || f->oversubscription > 1 ||
	    !f->props->rail_aligned)
		return 1;
	for (int g = 0; g < hs_cluster_ngroups(s->cluster); g++) {
		const hs_node_group *ng = hs_cluster_group(s->cluster, g);
		if (ng->nics_per_node != ng->gpus_per_node)
			return 1;
	}
	return 0;
}

static int open_net(struct ex *x, hs_err *err)
{
	struct netstate *ns = hs_xcalloc(1, sizeof *ns);
	x->comm_state = ns;
	x->net = x->shared_net ? x->shared_net
			       : hs_net_create(x->s->cluster, x->o->network ? x->o->network : "flow", x->eng, err);
	if (!x->net)
		return -1;
	hs_net_set_symmetry(x->net, x->o->symmetry); /* symmetry classes of transfers (sim/net/netsym.h) */
	x->contend = hs_exec_lanes_contend(x->s, x->o);
	ns->lanes = x->contend ? x->s->par->tp * x->s->par->cp : 1;
	x->inlayer = x->o->layer_net;
	if (x->inlayer)
		hs_exec_inlayer_setup(x);
	if (x->horizon_s > 0)
		hs_net_stats_timeline(x->net, 1.5 * x->horizon_s / HS_EXEC_LINK_BINS, HS_EXEC_LINK_BINS);
	return 0;
}

static void reset_net(struct ex *x)
{
	((struct netstate *)x->comm_state)->nnetops = 0;
}

static void lane_done(void *ctx, uint64_t arg)
{
	struct ex *x = ctx;
	struct netstate *ns = x->comm_state;
	struct netop *op = &ns->netops[arg];
	if (--op->lanes_left > 0)
		return;
	double now = hs_exec_step_s(x, hs_engine_now(x->eng));
	if (!op->tasks) {
		x->ts[op->task].xfer_s = now - hs_exec_step_s(x, x->ts[op->task].start);
		ns->done(x, op->task);
		return;
	}
	const uint32_t *tasks = op->tasks; /* done may start more tasks and grow netops */
	for (int k = 0, n = op->n; k < n; k++) {
		x->ts[tasks[k]].xfer_s = now - hs_exec_step_s(x, x->ts[tasks[k]].start);
		ns->done(x, tasks[k]);
	}
}

/* Run `op` over the job's ranks on the network as `hetsim coll --fidelity flow` runs it over the same devices:
 * the algorithm and the channels (a channel per NIC of the group's devices when it leaves its scale-up domain)
 * are the one rule of sim/coll/coll_flow.h, so a collective inside a step takes what it takes alone there on an
 * idle network. The plan is the job's cluster's, on the job's ranks; the network's devices are dev0 on. The
 * layout is set just before the start: a collective keeps the channels it started with (sim/net/netcoll.c
 * copies them), whatever the next group sets. */
int hs_exec_net_collective(struct ex *x, enum hs_coll_op op, const int *ranks, int n, double bytes,
			   hs_net_done done, uint64_t arg, hs_err *err)
{
	hs_coll_flow_plan pl;
	if (hs_coll_flow_plan_of(x->s->cluster, op, (enum hs_coll_algo)x->s->coll_algo, HS_PROTO_AUTO, ranks, n, bytes,
				 &pl))
		return hs_coll_check(x->s->cluster, ranks, n, err);
	hs_net_set_channels(x->net, pl.channels);
	hs_net_set_rails(x->net, pl.nrails ? pl.rails : NULL, pl.nrails);
	if (!x->dev0)
		return hs_net_collective(x->net, op, pl.algo, ranks, n, bytes, done, x, arg, err);
	int *g = hs_xmalloc((size_t)n * sizeof *g);
	for (int i = 0; i < n; i++)
		g[i] = x->dev0 + ranks[i];
	int rc = hs_net_collective(x->net, op, pl.algo, g, n, bytes, done, x, arg, err);
	free(g);
	return rc;
}

int hs_exec_net_send(struct ex *x, int src, int dst, double bytes, hs_net_done done, uint64_t arg, hs_err *err)
{
	return hs_net_send(x->net, x->dev0 + src, x->dev0 + dst, bytes, done, x, arg, err);
}

/* Start task ti's traffic on the network: one collective or send per TP x CP lane. */
static void start_net(struct ex *x, uint32_t ti, const uint32_t *tasks, int ntasks, hs_exec_done done)
{
	struct netstate *ns = x->comm_state;
	const hs_task *t = &x->g->tasks[ti];
	const hs_parallel *p = x->s->par;
	const hs_rep *rp = &x->g->reps[t->rep];
	ns->done = done;
	hs_xgrow(&ns->netops, &ns->capnetops, ns->nnetops + 1, sizeof *ns->netops);
	size_t id = ns->nnetops++;
	/* a task alone is named by value: the caller's array need not outlive this call */
	ns->netops[id] = (struct netop){.lanes_left = ns->lanes, .task = tasks[0],
					.tasks = ntasks > 1 ? tasks : NULL, .n = ntasks};
	int *ranks = hs_xmalloc((size_t)(p->dp > 2 ? p->dp : 2) * sizeof *ranks);
	int rc = 0;
	hs_err e = {0};
	for (int c = 0; c < p->cp && !rc; c++)
		for (int tt = 0; tt < p->tp && !rc; tt++) {
			if (c * p->tp + tt >= ns->lanes)
				break;
			if (t->kind == HS_T_SEND) {
				const hs_rep *q = &x->g->reps[t->peer];
				int src = hs_build_rank(p, tt, c, rp->dp_index, rp->stage);
				int dst = hs_build_rank(p, tt, c, q->dp_index, q->stage);
				rc = hs_exec_net_send(x, src, dst, t->bytes, lane_done, id, &e);
			} else if (t->xgroup) {
				/* an explicit group (a traced workload's process group) is one lane of its own devices */
				const hs_graph *g = x->g;
				uint32_t gi = t->xgroup - 1;
				const int *xr = g->xg_ranks + g->xg_first[gi];
				int n = (int)(g->xg_first[gi + 1] - g->xg_first[gi]);
				rc = hs_exec_net_collective(x, (enum hs_coll_op)t->coll, xr, n, t->bytes, lane_done, id, &e);
			} else {
				for (int d = 0; d < p->dp; d++)
					ranks[d] = hs_build_rank(p, tt, c, d, rp->stage);
				rc = hs_exec_net_collective(x, (enum hs_coll_op)t->coll, ranks, p->dp, t->bytes,
							    lane_done, id, &e);
			}
		}
	free(ranks);
	if (rc) { /* the groups come from the scenario's own checked strategy: a refusal is a bug */
		fprintf(stderr, "hetsim: internal error: the network refused a task's traffic: %s\n", e.msg);
		abort();
	}
}

static void collect_net(struct ex *x, hs_result *out)
{
	if (x->horizon_s > 0)
		hs_exec_collect_links(x, out);
}

static void close_net(struct ex *x)
{
	struct netstate *ns = x->comm_state;
	hs_exec_inlayer_free(x);
	if (!x->shared_net)
		hs_net_free(x->net);
	x->net = NULL;
	if (!ns)
		return;
	free(ns->netops);
	free(ns);
	x->comm_state = NULL;
}

const hs_exec_comm_ops hs_exec_comm_net = {"network", open_net, reset_net, start_net, collect_net, close_net};
