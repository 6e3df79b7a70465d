#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/model.h"

/* Published sizes. Tolerance 3%: names round to two significant figures (megatron-1.7b is 1.652B: 1.65
 * rounds to 1.7, 2.8% away), papers round their shapes' counts the same way, and MLA in DeepSeek-V3 plus
 * the left-out QK-norm of Qwen3 are counted exactly but the published totals are rounded to 3 figures.
 * Where a precise count is published (released checkpoints), it is used instead of the name. */
static const struct {
	const char *name;
	double total, active; /* billions; active 0: dense */
	const char *src;
} published[] = {
	{"gpt3-1.3b", 1.3, 0, "Brown et al. 2020 Table 2.1"},
	{"gpt3-2.7b", 2.7, 0, "Brown et al. 2020 Table 2.1"},
	{"gpt3-6.7b", 6.7, 0, "Brown et al. 2020 Table 2.1"},
	{"gpt3-13b", 13.0, 0, "Brown et al. 2020 Table 2.1"},
	{"gpt3-175b", 175.0, 0, "Brown et al. 2020 Table 2.1"},
	{"megatron-1.7b", 1.7, 0, "Narayanan et al. 2021 Table 1"},
	{"megatron-3.6b", 3.6, 0, "Narayanan et al. 2021 Table 1"},
	{"megatron-7.5b", 7.5, 0, "Narayanan et al. 2021 Table 1"},
	{"megatron-18b", 18.4, 0, "Narayanan et al. 2021 Table 1 (18.4B)"},
	{"megatron-39b", 39.1, 0, "Narayanan et al. 2021 Table 1 (39.1B)"},
	{"megatron-76b", 76.1, 0, "Narayanan et al. 2021 Table 1 (76.1B)"},
	{"megatron-145b", 145.6, 0, "Narayanan et al. 2021 Table 1 (145.6B)"},
	{"megatron-310b", 310.1, 0, "Narayanan et al. 2021 Table 1 (310.1B)"},
	{"megatron-530b", 529.6, 0, "Narayanan et al. 2021 Table 1 (529.6B)"},
	{"megatron-1t", 1008.0, 0, "Narayanan et al. 2021 Table 1 (1008.0B)"},
	{"gpt-22b", 22.0, 0, "Korthikanti et al. 2022 Table 3"},
	{"gpt-175b", 175.0, 0, "Korthikanti et al. 2022 Table 3"},
	{"gpt-530b", 530.0, 0, "Korthikanti et al. 2022 Table 3"},
	{"gpt-1t", 1000.0, 0, "Korthikanti et al. 2022 Table 3"},
	{"llama2-7b", 6.74, 0, "Llama 2 checkpoint: 6,738,415,616"},
	{"llama2-13b", 13.0, 0, "Llama 2 checkpoint: 13,015,864,320"},
	{"llama2-70b", 69.0, 0, "Llama 2 checkpoint: 68,976,648,192"},
	{"llama3-8b", 8.03, 0, "Llama 3 checkpoint: 8,030,261,248"},
	{"llama3-70b", 70.6, 0, "Llama 3 checkpoint: 70,553,706,496"},
	{"llama3.1-405b", 405.9, 0, "Llama 3.1 checkpoint: 405.85B"},
	{"llama3-405b", 405.9, 0, "alias"},
	{"mixtral-8x7b", 46.7, 12.9, "Mistral AI, Mixtral of experts (2023-12-11)"},
	{"mixtral-8x22b", 141.0, 39.0, "Mistral AI, Cheaper, Better, Faster, Stronger (2024-04-17)"},
	{"deepseek-v3", 671.0, 37.0, "DeepSeek-V3 Technical Report, abstract"},
	{"qwen3-30b-a3b", 30.5, 3.3, "Qwen3 Technical Report Table 2 / model card"},
	{"qwen3-235b-a22b", 235.0, 22.0, "Qwen3 Technical Report Table 2 / model card"},
	/* active -1: not published to the precision the test asks (Qwen3-Next's "3B activated"; DeepSeek-V3.2's
	 * card repeats V3's figures) */
	{"qwen3-next-80b-a3b", 80.0, -1, "Qwen3-Next-80B-A3B model card: 80B total (79B non-embedding)"},
	{"gemma2-9b", 9.2417, 0, "Gemma 2 paper Table 2: 917,504,000 embedding + 8,324,201,984 non-embedding"},
	{"deepseek-v3.2-exp", 671.0, -1, "DeepSeek-V3.2-Exp: V3.1-Terminus's 671B plus the indexer"},
};

