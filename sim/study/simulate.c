#include "sim/study/simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

/* Every stage's ranks must fit on their device (capacity minus the reserve). */
static int check_memory(const hs_scenario *s, const hs_result *r, hs_err *err)
{
	for (int i = 0; i < r->nreps; i++) {
		const hs_rep_result *q = &r->reps[i];
		if (q->mem_bytes > q->mem_capacity) {
			const double G = HS_GiB;
			return hs_err_set(err, HS_EINFEASIBLE,
					  "%s: does not fit in memory: stage %d needs %.1f GiB per GPU but %s has %.1f "
					  "GiB usable (capacity minus a reserve of %.1f GiB); try more pipeline or tensor "
					  "parallelism, recomputation, or ZeRO",
					  s->path, q->stage, q->mem_bytes / G, q->device, q->mem_capacity / G,
					  s->par.memory_reserve / G);
		}
	}
	return 0;
}

/* Goodput over the horizon at each checkpoint interval (and at Daly's), from the simulated step. */
static void resilience(hs_sim *sim)
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
}

int hs_simulate(const char *path, const struct hs_strlist *sets, int symmetry, hs_sim *out, hs_err *err)
{
	return hs_simulate_cached(path, sets, symmetry, NULL, out, err);
}

int hs_simulate_cached(const char *path, const struct hs_strlist *sets, int symmetry, hs_profile_cache *cache,
		       hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	hs_ydoc *doc = hs_yaml_load_file(path, err);
	if (!doc)
		return -1;
	return hs_simulate_doc(doc, path, sets, symmetry, cache, out, err);
}

int hs_simulate_doc(hs_ydoc *doc, const char *path, const struct hs_strlist *sets, int symmetry,
		    hs_profile_cache *cache, hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; sets && i < sets->n; i++)
		if (hs_yaml_set(doc, sets->v[i], err)) {
			hs_yaml_free(doc);
			return -1;
		}
	out->s = hs_scenario_from_doc(doc, path, err);
	if (!out->s)
		return -1;
	if (symmetry < 0 || hs_variability_active(&out->s->var))
		symmetry = out->s->sim.symmetry; /* variability turns symmetry off in the scenario */
	if (hs_build_step(out->s, symmetry, &out->b, err)) {
		hs_err_prefix(err, "%s: ", path);
		hs_scenario_free(out->s);
		out->s = NULL;
		return -1;
	}
	if (out->s->sim.fidelity == HS_FID_FLOW) {
		/* the analytical step (milliseconds to compute) sizes the flow run's link-utilisation bins */
		hs_result est;
		out->s->sim.fidelity = HS_FID_ANALYTICAL;
		int rc = hs_exec_step_cached(out->s, &out->b, cache, &est, err);
		out->s->sim.fidelity = HS_FID_FLOW;
		if (rc) {
			hs_sim_free(out);
			return -1;
		}
		out->s->sim.horizon_hint_s = est.step_time_s * est.steps;
		hs_result_free(&est);
	}
	if (hs_exec_step_cached(out->s, &out->b, cache, &out->r, err) || check_memory(out->s, &out->r, err)) {
		hs_sim_free(out);
		return -1;
	}
	if (out->s->res.enabled)
		resilience(out);
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
