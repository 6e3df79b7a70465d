/* Calibration additions of the reference-executor work:
 * - the profile's optional kernel_gap: absent -> equal to launch (old files load unchanged); present -> read,
 *   saved and read back; bad values rejected;
 * - hs_refexec_compare: predicted (graph pred_s, step_pred_s, profile per op) beside refexec's measurements,
 *   the MAPE of each kind, and records that name tasks or ops the graph lacks rejected with their line. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/profile.h"
#include "calib/refexec_cmp.h"
#include "tests/unit/helpers.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

static void put(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(a, f);
	fputs(b, f);
	fclose(f);
}

START_TEST(kernel_gap_default_and_explicit)
{
	hs_err err = {0};
	/* the shipped profile without its kernel_gap line: no gap (its kernel times are in-stream times) */
	char *base = slurp("calib/profiles/H200-SXM-141GB.yaml");
	char *g = strstr(base, "\nkernel_gap:");
	ck_assert_ptr_nonnull(g);
	memmove(g + 1, strchr(g + 1, '\n') + 1, strlen(strchr(g + 1, '\n') + 1) + 1);
	char path[64];
	hs_test_tmpfile(path, sizeof path, "gap", ".yaml");
	put(path, base, "");
	hs_profile *p = hs_profile_load(path, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert(hs_profile_kernel_gap(p) == 0); /* no key: none */
	hs_profile_free(p);
	put(path, base, "kernel_gap: 4 us\n");
	p = hs_profile_load(path, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert(fabs(hs_profile_kernel_gap(p) - 4e-6) < 1e-15);
	ck_assert(hs_profile_launch(p) > 1e-6 && hs_profile_launch(p) != 4e-6); /* launch is its own key */
	/* saved and read back */
	ck_assert_int_eq(hs_profile_save(p, path, &err), 0);
	hs_profile_free(p);
	p = hs_profile_load(path, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert(fabs(hs_profile_kernel_gap(p) - 4e-6) < 1e-15);
	hs_profile_free(p);
	/* bad values */
	put(path, base, "kernel_gap: -1\n");
	ck_assert_ptr_null(hs_profile_load(path, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "kernel_gap"));
	hs_err_clear(&err);
	put(path, base, "kernel_gap: fast\n");
	ck_assert_ptr_null(hs_profile_load(path, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "kernel_gap"));
	remove(path);
	free(base);
}
END_TEST

static const char *graph = "hsgraph 1\nstep_pred_s 0.2\nrank 0\n"
			   "op 0 kind=gemm name=fc1 dtype=bf16 m=8192 n=8192 k=2048\n"
			   "op 1 kind=mem name=ln1 dtype=bf16 bytes=67108864\n"
			   "task 0 rank=0 kind=compute ops=0+2 pred_s=0.1\n"
			   "task 1 rank=0 kind=compute ops=0+2 scale=0.5 deps=0 pred_s=0.05\n";

START_TEST(compare)
{
	hsg_graph g;
	char msg[256];
	ck_assert_int_eq(hsg_parse(graph, strlen(graph), "g", &g, msg, sizeof msg), 0);
	const char *meas = "{\"kind\": \"info\"}\n"
			   "{\"kind\": \"refexec_task\", \"task\": 0, \"t_med\": 0.08}\n"
			   "{\"kind\": \"refexec_task\", \"task\": 1, \"t_med\": 0.05}\n"
			   "{\"kind\": \"refexec_op\", \"task\": 1, \"op\": 0, \"t_med\": 0.0005}\n"
			   "{\"kind\": \"refexec_step\", \"t_med\": 0.25}\n";
	hs_err err = {0};
	hs_jsonl *m = hs_jsonl_parse(meas, strlen(meas), "m", &err);
	ck_assert_ptr_nonnull(m);
	hs_refexec_cmp c;
	ck_assert_int_eq(hs_refexec_compare(m, &g, NULL, &c, &err), 0);
	size_t n;
	ck_assert(fabs(hs_refexec_mape(&c, "task", &n) - 12.5) < 1e-9); /* |0.1-0.08|/0.08 = 25%, 0% */
	ck_assert_uint_eq(n, 2);
	ck_assert(fabs(hs_refexec_mape(&c, "step", &n) - 20) < 1e-9);
	ck_assert(hs_refexec_mape(&c, "op", &n) < 0); /* no profile: no op rows */
	hs_refexec_cmp_free(&c);
	/* with a profile: the op's prediction is the profile's GEMM time at half m (the task's scale) */
	hs_profile *p = hs_profile_load("H200-SXM-141GB", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_refexec_compare(m, &g, p, &c, &err), 0);
	double want = hs_profile_gemm_time(p, NULL, 4096, 8192, 2048, HS_BF16);
	int found = 0;
	for (size_t i = 0; i < c.n; i++)
		if (strcmp(c.rows[i].kind, "op") == 0) {
			ck_assert(fabs(c.rows[i].predicted - want) < 1e-15);
			found = 1;
		}
	ck_assert(found);
	/* op rows carry their kind; tasks and the step are recomputed from the profile: ops back to back plus the
	 * kernel gap per op, ln1 as refexec's layernorm kernel, task 1 after task 0 on one stream */
	double gap = hs_profile_kernel_gap(p);
	double t0 = hs_profile_gemm_time(p, NULL, 8192, 8192, 2048, HS_BF16) +
		    hs_profile_mem_op_time(p, NULL, "layernorm", 67108864) + 2 * gap;
	double t1 = want + hs_profile_mem_op_time(p, NULL, "layernorm", 67108864 * 0.5) + 2 * gap;
	ck_assert(hs_profile_mem_op_time(p, NULL, "layernorm", 67108864) > 1.5 * hs_profile_mem_time(p, NULL, 67108864));
	ck_assert_uint_eq(c.n, 2 + 1 + 2 + 1 + 1);
	for (size_t i = 0; i < c.n; i++) {
		const hs_refexec_row *r = &c.rows[i];
		if (strcmp(r->kind, "op") == 0)
			ck_assert_str_eq(r->opkind, "gemm");
		if (strcmp(r->kind, "task-prof") == 0)
			ck_assert_double_eq_tol(r->predicted, r->measured == 0.08 ? t0 : t1, 1e-12);
		if (strcmp(r->kind, "step-prof") == 0)
			ck_assert_double_eq_tol(r->predicted, t0 + t1, 1e-12);
	}
	/* the signed error of the totals beside the MAPE: +25% and 0% average to 12.5%, the totals to +15.4% */
	ck_assert_double_eq_tol(hs_refexec_total_err(&c, "task", NULL), 100 * (0.15 - 0.13) / 0.13, 1e-9);
	ck_assert_double_eq_tol(hs_refexec_mape_of(&c, "op", "gemm", &n), hs_refexec_mape(&c, "op", NULL), 1e-12);
	ck_assert(hs_refexec_mape_of(&c, "op", "mem", &n) < 0 && n == 0);
	hs_refexec_cmp_free(&c);
	hs_jsonl_free(m);
	/* records naming what the graph lacks */
	const char *bad[] = {"{\"kind\": \"refexec_task\", \"task\": 7, \"t_med\": 1}\n",
			     "{\"kind\": \"refexec_op\", \"task\": 0, \"op\": 5, \"t_med\": 1}\n",
			     "{\"kind\": \"refexec_task\", \"task\": 0}\n", "{\"kind\": \"info\"}\n"};
	for (int i = 0; i < 4; i++) {
		hs_err_clear(&err);
		m = hs_jsonl_parse(bad[i], strlen(bad[i]), "bad", &err);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(hs_refexec_compare(m, &g, p, &c, &err), -1);
		ck_assert_msg(strstr(err.msg, "bad") != NULL, "%s", err.msg);
		hs_jsonl_free(m);
	}
	hs_profile_free(p);
	hsg_free(&g);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calib_refexec");
	TCase *c = tcase_create("calib_refexec");
	tcase_add_test(c, kernel_gap_default_and_explicit);
	tcase_add_test(c, compare);
	suite_add_tcase(s, c);
	return s;
}

#include "tests/unit/check_main.h"
