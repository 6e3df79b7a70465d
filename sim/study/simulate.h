/* One training scenario from file to result: load and check the scenario, plan the step (partition, task
 * graph, memory: sim/exec/plan.h), run it, and derive what the outputs print (cost, DiLoCo, resilience). The
 * path every command that simulates a training step takes (run, validate, sweep). */
#ifndef HS_SIMULATE_H
#define HS_SIMULATE_H

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"
#include "sim/study/cost.h"

/* One device type of the cluster and where its profile's numbers came from (hs_profile_provenance), so that
 * every result can say whether an answer was measured or scaled from another GPU's datasheet. */
#define HS_SIM_MAXDEV 8
typedef struct hs_sim_device {
	char name[64];
	int count;
	char profile[64];
	char source[320];
	int attn_rule; /* hs_profile_attn_rule of its profile when the workload times flash attention, else 0 */
} hs_sim_device;

typedef struct hs_sim {
	hs_scenario *s;
	hs_build b;
	hs_result r;
	/* computed once here, so that every output format prints the same figures */
	hs_cost cost;
	hs_diloco_out diloco;  /* with a `diloco:` section */
	/* with a `resilience:` section: goodput at each checkpoint interval asked for */
	hs_res_job job;
	hs_res_out *res;
	int nres;
	double sys_mtbf, young, daly; /* seconds */
	hs_sim_device dev[HS_SIM_MAXDEV]; /* the cluster's device types, in node-group order (the first 8) */
	int ndev;
} hs_sim;

/* Load the scenario at `path`, apply the `--set` overrides, plan the step and run it. symmetry < 0: as the
 * scenario says (simulation.symmetry); 0 or 1 forces it. Fails with HS_EINFEASIBLE, before simulating, when a
 * stage does not fit in its devices' memory. Device profiles come from `cache` (NULL: loaded for this call;
 * one cache per thread, see calib/profile_cache.h). On failure nothing needs freeing. */
int hs_simulate(const char *path, const struct hs_strlist *sets, int symmetry, hs_profile_cache *cache,
		hs_sim *out, hs_err *err);
/* The same from a document already parsed (overrides applied), which the simulation takes over (freed with it,
 * also on failure); `path` names it. */
int hs_simulate_doc(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache, hs_sim *out,
		    hs_err *err);
/* The same with a progress hook for a flow-fidelity run (hs_simopts.progress; NULL: none). */
int hs_simulate_doc_progress(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			     hs_progress_fn progress, void *progress_ctx, hs_sim *out, hs_err *err);
/* The same, keeping where each collective inside a compute task ran (hs_result.inl), for a trace. */
int hs_simulate_doc_traced(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			   hs_progress_fn progress, void *progress_ctx, hs_sim *out, hs_err *err);
/* The same, keeping what `keep` names: HS_SIM_KEEP_INLAYER (as _traced) and HS_SIM_KEEP_LINKS, per-link bytes
 * at analytical fidelity (hs_simopts.record_links; they route every distinct collective of the step on the
 * link graph, seconds at 16k GPUs, so only for outputs that show links: --detail, --hdf5, --trace). */
enum { HS_SIM_KEEP_INLAYER = 1, HS_SIM_KEEP_LINKS = 2 };
int hs_simulate_doc_with(hs_ydoc *doc, const char *path, int symmetry, hs_profile_cache *cache,
			 hs_progress_fn progress, void *progress_ctx, int keep, hs_sim *out, hs_err *err);
/* The same from a scenario already loaded (hs_scenario_from_doc), which the simulation takes over (freed with
 * it, also on failure), with the step timed in closed form where its pattern allows (closed_form
 * HS_SIM_CLOSED: hs_simopts.closed_form on the task graph; HS_SIM_CLOSED_ITEMS: from the schedule's items
 * without a graph where the step allows it, sim/exec/pipe_step.c, and no timeline in the result; the result's
 * closed_form says whether the step was timed in closed form). What sweeps take: they look at the resolved
 * scenario before simulating it. */
enum { HS_SIM_EVENT = 0, HS_SIM_CLOSED = 1, HS_SIM_CLOSED_ITEMS = 2 };
int hs_simulate_scenario(hs_scenario *s, const char *path, int symmetry, hs_profile_cache *cache, int closed_form,
			 hs_sim *out, hs_err *err);
/* Run a step already planned: out->s loaded and out->b built (a traced workload's graph, traces/chakra.h),
 * then the devices and the cost; no DiLoCo, no resilience. Frees *out on failure. */
int hs_simulate_planned(hs_sim *out, hs_profile_cache *cache, hs_progress_fn progress, void *progress_ctx,
			hs_err *err);
void hs_sim_free(hs_sim *sim);

#endif
