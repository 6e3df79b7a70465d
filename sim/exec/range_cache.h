/* hs_range_cache: the cost of op ranges (hs_ops_time) kept across the steps that one thread runs, so that a
 * sweep's points, which repeat the same layers on the same devices and groups under other pipeline depths,
 * schedules and ZeRO stages, time each distinct range once (issue 22: reuse op times per shape and device).
 *
 * A range's cost is a function of what hs_ops_time reads, and that is the key: the ops themselves (their bytes,
 * compared in full on a hit, so a hash collision costs a recomputation, never a wrong cost), the profile (the
 * thread's profile cache holds it, so the pointer names it), the device type's fields, the host's issue costs,
 * the collective algorithm, and the size and summary (sim/coll/coll_impl.h) of each group that the range's
 * collectives use. Environments that time a collective otherwise (a packet model's override, a group not
 * summarised) are timed directly, every time. A cache lives in the thread's profile cache
 * (hs_profile_cache_aux) and holds at most HS_RANGE_CACHE_OPS distinct ops (a kept list holds the ops it timed
 * and which later ops repeat them, range_cache.c); past that it stops adding. */
#ifndef HS_RANGE_CACHE_H
#define HS_RANGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "calib/profile_cache.h"
#include "models/sched_cache.h"
#include "sim/exec/layer_time.h"

#define HS_RANGE_CACHE_OPS (1u << 18) /* ~40 MB of ops per thread at most */

typedef struct hs_range_cache hs_range_cache;

/* The cache kept in profile cache pc (made on first use). */
hs_range_cache *hs_range_cache_of(hs_profile_cache *pc);

/* ops[0..n-1] on environment e, added to a zeroed *c (no rec), and *netcomm, the number of its collectives over
 * groups of more than one rank: from the cache where it has them, else timed (and kept where the environment
 * can be keyed). fp: the ops' fingerprint (hs_op_range.fp: hashing every op of every range costs more than the
 * reuse saves); NULL: timed, not kept. groups, with fp: hs_ops_groups of the ops (hs_op_range.groups), the groups
 * whose summaries the key holds. rc may be NULL: timed. Returns 1 when it came from the cache. */
int hs_range_cache_cost(hs_range_cache *rc, const hs_op_env *e, const hs_op *ops, size_t n, const uint64_t *fp,
			unsigned groups, hs_ops_cost *c, int *netcomm);

/* Kernels' times kept across the thread's steps (hs_op_env.kmemo), and the key of a device and memory-factor
 * setting there: a copy of *dev and mem_factors kept in rc, the same pointer for equal bytes, so that the memo
 * never names a device type a step has freed (a sweep whose axes touch the cluster makes one per point).
 * NULL where rc is, or where rc holds HS_RANGE_CACHE_DEVS keys already (the kernels are then the step's). */
#define HS_RANGE_CACHE_DEVS 64
struct hs_op_memo *hs_range_cache_kernels(hs_range_cache *rc);
const void *hs_range_cache_kernel_key(hs_range_cache *rc, const hs_device_type *dev, int mem_factors);

/* The schedules kept beside it (models/sched_cache.h), made on first use; NULL where rc is. */
hs_sched_cache *hs_range_cache_sched(hs_range_cache *rc);
/* The walk programs of those schedules (pipe_prog.h), made on first use; NULL where rc is. */
struct hs_pipe_progs *hs_range_cache_progs(hs_range_cache *rc);
/* hs_coll_grp_time(g, op, algo, bytes, NULL), the closed-form time of a communication task (comm_closed.c), from
 * the cache where it has it: a sweep's points repeat the same gradient reductions, parameter gathers and
 * pipeline sends over the same groups, and each time is NCCL's tuner run again (2.6% of a sweep point,
 * bench_sweep 2026-12). Keyed by the summary's bytes (hs_coll_grp_init zeroes it first, padding included),
 * the operation, the algorithm and the size; a summary that names a fitted fabric profile (g->fab, a pointer
 * into its cluster) is timed every time. rc may be NULL: timed. At most HS_RANGE_CACHE_COLL kept. */
#define HS_RANGE_CACHE_COLL (1u << 14) /* ~7 MB per thread at most */
double hs_range_cache_coll_time(hs_range_cache *rc, const struct hs_coll_grp *g, int op, int algo, double bytes);

/* hs_coll_grp_init(g, c, ranks, n): the summary of a group of the cluster that cluster_id names
 * (hs_workload.cluster_id), from the cache where it has it. A summary is a function of the cluster and the
 * ordered ranks alone, and a sweep's points summarise the same groups of its one cluster again and again (6% of
 * a sweep point, bench_sweep 2026-12). Keyed by the id and the ranks, compared in full; cluster_id 0 or rc NULL:
 * summarised every time. At most HS_RANGE_CACHE_GRP kept. */
#define HS_RANGE_CACHE_GRP (1u << 12)
int hs_range_cache_grp_init(hs_range_cache *rc, uint64_t cluster_id, struct hs_coll_grp *g, const hs_cluster *c,
			    const int *ranks, int n, hs_err *err);

/* Hits and misses so far (for tests and the bench). */
void hs_range_cache_stats(const hs_range_cache *rc, size_t *hits, size_t *misses);

#endif
