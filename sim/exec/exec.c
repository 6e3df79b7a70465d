#include "sim/exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/profile.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_impl.h"
#include "sim/engine/engine.h"
#include "sim/exec/layer_time.h"
#include "sim/exec/plan.h"
#include "sim/net/net.h"
#include "sim/engine/rng.h"

struct tstate {
	uint32_t waiting;  /* dependencies not yet done */
	uint32_t cause;    /* the dependency that completed last */
	double start, end; /* seconds */
	double dur;
	double arrive;     /* rendezvous: when this member arrived */
	uint8_t done, started;
};

/* A compute task whose op range holds collectives that the network carries (flow fidelity) runs as segments:
 * the kernels up to the next such collective (one event), then the collective on the network (beside the next
 * kernel when the op overlaps it), then the next segment. */
struct seg {
	uint32_t task;
	uint32_t pos, end;  /* ops left: [pos, end) */
	double f;           /* the task's compute factor (slowdowns, noise) */
	int pending;        /* network lanes and the overlapped kernel still running */
	int group;          /* of the collective in flight */
	double comm_start;  /* when it started (seconds in the step) */
	double hide;        /* the kernel it overlaps */
	double arrive;      /* EP rendezvous: when this rep arrived */
};

struct rep {
	const hs_device_type *dev;
	const hs_profile *prof;
	int ngroup;          /* node group of its device (memo key) */
	uint32_t *queue[HS_S_COUNT];
	size_t qn[HS_S_COUNT], qcap[HS_S_COUNT], qpos[HS_S_COUNT];
	int busy[HS_S_COUNT];
	double idle_since;   /* compute stream */
	double step_finish;  /* end of its last task in the current step */
	int *gpus;           /* the devices it stands for (for slowdowns and throttling) */
	int ngpus;
	int grp_n[HS_GROUP_COUNT];
	int *grp[HS_GROUP_COUNT];
	hs_coll_grp cg[HS_GROUP_COUNT]; /* the groups summarised once (valid where grp_n > 1) */
	int peer[2];                    /* pipeline peers whose pair summary is kept (-1: none) */
	hs_coll_grp peer_cg[2];
	hs_rep_result *res;
	/* flow fidelity: the ranks of every lane of each in-layer group ([nlanes x grp_n], lane 0 first) */
	int *lane_rk[HS_GROUP_COUNT];
	int lane_n[HS_GROUP_COUNT];
	int epg;                        /* its in-layer EP rendezvous (index into ex.epg), -1: none */
	struct seg seg;                 /* the compute task running as segments */
};

struct rv {
	int members, arrived;
	uint32_t *tasks;
};

/* The reps whose EP groups are one group (without symmetry each data-parallel replica is a rep): its in-layer
 * all-to-alls start when every member has reached them, once for all. */
struct epgrp {
	int members, arrived, lanes_left;
	int *reps;
};

/* One graph task (or the members of one rendezvous) carried by the network as several lanes: the same
 * collective or transfer for every TP x CP index of the ranks a rep stands for, since all of them run at once
 * and share links. */
struct netop {
	int lanes_left;
	uint32_t first_task; /* the task, or the first of a rendezvous's members */
	int rendezvous;      /* -1, or the id whose member tasks complete together */
};

/* op-range cost memo: (stage, node group, first, count) -> compute seconds, comm seconds by group, flops */
struct memo {
	uint64_t key;
	uint32_t first, count;
	double comp, comp2, comm[HS_GROUP_COUNT], flops; /* comp2: sum of squared op times (noise) */
	int used;
	int netcomm; /* collectives in the range over groups of more than one rank */
};

struct ex {
	const hs_workload *s;
	const hs_simopts *o;
	double horizon_s;   /* the caller's estimate of the run's length (0: none), for link-utilisation bins */
	const hs_graph *g;
	hs_engine *eng;
	struct tstate *ts;
	struct rep *reps;
	uint32_t *succ, *succ_first; /* CSR successors */
	struct rv *rv;
	struct memo *memo;
	size_t memocap, nmemo;
	hs_profile_cache *profiles; /* the caller's, or one of our own */
	hs_op_memo *opmemo;         /* kernel times by shape and device, for this step */
	int own_profiles;
	hs_rng *rng;        /* per-op noise; NULL without noise */
	hs_net *net;        /* simulation.fidelity: flow; NULL for analytical */
	int lanes;          /* TP x CP lanes carried on the network per task: all, or 1 when they are equivalent */
	int contend;        /* lanes (and replicas) may share fabric links (lanes_contend) */
	struct netop *netops; /* collectives and sends in flight on the network (reset every step) */
	size_t nnetops, capnetops;
	int inlayer;        /* flow fidelity: collectives inside compute tasks run on the network */
	uint16_t *slice;    /* [ntasks] with inlayer: a sliced task's index among its slices */
	struct epgrp *epg;
	int nepg;
	double step_start;  /* seconds */
	hs_err *err;
};

