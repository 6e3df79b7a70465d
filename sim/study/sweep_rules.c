/* The rules of sim/study/sweep_rules.h, one table entry each with the Megatron-LM check it mirrors. */
#include "sim/study/sweep_rules.h"

#include <stdio.h>

struct rule {
	const char *name;
	/* 1 when the layout breaks the rule; the message goes to why */
	int (*broken)(const hs_scenario *s, char *why, size_t n);
};

/* Virtual pipeline stages need a pipeline: megatron/training/arguments.py (validate_args) asserts
 * pipeline_model_parallel_size > 1 when num_layers_per_virtual_pipeline_stage (or
 * num_virtual_stages_per_pipeline_rank) is set with overlap_p2p_comm, and > 2 without it (older releases'
 * megatron/core/parallel_state.py, initialize_model_parallel, required > 2 always). hetsim's pipeline transfers
 * run on their own stream, overlapped, so the first form applies. */
static int virtual_needs_pipeline(const hs_scenario *s, char *why, size_t n)
{
	if (s->par.vstages <= 1 || s->par.pp > 1)
		return 0;
	snprintf(why, n, "megatron: virtual pipeline stages (%d) need pp > 1 (found pp = %d; Megatron-LM "
			 "validate_args)", s->par.vstages, s->par.pp);
	return 1;
}

static const struct rule rules[] = {
	{"virtual-needs-pipeline", virtual_needs_pipeline},
};

int hs_sweep_rules_check(const hs_scenario *s, char *why, size_t n)
{
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rules[i].broken(s, why, n))
			return 1;
	return 0;
}
