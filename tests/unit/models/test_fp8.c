/* fp8 as Transformer Engine runs it (models/ops.c, models/memory.c, training.fp8_recipe): one layer's extra
 * kernels with their bytes derived by hand, for delayed and current scaling and both recipes; which GEMMs
 * stay bf16; the memory of an fp8 layer against a bf16 one; the scenario keys.
 *
 * The layer: llama2-7b (h 4096, 32 heads of 128 with 32 KV heads, SwiGLU ffn 11008, no biases), tp 1, one
 * sequence of 2048 tokens: m = 2048. GEMM shapes (m, n, k): qkv (2048, 12288, 4096), proj (2048, 4096, 4096),
 * fc1 (2048, 22016, 4096), fc2 (2048, 4096, 11008). A cast_transpose reads the bf16 tensor (2 bytes) and
 * writes two fp8 copies (1 byte each): 4 bytes per element from bf16, 6 from fp32; an amax pass reads
 * it (2, or 4 from fp32). */
#include <check.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "models/memory.h"
#include "models/ops.h"
#include "sim/study/scenario.h"
#include "tests/unit/helpers.h"

static hs_layer_cfg cfg(int fp8, enum hs_fp8_recipe r, const hs_recipe *rc)
{
	return (hs_layer_cfg){.tp = 1, .cp = 1, .ep = 1, .micro_batch = 1, .seq_len = 2048, .dtype = HS_BF16,
			      .fp8_gemms = fp8, .fp8_recipe = (unsigned char)r, .flash_attention = 1, .recipe = rc};
}

static const hs_op *find(const hs_oplist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ops[i].name, name) == 0)
			return &l->ops[i];
	return NULL;
}

static long index_of(const hs_oplist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ops[i].name, name) == 0)
			return (long)i;
	return -1;
}

static void layer(const hs_model *m, const hs_layer_cfg *c, enum hs_phase ph, hs_oplist *l)
{
	hs_oplist_clear(l);
	hs_ops_layer(m, c, 0, ph, l);
}