static const hs_profile *profile_for(struct ex *x, const hs_device_type *dev)
{
	return hs_profile_cache_get(x->profiles, dev->profile, x->err);
}

static void rep_env(struct ex *x, struct rep *r, hs_op_env *e)
{
	*e = (hs_op_env){.prof = r->prof, .dev = r->dev, .cluster = x->s->cluster, .coll_algo = x->s->coll_algo,
			 .memo = x->opmemo};
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		e->grp[k] = r->grp[k];
		e->grp_n[k] = r->grp_n[k];
		e->cgrp[k] = r->grp_n[k] > 1 ? &r->cg[k] : NULL;
	}
}

static size_t memo_slot(uint64_t key, uint32_t first, uint32_t count, size_t cap)
{
	uint64_t h = (key * 0x9e3779b97f4a7c15ull) ^ (first * 0xbf58476d1ce4e5b9ull) ^ count;
	return (size_t)(h >> 20) & (cap - 1);
}

static struct memo *range_cost(struct ex *x, struct rep *r, int stage, uint32_t first, uint32_t count)
{
	uint64_t key = ((uint64_t)(uint32_t)stage << 32) | (uint32_t)r->ngroup;
	if (2 * (x->nmemo + 1) > x->memocap) { /* keep it under half full: double and re-insert */
		struct memo *old = x->memo;
		size_t oc = x->memocap;
		x->memocap *= 2;
		x->memo = hs_xcalloc(x->memocap, sizeof *x->memo);
		for (size_t j = 0; j < oc; j++)
			if (old[j].used) {
				size_t q = memo_slot(old[j].key, old[j].first, old[j].count, x->memocap);
				while (x->memo[q].used)
					q = (q + 1) & (x->memocap - 1);
				x->memo[q] = old[j];
			}
		free(old);
	}
	size_t i = memo_slot(key, first, count, x->memocap);
	for (;; i = (i + 1) & (x->memocap - 1)) {
		struct memo *m = &x->memo[i];
		if (!m->used)
			break;
		if (m->key == key && m->first == first && m->count == count)
			return m;
	}
	struct memo *m = &x->memo[i];
	memset(m, 0, sizeof *m);
	m->used = 1;
	x->nmemo++;
	m->key = key, m->first = first, m->count = count;
	hs_op_env e;
	rep_env(x, r, &e);
	hs_ops_time(&e, x->g->ops + first, count, &m->comp, &m->comp2, m->comm, &m->flops);
	for (uint32_t q = first; q < first + count; q++)
		m->netcomm += x->g->ops[q].kind == HS_OP_COMM && r->grp_n[x->g->ops[q].group] > 1;
	return m;
}

