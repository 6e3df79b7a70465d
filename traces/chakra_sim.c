/* `hetsim run --workload chakra:PREFIX`: a scenario's cluster and simulation settings, a trace's work
 * (traces/chakra.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "traces/chakra.h"

int hs_chakra_simulate(hs_ydoc *doc, const char *path, const char *prefix, hs_sim *out, hs_chakra_info *info,
		       hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->s = hs_scenario_from_doc(doc, path, err);
	if (!out->s)
		return -1;
	hs_scenario *s = out->s;
	if (s->diloco.enabled || s->res.enabled) {
		hs_err_set(err, HS_EINPUT, "%s: %s: not with a traced workload (--workload chakra:...): the trace "
					   "has no model to checkpoint or outer step to take (expected a scenario without it)",
			   path, s->diloco.enabled ? "diloco" : "resilience");
		hs_scenario_free(s);
		out->s = NULL;
		return -1;
	}
	if (hs_chakra_read(prefix, hs_cluster_ngpus(s->cluster), &out->b.graph, info, err)) {
		hs_scenario_free(s);
		out->s = NULL;
		return -1;
	}
	/* The trace's ranks as a flat layout: rank r is data-parallel replica r of one stage, which
	 * hs_build_rank places on device r, and every rank is its own rep. The scenario's own arrays
	 * (stage_layers, dp_mb, ...) stay where they are, for its free; nothing below reads them. */
	hs_parallel *p = &s->par;
	p->tp = p->cp = p->ep = p->pp = p->vstages = p->micro_batches = p->sites = 1;
	p->dp = info->ranks;
	p->zero = 0;
	out->b.pp = 1;
	out->b.stages = hs_xcalloc(1, sizeof *out->b.stages);
	if (hs_simulate_planned(out, NULL, NULL, NULL, err))
		return -1;
	out->r.tokens_per_s = 0; /* the scenario's batch is not the trace's */
	return 0;
}
