/* hs_partition_resolve: how a step's work is split over pipeline stages and data-parallel replicas, decided
 * before the graph is built (models/build.h builds from the result). As given (parallelism.stage_layers,
 * dp_microbatches), uniform when absent, and balanced for `auto` by timing the layers on each stage's devices
 * with the op-time model (sim/exec/layer_time.h), so the balance uses exactly the times the step will charge. */
#ifndef HS_PARTITION_H
#define HS_PARTITION_H

#include "models/build.h"
#include "models/workload.h"
#include "sim/base/err.h"

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
int hs_partition_resolve(const hs_workload *w, hs_partition *out, hs_err *err);

#endif