static void on_done(hs_engine *eng, void *ctx, uint64_t arg);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (type 7, the default of R and NumPy). */
static double quantile(const double *sorted, int n, double q)
{
	double h = (n - 1) * q;
	int lo = (int)floor(h);
	int hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

static void begin(struct ex *x, uint32_t ti, double dur)
{
	struct tstate *st = &x->ts[ti];
	const hs_task *t = &x->g->tasks[ti];
	struct rep *r = &x->reps[t->rep];
	double now = hs_time_to_s(hs_engine_now(x->eng)) - x->step_start;
	st->started = 1;
	st->start = now;
	st->dur = dur;
	r->busy[t->stream] = 1;
	if (t->stream == HS_S_COMPUTE) {
		double gap = now - r->idle_since;
		if (gap > 0) {
			const hs_task *c = st->cause != UINT32_MAX ? &x->g->tasks[st->cause] : NULL;
			if (c && c->kind == HS_T_SEND) {
				double xfer = x->ts[st->cause].dur;
				double e = gap < xfer ? gap : xfer;
				r->res->exposed_s[HS_GROUP_PP] += e;
				r->res->bubble_s += gap - e;
			} else if (c && c->kind == HS_T_COLL) {
				r->res->exposed_s[c->group] += gap;
			} else {
				r->res->bubble_s += gap;
			}
		}
	}
	if (x->net && dur < 0)
		return; /* carried by the network (or run as segments); completion comes from net_lane_done */
	hs_engine_after(x->eng, hs_time_from_s(dur), on_done, x, ti);
}

/* The TP x CP lanes of a stage run the same collectives and sends on different devices. When every device has
 * its own NIC on its own rail of a non-blocking rail-optimised (or multi-plane) fabric, the lanes' traffic never
 * shares a link outside the (non-blocking) scale-up switch, so they take the same time and one lane stands for
 * all (DESIGN.md: simulate what differs, once). Otherwise every lane runs and they contend. `symmetry: false`
 * runs every lane. */
static int lanes_contend(const hs_workload *s, const hs_simopts *o)
{
	const hs_fabric_spec *f = hs_cluster_fabric(s->cluster);
	if (!o->symmetry || !f || f->oversubscription > 1 ||
	    (strcmp(f->kind, "rail-optimized") != 0 && strcmp(f->kind, "multi-plane") != 0))
		return 1;
	for (int g = 0; g < hs_cluster_ngroups(s->cluster); g++) {
		const hs_node_group *ng = hs_cluster_group(s->cluster, g);
		if (ng->nics_per_node != ng->gpus_per_node)
			return 1;
	}
	return 0;
}

static int lanes_needed(const hs_workload *s, const hs_simopts *o)
{
	return lanes_contend(s, o) ? s->par->tp * s->par->cp : 1;
}

/* Flow fidelity keeps the utilisation over time of the busiest links: enough to see where a step's traffic
 * concentrates without a [links x bins] matrix the size of a 16k-GPU fabric. */
#define LINK_BINS 100
#define LINK_TOP 64

static int cmp_bytes_desc(const void *a, const void *b)
{
	const double *x = a, *y = b; /* {bytes, link} pairs */
	return (x[0] < y[0]) - (x[0] > y[0]);
}

static void collect_links(struct ex *x, hs_result *out)
{
	int nl = hs_net_nlinks(x->net);
	if (nl <= 0)
		return;
	double *order = hs_xmalloc((size_t)nl * 2 * sizeof *order);
	for (int l = 0; l < nl; l++) {
		hs_net_link_stat st;
		hs_net_link_stats(x->net, l, &st, NULL, 0);
		order[2 * l] = st.bytes;
		order[2 * l + 1] = l;
	}
	qsort(order, (size_t)nl, 2 * sizeof *order, cmp_bytes_desc);
	int n = nl < LINK_TOP ? nl : LINK_TOP;
	while (n > 0 && order[2 * (n - 1)] <= 0)
		n--;
	hs_link_util *u = &out->links;
	u->nlinks = n;
	u->nbins = LINK_BINS;
	u->bin_s = 1.5 * x->horizon_s / LINK_BINS;
	u->names = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->names);
	u->capacity_Bps = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->capacity_Bps);
	u->mean_util = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->mean_util);
	u->util = hs_xcalloc((size_t)(n ? n : 1) * LINK_BINS, sizeof *u->util);
	const hs_topo *t = hs_net_topo(x->net);
	for (int i = 0; i < n; i++) {
		int l = (int)order[2 * i + 1];
		hs_net_link_stat st;
		hs_net_link_stats(x->net, l, &st, u->util + (size_t)i * LINK_BINS, LINK_BINS);
		char a[64], b[64], name[160];
		snprintf(name, sizeof name, "%s->%s", hs_topo_vname(t, st.from, a, sizeof a),
			 hs_topo_vname(t, st.to, b, sizeof b));
		u->names[i] = hs_xstrdup(name);
		u->capacity_Bps[i] = st.bw_Bps;
		u->mean_util[i] = st.util;
	}
	free(order);
}

static void net_lane_done(void *ctx, uint64_t arg)
{
	struct ex *x = ctx;
	struct netop *op = &x->netops[arg];
	if (--op->lanes_left > 0)
		return;
	double now = hs_time_to_s(hs_engine_now(x->eng)) - x->step_start;
	if (op->rendezvous < 0) {
		x->ts[op->first_task].dur = now - x->ts[op->first_task].start;
		on_done(x->eng, x, op->first_task);
		return;
	}
	struct rv *v = &x->rv[op->rendezvous];
	for (int k = 0; k < v->members; k++) {
		uint32_t mi = v->tasks[k];
		x->ts[mi].dur = now - x->ts[mi].start;
		on_done(x->eng, x, mi);
	}
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Open a group's channels as NCCL would before its collective: one per NIC of the group's own devices on a
 * node, each crossing by that NIC, when the group spans nodes (NCCL's search puts a channel next to each NIC
 * of the communicator's GPUs). A lane of one device per node crosses on that device's NIC, as with one
 * channel. A group of whole nodes crosses on every NIC: its channels are alike, so one channel whose
 * crossings spread over every NIC stands for them (hs_net_set_spread), at 1/NICs of the transfers. The first
 * node stands for all (groups hold the same local devices on every node). */
static void group_channels(struct ex *x, const int *ranks, int n)
{
	const hs_cluster *c = x->s->cluster;
	int node0 = hs_cluster_node_of(c, ranks[0]), spans = 0, C = 0, rails[64];
	int loc[64], nl = 0;
	const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, ranks[0]));
	for (int i = 0; i < n; i++) {
		if (hs_cluster_node_of(c, ranks[i]) != node0)
			spans = 1;
		else if (nl < 64)
			loc[nl++] = hs_cluster_local_rank(c, ranks[i]);
	}
	int p = g->gpus_per_node, nn = g->nics_per_node;
	if (spans && nn > 0) {
		for (int i = 0; i < nn && C < 64; i++) /* NIC i hangs off device i * p / nn (topology/topo.c) */
			for (int k = 0; k < nl; k++)
				if (loc[k] == (int)((long)i * p / nn)) {
					rails[C++] = i;
					break;
				}
		for (int k = 0; k < nl && C < 64; k++) { /* a device without a NIC of its own: the nearest one */
			int nic = (int)((long)loc[k] * nn / p), seen = 0;
			for (int j = 0; j < C; j++)
				seen |= rails[j] == nic;
			if (!seen)
				rails[C++] = nic;
		}
	}
	hs_net_set_spread(x->net, spans && nl == p && C > 1);
	if (C < 2 || nl == p) {
		hs_net_set_channels(x->net, 1);
		hs_net_set_rails(x->net, NULL, 0);
		return;
	}
	qsort(rails, (size_t)C, sizeof *rails, cmp_int);
	hs_net_set_channels(x->net, C);
	hs_net_set_rails(x->net, rails, C);
}

