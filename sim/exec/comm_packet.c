/* Communication at packet fidelity: collectives inside one switched scale-up domain run on the packet fabric
 * model (sim/fabric/fabric_coll.h: one receiver, its credits and the protocol's flags), the rest on the flow
 * network (comm_net.c, through hs_net's model lookup, so another scale-out model can stand in for it).
 *
 * Which collectives: a collective task (or an in-layer collective, through the op timing hook
 * hs_exec_packet_coll_time) whose ranks all sit in one scale-up domain, of an op the fabric model runs (ring
 * all-reduce, all-gather, reduce-scatter) and an algorithm that is the ring (`collective_algorithm: ring`, or
 * auto where NCCL's tuner model picks the ring, sim/coll/coll_nccl.c). Sends, explicit
 * groups, all-to-alls and groups that leave the domain go to the flow network; in-layer collectives that the
 * packet model does not run keep their closed forms (as at analytical fidelity).
 *
 * Symmetry: every GPU of a ring inside a domain is equivalent, so one receiver stands for all of them; and
 * every domain of one node group is equivalent, so a collective of (op, ranks, bytes) is simulated once per
 * node group and step run, and its time is reused (memo below). Two collectives of one domain that run at
 * the same time are not made to share the fabric: each is timed as if alone, as the closed forms do; a TP
 * group runs its collectives one after another on its compute stream, so within a TP-only domain this is
 * exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"
#include "sim/fabric/fabric_coll.h"

struct pmemo {
	int group, op, n;
	double bytes, s;
};

/* Kept in x->packet; x->comm_state stays comm_net.c's own, since its completions read it from engine events
 * long after the call that started them. */
struct pkstate {
	hs_exec_done done;
	struct pmemo *m;
	size_t mn, mcap;
	uint64_t events;     /* engine events of the packet runs */
};

/* Whether (op, ranks, bytes) is the packet model's: inside one domain, an op it runs, the ring. Its node
 * group, or -1. */
static int packet_group(const hs_workload *w, const hs_simopts *o, int op, const int *ranks, int n, double bytes)
{
	const hs_cluster *c = w->cluster;
	if (n < 2 || !(bytes >= 1) || !hs_fcoll_supported(op))
		return -1;
	int dom = hs_cluster_domain_of(c, ranks[0]);
	for (int i = 1; i < n; i++)
		if (hs_cluster_domain_of(c, ranks[i]) != dom)
			return -1;
	int grp = hs_cluster_group_of(c, ranks[0]);
	if (grp >= o->npacket)
		return -1;
	/* the ring, as the scenario names it or as NCCL's tuner picks it (auto) */
	if (hs_coll_resolve_algo(c, (enum hs_coll_op)op, (enum hs_coll_algo)w->coll_algo, ranks, n, bytes) !=
	    HS_ALGO_RING)
		return -1;
	return grp;
}

/* The packet model's seconds for (op, ranks, bytes), or -1 when it is not the packet model's. */
static double packet_time(struct ex *x, int op, const int *ranks, int n, double bytes)
{
	struct pkstate *ps = x->packet;
	const hs_cluster *c = x->s->cluster;
	if (n < 2 || !(bytes >= 1) || !hs_fcoll_supported(op))
		return -1;
	int grp = hs_cluster_group_of(c, ranks[0]);
	for (size_t i = 0; i < ps->mn; i++) {
		const struct pmemo *e = &ps->m[i];
		if (e->group == grp && e->op == op && e->n == n && e->bytes == bytes)
			return e->s;
	}
	if (packet_group(x->s, x->o, op, ranks, n, bytes) < 0)
		return -1;
	const hs_fcoll_cfg *cfg = &x->o->packet[grp];
	hs_fcoll fc = {.op = op, .n = n, .bytes = bytes, .proto = cfg->proto, .signal = cfg->signal,
		       .pull = cfg->pull, .channels = cfg->channels};
	hs_fcoll_out out;
	hs_fcoll_run(&cfg->p, cfg->scheme, &cfg->credits, &fc, &out, NULL);
	ps->events += out.events;
	double s = hs_time_to_s(out.time);
	hs_xgrow(&ps->m, &ps->mcap, ps->mn + 1, sizeof *ps->m);
	ps->m[ps->mn++] = (struct pmemo){grp, op, n, bytes, s};
	return s;
}

double hs_exec_packet_coll_time(void *ctx, int op, const int *ranks, int n, double bytes)
{
	return packet_time(ctx, op, ranks, n, bytes);
}

