/* Communication tasks timed by the closed forms (sim/coll): a collective or send takes the idle-network time of
 * its group, whatever else is in flight, so it is one engine event at now + that time per task that it ends.
 * This is where a closed form's seconds become hs_time (the analytical and packet fidelities).
 *
 * The registered analytical network model (sim/net/net_analytical.c) is not this path: it times every transfer
 * of a collective run step by step on the network, where these closed forms time the collective whole (with
 * hop latencies, the algorithm's structure and route-aware bandwidths), so the two give different figures. It
 * stays a network model, which the network tests run beside the flow model. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_flow.h"
#include "sim/exec/exec_impl.h"
#include "sim/exec/range_cache.h"
#include "topology/topo.h"

/* A rep sends to at most two peers (the next and the previous model chunk's stage): their pair summaries. */
struct peers {
	int peer[2]; /* -1: none */
	hs_coll_grp cg[2];
	/* the last send's size to each and its time: a pipeline's sends repeat one size, and grp_time's lookup
	 * was a tenth of a closed-form sweep point's step */
	double last_bytes[2], last_s[2];
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
	struct hs_range_cache *rcache; /* x->rcache: times kept across the caller's steps (range_cache.h) */
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
	double s = hs_range_cache_coll_time(cl->rcache, g, (int)op, (int)algo, bytes); /* across steps, else timed */
	cl->m[j] = (struct tmemo){g, (int)op, bytes, s};
	cl->mn++;
	return s;
}

static int open_closed(struct ex *x, hs_err *err)
{
	(void)err;
	struct closed *c = hs_xcalloc(1, sizeof *c);
	/* only the peers are set: a slot's summary and last send are written when its peer is, and read after */
	c->peers = hs_xmalloc((size_t)(x->g->nreps ? x->g->nreps : 1) * sizeof *c->peers);
	for (int i = 0; i < x->g->nreps; i++)
		c->peers[i].peer[0] = c->peers[i].peer[1] = -1;
	if (x->g->nxg) {
		c->xg = hs_xcalloc(x->g->nxg, sizeof *c->xg);
		c->xg_init = hs_xcalloc(x->g->nxg, 1);
	}
	c->rcache = x->rcache;
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
			/* the pair's summary kept across a thread's points like the reps' groups' (rep_groups, exec.c):
			 * making it was 1.5% of a sweep point */
			if (hs_range_cache_grp_init(x->rcache, x->s->cluster_id, &pp->cg[slot], x->s->cluster, ranks, 2,
						    &e))
				return hs_coll_time(x->s->cluster, HS_COLL_SENDRECV, HS_ALGO_AUTO, ranks, 2, t->bytes);
			pp->peer[slot] = t->peer;
			pp->last_bytes[slot] = -1;
		}
		if (pp->last_bytes[slot] != t->bytes) {
			pp->last_s[slot] = grp_time(cl, &pp->cg[slot], HS_COLL_SENDRECV, HS_ALGO_AUTO, t->bytes);
			pp->last_bytes[slot] = t->bytes;
		}
		return pp->last_s[slot];
	}
	if (t->xgroup)
		return xgroup_time(x, cl, t);
	if (r->grp_n[t->group] <= 1)
		return 0;
	return grp_time(cl, &r->cg[t->group], (enum hs_coll_op)t->coll, (enum hs_coll_algo)x->s->coll_algo, t->bytes);
}

double hs_exec_comm_closed_time(struct ex *x, uint32_t task)
{
	struct closed *cl = x->comm_state;
	const hs_task *t = &x->g->tasks[task];
	if (t->kind == HS_T_SEND) {
		/* comm_time's answer for a send of the size before to the same peer, without the call: most of a
		 * step's communication tasks are those (the closed step asks for every task) */
		const struct peers *pp = &cl->peers[t->rep];
		int slot = pp->peer[0] == t->peer ? 0 : pp->peer[1] == t->peer ? 1 : -1;
		if (slot >= 0 && pp->last_bytes[slot] == t->bytes)
			return pp->last_s[slot];
	}
	return comm_time(x, cl, t);
}

