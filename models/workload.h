/* The workload: what one training job runs, as the layers below the study see it (models/build.h builds its
 * graph, sim/exec runs it). The model, the training settings and the parallel strategy, the cluster they run
 * on and its per-device speed rules. A scenario (sim/study/scenario.h) owns these and hands out this view, so
 * the graph builder and the executor never see the rest of the scenario (costs, resilience, DiLoCo, paths). */
#ifndef HS_WORKLOAD_H
#define HS_WORKLOAD_H

#include <stdint.h>

#include "config/variability.h"
#include "models/model.h"
#include "models/moe_routing.h"
#include "models/ops.h"
#include "topology/cluster.h"

typedef struct hs_training {
	int seq_len;
	int64_t global_batch;  /* sequences per step */
	int micro_batch;       /* sequences per micro-batch */
	enum hs_dtype dtype;   /* activations and weights (bf16 or fp16; fp32 for full precision) */
	int fp8_gemms;         /* precision: fp8 => Transformer Engine's linear layers in fp8, activations bf16 */
	enum hs_fp8_recipe fp8_recipe; /* training.fp8_recipe (delayed unless given), with fp8_gemms */
	int materialized_attention; /* attention: materialized (scores in memory, Megatron 2022); 0: flash */
	const hs_recipe *recipe;    /* how the framework runs the step (training.recipe); never NULL once loaded */
	enum hs_dtype grad_dtype;   /* gradients as stored and reduced: the recipe's unless training.grad_dtype */
} hs_training;

enum hs_dim { HS_DIM_TP, HS_DIM_CP, HS_DIM_DP, HS_DIM_PP };

typedef struct hs_parallel {
	int tp, pp, dp, cp, ep;
	int vstages;           /* model chunks per pipeline rank (interleaved schedule) */
	int recompute;         /* HS_RC_* */
	int sequence_parallel;
	int schedule;          /* enum hs_sched_kind */
	int zero;              /* 0..3 */
	int fsdp_keep;         /* with zero 3: FSDP2's reshard_after_forward false: parameters gathered once per
				* step and kept across micro-batches, gradients reduce-scattered once per step */
	/* with zero 3: DeepSpeed ZeRO-3's gathering (parallelism.zero3), in parameters (elements, as DeepSpeed
	 * counts them); 0: not given (the graph's gather units, one all-gather each) */
	double z3_prefetch_bucket; /* stage3_prefetch_bucket_size: parameters per all-gather */
	double z3_max_live;        /* stage3_max_live_parameters: gathered parameters resident at once */
	/* parallelism.offload (host memory over the node's host link, topology/host.h) */
	int offload_optimizer;     /* ZeRO-Offload: gradients to the host, Adam on the CPU, parameters back */
	int offload_activations;   /* activations saved for backward to the host after each forward, back before
				    * the backward that reads them */
	int micro_batches;     /* derived: global_batch / (dp * micro_batch) */
	double dp_bucket_bytes;/* gradient bucket size for overlapped DP reduction */
	double memory_reserve; /* bytes kept free on each device (framework, fragmentation) */
	int order[4];          /* rank layout, innermost first: HS_DIM_* (Megatron: tp, cp, dp, pp) */
	double expert_load;    /* busiest expert's tokens / uniform share (1: uniform; from expert_imbalance) */
	int cp_ring;           /* cp_mode: ring (1) or allgather (0) */
	/* Heterogeneous placement (docs/heterogeneity.md). Owned by the scenario. */
	int *stage_layers;     /* [pp] transformer layers per pipeline stage (all its chunks); NULL: uniform */
	int stage_layers_auto; /* stage_layers: auto (hs_partition_resolve balances them) */
	int *chunk_layers;     /* [pp * vstages] layers per model chunk, global chunk g = k pp + s in model order
				* (set with stage_layers when given); NULL: stage_layers / vstages each */
	int embedding_as_layer, loss_as_layer; /* Megatron's account_for_{embedding,loss}_in_pipeline_split */
	int *dp_mb;            /* [dp] micro-batches per data-parallel replica; NULL: micro_batches each */
	int dp_mb_auto;        /* dp_microbatches: auto (proportional to replica speed) */
	int sites;             /* DiLoCo sites (1 without diloco): replicas are numbered site-major and the
				* data-parallel group of a replica is its site's replicas */
	hs_moe_routing routing; /* expert_routing: load drawn per step (skew 0: none; models/moe_routing.h) */
} hs_parallel;

typedef struct hs_workload {
	const hs_cluster *cluster;
	/* 0, or a number that names `cluster` and nothing else for the life of the process: a sweep's one cluster,
	 * read-only and shared by its points (sim/study/sweep.c), so that a thread's caches may key what they
	 * derive from it (its groups' summaries, sim/exec/range_cache.h) by this number, never by the pointer */
	uint64_t cluster_id;
	const hs_model *model;
	const hs_training *train;
	const hs_parallel *par;
	const hs_variability *var; /* per-device speed rules (nrules 0: none) */
	int coll_algo;             /* enum hs_coll_algo for every collective (HS_ALGO_AUTO: as NCCL's tuner picks),
				    * as NCCL_ALGO is a setting of the job */
} hs_workload;

#endif
