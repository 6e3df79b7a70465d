/* Units, YAML positions, typed readers, unknown-key suggestions, --set overrides. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "config/cfg.h"
#include "config/units.h"
#include "config/yaml.h"

static double U(const char *s, enum hs_unit u)
{
	double v = -1;
	char why[200];
	ck_assert_msg(hs_units_parse(s, u, &v, why, sizeof why) == 0, "'%s': %s", s, why);
	return v;
}

static int bad(const char *s, enum hs_unit u, const char *want)
{
	double v;
	char why[200] = "";
	int rc = hs_units_parse(s, u, &v, why, sizeof why);
	if (rc == 0)
		return 0;
	ck_assert_msg(strstr(why, want) != NULL, "'%s' -> '%s' (wanted '%s')", s, why, want);
	return 1;
}

START_TEST(units_good)
{
	ck_assert_double_eq(U("450 GB/s", HS_U_BW), 450e9);
	ck_assert_double_eq(U("400 Gb/s", HS_U_BW), 50e9);
	ck_assert_double_eq(U("400Gbps", HS_U_BW), 50e9);
	ck_assert_double_eq(U("1 GiB/s", HS_U_BW), 1073741824.0);
	ck_assert_double_eq_tol(U("1.5 us", HS_U_TIME), 1.5e-6, 1e-18);
	ck_assert_double_eq_tol(U("2 ms", HS_U_TIME), 2e-3, 1e-15);
	ck_assert_double_eq(U("3 d", HS_U_TIME), 3 * 86400.0);
	ck_assert_double_eq(U("80 GiB", HS_U_BYTES), 80.0 * 1073741824.0);
	ck_assert_double_eq(U("80 GB", HS_U_BYTES), 80e9);
	ck_assert_double_eq(U("2k", HS_U_COUNT), 2000);
	ck_assert_double_eq(U("4Ki", HS_U_COUNT), 4096);
	ck_assert_double_eq(U("989 TFLOP/s", HS_U_FLOPS), 989e12);
	ck_assert_double_eq(U("700 W", HS_U_POWER), 700);
	ck_assert_double_eq(U("1e9", HS_U_BW), 1e9); /* plain number: SI base unit */
	ck_assert_double_eq(U("  12  ", HS_U_COUNT), 12);
}
END_TEST

START_TEST(units_bad)
{
	ck_assert(bad("450 GB", HS_U_BW, "is a size, not a bandwidth"));
	ck_assert(bad("1.5 GB/s", HS_U_TIME, "is a bandwidth, not a duration"));
	ck_assert(bad("abc", HS_U_BYTES, "not a number"));
	ck_assert(bad("nan", HS_U_BYTES, "not"));
	ck_assert(bad("inf GB", HS_U_BYTES, "not"));
	ck_assert(bad("0x10", HS_U_COUNT, "not a finite decimal"));
	ck_assert(bad("5 parsecs", HS_U_TIME, "unknown unit"));
	ck_assert(bad("12 gb/s", HS_U_BW, "unknown unit")); /* case matters: gb is not a unit */
	ck_assert(bad("1 Ms", HS_U_TIME, "unknown unit")); /* M is mega, not milli */
}
END_TEST

static const char *doc1 = "name: x\n"
			  "cluster:\n"
			  "  groups:\n"
			  "    - name: a\n"
			  "      nodes: 2\n"
			  "training: {seq_len: 2k, global_batch: -4}\n"
			  "parallelism:\n"
			  "  tp: 2\n"
			  "  tpp: 3\n";

