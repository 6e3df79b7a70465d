/* ZeRO-3 as DeepSpeed runs it (parallelism.zero3): parameters gathered per prefetch bucket.
 * - every all-gather carries at most one bucket, each rank sends bucket / dp of it, and the task takes what the
 *   collective model (hs_coll_time) gives for that message over that group;
 * - the number of gathers follows the parameters and the bucket, not the graph's units;
 * - property (global batch fixed, the data-parallel group doubled on a synthetic cluster of one GPU per node):
 *   the per-GPU message halves; while compute exceeds the communication the collective model predicts, the
 *   step halves; past the crossover derived from the model (the first group size whose gathers and
 *   reduce-scatters take longer than the compute), the step stops halving, since ring latency grows with the
 *   group while the micro-batches per rank fall;
 * - memory: the gathered parameters resident are max_live_parameters, whatever the units;
 * - bad input: zero3 beside fsdp, or beside zero: 2, exit 2 with the key. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/coll/coll.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

/* 64 nodes of one GPU each behind a two-tier fat tree: every DP group of the sweep crosses the NICs, and the
 * ring's latency grows with the group. micro_batch 16 of 2048 tokens gives compute a margin over the
 * bandwidth part of the communication at small groups (gradients in bf16). */
static const char *base =
	"name: zero3-buckets\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 64, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 5 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {layers: 4, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 2048, tied_embeddings: false}\n"
	"training: {global_batch: 1024, micro_batch: 16, precision: bf16, grad_dtype: bf16}\n"
	"parallelism: {tp: 1, pp: 1, dp: 64, zero3: {prefetch_bucket: 2M, max_live_parameters: 20M}}\n"
	"simulation: {collective_algorithm: ring}\n";

#define BUCKET 2e6
#define MAX_LIVE 20e6

static void run(hs_sim *sim, int dp, const char *extra)
{
	char path[64], s1[64], s2[64];
	hs_test_write_tmp(path, sizeof path, "z3b", base);
	snprintf(s1, sizeof s1, "cluster.groups.0.nodes=%d", dp);
	snprintf(s2, sizeof s2, "parallelism.dp=%d", dp);
	const char *sets[3] = {s1, s2, extra};
	struct hs_strlist l = {.v = sets, .n = extra ? 3 : 2};
	hs_err err = {0};
	int rc = hs_simulate(path, &l, 1, NULL, sim, &err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s", err.msg);
}

struct dp_comm {
	int gathers;
	double gather_bytes_max; /* the largest all-gather's total output */
	double gather_s, rs_s;   /* summed task times */
	double model_gather_s, model_rs_s; /* the same tasks, each timed by hs_coll_time over the group */
};

static struct dp_comm dp_comm(const hs_sim *sim, int dp)
{
	struct dp_comm o = {0};
	const hs_graph *g = &sim->b.graph;
	int *ranks = malloc((size_t)dp * sizeof *ranks);
	for (int i = 0; i < dp; i++)
		ranks[i] = i;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->kind != HS_T_COLL || t->group != HS_GROUP_DP)
			continue;
		double d = sim->r.spans[i].end - sim->r.spans[i].start;
		double m = hs_coll_time(sim->s->wl.cluster, (enum hs_coll_op)t->coll, HS_ALGO_RING, ranks, dp, t->bytes);
		ck_assert(m >= 0);
		/* the task takes what the collective model gives (to the engine's picosecond) */
		ck_assert_msg(fabs(d - m) <= 1e-12 + 1e-9 * m, "task %zu: %.12g s, model %.12g s", i, d, m);
		if (t->what == HS_W_PARAM_GATHER) {
			o.gathers++;
			o.gather_s += d;
			o.model_gather_s += m;
			if (t->bytes > o.gather_bytes_max)
				o.gather_bytes_max = t->bytes;
		} else {
			o.rs_s += d;
			o.model_rs_s += m;
		}
	}
	free(ranks);
	return o;
}

START_TEST(gathers_carry_one_bucket)
{
	hs_sim s;
	run(&s, 8, NULL);
	struct dp_comm c = dp_comm(&s, 8);
	/* bf16: a bucket is 2 bytes per parameter of total output; each rank sends an eighth of it */
	ck_assert_msg(c.gather_bytes_max <= 2 * BUCKET * (1 + 1e-12), "%g", c.gather_bytes_max);
	ck_assert(c.gather_bytes_max > 0.9 * 2 * BUCKET);
	/* the count follows the parameters: per forward or backward pass of one micro-batch, between
	 * ceil(P / bucket) and that plus one per unit (each unit rounds its last bucket up) */
	double P = 0;
	for (int l = 0; l < 4; l++)
		P += hs_model_params_layer(&s.s->model, l);
	P += 2.0 * 32000 * 2048 + 2048; /* input embedding, output layer (untied), final norm */
	int m = 1024 / (8 * 16), passes = 2 * m, units = 4;
	double lo = ceil(P / BUCKET) * passes, hi = (ceil(P / BUCKET) + units) * passes;
	ck_assert_msg(c.gathers >= lo && c.gathers <= hi, "%d gathers, expected [%g, %g]", c.gathers, lo, hi);
	hs_sim_free(&s);
}
END_TEST

