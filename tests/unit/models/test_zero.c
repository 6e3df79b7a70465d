/* ZeRO-3 / FSDP through the builder and the executor:
 * - communication volume: with one micro-batch and parameters and gradients of one precision, the
 *   data-parallel collectives of ZeRO-3 (all-gather before forward, all-gather before backward,
 *   reduce-scatter of gradients) take 1.5x the time of DDP's all-reduce on a ring without latency
 *   (Rajbhandari et al. 2020, section 7.2.2: 3 Psi against 2 Psi);
 * - the parameter gathers are prefetched one unit ahead: the gather of unit u never waits for the compute of
 *   unit u-1, only of u-2, so with a fast network nearly all of it hides behind compute;
 * - symmetry (one rep per stage) gives the step of every replica simulated, for every schedule;
 * - memory: weights, gradients and optimizer states sharded over dp, plus two gathered units. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: zero\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 0 us}}\n"
	"model: {layers: 4, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024, tied_embeddings: false}\n"
	"training: {global_batch: 8, micro_batch: 1, precision: fp32}\n"
	"parallelism: {tp: 1, pp: 1, dp: 8, dp_bucket: 1 TB}\n"
	"simulation: {collective_algorithm: ring}\n";

static int run(hs_sim *sim, const char *const *sets, int n, int symmetry)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "zero", base);
	hs_err err = {0};
	struct hs_strlist l = {.v = (const char **)sets, .n = n};
	int rc = hs_simulate(path, &l, symmetry, NULL, sim, &err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s", err.msg);
	return rc;
}

/* Seconds of data-parallel collectives of rep 0, by what they do. */
static void dp_time(const hs_sim *sim, double *gather, double *reduce)
{
	*gather = *reduce = 0;
	const hs_graph *g = &sim->b.graph;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->kind != HS_T_COLL || t->group != HS_GROUP_DP || t->rep != 0)
			continue;
		double d = sim->r.spans[i].end - sim->r.spans[i].start;
		if (t->what == HS_W_PARAM_GATHER)
			*gather += d;
		else
			*reduce += d;
	}
}

START_TEST(zero3_moves_one_and_a_half_times_ddp)
{
	hs_sim ddp, z3;
	const char *one[] = {"training.global_batch=8"};
	const char *three[] = {"training.global_batch=8", "parallelism.zero=3"};
	run(&ddp, one, 1, 1);
	run(&z3, three, 2, 1);
	double g0, r0, g3, r3;
	dp_time(&ddp, &g0, &r0);
	dp_time(&z3, &g3, &r3);
	ck_assert(g0 == 0 && r0 > 0);
	/* gathers: forward and backward, each the parameters once; reduce-scatter: the gradients once */
	ck_assert_msg(fabs(g3 / r3 - 2.0) < 1e-6, "gather %.9g reduce %.9g", g3, r3);
	ck_assert_msg(fabs((g3 + r3) / r0 - 1.5) < 1e-6, "zero-3 %.9g ddp %.9g", g3 + r3, r0);
	/* the same for several micro-batches: per micro-batch, two gathers and one reduce-scatter */
	hs_sim z3m;
	const char *many[] = {"training.global_batch=32", "parallelism.zero=3"};
	run(&z3m, many, 2, 1);
	double g4, r4;
	dp_time(&z3m, &g4, &r4);
	ck_assert(fabs(g4 / g3 - 4) < 1e-6 && fabs(r4 / r3 - 4) < 1e-6);
	hs_sim_free(&ddp);
	hs_sim_free(&z3);
	hs_sim_free(&z3m);
}
END_TEST

