/* The measurement readers: JSON lines and nccl-tests logs. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "calib/jsonl.h"
#include "calib/nccl.h"

static hs_jsonl *jparse(const char *t, hs_err *err)
{
	hs_err_clear(err);
	return hs_jsonl_parse(t, strlen(t), "m.jsonl", err);
}

START_TEST(jsonl_good)
{
	hs_err err;
	hs_jsonl *j = jparse("{\"kind\": \"gemm\", \"m\": 256, \"t\": 1.5e-5, \"ok\": true, \"x\": null}\n\n"
			     "  {\"name\": \"a\\\"b\\u00e9\\n\", \"v\": -0.25}\r\n{}\n", &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	ck_assert_uint_eq(j->n, 3);
	ck_assert_int_eq(j->recs[0].line, 1);
	ck_assert_int_eq(j->recs[1].line, 3);
	ck_assert_str_eq(hs_jrec_str(&j->recs[0], "kind"), "gemm");
	double v;
	ck_assert_int_eq(hs_jrec_num(&j->recs[0], "m", &v), 0);
	ck_assert_double_eq(v, 256);
	ck_assert_int_eq(hs_jrec_num(&j->recs[0], "ok", &v), 0);
	ck_assert_double_eq(v, 1);
	ck_assert_int_eq(hs_jrec_num(&j->recs[0], "x", &v), -1);
	ck_assert_int_eq(hs_jrec_num(&j->recs[0], "kind", &v), -1);
	ck_assert_str_eq(hs_jrec_str(&j->recs[1], "name"), "a\"b\xc3\xa9\n");
	hs_jsonl_free(j);
}
END_TEST

/* Real logs carry nested fields (an environment block, a list of GPUs): nested objects flatten to dotted keys,
 * arrays and nulls are left out, and the record's own fields read as before. */
START_TEST(jsonl_flattens_nested_fields)
{
	hs_err err;
	hs_jsonl *j = jparse("{\"kind\": \"gemm\", \"m\": 64, \"env\": {\"cuda\": \"13.0\", \"gpu\": {\"sms\": 132}}, "
			     "\"gpus\": [0, 1], \"note\": null, \"ok\": true}\n",
			     &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	const hs_jrec *r = &j->recs[0];
	double v;
	ck_assert_str_eq(hs_jrec_str(r, "kind"), "gemm");
	ck_assert_str_eq(hs_jrec_str(r, "env.cuda"), "13.0");
	ck_assert_int_eq(hs_jrec_num(r, "env.gpu.sms", &v), 0);
	ck_assert_double_eq(v, 132);
	ck_assert_int_eq(hs_jrec_num(r, "ok", &v), 0);
	ck_assert_double_eq(v, 1);
	ck_assert_int_eq(hs_jrec_num(r, "gpus", &v), -1);
	ck_assert_ptr_null(hs_jrec_str(r, "note"));
	ck_assert_int_eq(r->n, 5); /* kind, m, env.cuda, env.gpu.sms, ok */
	hs_jsonl_free(j);
}
END_TEST

START_TEST(jsonl_rejects_malformed_lines)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"{\"a\": 1}\n{\"a\": 1\n", "m.jsonl:2:7: '}' expected"},
		{"{\"a\": 1} x\n", "m.jsonl:1:10: end of file expected"},
		{"{\"a\": 1.2.3}\n", "m.jsonl:1:10: '}' expected near '.'"},
		{"{\"a\": nan}\n", "m.jsonl:1:9: invalid token"},
		{"{\"a\": \"abc}\n", "m.jsonl:1:11: premature end of input"},
		{"{a: 1}\n", "m.jsonl:1:2: string or '}' expected"},
		{"[1]\n", "m.jsonl:1:1: expected a JSON object"},
		{"{\"a\": 1, \"a\": 2}\n", "m.jsonl:1:12: duplicate object key"},
		{"{\"a\": \"\\q\"}\n", "m.jsonl:1:9: invalid escape"},
		{"{\"a\": {\"b\": {\"c\": {\"d\": {\"e\": {\"f\": {\"g\": {\"h\": {\"i\": {\"j\": 1}}}}}}}}}}\n",
		 "m.jsonl:1:1: objects nested deeper than 8 levels"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		hs_err err;
		ck_assert_ptr_null(jparse(bad[i].text, &err));
		ck_assert_int_eq(err.code, HS_EINPUT);
		ck_assert_msg(strstr(err.msg, bad[i].want), "case %zu: got '%s', want '%s'", i, err.msg, bad[i].want);
	}
}
END_TEST

