/* hs_recipe: how a framework runs a training step's arithmetic (`training.recipe`, docs/scenario.md).
 *
 * The same model and parallel split run as different kernels under different frameworks: which formats the
 * parameters, activations, residual stream and gradients are kept in, which elementwise ops are fused, how the
 * cross-entropy is computed, whether weights are cast to the GEMM format before every micro-batch, which
 * optimizer kernel updates the parameters, and how long the host takes to issue one kernel. A recipe is one
 * entry of the table in recipe.c; the op lists (models/ops.c), the memory model (models/memory.c) and the op
 * timing (sim/exec/layer_time.c) read it, and nothing else branches on the framework's name. */
#ifndef HS_RECIPE_H
#define HS_RECIPE_H

#include "sim/base/dtype.h"

/* How the loss is computed from the logits. */
enum hs_ce_impl {
	HS_CE_FUSED, /* one fused kernel forward (max, sum of exp, target logit) and one backward, fp32 inside,
		      * reading the activation-format logits (Megatron's vocab-parallel cross-entropy) */
	HS_CE_EAGER, /* PyTorch F.cross_entropy on logits.float(): cast, log_softmax, nll_loss forward; nll_loss
		      * backward (a zero-filled fp32 gradient and a scatter), log_softmax backward, cast back */
};

typedef struct hs_recipe {
	const char *name;
	const char *summary;          /* one line for help text and docs */
	enum hs_dtype param_dtype;    /* parameters as the optimizer holds them for the forward: bf16 (Megatron:
				       * fp32 master copies are optimizer state) or fp32 (AMP: cast per use) */
	enum hs_dtype resid_dtype;    /* residual stream, norms and their outputs: bf16, or fp32 under autocast */
	enum hs_dtype grad_dtype;     /* gradients as stored and reduced over data parallelism (fp32 main grads
				       * in Megatron; fp32 .grad of fp32 parameters in AMP); training.grad_dtype
				       * overrides */
	int weight_cast;              /* each GEMM weight (and bias) is cast param_dtype -> activation format
				       * before each micro-batch's forward, kept for backward, and its gradient cast
				       * back (autocast's weight cache) */
	int fused_elementwise;        /* bias+GeLU, bias+dropout+add and the gated activation are one kernel each;
				       * 0: each eager op is a kernel (residual adds, casts, bias adds, SwiGLU's
				       * silu and multiply) */
	int aten_kernels;             /* memory-bound kernels are PyTorch's own (ATen), timed with the profile's
				       * per-family factors measured on them; 0: the framework's fused kernels
				       * (Apex/Transformer Engine norms, Megatron's fused softmax, jit-fused
				       * bias+GeLU and bias+dropout+add), which nothing in calib/measurements
				       * measured: they run at the copy curve */
	int qkv_copy;                 /* the attention output is made contiguous before the projection, and the
				       * q, k, v gradients are stacked back into one tensor (eager
				       * transpose/contiguous and split/view) */
	enum hs_ce_impl ce;
	double optimizer_bytes;       /* bytes the optimizer kernel moves per parameter (read + written), as
				       * param_dtype and grad_dtype set them; the gradient-norm pass is separate */
	int grad_clip;                /* a gradient-norm pass before the update (Megatron clips by default) */
	double optimizer_state_bytes; /* optimizer state per parameter: fp32 master, m, v (12) when the
				       * parameters are narrower; m and v (8) when they are the fp32 masters */
	int persistent_grads;         /* gradients live in a buffer kept across steps (Megatron's main grads);
				       * 0: allocated during backward and freed by zero_grad (set_to_none), so they
				       * never coexist with the forward's activations */
	double ce_bytes_per_logit;    /* bytes per logit held at the loss's peak: fused 4 (the fp32 softmax
				       * kept for backward); eager 12 (log_softmax's saved fp32 output, the
				       * incoming fp32 gradient and the result, during log_softmax's backward) */
	double zero_grad_bytes;       /* bytes per parameter written to clear the gradients each step (a
				       * persistent main-grad buffer is zero-filled; set_to_none frees instead: 0) */
	/* With precision fp8 (Transformer Engine linear layers): */
	int fp8_weight_cache;         /* the fp8 weight copies (and transposes) are cast once per step, on the first
				       * micro-batch, and reused by the others (te.Linear's is_first_microbatch,
				       * which Megatron-core sets); 0: cast at every forward (is_first_microbatch
				       * left None, TE's default) */
	int fp8_amax_history;         /* delayed scaling's amax history length per fp8 tensor */
	/* Host cost of issuing one kernel in eager mode: the device waits when its queued kernels are shorter
	 * than the host's issue rate (sim/exec/layer_time.c, two queues). 0: the kernels are replayed without the
	 * host (CUDA graphs). */
	double host_gemm_s, host_kernel_s;
	const char *source;           /* where the choices and figures come from */
} hs_recipe;

/* The table, terminated by an entry with name NULL; [0] is the default (megatron). */
extern const hs_recipe hs_recipes[];
const hs_recipe *hs_recipe_default(void);
/* NULL when unknown. */
const hs_recipe *hs_recipe_find(const char *name);
/* NULL-terminated list of names, for hs_cfg_enum and help text. */
const char *const *hs_recipe_names(void);

#endif