double hs_exec_comm_closed_task(struct ex *x, const hs_task *t)
{
	return comm_time(x, x->comm_state, t);
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

static int cmp_bytes_desc(const void *a, const void *b)
{
	const double *p = a, *q = b; /* {bytes, link} pairs */
	if (p[0] != q[0])
		return (p[0] < q[0]) - (p[0] > q[0]);
	return (p[1] > q[1]) - (p[1] < q[1]);
}

/* The channels the flow model opens for a group's collective: the one rule both use (sim/coll/coll_flow.h),
 * channel c on NIC c unless the plan names its rails. */
static void group_channels(const hs_cluster *c, int op, int algo, const int *ranks, int n, double bytes,
			   hs_coll_channels *ch)
{
	hs_coll_flow_plan pl;
	memset(ch, 0, sizeof *ch);
	ch->n = 1;
	if (hs_coll_flow_plan_of(c, (enum hs_coll_op)op, (enum hs_coll_algo)algo, HS_PROTO_AUTO, ranks, n, bytes, &pl))
		return;
	ch->n = pl.channels < HS_COLL_MAX_CHANNELS ? pl.channels : HS_COLL_MAX_CHANNELS;
	for (int i = 0; i < ch->n; i++)
		ch->rails[i] = pl.nrails ? pl.rails[i] : i;
}

/* The run's transfers before routing: each distinct (collective or send, ranks, size) once with how many times
 * it ran, so that a step's thousands of identical layer collectives are routed (and their algorithm resolved,
 * a group summary each) once: a 16k-GPU step's per-link bytes cost what its distinct collectives do. */
struct tent {
	uint64_t h;
	int send, op, algo, n;
	double bytes, count;
	int *ranks;
};

struct tally {
	struct tent *v;
	size_t cap, n;
};

static uint64_t tent_hash(int send, int op, int algo, const int *ranks, int n, double bytes)
{
	uint64_t h = 1469598103934665603ull, b;
	memcpy(&b, &bytes, sizeof b);
	uint64_t w[4] = {(uint64_t)send, (uint64_t)op, (uint64_t)algo, b};
	for (int i = 0; i < 4; i++)
		h = (h ^ w[i]) * 1099511628211ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)(unsigned)ranks[i]) * 1099511628211ull;
	return h;
}

static void tally_add(struct tally *t, int send, int op, int algo, const int *ranks, int n, double bytes)
{
	if (2 * (t->n + 1) > t->cap) { /* under half full: double and re-insert */
		struct tent *old = t->v;
		size_t oc = t->cap;
		t->cap = oc ? 2 * oc : 256;
		t->v = hs_xcalloc(t->cap, sizeof *t->v);
		for (size_t i = 0; i < oc; i++)
			if (old[i].ranks) {
				size_t j = old[i].h & (t->cap - 1);
				while (t->v[j].ranks)
					j = (j + 1) & (t->cap - 1);
				t->v[j] = old[i];
			}
		free(old);
	}
	uint64_t h = tent_hash(send, op, algo, ranks, n, bytes);
	size_t j = h & (t->cap - 1);
	for (; t->v[j].ranks; j = (j + 1) & (t->cap - 1)) {
		struct tent *e = &t->v[j];
		if (e->h == h && e->send == send && e->op == op && e->algo == algo && e->n == n && e->bytes == bytes &&
		    !memcmp(e->ranks, ranks, (size_t)n * sizeof *ranks)) {
			e->count += 1;
			return;
		}
	}
	int *rk = hs_xmalloc((size_t)n * sizeof *rk);
	memcpy(rk, ranks, (size_t)n * sizeof *rk);
	t->v[j] = (struct tent){h, send, op, algo, n, bytes, 1, rk};
	t->n++;
}


/* Route every distinct transfer of the tally, count times its bytes, into load[]; *partial where an algorithm
 * has no per-link transfers. Frees the tally. */
static void tally_route(struct tally *t, const hs_cluster *c, double *load, int *partial)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct tent *e = &t->v[i];
		if (!e->ranks)
			continue;
		if (e->send) {
			if (hs_coll_link_bytes_send(c, e->ranks[0], e->ranks[1], e->bytes, e->count, load))
				*partial = 1;
		} else {
			hs_coll_channels ch;
			group_channels(c, e->op, e->algo, e->ranks, e->n, e->bytes, &ch);
			if (hs_coll_link_bytes(c, (enum hs_coll_op)e->op, (enum hs_coll_algo)e->algo, e->ranks, e->n, e->bytes,
					       e->count, e->op == HS_COLL_SENDRECV ? NULL : &ch, load))
				*partial = 1;
		}
		free(e->ranks);
	}
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* The collectives inside compute tasks (TP, CP and EP in a layer), counted as the flow model carries them with
 * layer_collectives: network (inlayer.c): per rep, each compute task's collectives (a gradient-bucket slice
 * its share of the ops, so that each runs once), on every lane of the rep's group (hs_exec_inlayer_setup's
 * lanes: other TP x CP indices, and other replicas where the rep stands for them and the group leaves its
 * node), an EP all-to-all once per EP group of reps; ring attention's send/recv step as every member sending
 * to the next. */
