/* Non-uniform data-parallel load: parallelism.dp_microbatches given or auto (models/build.c), with a slow
 * device (variability.slowdown) and with replicas on different GPU types. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: hetero\n"
	"cluster:\n"
	"  groups:\n"
	"%s"
	"model: {layers: 2, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 2048}\n"
	"training: {global_batch: 32, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: 1, dp: 4, dp_bucket: 1 TB%s}\n"
	"simulation: {collective_algorithm: ring}\n"
	"%s";

static const char *h100x4 = "    - {name: a, nodes: 1, gpus_per_node: 4, gpu: H100-SXM-80GB}\n";

static int sim(const char *groups, const char *par, const char *var, hs_sim *out, hs_err *err)
{
	char text[4096], path[64];
	snprintf(text, sizeof text, base, groups, par, var);
	hs_test_write_tmp(path, sizeof path, "hetero", text);
	int rc = hs_simulate(path, NULL, -1, NULL, out, err);
	unlink(path);
	return rc;
}

/* Golden (extends test_variability's one_slow_device_bounds_dp_step): device 1 at half speed bounds the
 * synchronous step; with dp_microbatches: auto it gets fewer micro-batches and the step is faster, though
 * still slower than with no slow device. */
START_TEST(auto_rebalances_a_slow_replica)
{
	const char *slow = "variability: {slowdown: [{gpus: 1, speed: 0.5}]}\n";
	hs_sim f, s, a;
	hs_err err = {0};
	ck_assert_msg(sim(h100x4, "", "", &f, &err) == 0, "%s", err.msg);
	ck_assert_msg(sim(h100x4, "", slow, &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(sim(h100x4, ", dp_microbatches: auto", slow, &a, &err) == 0, "%s", err.msg);
	ck_assert(s.r.step_time_s > 1.5 * f.r.step_time_s);
	/* replica speeds 1, 0.5, 1, 1: minimise max m_d t_d with sum 32 -> 9, 5, 9, 9 (5 x 2 = 10 >= 9) */
	ck_assert_int_eq(a.b.part.dp_mb[1], 5);
	ck_assert_int_eq(a.b.part.dp_mb[0] + a.b.part.dp_mb[1] + a.b.part.dp_mb[2] + a.b.part.dp_mb[3], 32);
	ck_assert(a.b.part.uneven_dp);
	ck_assert_msg(a.r.step_time_s < 0.8 * s.r.step_time_s && a.r.step_time_s > f.r.step_time_s,
		      "rebalanced %g, unbalanced %g, no slow device %g", a.r.step_time_s, s.r.step_time_s,
		      f.r.step_time_s);
	/* the slow replica no longer makes the others wait as long */
	ck_assert(a.r.reps[0].straggler_wait_s < 0.5 * s.r.reps[0].straggler_wait_s);
	hs_sim_free(&f);
	hs_sim_free(&s);
	hs_sim_free(&a);
}
END_TEST

/* On a uniform cluster auto is uniform and keeps the symmetric (one rep per stage) simulation. */
START_TEST(uniform_auto_is_uniform)
{
	hs_sim u, a;
	hs_err err = {0};
	ck_assert(sim(h100x4, "", "", &u, &err) == 0);
	ck_assert_msg(sim(h100x4, ", dp_microbatches: auto", "", &a, &err) == 0, "%s", err.msg);
	for (int d = 0; d < 4; d++)
		ck_assert_int_eq(a.b.part.dp_mb[d], 8);
	ck_assert_int_eq(a.r.nreps, 1);
	ck_assert(a.r.step_time_s == u.r.step_time_s);
	hs_sim_free(&u);
	hs_sim_free(&a);
}
END_TEST

/* Replicas on H100 and A100: the H100 replicas take more micro-batches, and given counts are honoured. */
START_TEST(mixed_types_and_given_counts)
{
	const char *mixed = "    - {name: h, nodes: 1, gpus_per_node: 2, gpu: H100-SXM-80GB}\n"
			    "    - {name: a, nodes: 1, gpus_per_node: 2, gpu: A100-SXM-80GB}\n";
	hs_sim u, a, g;
	hs_err err = {0};
	ck_assert(sim(mixed, "", "", &u, &err) == 0);
	ck_assert_msg(sim(mixed, ", dp_microbatches: auto", "", &a, &err) == 0, "%s", err.msg);
	ck_assert(a.b.part.dp_mb[0] > a.b.part.dp_mb[3]);
	ck_assert(a.r.step_time_s < u.r.step_time_s);
	ck_assert_msg(sim(mixed, ", dp_microbatches: [10, 10, 6, 6]", "", &g, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(g.b.part.dp_mb[2], 6);
	ck_assert_int_eq(g.r.nreps, 4);
	hs_sim_free(&u);
	hs_sim_free(&a);
	hs_sim_free(&g);
}
END_TEST

START_TEST(bad_dp_microbatches)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim(h100x4, ", dp_microbatches: [10, 10, 6, 5]", "", &s, &err) != 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, ":7:") && strstr(err.msg, "parallelism.dp_microbatches: the replicas' "
								"micro-batches sum to 31, but global_batch / "
								"micro_batch = 32 / 1 = 32"),
		      "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(h100x4, ", dp_microbatches: [8, 8]", "", &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "expected auto or a list of 4") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(h100x4, ", dp_microbatches: auto, zero: 3", "", &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "ZeRO-3") != NULL, "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hetero");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, auto_rebalances_a_slow_replica);
	tcase_add_test(t, uniform_auto_is_uniform);
	tcase_add_test(t, mixed_types_and_given_counts);
	tcase_add_test(t, bad_dp_microbatches);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