START_TEST(delayed_megatron_kernels)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("llama2-7b", &m), 0);
	hs_layer_cfg c = cfg(1, HS_FP8_DELAYED, NULL);
	hs_oplist l = {0};
	layer(&m, &c, HS_PH_FWD, &l);
	/* input cast_transpose of each TE layer: m x k x (2 + 1 + 1) */
	ck_assert_double_eq(find(&l, "qkv_fp8_cast_x")->bytes, 2048.0 * 4096 * 4);
	ck_assert_double_eq(find(&l, "proj_fp8_cast_x")->bytes, 2048.0 * 4096 * 4);
	ck_assert_double_eq(find(&l, "fc1_fp8_cast_x")->bytes, 2048.0 * 4096 * 4);
	ck_assert_double_eq(find(&l, "fc2_fp8_cast_x")->bytes, 2048.0 * 11008 * 4);
	ck_assert(find(&l, "qkv_fp8_cast_x")->family == HS_MF_COPY && find(&l, "qkv_fp8_cast_x")->kind == HS_OP_MEM);
	/* Megatron-core caches the fp8 weights for the step (is_first_microbatch): no per-micro-batch weight
	 * cast, no amax pass with delayed scaling; the cast precedes its GEMM, which reads fp8 */
	ck_assert(!find(&l, "qkv_fp8_cast_w") && !find(&l, "qkv_fp8_amax_x"));
	ck_assert_int_eq(index_of(&l, "qkv_fp8_cast_x") + 1, index_of(&l, "qkv"));
	ck_assert(find(&l, "qkv")->dtype == HS_FP8 && find(&l, "fc2")->dtype == HS_FP8);
	/* fp8 operands, bf16 output: (m k + k n) x 1 + m n x 2 */
	ck_assert_double_eq(find(&l, "proj")->bytes, 2048.0 * 4096 + 4096.0 * 4096 + 2048.0 * 4096 * 2);
	/* output-gradient cast_transpose before dgrad: m x n x 4 */
	layer(&m, &c, HS_PH_BWD_INPUT, &l);
	ck_assert_double_eq(find(&l, "qkv_fp8_cast_dy")->bytes, 2048.0 * 12288 * 4);
	ck_assert_double_eq(find(&l, "proj_fp8_cast_dy")->bytes, 2048.0 * 4096 * 4);
	ck_assert_double_eq(find(&l, "fc1_fp8_cast_dy")->bytes, 2048.0 * 22016 * 4);
	ck_assert_double_eq(find(&l, "fc2_fp8_cast_dy")->bytes, 2048.0 * 4096 * 4);
	ck_assert_int_eq(index_of(&l, "fc2_fp8_cast_dy") + 1, index_of(&l, "fc2_dgrad"));
	ck_assert(find(&l, "fc2_dgrad")->dtype == HS_FP8);
	layer(&m, &c, HS_PH_BWD_WEIGHT, &l);
	ck_assert(find(&l, "fc2_wgrad")->dtype == HS_FP8 && !find(&l, "fc2_fp8_cast_dy"));
	/* the scale update of a region of 4 GEMMs, history 1 (Megatron): each slot's history (4) and scale and
	 * inverse (8) read and written: forward 3 slots per GEMM, backward 2 */
	hs_oplist_clear(&l);
	hs_ops_fp8_scale_update(&c, 4, HS_PH_FWD, &l);
	hs_ops_fp8_scale_update(&c, 4, HS_PH_BWD_INPUT, &l);
	hs_ops_fp8_scale_update(&c, 4, HS_PH_BWD_WEIGHT, &l);
	ck_assert_int_eq(l.n, 2);
	ck_assert_double_eq(l.ops[0].bytes, 4 * 3 * 2 * (4 + 8.0));
	ck_assert_double_eq(l.ops[1].bytes, 4 * 2 * 2 * (4 + 8.0));
	/* the per-step weight cast: bf16 weights read, fp8 copy and transpose written */
	hs_oplist_clear(&l);
	hs_ops_fp8_weight_cast(&c, 1e9, &l);
	ck_assert(l.n == 1 && l.ops[0].bytes == 4e9);
	/* the 4 GEMMs a layer's fwd list holds in fp8 */
	layer(&m, &c, HS_PH_FWD, &l);
	ck_assert_double_eq(hs_ops_fp8_gemms(&l), 4);
	hs_oplist_free(&l);
}
END_TEST

