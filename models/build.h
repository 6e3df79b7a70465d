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
/* The group of kind `k` that contains data-parallel replica `d` of pipeline stage `stage` (its TP and CP index
 * 0): writes its global devices to ranks[] (room for the group's size) and returns the size. EP groups are ep
 * consecutive data-parallel replicas (Megatron's expert groups). */
int hs_build_group(const hs_parallel *p, enum hs_group k, int d, int stage, int *ranks);
/* The layer split and options the scenario's step runs with (tp, cp, ep, sequence parallelism, micro-batch,
 * sequence, precision, recompute, attention kernel). */
void hs_build_layer_cfg(const hs_scenario *s, hs_layer_cfg *out);

#endif
