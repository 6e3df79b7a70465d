/* Training recipes (models/recipe.h): every op of one GPT layer, forward and backward, under megatron and
 * pytorch-amp, with the bytes of each memory-bound kernel derived by hand; the head's cross-entropy; the
 * eager SwiGLU; and what must not change between recipes (the GEMMs and their FLOPs). */
#include <check.h>
#include <string.h>

#include "models/ops.h"
#include "models/recipe.h"

/* A small GPT layer: hidden h = 256, 4 heads of 64, ffn 1024, biases, LayerNorm, no dropout; micro-batch 2 of
 * 128 tokens: T = 256 tokens, so n = T h = 65536 elements of the stream and f = T ffn = 262144 of the MLP. */
static hs_model gpt(void)
{
	return (hs_model){.name = "tiny", .layers = 1, .hidden = 256, .heads = 4, .kv_heads = 4, .head_dim = 64,
			  .ffn = 1024, .vocab = 1000, .tied_embeddings = 1, .seq_len = 128, .bias = 1,
			  .learned_pos = 1};
}

static hs_layer_cfg cfg(const char *recipe)
{
	return (hs_layer_cfg){.tp = 1, .cp = 1, .ep = 1, .micro_batch = 2, .seq_len = 128, .dtype = HS_BF16,
			      .flash_attention = 1, .recipe = hs_recipe_find(recipe)};
}

struct want {
	const char *name;
	double bytes; /* memory-bound ops; -1: a GEMM or attention kernel (its bytes are not the recipe's) */
};

#define N 65536.0  /* T h */
#define F 262144.0 /* T ffn */
#define K -1

static void check_list(const hs_oplist *l, const struct want *w, size_t nw, const char *what)
{
	ck_assert_msg(l->n == nw, "%s: %zu ops, want %zu", what, l->n, nw);
	for (size_t i = 0; i < nw; i++) {
		const hs_op *o = &l->ops[i];
		ck_assert_msg(strcmp(o->name, w[i].name) == 0, "%s op %zu: %s, want %s", what, i, o->name, w[i].name);
		if (w[i].bytes < 0)
			ck_assert_msg(o->kind == HS_OP_GEMM || o->kind == HS_OP_ATTN, "%s: %s is not a kernel", what,
				      o->name);
		else
			ck_assert_msg(o->kind == HS_OP_MEM && o->bytes == w[i].bytes, "%s: %s moves %.0f bytes, want %.0f",
				      what, o->name, o->bytes, w[i].bytes);
	}
}

static void layer(const char *recipe, enum hs_phase ph, hs_oplist *l)
{
	hs_model m = gpt();
	hs_layer_cfg c = cfg(recipe);
	hs_oplist_clear(l);
	hs_ops_layer(&m, &c, 0, ph, l);
}

START_TEST(names_match_the_table)
{
	const char *const *n = hs_recipe_names();
	size_t i = 0;
	for (; hs_recipes[i].name; i++)
		ck_assert_str_eq(n[i], hs_recipes[i].name);
	ck_assert_ptr_null(n[i]);
	ck_assert_ptr_eq(hs_recipe_default(), hs_recipe_find("megatron"));
	ck_assert_ptr_null(hs_recipe_find("jax"));
}
END_TEST

/* Megatron: bf16 stream; norms read and write 2 bytes (4n), backward reads the gradient and the input and
 * writes the gradient (6n); the fused bias+dropout+add reads the branch and the stream and writes the stream
 * (6n, no mask without dropout); bias+GeLU reads f and writes f (4f), backward 6f; the residual gradient's
 * accumulation reads two and writes one (6n). Weight gradients are the GEMMs alone (fp32 main grads). */
