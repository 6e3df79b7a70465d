/* The closed-form step (sim/exec/closed_step.c) and the item walk (sim/exec/pipe_step.c) against the event run:
 * on every point of a layout space where both run, the same step time, the same per-rep breakdown (compute,
 * exposed communication by group, bubble, finish, FLOPs) and, for the closed step, the same timeline, to 1e-9
 * relative; where the pattern breaks (a network model, no symmetry, noise, slowdowns) the event run is taken and
 * says why. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/yaml.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

/* 32 H100s in 4 nodes: TP inside a node, PP and DP across, on a fat-tree */
static const char *base =
	"name: closed\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h, nodes: 4, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {layers: 16, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 4096}\n"
	"training: {seq_len: 4096, global_batch: 64, micro_batch: 1, precision: bf16, optimizer: adam}\n"
	"parallelism: {tp: 2, pp: 4, dp: 0, recompute: selective, sequence_parallel: true, schedule: 1f1b}\n"
	"simulation: {fidelity: analytical, seed: 1}\n";

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15;
}

/* Simulate the scenario at `path` with the overrides, closed form asked for or not. */
static int run(const char *path, const char *const *sets, int n, int closed, hs_sim *out, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_file_set(path, sets, n, err);
	if (!d)
		return -1;
	hs_scenario *s = hs_scenario_from_doc(d, path, err);
	if (!s)
		return -1;
	return hs_simulate_scenario(s, path, -1, NULL, closed, out, err);
}

#define SAME(a, b, what, i)                                                                                      \
	ck_assert_msg(close_to(a, b), "%s: %s %d: closed %.17g, event %.17g", label, what, (int)(i), (double)(a),      \
		      (double)(b))

/* Compare a closed-form result with the event run's, field by field; the timeline too where it has one (the
 * item walk keeps none). */
static void same_result(const char *label, const hs_sim *c, const hs_sim *e)
{
	const hs_result *a = &c->r, *b = &e->r;
	SAME(a->step_time_s, b->step_time_s, "step time", 0);
	SAME(a->mfu, b->mfu, "mfu", 0);
	SAME(a->hfu, b->hfu, "hfu", 0);
	SAME(a->mem_peak_bytes, b->mem_peak_bytes, "memory", 0);
	ck_assert_int_eq(a->nreps, b->nreps);
	ck_assert_int_eq(a->critical_rep, b->critical_rep);
	for (int i = 0; i < a->nreps; i++) {
		const hs_rep_result *x = &a->reps[i], *y = &b->reps[i];
		SAME(x->finish_s, y->finish_s, "finish of rep", i);
		SAME(x->compute_s, y->compute_s, "compute of rep", i);
		SAME(x->optimizer_s, y->optimizer_s, "optimizer of rep", i);
		SAME(x->bubble_s, y->bubble_s, "bubble of rep", i);
		SAME(x->flops, y->flops, "flops of rep", i);
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			SAME(x->exposed_s[k], y->exposed_s[k], "exposed of rep", i);
		for (int k = 0; k < HS_TC_COUNT; k++)
			SAME(x->class_s[k], y->class_s[k], "class of rep", i);
	}
	if (a->closed_form == 2) {
		ck_assert_uint_eq(a->tasks, 0);
		return;
	}
	ck_assert_uint_eq(a->tasks, b->tasks);
	for (size_t i = 0; i < a->tasks; i++) {
		SAME(a->spans[i].start, b->spans[i].start, "start of task", i);
		SAME(a->spans[i].end, b->spans[i].end, "end of task", i);
	}
}

/* Every schedule, layout, ZeRO stage, tied or untied embeddings and micro-batch size of a small space: where
 * the point runs at all, the closed form is taken (analytical, symmetric: the pattern) and agrees. */
