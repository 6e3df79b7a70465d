#include "sim/study/simulate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/profile_cache.h"
#include "sim/base/alloc.h"
#include "sim/exec/plan.h"
#include "sim/exec/range_cache.h"

/* Goodput over the horizon at each checkpoint interval (and at Daly's), from the simulated step. */
/* Failure trials, each a walk over the failures of its horizon: bounded before any runs, since a horizon
 * the checks allow over a small MTBF would be billions of events (issue 18, finding 6). */
enum { MAX_FAILURES = 100000000 };

static int resilience(hs_sim *sim, hs_err *err)
{
	const hs_scenario *s = sim->s;
	const hs_resilience *r = &s->res;
	int links = 0;
	for (int g = 0; g < hs_cluster_ngroups(s->cluster); g++) {
		const hs_node_group *ng = hs_cluster_group(s->cluster, g);
		links += ng->nodes * ng->nics_per_node;
	}
	/* checkpoint: bf16 weights and the fp32 optimizer state (master weights, two moments) of every parameter */
	sim->job = (hs_res_job){.gpus = hs_cluster_ngpus(s->cluster), .nodes = hs_cluster_nnodes(s->cluster),
				.links = links, .step_s = sim->r.step_time_s,
				.tokens_per_step = (double)s->train.global_batch * s->train.seq_len,
				.state_bytes = hs_model_params(&s->model) * (hs_dtype_bytes(s->train.dtype) + 12.0),
				.seed = s->sim.seed};
	sim->sys_mtbf = hs_resilience_system_mtbf(r, &sim->job);
	int runs = (r->nsweep ? r->nsweep : 1) + 2;
	double events = sim->sys_mtbf > 0 ? (double)r->trials * runs * r->horizon / sim->sys_mtbf : 0;
	if (events > MAX_FAILURES)
		return hs_err_set(err, HS_EINPUT,
				  "%s: resilience.horizon: %.3g s over a system MTBF of %.3g s is %.3g failures to simulate "
				  "(%d trials x %d intervals; the limit is %.0e): shorten the horizon, lower "
				  "resilience.trials, or raise the MTBF",
				  r->horizon_at, r->horizon, sim->sys_mtbf, events, r->trials, runs, (double)MAX_FAILURES);
	hs_res_out probe;
	hs_resilience_run(r, &sim->job, 1.0, &probe); /* for the stall of one checkpoint */
	sim->young = hs_resilience_young(probe.stall, sim->sys_mtbf);
	sim->daly = hs_resilience_daly(probe.stall, sim->sys_mtbf);
	int n = r->nsweep ? r->nsweep : 1;
	sim->res = hs_xcalloc((size_t)n + 1, sizeof *sim->res);
	for (int i = 0; i < n; i++)
		hs_resilience_run(r, &sim->job, r->nsweep ? r->sweep[i] : r->interval, &sim->res[i]);
	if (isfinite(sim->daly))
		hs_resilience_run(r, &sim->job, sim->daly, &sim->res[n]);
	sim->nres = n + (isfinite(sim->daly) ? 1 : 0);
	return 0;
}

int hs_simulate(const char *path, const struct hs_strlist *sets, int symmetry, hs_profile_cache *cache,
		hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	hs_ydoc *doc = hs_yaml_load_file_set(path, sets ? sets->v : NULL, sets ? sets->n : 0, err);
	return doc ? hs_simulate_doc(doc, path, symmetry, cache, out, err) : -1;
}

/* The analytical step (milliseconds to compute) estimates how long a flow run lasts, which sizes its
 * link-utilisation bins. */
static int estimate_horizon(const hs_scenario *s, const hs_build *b, hs_profile_cache *cache, double *horizon_s,
			    hs_err *err)
{
	*horizon_s = 0;
	if (s->sim.fidelity != HS_FID_FLOW)
		return 0;
	hs_simopts o = s->sim;
	o.fidelity = HS_FID_ANALYTICAL;
	hs_result est;
	if (hs_exec_step(&s->wl, &o, b, cache, 0, &est, err))
		return -1;
	*horizon_s = est.step_time_s * est.steps;
	hs_result_free(&est);
	return 0;
}