/* Start task ti's traffic on the network: one collective or send per TP x CP lane. */
static void start_net(struct ex *x, uint32_t ti, int rendezvous)
{
	const hs_task *t = &x->g->tasks[ti];
	const hs_parallel *p = x->s->par;
	const hs_rep *rp = &x->g->reps[t->rep];
	hs_xgrow(&x->netops, &x->capnetops, x->nnetops + 1, sizeof *x->netops);
	size_t id = x->nnetops++;
	x->netops[id] = (struct netop){.lanes_left = x->lanes, .first_task = ti, .rendezvous = rendezvous};
	int *ranks = hs_xmalloc((size_t)(p->dp > 2 ? p->dp : 2) * sizeof *ranks);
	int rc = 0;
	hs_err e = {0};
	for (int c = 0; c < p->cp && !rc; c++)
		for (int tt = 0; tt < p->tp && !rc; tt++) {
			if (c * p->tp + tt >= x->lanes)
				break;
			if (t->kind == HS_T_SEND) {
				const hs_rep *q = &x->g->reps[t->peer];
				int src = hs_build_rank(p, tt, c, rp->dp_index, rp->stage);
				int dst = hs_build_rank(p, tt, c, q->dp_index, q->stage);
				rc = hs_net_send(x->net, src, dst, t->bytes, net_lane_done, x, id, &e);
			} else {
				for (int d = 0; d < p->dp; d++)
					ranks[d] = hs_build_rank(p, tt, c, d, rp->stage);
				group_channels(x, ranks, p->dp);
				rc = hs_net_collective(x->net, (enum hs_coll_op)t->coll,
						       (enum hs_coll_algo)x->s->coll_algo, ranks, p->dp, t->bytes,
						       net_lane_done, x, id, &e);
			}
		}
	free(ranks);
	if (rc) { /* the groups come from the scenario's own checked strategy: a refusal is a bug */
		fprintf(stderr, "hetsim: internal error: the network refused a task's traffic: %s\n", e.msg);
		abort();
	}
}


/* ---- collectives inside compute tasks on the network (flow fidelity) ---- */

#define EPG_BIT (1ull << 63) /* a network callback's arg names an EP rendezvous, not a rep */

