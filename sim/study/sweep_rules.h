/* hs_sweep_rules: the parallel layouts a sweep leaves out because Megatron-LM refuses to start them, although
 * hetsim could simulate them. A sweep over degrees (tp x pp x virtual stages ...) produces such points; they are
 * rows with status `invalid` and the rule that filters them, not results no one could reproduce. The layouts
 * hetsim itself cannot run (a product that is not the GPU count, layers that do not divide, a batch that does not
 * split) are refused by the scenario loader already and stay `infeasible`. docs/outputs.md lists the rules. */
#ifndef HS_SWEEP_RULES_H
#define HS_SWEEP_RULES_H

#include <stddef.h>

#include "sim/study/scenario.h"

/* 0 when s's resolved layout passes every rule; 1 with the rule's message (and its source) in why. */
int hs_sweep_rules_check(const hs_scenario *s, char *why, size_t n);

#endif
