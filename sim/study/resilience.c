#include "sim/study/resilience.h"

#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/engine/rng.h"

static const char *const keys[] = {"mtbf", "distribution", "weibull_shape", "detection", "restart", "checkpoint",
				   "horizon", "trials", "target_tokens", NULL};
static const char *const mtbf_keys[] = {"gpu", "node", "link", NULL};
static const char *const ck_keys[] = {"interval", "async", "host_bandwidth", "storage_bandwidth", "size", NULL};
static const char *const st_keys[] = {"per_node", "aggregate", NULL};
static const char *const dists[] = {"exponential", "weibull", NULL};

void hs_resilience_free(hs_resilience *r)
{
	free(r->sweep);
	r->sweep = NULL;
	r->nsweep = 0;
}

int hs_resilience_from_yaml(const hs_ynode *n, hs_resilience *r, hs_err *err)
{
	memset(r, 0, sizeof *r);
	if (!n)
		return 0;
	const char *P = "resilience";
	if (hs_cfg_known(n, P, keys, "a mapping {mtbf, distribution, detection, restart, checkpoint, horizon, ...}",
			 err))
		return -1;
	r->enabled = 1;
	const hs_ynode *m = hs_yaml_get(n, "mtbf");
	if (!m)
		return hs_cfg_err(n, err, P, "mtbf", "missing required key (expected {gpu: 50000 h, node: .., link: ..})");
	if (hs_cfg_known(m, "resilience.mtbf", mtbf_keys, "a mapping {gpu, node, link}", err) ||
	    hs_cfg_num(m, "resilience.mtbf", "gpu", HS_U_TIME, 0, 1e15, 0, 0, &r->mtbf_gpu, err) ||
	    hs_cfg_num(m, "resilience.mtbf", "node", HS_U_TIME, 0, 1e15, 0, 0, &r->mtbf_node, err) ||
	    hs_cfg_num(m, "resilience.mtbf", "link", HS_U_TIME, 0, 1e15, 0, 0, &r->mtbf_link, err))
		return -1;
	int d;
	int64_t trials;
	if (hs_cfg_enum(n, P, "distribution", dists, 0, &d, err) ||
	    hs_cfg_num(n, P, "weibull_shape", HS_U_COUNT, 0.1, 10, 1, 0, &r->weibull_shape, err) ||
	    hs_cfg_num(n, P, "detection", HS_U_TIME, 0, 1e9, 60, 0, &r->detection, err) ||
	    hs_cfg_num(n, P, "restart", HS_U_TIME, 0, 1e9, 600, 0, &r->restart, err) ||
	    hs_cfg_num(n, P, "horizon", HS_U_TIME, -1e300, 1e12, 30 * 86400.0, 0, &r->horizon, err) ||
	    hs_cfg_int(n, P, "trials", 1, 100000, 20, 0, &trials, err) ||
	    hs_cfg_num(n, P, "target_tokens", HS_U_COUNT, 0, 1e30, 0, 0, &r->target_tokens, err))
		return -1;
	r->dist = (enum hs_fail_dist)d;
	r->trials = (int)trials;
	const hs_ynode *hz = hs_yaml_get(n, "horizon");
	hz = hz ? hz : n;
	snprintf(r->horizon_at, sizeof r->horizon_at, "%s:%d:%d", hz->file ? hz->file : "?", hz->line, hz->col);
	if (r->horizon <= 0)
		return hs_cfg_err(hs_yaml_get(n, "horizon"), err, P, "horizon",
				  "must be positive (expected a duration such as '30 d')");
	if (r->mtbf_gpu == 0 && r->mtbf_node == 0 && r->mtbf_link == 0 &&
	    (hs_yaml_get(n, "restart") || hs_yaml_get(n, "detection")))
		return hs_cfg_err(m, err, P, "mtbf",
				  "every failure rate is zero, yet restarts are configured (expected a positive MTBF "
				  "for gpu, node or link, or no restart/detection keys)");
	const hs_ynode *c = hs_yaml_get(n, "checkpoint");
	r->async = 1;
	r->host_bw_per_gpu = 25e9; /* PCIe 5 x16 pinned copies: ~55 GB/s measured on H200 (calib/measurements);
				     * half of it, since a node's GPUs share host memory bandwidth */
	r->storage_bw_node = 5e9;
	if (c) {
		const char *CP = "resilience.checkpoint";
		if (hs_cfg_known(c, CP, ck_keys, "a mapping {interval, async, host_bandwidth, storage_bandwidth, size}",
				 err) ||
		    hs_cfg_bool(c, CP, "async", 1, &r->async, err) ||
		    hs_cfg_num(c, CP, "host_bandwidth", HS_U_BW, 1, 1e15, r->host_bw_per_gpu, 0, &r->host_bw_per_gpu,
			       err) ||
		    hs_cfg_num(c, CP, "size", HS_U_BYTES, 1, 1e18, 0, 0, &r->checkpoint_bytes, err))
			return -1;
		const hs_ynode *s = hs_yaml_get(c, "storage_bandwidth");
		if (s && (hs_cfg_known(s, "resilience.checkpoint.storage_bandwidth", st_keys,
				       "a mapping {per_node, aggregate}", err) ||
			  hs_cfg_num(s, "resilience.checkpoint.storage_bandwidth", "per_node", HS_U_BW, 1, 1e15,
				     r->storage_bw_node, 0, &r->storage_bw_node, err) ||
			  hs_cfg_num(s, "resilience.checkpoint.storage_bandwidth", "aggregate", HS_U_BW, 0, 1e18, 0, 0,
				     &r->storage_bw_total, err)))
			return -1;
		const hs_ynode *iv = hs_yaml_get(c, "interval");
		if (iv && iv->kind == HS_Y_SEQ) {
			r->sweep = hs_xcalloc(iv->n ? iv->n : 1, sizeof *r->sweep);
			for (size_t i = 0; i < iv->n; i++) {
				char key[32];
				snprintf(key, sizeof key, "interval[%zu]", i);
				if (hs_cfg_node_num(iv->vals[i], CP, key, HS_U_TIME, 1e-3, 1e12, &r->sweep[i], err))
					return -1;
			}
			r->nsweep = (int)iv->n;
			r->interval = r->nsweep ? r->sweep[0] : 0;
		} else if (hs_cfg_num(c, CP, "interval", HS_U_TIME, 0, 1e12, 0, 0, &r->interval, err)) {
			return -1;
		} else if (iv && !(r->interval > 0)) {
			/* leaving the key out means no periodic checkpoints; a written 0 s is a slip, not that */
			return hs_cfg_err(iv, err, CP, "interval",
					  "%s is not a checkpoint interval (expected a positive duration such as '1 h'; "
					  "leave the key out for no periodic checkpoints)",
					  iv->str ? iv->str : "0");
		}
	}
	return 0;
}