/* Lanes of an in-layer group of kind k: the groups of that kind among the ranks a rep stands for that differ
 * only in the other TP x CP index (TP: one per CP index, CP: one per TP index, EP: one per TP x CP pair), all
 * running at once; 1 where one lane stands for all (lanes_contend is 0, as for lanes_needed). */
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
		spans |= hs_cluster_node_of(x->s->cluster, r->grp[k][q]) != hs_cluster_node_of(x->s->cluster, r->grp[k][0]);
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
	double now = hs_time_to_s(hs_engine_now(x->eng)) - x->step_start;
	double c = now - r->seg.comm_start - r->seg.hide;
	if (c > 0)
		r->res->exposed_s[r->seg.group] += c;
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
				rc = hs_net_send(x->net, rk[i], rk[(i + 1) % n], o->bytes, seg_net_done, x, arg, &e);
		} else {
			group_channels(x, rk, n);
			rc = hs_net_collective(x->net, o->coll, (enum hs_coll_algo)x->s->coll_algo, rk, n, o->bytes,
					       seg_net_done, x, arg, &e);
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
	double now = hs_time_to_s(hs_engine_now(x->eng)) - x->step_start;
	if (sg->pos >= sg->end) {
		x->ts[sg->task].dur = now - x->ts[sg->task].start;
		on_done(x->eng, x, sg->task);
		return;
	}
	const hs_op *o = &x->g->ops[sg->pos++];
	sg->group = o->group;
	sg->hide = 0;
	sg->comm_start = now;
	sg->pending = 0;
	if (o->overlap && sg->pos < sg->end && x->g->ops[sg->pos].kind != HS_OP_COMM) {
		hs_op_env e;
		int c;
		rep_env(x, r, &e);
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
			q->res->straggler_wait_s += now - q->seg.arrive;
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
	rep_env(x, r, &e);
	double comp = 0;
	for (; sg->pos < sg->end && !net_comm(r, &ops[sg->pos]); sg->pos++) {
		int c;
		double t = hs_op_time(&e, &ops[sg->pos], &c);
		if (!c)
			comp += t;
	}
	if (comp > 0) {
		hs_engine_after(x->eng, hs_time_from_s(comp * sg->f), seg_kernels_ev, x, (uint64_t)rep);
		return;
	}
	seg_comm(x, rep);
}

static double comm_time(struct ex *x, const hs_task *t)
{
	struct rep *r = &x->reps[t->rep];
	if (t->kind == HS_T_SEND) {
		/* a rep sends to at most two peers (the next and the previous model chunk's stage): keep their pair
		 * summaries */
		int slot = r->peer[0] == t->peer ? 0 : r->peer[1] == t->peer ? 1 : r->peer[0] < 0 ? 0 : 1;
		if (r->peer[slot] != t->peer) {
			const hs_parallel *p = x->s->par;
			const hs_rep *a = &x->g->reps[t->rep], *b = &x->g->reps[t->peer];
			int ranks[2] = {hs_build_rank(p, 0, 0, a->dp_index, a->stage),
					hs_build_rank(p, 0, 0, b->dp_index, b->stage)};
			hs_err e = {0};
			if (hs_coll_grp_init(&r->peer_cg[slot], x->s->cluster, ranks, 2, &e))
				return hs_coll_time(x->s->cluster, HS_COLL_SENDRECV, HS_ALGO_AUTO, ranks, 2, t->bytes);
			r->peer[slot] = t->peer;
		}
		return hs_coll_grp_time(&r->peer_cg[slot], HS_COLL_SENDRECV, HS_ALGO_AUTO, t->bytes, NULL);
	}
	if (r->grp_n[t->group] <= 1)
		return 0;
	return hs_coll_grp_time(&r->cg[t->group], (enum hs_coll_op)t->coll, (enum hs_coll_algo)x->s->coll_algo,
				t->bytes, NULL);
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
	if (x->rng && m->comp > 0) {
		double cv = v->noise_cv * sqrt(m->comp2) / m->comp;
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
		struct memo *m = range_cost(x, r, x->g->reps[rep].stage, t->op_first, t->op_count);
		if (x->inlayer && m->netcomm) {
			/* a gradient-bucket slice of a backward pass runs its share of the ops, so that every
			 * collective in it runs once, whole */
			uint32_t a = t->op_first, b = t->op_first + t->op_count;
			if (t->scale < 1) {
				uint32_t nsl = (uint32_t)lround(1 / t->scale), k = x->slice[ti];
				a = t->op_first + (uint32_t)((uint64_t)t->op_count * k / nsl);
				b = t->op_first + (uint32_t)((uint64_t)t->op_count * (k + 1) / nsl);
			}
			m = range_cost(x, r, x->g->reps[rep].stage, a, b - a);
			double f = compute_factor(x, r, m);
			r->res->compute_s += m->comp * f;
			if (t->what == HS_W_OPTIMIZER)
				r->res->optimizer_s += m->comp * f;
			r->res->flops += m->flops;
			begin(x, ti, -1);
			r->seg = (struct seg){.task = ti, .pos = a, .end = b, .f = f};
			seg_next(x, rep);
			return;
		}
		double comp = m->comp * t->scale * compute_factor(x, r, m);
		r->res->compute_s += comp;
		if (t->what == HS_W_OPTIMIZER)
			r->res->optimizer_s += comp;
		double d = comp;
		for (int k = 0; k < HS_GROUP_COUNT; k++) {
			r->res->exposed_s[k] += m->comm[k] * t->scale;
			d += m->comm[k] * t->scale;
		}
		r->res->flops += m->flops * t->scale;
		begin(x, ti, d);
		return;
	}
	if (t->kind == HS_T_COLL && t->rendezvous >= 0) {
		/* occupy the stream while waiting for the other members, as a collective kernel does */
		struct rv *v = &x->rv[t->rendezvous];
		double now = hs_time_to_s(hs_engine_now(x->eng)) - x->step_start;
		r->busy[stream] = 1;
		st->arrive = now;
		v->tasks[v->arrived++] = ti;
		if (v->arrived < v->members)
			return;
		double d = x->net ? -1 : comm_time(x, t);
		for (int k = 0; k < v->members; k++) {
			uint32_t mi = v->tasks[k];
			x->reps[x->g->tasks[mi].rep].res->straggler_wait_s += now - x->ts[mi].arrive;
			begin(x, mi, d);
		}
		if (x->net)
			start_net(x, ti, t->rendezvous);
		return;
	}
	if (x->net) {
		begin(x, ti, -1);
		start_net(x, ti, -1);
		return;
	}
	begin(x, ti, comm_time(x, t));
}

static void on_done(hs_engine *eng, void *ctx, uint64_t ti)
{
	struct ex *x = ctx;
	struct tstate *st = &x->ts[ti];
	const hs_task *t = &x->g->tasks[ti];
	struct rep *r = &x->reps[t->rep];
	double now = hs_time_to_s(hs_engine_now(eng)) - x->step_start;
	st->done = 1;
	st->end = now;
	r->busy[t->stream] = 0;
	r->qpos[t->stream]++;
	if (now > r->step_finish)
		r->step_finish = now;
	if (t->stream == HS_S_COMPUTE)
		r->idle_since = now;
	for (uint32_t k = x->succ_first[ti]; k < x->succ_first[ti + 1]; k++) {
		uint32_t s = x->succ[k];
		x->ts[s].cause = (uint32_t)ti;
		if (--x->ts[s].waiting == 0) {
			const hs_task *n = &x->g->tasks[s];
			try_start(x, n->rep, n->stream);
		}
	}
	try_start(x, t->rep, t->stream);
}

static void rep_groups(const hs_workload *s, struct rep *r, const hs_rep *rp)
{
	const hs_parallel *p = s->par;
	int sizes[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp, [HS_GROUP_DP] = p->dp,
				     [HS_GROUP_EP] = p->ep, [HS_GROUP_PP] = p->pp};
	r->peer[0] = r->peer[1] = -1;
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		r->grp[k] = hs_xmalloc((size_t)sizes[k] * sizeof(int));
		r->grp_n[k] = hs_build_group(p, (enum hs_group)k, rp->dp_index, rp->stage, r->grp[k]);
		hs_err e = {0};
		/* the scenario's strategy divides the cluster, so its groups are valid; a failure is a bug */
		if (r->grp_n[k] > 1 && hs_coll_grp_init(&r->cg[k], s->cluster, r->grp[k], r->grp_n[k], &e)) {
			fprintf(stderr, "hetsim: internal error: group of kind %d: %s\n", k, e.msg);
			abort();
		}
	}
}

