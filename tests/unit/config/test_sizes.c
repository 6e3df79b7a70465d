/* The one size grammar (issue 17 item 6; docs/scenario.md "Sizes"): every spelling, in each place that reads a
 * byte count through config/: hs_units_parse itself, a scenario key read by hs_cfg_num (as every file's sizes
 * are, manifests' `size:` included), and a `--set` override. kB/KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB
 * powers of 1024, a bare k/K/M/G/T on a byte count a power of 1024 (nccl-tests' meaning); counts keep k/M/G as
 * powers of 1000. `coll --sizes` is checked in tests/integration/validation.sh. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "config/units.h"
#include "config/yaml.h"

static const struct {
	const char *s;
	double bytes;
} spellings[] = {
	{"4096", 4096},
	{"4096 B", 4096},
	{"2 kB", 2e3},
	{"2 KB", 2e3},
	{"3 MB", 3e6},
	{"1 GB", 1e9},
	{"1 TB", 1e12},
	{"2 KiB", 2048},
	{"3 MiB", 3 * 1048576.0},
	{"1 GiB", 1073741824.0},
	{"1 TiB", 1099511627776.0},
	{"2k", 2048},
	{"2K", 2048},
	{"3M", 3 * 1048576.0},
	{"1G", 1073741824.0},
	{"1T", 1099511627776.0},
	{"2Ki", 2048},
	{"3Mi", 3 * 1048576.0},
	{"1Gi", 1073741824.0},
	{"1.5G", 1.5 * 1073741824.0},
};
#define NSP (sizeof spellings / sizeof spellings[0])

START_TEST(units_every_spelling)
{
	for (size_t i = 0; i < NSP; i++) {
		double v = -1;
		char why[200] = "";
		ck_assert_msg(hs_units_parse(spellings[i].s, HS_U_BYTES, &v, why, sizeof why) == 0, "%s: %s",
			      spellings[i].s, why);
		ck_assert_msg(v == spellings[i].bytes, "'%s' -> %.17g, expected %.17g", spellings[i].s, v,
			      spellings[i].bytes);
	}
}
END_TEST

/* A size in a file: the same value through the YAML reader, and through `--set key=VALUE`. */
START_TEST(file_and_set_every_spelling)
{
	for (size_t i = 0; i < NSP; i++) {
		char text[128];
		snprintf(text, sizeof text, "size: %s\n", spellings[i].s);
		hs_err err = {0};
		hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
		ck_assert_msg(d != NULL, "%s", err.msg);
		double v = -1;
		ck_assert_int_eq(hs_cfg_num(hs_yaml_root(d), "", "size", HS_U_BYTES, 0, 1e18, 0, 1, &v, &err), 0);
		ck_assert_msg(v == spellings[i].bytes, "file '%s' -> %.17g", spellings[i].s, v);
		char set[128];
		snprintf(set, sizeof set, "size=%s", spellings[i].s);
		const char *sets[] = {set};
		ck_assert_int_eq(hs_yaml_set_all(d, sets, 1, &err), 0);
		v = -1;
		ck_assert_int_eq(hs_cfg_num(hs_yaml_root(d), "", "size", HS_U_BYTES, 0, 1e18, 0, 1, &v, &err), 0);
		ck_assert_msg(v == spellings[i].bytes, "--set '%s' -> %.17g", spellings[i].s, v);
		hs_yaml_free(d);
	}
}
END_TEST

/* Counts are not byte counts: 2k devices are 2000. */
START_TEST(counts_stay_decimal)
{
	double v;
	char why[200];
	ck_assert_int_eq(hs_units_parse("2k", HS_U_COUNT, &v, why, sizeof why), 0);
	ck_assert_double_eq(v, 2000);
	ck_assert_int_eq(hs_units_parse("1.5M", HS_U_COUNT, &v, why, sizeof why), 0);
	ck_assert_double_eq(v, 1.5e6);
	ck_assert_int_eq(hs_units_parse("4Ki", HS_U_COUNT, &v, why, sizeof why), 0);
	ck_assert_double_eq(v, 4096);
	/* bandwidths keep SI: GB/s is 10^9 bytes/s */
	ck_assert_int_eq(hs_units_parse("1 GB/s", HS_U_BW, &v, why, sizeof why), 0);
	ck_assert_double_eq(v, 1e9);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sizes");
	TCase *t = tcase_create("sizes");
	tcase_add_test(t, units_every_spelling);
	tcase_add_test(t, file_and_set_every_spelling);
	tcase_add_test(t, counts_stay_decimal);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