START_TEST(yaml_positions)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(doc1, strlen(doc1), "t.yaml", &err);
	ck_assert_ptr_nonnull(d);
	hs_ynode *r = hs_yaml_root(d);
	hs_ynode *c = hs_yaml_get(r, "cluster");
	ck_assert_int_eq(c->line, 3);
	hs_ynode *g = hs_yaml_get(c, "groups")->vals[0];
	ck_assert_int_eq(g->line, 4);
	ck_assert_int_eq(g->col, 7);
	hs_ynode *nodes = hs_yaml_get(g, "nodes");
	ck_assert_int_eq(nodes->line, 5);
	ck_assert_int_eq(nodes->col, 14);
	/* flow mapping value positions */
	hs_ynode *t = hs_yaml_get(r, "training");
	int64_t v;
	ck_assert_int_eq(hs_cfg_int(t, "training", "seq_len", 1, 1 << 20, 0, 1, &v, &err), 0);
	ck_assert_int_eq(v, 2000);
	ck_assert_int_eq(hs_cfg_int(t, "training", "global_batch", 1, 1 << 20, 0, 1, &v, &err), -1);
	ck_assert_int_eq(err.code, 2);
	ck_assert_msg(strstr(err.msg, "t.yaml:6:39: training.global_batch:") == err.msg, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "out of range") != NULL, "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

START_TEST(unknown_key_suggests)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(doc1, strlen(doc1), "t.yaml", &err);
	static const char *const keys[] = {"tp", "pp", "dp", "schedule", NULL};
	hs_ynode *p = hs_yaml_get(hs_yaml_root(d), "parallelism");
	ck_assert_int_eq(hs_cfg_known(p, "parallelism", keys, "a mapping", &err), -1);
	ck_assert_msg(strcmp(err.msg, "t.yaml:9:3: parallelism.tpp: unknown key (did you mean 'tp'?)") == 0, "%s",
		      err.msg);
	hs_yaml_free(d);
	ck_assert_str_eq(hs_cfg_suggest("shedule", keys), "schedule");
	ck_assert_ptr_null(hs_cfg_suggest("zzzzzzzz", keys));
}
END_TEST

START_TEST(yaml_errors_have_positions)
{
	const char *bad1 = "a: 1\nb: [1, 2\nc: 3\n";
	hs_err err = {0};
	ck_assert_ptr_null(hs_yaml_load_string(bad1, strlen(bad1), "b.yaml", &err));
	ck_assert_int_eq(err.code, 2);
	ck_assert_msg(strncmp(err.msg, "b.yaml:3:", 9) == 0 || strncmp(err.msg, "b.yaml:2:", 9) == 0, "%s", err.msg);
	const char *dup = "a: 1\nb: 2\na: 3\n";
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_yaml_load_string(dup, strlen(dup), "d.yaml", &err));
	ck_assert_str_eq(err.msg, "d.yaml:3:1: duplicate key 'a'");
	const char *alias = "a: &x 1\nb: *x\n";
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_yaml_load_string(alias, strlen(alias), "e.yaml", &err));
	ck_assert_msg(strstr(err.msg, "e.yaml:1:4: YAML anchors") == err.msg, "%s", err.msg);
	const char *tab = "a:\n\tb: 1\n";
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_yaml_load_string(tab, strlen(tab), "f.yaml", &err));
	ck_assert_msg(strncmp(err.msg, "f.yaml:2:", 9) == 0, "%s", err.msg);
}
END_TEST