START_TEST(every_point_agrees)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "closed", base);
	static const char *const sched[][2] = {{"1f1b", "1"},  {"interleaved", "2"}, {"zb-h1", "1"},
					       {"zb-v", "2"},  {"dualpipe", "2"},    {"gpipe", "1"}};
	static const char *const layout[][2] = {{"1", "1"}, {"2", "2"}, {"2", "4"}, {"4", "2"}, {"8", "4"}};
	static const char *const zero[] = {"0", "1", "2", "3"};
	static const char *const tied[] = {"false", "true"};
	static const char *const mb[] = {"1", "2"};
	int ran = 0, closed = 0, walkable = 0, walked = 0;
	for (size_t a = 0; a < sizeof sched / sizeof *sched; a++)
		for (size_t l = 0; l < sizeof layout / sizeof *layout; l++)
			for (size_t z = 0; z < 4; z++)
				for (size_t t = 0; t < 2; t++)
					for (size_t m = 0; m < 2; m++) {
						char s0[64], s1[64], s2[64], s3[64], s4[64], s5[64], s6[64];
						snprintf(s0, sizeof s0, "parallelism.schedule=%s", sched[a][0]);
						snprintf(s1, sizeof s1, "parallelism.virtual_stages=%s", sched[a][1]);
						snprintf(s2, sizeof s2, "parallelism.tp=%s", layout[l][0]);
						snprintf(s3, sizeof s3, "parallelism.pp=%s", layout[l][1]);
						snprintf(s4, sizeof s4, "parallelism.zero=%s", zero[z]);
						snprintf(s5, sizeof s5, "model.tied_embeddings=%s", tied[t]);
						snprintf(s6, sizeof s6, "training.micro_batch=%s", mb[m]);
						const char *sets[] = {s0, s1, s2, s3, s4, s5, s6};
						char label[512];
						snprintf(label, sizeof label, "%s %s %s %s %s %s %s", s0, s1, s2, s3, s4, s5, s6);
						hs_sim e, c;
						hs_err err = {0};
						if (run(path, sets, 7, 0, &e, &err))
							continue; /* a layout the loader or the memory check refuses */
						ck_assert_msg(run(path, sets, 7, 1, &c, &err) == 0, "%s: %s", label, err.msg);
						ran++;
						ck_assert_msg(!e.r.closed_form && e.r.events > 0, "%s", label);
						if (c.r.closed_form) {
							closed++;
							ck_assert_uint_eq(c.r.events, 0);
							same_result(label, &c, &e);
						} else {
							ck_assert_msg(c.r.event_why != NULL, "%s", label);
							same_result(label, &c, &e); /* it ran the events: the same */
						}
						hs_sim_free(&c);
						/* the item walk: the event run's figures where it takes the step, else a
						 * closed form on the graph or the event run, which agree too */
						ck_assert_msg(run(path, sets, 7, HS_SIM_CLOSED_ITEMS, &c, &err) == 0, "%s: %s",
							      label, err.msg);
						int can = z < 3 && strcmp(sched[a][0], "dualpipe") &&
							  !(t && strcmp(layout[l][1], "1"));
						walkable += can;
						walked += c.r.closed_form == 2;
						ck_assert_msg(can || c.r.closed_form != 2, "%s: walked", label);
						same_result(label, &c, &e);
						hs_sim_free(&c);
						hs_sim_free(&e);
					}
	unlink(path);
	/* enough of the space runs for the comparison to mean something, and the pattern covers all of it: every
	 * point here is analytical and symmetric, and ties that would split a wait differently are rare */
	ck_assert_msg(ran >= 100, "only %d points ran", ran);
	ck_assert_msg(closed >= ran * 9 / 10, "closed form on %d of %d points", closed, ran);
	printf("closed form: %d of %d points, equal to the event run\n", closed, ran);
	/* the walk takes every point it can but those with a tie (two waits of different kinds ending at once) */
	ck_assert_msg(walkable >= 50 && walked >= walkable * 9 / 10, "item walk on %d of %d points", walked, walkable);
	printf("item walk: %d of %d points it applies to, equal to the event run\n", walked, walkable);
}
END_TEST

/* Long pipelines, whose item programs repeat through a steady state: the walk that takes the repeating stretch
 * as shifted periods (pipe_step.c, hs_pipe_period) against the walk that times every item
 * (HETSIM_PIPE_PERIODIC=0) and against the event run, to 1e-9, on every schedule the walk takes, ZeRO 0-2 and
 * stages of unequal work (the embedding on the first, the head on the last, layers that do not divide evenly);
 * and the stretch is taken on most points, so that the comparison is of the shortcut, not of the walk twice. */