START_TEST(doubling_dp_stops_paying_once_gathers_are_exposed)
{
	enum { N = 6 };
	static const int dps[N] = {2, 4, 8, 16, 32, 64};
	double step[N], comp[N], comm[N], msg[N];
	for (int i = 0; i < N; i++) {
		hs_sim s;
		run(&s, dps[i], NULL);
		struct dp_comm c = dp_comm(&s, dps[i]);
		step[i] = s.r.step_time_s;
		comp[i] = s.r.reps[0].compute_s;
		comm[i] = c.model_gather_s + c.model_rs_s; /* the comm stream's work, from the collective model */
		msg[i] = c.gather_bytes_max / dps[i];  /* what each GPU sends per all-gather */
		/* one comm stream and one compute stream: the step is at least either's work and at most both */
		ck_assert_msg(step[i] >= fmax(comp[i], comm[i]) * (1 - 1e-9) && step[i] <= (comp[i] + comm[i]) * (1 + 1e-9),
			      "dp %d: step %g, compute %g, comm %g", dps[i], step[i], comp[i], comm[i]);
		hs_sim_free(&s);
	}
	/* the crossover the collective model predicts: the first group whose communication exceeds compute */
	int cross = -1;
	for (int i = 0; i < N && cross < 0; i++)
		if (comm[i] > comp[i])
			cross = i;
	ck_assert_msg(cross > 1 && cross < N, "crossover at index %d: the cluster no longer shows one", cross);
	for (int i = 1; i < N; i++) {
		double r = step[i] / step[i - 1];
		ck_assert_msg(fabs(msg[i] / msg[i - 1] - 0.5) < 1e-12, "message %g -> %g", msg[i - 1], msg[i]);
		if (i < cross) /* gathers hidden: the step follows compute, which halves */
			ck_assert_msg(r > 0.45 && r < 0.56, "dp %d -> %d: step ratio %.4f before the crossover (dp %d)",
				      dps[i - 1], dps[i], r, dps[cross]);
		else /* exposed: the ring's latency grows with the group, so the step falls by much less */
			ck_assert_msg(r > 0.6, "dp %d -> %d: step ratio %.4f past the crossover (dp %d)", dps[i - 1],
				      dps[i], r, dps[cross]);
	}
	/* and past it the step follows the model's communication: within the edges of one step */
	ck_assert_msg(step[N - 1] < 1.1 * comm[N - 1], "dp %d: step %g, comm %g", dps[N - 1], step[N - 1], comm[N - 1]);
}
END_TEST

START_TEST(live_parameters_are_max_live)
{
	hs_sim s, t;
	run(&s, 8, NULL);
	/* the units change (8 layers: 8 units of one layer instead of 4), the resident gathered copy does not */
	run(&t, 8, "model.layers=8");
	ck_assert_msg(fabs(s.b.stages[0].mem.comm_buffers - 2 * MAX_LIVE) < 1, "%g", s.b.stages[0].mem.comm_buffers);
	ck_assert_msg(fabs(t.b.stages[0].mem.comm_buffers - 2 * MAX_LIVE) < 1, "%g", t.b.stages[0].mem.comm_buffers);
	hs_sim_free(&s);
	hs_sim_free(&t);
	/* a bound above the rank's parameters: all of them, once */
	hs_sim u;
	run(&u, 8, "parallelism.zero3.max_live_parameters=1G");
	/* the rank's parameters as memory counts them: the graph's, the learned positions (seq x hidden)
	 * and the final norm (2 hidden) */
	double held = u.b.stages[0].params + 2048.0 * 2048 + 2 * 2048;
	ck_assert_msg(fabs(u.b.stages[0].mem.comm_buffers - 2 * held) < 1e-9 * held, "%g vs %g",
		      u.b.stages[0].mem.comm_buffers, 2 * held);
	hs_sim_free(&u);
}
END_TEST

static void bad(const char *extra, const char *want)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "z3bad", base);
	const char *sets[1] = {extra};
	struct hs_strlist l = {.v = sets, .n = 1};
	hs_err err = {0};
	hs_sim sim;
	int rc = hs_simulate(path, &l, 1, NULL, &sim, &err);
	unlink(path);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
}

START_TEST(bad_zero3_input)
{
	bad("parallelism.fsdp=true", "parallelism.zero3");
	bad("parallelism.zero=2", "zero3 settings are ZeRO stage 3");
	bad("parallelism.zero3.prefetch_bucket=10", "more than hetsim simulates");
	bad("parallelism.zero3.bucket=10", "unknown key");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zero3_buckets");
	TCase *t = tcase_create("buckets");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, gathers_carry_one_bucket);
	tcase_add_test(t, doubling_dp_stops_paying_once_gathers_are_exposed);
	tcase_add_test(t, live_parameters_are_max_live);
	tcase_add_test(t, bad_zero3_input);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
