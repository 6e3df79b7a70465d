/* hs_plan_step: the plan of one training step, decided before anything is simulated. The split over stages
 * and replicas (sim/exec/partition.h), the task graph built from it (models/build.h), and memory feasibility:
 * every rep must fit in the memory of its device, so an infeasible configuration fails at once (exit 3) at
 * every fidelity, without running the step. */
#ifndef HS_PLAN_H
#define HS_PLAN_H

#include "models/build.h"
#include "models/workload.h"
#include "sim/base/err.h"

/* Resolve the partition, check memory and build the graph (symmetry as hs_build_step takes it; the memory check
 * runs before any task is built, so a point that does not fit costs no graph). Returns -1
 * with err: HS_EINFEASIBLE when a stage does not fit (with the numbers), or what partitioning or building
 * returned. On failure *out needs no freeing. */
int hs_plan_step(const hs_workload *w, int symmetry, hs_build *out, hs_err *err);
/* The same, as schedule items where the step allows it (hs_build_step_items: out->pipe set, no task), for a
 * step timed by the item walk (hs_exec_items_ok); else the task graph, as hs_plan_step. */
int hs_plan_step_items(const hs_workload *w, int symmetry, hs_sched_cache *sc, hs_build *out, hs_err *err);

/* Every rep of b fits on every device it stands for (capacity minus parallelism.memory_reserve), whatever
 * device paces its speed; HS_EINFEASIBLE otherwise, naming the device (type and global index) and its numbers. */
int hs_plan_check_memory(const hs_workload *w, const hs_build *b, hs_err *err);

/* Does the graph simulate one rep per stage for all data-parallel replicas (no rendezvous between replicas)? */
int hs_plan_symmetric(const hs_workload *w, const hs_graph *g);

/* Is device a slower than b in precision dt (lower peak, then lower HBM bandwidth)? b NULL: yes. The one rule
 * by which a rep, and a stage being balanced, run at the pace of their slowest device. */
int hs_plan_slower(const hs_device_type *a, const hs_device_type *b, enum hs_dtype dt);

/* The device a rep runs at the pace of: the slowest among the ranks it stands for (lowest peak in the training
 * precision, then lowest HBM bandwidth), which bounds its synchronous work; *ngroup gets its node group. */
const hs_device_type *hs_plan_rep_device(const hs_workload *w, const hs_rep *rp, int symmetry, int *ngroup);

/* The device with the least memory among the ranks a rep stands for (all replicas of its stage with symmetry);
 * *gpu gets its global index. The one a stage's memory must fit. */
const hs_device_type *hs_plan_rep_smallest(const hs_workload *w, const hs_rep *rp, int symmetry, int *gpu);

#endif