/* The cluster's device types with their profiles' provenance (the executor loaded the profiles already: the
 * cache hands them back). */
static int sim_devices(hs_sim *out, hs_profile_cache *cache, hs_err *err)
{
	const hs_cluster *c = out->s->cluster;
	hs_profile_cache *own = cache ? NULL : hs_profile_cache_create();
	int rc = 0;
	for (int i = 0; i < hs_cluster_ngroups(c) && !rc; i++) {
		const hs_node_group *g = hs_cluster_group(c, i);
		int k = 0;
		while (k < out->ndev && strcmp(out->dev[k].name, g->gpu.name) != 0)
			k++;
		if (k == out->ndev) {
			if (k == HS_SIM_MAXDEV)
				continue;
			const hs_profile *p = hs_profile_cache_get(cache ? cache : own, g->gpu.profile, err);
			if (!p) {
				rc = -1;
				break;
			}
			hs_sim_device *d = &out->dev[out->ndev++];
			snprintf(d->name, sizeof d->name, "%s", g->gpu.name);
			snprintf(d->profile, sizeof d->profile, "%s", g->gpu.profile);
			snprintf(d->source, sizeof d->source, "%s", hs_profile_provenance(p));
			d->attn_rule = out->s->train.materialized_attention ? 0 : hs_profile_attn_rule(p);
		}
		out->dev[k].count += g->nodes * g->gpus_per_node;
	}
	if (own)
		hs_profile_cache_free(own);
	return rc;
}

/* closed_form below: these bits (the closed-form step; in-layer collectives kept for a trace) */
enum { SIM_CLOSED = 1, SIM_RECORD_INLAYER = 2, SIM_LINKS = 4 /* per-link bytes at analytical fidelity */,
       SIM_ITEMS = 8 /* with SIM_CLOSED: planned as schedule items where the step allows (simulate_scn) */ };

/* The step of a planned scenario (out->s, out->b), its devices and cost; closed_form: SIM_* bits. */
static int run_planned(hs_sim *out, hs_profile_cache *cache, hs_progress_fn progress, void *progress_ctx,
		       int closed_form, hs_err *err)
{
	const hs_scenario *s = out->s;
	double horizon_s;
	hs_simopts o = s->sim;
	o.progress = progress;
	o.progress_ctx = progress_ctx;
	o.closed_form = (closed_form & SIM_CLOSED) != 0;
	o.record_inlayer = (closed_form & SIM_RECORD_INLAYER) != 0;
	o.record_links = (closed_form & SIM_LINKS) != 0;
	int rc = estimate_horizon(s, &out->b, cache, &horizon_s, err);
	if (!rc)
		rc = hs_exec_step(&s->wl, &o, &out->b, cache, horizon_s, &out->r, err);
	if (rc == HS_EXEC_NEEDS_GRAPH) { /* the items' walk left it to the event run's order: plan the graph */
		hs_build_free(&out->b);
		rc = hs_plan_step(&s->wl, 1, &out->b, err);
		if (!rc)
			rc = hs_exec_step(&s->wl, &o, &out->b, cache, horizon_s, &out->r, err);
	}
	if (rc || sim_devices(out, cache, err)) {
		hs_sim_free(out);
		return -1;
	}
	hs_cost_compute(s, &out->b, &out->r, &out->cost);
	return 0;
}

int hs_simulate_planned(hs_sim *out, hs_profile_cache *cache, hs_progress_fn progress, void *progress_ctx,
			hs_err *err)
{
	return run_planned(out, cache, progress, progress_ctx, 0, err);
}

int hs_simulate_doc(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache, hs_sim *out,
		    hs_err *err)
{
	return hs_simulate_doc_progress(doc, path, symmetry, cache, NULL, NULL, out, err);
}

static int simulate_doc(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache, hs_progress_fn progress,
			void *progress_ctx, int closed_form, hs_sim *out, hs_err *err);

int hs_simulate_doc_progress(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			     hs_progress_fn progress, void *progress_ctx, hs_sim *out, hs_err *err)
{
	return simulate_doc(doc, path, symmetry, cache, progress, progress_ctx, 0, out, err);
}

