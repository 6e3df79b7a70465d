/* The build's reuse within a step (models/build.c, ctx.memo: every stage's schedule items from one run, the
 * in-flight peak from the walked items, each kind of layer's op list generated once and written in place)
 * changes nothing: over schedules, recompute modes, ZeRO stages, MoE with dense layers, mixed layer kinds,
 * fp8, uneven stages and uneven replicas (symmetry off), the graph (every task, dependency, op and rep),
 * the stages' facts (parameters, memory, in-flight micro-batches) and the step's result are the same field
 * for field with HETSIM_BUILD_MEMO=0, which builds everything afresh as the builder did before the reuse. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static const char *base =
	"name: memo\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {layers: 8, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024}\n"
	"training: {global_batch: 32, micro_batch: 1, precision: bf16}\n"
	"parallelism: {tp: 2, pp: 2, dp: 4, dp_bucket: 4 MB}\n"
	"simulation: {fidelity: analytical}\n";

/* Overrides of one case, ';'-separated. */
static const char *const cases[] = {
	"parallelism.schedule=1f1b",
	"parallelism.schedule=gpipe",
	"parallelism.schedule=zb-h1",
	"parallelism.schedule=zb-h1;parallelism.pp=4;parallelism.dp=2",
	"parallelism.schedule=zb-h1;parallelism.recompute=full;parallelism.zero=1",
	"parallelism.schedule=interleaved;parallelism.virtual_stages=2",
	"parallelism.schedule=interleaved;parallelism.virtual_stages=2;parallelism.pp=4;parallelism.dp=2",
	"parallelism.schedule=zb-v",
	"parallelism.schedule=dualpipe",
	"parallelism.recompute=selective",
	"parallelism.recompute=full;parallelism.schedule=zb-h1",
	"parallelism.zero=1",
	"parallelism.zero=3",
	"parallelism.zero=3;parallelism.schedule=zb-h1",
	"training.precision=fp8",
	"training.precision=fp8;training.fp8_recipe=current;parallelism.schedule=zb-h1",
	"model.experts=8;model.top_k=2;model.expert_ffn=1024;model.dense_layers=2;parallelism.ep=2",
	"model.experts=8;model.top_k=2;model.expert_ffn=1024;model.dense_layers=3;parallelism.ep=2;"
	"parallelism.schedule=zb-h1;parallelism.recompute=selective",
	"model.layer_pattern=[sliding, full];model.window=256",
	"model.layer_pattern=[sliding, full];model.window=256;parallelism.schedule=interleaved;"
	"parallelism.virtual_stages=2",
	"parallelism.stage_layers=[3, 5]",
	"parallelism.stage_layers=[3, 5];parallelism.schedule=zb-h1",
	"parallelism.dp_microbatches=[10, 6, 8, 8];parallelism.schedule=zb-h1",
	"parallelism.dp_microbatches=[10, 6, 8, 8];parallelism.schedule=1f1b;parallelism.zero=1",
	"parallelism.pp=1;parallelism.dp=8",
	"parallelism.pp=8;parallelism.tp=1;parallelism.dp=2;parallelism.schedule=zb-h1",
	"training.micro_batch=2;parallelism.tp=4;parallelism.dp=2",
};

/* Simulate case c with the memo on or off; returns 0, or -1 with the message in err. */
static int run(const char *c, int memo, int symmetry, hs_sim *sim, hs_err *err)
{
	char path[64], buf[512];
	hs_test_write_tmp(path, sizeof path, "memo", base);
	snprintf(buf, sizeof buf, "%s", c);
	const char *sets[16];
	int n = 0;
	for (char *tok = strtok(buf, ";"); tok && n < 16; tok = strtok(NULL, ";"))
		sets[n++] = tok;
	struct hs_strlist l = {.v = sets, .n = n};
	if (memo)
		unsetenv("HETSIM_BUILD_MEMO");
	else
		setenv("HETSIM_BUILD_MEMO", "0", 1);
	ck_assert_int_eq(hs_build_memo_on(), memo);
	int rc = hs_simulate(path, &l, symmetry, NULL, sim, err);
	unsetenv("HETSIM_BUILD_MEMO");
	unlink(path);
	return rc;
}

