/* The split over stages and replicas (sim/exec/partition.h): per node group, the layers are timed once; an
 * exact bisection over the bottleneck time then places the stage boundaries, and a second bisection
 * balances the micro-batches of the replicas. */
#include "sim/exec/partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/profile.h"
#include "models/schedule.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"
#include "sim/exec/layer_time.h"
#include "sim/exec/plan.h"

/* Per node group: prefix sums of the per-layer seconds of one micro-batch (forward, recompute, input and weight
 * gradients, the layer's TP/CP/EP collectives included) on the group's device, and the embedding and head. */
struct gtime {
	double *prefix; /* [L + 1]; NULL until timed */
	double emb, head;
};

struct part {
	const hs_workload *s;
	hs_partition *out;
	hs_layer_cfg lc;
	int L, pp, m;
	struct gtime *g;       /* [node groups] */
	hs_profile **prof;
	int nprof;
	int *stage_group;      /* [pp] node group of the slowest device of each stage (all replicas) */
	double *slow;          /* [pp] slowdown of the stage's slowest device (variability.slowdown) */
	double *cap;           /* [pp] usable memory of the stage's smallest device */
	int *maxmem;           /* [pp * (L + 1)]: most layers ending at a position that fit; -1 unknown */
	hs_err *err;
};

/* How much longer than its type's speed the slowest device of replicas [d0, d1) of a stage takes: 1 / the
 * lowest `variability.slowdown` speed at the start (throttles later in the run and noise are not foreseen). */
static double slow_factor(const hs_workload *s, int stage, int d0, int d1)
{
	const hs_parallel *p = s->par;
	if (!s->var->nrules)
		return 1;
	double speed = 1;
	for (int d = d0; d < d1; d++)
		for (int c = 0; c < p->cp; c++)
			for (int t = 0; t < p->tp; t++) {
				double v = hs_variability_speed(s->var, hs_build_rank(p, t, c, d, stage), 0);
				if (v < speed)
					speed = v;
			}
	return 1 / speed;
}

/* The slowest device (by hs_plan_slower, the rule the executor paces reps by) among the TP x CP ranks of
 * replicas [d0, d1) of a stage; *dd is its replica. *min_mem gets the smallest memory among them and *small
 * (when not NULL) that device's global index: the slowest device need not be the smallest. */
static int slowest_gpu(const hs_workload *s, int stage, int d0, int d1, int *dd, double *min_mem, int *small)
{
	const hs_parallel *p = s->par;
	const hs_device_type *bd = NULL;
	int best = 0;
	*min_mem = HUGE_VAL;
	for (int d = d0; d < d1; d++)
		for (int c = 0; c < p->cp; c++)
			for (int t = 0; t < p->tp; t++) {
				int gpu = hs_build_rank(p, t, c, d, stage);
				const hs_device_type *dv = hs_cluster_device(s->cluster, gpu);
				if (dv->hbm_bytes < *min_mem) {
					*min_mem = dv->hbm_bytes;
					if (small)
						*small = gpu;
				}
				if (hs_plan_slower(dv, bd, s->train->dtype)) {
					bd = dv;
					best = gpu;
					*dd = d;
				}
			}
	return best;
}

static double list_time(const hs_op_env *e, const hs_oplist *l)
{
	hs_ops_cost c = {0};
	hs_ops_time(e, l->ops, l->n, &c);
	double t = c.comp;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		t += c.comm[k];
	return t;
}

