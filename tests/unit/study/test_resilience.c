/* Failures and checkpoints (sim/study/resilience.c): closed forms and Young/Daly. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/study/resilience.h"

static hs_res_job job(void)
{
	return (hs_res_job){.gpus = 16384, .nodes = 2048, .links = 16384, .step_s = 2, .tokens_per_step = 1.6e7,
			    .state_bytes = 1e12, .seed = 5};
}

/* With no failures, goodput is throughput minus checkpoint stalls: tau / (tau + delta) when the horizon holds a
 * whole number of (work + stall) periods. */
START_TEST(no_failures_goodput_is_work_over_work_plus_stalls)
{
	hs_resilience r = {.enabled = 1, .async = 0, .host_bw_per_gpu = 25e9, .storage_bw_node = 1e9,
			   .storage_bw_total = 0, .horizon = 0, .trials = 3};
	hs_res_job j = job();
	hs_res_out o;
	hs_resilience_run(&r, &j, 600, &o); /* probe the stall */
	double delta = o.stall;
	ck_assert(delta > 0);
	r.horizon = 100 * (600 + delta);
	hs_resilience_run(&r, &j, 600, &o);
	ck_assert_double_eq_tol(o.goodput, 600 / (600 + delta), 1e-9);
	ck_assert(o.failures_per_day == 0);
	ck_assert_double_eq_tol(o.ckpt_frac, delta / (600 + delta), 1e-9);
	/* async: the stall is only the copy to host memory */
	r.async = 1;
	hs_res_out oa;
	hs_resilience_run(&r, &j, 600, &oa);
	ck_assert(oa.stall < delta && oa.goodput > o.goodput);
	hs_resilience_free(&r);
}
END_TEST

/* Exponential failures, checkpoint cost small against the MTBF: the Monte Carlo optimum is within 10% of Daly's
 * interval. Common random numbers make the goodput curve smooth across intervals; the optimum is the vertex of
 * a parabola through the best grid point and its neighbours (in log interval). */
START_TEST(monte_carlo_optimum_matches_daly)
{
	hs_resilience r = {.enabled = 1, .mtbf_gpu = 50000 * 3600.0, .dist = HS_FAIL_EXPONENTIAL, .detection = 30,
			   .restart = 30, .async = 0, .host_bw_per_gpu = 25e9, .storage_bw_node = 1e9,
			   .storage_bw_total = 0, .horizon = 120 * 86400.0, .trials = 24};
	hs_res_job j = job();
	hs_res_out o;
	hs_resilience_run(&r, &j, 600, &o);
	double M = hs_resilience_system_mtbf(&r, &j), delta = o.stall;
	double daly = hs_resilience_daly(delta, M), young = hs_resilience_young(delta, M);
	ck_assert(delta < 0.01 * M);
	ck_assert(fabs(daly - young) < 0.1 * young);
	enum { N = 25 };
	double x[N], g[N];
	int best = 0;
	for (int i = 0; i < N; i++) {
		x[i] = log(daly) + log(4.0) * (i - N / 2) / (N / 2); /* daly/4 .. daly*4 */
		hs_resilience_run(&r, &j, exp(x[i]), &o);
		g[i] = o.goodput;
		if (g[i] > g[best])
			best = i;
	}
	ck_assert_msg(best > 0 && best < N - 1, "optimum at the edge of the grid (%d)", best);
	double a = x[best - 1], b = x[best], c = x[best + 1], fa = g[best - 1], fb = g[best], fc = g[best + 1];
	double num = (b - a) * (b - a) * (fb - fc) - (b - c) * (b - c) * (fb - fa);
	double den = (b - a) * (fb - fc) - (b - c) * (fb - fa);
	double opt = exp(b - 0.5 * num / den);
	ck_assert_msg(fabs(opt - daly) < 0.10 * daly, "Monte Carlo optimum %.1f s, Daly %.1f s (Young %.1f s)", opt, daly,
		      young);
	hs_resilience_free(&r);
}
END_TEST

START_TEST(bad_resilience_input)
{
	hs_err err = {0};
	hs_resilience r;
	const char *t1 = "resilience: {mtbf: {gpu: 0}, restart: 10 min}\n";
	hs_ydoc *d = hs_yaml_load_string(t1, strlen(t1), "r.yaml", &err);
	ck_assert_int_eq(hs_resilience_from_yaml(hs_yaml_get(hs_yaml_root(d), "resilience"), &r, &err), -1);
	ck_assert_msg(strstr(err.msg, "every failure rate is zero, yet restarts are configured"), "%s", err.msg);
	hs_yaml_free(d);
	hs_err_clear(&err);
	const char *t2 = "resilience: {mtbf: {gpu: 50000 h}, horizon: -3 d}\n";
	d = hs_yaml_load_string(t2, strlen(t2), "r.yaml", &err);
	ck_assert_int_eq(hs_resilience_from_yaml(hs_yaml_get(hs_yaml_root(d), "resilience"), &r, &err), -1);
	ck_assert_msg(strstr(err.msg, "r.yaml:1:45: resilience.horizon: must be positive"), "%s", err.msg);
	hs_yaml_free(d);
	hs_err_clear(&err);
	const char *t3 = "resilience: {mtbf: {gpu: 50000 h}, distribution: weibul}\n";
	d = hs_yaml_load_string(t3, strlen(t3), "r.yaml", &err);
	ck_assert_int_eq(hs_resilience_from_yaml(hs_yaml_get(hs_yaml_root(d), "resilience"), &r, &err), -1);
	ck_assert_msg(strstr(err.msg, "did you mean 'weibull'"), "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

/* Weibull with shape 1 is the exponential: the same mean failure count. */
START_TEST(weibull_mean_matches_mtbf)
{
	hs_resilience r = {.enabled = 1, .mtbf_gpu = 5000 * 3600.0, .dist = HS_FAIL_WEIBULL, .weibull_shape = 0.7,
			   .async = 1, .host_bw_per_gpu = 25e9, .storage_bw_node = 1e9, .horizon = 60 * 86400.0,
			   .trials = 8};
	hs_res_job j = job();
	j.gpus = 512;
	hs_res_out o;
	hs_resilience_run(&r, &j, 1800, &o);
	/* fresh components with shape < 1 fail early more often than the renewal rate; over a horizon much
	 * shorter than the MTBF the count is above the long-run rate, but of the same order */
	double rate = 512 / (5000 * 3600.0) * 86400;
	ck_assert_msg(o.failures_per_day > 0.8 * rate && o.failures_per_day < 3 * rate, "%g vs %g", o.failures_per_day,
		      rate);
	r.weibull_shape = 1;
	hs_resilience_run(&r, &j, 1800, &o);
	ck_assert_msg(fabs(o.failures_per_day - rate) < 0.15 * rate, "%g vs %g", o.failures_per_day, rate);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("resilience");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, no_failures_goodput_is_work_over_work_plus_stalls);
	tcase_add_test(t, monte_carlo_optimum_matches_daly);
	tcase_add_test(t, bad_resilience_input);
	tcase_add_test(t, weibull_mean_matches_mtbf);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
