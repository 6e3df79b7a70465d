/* Parallel strategy -> task graph: turns a scenario (model, training settings, parallelism, schedule) into
 * the per-rep programs of one training step (models/graph.h), and reports the per-stage facts the metrics
 * need (parameters held, memory, FLOPs). */
#ifndef HS_BUILD_H
#define HS_BUILD_H

#include "config/scenario.h"
#include "models/graph.h"
#include "models/memory.h"

typedef struct hs_stage_info {
	int layers;          /* transformer layers on this stage (all chunks) */
	double params;       /* parameters held by one rank of this stage (before ZeRO sharding) */
	double grad_bytes;   /* gradient bytes one rank reduces across data parallelism */
	hs_mem mem;          /* memory of one rank of this stage */
	int in_flight;       /* micro-batches (chunks) whose activations are live at peak */
} hs_stage_info;

typedef struct hs_build {
	hs_graph graph;
	hs_stage_info *stages; /* [pp] */
	int pp;
	double model_flops;    /* per step, whole cluster: 6 P T + attention (no recompute) */
} hs_build;

/* Build the graph for one step. `symmetry` = 1: one rep per stage; 0: one rep per (stage, dp replica). */
int hs_build_step(const hs_scenario *s, int symmetry, hs_build *out, hs_err *err);
void hs_build_free(hs_build *b);
/* Megatron's rank order (TP innermost, then CP, then DP, then PP): the global device of a coordinate. */
int hs_build_rank(const hs_parallel *p, int t, int c, int d, int stage);

#endif