START_TEST(presets_match_published_sizes)
{
	int n = (int)(sizeof published / sizeof published[0]);
	for (int i = 0; i < n; i++) {
		hs_model m;
		ck_assert_msg(hs_model_preset(published[i].name, &m) == 0, "%s", published[i].name);
		double p = hs_model_params(&m) / 1e9;
		ck_assert_msg(fabs(p / published[i].total - 1) < 0.03, "%s: %.3fB vs %.3fB (%s)", published[i].name, p,
			      published[i].total, published[i].src);
		if (published[i].active > 0) {
			double a = hs_model_params_active(&m) / 1e9;
			ck_assert_msg(fabs(a / published[i].active - 1) < 0.03, "%s active: %.3fB vs %.3fB",
				      published[i].name, a, published[i].active);
		} else if (published[i].active == 0) {
			ck_assert(hs_model_params_active(&m) == hs_model_params(&m));
		}
	}
	/* every preset is in the golden table */
	int count = 0;
	for (const char *const *nm = hs_model_preset_names(); *nm; nm++)
		count++;
	ck_assert_int_eq(count, n);
}
END_TEST

START_TEST(exact_counts_from_shapes)
{
	hs_model m;
	/* Llama 2 7B: the released checkpoint holds exactly 6,738,415,616 parameters */
	ck_assert_int_eq(hs_model_preset("llama2-7b", &m), 0);
	ck_assert(hs_model_params(&m) == 6738415616.0);
	ck_assert_int_eq(hs_model_preset("llama3-8b", &m), 0);
	ck_assert(hs_model_params(&m) == 8030261248.0);
	/* Narayanan et al. 2021 eq. for GPT: 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) plus the final norm */
	ck_assert_int_eq(hs_model_preset("megatron-1.7b", &m), 0);
	double l = m.layers, h = m.hidden, V = m.vocab, s = m.seq_len;
	double nar = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
	ck_assert(fabs(hs_model_params(&m) - (nar + 2 * h)) < 1);
	/* layer count: GPT layer 12h^2 + 13h */
	ck_assert(hs_model_params_layer(&m, 0) == 12 * h * h + 13 * h);
	/* embedding tied: V h + s h */
	ck_assert(hs_model_params_embedding(&m) == V * h + s * h);
}
END_TEST

START_TEST(matmul_params)
{
	hs_model m;
	hs_model_preset("gpt3-175b", &m);
	double h = m.hidden;
	ck_assert(hs_model_params_matmul_active(&m) == 12 * h * h * m.layers + m.vocab * h);
	hs_model_preset("mixtral-8x7b", &m);
	/* per layer: attention + router + 2 of 8 experts; + output projection */
	double attn = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2, ex = 3.0 * 4096 * 14336;
	ck_assert(hs_model_params_matmul_active(&m) == 32 * (attn + 8 * 4096.0 + 2 * ex) + 32000.0 * 4096);
}
END_TEST