static void inlayer_link_bytes(struct ex *x, struct tally *tl)
{
	const hs_graph *g = x->g;
	enum hs_coll_algo algo = (enum hs_coll_algo)x->s->coll_algo;
	x->contend = hs_exec_lanes_contend(x->s, x->o);
	hs_exec_inlayer_setup(x);
	for (int i = 0; i < g->nreps; i++) {
		const struct rep *r = &x->reps[i];
		for (size_t q = 0; q < r->qn[HS_S_COMPUTE]; q++) {
			uint32_t ti = r->queue[HS_S_COMPUTE][q];
			const hs_task *t = &g->tasks[ti];
			uint32_t a = t->op_first, b = t->op_first + t->op_count;
			if (t->scale < 1) {
				uint32_t nsl = (uint32_t)lround(1 / t->scale), k = x->slice[ti];
				a = t->op_first + (uint32_t)((uint64_t)t->op_count * k / nsl);
				b = t->op_first + (uint32_t)((uint64_t)t->op_count * (k + 1) / nsl);
			}
			for (uint32_t op = a; op < b; op++) {
				const hs_op *o = &g->ops[op];
				int k = o->group, n = r->grp_n[k];
				if (o->kind != HS_OP_COMM || n <= 1 || !(o->bytes > 0))
					continue;
				if (k == HS_GROUP_EP && r->epg >= 0 && x->epg[r->epg].members > 1 && x->epg[r->epg].reps[0] != i)
					continue; /* the EP group's all-to-all runs once, for all its reps */
				for (int l = 0; l < r->lane_n[k]; l++) {
					const int *rk = r->lane_rk[k] + (size_t)l * n;
					int sendrecv = o->coll == HS_COLL_SENDRECV;
					tally_add(tl, 0, o->coll, sendrecv ? HS_ALGO_DIRECT : algo, rk, n, o->bytes);
				}
			}
		}
	}
	hs_exec_inlayer_free(x);
}

/* Per-link bytes of the run (issue 19): every communication task's transfers routed on the link graph as the
 * flow model routes them (hs_coll_link_bytes), counted as the flow model carries them (comm_net.c): a
 * collective once per rendezvous (its member tasks are one collective), over every TP x CP lane where lanes
 * contend (hs_exec_lanes_contend; one lane where they are equivalent, as there), over the data-parallel ranks
 * of the rep's stage or the task's explicit group; a send per lane from the rep's rank to its peer's; each
 * step alike, so the step's bytes times the steps. *partial is set when some collective's algorithm has no
 * per-link transfers (hs_coll_link_bytes: hierarchical, NVLS, in-switch, the tree over multi-GPU domains):
 * then the links are left out rather than shown short. Collectives inside compute tasks (TP, CP and EP in a
 * layer) are added by inlayer_link_bytes. */
