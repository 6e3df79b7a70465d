/* Layer stacks that mix kinds (models/mixer.h): each kind's FLOPs against closed forms derived by hand from
 * its paper's algorithm, a window >= the sequence is full attention exactly, parameters against a published
 * count, and the YAML errors (unknown kind, empty pattern, a pattern that does not divide the layers). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "models/memory.h"
#include "models/mixer.h"
#include "models/model.h"
#include "models/ops.h"

static hs_layer_cfg cfg(int tp, int seq)
{
	return (hs_layer_cfg){.tp = tp, .cp = 1, .ep = 1, .micro_batch = 2, .seq_len = seq, .dtype = HS_BF16,
			      .flash_attention = 1};
}

/* FLOPs of the ops whose name starts with one of the prefixes, summed, in phase ph */
static double flops_of(const hs_model *m, const hs_layer_cfg *c, int layer, enum hs_phase ph,
		       const char *const *prefix)
{
	hs_oplist l = {0};
	hs_ops_layer(m, c, layer, ph, &l);
	double f = 0;
	for (size_t i = 0; i < l.n; i++)
		for (int j = 0; prefix[j]; j++)
			if (strncmp(l.ops[i].name, prefix[j], strlen(prefix[j])) == 0) {
				f += l.ops[i].flops;
				break;
			}
	hs_oplist_free(&l);
	return f;
}

static int same_lists(const hs_model *a, int la, const hs_model *b, int lb, const hs_layer_cfg *c, enum hs_phase ph)
{
	hs_oplist x = {0}, y = {0};
	hs_ops_layer(a, c, la, ph, &x);
	hs_ops_layer(b, c, lb, ph, &y);
	int same = x.n == y.n;
	for (size_t i = 0; same && i < x.n; i++) {
		const hs_op *p = &x.ops[i], *q = &y.ops[i];
		same = p->kind == q->kind && strcmp(p->name, q->name) == 0 && p->flops == q->flops &&
		       p->bytes == q->bytes && p->s == q->s && p->s_kv == q->s_kv && p->causal == q->causal;
	}
	hs_oplist_free(&x);
	hs_oplist_free(&y);
	return same;
}

START_TEST(causal_keys_closed_form)
{
	ck_assert(hs_mixer_causal_keys(4096, 0) == 0.5 * 4096 * 4096);
	ck_assert(hs_mixer_causal_keys(4096, 4096) == 0.5 * 4096 * 4096);
	ck_assert(hs_mixer_causal_keys(4096, 8192) == 0.5 * 4096 * 4096);
	ck_assert(hs_mixer_causal_keys(4096, 1024) == 4096.0 * 1024 - 0.5 * 1024 * 1024);
	/* continuous at the window = s, increasing in the window */
	ck_assert(fabs(hs_mixer_causal_keys(4096, 4095.999) - hs_mixer_causal_keys(4096, 4096)) < 1e-2);
	ck_assert(hs_mixer_causal_keys(4096, 1000) < hs_mixer_causal_keys(4096, 2000));
}
END_TEST

/* Gemma 2: layer 0 sliding, layer 1 full. A window >= the sequence gives full attention's ops exactly in
 * every phase; a shorter window does 4 b h d (s w - w^2/2) FLOPs forward in its attention kernel. */