/* Time node group g's device with the groups of replica d of `stage` (where it was found). */
static int time_group(struct part *q, int g, int stage, int d)
{
	struct gtime *gt = &q->g[g];
	if (gt->prefix)
		return 0;
	const hs_workload *s = q->s;
	const hs_device_type *dev = &hs_cluster_group(s->cluster, g)->gpu;
	const hs_profile *prof = NULL;
	for (int i = 0; i < q->nprof; i++)
		if (strcmp(hs_profile_name(q->prof[i]), dev->profile) == 0)
			prof = q->prof[i];
	if (!prof) {
		hs_profile *np = hs_profile_load(dev->profile, q->err);
		if (!np)
			return -1;
		q->prof = hs_xrealloc(q->prof, (size_t)(q->nprof + 1) * sizeof *q->prof);
		q->prof[q->nprof++] = np;
		prof = np;
	}
	hs_op_env e = {.prof = prof, .dev = dev, .cluster = s->cluster, .coll_algo = s->coll_algo};
	hs_op_env_host(&e, s->train->recipe);
	int *grp[HS_GROUP_COUNT];
	int sizes[HS_GROUP_COUNT] = {s->par->tp, s->par->cp, s->par->dp, s->par->ep, s->par->pp};
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		grp[k] = hs_xmalloc((size_t)sizes[k] * sizeof(int));
		e.grp_n[k] = hs_build_group(s->par, (enum hs_group)k, d, stage, grp[k]);
		e.grp[k] = grp[k];
	}
	static const enum hs_phase ph[] = {HS_PH_FWD, HS_PH_RECOMPUTE, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT};
	hs_oplist l = {0};
	gt->prefix = hs_xcalloc((size_t)q->L + 1, sizeof *gt->prefix);
	for (int i = 0; i < q->L; i++) {
		double t = 0;
		for (int k = 0; k < 4; k++) {
			hs_oplist_clear(&l);
			hs_ops_layer(s->model, &q->lc, i, ph[k], &l);
			t += list_time(&e, &l);
		}
		gt->prefix[i + 1] = gt->prefix[i] + t;
	}
	for (int k = 0; k < 4; k++) {
		if (ph[k] == HS_PH_RECOMPUTE)
			continue;
		hs_oplist_clear(&l);
		hs_ops_embedding(s->model, &q->lc, ph[k], &l);
		gt->emb += list_time(&e, &l);
		hs_oplist_clear(&l);
		hs_ops_head(s->model, &q->lc, ph[k], &l);
		gt->head += list_time(&e, &l);
	}
	hs_oplist_free(&l);
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		free(grp[k]);
	return 0;
}

/* Seconds of one micro-batch on `stage` holding layers [a, b) on node group g's device. */
static double stage_cost(const struct part *q, int stage, int g, int a, int b)
{
	const struct gtime *gt = &q->g[g];
	double t = gt->prefix[b] - gt->prefix[a] + (stage == 0 ? gt->emb : 0) + (stage == q->pp - 1 ? gt->head : 0);
	return t * (q->slow ? q->slow[stage] : 1);
}

/* Bytes per device of `stage` holding n layers from `first` (as hs_build_step counts them). */
static double stage_mem(const struct part *q, int stage, int first, int n)
{
	const hs_workload *s = q->s;
	const hs_parallel *p = s->par;
	int units = n < HS_BUILD_MAX_GATHER_UNITS ? n : HS_BUILD_MAX_GATHER_UNITS;
	hs_mem_cfg mc = {.layer = q->lc, .pp = p->pp, .dp = hs_build_dp_group_size(p), .zero_stage = p->zero,
			 .fsdp_keep = p->fsdp_keep,
			 .layers_on_rank = n, .first_stage = stage == 0, .last_stage = stage == p->pp - 1,
			 .in_flight = hs_sched_in_flight(p->schedule, p->pp, stage, q->m, p->vstages),
			 .vstages = p->vstages, .first_layer = first, .gather_layers = (n + units - 1) / units};
	hs_mem mem;
	hs_memory_rank(s->model, &mc, &mem);
	return mem.total;
}

/* The most layers ending at `end` that `stage` can hold in memory (0: not even one). */
static int max_fit(struct part *q, int stage, int end)
{
	int *slot = &q->maxmem[stage * (q->L + 1) + end];
	if (*slot >= 0)
		return *slot;
	int lo = 0, hi = end; /* memory grows with the layers: bisect for the largest that fits */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (stage_mem(q, stage, end - mid, mid) <= q->cap[stage])
			lo = mid;
		else
			hi = mid - 1;
	}
	return *slot = lo;
}

/* Can every stage take at most T seconds per micro-batch and fit in memory? Walks from the last stage, each
 * taking as many layers as it can while leaving one for every earlier stage; layers[] gets the split. Exact:
 * whatever a feasible split leaves to stages 0..s, the greedy leaves no more. */
static int feasible(struct part *q, double T, int *layers)
{
	int pos = q->L;
	for (int st = q->pp - 1; st >= 0; st--) {
		int g = q->stage_group[st], fit = max_fit(q, st, pos), n = 0;
		if (st == 0) {
			if (pos > fit || stage_cost(q, 0, g, 0, pos) > T)
				return 0;
			n = pos;
		} else {
			int most = pos - st < fit ? pos - st : fit;
			while (n < most && stage_cost(q, st, g, pos - n - 1, pos) <= T)
				n++;
			if (n == 0)
				return 0;
		}
		layers[st] = n;
		pos -= n;
	}
	return 1;
}

