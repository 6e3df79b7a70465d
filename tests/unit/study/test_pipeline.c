/* Pipeline layouts as big runs configure them (issue 15): uneven interleaved chunks (per-chunk lists, Megatron's
 * embedding_as_layer / loss_as_layer), FSDP with and without resharding after forward, memory on every device
 * a stage runs on, and the tied embedding's gradient sum between the first and the last stage. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/memory.h"
#include "models/schedule.h"
#include "sim/base/sizes.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

/* 8 layers GPT style (tied embeddings, as a full shape without gated_mlp is), on pp x dp H100s. */
static const char *tiny =
	"name: pipe\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: %d, gpu: H100-SXM-80GB}\n"
	"model: {layers: 8, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024%s}\n"
	"training: {global_batch: 8, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: %d, dp: %d, dp_bucket: 1 TB%s}\n"
	"simulation: {collective_algorithm: ring}\n";

static int run_text(const char *text, int symmetry, hs_sim *out, hs_err *err)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "pipe", text);
	int rc = hs_simulate(path, NULL, symmetry, NULL, out, err);
	unlink(path);
	return rc;
}

static int run_model(int pp, int dp, const char *model, const char *par, hs_sim *out, hs_err *err)
{
	char text[2048];
	snprintf(text, sizeof text, tiny, pp * dp, model, pp, dp, par);
	return run_text(text, -1, out, err);
}

static int run_tiny(int pp, int dp, const char *par, hs_sim *out, hs_err *err)
{
	return run_model(pp, dp, "", par, out, err);
}

static int count(const hs_graph *g, int kind, int what, int rep)
{
	int n = 0;
	for (size_t i = 0; i < g->ntasks; i++)
		n += g->tasks[i].kind == kind && g->tasks[i].what == what && (rep < 0 || g->tasks[i].rep == rep);
	return n;
}

/* Llama 3.1 405B on 16,384 H100 (TP 8, PP 16, DP 128) with Meta's split: 126 + embedding + loss = 128 = 16 x v
 * chunks of 128 / (16 v) layers, the first and the last one layer fewer. v 2: 4 each, 3 at the ends (stages
 * 0 and 15 hold 7); v 4: 2 each, 1 at the ends; v 8: 1 each, 0 at the ends (embedding-only and loss-only
 * chunks). Every split adds up to 126 and runs. */
START_TEST(llama405b_megatron_split)
{
	static const int vs[] = {2, 4, 8};
	for (int i = 0; i < 3; i++) {
		int v = vs[i];
		char set[64];
		snprintf(set, sizeof set, "parallelism.virtual_stages=%d", v);
		struct hs_strlist sets = {0};
		hs_strlist_push(&sets, set);
		hs_sim r;
		hs_err err = {0};
		int rc = hs_simulate("scenarios/llama3/llama31-405b-16k.yaml", &sets, -1, NULL, &r, &err);
		hs_strlist_free(&sets);
		ck_assert_msg(rc == 0, "v %d: %s", v, err.msg);
		const hs_partition *pt = &r.b.part;
		int per = 128 / (16 * v), sum = 0;
		ck_assert_int_eq(pt->v, v);
		for (int g = 0; g < 16 * v; g++) {
			int want = per - (g == 0) - (g == 16 * v - 1);
			ck_assert_int_eq(pt->chunk_layers[g], want);
			sum += pt->chunk_layers[g];
		}
		ck_assert_int_eq(sum, 126);
		ck_assert_int_eq(pt->stage_layers[0], 8 - 1);
		ck_assert_int_eq(pt->stage_layers[15], 8 - 1);
		ck_assert_int_eq(pt->stage_layers[7], 8);
		ck_assert(r.r.step_time_s > 0);
		hs_sim_free(&r);
	}
}
END_TEST

/* Per-chunk lists: [[c00, c01], [c10, c11]] per stage, or [g0, g1, g2, g3] per virtual stage in model order
 * (g = k pp + s), give the same chunks; a stage's list need not divide by virtual_stages. */
