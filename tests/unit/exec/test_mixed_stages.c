/* Stage partitioning of a layer stack that mixes kinds (sim/exec/partition.c times every layer by its own op
 * list, models/mixer.h): full-attention layers at a long sequence cost more than Gated DeltaNet layers, so
 * `stage_layers: auto` gives the stage holding them fewer layers, and the step is faster than the uniform
 * split; the same stack with every layer full attention stays uniform. */
#include <check.h>
#include <stdio.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: mixed\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB}\n"
	"model: {layers: 8, hidden: 1024, heads: 8, ffn: 4096, vocab: 4096, seq_len: 32768, gated_mlp: true,\n"
	"        layer_pattern: [%s], linear_attention: {k_heads: 8, v_heads: 8, k_head_dim: 128, v_head_dim: 128}}\n"
	"training: {global_batch: 16, micro_batch: 1}\n"
	"parallelism: {tp: 2, pp: 2%s}\n"
	"simulation: {collective_algorithm: ring}\n";

static double step(const char *pattern, const char *par, int *layers)
{
	char text[2048], path[64];
	snprintf(text, sizeof text, base, pattern, par);
	hs_test_write_tmp(path, sizeof path, "mixed", text);
	hs_sim s;
	hs_err err = {0};
	int rc = hs_simulate(path, NULL, -1, NULL, &s, &err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s", err.msg);
	double t = s.r.step_time_s;
	for (int i = 0; i < s.b.pp; i++)
		layers[i] = s.b.stages[i].layers;
	hs_sim_free(&s);
	return t;
}

START_TEST(auto_balances_time_not_count)
{
	const char *mix = "full, full, full, full, linear, linear, linear, linear";
	int lu[2], la[2], f[2];
	double u = step(mix, "", lu);
	double a = step(mix, ", stage_layers: auto", la);
	ck_assert_int_eq(lu[0], 4);
	ck_assert_int_eq(lu[1], 4);
	ck_assert_msg(la[0] < 4 && la[0] + la[1] == 8, "auto split %d %d", la[0], la[1]);
	ck_assert_msg(a < u, "auto %.6f s, uniform %.6f s", a, u);
	/* the control: every layer the same kind, the uniform split is kept */
	step("full, full, full, full, full, full, full, full", ", stage_layers: auto", f);
	ck_assert_int_eq(f[0], 4);
	ck_assert_int_eq(f[1], 4);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mixed_stages");
	TCase *t = tcase_create("auto");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, auto_balances_time_not_count);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
