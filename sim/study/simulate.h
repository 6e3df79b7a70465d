/* One training scenario from file to result: load and check the scenario, build the step's task graph, run
 * it, and check memory. The path every command that simulates a training step takes (run, validate, sweep). */
#ifndef HS_SIMULATE_H
#define HS_SIMULATE_H

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"

typedef struct hs_sim {
	hs_scenario *s;
	hs_build b;
	hs_result r;
	/* with a `resilience:` section: goodput at each checkpoint interval asked for */
	hs_res_job job;
	hs_res_out *res;
	int nres;
	double sys_mtbf, young, daly; /* seconds */
} hs_sim;

/* symmetry < 0: as the scenario says (simulation.symmetry); 0 or 1 forces it. Fails with HS_EINFEASIBLE when a
 * stage does not fit in its devices' memory. On failure nothing needs freeing. */
int hs_simulate(const char *path, const struct hs_strlist *sets, int symmetry, hs_sim *out, hs_err *err);
void hs_sim_free(hs_sim *sim);
/* The same, with device profiles from `cache` (one per thread; see calib/profile_cache.h). */
int hs_simulate_cached(const char *path, const struct hs_strlist *sets, int symmetry, hs_profile_cache *cache,
		       hs_sim *out, hs_err *err);
/* From a parsed document, which the simulation takes over (freed with it, also on failure); `path` names it. */
int hs_simulate_doc(hs_ydoc *doc, const char *path, const struct hs_strlist *sets, int symmetry,
		    hs_profile_cache *cache, hs_sim *out, hs_err *err);

#endif