/* Flow fidelity, collectives inside compute tasks: every rep's lane groups, its EP rendezvous (without symmetry
 * the replicas of one EP group are reps of their own) and each sliced task's index among its slices. */
static void inlayer_setup(struct ex *x)
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

int hs_exec_step(const hs_workload *s, const hs_simopts *o, const hs_build *b, hs_profile_cache *cache,
		 double horizon_s, hs_result *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	const hs_graph *g = &b->graph;
	int symmetry = hs_plan_symmetric(s, g);
	struct ex x = {.s = s, .o = o, .horizon_s = horizon_s, .g = g, .err = err, .profiles = cache};
	if (!x.profiles) {
		x.profiles = hs_profile_cache_create();
		x.own_profiles = 1;
	}
	x.opmemo = hs_op_memo_create();
	int rc = -1;
	x.eng = hs_engine_create();
	x.ts = hs_xcalloc(g->ntasks ? g->ntasks : 1, sizeof *x.ts);
	x.reps = hs_xcalloc((size_t)g->nreps, sizeof *x.reps);
	out->reps = hs_xcalloc((size_t)g->nreps, sizeof *out->reps);
	out->nreps = g->nreps;
	/* distinct op ranges: about 5 per (stage, chunk) and node group; keep the table under half full */
	x.memocap = 1024;
	while (x.memocap < (size_t)(16 * (g->nreps + 1) * (s->par->vstages + 1) * (hs_cluster_ngroups(s->cluster) + 1)))
		x.memocap *= 2;
	x.memo = hs_xcalloc(x.memocap, sizeof *x.memo);

	for (int i = 0; i < g->nreps; i++) {
		struct rep *r = &x.reps[i];
		const hs_rep *rp = &g->reps[i];
		r->res = &out->reps[i];
		r->res->stage = rp->stage;
		r->res->dp_index = rp->dp_index;
		r->dev = hs_plan_rep_device(s, rp, symmetry, &r->ngroup);
		r->res->device = r->dev->name;
		r->prof = profile_for(&x, r->dev);
		if (!r->prof)
			goto out;
		rep_groups(s, r, rp);
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
		r->res->mem_capacity = r->dev->hbm_bytes - s->par->memory_reserve;
	}
	/* stream queues, successor lists, rendezvous membership */
	x.succ_first = hs_xcalloc(g->ntasks + 1, sizeof *x.succ_first);
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		struct rep *r = &x.reps[t->rep];
		hs_xgrow(&r->queue[t->stream], &r->qcap[t->stream], r->qn[t->stream] + 1, sizeof(uint32_t));
		r->queue[t->stream][r->qn[t->stream]++] = (uint32_t)i;
		x.ts[i].waiting = t->dep_count;
		x.ts[i].cause = UINT32_MAX;
		for (uint32_t k = 0; k < t->dep_count; k++)
			x.succ_first[g->deps[t->dep_first + k] + 1]++;
	}
	for (size_t i = 0; i < g->ntasks; i++)
		x.succ_first[i + 1] += x.succ_first[i];
	x.succ = hs_xmalloc((g->ndeps ? g->ndeps : 1) * sizeof *x.succ);
	uint32_t *fill = hs_xcalloc(g->ntasks + 1, sizeof *fill);
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		for (uint32_t k = 0; k < t->dep_count; k++) {
			uint32_t d = g->deps[t->dep_first + k];
			x.succ[x.succ_first[d] + fill[d]++] = (uint32_t)i;
		}
	}
	free(fill);
	if (g->nrendezvous) {
		x.rv = hs_xcalloc((size_t)g->nrendezvous, sizeof *x.rv);
		for (size_t i = 0; i < g->ntasks; i++)
			if (g->tasks[i].kind == HS_T_COLL && g->tasks[i].rendezvous >= 0)
				x.rv[g->tasks[i].rendezvous].members++;
		for (int i = 0; i < g->nrendezvous; i++)
			x.rv[i].tasks = hs_xcalloc((size_t)x.rv[i].members + 1, sizeof(uint32_t));
	}

	if (o->fidelity == HS_FID_FLOW) {
		x.net = hs_net_create(s->cluster, "flow", x.eng, err);
		if (!x.net)
			goto out;
		x.lanes = lanes_needed(s, o);
		x.contend = lanes_contend(s, o);
		x.inlayer = o->layer_net;
		if (x.inlayer)
			inlayer_setup(&x);
		if (horizon_s > 0)
			hs_net_stats_timeline(x.net, 1.5 * horizon_s / LINK_BINS, LINK_BINS);
	}
	int steps = s->var->steps > 0 ? s->var->steps : 1;
	if (s->var->noise != HS_NOISE_NONE)
		x.rng = hs_rng_create(o->seed, 1 /* stream: per-op noise */);
	out->steps = steps;
	out->step_times = hs_xcalloc((size_t)steps, sizeof *out->step_times);
	for (int st = 0; st < steps; st++) {
		/* each step starts when the previous one has ended everywhere (the optimizer step closes it) */
		x.step_start = hs_time_to_s(hs_engine_now(x.eng));
		for (size_t i = 0; i < g->ntasks; i++) {
			x.ts[i] = (struct tstate){.waiting = g->tasks[i].dep_count, .cause = UINT32_MAX};
		}
		for (int i = 0; i < g->nrendezvous; i++)
			x.rv[i].arrived = 0;
		for (int i = 0; i < x.nepg; i++)
			x.epg[i].arrived = 0;
		x.nnetops = 0;
		for (int i = 0; i < g->nreps; i++) {
			struct rep *r = &x.reps[i];
			memset(r->qpos, 0, sizeof r->qpos);
			memset(r->busy, 0, sizeof r->busy);
			r->idle_since = 0;
			r->step_finish = 0;
		}
		for (int i = 0; i < g->nreps; i++)
			for (int k = 0; k < HS_S_COUNT; k++)
				try_start(&x, i, k);
		hs_engine_run(x.eng, HS_TIME_MAX);
		for (size_t i = 0; i < g->ntasks; i++)
			if (!x.ts[i].done) {
				hs_err_set(err, HS_EINTERNAL, "internal error: task %zu (rep %d, stream %d) never ran: the "
							      "graph deadlocks",
					   i, g->tasks[i].rep, g->tasks[i].stream);
				goto out;
			}
		double makespan = 0;
		for (int i = 0; i < g->nreps; i++) {
			struct rep *r = &x.reps[i];
			hs_rep_result *rr = r->res;
			rr->finish_s += r->step_finish;
			/* communication that ends after the compute stream (parameter all-gather after the optimizer)
			 * is exposed: the next step cannot start before it */
			double acc = rr->compute_s + rr->bubble_s;
			for (int k = 0; k < HS_GROUP_COUNT; k++)
				acc += rr->exposed_s[k];
			if (rr->finish_s > acc)
				rr->exposed_s[HS_GROUP_DP] += rr->finish_s - acc;
			if (r->step_finish > makespan)
				makespan = r->step_finish;
		}
		out->step_times[st] = makespan;
		/* ranks that finish early wait for the step's end: that wait belongs to the next step's start, and
		 * is not part of any rank's breakdown (finish_s is per rank) */
	}
	if (x.net && horizon_s > 0)
		collect_links(&x, out);
	/* results: means over steps */
	out->spans = hs_xmalloc((g->ntasks ? g->ntasks : 1) * sizeof *out->spans);
	for (size_t i = 0; i < g->ntasks; i++)
		out->spans[i] = (hs_span){x.ts[i].start, x.ts[i].end}; /* the last step */
	out->events = hs_engine_executed(x.eng);
	out->tasks = g->ntasks;
	for (int i = 0; i < g->nreps; i++) {
		hs_rep_result *rr = &out->reps[i];
		rr->finish_s /= steps;
		rr->compute_s /= steps;
		rr->optimizer_s /= steps;
		rr->bubble_s /= steps;
		rr->straggler_wait_s /= steps;
		rr->flops /= steps;
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			rr->exposed_s[k] /= steps;
		if (rr->finish_s > out->reps[out->critical_rep].finish_s)
			out->critical_rep = i;
		if (rr->mem_bytes > out->mem_peak_bytes) {
			out->mem_peak_bytes = rr->mem_bytes;
			out->mem_peak_rep = i;
		}
		out->hw_flops += rr->flops * g->reps[i].multiplicity;
	}
	double sum = 0;
	for (int k = 0; k < steps; k++)
		sum += out->step_times[k];
	out->step_time_s = sum / steps;
	double *sorted = hs_xmalloc((size_t)steps * sizeof *sorted);
	memcpy(sorted, out->step_times, (size_t)steps * sizeof *sorted);
	qsort(sorted, (size_t)steps, sizeof *sorted, cmp_double);
	out->step_min_s = sorted[0];
	out->step_max_s = sorted[steps - 1];
	out->step_p50_s = quantile(sorted, steps, 0.50);
	out->step_p99_s = quantile(sorted, steps, 0.99);
	free(sorted);
	int n = hs_cluster_ngpus(s->cluster);
	for (int i = 0; i < n; i++)
		out->peak_flops += hs_cluster_device(s->cluster, i)->peak_flops[s->train->dtype];
	out->model_flops = b->model_flops;
	double tokens = (double)s->train->global_batch * s->train->seq_len;
	if (out->step_time_s > 0) {
		out->mfu = out->model_flops / (out->step_time_s * out->peak_flops);
		out->hfu = out->hw_flops / (out->step_time_s * out->peak_flops);
		out->tokens_per_s = tokens / out->step_time_s;
	}
	rc = 0;