START_TEST(megatron_layer_by_hand)
{
	hs_oplist l = {0};
	static const struct want fwd[] = {{"ln1", 4 * N}, {"qkv", K},      {"attn", K}, {"proj", K},
					  {"add1", 6 * N}, {"ln2", 4 * N}, {"fc1", K},  {"act", 4 * F},
					  {"fc2", K},      {"add2", 6 * N}};
	layer("megatron", HS_PH_FWD, &l);
	check_list(&l, fwd, sizeof fwd / sizeof *fwd, "megatron fwd");
	static const struct want bin[] = {{"add2_bwd", 6 * N}, {"fc2_dgrad", K}, {"act_bwd", 6 * F},
					  {"fc1_dgrad", K},    {"ln2_bwd", 6 * N}, {"add1_bwd", 6 * N},
					  {"proj_dgrad", K},   {"attn_bwd", K},    {"qkv_dgrad", K},
					  {"ln1_bwd", 6 * N}};
	layer("megatron", HS_PH_BWD_INPUT, &l);
	check_list(&l, bin, sizeof bin / sizeof *bin, "megatron bwd input");
	static const struct want bw[] = {{"fc2_wgrad", K}, {"fc1_wgrad", K}, {"proj_wgrad", K}, {"qkv_wgrad", K}};
	layer("megatron", HS_PH_BWD_WEIGHT, &l);
	check_list(&l, bw, sizeof bw / sizeof *bw, "megatron bwd weight");
	/* the weight gradient accumulates into fp32: its result is 4 bytes per element (k x n = 256 x 768) */
	const hs_op *q = &l.ops[3];
	ck_assert(q->bytes == (q->m * q->k + q->k * q->n) * 2 + q->m * q->n * 4);
	hs_oplist_free(&l);
}
END_TEST

/* pytorch-amp: fp32 stream; the norm reads and writes 4 bytes (8n) and its output is cast to bf16 (4 + 2 per
 * element: 6n); each weight is cast fp32 -> bf16 (6 bytes per parameter: qkv 256 x 768, proj 256 x 256, fc1
 * and fc2 256 x 1024) and each bias (6 per element); the attention output is copied contiguous (2 + 2 bytes
 * over T x 4 heads x 64 = n: 4n); the add promotes the bf16 branch (2 + 4 read, 4 written: 10n). Backward:
 * the stream's gradient accumulation in fp32 (12n) and its cast to bf16 for the branch (6n); the norm's input
 * gradient (12n) and its weight gradient as a second kernel (reads the gradient and the input: 8n); the q, k,
 * v gradients stacked (2 + 2 bytes over 3n: 12n); the weight gradient leaves the GEMM in bf16 and is cast to
 * fp32 (6 per parameter), the bias gradient is a column sum (T x out x 2 read, out x 2 written) then a cast
 * (6 per element). */
START_TEST(pytorch_amp_layer_by_hand)
{
	hs_oplist l = {0};
	static const struct want fwd[] = {
		{"ln1", 8 * N},		{"ln1_cast", 6 * N},	{"qkv_wcast", 256 * 768 * 6.0}, {"qkv_bcast", 768 * 6.0},
		{"qkv", K},		{"attn", K},		{"attn_out_copy", 4 * N},	{"proj_wcast", 256 * 256 * 6.0},
		{"proj_bcast", 256 * 6.0}, {"proj", K},		{"add1", 10 * N},		{"ln2", 8 * N},
		{"ln2_cast", 6 * N},	{"fc1_wcast", 256 * 1024 * 6.0}, {"fc1_bcast", 1024 * 6.0},	{"fc1", K},
		{"act", 4 * F},		{"fc2_wcast", 1024 * 256 * 6.0}, {"fc2_bcast", 256 * 6.0},	{"fc2", K},
		{"add2", 10 * N}};
	layer("pytorch-amp", HS_PH_FWD, &l);
	check_list(&l, fwd, sizeof fwd / sizeof *fwd, "pytorch-amp fwd");
	static const struct want bin[] = {
		{"add2_bwd", 12 * N},	   {"add2_cast_bwd", 6 * N}, {"fc2_dgrad", K},	     {"act_bwd", 6 * F},
		{"fc1_dgrad", K},	   {"ln2_cast_bwd", 6 * N},  {"ln2_bwd", 12 * N},    {"ln2_wgrad", 8 * N},
		{"add1_bwd", 12 * N},	   {"add1_cast_bwd", 6 * N}, {"proj_dgrad", K},	     {"attn_bwd", K},
		{"qkv_stack_bwd", 12 * N}, {"qkv_dgrad", K},	     {"ln1_cast_bwd", 6 * N}, {"ln1_bwd", 12 * N},
		{"ln1_wgrad", 8 * N}};
	layer("pytorch-amp", HS_PH_BWD_INPUT, &l);
	check_list(&l, bin, sizeof bin / sizeof *bin, "pytorch-amp bwd input");
	static const struct want bw[] = {
		{"fc2_wgrad", K},  {"fc2_gcast", 1024 * 256 * 6.0}, {"fc2_bgrad", 256 * 256 * 2 + 256 * 2.0},
		{"fc2_bgcast", 256 * 6.0},
		{"fc1_wgrad", K},  {"fc1_gcast", 256 * 1024 * 6.0}, {"fc1_bgrad", 256 * 1024 * 2 + 1024 * 2.0},
		{"fc1_bgcast", 1024 * 6.0},
		{"proj_wgrad", K}, {"proj_gcast", 256 * 256 * 6.0}, {"proj_bgrad", 256 * 256 * 2 + 256 * 2.0},
		{"proj_bgcast", 256 * 6.0},
		{"qkv_wgrad", K},  {"qkv_gcast", 256 * 768 * 6.0},  {"qkv_bgrad", 256 * 768 * 2 + 768 * 2.0},
		{"qkv_bgcast", 768 * 6.0}};
	layer("pytorch-amp", HS_PH_BWD_WEIGHT, &l);
	check_list(&l, bw, sizeof bw / sizeof *bw, "pytorch-amp bwd weight");
	hs_oplist_free(&l);
}
END_TEST