START_TEST(set_overrides)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(doc1, strlen(doc1), "t.yaml", &err);
	ck_assert_int_eq(hs_yaml_set(d, "parallelism.tp=8", &err), 0);
	ck_assert_int_eq(hs_yaml_set(d, "cluster.groups.0.nodes=16", &err), 0);
	ck_assert_int_eq(hs_yaml_set(d, "simulation.seed=7", &err), 0); /* creates the path */
	ck_assert_int_eq(hs_yaml_set(d, "model={preset: gpt3-1.3b, layers: 4}", &err), 0);
	hs_ynode *r = hs_yaml_root(d);
	ck_assert_str_eq(hs_yaml_get(hs_yaml_get(r, "parallelism"), "tp")->str, "8");
	ck_assert_str_eq(hs_yaml_get(hs_yaml_get(r, "cluster"), "groups")->vals[0]->vals[0]->str, "a");
	ck_assert_str_eq(hs_yaml_get(hs_yaml_get(hs_yaml_get(r, "cluster"), "groups")->vals[0], "nodes")->str, "16");
	ck_assert_str_eq(hs_yaml_get(hs_yaml_get(r, "simulation"), "seed")->str, "7");
	ck_assert_str_eq(hs_yaml_get(hs_yaml_get(r, "model"), "layers")->str, "4");
	ck_assert_int_eq(hs_yaml_set(d, "cluster.groups.5.nodes=1", &err), -1);
	ck_assert_msg(strstr(err.msg, "not an index") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_yaml_set(d, "noequals", &err), -1);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_yaml_set(d, "name.x=1", &err), -1);
	ck_assert_msg(strstr(err.msg, "descends into a scalar") != NULL, "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

/* A key path with a bracket out of place was read by dropping the brackets: `sim]ulation.fidelity=flow` set
 * simulation.fidelity (found by fuzz_sweep, an axis key one byte off), `a[0` and `a..b` were read as a.0, a.b. */
START_TEST(set_rejects_malformed_paths)
{
	static const char *const good[] = {"a", "a.b", "cluster.groups[0].nodes", "cluster.groups.0.nodes", "a[0][1].b",
					   "cost.gpu_hour.H100-SXM-80GB"};
	static const char *const bad[] = {"sim]ulation.fidelity", "a[0", "a[]", "a[x]", "a[0]b", "a..b", ".a", "a.",
					  "[0]", "a]", "a[0]]", "a.[0]"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		ck_assert_msg(hs_yaml_path_ok(good[i], strlen(good[i])), "%s refused", good[i]);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		ck_assert_msg(!hs_yaml_path_ok(bad[i], strlen(bad[i])), "%s accepted", bad[i]);
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(doc1, strlen(doc1), "t.yaml", &err);
	ck_assert_int_eq(hs_yaml_set(d, "sim]ulation.fidelity=flow", &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "--set sim]ulation.fidelity: not a key path") != NULL, "%s", err.msg);
	ck_assert_ptr_null(hs_yaml_get(hs_yaml_root(d), "simulation"));
	hs_err_clear(&err);
	ck_assert_int_eq(hs_yaml_set(d, "cluster.groups[0].nodes=3", &err), 0);
	hs_yaml_free(d);
}
END_TEST

START_TEST(readers)
{
	const char *t = "a: true\nb: maybe\nc: ring\nd: '3'\ne: [1]\nf: 1.5\n";
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(t, strlen(t), "r.yaml", &err);
	hs_ynode *r = hs_yaml_root(d);
	int b;
	ck_assert_int_eq(hs_cfg_bool(r, "", "a", 0, &b, &err), 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(hs_cfg_bool(r, "", "zz", 0, &b, &err), 0);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(hs_cfg_bool(r, "", "b", 0, &b, &err), -1);
	hs_err_clear(&err);
	static const char *const algos[] = {"ring", "tree", NULL};
	int k;
	ck_assert_int_eq(hs_cfg_enum(r, "", "c", algos, 1, &k, &err), 0);
	ck_assert_int_eq(k, 0);
	int64_t v;
	ck_assert_int_eq(hs_cfg_int(r, "", "e", 0, 10, 0, 0, &v, &err), -1);
	ck_assert_msg(strstr(err.msg, "found a list") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_cfg_int(r, "", "f", 0, 10, 0, 0, &v, &err), -1);
	ck_assert_msg(strstr(err.msg, "not a whole number") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_cfg_int(r, "", "missing", 0, 10, 0, 1, &v, &err), -1);
	ck_assert_msg(strstr(err.msg, "missing required key") != NULL, "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("config");
	TCase *t = tcase_create("core");
	tcase_add_test(t, units_good);
	tcase_add_test(t, units_bad);
	tcase_add_test(t, yaml_positions);
	tcase_add_test(t, unknown_key_suggests);
	tcase_add_test(t, yaml_errors_have_positions);
	tcase_add_test(t, set_overrides);
	tcase_add_test(t, set_rejects_malformed_paths);
	tcase_add_test(t, readers);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
