/* Communication tasks timed by the closed forms (sim/coll): a collective or send takes the idle-network time of
 * its group, whatever else is in flight, so it is one engine event at now + that time per task that it ends.
 * This is where a closed form's seconds become hs_time (the analytical and packet fidelities).
 *
 * The registered analytical network model (sim/net/net_analytical.c) is not this path: it times every transfer
 * of a collective run step by step on the network, where these closed forms time the collective whole (with
 * hop latencies, the algorithm's structure and route-aware bandwidths), so the two give different figures. It
 * stays a network model, which the network tests run beside the flow model. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

/* A rep sends to at most two peers (the next and the previous model chunk's stage): their pair summaries. */
struct peers {
	int peer[2]; /* -1: none */
	hs_coll_grp cg[2];
};

/* Times already computed in this step, by (group summary, collective, bytes): a step's sends repeat one size per
 * stage pair and its gradient buckets one size per chunk, and each closed form runs NCCL's tuner (the algorithm
 * and protocol choice), so asking again is the cost. The algorithm setting is the scenario's, fixed for the run. */
struct tmemo {
	const hs_coll_grp *g;
	int coll;
	double bytes, s;
};

struct closed {
	hs_exec_done done; /* the same for every call: the core's */
	struct peers *peers; /* [nreps] */
	struct tmemo *m;
	size_t mcap, mn;
	/* the graph's explicit groups summarised on first use (a traced workload's process groups) */
	hs_coll_grp *xg;   /* [nxg] */
	uint8_t *xg_init;  /* [nxg] */
};

