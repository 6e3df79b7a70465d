/* hs_moe_routing: MoE expert load drawn per step, per micro-batch, per layer and per expert-parallel group,
 * instead of one fixed busiest expert (parallelism.expert_imbalance). docs/models.md, "MoE routing per step".
 *
 * The model: a layer's token-expert assignments (tokens x top_k over the EP group) fall on the experts with
 * shares p ~ Dirichlet(alpha, ..., alpha), alpha = 1 / skew, drawn afresh for each (step, micro-batch, layer,
 * EP group); the counts are multinomial(N, p) (or N p with `sampling: expected`). For E experts an expert's
 * share has mean 1/E and squared coefficient of variation (E - 1) / (E alpha + 1), about `skew` when
 * E alpha >> 1, so skew is the variance of an expert's load relative to its mean; skew 0 is uniform routing
 * and no draw at all. Rank r of the ep ranks holds experts [r E/ep, (r+1) E/ep) and runs their tokens
 * (dropless, as Megatron-core's grouped GEMM); the layer's combine all-to-all waits for the busiest rank, so
 * the layer time of every rank of the group follows the busiest rank's load over the uniform share. */
#ifndef HS_MOE_ROUTING_H
#define HS_MOE_ROUTING_H

#include "sim/engine/rng.h"

typedef struct hs_moe_routing {
	double skew;     /* 1 / the Dirichlet concentration; 0: uniform, nothing drawn */
	int multinomial; /* counts multinomial given the shares (1, the default), or the expected counts (0) */
} hs_moe_routing;

/* One layer's draw for one EP group: `tokens` assignments over `experts` experts held by `ep` ranks.
 * Returns the busiest rank's tokens over the uniform share tokens / ep (>= 1 unless rounding); *expert gets
 * the busiest expert's over tokens / experts and *rank the busiest rank (either may be NULL). `scratch`:
 * `experts` doubles. With skew 0: 1, expert 1, rank 0, nothing drawn. */
double hs_moe_routing_draw(hs_rng *r, const hs_moe_routing *rt, int experts, int ep, double tokens,
			   double *scratch, double *expert, int *rank);

#endif
