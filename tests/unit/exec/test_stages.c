/* Non-uniform pipeline stages: parallelism.stage_layers given or auto (sim/exec/partition.c hs_partition_resolve). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/exec/partition.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

/* cluster: %s (groups), parallelism extra: %s */
static const char *base =
	"name: stages\n"
	"cluster:\n"
	"  groups:\n"
	"%s"
	"model: %s\n"
	"training: {global_batch: 16, micro_batch: 1}\n"
	"parallelism: {%s}\n"
	"simulation: {collective_algorithm: ring}\n";

static const char *h100x8 =
	"    - {name: h, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB}\n";
static const char *mixed =
	"    - {name: h, nodes: 1, gpus_per_node: 4, gpu: H100-SXM-80GB}\n"
	"    - {name: a, nodes: 1, gpus_per_node: 4, gpu: A100-SXM-80GB}\n";
/* the head (4096 x 1024 = 4M parameters) costs less than one layer (12.6M) */
static const char *small = "{layers: 8, hidden: 1024, heads: 8, ffn: 4096, vocab: 4096, seq_len: 1024}";
/* big enough that compute, not kernel launches, sets the time: H100 against A100 shows */
static const char *wide = "{layers: 8, hidden: 4096, heads: 32, ffn: 16384, vocab: 4096, seq_len: 2048}";

static int sim(const char *groups, const char *model, const char *par, hs_sim *out, hs_err *err)
{
	char text[4096], path[64];
	snprintf(text, sizeof text, base, groups, model, par);
	hs_test_write_tmp(path, sizeof path, "stages", text);
	int rc = hs_simulate(path, NULL, -1, NULL, out, err);
	unlink(path);
	return rc;
}

static double step(const char *groups, const char *model, const char *par, int *layers)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert_msg(sim(groups, model, par, &s, &err) == 0, "%s", err.msg);
	double t = s.r.step_time_s;
	for (int i = 0; layers && i < s.b.pp; i++)
		layers[i] = s.b.stages[i].layers;
	hs_sim_free(&s);
	return t;
}

/* Golden: on a uniform cluster with layers that divide and a head lighter than a layer, auto is uniform, and
 * the step is the uniform step exactly. */
START_TEST(uniform_cluster_auto_is_uniform)
{
	int lu[4], la[4];
	double u = step(h100x8, small, "tp: 2, pp: 4", lu);
	double a = step(h100x8, small, "tp: 2, pp: 4, stage_layers: auto", la);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(lu[i], 2);
		ck_assert_int_eq(la[i], 2);
	}
	ck_assert(u == a);
	/* given explicitly, the uniform list is the default split */
	ck_assert(step(h100x8, small, "tp: 2, pp: 4, stage_layers: [2, 2, 2, 2]", NULL) == u);
}
END_TEST

/* Stages on H100 and A100: auto gives the H100 stage more layers, and the step gets faster. */
START_TEST(mixed_cluster_auto_balances)
{
	int lu[2], la[2];
	double u = step(mixed, wide, "tp: 4, pp: 2", lu);
	double a = step(mixed, wide, "tp: 4, pp: 2, stage_layers: auto", la);
	ck_assert_int_eq(lu[0], 4);
	ck_assert_msg(la[0] > la[1] && la[0] + la[1] == 8, "auto split %d %d", la[0], la[1]);
	ck_assert_msg(a < 0.95 * u, "auto %g, uniform %g", a, u);
	/* and it is the best split of the 7 possible */
	for (int k = 1; k < 8; k++) {
		char par[96];
		snprintf(par, sizeof par, "tp: 4, pp: 2, stage_layers: [%d, %d]", k, 8 - k);
		ck_assert_msg(step(mixed, wide, par, NULL) >= a * (1 - 1e-9), "split %d+%d beats auto", k, 8 - k);
	}
}
END_TEST

/* Llama 3.1 405B's 126 layers on 16 stages: one fewer layer on the first and the last stage, as Meta did
 * (Llama 3 paper, section 3.3.2): the head's work makes the last stage's budget one layer short, and the
 * first stage takes what is left. */
START_TEST(llama405b_on_16_stages)
{
	hs_sim s;
	hs_err err = {0};
	const char *groups = "    - {name: h, nodes: 16, gpus_per_node: 8, gpu: H100-SXM-80GB}\n";
	char text[2048], path[64];
	snprintf(text, sizeof text, base, groups, "llama3.1-405b",
		 "tp: 8, pp: 16, stage_layers: auto, recompute: full, sequence_parallel: true");
	hs_test_write_tmp(path, sizeof path, "stages", text);
	hs_scenario *sc = hs_scenario_load(path, NULL, &err);
	unlink(path);
	ck_assert_msg(sc != NULL, "%s", err.msg);
	hs_partition p;
	ck_assert_msg(hs_partition_resolve(&sc->wl, &p, &err) == 0, "%s", err.msg);
	int sum = 0;
	for (int i = 0; i < 16; i++)
		sum += p.stage_layers[i];
	ck_assert_int_eq(sum, 126);
	ck_assert_int_eq(p.stage_layers[0], 7);
	ck_assert_int_eq(p.stage_layers[15], 7);
	for (int i = 1; i < 15; i++)
		ck_assert_int_eq(p.stage_layers[i], 8);
	hs_partition_free(&p);
	hs_scenario_free(sc);
	(void)s;
}
END_TEST

START_TEST(bad_stage_layers)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim(h100x8, small, "tp: 2, pp: 4, stage_layers: [2, 2, 2, 1]", &s, &err) != 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, ":7:43: ") && strstr(err.msg, "parallelism.stage_layers: 2 + 2 + 2 + 1 = 7 layers, "
							      "but custom has 8"),
		      "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(h100x8, small, "tp: 2, pp: 4, stage_layers: [4, 4]", &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "expected auto or a list of 4") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(h100x8, small, "tp: 2, pp: 4, stage_layers: [3, 3, 2, 0]", &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "stage_layers.3") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	/* 3 stages do not divide 8 layers: the model check suggests stage_layers, which then works */
	ck_assert(sim("    - {name: h, nodes: 1, gpus_per_node: 6, gpu: H100-SXM-80GB}\n", small, "tp: 2, pp: 3", &s,
		      &err) != 0);
	ck_assert_msg(strstr(err.msg, "not divisible by pp") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(step("    - {name: h, nodes: 1, gpus_per_node: 6, gpu: H100-SXM-80GB}\n", small,
		       "tp: 2, pp: 3, stage_layers: [3, 3, 2]", NULL) > 0);
	/* auto that cannot fit: exit 3 with the numbers */
	ck_assert(sim("    - {name: h, nodes: 1, gpus_per_node: 2, gpu: H100-SXM-80GB}\n", "llama3-70b",
		      "tp: 1, pp: 2, stage_layers: auto", &s, &err) != 0);
	ck_assert_int_eq(err.code, HS_EINFEASIBLE);
	ck_assert_msg(strstr(err.msg, "no split of 80 layers over 2 pipeline stages fits in memory") &&
			      strstr(err.msg, "GiB usable"),
		      "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stages");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, uniform_cluster_auto_is_uniform);
	tcase_add_test(t, mixed_cluster_auto_balances);
	tcase_add_test(t, llama405b_on_16_stages);
	tcase_add_test(t, bad_stage_layers);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
