/* What models/ops.c shares with the token-mixer files (models/mixer_*.c): the state of the walk over one
 * layer and the steps a mixer appends its kernels with. A step appends the form of the walk's phase (forward,
 * recompute, input or weight gradient); ops.c reverses backward lists afterwards. Internal to models/. */
#ifndef HS_OPS_WALK_H
#define HS_OPS_WALK_H

#include "models/ops.h"

/* The walk's state. */
struct walk {
	const hs_model *m;
	const hs_layer_cfg *c;
	enum hs_phase ph;
	double t, tok, tok_sp, h, adt; /* tp, tokens, tokens per rank in sequence-parallel regions, hidden,
					* activation bytes */
	double rdt, pdt, gdt;          /* bytes of the residual stream and norms, of a parameter, of a gradient */
	const hs_recipe *r;
	int eager;                     /* each elementwise op its own kernel (!r->fused_elementwise) */
	enum hs_dtype act;
	int layer;                     /* the layer being walked (-1: embedding, head) */
	double kbound;                 /* attention: keys kept per query (sliding window, DSA top-k); 0: all */
	hs_oplist tmp; /* this phase's ops in forward order */
};

/* The GEMM step's names: forward, dgrad, wgrad, and the recipe's kernels around it: the weight's cast,
 * the bias's cast, the weight gradient's cast, the bias gradient's column sum and its cast; then Transformer
 * Engine's fp8 kernels: the casts of the input, the weight and the output gradient, and (current scaling)
 * the amax pass before each. */
#define G(x)                                                                                                   \
	((const char *const[14]){x, x "_dgrad", x "_wgrad", x "_wcast", x "_bcast", x "_gcast", x "_bgrad",    \
				 x "_bgcast", x "_fp8_cast_x", x "_fp8_cast_w", x "_fp8_cast_dy", x "_fp8_amax_x", \
				 x "_fp8_amax_w", x "_fp8_amax_dy"})

/* Which GEMMs Transformer Engine runs. Megatron-core builds the QKV, projection, MLP and expert layers (and
 * MLA's projections) from TE modules (TELayerNormColumnParallelLinear, TERowParallelLinear,
 * TEGroupedLinear); the attention core is TE's DotProductAttention, in bf16 unless fp8_dpa is set; the MoE
 * router is a plain torch linear and the output layer Megatron's own ColumnParallelLinear, so they stay in
 * the activation format under fp8. */
enum gemm_kind {
	GK_TE,    /* a Transformer Engine linear layer: fp8 with precision fp8 */
	GK_PLAIN, /* a weight GEMM outside TE (router, output layer): the activation format */
	GK_ACTS,  /* both operands are activations (attention scores without flash): both gradients are input
		   * gradients, in the activation format */
};

/* The norm step's names: forward, backward, the eager weight-gradient kernel, the cast of the output to
 * the GEMM format and its backward. */
#define NM(x) ((const char *const[5]){x, x "_bwd", x "_wgrad", x "_cast", x "_cast_bwd"})
/* A memory-bound step's names: forward, backward. */
#define M(x) ((const char *const[2]){x, x "_bwd"})

/* A GEMM step (m tokens x n outputs x k inputs, count of them; `bias` elements, 0: none). */
void hs_opw_gemm(struct walk *w, const char *const names[14], double m, double n, double k, double count,
		 int core, enum gemm_kind kind, double bias);
/* A memory-bound step: forward bytes, backward bytes, forward FLOPs (backward twice). */
void hs_opw_mem(struct walk *w, const char *const names[2], enum hs_mem_family fam, double fbytes, double bbytes,
		double flops, int core);
/* A norm over n elements of the residual stream's format feeding a GEMM. */
void hs_opw_norm(struct walk *w, const char *const names[5], double n);
/* The model's softmax attention (MHA/GQA/MQA or MLA), keys bounded by w->kbound. */
void hs_opw_attention(struct walk *w);

/* The layer's token mixer, through the table of models/mixer.c (w->layer says which). */
void hs_mixer_ops(struct walk *w);

#endif
