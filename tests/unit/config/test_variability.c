/* Stragglers, noise and throttling (config/variability.c, sim/exec/exec.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: var\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}}\n"
	"model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024}\n"
	"training: {global_batch: 8, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: 1, dp: 4, dp_bucket: 1 TB}\n"
	"simulation: {collective_algorithm: ring, seed: %d}\n"
	"%s";

static int sim(const char *var, int seed, hs_sim *out, hs_err *err)
{
	char text[4096], path[64];
	snprintf(text, sizeof text, base, seed, var);
	hs_test_write_tmp(path, sizeof path, "var", text);
	int rc = hs_simulate(path, NULL, -1, NULL, out, err);
	unlink(path);
	return rc;
}

static double step(const char *var, int seed)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert_msg(sim(var, seed, &s, &err) == 0, "%s", err.msg);
	double t = s.r.step_time_s;
	hs_sim_free(&s);
	return t;
}

/* With no rebalancing, one device at half speed bounds a synchronous data-parallel step: the step equals the
 * step of a cluster where every device runs at half speed, and the others wait for it at the all-reduce. */
START_TEST(one_slow_device_bounds_dp_step)
{
	double fast = step("", 1);
	double one = step("variability: {slowdown: [{gpus: 1, speed: 0.5}]}\n", 1);
	double all = step("variability: {slowdown: [{gpus: 0-3, speed: 0.5}]}\n", 1);
	ck_assert_msg(fabs(one - all) < 1e-9 * all, "one slow %.12g, all slow %.12g", one, all);
	ck_assert(one > 1.5 * fast);
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim("variability: {slowdown: [{gpus: 1, speed: 0.5}]}\n", 1, &s, &err) == 0);
	ck_assert_int_eq(s.r.nreps, 4);
	/* the fast replicas wait for the slow one by the difference in their compute time */
	/* (the optimizer runs after the all-reduce, so its own slowdown is not waited for) */
	double slow_c = s.r.reps[1].compute_s - s.r.reps[1].optimizer_s;
	double fast_c = s.r.reps[0].compute_s - s.r.reps[0].optimizer_s;
	ck_assert_double_eq_tol(s.r.reps[1].straggler_wait_s, 0, 1e-12);
	ck_assert_msg(fabs(s.r.reps[0].straggler_wait_s - (slow_c - fast_c)) < 1e-9, "wait %g, compute gap %g",
		      s.r.reps[0].straggler_wait_s, slow_c - fast_c);
	hs_sim_free(&s);
}
END_TEST

START_TEST(noise_is_seeded_and_unbiased)
{
	const char *v = "variability: {steps: 400, noise: {distribution: lognormal, cv: 0.1}}\n";
	double clean = step("", 1);
	hs_sim a, b, c;
	hs_err err = {0};
	ck_assert(sim(v, 7, &a, &err) == 0);
	ck_assert(sim(v, 7, &b, &err) == 0);
	ck_assert(sim(v, 8, &c, &err) == 0);
	ck_assert_int_eq(a.r.steps, 400);
	for (int i = 0; i < 400; i++)
		ck_assert(a.r.step_times[i] == b.r.step_times[i]); /* same seed: identical */
	ck_assert(a.r.step_time_s != c.r.step_time_s);        /* another seed: another run */
	ck_assert(a.r.step_p99_s > a.r.step_p50_s && a.r.step_p50_s > a.r.step_min_s);
	/* the step waits for the slowest of 4 replicas, so its mean is above the noise-free step, but by much less
	 * than the per-op cv (each task sums many ops, and the task cv shrinks with their number) */
	ck_assert_msg(a.r.step_time_s > clean && a.r.step_time_s < 1.05 * clean, "noisy mean %g, clean %g",
		      a.r.step_time_s, clean);
	hs_sim_free(&a);
	hs_sim_free(&b);
	hs_sim_free(&c);
}
END_TEST

START_TEST(throttle_changes_rate_at_its_time)
{
	double t1 = step("", 1);
	hs_sim s;
	hs_err err = {0};
	char v[256];
	/* every device drops to 80% after 2.5 steps: steps 0-1 unaffected, step 2 partly (its tasks that start
	 * after the throttle are slower), 3-5 slower by up to 1/0.8 (collectives keep their speed) */
	snprintf(v, sizeof v, "variability: {steps: 6, throttle: [{gpus: 0-3, speed: 0.8, at: %.12g}]}\n", 2.5 * t1);
	ck_assert(sim(v, 1, &s, &err) == 0);
	for (int i = 0; i < 2; i++)
		ck_assert_double_eq_tol(s.r.step_times[i], t1, 1e-9);
	ck_assert(s.r.step_times[2] > t1 && s.r.step_times[2] < s.r.step_times[3]);
	for (int i = 3; i < 6; i++)
		ck_assert_msg(s.r.step_times[i] > 1.15 * t1, "step %d: %g vs %g", i, s.r.step_times[i], t1);
	hs_sim_free(&s);
}
END_TEST

START_TEST(bad_variability)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim("variability: {slowdown: [{gpus: 9, speed: 0.5}]}\n", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, ":10:") && strstr(err.msg, "variability.slowdown[0].gpus") &&
			      strstr(err.msg, "outside the cluster's devices 0-3"),
		      "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim("variability: {slowdown: [{gpus: 1, speed: 0}]}\n", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "speed") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim("variability: {noise: {distribution: lognormall, cv: 0.1}}\n", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "did you mean 'lognormal'") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim("variability: {stepz: 3}\n", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "did you mean 'steps'") != NULL, "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("variability");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, one_slow_device_bounds_dp_step);
	tcase_add_test(t, noise_is_seeded_and_unbiased);
	tcase_add_test(t, throttle_changes_rate_at_its_time);
	tcase_add_test(t, bad_variability);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