static int infeasible(struct part *q)
{
	const hs_workload *s = q->s;
	char list[512];
	size_t o = 0;
	int sum = 0, worst = 0;
	for (int st = 0; st < q->pp; st++) {
		int first = (int)((long)q->L * st / q->pp), n = 0;
		while (first + n < q->L && stage_mem(q, st, first, n + 1) <= q->cap[st])
			n++;
		sum += n;
		if (n < q->L / q->pp && q->cap[st] < q->cap[worst])
			worst = st;
		if (o < sizeof list - 32)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%d", st ? " + " : "", n);
		else if (o < sizeof list - 4)
			o += (size_t)snprintf(list + o, sizeof list - o, " ...");
	}
	const double G = HS_GiB;
	int per = q->L / q->pp > 0 ? q->L / q->pp : 1;
	int first = (int)((long)q->L * worst / q->pp);
	int d, small = 0;
	double mm;
	slowest_gpu(s, worst, 0, s->par->dp, &d, &mm, &small);
	return hs_err_set(q->err, HS_EINFEASIBLE,
			  "parallelism.stage_layers: auto: no split of %d layers over %d pipeline stages fits in memory: "
			  "the stages hold at most %s = %d layers (stage %d with %d layers needs %.1f GiB per GPU, %s "
			  "(GPU %d) has %.1f GiB usable); try more pipeline or tensor parallelism, recomputation, or ZeRO",
			  q->L, q->pp, list, sum, worst, per, stage_mem(q, worst, first, per) / G,
			  hs_cluster_device(s->cluster, small)->name, small, q->cap[worst] / G);
}

/* Micro-batches per replica: the smallest T with sum_d max(1, floor(T / t_d) - (pp - 1)) >= M, then the
 * excess taken from the replicas that finish last. */
static void balance_dp(const double *t, int dp, int pp, int64_t M, int *m)
{
	double lo = 0, hi = 0;
	for (int d = 0; d < dp; d++)
		if ((double)(M + pp) * t[d] > hi)
			hi = (double)(M + pp) * t[d];
	for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
		double mid = 0.5 * (lo + hi);
		int64_t sum = 0;
		for (int d = 0; d < dp; d++) {
			double k = floor(mid / t[d]) - (pp - 1);
			sum += k < 1 ? 1 : (int64_t)k;
		}
		if (sum >= M)
			hi = mid;
		else
			lo = mid;
	}
	int64_t sum = 0;
	for (int d = 0; d < dp; d++) {
		double k = floor(hi / t[d]) - (pp - 1);
		m[d] = k < 1 ? 1 : (int)k;
		sum += m[d];
	}
	while (sum > M) { /* at most one per replica that stepped at T: the latest, then the busiest */
		int w = -1;
		for (int d = 0; d < dp; d++) {
			if (m[d] <= 1)
				continue;
			double a = (m[d] + pp - 1) * t[d], b = w < 0 ? 0 : (m[w] + pp - 1) * t[w];
			if (w < 0 || a > b * (1 + 1e-12) || (a >= b * (1 - 1e-12) && m[d] >= m[w]))
				w = d;
		}
		if (w < 0)
			break;
		m[w]--;
		sum--;
	}
}