int hs_simulate_doc_traced(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			   hs_progress_fn progress, void *progress_ctx, hs_sim *out, hs_err *err)
{
	return simulate_doc(doc, path, symmetry, cache, progress, progress_ctx, SIM_RECORD_INLAYER, out, err);
}

static int simulate_scn(hs_scenario *scn, const char *path, int symmetry, hs_profile_cache *cache,
			hs_progress_fn progress, void *progress_ctx, int closed_form, hs_sim *out, hs_err *err);

int hs_simulate_doc_with(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			 hs_progress_fn progress, void *progress_ctx, int keep, hs_sim *out, hs_err *err)
{
	int bits = (keep & HS_SIM_KEEP_INLAYER ? SIM_RECORD_INLAYER : 0) | (keep & HS_SIM_KEEP_LINKS ? SIM_LINKS : 0);
	return simulate_doc(doc, path, symmetry, cache, progress, progress_ctx, bits, out, err);
}

int hs_simulate_scenario(hs_scenario *s, const char *path, int symmetry, hs_profile_cache *cache, int closed_form,
			 hs_sim *out, hs_err *err)
{
	int bits = closed_form == HS_SIM_CLOSED_ITEMS ? SIM_CLOSED | SIM_ITEMS : closed_form ? SIM_CLOSED : 0;
	return simulate_scn(s, path, symmetry, cache, NULL, NULL, bits, out, err);
}

static int simulate_doc(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache, hs_progress_fn progress,
			void *progress_ctx, int closed_form, hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	hs_scenario *s = hs_scenario_from_doc(doc, path, err);
	return s ? simulate_scn(s, path, symmetry, cache, progress, progress_ctx, closed_form, out, err) : -1;
}

static int simulate_scn(hs_scenario *scn, const char *path, int symmetry, hs_profile_cache *cache,
			hs_progress_fn progress, void *progress_ctx, int closed_form, hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->s = scn;
	const hs_scenario *s = out->s;
	if (symmetry < 0 || hs_variability_active(&s->var) || hs_scenario_routing_splits(s))
		symmetry = s->sim.symmetry; /* variability turns symmetry off in the scenario */
	else if (!symmetry)
		scn->sim.symmetry = 0; /* --no-symmetry: every replica and every transfer (the network's classes too) */
	hs_simopts o = s->sim;
	o.closed_form = (closed_form & SIM_CLOSED) != 0;
	o.record_inlayer = (closed_form & SIM_RECORD_INLAYER) != 0;
	o.record_links = (closed_form & SIM_LINKS) != 0;
	/* items only where the walk times the step (one rep per stage: symmetry on, as the build requires) */
	int items = (closed_form & SIM_ITEMS) && symmetry && hs_exec_items_ok(&s->wl, &o);
	/* the schedules kept in the thread's cache, with its op-range costs (and like them off with the build's
	 * reuse: HETSIM_BUILD_MEMO=0) */
	hs_sched_cache *sc = items && cache && hs_build_memo_on() ? hs_range_cache_sched(hs_range_cache_of(cache)) : NULL;
	if ((items ? hs_plan_step_items(&s->wl, symmetry, sc, &out->b, err) : hs_plan_step(&s->wl, symmetry, &out->b, err))) {
		hs_err_prefix(err, "%s: ", path);
		hs_scenario_free(out->s);
		out->s = NULL;
		return -1;
	}
	if (run_planned(out, cache, progress, progress_ctx, closed_form, err))
		return -1;
	if (s->diloco.enabled)
		hs_diloco_outer(s, &out->b, &out->r, &out->diloco);
	if (s->res.enabled && resilience(out, err)) {
		hs_sim_free(out);
		return -1;
	}
	return 0;
}

void hs_sim_free(hs_sim *sim)
{
	if (!sim)
		return;
	hs_result_free(&sim->r);
	free(sim->res);
	hs_build_free(&sim->b);
	hs_scenario_free(sim->s);
	memset(sim, 0, sizeof *sim);
}