static int open_packet(struct ex *x, hs_err *err)
{
	x->packet = hs_xcalloc(1, sizeof(struct pkstate));
	return hs_exec_comm_net.open(x, err); /* the flow network for what leaves the domain */
}

static void reset_packet(struct ex *x) { hs_exec_comm_net.reset(x); }

static void done_ev(hs_engine *eng, void *ctx, uint64_t task)
{
	(void)eng;
	struct ex *x = ctx;
	((struct pkstate *)x->packet)->done(x, (uint32_t)task);
}

static void start_packet(struct ex *x, uint32_t task, const uint32_t *tasks, int n, hs_exec_done done)
{
	struct pkstate *ps = x->packet;
	const hs_task *t = &x->g->tasks[task];
	struct rep *r = &x->reps[t->rep];
	double s = -1;
	if (t->kind == HS_T_COLL && !t->xgroup && r->grp_n[t->group] > 1)
		s = packet_time(x, (int)t->coll, r->grp[t->group], r->grp_n[t->group], t->bytes);
	if (s < 0) {
		hs_exec_comm_net.start(x, task, tasks, n, done);
		return;
	}
	ps->done = done;
	hs_time d = hs_time_from_s(s);
	for (int k = 0; k < n; k++) {
		x->ts[tasks[k]].xfer_s = s;
		hs_engine_after(x->eng, d, done_ev, x, tasks[k]);
	}
}

static void collect_packet(struct ex *x, hs_result *out)
{
	hs_exec_comm_net.collect(x, out);
	if (x->packet)
		out->events += ((struct pkstate *)x->packet)->events; /* the packet runs' events count as the step's */
}

static void close_packet(struct ex *x)
{
	hs_exec_comm_net.close(x);
	struct pkstate *ps = x->packet;
	if (ps)
		free(ps->m);
	free(ps);
	x->packet = NULL;
}

const hs_exec_comm_ops hs_exec_comm_packet = {"packet", open_packet, reset_packet, start_packet, collect_packet,
					      close_packet};

static void use_add(hs_packet_use **v, size_t *n, size_t *cap, int op, int nr, int grp, double bytes, double w)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].op == op && (*v)[i].n == nr && (*v)[i].group == grp && (*v)[i].bytes == bytes) {
			(*v)[i].count += w;
			return;
		}
	hs_xgrow(v, cap, *n + 1, sizeof **v);
	(*v)[(*n)++] = (hs_packet_use){.op = op, .n = nr, .group = grp, .bytes = bytes, .count = w};
}

size_t hs_exec_packet_uses(const hs_workload *w, const hs_simopts *o, const hs_build *b, hs_packet_use **out)
{
	const hs_graph *g = &b->graph;
	hs_packet_use *v = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	if (!g->nreps)
		return 0;
	const hs_rep *rp = &g->reps[0];
	int *grp[HS_GROUP_COUNT], grp_n[HS_GROUP_COUNT];
	const hs_parallel *p = w->par;
	int sizes[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp, [HS_GROUP_DP] = p->dp,
				     [HS_GROUP_EP] = p->ep, [HS_GROUP_PP] = p->pp};
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		grp[k] = hs_xmalloc((size_t)(sizes[k] > 0 ? sizes[k] : 1) * sizeof(int));
		grp_n[k] = hs_build_group(p, (enum hs_group)k, rp->dp_index, rp->stage, grp[k]);
	}
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->rep != 0)
			continue;
		if (t->kind == HS_T_COLL && !t->xgroup) {
			int gi = packet_group(w, o, (int)t->coll, grp[t->group], grp_n[t->group], t->bytes);
			if (gi >= 0)
				use_add(&v, &n, &cap, (int)t->coll, grp_n[t->group], gi, t->bytes, 1);
		} else if (t->kind == HS_T_COMPUTE) {
			for (uint32_t j = t->op_first; j < t->op_first + t->op_count; j++) {
				const hs_op *op = &g->ops[j];
				if (op->kind != HS_OP_COMM || grp_n[op->group] < 2)
					continue;
				int gi = packet_group(w, o, (int)op->coll, grp[op->group], grp_n[op->group], op->bytes);
				if (gi >= 0)
					use_add(&v, &n, &cap, (int)op->coll, grp_n[op->group], gi, op->bytes, t->scale);
			}
		}
	}
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		free(grp[k]);
	*out = v;
	return n;
}