START_TEST(current_scaling_kernels)
{
	hs_model m;
	hs_model_preset("llama2-7b", &m);
	hs_layer_cfg c = cfg(1, HS_FP8_CURRENT, NULL);
	hs_oplist l = {0};
	layer(&m, &c, HS_PH_FWD, &l);
	/* an amax read before each cast: m x k x 2, then the same cast */
	ck_assert_double_eq(find(&l, "fc2_fp8_amax_x")->bytes, 2048.0 * 11008 * 2);
	ck_assert_double_eq(find(&l, "fc2_fp8_cast_x")->bytes, 2048.0 * 11008 * 4);
	ck_assert_int_eq(index_of(&l, "fc2_fp8_amax_x") + 1, index_of(&l, "fc2_fp8_cast_x"));
	layer(&m, &c, HS_PH_BWD_INPUT, &l);
	ck_assert_double_eq(find(&l, "fc1_fp8_amax_dy")->bytes, 2048.0 * 22016 * 2);
	ck_assert_int_eq(index_of(&l, "fc1_fp8_amax_dy") + 1, index_of(&l, "fc1_fp8_cast_dy"));
	ck_assert_int_eq(index_of(&l, "fc1_fp8_cast_dy") + 1, index_of(&l, "fc1_dgrad"));
	/* no amax histories to update; the per-step weight cast reads the weights once more */
	hs_oplist_clear(&l);
	hs_ops_fp8_scale_update(&c, 4, HS_PH_FWD, &l);
	ck_assert_int_eq(l.n, 0);
	hs_ops_fp8_weight_cast(&c, 1e9, &l);
	ck_assert(l.n == 2 && l.ops[0].bytes == 2e9 && l.ops[1].bytes == 4e9);
	/* pytorch-amp: te.Linear without is_first_microbatch casts its fp32 weights at every forward: amax
	 * k n x 4, cast k n x (4 + 2); autocast's own bf16 weight cast is gone */
	c.recipe = hs_recipe_find("pytorch-amp");
	layer(&m, &c, HS_PH_FWD, &l);
	ck_assert_double_eq(find(&l, "qkv_fp8_amax_w")->bytes, 4096.0 * 12288 * 4);
	ck_assert_double_eq(find(&l, "qkv_fp8_cast_w")->bytes, 4096.0 * 12288 * 6);
	ck_assert(!find(&l, "qkv_wcast"));
	/* its wgrad leaves the GEMM in bf16 and is cast to the fp32 .grad as before */
	layer(&m, &c, HS_PH_BWD_WEIGHT, &l);
	ck_assert(find(&l, "qkv_wgrad")->dtype == HS_FP8 && find(&l, "qkv_gcast"));
	hs_oplist_clear(&l);
	hs_ops_fp8_weight_cast(&c, 1e9, &l);
	ck_assert_int_eq(l.n, 0);
	/* delayed under pytorch-amp: TE's DelayedScaling history of 1024 */
	c.fp8_recipe = HS_FP8_DELAYED;
	hs_ops_fp8_scale_update(&c, 1, HS_PH_FWD, &l);
	ck_assert_double_eq(l.ops[0].bytes, 3 * 2 * (4 * 1024 + 8.0));
	hs_oplist_free(&l);
}
END_TEST

/* The router, the output layer and materialised attention stay bf16 and get no casts; bf16 training adds
 * nothing. */
START_TEST(bf16_gemms_stay)
{
	hs_model m;
	hs_model_preset("mixtral-8x7b", &m);
	hs_layer_cfg c = cfg(1, HS_FP8_DELAYED, NULL);
	hs_oplist l = {0};
	layer(&m, &c, HS_PH_FWD, &l);
	ck_assert(find(&l, "router")->dtype == HS_BF16 && !find(&l, "router_fp8_cast_x"));
	ck_assert(find(&l, "expert_fc1")->dtype == HS_FP8);
	/* qkv and proj, and 8 local experts x (fc1, fc2) */
	ck_assert_double_eq(hs_ops_fp8_gemms(&l), 2 + 2 * 8);
	hs_oplist_clear(&l);
	hs_ops_head(&m, &c, HS_PH_FWD, &l);
	ck_assert(find(&l, "head")->dtype == HS_BF16 && !find(&l, "head_fp8_cast_x"));
	hs_model_preset("gpt-22b", &m);
	c.flash_attention = 0;
	layer(&m, &c, HS_PH_FWD, &l);
	ck_assert(find(&l, "score")->dtype == HS_BF16 && find(&l, "attn_v")->dtype == HS_BF16);
	ck_assert(!find(&l, "score_fp8_cast_x") && find(&l, "qkv_fp8_cast_x"));
	c = cfg(0, HS_FP8_DELAYED, NULL);
	hs_model_preset("llama2-7b", &m);
	layer(&m, &c, HS_PH_FWD, &l);
	for (size_t i = 0; i < l.n; i++)
		ck_assert(!strstr(l.ops[i].name, "fp8") && l.ops[i].dtype == HS_BF16);
	hs_oplist_free(&l);
}
END_TEST

/* Per token, llama2-7b at tp 1 with flash attention: the fp8 layer keeps the QKV input (h), FC1 input (h)
 * and FC2 input (ffn) in 1 byte instead of 2, and the projection's fp8 copy of the attention output (1 byte x
 * 32 x 128) beside the bf16 output flash attention keeps: 2 x 4096 x (-1) - 11008 + 4096 = -15104 bytes. */
