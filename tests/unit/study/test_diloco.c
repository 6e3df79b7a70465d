/* DiLoCo across sites (sim/study/diloco.c, site-major ranks in models/build.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: diloco\n"
	"cluster:\n"
	"  groups:\n"
	"%s"
	"model: {layers: 4, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 2048}\n"
	"training: {global_batch: %d, micro_batch: 1}\n"
	"parallelism: {tp: 2, pp: 2, dp: %d, dp_bucket: 1 TB}\n"
	"simulation: {collective_algorithm: ring}\n"
	"%s";

static const char *site = "    - {name: %s, nodes: 2, gpus_per_node: 4, gpu: H100-SXM-80GB}\n";

static int sim(int nsites, int batch, int dp, const char *extra, int symmetry, hs_sim *out, hs_err *err)
{
	char groups[512] = "", g[128], text[4096], path[64];
	for (int i = 0; i < nsites; i++) {
		char name[16];
		snprintf(name, sizeof name, "s%d", i);
		snprintf(g, sizeof g, site, name);
		strcat(groups, g);
	}
	snprintf(text, sizeof text, base, groups, batch, dp, extra);
	hs_test_write_tmp(path, sizeof path, "diloco", text);
	int rc = hs_simulate(path, NULL, symmetry, NULL, out, err);
	unlink(path);
	return rc;
}

/* Golden: the inner step of S sites is the step of one site alone (its data-parallel group is its own
 * replicas), with and without symmetry; and the outer sync is the ring closed form over the sites. */
START_TEST(inner_step_is_one_site)
{
	hs_sim one, two, two_ns, three;
	hs_err err = {0};
	const char *dl = "diloco: {inner_steps: 50, outer_compression: 0.25, wan_bandwidth: 100 Gb/s, "
			 "wan_latency: 20 ms}\n";
	ck_assert_msg(sim(1, 8, 2, "", -1, &one, &err) == 0, "%s", err.msg);
	ck_assert_msg(sim(2, 16, 4, dl, -1, &two, &err) == 0, "%s", err.msg);
	ck_assert_msg(sim(2, 16, 4, dl, 0, &two_ns, &err) == 0, "%s", err.msg);
	ck_assert_msg(sim(3, 24, 6, dl, 0, &three, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(two.s->par.sites, 2);
	ck_assert_int_eq(hs_build_dp_group_size(&two.s->par), 2);
	ck_assert_msg(fabs(two.r.step_time_s - one.r.step_time_s) < 1e-12, "two sites %.12g, one %.12g",
		      two.r.step_time_s, one.r.step_time_s);
	ck_assert(fabs(two_ns.r.step_time_s - one.r.step_time_s) < 1e-12);
	ck_assert(fabs(three.r.step_time_s - one.r.step_time_s) < 1e-12);
	/* site-major: site 1 holds devices 8-15, replicas 2-3 of every stage */
	ck_assert_int_eq(hs_build_rank(&two.s->par, 0, 0, 2, 0), 8);
	ck_assert_int_eq(hs_build_rank(&two.s->par, 1, 0, 3, 1), 8 + 1 + 2 * (1 + 2 * 1));
	hs_diloco_out o;
	hs_diloco_outer(three.s, &three.b, &three.r, &o);
	double params = hs_model_params(&three.s->model), bytes = params * 4 * 0.25, bw = 100e9 / 8;
	ck_assert_double_eq_tol(o.outer_bytes, bytes, 1e-6);
	ck_assert_double_eq_tol(o.outer_wan_s, 2.0 * 2 * (0.020 + bytes / (3 * bw)), 1e-12);
	ck_assert_double_eq_tol(o.effective_s, o.inner_s + o.outer_s / 50, 1e-12);
	ck_assert(o.outer_site_s > 0 && o.outer_s == o.outer_wan_s + o.outer_site_s);
	ck_assert(o.sync_wan_s > o.outer_wan_s); /* fp32 gradients every step against compressed deltas */
	hs_sim_free(&one);
	hs_sim_free(&two);
	hs_sim_free(&two_ns);
	hs_sim_free(&three);
}
END_TEST

/* With variability.steps >= H the outer sync is inserted after every H-th simulated step. */
START_TEST(simulated_steps)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim(2, 16, 4, "diloco: {inner_steps: 4, wan_bandwidth: 10 Gb/s}\nvariability: {steps: 8}\n", -1, &s,
		      &err) == 0);
	hs_diloco_out o;
	hs_diloco_outer(s.s, &s.b, &s.r, &o);
	ck_assert_double_eq_tol(o.simulated_s, s.r.step_time_s + 2 * o.outer_s / 8, 1e-12);
	ck_assert(o.wan_lat > 0); /* from the fabric when not given */
	hs_sim_free(&s);
}
END_TEST

START_TEST(bad_diloco)
{
	hs_sim s;
	hs_err err = {0};
	ck_assert(sim(1, 8, 2, "diloco: {inner_steps: 10}\n", -1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "one node group, so one site") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(2, 16, 4, "diloco: {sites: 3}\n", -1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "diloco.sites: 3 sites do not divide the 4 data-parallel replicas") != NULL, "%s",
		      err.msg);
	hs_err_clear(&err);
	ck_assert(sim(2, 16, 4, "diloco: {inner_stepz: 10}\n", -1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "did you mean 'inner_steps'") != NULL, "%s", err.msg);
	hs_err_clear(&err);
	ck_assert(sim(2, 16, 4, "diloco: {outer_compression: 2}\n", -1, &s, &err) != 0);
	ck_assert_msg(strstr(err.msg, "diloco.outer_compression") != NULL, "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diloco");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, inner_step_is_one_site);
	tcase_add_test(t, simulated_steps);
	tcase_add_test(t, bad_diloco);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