/* Eager SwiGLU over f outputs of a gated MLP (T = 256 tokens, ffn 1024 -> 2f from FC1): silu(gate) reads f and
 * writes f (4f bytes), the multiply reads 2f and writes f (6f); backward the two multiplies (6f each), silu's
 * backward (6f) and the cat of the gate's and up's gradients (reads 2f, writes 2f: 8f). Megatron's fused
 * kernel: 6f forward (reads 2f, writes f), 10f backward. */
START_TEST(swiglu_eager_and_fused)
{
	hs_model m = gpt();
	m.gated_mlp = 1;
	m.bias = 0;
	hs_oplist l = {0};
	hs_layer_cfg c = cfg("pytorch-amp");
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	size_t i = 0;
	while (i < l.n && strcmp(l.ops[i].name, "fc1"))
		i++;
	ck_assert(i + 3 < l.n);
	ck_assert(!strcmp(l.ops[i + 1].name, "act") && l.ops[i + 1].bytes == 4 * F);
	ck_assert(!strcmp(l.ops[i + 2].name, "act_mul") && l.ops[i + 2].bytes == 6 * F);
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	for (i = 0; i < l.n && strcmp(l.ops[i].name, "fc2_dgrad"); i++)
		;
	ck_assert(i + 5 < l.n);
	ck_assert(!strcmp(l.ops[i + 1].name, "act_mul_bwd2") && l.ops[i + 1].bytes == 6 * F);
	ck_assert(!strcmp(l.ops[i + 2].name, "act_mul_bwd") && l.ops[i + 2].bytes == 6 * F);
	ck_assert(!strcmp(l.ops[i + 3].name, "act_bwd") && l.ops[i + 3].bytes == 6 * F);
	ck_assert(!strcmp(l.ops[i + 4].name, "act_cat_bwd") && l.ops[i + 4].bytes == 8 * F);
	ck_assert(!strcmp(l.ops[i + 5].name, "fc1_dgrad"));
	hs_oplist_clear(&l);
	c = cfg("megatron");
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	for (i = 0; i < l.n && strcmp(l.ops[i].name, "act"); i++)
		;
	ck_assert(i < l.n && l.ops[i].bytes == 6 * F && strcmp(l.ops[i + 1].name, "fc2") == 0);
	hs_oplist_free(&l);
}
END_TEST

/* The loss over T x V = 256 x 1000 logits. Megatron's fused kernel: reads bf16 logits and keeps fp32 exp
 * (2 + 8 per logit), backward reads fp32 and writes bf16 (4 + 2). Eager: logits.float() (2 + 4), log_softmax
 * (4 + 4), nll's gather (8 per token); backward nll's zero-filled fp32 gradient (4 per logit, 8 per token for
 * the scatter), log_softmax's backward (4 + 4 + 4), the cast back (4 + 2). */