START_TEST(sliding_window_ge_seq_is_full)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("gemma2-9b", &m), 0);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 0), HS_MIX_SLIDING);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 41), HS_MIX_FULL);
	static const enum hs_phase ph[] = {HS_PH_FWD, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT, HS_PH_RECOMPUTE};
	for (int s = 1024; s <= 4096; s *= 2) { /* window 4096 >= s */
		hs_layer_cfg c = cfg(2, s);
		c.recompute = HS_RC_SELECTIVE;
		for (int k = 0; k < 4; k++)
			ck_assert_msg(same_lists(&m, 0, &m, 1, &c, ph[k]), "seq %d phase %d", s, k);
		ck_assert(hs_memory_layer_activations_at(&m, &c, 0) == hs_memory_layer_activations_at(&m, &c, 1));
	}
	/* model FLOPs: at seq <= window the pattern changes nothing */
	hs_model full = m;
	full.npattern = 0;
	ck_assert(fabs(hs_model_flops_per_step(&m, 1e6, 4096, 1) / hs_model_flops_per_step(&full, 1e6, 4096, 1) - 1) <
		  1e-12);
	/* seq 8192 > window 4096: the kernel's FLOPs, by hand */
	hs_layer_cfg c = cfg(2, 8192);
	double b = 2, h = 16 / 2, d = 256, s = 8192, w = 4096;
	double want = 4 * b * h * d * (s * w - w * w / 2);
	ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_FWD, (const char *const[]){"attn", NULL}) / want - 1) < 1e-12);
	ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_BWD_INPUT, (const char *const[]){"attn", NULL}) / (2 * want) - 1) <
		  1e-12);
	/* the full layer beside it does 4 b h d s^2 / 2 */
	ck_assert(fabs(flops_of(&m, &c, 1, HS_PH_FWD, (const char *const[]){"attn", NULL}) / (2 * b * h * d * s * s) -
		       1) < 1e-12);
	/* KV cache: the window's keys, not the sequence's */
	ck_assert(hs_mixer_state_bytes(&m, 0, 8192, 2) == 4096.0 * 2 * 8 * 256 * 2);
	ck_assert(hs_mixer_state_bytes(&m, 1, 8192, 2) == 8192.0 * 2 * 8 * 256 * 2);
}
END_TEST

/* Qwen3-Next's Gated DeltaNet layer: the chunked delta rule's products per token and value head,
 * 6 dk dv + C (6 dk + 4 dv) + C^2 / 3 (derived in mixer_linear.c from arXiv 2406.06484 section 3.2), and
 * the projections' 2 x tokens x weights; backward does twice the core's forward. */
START_TEST(gated_deltanet_flops)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("qwen3-next-80b-a3b", &m), 0);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 0), HS_MIX_LINEAR);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 3), HS_MIX_FULL);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 46), HS_MIX_LINEAR);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 47), HS_MIX_FULL);
	for (int tp = 1; tp <= 4; tp *= 2) {
		hs_layer_cfg c = cfg(tp, 4096);
		double tok = 2 * 4096, hv = 32.0 / tp, dk = 128, dv = 128, C = 64, h = 2048;
		double core = tok * hv * (6 * dk * dv + C * (6 * dk + 4 * dv) + C * C / 3);
		const char *const cp[] = {"gdn_qk_kk", "gdn_wy_", "gdn_state", NULL};
		ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_FWD, cp) / core - 1) < 1e-12);
		ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_BWD_INPUT, cp) / (2 * core) - 1) < 1e-12);
		/* in_proj_qkvz: 2K + 2V outputs, in_proj_ba: 2 Hv, out_proj: V -> hidden (per rank) */
		double K = 16.0 * 128 / tp, V = 32.0 * 128 / tp;
		double proj = 2 * tok * h * (2 * K + 2 * V + 2 * hv) + 2 * tok * V * h;
		ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_FWD, (const char *const[]){"gdn_in", "gdn_out", NULL}) / proj -
			       1) < 1e-12);
		ck_assert(fabs(hs_mixer_params_matrix(&m, 0, tp) - (h * (2 * K + 2 * V + 2 * hv) + V * h)) < 1e-6);
	}
	/* no attention kernel in a linear layer, and the layer's params do not depend on seq */
	hs_layer_cfg c = cfg(1, 4096);
	ck_assert(flops_of(&m, &c, 0, HS_PH_FWD, (const char *const[]){"attn", "qkv", NULL}) == 0);
	ck_assert(flops_of(&m, &c, 3, HS_PH_FWD, (const char *const[]){"attn", NULL}) > 0);
	/* the recurrent state: 32 heads x 128 x 128 fp32 plus 3 conv inputs of 2K + V = 8192 channels */
	ck_assert(hs_mixer_state_bytes(&m, 0, 1e6, 2) == 4.0 * 32 * 128 * 128 + 3.0 * 8192 * 2);
	/* per-rank params over tp ranks: the split parts add up; the norm weight (d_v) is on every rank */
	double p1 = hs_model_params_layer_rank(&m, 0, 1, 1, NULL), p4 = hs_model_params_layer_rank(&m, 0, 4, 1, NULL);
	ck_assert(fabs(p1 - hs_model_params_layer(&m, 0)) < 1e-6 * p1);
	ck_assert(p4 < p1 && p4 > p1 / 4);
	/* Qwen3-Next: 79B non-embedding (model card), our count leaves out the attention output gate (12 x
	 * 8.4M) and the MTP layer, within the card's rounding to 1B */
	ck_assert(fabs((hs_model_params(&m) - hs_model_params_embedding(&m)) / 1e9 - 79) < 0.5);
}
END_TEST

