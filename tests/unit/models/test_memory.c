#include <check.h>
#include <math.h>

#include "models/memory.h"

static int approx(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* Korthikanti et al. 2022: a GPT layer with materialised scores (the paper's setting). */
START_TEST(korthikanti_equations)
{
	hs_model m;
	hs_model_preset("gpt-22b", &m);
	double s = 2048, b = 4, h = m.hidden, a = m.heads;
	static const int tps[] = {1, 2, 8};
	for (int i = 0; i < 3; i++) {
		double t = tps[i];
		hs_layer_cfg c = {.tp = tps[i], .cp = 1, .ep = 1, .micro_batch = 4, .seq_len = 2048, .dtype = HS_BF16,
				  .flash_attention = 0};
		/* Eq. 2 (t = 1: Eq. 1) */
		double eq = s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
		ck_assert_msg(approx(hs_memory_layer_activations(&m, &c), eq), "t %g: %g vs %g", t,
			      hs_memory_layer_activations(&m, &c), eq);
		/* Eq. 4: sequence parallelism */
		c.sequence_parallel = 1;
		ck_assert(approx(hs_memory_layer_activations(&m, &c), s * b * h / t * (34 + 5 * a * s / h)));
		/* Eq. 6: selective recompute + SP */
		c.recompute = HS_RC_SELECTIVE;
		ck_assert(approx(hs_memory_layer_activations(&m, &c), 34 * s * b * h / t));
		c.sequence_parallel = 0;
		ck_assert(approx(hs_memory_layer_activations(&m, &c), s * b * h * (10 + 24 / t)));
		/* full recompute: 2 s b h */
		c.recompute = HS_RC_FULL;
		ck_assert(approx(hs_memory_layer_activations(&m, &c), 2 * s * b * h));
		/* flash attention stores no scores: as selective */
		c.recompute = HS_RC_NONE;
		c.flash_attention = 1;
		ck_assert(approx(hs_memory_layer_activations(&m, &c), s * b * h * (10 + 24 / t)));
	}
}
END_TEST

START_TEST(generalised_layers)
{
	/* Llama: no dropout masks, GQA, SwiGLU: 2sb(2h + h + h) + 2sb(q + kv + kv + q) + 2sb(3 f) */
	hs_model m;
	hs_model_preset("llama3-8b", &m);
	hs_layer_cfg c = {.tp = 1, .cp = 1, .ep = 1, .micro_batch = 1, .seq_len = 8192, .dtype = HS_BF16,
			  .flash_attention = 1};
	double s = 8192, h = 4096, q = 4096, kv = 1024, f = 14336;
	double want = 2 * s * (4 * h + 2 * q + 2 * kv + 3 * f);
	ck_assert(approx(hs_memory_layer_activations(&m, &c), want));
	/* context parallelism divides the tokens */
	c.cp = 4;
	ck_assert(approx(hs_memory_layer_activations(&m, &c), want / 4));
	/* MoE layer larger than its dense counterpart would be with top_k copies */
	hs_model_preset("mixtral-8x7b", &m);
	c.cp = 1;
	c.seq_len = 4096;
	double moe = hs_memory_layer_activations(&m, &c);
	m.experts = 0;
	m.top_k = 0;
	double dense = hs_memory_layer_activations(&m, &c);
	ck_assert(moe > dense);
}
END_TEST

/* Rajbhandari et al. 2020 (ZeRO), section 5: mixed-precision Adam, K = 12:
 * baseline (2 + 2 + K) Psi; P_os 2Psi + 2Psi + K Psi / Nd; P_os+g 2Psi + (2 + K) Psi / Nd; P_os+g+p
 * (2 + 2 + K) Psi / Nd. */
START_TEST(zero_stages)
{
	hs_model m;
	hs_model_preset("gpt3-6.7b", &m);
	double psi = hs_model_params(&m), nd = 64, K = 12;
	double want[4] = {(2 + 2 + K) * psi, 2 * psi + 2 * psi + K * psi / nd, 2 * psi + (2 + K) * psi / nd,
			  (2 + 2 + K) * psi / nd};
	for (int z = 0; z <= 3; z++) {
		/* the paper counts fp16 gradients (2 bytes): training.grad_dtype bf16 */
		hs_mem_cfg c = {.layer = {.tp = 1, .cp = 1, .ep = 1, .micro_batch = 1, .seq_len = 2048,
					  .dtype = HS_BF16, .flash_attention = 1, .grad_bytes = 2},
				.pp = 1, .dp = 64, .zero_stage = z, .layers_on_rank = m.layers, .first_stage = 1,
				.last_stage = 1, .in_flight = 1};
		hs_mem r;
		hs_memory_rank(&m, &c, &r);
		ck_assert_msg(approx(r.weights + r.grads + r.optimizer, want[z]), "zero %d: %g vs %g", z,
			      r.weights + r.grads + r.optimizer, want[z]);
		ck_assert(approx(r.total, r.weights + r.grads + r.optimizer + r.activations + r.logits +
						 r.comm_buffers));
	}
	/* the paper's example: Psi = 7.5B, Nd = 64: 120 GB, 31.4 GB, 16.6 GB, 1.88 GB */
	double p = 7.5e9;
	ck_assert(fabs((2 * p + 2 * p + K * p / 64) / 1e9 - 31.4) < 0.1);
	ck_assert(fabs((2 * p + (2 + K) * p / 64) / 1e9 - 16.6) < 0.1);
	ck_assert(fabs((16 * p / 64) / 1e9 - 1.88) < 0.01);
}
END_TEST

START_TEST(rank_memory_parts)
{
	hs_model m;
	hs_model_preset("gpt-175b", &m);
	/* Korthikanti Table 3 / 5: 175B on tp 8, pp 8, interleaved (3 chunks), selective + SP */
	hs_mem_cfg c = {.layer = {.tp = 8, .cp = 1, .ep = 1, .sequence_parallel = 1, .micro_batch = 1,
				  .seq_len = 2048, .dtype = HS_BF16, .recompute = HS_RC_SELECTIVE,
				  .flash_attention = 0},
			.pp = 8, .dp = 1, .layers_on_rank = 12, .first_stage = 1, .last_stage = 0, .in_flight = 8,
			.vstages = 1};
	hs_mem r;
	hs_memory_rank(&m, &c, &r);
	double sbh = 2048.0 * 12288;
	/* 12 layers x 34 sbh / t x 8 in flight + the embedding dropout mask */
	ck_assert(approx(r.activations, 12 * 34 * sbh / 8 * 8 + sbh / 8 * 8));
	ck_assert(r.logits == 0);
	double params = 12 * hs_model_params_layer_rank(&m, 0, 8, 1, NULL) + 51200.0 * 12288 / 8 + 2048.0 * 12288;
	ck_assert(approx(r.weights, 2 * params));
	ck_assert(approx(r.optimizer, 12 * params));
	/* last stage: logits 4 s b (h / t + V / t) with SP */
	c.first_stage = 0;
	c.last_stage = 1;
	hs_memory_rank(&m, &c, &r);
	ck_assert(approx(r.logits, 4 * 2048.0 * (12288.0 / 8 + 51200.0 / 8)));
	/* interleaving: in_flight counts chunks of layers_on_rank / vstages layers */
	c.vstages = 3;
	c.in_flight = 12;
	hs_mem r3;
	hs_memory_rank(&m, &c, &r3);
	ck_assert(approx(r3.activations, 12 * 34 * sbh / 8 * 12 / 3));
	/* full recompute adds one layer's working set */
	c.vstages = 1;
	c.in_flight = 8;
	c.layer.recompute = HS_RC_FULL;
	hs_memory_rank(&m, &c, &r);
	hs_layer_cfg none = c.layer;
	none.recompute = HS_RC_NONE;
	ck_assert(approx(r.activations, 12 * 2 * sbh / 8 * 8 + hs_memory_layer_activations(&m, &none)));
}
END_TEST

START_TEST(moe_expert_sharding)
{
	hs_model m;
	hs_model_preset("mixtral-8x7b", &m);
	hs_mem_cfg c = {.layer = {.tp = 1, .cp = 1, .ep = 8, .micro_batch = 1, .seq_len = 4096, .dtype = HS_BF16,
				  .flash_attention = 1},
			.pp = 1, .dp = 8, .zero_stage = 1, .layers_on_rank = 32, .first_stage = 1, .last_stage = 1,
			.in_flight = 1};
	hs_mem r;
	hs_memory_rank(&m, &c, &r);
	double ex = 32 * 3.0 * 4096 * 14336; /* one expert per rank per layer */
	double dense = hs_model_params(&m) - 8 * ex;
	/* experts: expert-data-parallel group dp / ep = 1; dense: dp = 8 */
	ck_assert(approx(r.weights, 2 * (dense + ex)));
	ck_assert(approx(r.optimizer, 12 * (dense / 8 + ex)));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, korthikanti_equations);
	tcase_add_test(tc, generalised_layers);
	tcase_add_test(tc, zero_stages);
	tcase_add_test(tc, rank_memory_parts);
	tcase_add_test(tc, moe_expert_sharding);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