double hs_resilience_system_mtbf(const hs_resilience *r, const hs_res_job *job)
{
	double rate = 0;
	if (r->mtbf_gpu > 0)
		rate += job->gpus / r->mtbf_gpu;
	if (r->mtbf_node > 0)
		rate += job->nodes / r->mtbf_node;
	if (r->mtbf_link > 0)
		rate += job->links / r->mtbf_link;
	return rate > 0 ? 1 / rate : INFINITY;
}

double hs_resilience_young(double delta, double mtbf) { return sqrt(2 * delta * mtbf); }

/* Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart dumps", Eq. 37. */
double hs_resilience_daly(double delta, double mtbf)
{
	if (delta >= 2 * mtbf)
		return mtbf;
	double x = delta / (2 * mtbf);
	return sqrt(2 * delta * mtbf) * (1 + sqrt(x) / 3 + x / 9) - delta;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Failure times within [0, horizon) of one trial: every component a renewal process, fresh at time 0. */
static double *failures(const hs_resilience *r, const hs_res_job *job, hs_rng *g, size_t *nout)
{
	size_t n = 0, cap = 64;
	double *f = hs_xmalloc(cap * sizeof *f);
	struct {
		int count;
		double mtbf;
	} kinds[3] = {{job->gpus, r->mtbf_gpu}, {job->nodes, r->mtbf_node}, {job->links, r->mtbf_link}};
	for (int k = 0; k < 3; k++) {
		if (kinds[k].mtbf <= 0 || kinds[k].count <= 0)
			continue;
		if (r->dist == HS_FAIL_EXPONENTIAL) {
			/* the superposition of exponential renewals is a Poisson process of the summed rate */
			double mean = kinds[k].mtbf / kinds[k].count;
			for (double t = hs_rng_exponential(g, mean); t < r->horizon; t += hs_rng_exponential(g, mean)) {
				hs_xgrow(&f, &cap, n + 1, sizeof *f);
				f[n++] = t;
			}
			continue;
		}
		/* Weibull with mean = MTBF: scale = MTBF / Gamma(1 + 1/k) */
		double scale = kinds[k].mtbf / gsl_sf_gamma(1 + 1 / r->weibull_shape);
		for (int c = 0; c < kinds[k].count; c++)
			for (double t = hs_rng_weibull(g, scale, r->weibull_shape); t < r->horizon;
			     t += hs_rng_weibull(g, scale, r->weibull_shape)) {
				hs_xgrow(&f, &cap, n + 1, sizeof *f);
				f[n++] = t;
			}
	}
	qsort(f, n, sizeof *f, cmp_d);
	*nout = n;
	return f;
}

struct trial {
	double useful, lost, down, ckpt;
	int nfail;
};

/* One trial: the job's life against a fixed list of failure times. */
static struct trial run_trial(const hs_resilience *r, double interval, double stall, double commit, double load,
			      const double *f, size_t nf)
{
	struct trial o = {0};
	double H = r->horizon, t = 0, w = 0, committed = 0;
	double pend_w = -1, pend_at = INFINITY; /* a checkpoint written but not yet committed */
	size_t fi = 0;
	double next_ck = interval > 0 ? interval : INFINITY;
	while (t < H) {
		double nf_t = fi < nf ? f[fi] : INFINITY;
		if (pend_w >= 0 && pend_at <= t) {
			committed = pend_w;
			pend_w = -1, pend_at = INFINITY;
		}
		double run = next_ck - w; /* work until the next checkpoint starts */
		double until = t + run;
		if (nf_t < until || H < until) {
			double stop = nf_t < H ? nf_t : H;
			w += stop - t;
			t = stop;
			if (t >= H)
				break;
			goto failure;
		}
		t = until;
		w = next_ck;
		if (pend_w >= 0 && pend_at <= t) { /* the previous checkpoint committed while we ran */
			committed = pend_w;
			pend_w = -1, pend_at = INFINITY;
		}
		/* checkpoint: stall, then commit later (async) or at the stall's end (sync); a checkpoint started
		 * before the previous one committed supersedes it (the previous write is abandoned) */
		if (nf_t < t + stall) {
			o.ckpt += nf_t - t;
			t = nf_t;
			goto failure;
		}
		if (t + stall >= H) {
			o.ckpt += H - t;
			t = H;
			break;
		}
		pend_w = w;
		pend_at = t + commit;
		t += stall;
		o.ckpt += stall;
		next_ck = w + interval;
		continue;
	failure:
		if (pend_w >= 0 && pend_at <= t) {
			committed = pend_w;
			pend_w = -1;
		}
		pend_w = -1, pend_at = INFINITY;
		o.nfail++;
		o.lost += w - committed;
		w = committed;
		next_ck = interval > 0 ? w + interval : INFINITY;
		/* down for detection + restart + load; a failure while down starts the recovery again */
		double up = t + r->detection + r->restart + load;
		fi++;
		while (fi < nf && f[fi] < up) {
			o.nfail++;
			up = f[fi] + r->detection + r->restart + load;
			fi++;
		}
		if (up > H)
			up = H;
		o.down += up - t;
		t = up;
	}
	o.useful = w;
	return o;
}

void hs_resilience_run(const hs_resilience *r, const hs_res_job *job, double interval, hs_res_out *out)
{
	memset(out, 0, sizeof *out);
	double bytes = r->checkpoint_bytes > 0 ? r->checkpoint_bytes : job->state_bytes;
	double store_bw = r->storage_bw_node * job->nodes;
	if (r->storage_bw_total > 0 && r->storage_bw_total < store_bw)
		store_bw = r->storage_bw_total;
	double host = bytes / job->gpus / r->host_bw_per_gpu; /* every GPU copies its shard at once */
	double store = bytes / store_bw;
	double stall = r->async ? host : host + store;
	double commit = host + store;
	double load = store + host;
	out->interval = interval;
	out->stall = interval > 0 ? stall : 0;
	out->commit = commit;
	double *g = hs_xcalloc((size_t)r->trials, sizeof *g);
	double sum = 0, fails = 0, lost = 0, down = 0, ck = 0;
	for (int k = 0; k < r->trials; k++) {
		hs_rng *rng = hs_rng_create(job->seed, 1000 + (uint64_t)k); /* same failures for every interval */
		size_t nf;
		double *f = failures(r, job, rng, &nf);
		struct trial o = run_trial(r, interval, stall, commit, load, f, nf);
		free(f);
		hs_rng_destroy(rng);
		g[k] = o.useful / r->horizon;
		sum += g[k];
		fails += o.nfail;
		lost += o.lost;
		down += o.down;
		ck += o.ckpt;
	}
	qsort(g, (size_t)r->trials, sizeof *g, cmp_d);
	out->goodput = sum / r->trials;
	out->goodput_p10 = g[(int)(0.1 * (r->trials - 1))];
	out->goodput_p90 = g[(int)(0.9 * (r->trials - 1) + 0.5)];
	out->failures_per_day = fails / r->trials / (r->horizon / 86400.0);
	out->lost_work_frac = lost / r->trials / r->horizon;
	out->down_frac = down / r->trials / r->horizon;
	out->ckpt_frac = ck / r->trials / r->horizon;
	if (r->target_tokens > 0 && out->goodput > 0)
		out->time_to_train_s = r->target_tokens / (job->tokens_per_step / job->step_s) / out->goodput;
	free(g);
}
