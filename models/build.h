/* Parallel strategy -> task graph: turns a scenario (model, training settings, parallelism, schedule) into
 * the per-rep programs of one training step (models/graph.h), and reports the per-stage facts the metrics
 * need (parameters held, memory, FLOPs). */
#ifndef HS_BUILD_H
#define HS_BUILD_H

#include "sim/study/scenario.h"
#include "models/graph.h"
#include "models/memory.h"

typedef struct hs_stage_info {
	int layers;          /* transformer layers on this stage (all chunks) */
	double params;       /* parameters held by one rank of this stage (before ZeRO sharding) */
	double grad_bytes;   /* gradient bytes one rank reduces across data parallelism */
	hs_mem mem;          /* memory of one rank of this stage */
	int in_flight;       /* micro-batches (chunks) whose activations are live at peak */
} hs_stage_info;

/* How the work is split over stages and replicas: the layers of each pipeline stage and the micro-batches of
 * each data-parallel replica, as given (parallelism.stage_layers, dp_microbatches), uniform, or balanced by
 * device speed and memory (`auto`). */
typedef struct hs_partition {
	int pp, dp;
	int *stage_layers;    /* [pp] transformer layers per stage (all its chunks) */
	int *dp_mb;           /* [dp] micro-batches per replica */
	int mb_max;           /* the most micro-batches of any replica */
	int uneven_dp;        /* replicas run different numbers of micro-batches (breaks symmetry) */
	int stages_auto, dp_auto;
	/* estimates behind `auto` (0 when nothing was timed): forward + backward seconds of one micro-batch */
	double *stage_mb_s;   /* [pp] on the stage's slowest device, with the stage's layers */
	double *replica_mb_s; /* [dp] the slowest stage of each replica */
} hs_partition;

typedef struct hs_build {
	hs_graph graph;
	hs_stage_info *stages; /* [pp] */
	int pp;
	double model_flops;    /* per step, whole cluster: 6 P T + attention (no recompute) */
	hs_partition part;
} hs_build;

/* Build the graph for one step. `symmetry` = 1: one rep per stage; 0: one rep per (stage, dp replica).
 * Uneven data-parallel load turns symmetry off. */
int hs_build_step(const hs_scenario *s, int symmetry, hs_build *out, hs_err *err);
void hs_build_free(hs_build *b);

/* Resolve the split: stage_layers and dp_microbatches as given, uniform when absent, and for `auto`:
 * - stages: minimise the largest stage time (forward + backward of one micro-batch: the stage's layers, plus
 *   the embedding on the first stage and the output head on the last, timed with sim/exec/layer_time.h on the
 *   stage's slowest device) such that every stage fits in its devices' memory; among the splits with that
 *   bottleneck, the later stages take as many layers as they can (the first stage, which holds the most
 *   in-flight activations under 1F1B, the fewest). Exact: a greedy from the last stage decides whether a
 *   bottleneck T is feasible, and T is found by bisection.
 * - replicas: minimise max_d (m_d + pp - 1) t_d with sum m_d = global_batch / micro_batch and m_d >= 1, t_d
 *   the per-micro-batch time of replica d's slowest stage (proportional to speed, counting the pipeline fill).
 * HS_EINFEASIBLE when no split fits in memory (with the numbers); HS_EINPUT for a profile that cannot load. */
int hs_build_partition(const hs_scenario *s, hs_partition *out, hs_err *err);
void hs_partition_free(hs_partition *p);

/* Megatron's rank order (TP innermost, then CP, then DP, then PP): the global device of a coordinate. With
 * DiLoCo sites (p->sites > 1) the order is site-major: site k holds replicas [k dp/sites, (k+1) dp/sites) of
 * every stage on devices [k N/sites, (k+1) N/sites), in Megatron's order inside. */
int hs_build_rank(const hs_parallel *p, int t, int c, int d, int stage);
/* The group of kind `k` that contains data-parallel replica `d` of pipeline stage `stage` (its TP and CP index
 * 0): writes its global devices to ranks[] (room for the group's size) and returns the size. EP groups are ep
 * consecutive data-parallel replicas (Megatron's expert groups). With DiLoCo sites the DP group is the
 * replicas of d's site. */
int hs_build_group(const hs_parallel *p, enum hs_group k, int d, int stage, int *ranks);
/* Size of a data-parallel group: dp, or dp / sites with DiLoCo. */
int hs_build_dp_group_size(const hs_parallel *p);
/* The layer split and options the scenario's step runs with (tp, cp, ep, sequence parallelism, micro-batch,
 * sequence, precision, recompute, attention kernel). */
void hs_build_layer_cfg(const hs_scenario *s, hs_layer_cfg *out);

#endif