static int read_model(const char *text, hs_model *m, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "t.yaml", err);
	ck_assert_msg(d != NULL, "%s", err->msg);
	int rc = hs_model_from_yaml(hs_yaml_get(hs_yaml_root(d), "model"), "model", m, err);
	hs_yaml_free(d);
	return rc;
}

/* Mamba-2 layers from YAML: the SSD products per token, H (2 Q P + 4 N P) + 2 Q N G (arXiv 2405.21060
 * section 6, derived in mixer_mamba2.c), the projections' FLOPs and the state. */
START_TEST(mamba2_flops)
{
	hs_model m;
	hs_err err = {0};
	ck_assert_msg(read_model("model:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  vocab: 1000\n  gated_mlp: true\n"
				 "  layer_pattern: [mamba2, mamba2, mamba2, full]\n  mamba: {d_state: 64, groups: 2}\n",
				 &m, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(hs_model_layer_mixer(&m, 2), HS_MIX_MAMBA2);
	for (int tp = 1; tp <= 2; tp++) {
		hs_layer_cfg c = cfg(tp, 2048);
		double tok = 2 * 2048, din = 2 * 1024.0 / tp, P = 64, H = din / P, N = 64, G = 2.0 / tp, Q = 256;
		double core = tok * (H * (2 * Q * P + 4 * N * P) + 2 * Q * N * G);
		ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_FWD, (const char *const[]){"ssd_cb", "ssd_intra", "ssd_states",
										   "ssd_out", NULL}) / core - 1) < 1e-12);
		double proj = 2 * tok * 1024 * (2 * din + 2 * G * N + H) + 2 * tok * din * 1024;
		ck_assert(fabs(flops_of(&m, &c, 0, HS_PH_FWD, (const char *const[]){"ssm_in", "ssm_out", NULL}) / proj - 1) <
			  1e-12);
	}
	/* state: 32 heads x 64 x 64 fp32 + 3 conv inputs of d_inner + 2 G N = 2304 channels */
	ck_assert(hs_mixer_state_bytes(&m, 1, 1e6, 2) == 4.0 * 32 * 64 * 64 + 3.0 * 2304 * 2);
	/* a mamba2 layer stores less than the full-attention layer at long context with materialised scores
	 * (none), and something positive */
	hs_layer_cfg c = cfg(1, 2048);
	ck_assert(hs_memory_layer_activations_at(&m, &c, 0) > 0);
}
END_TEST

/* DSA (DeepSeek-V3.2-Exp): the indexer's scores, H_I d_I s^2 per sequence, and the attention over the top-k
 * tokens: 4 b h d (s k - k^2/2); at s <= k the attention is full attention's. */
START_TEST(dsa_flops)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("deepseek-v3.2-exp", &m), 0);
	hs_layer_cfg c = cfg(8, 8192);
	double b = 2, s = 8192, k = 2048, h = 128 / 8, d = (192 + 128) / 2.0;
	ck_assert(fabs(flops_of(&m, &c, 5, HS_PH_FWD, (const char *const[]){"dsa_idx_score", NULL}) /
		       (b * 64 * 128 * s * s) - 1) < 1e-12);
	ck_assert(fabs(flops_of(&m, &c, 5, HS_PH_FWD, (const char *const[]){"attn", NULL}) /
		       (4 * b * h * d * (s * k - k * k / 2)) - 1) < 1e-12);
	/* seq 2048 = top-k: the attention kernel is DeepSeek-V3's */
	hs_model v3;
	ck_assert_int_eq(hs_model_preset("deepseek-v3", &v3), 0);
	c = cfg(8, 2048);
	ck_assert(flops_of(&m, &c, 5, HS_PH_FWD, (const char *const[]){"attn", NULL}) ==
		  flops_of(&v3, &c, 5, HS_PH_FWD, (const char *const[]){"attn", NULL}));
	/* the indexer's weights on top of V3's: 1536 x 64 x 128 + 7168 x (128 + 64) + the k norm's 128 */
	double extra = 1536.0 * 64 * 128 + 7168.0 * (128 + 64) + 128;
	ck_assert(fabs(hs_model_params_layer(&m, 5) - hs_model_params_layer(&v3, 5) - extra) < 1e-3);
}
END_TEST

