/* hs_op: the kernels one transformer layer runs on one rank, with exact shapes, FLOPs and bytes moved,
 * for a given parallel split (TP with or without sequence parallelism, CP, EP) and phase.
 *
 * Backward is split into input-gradient (dgrad) and weight-gradient (wgrad) parts so zero-bubble schedules
 * can place them separately. Communication that sits inside a layer (TP all-reduce / all-gather /
 * reduce-scatter, EP all-to-all, CP ring exchanges) appears as HS_OP_COMM entries at the point where it
 * blocks the computation. */
#ifndef HS_OPS_H
#define HS_OPS_H

#include <stddef.h>

#include "models/model.h"
#include "models/recipe.h"
#include "sim/base/dtype.h"

enum hs_op_kind {
	HS_OP_GEMM,      /* m, n, k (batched GEMMs: count = batch) */
	HS_OP_ATTN,      /* flash attention: b, h, s, d, causal */
	HS_OP_MEM,       /* memory-bound: norm, activation, dropout, residual add, rotary, softmax, embedding */
	HS_OP_COMM,      /* collective inside the layer */
	HS_OP_OPTIMIZER, /* memory-bound optimizer update over `bytes` */
	HS_OP_TIMED,     /* a kernel of given duration `dur_s` (a traced workload's measured compute node,
			  * traces/chakra_read.c): no model prices it and no in-stream gap is added */
};

/* What kind of memory-bound kernel a MEM op is. Its time is its bytes over the profile's copy curve slowed by
 * the family's measured factor (calib/profile.h, hs_profile_mem_op_time): a layer norm or a softmax moves
 * the same bytes as a copy in several times longer. COPY: casts, contiguous copies, fills, gathers, scatters
 * and column sums, which run at copy speed. */
enum hs_mem_family {
	HS_MF_COPY,
	HS_MF_ADD,       /* binary elementwise: residual adds, SwiGLU's multiply, gradient accumulation */
	HS_MF_LAYERNORM,
	HS_MF_RMSNORM,
	HS_MF_SOFTMAX,   /* softmax, log-softmax and the cross-entropy's row reductions */
	HS_MF_ACT,       /* GeLU, SiLU and their fused bias / gated forms */
	HS_MF_DROPOUT,
	HS_MF_COUNT
};
/* The profile's name of a family ("layernorm", ...); "copy" for HS_MF_COPY. */
const char *hs_mem_family_name(enum hs_mem_family f);

enum hs_coll_op {
	HS_COLL_ALL_REDUCE,
	HS_COLL_ALL_GATHER,
	HS_COLL_REDUCE_SCATTER,
	HS_COLL_ALL_TO_ALL,
	HS_COLL_BROADCAST,
	HS_COLL_REDUCE,
	HS_COLL_SENDRECV,
	HS_COLL_OP_COUNT
};

enum hs_group { HS_GROUP_TP, HS_GROUP_CP, HS_GROUP_DP, HS_GROUP_EP, HS_GROUP_PP, HS_GROUP_COUNT };

enum hs_phase { HS_PH_FWD, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT, HS_PH_RECOMPUTE };

typedef struct hs_op {
	enum hs_op_kind kind;
	const char *name;  /* static string: "qkv", "attn", "proj", "fc1", "fc2", "ln1", "tp_ar", ... */
	enum hs_dtype dtype;
	enum hs_mem_family family; /* MEM: which kind of memory-bound kernel */
	double m, n, k;    /* GEMM */
	double count;      /* how many identical kernels (GEMM batches, per-expert GEMMs) */
	double b, h, s, d; /* attention: batch, query heads on this rank, query length, head size (MLA: the mean of
			    * the query/key and value head sizes, so that 4*b*h*s*s_kv*d is exact) */
	double s_kv;       /* attention: key length (s x cp with context parallelism: local queries, all keys) */
	int causal;
	int bwd;           /* attention backward */
	double flops;      /* total for this entry (count included) */
	double bytes;      /* MEM, OPTIMIZER: bytes read + written. COMM: the collective's size as nccl-tests
			    * counts it: all-reduce, broadcast, reduce: the buffer; all-gather: the gathered output;
			    * reduce-scatter: the whole input; all-to-all: what one rank sends in all (its own share
			    * included); send/recv: the message. GEMM, ATTN: the least traffic (operands read and
			    * result written once, fp32 results for wgrad). */
	enum hs_coll_op coll;
	enum hs_group group;
	int recompute;     /* this op re-runs forward work (counts for HFU, not MFU) */
	double dur_s;      /* TIMED: seconds, as the trace gave them */
	int routed;        /* the routed experts' work (their GEMMs, activation, EP all-to-alls): what grows with
			    * the busiest rank's load (models/moe_routing.h) */
	int overlap;       /* COMM: runs concurrently with the next op of the list (ring attention's KV block
			    * transfer beside the block's attention): only what exceeds that op's time is exposed */
} hs_op;

