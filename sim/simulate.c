#include "sim/simulate.h"

#include <string.h>

/* Every stage's ranks must fit on their device (capacity minus the reserve). */
static int check_memory(const hs_scenario *s, const hs_result *r, hs_err *err)
{
	for (int i = 0; i < r->nreps; i++) {
		const hs_rep_result *q = &r->reps[i];
		if (q->mem_bytes > q->mem_capacity) {
			const double G = 1073741824.0;
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

int hs_simulate(const char *path, const struct hs_strlist *sets, int symmetry, hs_sim *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->s = hs_scenario_load(path, sets, err);
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
	if (hs_exec_step(out->s, &out->b, &out->r, err) || check_memory(out->s, &out->r, err)) {
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
	hs_build_free(&sim->b);
	hs_scenario_free(sim->s);
	memset(sim, 0, sizeof *sim);
}