START_TEST(periodic_walk_agrees)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "periodic", base);
	static const char *const sched[][2] = {{"1f1b", "1"}, {"interleaved", "2"}, {"zb-h1", "1"}, {"zb-v", "2"},
					       {"gpipe", "1"}};
	static const char *const layout[][3] = {{"2", "8", "16"}, {"4", "4", "16"}, {"1", "8", "16"}, {"2", "4", "18"},
						{"2", "2", "16"}};
	static const char *const batch[] = {"256", "96"};
	/* and a slow network: the sends, not the compute, pace the steady state */
	static const char *const nic[] = {"400 Gb/s", "4 Gb/s"};
	int ran = 0, periodic = 0;
	for (size_t a = 0; a < sizeof sched / sizeof *sched; a++)
		for (size_t l = 0; l < sizeof layout / sizeof *layout; l++)
			for (size_t z = 0; z < 3; z++)
				for (size_t b = 0; b < 4; b++) {
					char s0[64], s1[64], s2[64], s3[64], s4[64], s5[64], s6[64], s7[96];
					snprintf(s0, sizeof s0, "parallelism.schedule=%s", sched[a][0]);
					snprintf(s1, sizeof s1, "parallelism.virtual_stages=%s", sched[a][1]);
					snprintf(s2, sizeof s2, "parallelism.tp=%s", layout[l][0]);
					snprintf(s3, sizeof s3, "parallelism.pp=%s", layout[l][1]);
					snprintf(s4, sizeof s4, "model.layers=%s", layout[l][2]);
					snprintf(s5, sizeof s5, "parallelism.zero=%zu", z);
					snprintf(s6, sizeof s6, "training.global_batch=%s", batch[b % 2]);
					snprintf(s7, sizeof s7, "cluster.groups[0].nic.bandwidth=%s", nic[b / 2]);
					/* untied: tied embeddings' sync sends take the graph */
					const char *sets[] = {s0, s1, s2, s3, s4, s5, s6, s7, "model.tied_embeddings=false"};
					char label[600];
					snprintf(label, sizeof label, "%s %s %s %s %s %s %s %s", s0, s1, s2, s3, s4, s5, s6, s7);
					hs_sim e, c, w;
					hs_err err = {0};
					if (run(path, sets, 9, 0, &e, &err))
						continue; /* a layout the loader or the memory check refuses */
					ck_assert_msg(run(path, sets, 9, HS_SIM_CLOSED_ITEMS, &c, &err) == 0, "%s: %s", label,
						      err.msg);
					setenv("HETSIM_PIPE_PERIODIC", "0", 1);
					ck_assert_msg(run(path, sets, 9, HS_SIM_CLOSED_ITEMS, &w, &err) == 0, "%s: %s", label,
						      err.msg);
					unsetenv("HETSIM_PIPE_PERIODIC");
					if (c.r.closed_form == 2) {
						ran++;
						ck_assert_int_eq(w.r.closed_form, 2);
						ck_assert_uint_eq(w.r.items_extrapolated, 0);
						ck_assert_uint_eq(c.r.items_walked + c.r.items_extrapolated, w.r.items_walked);
						periodic += c.r.items_extrapolated > 0;
						same_result(label, &c, &w);
					}
					same_result(label, &c, &e);
					hs_sim_free(&c);
					hs_sim_free(&w);
					hs_sim_free(&e);
				}
	unlink(path);
	ck_assert_msg(ran >= 60, "the walk took only %d points", ran);
	ck_assert_msg(periodic >= ran * 2 / 3, "a repeating stretch on %d of %d points", periodic, ran);
	printf("periodic walk: %d of %d walked points took a repeating stretch, equal to walking every item and to "
	       "the event run\n", periodic, ran);
}
END_TEST

/* Where the pattern breaks, the event run is taken, and it says why. */
START_TEST(broken_pattern_takes_the_event_run)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "closed", base);
	static const struct {
		const char *set, *why;
	} cases[] = {
		{"simulation.fidelity=flow", "network model"},
		{"simulation.symmetry=false", "meet across replicas"},
		{"variability={noise: {distribution: lognormal, cv: 0.05}}", NULL},
		{"variability={slowdown: [{gpus: 3, speed: 0.7}]}", NULL},
		{"variability={steps: 3}", "more than one step"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *sets[] = {cases[i].set};
		hs_sim c;
		hs_err err = {0};
		ck_assert_msg(run(path, sets, 1, 1, &c, &err) == 0, "%s: %s", cases[i].set, err.msg);
		ck_assert_msg(!c.r.closed_form && c.r.event_why, "%s took the closed form", cases[i].set);
		ck_assert_msg(c.r.events > 0, "%s", cases[i].set);
		if (cases[i].why)
			ck_assert_msg(strstr(c.r.event_why, cases[i].why), "%s: %s", cases[i].set, c.r.event_why);
		hs_sim_free(&c);
		ck_assert_msg(run(path, sets, 1, HS_SIM_CLOSED_ITEMS, &c, &err) == 0, "%s: %s", cases[i].set, err.msg);
		ck_assert_msg(!c.r.closed_form && c.r.event_why, "%s took a closed form", cases[i].set);
		hs_sim_free(&c);
	}
	/* and without the option, the event run, with no reason given */
	hs_sim c;
	hs_err err = {0};
	ck_assert(run(path, NULL, 0, 0, &c, &err) == 0);
	ck_assert(!c.r.closed_form && c.r.event_why == NULL);
	hs_sim_free(&c);
	unlink(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("closed_step");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, every_point_agrees);
	tcase_add_test(t, periodic_walk_agrees);
	tcase_add_test(t, broken_pattern_takes_the_event_run);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