START_TEST(zero3_gathers_are_prefetched)
{
	hs_sim z3;
	const char *three[] = {"parallelism.zero=3", "training.global_batch=32"};
	run(&z3, three, 2, 1);
	const hs_graph *g = &z3.b.graph;
	/* every compute task that waits for a gather: the gather depends on compute two units back, never on
	 * the unit just before */
	uint32_t prev = UINT32_MAX; /* the compute task appended last */
	int gathers = 0, overlapped = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->kind == HS_T_COLL && t->what == HS_W_PARAM_GATHER) {
			gathers++;
			for (uint32_t k = 0; k < t->dep_count; k++)
				ck_assert_uint_ne(g->deps[t->dep_first + k], prev);
			/* issued while `prev` computes: it starts before prev ends */
			if (prev != UINT32_MAX && z3.r.spans[i].start < z3.r.spans[prev].end)
				overlapped++;
		}
		if (t->kind == HS_T_COMPUTE && t->what != HS_W_OPTIMIZER)
			prev = (uint32_t)i;
	}
	ck_assert_int_gt(overlapped, gathers / 2);
	ck_assert_int_gt(gathers, 0);
	/* with NVSwitch bandwidth the gathers hide: exposed data-parallel communication is a small part */
	const hs_rep_result *r = &z3.r.reps[0];
	ck_assert_msg(r->exposed_s[HS_GROUP_DP] < 0.05 * z3.r.step_time_s, "exposed dp %g of %g",
		      r->exposed_s[HS_GROUP_DP], z3.r.step_time_s);
	hs_sim_free(&z3);
}
END_TEST

START_TEST(zero3_symmetry_matches_every_replica)
{
	static const char *scheds[][3] = {
		{"parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.pp=2"},
		{"parallelism.schedule=zb-h1", "parallelism.virtual_stages=1", "parallelism.pp=2"},
		{"parallelism.schedule=interleaved", "parallelism.virtual_stages=2", "parallelism.pp=2"},
		{"parallelism.schedule=gpipe", "parallelism.virtual_stages=1", "parallelism.pp=2"},
	};
	for (int i = 0; i < 4; i++) {
		const char *sets[] = {"parallelism.zero=3", "parallelism.dp=4", "training.global_batch=16",
				      scheds[i][0], scheds[i][1], scheds[i][2]};
		hs_sim a, b;
		run(&a, sets, 6, 1);
		run(&b, sets, 6, 0);
		ck_assert_msg(fabs(a.r.step_time_s - b.r.step_time_s) <= 1e-9 * a.r.step_time_s, "%s: %g vs %g",
			      scheds[i][0], a.r.step_time_s, b.r.step_time_s);
		hs_sim_free(&a);
		hs_sim_free(&b);
	}
}
END_TEST

START_TEST(zero3_memory_is_sharded)
{
	hs_sim z1, z3;
	const char *one[] = {"parallelism.zero=1", "training.precision=bf16"};
	const char *three[] = {"parallelism.fsdp=true", "training.precision=bf16"};
	run(&z1, one, 2, 1);
	run(&z3, three, 2, 1);
	const hs_mem *a = &z1.b.stages[0].mem, *b = &z3.b.stages[0].mem;
	ck_assert(fabs(b->weights - a->weights / 8) < 1e-6 * a->weights);
	ck_assert(fabs(b->grads - a->grads / 8) < 1e-6 * a->grads);
	ck_assert(fabs(b->optimizer - a->optimizer) < 1e-6 * a->optimizer);
	/* four layers in four gather units: two layers' weights unsharded */
	double layer = (a->weights - 2.0 * 2 * 32000 * 1024 - 2.0 * 1024 - 2.0 * 1024 * 1024) / 4; /* embedding, head, final norm, positions */
	ck_assert_msg(fabs(b->comm_buffers - 2 * layer) < 0.01 * layer, "%g vs %g", b->comm_buffers, 2 * layer);
	hs_sim_free(&z1);
	hs_sim_free(&z3);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zero");
	TCase *t = tcase_create("zero3");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, zero3_moves_one_and_a_half_times_ddp);
	tcase_add_test(t, zero3_gathers_are_prefetched);
	tcase_add_test(t, zero3_symmetry_matches_every_replica);
	tcase_add_test(t, zero3_memory_is_sharded);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
