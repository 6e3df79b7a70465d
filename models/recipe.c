/* The training recipes (models/recipe.h). Each entry says where its choices come from; figures are measured
 * or read from the framework's source, never fitted to a step time.
 *
 * Host issue cost (host_gemm_s, host_kernel_s): an isolated PyTorch call timed by CUDA events around it takes
 * the host's dispatch plus the kernel, since the GPU idles between the events until the kernel is launched. On
 * the H200 host of calib/measurements/h200/ (2026-11-29/30) the isolated calls of h200-microbench exceed our
 * back-to-back cuBLASLt kernels of the same shapes (kernels-2026-11-30/gemm.jsonl) by a median 25 us over the
 * 35 bf16 GEMMs of at most 2^30 multiply-adds (21-34 us), and the isolated device copies of 1-16 MiB exceed our
 * own copies (mem.jsonl) by 16 us (23.2-23.9 us against 7.2-8.2 us). Those are the figures of eager PyTorch;
 * a recipe replayed as CUDA graphs issues no kernel from the host. */
#include "models/recipe.h"

#include <string.h>

#define EAGER_GEMM_S 25e-6
#define EAGER_KERNEL_S 16e-6

const hs_recipe hs_recipes[] = {
	{
		.name = "megatron",
		.summary = "Megatron-LM/Megatron-core: bf16 parameters and activations, fp32 main gradients and "
			   "master weights, fused bias+GeLU, bias+dropout+add, softmax and vocab-parallel "
			   "cross-entropy",
		.param_dtype = HS_BF16,
		.resid_dtype = HS_BF16,
		.grad_dtype = HS_FP32,
		.weight_cast = 0,
		.fused_elementwise = 1,
		.aten_kernels = 0,
		.qkv_copy = 0,
		.ce = HS_CE_FUSED,
		/* Adam over fp32 master weights: read the fp32 main grad (4) and master, m, v (12); write master,
		 * m, v (12) and the bf16 parameter copy (2) */
		.optimizer_bytes = 30,
		.optimizer_state_bytes = 12,
		.persistent_grads = 1,
		.ce_bytes_per_logit = 4,
		.grad_clip = 1,
		.zero_grad_bytes = 4,
		/* Megatron-core's TELinear passes is_first_microbatch (set at the start of each step by the
		 * schedule); --fp8-amax-history-len defaults to 1 in Megatron-LM's arguments */
		.fp8_weight_cache = 1,
		.fp8_amax_history = 1,
		.host_gemm_s = EAGER_GEMM_S,
		.host_kernel_s = EAGER_KERNEL_S,
		.source = "Megatron-LM defaults (accumulate_allreduce_grads_in_fp32, gradient_accumulation_fusion, "
			  "bias_gelu_fusion, bias_dropout_fusion, masked_softmax_fusion, clip_grad 1.0); eager host "
			  "issue cost measured on the H200 host",
	},
	{
		.name = "pytorch-amp",
		.summary = "PyTorch eager under torch.autocast(bf16) with fp32 parameters: weights cast per "
			   "micro-batch, fp32 residual stream and norms, F.cross_entropy on fp32 logits, fused AdamW",
		.param_dtype = HS_FP32,
		.resid_dtype = HS_FP32,
		.grad_dtype = HS_FP32,
		.weight_cast = 1,
		.fused_elementwise = 0,
		.aten_kernels = 1,
		.qkv_copy = 1,
		.ce = HS_CE_EAGER,
		/* torch.optim.AdamW(fused=True) over fp32 parameters: read p, g, m, v (16), write p, m, v (12) */
		.optimizer_bytes = 28,
		.optimizer_state_bytes = 8,
		.persistent_grads = 0,
		.ce_bytes_per_logit = 12,
		.grad_clip = 0,
		.zero_grad_bytes = 0, /* optimizer.zero_grad() sets .grad to None by default since PyTorch 2.0 */
		/* te.Linear called as a module, is_first_microbatch left None: the weights are cast at every
		 * forward; transformer_engine.common.recipe.DelayedScaling's amax_history_len defaults to 1024 */
		.fp8_weight_cache = 0,
		.fp8_amax_history = 1024,
		.host_gemm_s = EAGER_GEMM_S,
		.host_kernel_s = EAGER_KERNEL_S,
		.source = "PyTorch autocast op lists (layer_norm and the loss in fp32, linear in bf16, weight-cast "
			  "cache per autocast region); eager host issue cost measured on the H200 host",
	},
	{0},
};

const hs_recipe *hs_recipe_default(void) { return &hs_recipes[0]; }

const hs_recipe *hs_recipe_find(const char *name)
{
	for (const hs_recipe *r = hs_recipes; r->name; r++)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

/* In the table's order (tests/unit/models/test_recipe.c checks that they agree). */
static const char *const names[] = {"megatron", "pytorch-amp", NULL};

const char *const *hs_recipe_names(void) { return names; }