START_TEST(nccl_reads_every_real_log)
{
	DIR *d = opendir("tests/data/nccl-tests");
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".txt"))
			continue;
		char path[512];
		snprintf(path, sizeof path, "tests/data/nccl-tests/%s", e->d_name);
		hs_nccl_log l;
		hs_err err;
		hs_err_clear(&err);
		ck_assert_msg(hs_nccl_load(path, &l, &err) == 0, "%s", err.msg);
		ck_assert_msg(l.n >= 6 && l.collective[0] && l.ranks >= 2, "%s: %zu rows, '%s', %d ranks", path, l.n,
			      l.collective, l.ranks);
		double a, b;
		ck_assert_msg(hs_nccl_fit(&l, &a, &b, &err) == 0, "%s", err.msg);
		ck_assert(a >= 0 && b > 0);
		hs_nccl_free(&l);
		files++;
	}
	closedir(d);
	ck_assert_int_eq(files, 10);

	hs_nccl_log l;
	hs_err err;
	hs_err_clear(&err);
	ck_assert_int_eq(hs_nccl_load("tests/data/nccl-tests/h100x16-ndr-allreduce-ring.txt", &l, &err), 0);
	ck_assert_uint_eq(l.n, 11);
	ck_assert_int_eq(l.ranks, 16); /* no Rank lines: from busbw / algbw */
	ck_assert_str_eq(l.algo, "ring");
	ck_assert_double_eq_tol(l.rows[0].t, 407.5e-6, 1e-12);
	ck_assert_double_eq(l.rows[0].t_inplace, 0);
	hs_nccl_free(&l);
	ck_assert_int_eq(hs_nccl_load("tests/data/nccl-tests/a100x16-oci-readme-allreduce.txt", &l, &err), 0);
	ck_assert_uint_eq(l.n, 31);
	ck_assert_int_eq(l.ranks, 16);
	ck_assert_str_eq(l.collective, "all_reduce");
	ck_assert_double_eq_tol(l.rows[30].t_inplace, 67811e-6, 1e-9);
	hs_nccl_free(&l);
	ck_assert_int_eq(hs_nccl_load("tests/data/nccl-tests/rtx2080ti-x2-pcie-alltoall.txt", &l, &err), 0);
	ck_assert_str_eq(l.collective, "alltoall");
	ck_assert_int_eq(l.ranks, 2);
	hs_nccl_free(&l);
}
END_TEST

START_TEST(nccl_prefixes_and_old_layouts)
{
	const char *t = "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 64\n"
			"node1:123:123 [0] NCCL INFO Bootstrap : Using eth0\n"
			"0: #  Rank  0 Group  0 Pid 1 on node1 device  0 [0x0f] NVIDIA H100\n"
			"0: #  Rank  7 Group  0 Pid 1 on node1 device  7 [0x0f] NVIDIA H100\n"
			"[1,0]<stdout>:#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
			"[1,0]<stdout>:     1048576        262144     float     sum    50.10   20.93   36.63  5e-07    49.90   21.01   36.77  5e-07\n";
	hs_nccl_log l;
	hs_err err;
	hs_err_clear(&err);
	/* an old layout: no root column, float "error" instead of #wrong */
	int rc = hs_nccl_parse(t, strlen(t), "old.log", &l, &err);
	ck_assert_int_eq(rc, -1); /* "5e-07" is not a #wrong count */
	ck_assert_msg(strstr(err.msg, "old.log:6:"), "%s", err.msg);
	const char *t2 = "[1,0]<stdout>:# all_reduce_perf -b 1M -e 2M\n"
			 "0: #  Rank  0 Group  0 Pid 1 on node1 device  0 [0x0f] NVIDIA H100\n"
			 "0: #  Rank  7 Group  0 Pid 1 on node1 device  7 [0x0f] NVIDIA H100\n"
			 "[1,0]<stdout>:#       size         count      type   redop     time   algbw   busbw  #wrong\n"
			 "[1,0]<stdout>:     1048576        262144     float     sum    50.10   20.93   36.63    N/A\n"
			 "0:      2097152        524288     float     sum    80.10   26.18   45.82      0\n"
			 "NCCL version 2.18.1+cuda12.1\n";
	hs_err_clear(&err);
	ck_assert_msg(hs_nccl_parse(t2, strlen(t2), "new.log", &l, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_int_eq(l.ranks, 8);
	ck_assert_str_eq(l.collective, "all_reduce");
	ck_assert_double_eq_tol(l.rows[1].t, 80.10e-6, 1e-12);
	ck_assert_int_eq(l.rows[1].line, 6);
	hs_nccl_free(&l);
}
END_TEST

START_TEST(nccl_rejects_malformed)
{
	hs_nccl_log l;
	hs_err err;
	hs_err_clear(&err);
	ck_assert_int_eq(hs_nccl_load("tests/data/nccl-tests-malformed/bad-time.txt", &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "bad-time.txt:7: malformed nccl-tests row") && strstr(err.msg, "3x.86"), "%s",
		      err.msg);
	hs_nccl_free(&l);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_nccl_load("tests/data/nccl-tests-malformed/truncated-row.txt", &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "truncated-row.txt:3:"), "%s", err.msg);
	hs_nccl_free(&l);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_nccl_parse("# only comments\n", 16, "empty.log", &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "no nccl-tests rows"), "%s", err.msg);
	hs_nccl_free(&l);
	hs_err_clear(&err);
	const char *t = "         8         2     float     sum      -1    36.47    0.00    0.00      0    34.74\n";
	ck_assert_int_eq(hs_nccl_parse(t, strlen(t), "short.log", &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "short.log:1:"), "%s", err.msg);
	hs_nccl_free(&l);
	hs_err_clear(&err);
	const char *u = "         8         2     floaty     sum      -1    36.47    0.00    0.00      0\n";
	ck_assert_int_eq(hs_nccl_parse(u, strlen(u), "type.log", &l, &err), -1);
	ck_assert_msg(strstr(err.msg, "type.log:1:") && strstr(err.msg, "floaty"), "%s", err.msg);
	hs_nccl_free(&l);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calib_io");
	TCase *tc = tcase_create("calib_io");
	tcase_add_test(tc, jsonl_good);
	tcase_add_test(tc, jsonl_flattens_nested_fields);
	tcase_add_test(tc, jsonl_rejects_malformed_lines);
	tcase_add_test(tc, nccl_reads_every_real_log);
	tcase_add_test(tc, nccl_prefixes_and_old_layouts);
	tcase_add_test(tc, nccl_rejects_malformed);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