/* Gemma 2 9B against the paper's Table 2 count, exactly: 8,324,201,984 non-embedding parameters, of which
 * hetsim leaves out the two post-norms per layer (42 x 2 x 3584) */
START_TEST(gemma2_count)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("gemma2-9b", &m), 0);
	ck_assert(hs_model_params_embedding(&m) == 917504000.0);
	ck_assert(hs_model_params(&m) - hs_model_params_embedding(&m) + 42.0 * 2 * 3584 == 8324201984.0);
}
END_TEST

static void bad(const char *text, const char *want)
{
	hs_model m;
	hs_err err = {0};
	ck_assert(read_model(text, &m, &err) != 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
}

START_TEST(bad_patterns)
{
	const char *pre = "model:\n  preset: llama3-8b\n";
	char t[512];
	snprintf(t, sizeof t, "%s  layer_pattern: [full, slidng]\n", pre);
	bad(t, "t.yaml:3:25: model.layer_pattern[1]: 'slidng' is not a layer kind (expected one of full, sliding, "
	       "linear, mamba2, dsa; did you mean 'sliding'?)");
	snprintf(t, sizeof t, "%s  layer_pattern: []\n", pre);
	bad(t, "t.yaml:3:18: model.layer_pattern: empty");
	snprintf(t, sizeof t, "%s  layer_pattern: [full, full, sliding]\n  window: 4096\n", pre);
	bad(t, "t.yaml:3:18: model.layer_pattern: 3 kinds do not divide layers (32)");
	snprintf(t, sizeof t, "%s  layer_pattern: [full, sliding]\n", pre);
	bad(t, "t.yaml:3:18: model.layer_pattern: window: missing with a sliding layer");
	snprintf(t, sizeof t, "%s  layer_pattern: [linear, full]\n", pre);
	bad(t, "model.layer_pattern: linear_attention: k_heads, v_heads");
	snprintf(t, sizeof t, "%s  layer_pattern: [mamba2, full]\n  mamba: {d_stat: 64}\n", pre);
	bad(t, "t.yaml:4:11: model.mamba.d_stat");
	snprintf(t, sizeof t, "%s  layer_pattern: full\n", pre);
	bad(t, "model.layer_pattern: not a list");
	/* and the parallel checks: heads of a linear layer not divisible by tp, cp with non-full layers */
	hs_model m;
	hs_err err = {0};
	ck_assert_int_eq(hs_model_preset("qwen3-next-80b-a3b", &m), 0);
	ck_assert(hs_model_check_parallel(&m, 2, 4, 1, 1, 8, 4096, &err) == 0);
	ck_assert(hs_model_check_parallel(&m, 1, 4, 1, 2, 8, 4096, &err) != 0);
	ck_assert_msg(strstr(err.msg, "cp (2) > 1 with linear layers") != NULL, "%s", err.msg);
	m.lin_k_heads = 6;
	m.lin_v_heads = 12;
	hs_err_clear(&err);
	ck_assert(hs_model_check_parallel(&m, 4, 4, 1, 1, 8, 4096, &err) != 0);
	ck_assert_msg(strstr(err.msg, "linear_attention heads (k 6, v 12) not divisible by tp (4)") != NULL, "%s",
		      err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mixer");
	TCase *c = tcase_create("core");
	tcase_add_test(c, causal_keys_closed_form);
	tcase_add_test(c, sliding_window_ge_seq_is_full);
	tcase_add_test(c, gated_deltanet_flops);
	tcase_add_test(c, mamba2_flops);
	tcase_add_test(c, dsa_flops);
	tcase_add_test(c, gemma2_count);
	tcase_add_test(c, bad_patterns);
	suite_add_tcase(s, c);
	return s;
}

#include "tests/unit/check_main.h"
