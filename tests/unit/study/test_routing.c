/* parallelism.expert_routing end to end (models/moe_routing.h, sim/exec/routing.c): skew 0 is today's
 * uniform result exactly; the same seed gives identical steps and another seed other steps; a skew makes the
 * steps differ from each other and the mean slower than uniform; bad input exits with the key. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: routing\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h, nodes: 2, gpus_per_node: 4, gpu: H100-SXM-80GB}\n"
	"model: {layers: 4, hidden: 1024, heads: 8, ffn: 2048, vocab: 4096, seq_len: 1024, gated_mlp: true,\n"
	"        experts: 16, top_k: 2}\n"
	"training: {global_batch: 32, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: 2%s}\n"
	"simulation: {collective_algorithm: ring, seed: %d}\n"
	"variability: {steps: 8}\n";

static int symmetry = -1;

static int sim(const char *par, int seed, hs_sim *s, hs_err *err)
{
	char text[2048], path[64];
	snprintf(text, sizeof text, base, par, seed);
	hs_test_write_tmp(path, sizeof path, "routing", text);
	int rc = hs_simulate(path, NULL, symmetry, NULL, s, err);
	unlink(path);
	return rc;
}

static void run(const char *par, int seed, double *steps, double *mean)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert_msg(sim(par, seed, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(s.b.graph.nreps, symmetry == 0 || strstr(par, "ep: 2") ? 8 : 2);
	ck_assert_int_eq(s.r.steps, 8);
	memcpy(steps, s.r.step_times, 8 * sizeof *steps);
	*mean = s.r.step_time_s;
	hs_sim_free(&s);
}

START_TEST(skew_zero_is_uniform_and_seeds_repeat)
{
	double u[8], z[8], a[8], b[8], c[8], mu, mz, ma, mb, mc;
	run(", ep: 4", 1, u, &mu);
	run(", ep: 4, expert_routing: {skew: 0}", 1, z, &mz);
	ck_assert(memcmp(u, z, sizeof u) == 0 && mu == mz);
	run(", ep: 4, expert_routing: {skew: 0.5}", 1, a, &ma);
	run(", ep: 4, expert_routing: {skew: 0.5}", 1, b, &mb);
	run(", ep: 4, expert_routing: {skew: 0.5}", 2, c, &mc);
	ck_assert(memcmp(a, b, sizeof a) == 0 && ma == mb);
	ck_assert(memcmp(a, c, sizeof a) != 0);
	int differ = 0;
	for (int i = 1; i < 8; i++) {
		differ += a[i] != a[0];
		ck_assert(a[i] > u[i]); /* the busiest rank's load is above the uniform share */
	}
	ck_assert(differ > 0);
	ck_assert(ma > mu);
	/* the expected counts (no multinomial noise) are also above uniform */
	run(", ep: 4, expert_routing: {skew: 0.5, sampling: expected}", 1, c, &mc);
	ck_assert(mc > mu);
}
END_TEST

/* ep = dp: one EP group per stage, one draw for all its replicas: the symmetric run (a rep per stage) and
 * the full one (a rep per replica) give the same steps, to rounding of the events' order */
START_TEST(symmetry_on_and_off_agree)
{
	double a[8], b[8], ma, mb;
	run(", ep: 4, expert_routing: {skew: 0.5}", 3, a, &ma);
	symmetry = 0;
	run(", ep: 4, expert_routing: {skew: 0.5}", 3, b, &mb);
	symmetry = -1;
	for (int i = 0; i < 8; i++)
		ck_assert_msg(fabs(a[i] - b[i]) <= 1e-9 * a[i], "step %d: %.12g vs %.12g", i, a[i], b[i]);
	/* ep 2 < dp 4: two EP groups per stage draw apart; symmetry goes off by itself, and the faster group
	 * waits for the slower at the gradient all-reduce (no such wait with uniform routing) */
	for (int skew = 0; skew <= 1; skew++) {
		symmetry = skew ? -1 : 0; /* uniform: every replica simulated too, to compare */
		hs_sim s;
		hs_err err = {0};
		ck_assert_msg(sim(skew ? ", ep: 2, expert_routing: {skew: 0.5}" : ", ep: 2", 3, &s, &err) == 0, "%s",
			      err.msg);
		ck_assert_int_eq(s.b.graph.nreps, 8);
		double wait = 0;
		for (int i = 0; i < s.r.nreps; i++)
			wait += s.r.reps[i].straggler_wait_s;
		ck_assert_msg(skew ? wait > 0 : wait == 0, "skew %d: straggler wait %g s", skew, wait);
		hs_sim_free(&s);
	}
	symmetry = -1;
}
END_TEST

START_TEST(bad_routing)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim(", ep: 4, expert_routing: {skew: -1}", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "parallelism.expert_routing.skew") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(", ep: 4, expert_routing: {skew: 1, sampling: poisson}", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "parallelism.expert_routing.sampling") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(", ep: 4, expert_routing: {skew: 1}, expert_imbalance: {zipf: 1}", 1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "given with expert_imbalance") != NULL, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, ":8:52: parallelism.expert_routing: given") != NULL, "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("routing");
	TCase *t = tcase_create("e2e");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, skew_zero_is_uniform_and_seeds_repeat);
	tcase_add_test(t, symmetry_on_and_off_agree);
	tcase_add_test(t, bad_routing);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
