/* Parallel strategy -> task graph: turns a scenario (model, training settings, parallelism, schedule) into
 * the per-rep programs of one training step (models/graph.h), and reports the per-stage facts the metrics
 * need (parameters held, memory, FLOPs). */
#ifndef HS_BUILD_H
#define HS_BUILD_H

#include "models/graph.h"
#include "models/memory.h"
#include "models/sched_cache.h"
#include "models/schedule.h"
#include "models/workload.h"

/* ZeRO-3 gathers parameters one layer at a time (FSDP wrapping every transformer block), but at most this many
 * units per chunk: more would add tasks without changing how much of the gather hides. The memory estimate
 * (a stage's live gathered units) counts them the same way. */
#define HS_BUILD_MAX_GATHER_UNITS 16

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
	int v;                /* model chunks per stage (virtual stages) */
	int *chunk_layers;    /* [pp * v] layers of each model chunk, global chunk g = k pp + s in model order */
	int *dp_mb;           /* [dp] micro-batches per replica */
	int mb_max;           /* the most micro-batches of any replica */
	int uneven_dp;        /* replicas run different numbers of micro-batches (breaks symmetry) */
	int stages_auto, dp_auto;
	/* estimates behind `auto` (0 when nothing was timed): forward + backward seconds of one micro-batch */
	double *stage_mb_s;   /* [pp] on the stage's slowest device, with the stage's layers */
	double *replica_mb_s; /* [dp] the slowest stage of each replica */
} hs_partition;

/* One op list of a (stage, chunk) in the graph (forward, backward, or its input or weight half), as the build
 * made it: where it is, the first op of the earliest list with the same ops (a chunk on a middle stage runs the
 * same kinds of layers as the chunk before it, neither holding the embedding nor the head; `first` itself when
 * none is earlier), and a fingerprint of its ops, made from the pieces it was assembled from (each kind of
 * layer's list hashed once), so that a cache of range costs (sim/exec/range_cache.h) need not hash every op.
 * Equal ops from the same assembly give equal fingerprints; a cache still compares the ops themselves.
 * `groups`: hs_ops_groups of its ops, gathered from the same pieces, so that the cache need not scan them to
 * key a range on the groups it uses. */
typedef struct hs_op_range {
	uint32_t first, count;
	uint32_t canon;
	uint32_t groups;
	uint64_t fp;
} hs_op_range;

/* A step as its stages' schedule items instead of tasks (hs_build_step_items), what the closed-form pipeline
 * step (sim/exec/pipe_step.c) walks: every fact emit_item and finish_rep would turn into tasks, found once per
 * (stage, chunk) rather than once per task. Only where the step is one the item walk times exactly: one rep
 * per stage (symmetry), no ZeRO-3, no offload, no DualPipe and no tied embeddings over a pipeline (their
 * extra tasks are the graph's alone). */
typedef struct hs_pipe {
	int v, nchunks, sched, m;  /* chunks per stage, model chunks, enum hs_sched_kind, micro-batches */
	hs_sched_item **items;     /* [pp] each stage's schedule (the build's own, or a hs_sched_cache's) */
	size_t *nitems;            /* [pp] */
	int own_items;             /* items are the build's (freed with it) */
	uint32_t (*ol)[4][2];      /* [pp * v][enum hs_si_kind] op range {first, count} in graph.ops */
	int *nslices;              /* [pp * v] bucket slices of the item that finalises the chunk's gradients */
	double *bucket_bytes;      /* [pp * v] bytes each slice's reduction carries */
	uint32_t (*opt)[2];        /* [pp] the optimizer's op range */
	double *gather_bytes;      /* [pp] ZeRO 1-2: the updated parameters' all-gather after it; 0: none */
	double act_bytes;          /* activations (and input gradients) sent between stages */
	int grad_coll;             /* enum hs_coll_op of the buckets' reduction */
	int reduce;                /* gradients are reduced across data parallelism (a group of more than one) */
} hs_pipe;

typedef struct hs_build {
	hs_graph graph;            /* with `pipe`: reps and op lists, no tasks */
	hs_pipe *pipe;             /* hs_build_step_items where it applies; NULL: the graph's tasks are the step */
	/* [nranges] the (stage, chunk) op lists, in increasing `first`, so that whoever times ranges
	 * (sim/exec/exec.c) times each distinct one once; none with HETSIM_BUILD_MEMO=0 */
	hs_op_range *ranges;
	size_t nranges, capranges;
	hs_stage_info *stages; /* [pp] */
	int pp;
	double model_flops;    /* per step, whole cluster: 6 P T + attention (no recompute) */
	hs_partition part;
} hs_build;

/* Build the graph for one step of workload w, split over stages and replicas as `part` says (resolved by
 * sim/exec/partition.h; the build takes it over: it moves into out->part and *part is left empty).
 * `symmetry` = 1: one rep per stage; 0: one rep per (stage, dp replica). Uneven data-parallel load turns
 * symmetry off. */
int hs_build_step(const hs_workload *w, hs_partition *part, int symmetry, hs_build *out, hs_err *err);
/* The same, with check(w, out, err) called once the reps and the stages' facts (parameters, memory) are set but
 * before any task is built: -1 from it ends the build as a failure (out freed) with its error. */
typedef int (*hs_build_check)(const hs_workload *w, const hs_build *b, hs_err *err);
int hs_build_step_checked(const hs_workload *w, hs_partition *part, int symmetry, hs_build_check check,
			  hs_build *out, hs_err *err);
/* The same, as schedule items (out->pipe; graph.reps and the op lists set, no task) where the step is one
 * hs_pipe describes, else as tasks (out->pipe NULL): the caller asks whichever it got. The schedule's items
 * come from sc where it is given (kept there across builds; it must outlive out), else are built. */
int hs_build_step_items(const hs_workload *w, hs_partition *part, int symmetry, hs_build_check check,
			hs_sched_cache *sc, hs_build *out, hs_err *err);
void hs_build_free(hs_build *b);
/* The (stage, chunk) op list that is range [first, first + count) (b->ranges), or NULL when it is none (an
 * optimizer's list, part of a list, a graph built without the memo). */
const hs_op_range *hs_build_op_range(const hs_build *b, uint32_t first, uint32_t count);
/* Does the build reuse what it computed once within a step (schedule items, per-kind layer op lists, the op
 * lists' aliases in hs_build.ranges)? Yes unless the environment sets HETSIM_BUILD_MEMO=0, which builds
 * everything afresh as before: the same graph, more slowly, so that tests can check the reuse changes nothing.
 * The executor's op-range costs kept across steps (sim/exec/range_cache.h) follow the same switch. */
int hs_build_memo_on(void);

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
void hs_build_layer_cfg(const hs_workload *w, hs_layer_cfg *out);

#endif