static void same_op(const hs_op *a, const hs_op *b, const char *c, size_t i)
{
	int eq = a->kind == b->kind && a->name == b->name && a->dtype == b->dtype && a->family == b->family &&
		 a->m == b->m && a->n == b->n && a->k == b->k && a->count == b->count && a->b == b->b &&
		 a->h == b->h && a->s == b->s && a->d == b->d && a->s_kv == b->s_kv && a->causal == b->causal &&
		 a->bwd == b->bwd && a->flops == b->flops && a->bytes == b->bytes && a->coll == b->coll &&
		 a->group == b->group && a->recompute == b->recompute && a->dur_s == b->dur_s &&
		 a->routed == b->routed && a->overlap == b->overlap;
	ck_assert_msg(eq, "%s: op %zu differs (%s against %s)", c, i, a->name, b->name);
}

static void same_task(const hs_task *a, const hs_task *b, const char *c, size_t i)
{
	int eq = a->kind == b->kind && a->stream == b->stream && a->what == b->what && a->group == b->group &&
		 a->coll == b->coll && a->rep == b->rep && a->peer == b->peer && a->mb == b->mb &&
		 a->chunk == b->chunk && a->op_first == b->op_first && a->op_count == b->op_count &&
		 a->scale == b->scale && a->bytes == b->bytes && a->rendezvous == b->rendezvous &&
		 a->dep_first == b->dep_first && a->dep_count == b->dep_count && a->xgroup == b->xgroup;
	ck_assert_msg(eq, "%s: task %zu differs", c, i);
}

/* Returns 1 when the case ran (0: it failed, the same way both ways). */
static int compare(const char *c, int symmetry)
{
	hs_sim on, off;
	hs_err e1 = {0}, e2 = {0};
	int r1 = run(c, 1, symmetry, &on, &e1), r2 = run(c, 0, symmetry, &off, &e2);
	ck_assert_msg(r1 == r2, "%s: memo on %d (%s), off %d (%s)", c, r1, e1.msg, r2, e2.msg);
	if (r1) { /* a case that does not run fails the same way both ways */
		ck_assert_str_eq(e1.msg, e2.msg);
		ck_assert_int_eq(e1.code, e2.code);
		fprintf(stderr, "build_memo: %s (symmetry %d) does not run: %s\n", c, symmetry, e1.msg);
		return 0;
	}
	const hs_graph *a = &on.b.graph, *b = &off.b.graph;
	ck_assert_uint_eq(a->ntasks, b->ntasks);
	ck_assert_uint_eq(a->ndeps, b->ndeps);
	ck_assert_uint_eq(a->nops, b->nops);
	ck_assert_int_eq(a->nreps, b->nreps);
	ck_assert_int_eq(a->nrendezvous, b->nrendezvous);
	for (size_t i = 0; i < a->ntasks; i++)
		same_task(&a->tasks[i], &b->tasks[i], c, i);
	ck_assert(memcmp(a->deps, b->deps, a->ndeps * sizeof *a->deps) == 0);
	for (size_t i = 0; i < a->nops; i++)
		same_op(&a->ops[i], &b->ops[i], c, i);
	for (int i = 0; i < a->nreps; i++)
		ck_assert(a->reps[i].stage == b->reps[i].stage && a->reps[i].dp_index == b->reps[i].dp_index &&
			  a->reps[i].multiplicity == b->reps[i].multiplicity);
	ck_assert_int_eq(on.b.pp, off.b.pp);
	for (int s = 0; s < on.b.pp; s++) {
		const hs_stage_info *x = &on.b.stages[s], *y = &off.b.stages[s];
		ck_assert_msg(x->in_flight == y->in_flight && x->layers == y->layers && x->params == y->params &&
			      x->grad_bytes == y->grad_bytes && x->mem.total == y->mem.total,
			      "%s: stage %d's facts differ (in flight %d against %d)", c, s, x->in_flight, y->in_flight);
	}
	ck_assert_msg(on.r.step_time_s == off.r.step_time_s, "%s: step %.17g s against %.17g s", c,
		      on.r.step_time_s, off.r.step_time_s);
	ck_assert(on.r.mfu == off.r.mfu && on.r.mem_peak_bytes == off.r.mem_peak_bytes);
	hs_sim_free(&on);
	hs_sim_free(&off);
	return 1;
}

START_TEST(memo_changes_nothing)
{
	size_t n = sizeof cases / sizeof *cases, ran = 0;
	for (size_t i = 0; i < n; i++) {
		ran += compare(cases[i], -1);
		ran += compare(cases[i], 0); /* one rep per (stage, replica), rendezvous between them */
	}
	ck_assert_uint_eq(ran, 2 * n); /* every case is meant to run: one that does not compares nothing */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("build_memo");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, memo_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
