/* Expert load imbalance (models/model.h, models/ops.c):
 * - the load factor: Zipf E / H(E, s) (uniform at s = 0), given shares E x max / sum;
 * - the expert GEMMs and the EP all-to-alls of a MoE layer grow by the factor; nothing else changes. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "models/model.h"
#include "models/ops.h"

START_TEST(load_factor)
{
	ck_assert(fabs(hs_model_expert_load_zipf(8, 0) - 1) < 1e-12);
	double h8 = 1 + 1 / 2. + 1 / 3. + 1 / 4. + 1 / 5. + 1 / 6. + 1 / 7. + 1 / 8.;
	ck_assert(fabs(hs_model_expert_load_zipf(8, 1) - 8 / h8) < 1e-12);
	double h = 0;
	for (int i = 1; i <= 8; i++)
		h += pow(i, -1.2);
	ck_assert(fabs(hs_model_expert_load_zipf(8, 1.2) - 8 / h) < 1e-12); /* 3.43 */
	ck_assert(fabs(hs_model_expert_load_zipf(8, 1.2) - 3.4290) < 1e-3);
	double sh[4] = {1, 1, 1, 1}, sk[4] = {0.4, 0.2, 0.2, 0.2};
	ck_assert(fabs(hs_model_expert_load_shares(sh, 4) - 1) < 1e-12);
	ck_assert(fabs(hs_model_expert_load_shares(sk, 4) - 1.6) < 1e-12);
}
END_TEST

START_TEST(imbalance_scales_experts_and_all_to_all)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("mixtral-8x7b", &m), 0);
	hs_layer_cfg c = {.tp = 1, .cp = 1, .ep = 8, .micro_batch = 1, .seq_len = 4096, .dtype = HS_BF16,
			  .flash_attention = 1};
	hs_oplist u = {0}, s = {0};
	hs_ops_layer(&m, &c, 1, HS_PH_FWD, &u);
	c.expert_load = 2.5;
	hs_ops_layer(&m, &c, 1, HS_PH_FWD, &s);
	ck_assert_uint_eq(u.n, s.n);
	int experts = 0, a2a = 0;
	for (size_t i = 0; i < u.n; i++) {
		const hs_op *a = &u.ops[i], *b = &s.ops[i];
		if (strncmp(a->name, "expert_", 7) == 0 && a->kind == HS_OP_GEMM) {
			experts++;
			ck_assert(fabs(b->flops - 2.5 * a->flops) < 1e-9 * b->flops);
			ck_assert(fabs(b->m - 2.5 * a->m) < 1e-9 * b->m);
		} else if (a->kind == HS_OP_COMM && a->group == HS_GROUP_EP) {
			a2a++;
			ck_assert(fabs(b->bytes - 2.5 * a->bytes) < 1e-9 * b->bytes);
		} else if (strncmp(a->name, "expert_", 7) != 0) {
			ck_assert(a->flops == b->flops && a->bytes == b->bytes);
		}
	}
	ck_assert_int_eq(experts, 2);
	ck_assert_int_eq(a2a, 2);
	hs_oplist_free(&u);
	hs_oplist_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("moe");
	TCase *t = tcase_create("imbalance");
	tcase_add_test(t, load_factor);
	tcase_add_test(t, imbalance_scales_experts_and_all_to_all);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