/* How Transformer Engine scales the fp8 tensors of a GEMM (training.fp8_recipe; TE's recipe.DelayedScaling and
 * recipe.Float8CurrentScaling). Delayed: each tensor is cast with a scale derived from the amax history of
 * earlier iterations, the cast records the new amax, and one fused kernel per pass updates the histories
 * and scales. Current: a read pass over the tensor computes its amax just before the cast. */
enum hs_fp8_recipe { HS_FP8_DELAYED, HS_FP8_CURRENT };

typedef struct hs_oplist {
	hs_op *ops;
	size_t n, cap;
} hs_oplist;

/* Parallel split and options that change a layer's ops. */
typedef struct hs_layer_cfg {
	int tp, cp, ep;
	int sequence_parallel;
	int micro_batch;
	int seq_len;
	enum hs_dtype dtype;      /* activations / GEMMs (bf16, or fp8 for GEMMs when fp8 is on) */
	int fp8_gemms;            /* Transformer Engine's linear layers run fp8 GEMMs, with its casts around them */
	unsigned char fp8_recipe; /* enum hs_fp8_recipe, with fp8_gemms */
	enum { HS_RC_NONE, HS_RC_SELECTIVE, HS_RC_FULL } recompute;
	int flash_attention;      /* 1: fused attention kernel (default); 0: materialised scores */
	double expert_load;       /* busiest expert's tokens / the uniform share (0 or 1: uniform routing) */
	int cp_ring;              /* CP: ring attention over KV blocks instead of the KV all-gather */
	const hs_recipe *recipe;  /* how the framework runs the layer; NULL: hs_recipe_default() (megatron) */
	double grad_bytes;        /* bytes of a stored gradient element; 0: the recipe's grad_dtype */
} hs_layer_cfg;

void hs_oplist_free(hs_oplist *l);
void hs_oplist_clear(hs_oplist *l);

/* Append the ops of transformer layer `layer` (0-based; MoE layers per model) in `phase`. For
 * HS_PH_RECOMPUTE, the forward work that the recompute mode re-runs before backward (none, the attention
 * core for selective, the whole layer for full). The list depends on `layer` only through its mixer kind
 * (hs_model_layer_mixer) and whether it is MoE (hs_model_layer_is_moe): models/build.c generates it once per
 * (phase, kind, MoE) and copies it for every such layer, so anything else of the layer it comes to depend on
 * must join that key (tests/unit/models/test_build_memo.c compares with HETSIM_BUILD_MEMO=0). */
void hs_ops_layer(const hs_model *m, const hs_layer_cfg *c, int layer, enum hs_phase phase, hs_oplist *out);
/* Embedding lookup (first stage) and the output projection + loss (last stage). */
void hs_ops_embedding(const hs_model *m, const hs_layer_cfg *c, enum hs_phase phase, hs_oplist *out);
void hs_ops_head(const hs_model *m, const hs_layer_cfg *c, enum hs_phase phase, hs_oplist *out);
/* The optimizer step over `params` parameters held by this rank, as recipe `c->recipe` runs it: the gradient
 * norm for clipping, the Adam update, and the clearing of a persistent gradient buffer. */
void hs_ops_optimizer(const hs_layer_cfg *c, double params, hs_oplist *out);

/* Transformer Engine's per-pass and per-step fp8 work (nothing unless c->fp8_gemms).
 * hs_ops_fp8_gemms: the fp8 GEMMs of a forward op list (expert GEMMs counted one each), recompute excluded.
 * hs_ops_fp8_scale_update: delayed scaling's one fused amax-history and scale update over the `gemms` GEMMs
 * of an fp8_autocast region, at the end of its forward (HS_PH_FWD) or its backward (HS_PH_BWD_INPUT).
 * hs_ops_fp8_weight_cast: the cast of this rank's `weights` GEMM weights to fp8 (and their transposes) once
 * per step, when the recipe caches them across micro-batches (hs_recipe.fp8_weight_cache). */
double hs_ops_fp8_gemms(const hs_oplist *fwd);
/* The groups that ops[0..n-1]'s collectives run over, 1 << enum hs_group each (an op of no known group adds
 * nothing). */
unsigned hs_ops_groups(const hs_op *ops, size_t n);
void hs_ops_fp8_scale_update(const hs_layer_cfg *c, double gemms, enum hs_phase phase, hs_oplist *out);
void hs_ops_fp8_weight_cast(const hs_layer_cfg *c, double weights, hs_oplist *out);

/* Model FLOPs of one training step (forward + backward, no recompute) for `tokens` tokens: the 6 * params *
 * tokens term (active params for MoE) plus attention's 12 * layers * hidden * seq * tokens (halved when causal). */
double hs_model_flops_per_step(const hs_model *m, double tokens, int seq_len, int causal);

#endif