static size_t tslot(const hs_coll_grp *g, int op, double bytes, size_t cap)
{
	uint64_t b;
	memcpy(&b, &bytes, sizeof b);
	return (size_t)(((uintptr_t)g * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^ (uint64_t)op) & (cap - 1);
}

static double grp_time(struct closed *cl, const hs_coll_grp *g, enum hs_coll_op op, enum hs_coll_algo algo,
		       double bytes)
{
	if (2 * (cl->mn + 1) > cl->mcap) { /* under half full: double and re-insert */
		struct tmemo *old = cl->m;
		size_t oc = cl->mcap;
		cl->mcap = oc ? 2 * oc : 64;
		cl->m = hs_xcalloc(cl->mcap, sizeof *cl->m);
		for (size_t i = 0; i < oc; i++)
			if (old[i].g) {
				size_t j = tslot(old[i].g, old[i].coll, old[i].bytes, cl->mcap);
				while (cl->m[j].g)
					j = (j + 1) & (cl->mcap - 1);
				cl->m[j] = old[i];
			}
		free(old);
	}
	size_t j = tslot(g, (int)op, bytes, cl->mcap);
	for (; cl->m[j].g; j = (j + 1) & (cl->mcap - 1))
		if (cl->m[j].g == g && cl->m[j].coll == (int)op && cl->m[j].bytes == bytes)
			return cl->m[j].s;
	double s = hs_coll_grp_time(g, op, algo, bytes, NULL);
	cl->m[j] = (struct tmemo){g, (int)op, bytes, s};
	cl->mn++;
	return s;
}

static int open_closed(struct ex *x, hs_err *err)
{
	(void)err;
	struct closed *c = hs_xcalloc(1, sizeof *c);
	c->peers = hs_xcalloc((size_t)(x->g->nreps ? x->g->nreps : 1), sizeof *c->peers);
	for (int i = 0; i < x->g->nreps; i++)
		c->peers[i].peer[0] = c->peers[i].peer[1] = -1;
	if (x->g->nxg) {
		c->xg = hs_xcalloc(x->g->nxg, sizeof *c->xg);
		c->xg_init = hs_xcalloc(x->g->nxg, 1);
	}
	x->comm_state = c;
	return 0;
}

/* Seconds of collective t over explicit group t->xgroup - 1 (its devices were checked against the cluster by
 * whoever made the graph: a refusal here is a bug). */
static double xgroup_time(struct ex *x, struct closed *cl, const hs_task *t)
{
	uint32_t gi = t->xgroup - 1;
	const hs_graph *g = x->g;
	int n = (int)(g->xg_first[gi + 1] - g->xg_first[gi]);
	if (n <= 1)
		return 0;
	if (!cl->xg_init[gi]) {
		hs_err e = {0};
		if (hs_coll_grp_init(&cl->xg[gi], x->s->cluster, g->xg_ranks + g->xg_first[gi], n, &e)) {
			fprintf(stderr, "hetsim: internal error: explicit group %u: %s\n", gi, e.msg);
			abort();
		}
		cl->xg_init[gi] = 1;
	}
	return hs_coll_grp_time(&cl->xg[gi], (enum hs_coll_op)t->coll, (enum hs_coll_algo)x->s->coll_algo, t->bytes,
				NULL);
}

static void reset_closed(struct ex *x) { (void)x; }

/* Seconds task t takes on an idle network. */
static double comm_time(struct ex *x, struct closed *cl, const hs_task *t)
{
	struct rep *r = &x->reps[t->rep];
	if (t->kind == HS_T_SEND) {
		struct peers *pp = &cl->peers[t->rep];
		int slot = pp->peer[0] == t->peer ? 0 : pp->peer[1] == t->peer ? 1 : pp->peer[0] < 0 ? 0 : 1;
		if (pp->peer[slot] != t->peer) {
			const hs_parallel *p = x->s->par;
			const hs_rep *a = &x->g->reps[t->rep], *b = &x->g->reps[t->peer];
			int ranks[2] = {hs_build_rank(p, 0, 0, a->dp_index, a->stage),
					hs_build_rank(p, 0, 0, b->dp_index, b->stage)};
			hs_err e = {0};
			if (hs_coll_grp_init(&pp->cg[slot], x->s->cluster, ranks, 2, &e))
				return hs_coll_time(x->s->cluster, HS_COLL_SENDRECV, HS_ALGO_AUTO, ranks, 2, t->bytes);
			pp->peer[slot] = t->peer;
		}
		return grp_time(cl, &pp->cg[slot], HS_COLL_SENDRECV, HS_ALGO_AUTO, t->bytes);
	}
	if (t->xgroup)
		return xgroup_time(x, cl, t);
	if (r->grp_n[t->group] <= 1)
		return 0;
	return grp_time(cl, &r->cg[t->group], (enum hs_coll_op)t->coll, (enum hs_coll_algo)x->s->coll_algo, t->bytes);
}

double hs_exec_comm_closed_time(struct ex *x, uint32_t task)
{
	return comm_time(x, x->comm_state, &x->g->tasks[task]);
}

static void done_ev(hs_engine *eng, void *ctx, uint64_t task)
{
	(void)eng;
	struct ex *x = ctx;
	((struct closed *)x->comm_state)->done(x, (uint32_t)task);
}

/* One event per task it ends, each at now + the time: the members of a rendezvous end at the same instant, in
 * the order they were handed over. */
static void start_closed(struct ex *x, uint32_t task, const uint32_t *tasks, int n, hs_exec_done done)
{
	struct closed *cl = x->comm_state;
	cl->done = done;
	double s = comm_time(x, cl, &x->g->tasks[task]);
	hs_time d = hs_time_from_s(s); /* the one place a closed form's seconds become engine time */
	for (int k = 0; k < n; k++) {
		x->ts[tasks[k]].xfer_s = s;
		hs_engine_after(x->eng, d, done_ev, x, tasks[k]);
	}
}

static void collect_closed(struct ex *x, hs_result *out)
{
	(void)x;
	(void)out; /* no links: the closed forms see none */
}

static void close_closed(struct ex *x)
{
	struct closed *cl = x->comm_state;
	if (!cl)
		return;
	free(cl->peers);
	free(cl->m);
	free(cl->xg);
	free(cl->xg_init);
	free(cl);
	x->comm_state = NULL;
}

const hs_exec_comm_ops hs_exec_comm_closed = {"closed-form", open_closed, reset_closed, start_closed,
					      collect_closed, close_closed};