START_TEST(layer_rank_params)
{
	hs_model m;
	hs_model_preset("gpt3-175b", &m);
	double sum = 0;
	for (int r = 0; r < 8; r++)
		sum += hs_model_params_layer_rank(&m, 0, 8, 1, NULL);
	/* everything splits except the two LayerNorms and the row-parallel biases (proj, fc2) */
	double h = m.hidden;
	ck_assert(fabs(sum - (hs_model_params_layer(&m, 0) + 7 * (4 * h + 2 * h))) < 1);
	hs_model_preset("mixtral-8x7b", &m);
	double ex;
	double p = hs_model_params_layer_rank(&m, 0, 1, 4, &ex);
	ck_assert(ex == 2 * 3.0 * 4096 * 14336);
	ck_assert(p == hs_model_params_layer(&m, 0) - 6 * 3.0 * 4096 * 14336);
	/* KV replicated when tp > kv_heads: llama3-8b has 8 KV heads; tp 16 keeps one per rank */
	hs_model_preset("llama3-8b", &m);
	double p16 = hs_model_params_layer_rank(&m, 0, 16, 1, NULL);
	double want = 2 * 4096.0 + 4096.0 * (2 + 2) * 128 + 2 * 128.0 * 4096 + 3.0 * 4096 * 14336 / 16;
	ck_assert(fabs(p16 - want) < 1);
}
END_TEST

static int load(const char *text, hs_model *m, hs_err *err)
{
	hs_err_clear(err);
	hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "t.yaml", err);
	ck_assert_msg(d != NULL, "%s", err->msg);
	int rc = hs_model_from_yaml(hs_yaml_get(hs_yaml_root(d), "model"), "model", m, err);
	hs_yaml_free(d);
	return rc;
}

START_TEST(yaml_forms)
{
	hs_model m, ref;
	hs_err e;
	ck_assert_int_eq(load("model: llama3-8b\n", &m, &e), 0);
	hs_model_preset("llama3-8b", &ref);
	ck_assert(memcmp(&m, &ref, sizeof m) == 0);

	ck_assert_int_eq(load("model: {preset: llama3-8b, layers: 16, seq_len: 4096}\n", &m, &e), 0);
	ck_assert_int_eq(m.layers, 16);
	ck_assert_int_eq(m.seq_len, 4096);
	ck_assert_int_eq(m.kv_heads, 8);
	ck_assert_str_eq(m.name, "llama3-8b");

	/* the full shape is Llama 3 8B */
	ck_assert_int_eq(load("model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, "
			      "gated_mlp: true, tied_embeddings: false}\n",
			      &m, &e),
			 0);
	ck_assert(hs_model_params(&m) == hs_model_params(&ref));
	ck_assert_str_eq(m.name, "custom");

	/* a GPT shape defaults to the GPT family */
	ck_assert_int_eq(load("model: {name: mine, layers: 24, hidden: 2304, heads: 24, vocab: 51200}\n", &m, &e), 0);
	hs_model_preset("megatron-1.7b", &ref);
	ck_assert(hs_model_params(&m) == hs_model_params(&ref));
	ck_assert_str_eq(m.name, "mine");

	/* MoE */
	ck_assert_int_eq(load("model: {layers: 4, hidden: 1024, heads: 8, kv_heads: 2, vocab: 1000, gated_mlp: true, "
			      "experts: 16, top_k: 2, shared_experts: 1, expert_ffn: 512, dense_layers: 1}\n",
			      &m, &e),
			 0);
	ck_assert_int_eq(m.experts, 16);
	ck_assert(!hs_model_layer_is_moe(&m, 0) && hs_model_layer_is_moe(&m, 1));
}
END_TEST