START_TEST(cross_entropy_by_hand)
{
	hs_model m = gpt();
#define L (256 * 1000.0)
#define T 256.0
	hs_oplist l = {0};
	hs_layer_cfg c = cfg("megatron");
	hs_ops_head(&m, &c, HS_PH_FWD, &l);
	ck_assert(!strcmp(l.ops[l.n - 1].name, "ce") && l.ops[l.n - 1].bytes == 10 * L);
	hs_oplist_clear(&l);
	hs_ops_head(&m, &c, HS_PH_BWD_INPUT, &l);
	ck_assert(!strcmp(l.ops[0].name, "ce_bwd") && l.ops[0].bytes == 6 * L);
	hs_oplist_clear(&l);
	c = cfg("pytorch-amp");
	hs_ops_head(&m, &c, HS_PH_FWD, &l);
	const struct want fwd[] = {{"ln_f", 8 * N},	  {"ln_f_cast", 6 * N}, {"head_wcast", 1000 * 256 * 6.0},
					  {"head", K},		  {"ce_cast", 6 * L},	{"ce_log_softmax", 8 * L},
					  {"ce_nll", 8 * T}};
	check_list(&l, fwd, sizeof fwd / sizeof *fwd, "pytorch-amp head fwd");
	hs_oplist_clear(&l);
	hs_ops_head(&m, &c, HS_PH_BWD_INPUT, &l);
	const struct want bwd[] = {{"ce_nll_bwd", 4 * L + 8 * T}, {"ce_log_softmax_bwd", 12 * L},
					  {"ce_cast_bwd", 6 * L},	 {"head_dgrad", K},
					  {"ln_f_cast_bwd", 6 * N},	 {"ln_f_bwd", 12 * N},
					  {"ln_f_wgrad", 8 * N}};
	check_list(&l, bwd, sizeof bwd / sizeof *bwd, "pytorch-amp head bwd");
	hs_oplist_free(&l);
}
END_TEST
#undef L

/* The recipe adds kernels around the GEMMs, never GEMM work: the same GEMMs with the same FLOPs. */
START_TEST(gemms_do_not_depend_on_the_recipe)
{
	hs_model m = gpt();
	double fl[2] = {0};
	size_t ng[2] = {0};
	const char *r[2] = {"megatron", "pytorch-amp"};
	for (int k = 0; k < 2; k++) {
		hs_oplist l = {0};
		hs_layer_cfg c = cfg(r[k]);
		for (int ph = HS_PH_FWD; ph <= HS_PH_BWD_WEIGHT; ph++) {
			hs_ops_layer(&m, &c, 0, (enum hs_phase)ph, &l);
			hs_ops_head(&m, &c, (enum hs_phase)ph, &l);
		}
		for (size_t i = 0; i < l.n; i++)
			if (l.ops[i].kind == HS_OP_GEMM || l.ops[i].kind == HS_OP_ATTN)
				fl[k] += l.ops[i].flops, ng[k]++;
		hs_oplist_free(&l);
	}
	ck_assert(ng[0] == ng[1] && fl[0] == fl[1]);
	/* 6 x (12 h^2 + V h) x T + attention: 3 x the causal forward 4 b h s^2 d / 2 */
	double h = 256, V = 1000, attn = 3 * 4 * 2 * 4 * 128.0 * 128 * 64 / 2;
	ck_assert(fl[0] == 6 * (12 * h * h + V * h) * T + attn);
}
END_TEST

/* The optimizer step per recipe: Megatron clips (reads the fp32 gradients), updates 30 bytes per parameter
 * and clears its main-grad buffer; fused AdamW over fp32 parameters moves 28 and clears nothing. */
START_TEST(optimizer_by_recipe)
{
	hs_oplist l = {0};
	hs_layer_cfg c = cfg("pytorch-amp");
	hs_ops_optimizer(&c, 1e6, &l);
	ck_assert(l.n == 1 && l.ops[0].kind == HS_OP_OPTIMIZER && l.ops[0].bytes == 28e6);
	hs_oplist_clear(&l);
	c = cfg("megatron");
	c.grad_bytes = 2; /* training.grad_dtype: bf16 */
	hs_ops_optimizer(&c, 1e6, &l);
	ck_assert(l.n == 3 && l.ops[0].bytes == 2e6 && l.ops[1].bytes == 28e6 && l.ops[2].bytes == 2e6);
	hs_oplist_free(&l);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("recipe");
	TCase *t = tcase_create("core");
	tcase_add_test(t, names_match_the_table);
	tcase_add_test(t, megatron_layer_by_hand);
	tcase_add_test(t, pytorch_amp_layer_by_hand);
	tcase_add_test(t, swiglu_eager_and_fused);
	tcase_add_test(t, cross_entropy_by_hand);
	tcase_add_test(t, gemms_do_not_depend_on_the_recipe);
	tcase_add_test(t, optimizer_by_recipe);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