START_TEST(memory_fp8_vs_bf16)
{
	hs_model m;
	hs_model_preset("llama2-7b", &m);
	hs_layer_cfg b = cfg(0, HS_FP8_DELAYED, NULL), f = cfg(1, HS_FP8_DELAYED, NULL);
	double ab = hs_memory_layer_activations(&m, &b), af = hs_memory_layer_activations(&m, &f);
	ck_assert_double_eq(ab - af, 15104.0 * 2048);
	/* bf16 for reference, Korthikanti's terms: norms 2 x 2h, QKV and FC1 inputs 2 x 2h, Q K V 3 x 2h,
	 * projection input 2h, SwiGLU's two FC1 outputs and the FC2 input 2 x 3 x 11008 */
	ck_assert_double_eq(ab, 2048.0 * (4 * 4096 + 4 * 4096 + 6 * 4096 + 2 * 4096 + 6 * 11008));
	/* weights of one middle layer: + fp8 copy and transpose of every parameter of the layer (the two norm
	 * vectors of 4096 included, as memory counts them) + 4 GEMMs x 5 tensors x (history 1 x 4 + 8) */
	hs_mem_cfg mb = {.layer = b, .pp = 32, .dp = 1, .layers_on_rank = 1, .first_layer = 5, .in_flight = 1};
	hs_mem_cfg mf = mb;
	mf.layer = f;
	hs_mem rb, rf;
	hs_memory_rank(&m, &mb, &rb);
	hs_memory_rank(&m, &mf, &rf);
	double params = 4096.0 * 12288 + 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096;
	ck_assert_double_eq(rf.weights - rb.weights, 2 * params + 4 * 5 * 12);
	ck_assert_double_eq(rf.activations - rb.activations, -15104.0 * 2048);
	ck_assert(rf.grads == rb.grads && rf.optimizer == rb.optimizer);
}
END_TEST

static const char *scn =
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}}\n"
	"model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024}\n"
	"training: {global_batch: 2, micro_batch: 1, %s}\n"
	"parallelism: {tp: 1, dp: 2}\n";

static hs_scenario *load(const char *training, hs_err *err)
{
	char text[1024], path[64];
	snprintf(text, sizeof text, scn, training);
	hs_test_write_tmp(path, sizeof path, "fp8", text);
	hs_scenario *s = hs_scenario_load(path, NULL, err);
	unlink(path);
	return s;
}

START_TEST(scenario_keys)
{
	hs_err err = {0};
	hs_scenario *s = load("precision: fp8", &err);
	ck_assert_msg(s, "%s", err.msg);
	ck_assert(s->train.fp8_gemms && s->train.fp8_recipe == HS_FP8_DELAYED);
	hs_scenario_free(s);
	s = load("precision: fp8, fp8_recipe: current", &err);
	ck_assert_msg(s, "%s", err.msg);
	ck_assert(s->train.fp8_recipe == HS_FP8_CURRENT);
	hs_scenario_free(s);
	/* an input error naming the line and what is expected */
	s = load("fp8_recipe: current", &err);
	ck_assert(!s && err.code == HS_EINPUT);
	ck_assert_msg(strstr(err.msg, ":6:") && strstr(err.msg, "training.fp8_recipe") &&
			      strstr(err.msg, "precision: fp8") && strstr(err.msg, "delayed or current"),
		      "%s", err.msg);
	s = load("precision: fp8, fp8_recipe: late", &err);
	ck_assert(!s && strstr(err.msg, "delayed"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fp8");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, delayed_megatron_kernels);
	tcase_add_test(tc, current_scaling_kernels);
	tcase_add_test(tc, bf16_gemms_stay);
	tcase_add_test(tc, memory_fp8_vs_bf16);
	tcase_add_test(tc, scenario_keys);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
