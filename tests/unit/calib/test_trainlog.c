/* Training-log readers (calib/trainlog.h): each format example in tests/data/trainlogs/ gives the median and P90
 * derived by hand in its header, with the format given and detected; bad input names the file and line. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "calib/trainlog.h"

#define D "tests/data/trainlogs/"

static void stats(const char *file, enum hs_tlog_fmt fmt, const hs_tlog_opts *o, size_t skip, size_t nsteps,
		  enum hs_tlog_fmt want, double med, double p90)
{
	for (int pass = 0; pass < 2; pass++) {
		hs_tlog l;
		hs_err err = {0};
		ck_assert_msg(hs_tlog_load(file, pass ? HS_TLOG_AUTO : fmt, o, &l, &err) == 0, "%s", err.msg);
		ck_assert_msg(l.fmt == want, "%s: detected %s", file, hs_tlog_fmt_names[l.fmt]);
		ck_assert_msg(l.n == nsteps, "%s: %zu steps, expected %zu", file, l.n, nsteps);
		double m, p;
		size_t used;
		ck_assert_int_eq(hs_tlog_stats(&l, skip, &m, &p, &used, &err), 0);
		ck_assert_uint_eq(used, nsteps - skip);
		ck_assert_msg(fabs(m - med) < 1e-9 * med, "%s: median %.12g, expected %.12g", file, m, med);
		if (p90 > 0)
			ck_assert_msg(fabs(p - p90) < 1e-9 * p90, "%s: P90 %.12g, expected %.12g", file, p, p90);
		hs_tlog_free(&l);
	}
}

START_TEST(megatron)
{
	stats(D "megatron-gpt-350m.log", HS_TLOG_MEGATRON, NULL, 2, 12, HS_TLOG_MEGATRON, 0.11895, 0.12024);
	hs_tlog l;
	hs_err err = {0};
	ck_assert_int_eq(hs_tlog_load(D "megatron-gpt-350m.log", HS_TLOG_AUTO, NULL, &l, &err), 0);
	ck_assert_int_eq(l.step[0], 1);
	ck_assert_int_eq(l.step[11], 12);
	ck_assert_int_eq(l.line[0], 9);
	ck_assert_double_eq_tol(l.t[0], 2.3512, 1e-12);
	hs_tlog_free(&l);
}
END_TEST

START_TEST(nemo)
{
	stats(D "nemo-llama3-8b.log", HS_TLOG_NEMO, NULL, 1, 8, HS_TLOG_NEMO, 1.502, 1.5186);
	/* the progress bar: six steps on one line of carriage returns */
	stats(D "lightning-progress.log", HS_TLOG_NEMO, NULL, 1, 6, HS_TLOG_NEMO, 1.21, 0);
}
END_TEST

START_TEST(torchtitan)
{
	stats(D "torchtitan-llama3-8b.log", HS_TLOG_TORCHTITAN, NULL, 1, 5, HS_TLOG_TORCHTITAN, 1.0025, 0);
	/* by tokens per second instead: 8192 tokens at 8,192 tps is 1 s a step */
	hs_tlog_opts o = {.tokens_per_step = 8192};
	stats(D "torchtitan-llama3-8b.log", HS_TLOG_TORCHTITAN, &o, 2, 6, HS_TLOG_TORCHTITAN, 1.0, 0);
}
END_TEST

START_TEST(deepspeed)
{
	double a = 32 / 25.2, b = 32 / 25.0;
	stats(D "deepspeed-gpt2.log", HS_TLOG_DEEPSPEED, NULL, 1, 5, HS_TLOG_DEEPSPEED, (a + b) / 2, 0);
	/* samples_per_step from the entry overrides the configuration dump */
	hs_tlog_opts o = {.samples_per_step = 64};
	stats(D "deepspeed-gpt2.log", HS_TLOG_DEEPSPEED, &o, 1, 5, HS_TLOG_DEEPSPEED, (a + b), 0);
}
END_TEST

START_TEST(csv_jsonl)
{
	stats(D "steps.csv", HS_TLOG_CSV, NULL, 1, 5, HS_TLOG_CSV, 0.2, 0.2024);
	stats(D "steps.jsonl", HS_TLOG_JSONL, NULL, 1, 4, HS_TLOG_JSONL, 0.201, 0.2026);
}
END_TEST

START_TEST(bad_input)
{
	hs_tlog l;
	hs_err err = {0};
	ck_assert_int_eq(hs_tlog_load(D "no-steps.log", HS_TLOG_AUTO, NULL, &l, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "no-steps.log:3: no step times found"), "%s", err.msg);
	/* a format given that the log is not in */
	hs_err_clear(&err);
	ck_assert_int_eq(hs_tlog_load(D "steps.csv", HS_TLOG_MEGATRON, NULL, &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "expected Megatron-LM lines"), "%s", err.msg);
	/* a recognised line that does not parse: its line */
	static const char bad_mega[] = "hello\n iteration 1/ 2 | elapsed time per iteration (ms): fast |\n";
	hs_err_clear(&err);
	ck_assert_int_eq(hs_tlog_parse(bad_mega, strlen(bad_mega), "m.log", HS_TLOG_AUTO, NULL, &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "m.log:2: malformed Megatron-LM line"), "%s", err.msg);
	/* DeepSpeed without a batch size */
	static const char ds[] = "epoch=0/micro_step=1/global_step=1, CurrSamplesPerSec=3.0, x\n";
	hs_err_clear(&err);
	ck_assert_int_eq(hs_tlog_parse(ds, strlen(ds), "d.log", HS_TLOG_AUTO, NULL, &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "d.log:1: DeepSpeed's CurrSamplesPerSec needs"), "%s", err.msg);
	/* CSV: a row that is not numbers */
	static const char c[] = "step,seconds\n1,0.5\n2,slow\n";
	hs_err_clear(&err);
	ck_assert_int_eq(hs_tlog_parse(c, strlen(c), "c.csv", HS_TLOG_AUTO, NULL, &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "c.csv:3: malformed CSV line"), "%s", err.msg);
	/* warm-up that leaves nothing */
	static const char j[] = "{\"step\": 1, \"seconds\": 0.5}\n";
	hs_err_clear(&err);
	ck_assert_int_eq(hs_tlog_parse(j, strlen(j), "j.jsonl", HS_TLOG_AUTO, NULL, &l, &err), 0);
	double m, p;
	size_t used;
	ck_assert_int_eq(hs_tlog_stats(&l, 1, &m, &p, &used, &err), -1);
	ck_assert_msg(strstr(err.msg, "none left"), "%s", err.msg);
	hs_tlog_free(&l);
}
END_TEST

START_TEST(quantiles)
{
	const double v[] = {4, 1, 3, 2};
	ck_assert_double_eq_tol(hs_tlog_quantile(v, 4, 0.5), 2.5, 1e-12);
	ck_assert_double_eq_tol(hs_tlog_quantile(v, 4, 0.9), 3.7, 1e-12);
	ck_assert_double_eq_tol(hs_tlog_quantile(v, 1, 0.9), 4, 1e-12);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trainlog");
	TCase *t = tcase_create("trainlog");
	tcase_add_test(t, megatron);
	tcase_add_test(t, nemo);
	tcase_add_test(t, torchtitan);
	tcase_add_test(t, deepspeed);
	tcase_add_test(t, csv_jsonl);
	tcase_add_test(t, bad_input);
	tcase_add_test(t, quantiles);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
