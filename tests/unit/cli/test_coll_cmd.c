/* `hetsim coll` through cmd_coll directly (main's table registers it; this does not depend on that). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cmd_coll.h"
#include "tests/unit/helpers.h"

/* Run cmd_coll with stdout and stderr captured into `out`; returns its status. */
static int run(char *out, size_t cap, int argc, char **argv)
{
	char name[64];
	int fd = hs_test_mkstemp(name, sizeof name, "coll-cmd", "");
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	int st = cmd_coll(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, out, cap - 1);
	out[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(name);
	return st;
}

static const char *scn = "scenarios/validation/nccl/a100x8-nvswitch.yaml";
static char buf[1 << 16];

START_TEST(json_rows)
{
	char *argv[] = {"coll", "--op", "all_gather", "--sizes", "1K:1M", "--factor", "4", "--json", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 9, argv), 0);
	ck_assert_msg(strncmp(buf, "{\"name\":\"a100x8-nvswitch\",\"op\":\"all_gather\",\"ranks\":8,\"rows\":[", 62) == 0,
		      "%s", buf);
	int rows = 0;
	for (char *p = buf; (p = strstr(p, "\"size_bytes\"")); p++)
		rows++;
	ck_assert_int_eq(rows, 6); /* 1K 4K 16K 64K 256K 1M */
	ck_assert_ptr_nonnull(strstr(buf, "\"size_bytes\":1048576,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"busbw_GBps\":"));
}
END_TEST

START_TEST(table_columns)
{
	char *argv[] = {"coll", "--sizes", "1G:1G", "--ranks", "4", "--algo", "ring", "--ideal", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 9, argv), 0);
	ck_assert_ptr_nonnull(strstr(buf, "size         count      type   redop    root     time   algbw   busbw #wrong     "
					  "time   algbw   busbw #wrong\n"));
	ck_assert_ptr_nonnull(strstr(buf, "# Avg bus bandwidth    : 299.665 \n#\n"));
	/* ideal ring over 4 A100s: 2*3*(1 us + 2^30/(4*300e9)) = 5374.71 us */
	ck_assert_msg(strstr(buf, "  1073741824     268435456     float     sum      -1   5374.7  199.78  299.67     -1   5374.7  199.78  299.67     -1\n") != NULL, "%s", buf);
}
END_TEST

START_TEST(set_overrides)
{
	char *argv[] = {"coll", "--sizes", "1G:1G", "--ideal", "--algo", "ring", "--ranks", "4", "--set",
			"cluster.groups.0.scaleup.bandwidth=150 GB/s", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 11, argv), 0);
	ck_assert_msg(strstr(buf, "-1    10743   99.94  149.92     -1    10743") != NULL, "%s", buf);
	/* checked as `hetsim run` checks them: an unknown section, and a misspelled key of a training scenario */
	char *a2[] = {"coll", "--sizes", "8:8", "--set", "foo.bar=1", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 6, a2), 2);
	ck_assert_msg(strstr(buf, "--set foo.bar:1:1: foo: unknown key (expected one of: name, kind,") != NULL, "%s", buf);
	char *a3[] = {"coll", "--sizes", "8:8", "--set", "training.micro_batchh=2", "scenarios/default.yaml"};
	ck_assert_int_eq(run(buf, sizeof buf, 6, a3), 2);
	ck_assert_msg(strstr(buf, "training.micro_batchh: unknown key (did you mean 'micro_batch'?)") != NULL, "%s", buf);
	char *a4[] = {"coll", "--sizes", "8:8", "--set", "training.micro_batch=2", "scenarios/default.yaml"};
	ck_assert_int_eq(run(buf, sizeof buf, 6, a4), 0);
}
END_TEST

START_TEST(bad_usage)
{
	char *a1[] = {"coll", "--op", "allreduse", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 4, a1), 2);
	ck_assert_ptr_nonnull(strstr(buf, "--op 'allreduse' is not known"));
	char *a2[] = {"coll", "--ranks", "9", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 4, a2), 2);
	ck_assert_ptr_nonnull(strstr(buf, "the cluster has 8 devices"));
	char *a3[] = {"coll", "--sizes", "8:x", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 4, a3), 2);
	char *a4[] = {"coll", "/nonexistent.yaml"};
	ck_assert_int_eq(run(buf, sizeof buf, 2, a4), 2);
	char *a5[] = {"coll", "--set", "cluster.groups.0.nic.bandwidth=0", (char *)scn};
	ck_assert_int_eq(run(buf, sizeof buf, 4, a5), 2);
	ck_assert_msg(strstr(buf, "cluster.groups[0].nic.bandwidth") != NULL, "%s", buf);
	char *a6[] = {"coll", "--help"};
	ck_assert_int_eq(run(buf, sizeof buf, 2, a6), 0);
	ck_assert_ptr_nonnull(strstr(buf, "usage: hetsim coll"));
}
END_TEST

START_TEST(sizes)
{
	ck_assert_double_eq(hs_coll_parse_size("8"), 8);
	ck_assert_double_eq(hs_coll_parse_size("32M"), 33554432);
	ck_assert_double_eq(hs_coll_parse_size("8G"), 8589934592.0);
	ck_assert_double_eq(hs_coll_parse_size("1K"), 1024);
	ck_assert_double_eq(hs_coll_parse_size("x"), -1);
	ck_assert_double_eq(hs_coll_parse_size("5Q"), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_cmd");
	TCase *t = tcase_create("cmd");
	tcase_add_test(t, json_rows);
	tcase_add_test(t, table_columns);
	tcase_add_test(t, set_overrides);
	tcase_add_test(t, bad_usage);
	tcase_add_test(t, sizes);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