int hs_partition_resolve(const hs_workload *s, hs_partition *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	const hs_parallel *p = s->par;
	int pp = p->pp, dp = p->dp, L = s->model->layers;
	out->pp = pp, out->dp = dp;
	out->stage_layers = hs_xcalloc((size_t)pp, sizeof *out->stage_layers);
	out->dp_mb = hs_xcalloc((size_t)dp, sizeof *out->dp_mb);
	out->stage_mb_s = hs_xcalloc((size_t)pp, sizeof *out->stage_mb_s);
	out->replica_mb_s = hs_xcalloc((size_t)dp, sizeof *out->replica_mb_s);
	out->stages_auto = p->stage_layers_auto;
	out->dp_auto = p->dp_mb_auto;
	for (int st = 0; st < pp; st++)
		out->stage_layers[st] = p->stage_layers ? p->stage_layers[st] : L / pp;
	int64_t M = s->train->global_batch / s->train->micro_batch;
	for (int d = 0; d < dp; d++)
		out->dp_mb[d] = p->dp_mb ? p->dp_mb[d] : p->dp_mb_auto ? 0 : p->micro_batches;
	int rc = 0;
	struct part q = {.s = s, .out = out, .L = L, .pp = pp, .err = err};
	if (p->stage_layers_auto || p->dp_mb_auto) {
		hs_build_layer_cfg(s, &q.lc);
		q.m = (int)((M + dp - 1) / dp);
		q.g = hs_xcalloc((size_t)hs_cluster_ngroups(s->cluster), sizeof *q.g);
		q.stage_group = hs_xcalloc((size_t)pp, sizeof *q.stage_group);
		q.cap = hs_xcalloc((size_t)pp, sizeof *q.cap);
		q.slow = hs_xcalloc((size_t)pp, sizeof *q.slow);
		for (int st = 0; st < pp; st++) {
			q.slow[st] = slow_factor(s, st, 0, dp);
			int d;
			double mm;
			int gpu = slowest_gpu(s, st, 0, dp, &d, &mm, NULL);
			q.stage_group[st] = hs_cluster_group_of(s->cluster, gpu);
			q.cap[st] = mm - p->memory_reserve;
			if (time_group(&q, q.stage_group[st], st, d)) {
				rc = -1;
				goto out;
			}
		}
	}
	if (p->stage_layers_auto) {
		q.maxmem = hs_xmalloc((size_t)pp * (L + 1) * sizeof *q.maxmem);
		for (size_t i = 0; i < (size_t)pp * (L + 1); i++)
			q.maxmem[i] = -1;
		double hi = 0, lo = 0;
		for (int st = 0; st < pp; st++) {
			double c = stage_cost(&q, st, q.stage_group[st], 0, L);
			if (c > hi)
				hi = c;
		}
		hi = hi * (1 + 1e-9) + 1e-12;
		if (!feasible(&q, hi, out->stage_layers)) {
			rc = infeasible(&q);
			goto out;
		}
		for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
			double mid = 0.5 * (lo + hi);
			if (feasible(&q, mid, out->stage_layers))
				hi = mid;
			else
				lo = mid;
		}
		feasible(&q, hi, out->stage_layers);
	}
	if (q.g) {
		int a = 0;
		for (int st = 0; st < pp; st++) {
			out->stage_mb_s[st] = stage_cost(&q, st, q.stage_group[st], a, a + out->stage_layers[st]);
			a += out->stage_layers[st];
		}
	}
	if (p->dp_mb_auto) {
		/* each replica's slowest stage, on that replica's own devices */
		for (int d = 0; d < dp; d++) {
			int a = 0;
			for (int st = 0; st < pp; st++) {
				int dd;
				double mm;
				int g = hs_cluster_group_of(s->cluster, slowest_gpu(s, st, d, d + 1, &dd, &mm, NULL));
				if (time_group(&q, g, st, d)) {
					rc = -1;
					goto out;
				}
				double keep = q.slow[st];
				q.slow[st] = slow_factor(s, st, d, d + 1);
				double c = stage_cost(&q, st, g, a, a + out->stage_layers[st]);
				q.slow[st] = keep;
				if (c > out->replica_mb_s[d])
					out->replica_mb_s[d] = c;
				a += out->stage_layers[st];
			}
		}
		balance_dp(out->replica_mb_s, dp, pp, M, out->dp_mb);
	}
	/* the chunks: as given, or the stage's layers split evenly over its virtual stages (auto and uniform
	 * splits divide: the scenario checked it) */
	out->v = hs_sched_chunks(p->schedule, p->vstages);
	int nmodel = hs_sched_model_chunks(p->schedule, pp, p->vstages);
	out->chunk_layers = hs_xcalloc((size_t)nmodel, sizeof *out->chunk_layers);
	if (nmodel != pp * out->v) {
		/* DualPipe: pp model chunks, each held twice (stages s and pp-1-s), so a stage runs twice the layers of
		 * a chunk; the scenario allows only the uniform split here */
		for (int g = 0; g < nmodel; g++)
			out->chunk_layers[g] = L / nmodel;
		for (int st = 0; st < pp; st++) {
			out->stage_layers[st] = 0;
			for (int k = 0; k < out->v; k++)
				out->stage_layers[st] += out->chunk_layers[hs_sched_chunk_of(p->schedule, pp, p->vstages, st, k)];
		}
	} else {
		for (int st = 0; st < pp; st++)
			for (int k = 0; k < out->v; k++) {
				int g = hs_sched_chunk_of(p->schedule, pp, p->vstages, st, k);
				out->chunk_layers[g] = p->chunk_layers ? p->chunk_layers[g] : out->stage_layers[st] / out->v;
			}
	}
	for (int d = 0; d < dp; d++) {
		if (out->dp_mb[d] > out->mb_max)
			out->mb_max = out->dp_mb[d];
		if (out->dp_mb[d] != out->dp_mb[0])
			out->uneven_dp = 1;
	}
out:
	if (q.g)
		for (int g = 0; g < hs_cluster_ngroups(s->cluster); g++)
			free(q.g[g].prefix);
	free(q.g);
	for (int i = 0; i < q.nprof; i++)
		hs_profile_free(q.prof[i]);
	free(q.prof);
	free(q.stage_group);
	free(q.cap);
	free(q.slow);
	free(q.maxmem);
	if (rc)
		hs_partition_free(out);
	return rc;
}