START_TEST(yaml_errors)
{
	hs_model m;
	hs_err e;
	ck_assert_int_eq(load("model: llama3-9b\n", &m, &e), -1);
	ck_assert_int_eq(e.code, HS_EINPUT);
	ck_assert_msg(strstr(e.msg, "t.yaml:1:8: model: 'llama3-9b' is not a known model preset (did you mean "
				    "'llama3-8b'?)") != NULL,
		      "%s", e.msg);
	ck_assert_int_eq(load("model: {preset: gpt3-175B}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.preset") && strstr(e.msg, "'gpt3-175b'"), "%s", e.msg);
	ck_assert_int_eq(load("model:\n  preset: llama3-8b\n  layer: 4\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "t.yaml:3:3: model.layer: unknown key (did you mean 'layers'?)"), "%s", e.msg);
	ck_assert_int_eq(load("model: {layers: 2, hidden: 100, heads: 3, vocab: 10}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.heads: 3 does not divide hidden (100)"), "%s", e.msg);
	ck_assert_int_eq(load("model: {layers: 2, hidden: 96, heads: 12, kv_heads: 5, vocab: 10}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.kv_heads: 5 does not divide heads (12)"), "%s", e.msg);
	ck_assert_int_eq(load("model: {hidden: 96, heads: 12, vocab: 10}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.layers: missing required key"), "%s", e.msg);
	ck_assert_int_eq(load("model: {preset: mixtral-8x7b, top_k: 9}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.top_k: 9 is out of range (expected 1 to experts = 8)"), "%s", e.msg);
	ck_assert_int_eq(load("model: {preset: llama3-8b, layers: 0}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.layers"), "%s", e.msg);
	ck_assert_int_eq(load("model: {preset: llama3-8b, top_k: 2}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.top_k: set on a dense model"), "%s", e.msg);
	ck_assert_int_eq(load("model: {preset: llama3-8b, norm: rms}\n", &m, &e), -1);
	ck_assert_msg(strstr(e.msg, "model.norm"), "%s", e.msg);
}
END_TEST

START_TEST(check_parallel)
{
	hs_model m;
	hs_err e = {0};
	hs_model_preset("llama3-8b", &m);
	ck_assert_int_eq(hs_model_check_parallel(&m, 8, 4, 2, 2, 1, 8192, &e), 0);
	ck_assert_int_eq(hs_model_check_parallel(&m, 16, 1, 1, 1, 1, 8192, &e), 0); /* KV replicated */
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 3, 1, 1, 1, 1, 8192, &e), -1);
	ck_assert_int_eq(e.code, HS_EINPUT);
	ck_assert_str_eq(e.msg, "llama3-8b: heads (32) not divisible by tp (3)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 3, 1, 1, 1, 8192, &e), -1);
	ck_assert_str_eq(e.msg, "llama3-8b: layers (32) not divisible by pp x virtual stages (3 x 1 = 3)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 4, 3, 1, 1, 8192, &e), -1);
	ck_assert_str_eq(e.msg, "llama3-8b: layers (32) not divisible by pp x virtual stages (4 x 3 = 12)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 1, 1, 1, 2, 8192, &e), -1);
	ck_assert_str_eq(e.msg, "llama3-8b: ep (2) > 1 on a dense model (no experts)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 1, 1, 3, 1, 8192, &e), -1);
	ck_assert_msg(strstr(e.msg, "seq_len (8192) not divisible by 2 x cp (2 x 3 = 6)"), "%s", e.msg);
	hs_model_preset("qwen3-30b-a3b", &m); /* 4 KV heads */
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 8, 1, 1, 1, 1, 4096, &e), 0);
	m.kv_heads = 8;
	m.heads = 24;
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 6, 1, 1, 1, 1, 4096, &e), -1);
	ck_assert_msg(strstr(e.msg, "kv_heads (8) and tp (6)"), "%s", e.msg);
	hs_model_preset("mixtral-8x7b", &m);
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 1, 1, 1, 16, 4096, &e), -1);
	ck_assert_str_eq(e.msg, "mixtral-8x7b: ep (16) larger than the number of experts (8)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 1, 1, 1, 1, 3, 4096, &e), -1);
	ck_assert_str_eq(e.msg, "mixtral-8x7b: experts (8) not divisible by ep (3)");
	hs_err_clear(&e);
	ck_assert_int_eq(hs_model_check_parallel(&m, 2, 1, 1, 1, 8, 4096, &e), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, presets_match_published_sizes);
	tcase_add_test(tc, exact_counts_from_shapes);
	tcase_add_test(tc, matmul_params);
	tcase_add_test(tc, layer_rank_params);
	tcase_add_test(tc, yaml_forms);
	tcase_add_test(tc, yaml_errors);
	tcase_add_test(tc, check_parallel);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