static double *closed_link_bytes(struct ex *x, int *partial)
{
	const hs_cluster *c = x->s->cluster;
	const hs_topo *t = hs_coll_link_topo(c);
	if (!t)
		return NULL;
	const hs_graph *g = x->g;
	const hs_parallel *p = x->s->par;
	double *load = hs_xcalloc((size_t)hs_topo_nlinks(t), sizeof *load);
	uint8_t *seen = hs_xcalloc((size_t)(g->nrendezvous ? g->nrendezvous : 1), 1);
	int lanes = hs_exec_lanes_contend(x->s, x->o) ? p->tp * p->cp : 1;
	int *ranks = hs_xmalloc((size_t)(p->dp > 2 ? p->dp : 2) * sizeof *ranks);
	enum hs_coll_algo algo = (enum hs_coll_algo)x->s->coll_algo;
	struct tally tl = {0};
	*partial = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *tk = &g->tasks[i];
		if (tk->kind != HS_T_COLL && tk->kind != HS_T_SEND)
			continue;
		if (tk->kind == HS_T_COLL && tk->rendezvous >= 0) {
			if (seen[tk->rendezvous])
				continue;
			seen[tk->rendezvous] = 1;
		}
		const hs_rep *rp = &g->reps[tk->rep];
		if (tk->kind == HS_T_COLL && tk->xgroup) {
			uint32_t gi = tk->xgroup - 1;
			int n = (int)(g->xg_first[gi + 1] - g->xg_first[gi]);
			if (n > 1)
				tally_add(&tl, 0, tk->coll, algo, g->xg_ranks + g->xg_first[gi], n, tk->bytes);
			continue;
		}
		for (int cc = 0; cc < p->cp; cc++)
			for (int tt = 0; tt < p->tp; tt++) {
				if (cc * p->tp + tt >= lanes)
					break;
				if (tk->kind == HS_T_SEND) {
					const hs_rep *q = &g->reps[tk->peer];
					int pair[2] = {hs_build_rank(p, tt, cc, rp->dp_index, rp->stage),
						       hs_build_rank(p, tt, cc, q->dp_index, q->stage)};
					tally_add(&tl, 1, 0, 0, pair, 2, tk->bytes);
					continue;
				}
				for (int d = 0; d < p->dp; d++)
					ranks[d] = hs_build_rank(p, tt, cc, d, rp->stage);
				if (p->dp > 1)
					tally_add(&tl, 0, tk->coll, algo, ranks, p->dp, tk->bytes);
			}
	}
	free(ranks);
	free(seen);
	inlayer_link_bytes(x, &tl);
	tally_route(&tl, c, load, partial);
	return load;
}

/* The HS_EXEC_LINK_TOP links that carried the most bytes over the run, as the flow model reports them
 * (result.c): the analytical fidelity knows how many bytes cross a link, not when, so the run is one time
 * bin and a link's busy fraction is its bytes over its capacity times the run's length. Kept only when asked
 * for (hs_simopts.record_links: `hetsim run --detail`, `--hdf5`, `--trace`) and for a run on its own cluster
 * (a job's shares another's links: jobs.c). */
static void collect_closed(struct ex *x, hs_result *out)
{
	if (!x->o->record_links || x->dev0 || x->shared_net)
		return;
	int partial;
	double *load = closed_link_bytes(x, &partial);
	if (!load)
		return;
	const hs_topo *t = hs_coll_link_topo(x->s->cluster);
	int nl = hs_topo_nlinks(t), steps = out->steps > 0 ? out->steps : 1;
	double run_s = 0;
	for (int k = 0; k < steps; k++)
		run_s += out->step_times[k];
	double *order = hs_xmalloc((size_t)(nl ? nl : 1) * 2 * sizeof *order);
	for (int l = 0; l < nl; l++) {
		order[2 * l] = load[l] * steps;
		order[2 * l + 1] = l;
	}
	free(load);
	qsort(order, (size_t)nl, 2 * sizeof *order, cmp_bytes_desc);
	int n = nl < HS_EXEC_LINK_TOP ? nl : HS_EXEC_LINK_TOP;
	while (n > 0 && order[2 * (n - 1)] <= 0)
		n--;
	if (partial)
		n = 0;
	hs_link_util *u = &out->links;
	u->nlinks = n;
	u->nbins = n ? 1 : 0;
	u->bin_s = run_s;
	u->names = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->names);
	u->capacity_Bps = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->capacity_Bps);
	u->mean_util = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->mean_util);
	u->bytes = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->bytes);
	u->util = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->util);
	for (int i = 0; i < n; i++) {
		const hs_link *L = hs_topo_link(t, (int)order[2 * i + 1]);
		char a[64], b[64], name[160];
		snprintf(name, sizeof name, "%s->%s", hs_topo_vname(t, L->from, a, sizeof a),
			 hs_topo_vname(t, L->to, b, sizeof b));
		u->names[i] = hs_xstrdup(name);
		u->capacity_Bps[i] = hs_rate_to_Bps(L->bw);
		u->bytes[i] = order[2 * i];
		u->mean_util[i] = run_s > 0 ? u->bytes[i] / (u->capacity_Bps[i] * run_s) : 0;
		u->util[i] = u->mean_util[i];
	}
	free(order);
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