out:
	for (int i = 0; i < g->nreps; i++) {
		for (int k = 0; k < HS_S_COUNT; k++)
			free(x.reps[i].queue[k]);
		for (int k = 0; k < HS_GROUP_COUNT; k++) {
			free(x.reps[i].grp[k]);
			free(x.reps[i].lane_rk[k]);
		}
		free(x.reps[i].gpus);
	}
	if (x.rv)
		for (int i = 0; i < g->nrendezvous; i++)
			free(x.rv[i].tasks);
	free(x.rv);
	for (int i = 0; i < x.nepg; i++)
		free(x.epg[i].reps);
	free(x.epg);
	free(x.slice);
	if (x.own_profiles)
		hs_profile_cache_free(x.profiles);
	hs_op_memo_free(x.opmemo);
	free(x.reps);
	free(x.ts);
	free(x.succ);
	free(x.succ_first);
	free(x.memo);
	hs_engine_destroy(x.eng);
	hs_rng_destroy(x.rng);
	hs_net_free(x.net);
	free(x.netops);
	if (rc)
		hs_result_free(out);
	return rc;
}

void hs_result_free(hs_result *r)
{
	if (!r)
		return;
	free(r->reps);
	free(r->spans);
	free(r->step_times);
	for (int i = 0; i < r->links.nlinks; i++)
		free(r->links.names[i]);
	free(r->links.names);
	free(r->links.capacity_Bps);
	free(r->links.mean_util);
	free(r->links.util);
	memset(&r->links, 0, sizeof r->links);
	r->step_times = NULL;
	r->reps = NULL;
	r->spans = NULL;
}