START_TEST(chunk_lists)
{
	hs_sim a, b;
	hs_err err = {0};
	/* stage 0 runs global chunks 0 and 2, stage 1 chunks 1 and 3 */
	ck_assert_msg(run_tiny(2, 1, ", virtual_stages: 2, stage_layers: [[1, 3], [2, 2]]", &a, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(run_tiny(2, 1, ", virtual_stages: 2, stage_layers: [1, 2, 3, 2]", &b, &err) == 0, "%s",
		      err.msg);
	static const int want[] = {1, 2, 3, 2};
	for (int g = 0; g < 4; g++) {
		ck_assert_int_eq(a.b.part.chunk_layers[g], want[g]);
		ck_assert_int_eq(b.b.part.chunk_layers[g], want[g]);
	}
	ck_assert_int_eq(a.b.part.stage_layers[0], 4);
	ck_assert_int_eq(a.b.part.stage_layers[1], 4);
	ck_assert(a.r.step_time_s == b.r.step_time_s);
	/* the chunks' layers are the stage's: stage 0 holds layers 0 and 3..5 */
	ck_assert_int_eq(a.b.stages[0].layers, 4);
	hs_sim_free(&a);
	hs_sim_free(&b);
}
END_TEST

/* Bad splits are input errors (exit 2) at the key, with file:line:col. */
START_TEST(bad_chunk_lists)
{
	hs_sim r;
	hs_err err = {0};
	struct {
		const char *par, *msg;
	} cases[] = {
		{", virtual_stages: 2, stage_layers: [[1, 3], [2, 1]]", "= 7 layers"},
		{", virtual_stages: 2, stage_layers: [[4, 0], [4, 0]]", "stage_layers.0.1"}, /* chunk 2 is inside */
		{", virtual_stages: 2, stage_layers: [[1, 3], [2]]", "stage_layers.1: expected a list of 2"},
		{", virtual_stages: 2, stage_layers: [3, 5]", "not divisible by virtual_stages 2"},
		{", virtual_stages: 2, embedding_as_layer: true", "9 do not split over"},
		{", embedding_as_layer: true, stage_layers: [4, 4]", "parallelism.embedding_as_layer"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hs_err_clear(&err);
		ck_assert_msg(run_tiny(2, 1, cases[i].par, &r, &err) != 0, "%s", cases[i].par);
		ck_assert_int_eq(err.code, HS_EINPUT);
		ck_assert_msg(strstr(err.msg, cases[i].msg) && strstr(err.msg, "/tmp/hetsim-pipe-") &&
				      strstr(err.msg, ":7:"),
			      "%s -> %s", cases[i].par, err.msg);
	}
}
END_TEST

/* Both flags with pp 2 and one chunk each: (8 + 2) / 2 = 5 per stage, 4 transformer layers on each. */
START_TEST(embedding_and_loss_as_layers)
{
	hs_sim r;
	hs_err err = {0};
	ck_assert_msg(run_tiny(2, 1, ", embedding_as_layer: true, loss_as_layer: true", &r, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(r.b.part.chunk_layers[0], 4);
	ck_assert_int_eq(r.b.part.chunk_layers[1], 4);
	hs_sim_free(&r);
	/* the embedding alone: 9 do not split in 2 */
	ck_assert(run_tiny(2, 1, ", embedding_as_layer: true", &r, &err) != 0);
	ck_assert_msg(strstr(err.msg, "9 do not split over pp x virtual_stages = 2 x 1"), "%s", err.msg);
}
END_TEST

/* FSDP, pp 2, dp 2, 4 micro-batches per replica, 1F1B, 4 layers per stage = 4 gather units; one bucket.
 * reshard_after_forward true (fsdp: true, ZeRO-3): every micro-batch gathers each unit before its forward
 * and again before its backward (4 x 2 x 4 = 32 gathers per rep) and reduce-scatters each unit's gradients
 * (4 x 4 = 16). false: each unit is gathered once per step (4), and the gradients once, in one bucket (1). */
START_TEST(fsdp_modes)
{
	hs_sim t, f;
	hs_err err = {0};
	ck_assert_msg(run_tiny(2, 2, ", fsdp: true", &t, &err) == 0, "%s", err.msg);
	ck_assert_msg(run_tiny(2, 2, ", fsdp: {reshard_after_forward: false}", &f, &err) == 0, "%s", err.msg);
	for (int rep = 0; rep < 2; rep++) {
		ck_assert_int_eq(count(&t.b.graph, HS_T_COLL, HS_W_PARAM_GATHER, rep), 32);
		ck_assert_int_eq(count(&t.b.graph, HS_T_COLL, HS_W_GRAD_REDUCE, rep), 16);
		ck_assert_int_eq(count(&f.b.graph, HS_T_COLL, HS_W_PARAM_GATHER, rep), 4);
		ck_assert_int_eq(count(&f.b.graph, HS_T_COLL, HS_W_GRAD_REDUCE, rep), 1);
	}
	/* the same bytes gathered per step: 8 = 2 x 4 micro-batches' worth against 1 */
	double bt = 0, bf = 0;
	for (size_t i = 0; i < t.b.graph.ntasks; i++)
		if (t.b.graph.tasks[i].what == HS_W_PARAM_GATHER && t.b.graph.tasks[i].rep == 0)
			bt += t.b.graph.tasks[i].bytes;
	for (size_t i = 0; i < f.b.graph.ntasks; i++)
		if (f.b.graph.tasks[i].what == HS_W_PARAM_GATHER && f.b.graph.tasks[i].rep == 0)
			bf += f.b.graph.tasks[i].bytes;
	ck_assert_msg(fabs(bt - 8 * bf) < 1e-6 * bt, "%g vs %g", bt, bf);
	/* kept parameters cost memory: more than resharding on every stage */
	ck_assert(f.b.stages[0].mem.total > t.b.stages[0].mem.total);
	hs_sim_free(&t);
	hs_sim_free(&f);
}
END_TEST

/* Memory of FSDP without resharding, against ZeRO-0 and ZeRO-3 by hand (Megatron recipe: bf16 weights, fp32
 * gradients): the weights are ZeRO-3's shards plus the whole bf16 copy (ZeRO-0's weights), the gradients are
 * unsharded (ZeRO-0's), there are no per-unit gather buffers, and the optimizer states stay sharded. */
START_TEST(fsdp_keep_memory)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("llama3-8b", &m), 0);
	hs_mem_cfg c = {.layer = {.tp = 1, .cp = 1, .ep = 1, .micro_batch = 1, .seq_len = 8192, .dtype = HS_BF16,
				  .flash_attention = 1},
			.pp = 1, .dp = 8, .layers_on_rank = 32, .first_stage = 1, .last_stage = 1, .in_flight = 1};
	hs_mem z0, z3, keep;
	hs_memory_rank(&m, &c, &z0);
	c.zero_stage = 3;
	hs_memory_rank(&m, &c, &z3);
	c.fsdp_keep = 1;
	hs_memory_rank(&m, &c, &keep);
	ck_assert(fabs(keep.weights - (z3.weights + z0.weights)) < 1e-9 * keep.weights);
	ck_assert(keep.grads == z0.grads);
	ck_assert(keep.optimizer == z3.optimizer);
	ck_assert(keep.comm_buffers == 0 && z3.comm_buffers > 0);
	/* 8.03 B parameters: 2 bytes gathered + 4 bytes of gradients + the shards: about 6 x 8 GB more than ZeRO-3 */
	double extra = keep.total - z3.total;
	ck_assert_msg(extra > 40 * HS_GB && extra < 50 * HS_GB, "%g", extra / HS_GB);
}
END_TEST

/* A stage whose replicas mix an 80 GB and a 48 GB device (the 48 GB one faster, so it does not pace the rep):
 * exit 3 with or without symmetry, naming the 48 GB device, its index and capacity. */
START_TEST(memory_on_every_device)
{
	const char *text =
		"name: mix\n"
		"cluster:\n"
		"  groups:\n"
		"    - {name: big, nodes: 1, gpus_per_node: 1, gpu: A100-SXM-80GB}\n"
		"    - {name: small, nodes: 1, gpus_per_node: 1, gpu: {name: G48, base: A100-SXM-80GB, memory: 48 GiB, "
		"peak_bf16: 400 TFLOPS}}\n"
		"model: {layers: 16, hidden: 4096, heads: 32, ffn: 14336, vocab: 32000, seq_len: 4096, gated_mlp: true}\n"
		"training: {global_batch: 16, micro_batch: 1}\n"
		"parallelism: {tp: 1, pp: 1, dp: 2, recompute: full}\n";
	for (int sym = 0; sym < 2; sym++) {
		hs_sim r;
		hs_err err = {0};
		ck_assert(run_text(text, sym, &r, &err) != 0);
		ck_assert_int_eq(err.code, HS_EINFEASIBLE);
		ck_assert_msg(strstr(err.msg, "G48 (GPU 1, of 48.0 GiB) has 46.0 GiB usable"), "%s", err.msg);
	}
}
END_TEST

/* Tied embeddings with pp 2: one send each way between the first and the last stage, of the embedding's fp32
 * gradient (32000 x 1024 x 4 bytes), before the optimizer; none with pp 1 or untied embeddings. */
START_TEST(tied_embedding_sync)
{
	hs_sim a, b, c;
	hs_err err = {0};
	ck_assert_msg(run_tiny(2, 1, "", &a, &err) == 0, "%s", err.msg);
	int n = 0;
	for (size_t i = 0; i < a.b.graph.ntasks; i++) {
		const hs_task *t = &a.b.graph.tasks[i];
		if (t->kind == HS_T_SEND && t->bytes == 32000.0 * 1024 * 4) {
			n++;
			ck_assert_int_eq(t->peer, 1 - t->rep);
		}
	}
	ck_assert_int_eq(n, 2);
	ck_assert_msg(run_tiny(1, 2, "", &b, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(count(&b.b.graph, HS_T_SEND, HS_W_P2P, -1), 0);
	/* untied: the activations' and input gradients' sends only (8 micro-batches each way) */
	ck_assert_msg(run_model(2, 1, ", tied_embeddings: false", "", &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(count(&c.b.graph, HS_T_SEND, HS_W_P2P, -1), 16);
	ck_assert_int_eq(count(&a.b.graph, HS_T_SEND, HS_W_P2P, -1), 16 + 2);
	/* the sum is exposed: the step grows */
	ck_assert(a.r.step_time_s > c.r.step_time_s);
	hs_sim_free(&a);
	hs_sim_free(&b);
	hs_sim_free(&c);
}
END_TEST

/* Weighted in-flight: interleaved, pp 2, m 2, v 2: m == pp, so every forward is warm-up and stage 0 holds all
 * four (micro-batch, chunk) pairs at its peak: 2 x 3 + 2 x 4 = 14 layers with chunks of 3 and 4; with unit
 * weights the count of hs_sched_in_flight (4). 1F1B, pp 4, stage 0, m 8: 4 held, weight 5 each: 20. */
START_TEST(weighted_in_flight)
{
	const double w[] = {3, 4}, one[] = {1, 1}, five[] = {5};
	ck_assert(hs_sched_in_flight_weighted(HS_SCHED_INTERLEAVED, 2, 0, 2, 2, w) == 14);
	ck_assert(hs_sched_in_flight_weighted(HS_SCHED_INTERLEAVED, 2, 0, 2, 2, one) ==
		  hs_sched_in_flight(HS_SCHED_INTERLEAVED, 2, 0, 2, 2));
	ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_INTERLEAVED, 2, 0, 2, 2), 4);
	ck_assert(hs_sched_in_flight_weighted(HS_SCHED_1F1B, 4, 0, 8, 1, five) == 20);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, llama405b_megatron_split);
	tcase_add_test(t, chunk_lists);
	tcase_add_test(t, bad_chunk_lists);
	tcase_add_test(t, embedding_and_loss_as_layers);
	tcase_add_test(t, fsdp_modes);
	tcase_add_test(t, fsdp_keep_memory);
	tcase_add_test(t, memory_on_every_device);
	tcase_add_test(t, tied_embedding_sync);
	tcase_add_test(t, weighted_in_flight);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
