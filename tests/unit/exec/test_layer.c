/* hs_op_time and hs_layer_time (sim/exec/layer_time.h):
 * - a batched GEMM (count > 1) is one kernel: one launch plus count times the work;
 * - the layer's forward is the sum of its forward ops, its backward the recompute, input- and weight-gradient
 *   ops; full recompute adds exactly one forward; selective adds the attention core only;
 * - attention over s_kv > s keys costs s_kv / s times the s x s kernel (context parallelism);
 * - two queues: a list of kernels shorter than the host's issue takes the issue cost per kernel, a list of
 *   long kernels the sum of their times. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/build.h"
#include "sim/exec/layer_time.h"
#include "sim/study/scenario.h"
#include "tests/unit/helpers.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-15; }

static const char *scn =
	"name: layer\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 8, gpu: A100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 300 GB/s, latency: 2 us}}\n"
	"model: {layers: 4, hidden: 2048, heads: 16, ffn: 8192, vocab: 51200, seq_len: 2048, gated_mlp: false}\n"
	"training: {global_batch: 2, micro_batch: 2, attention: materialized}\n"
	"parallelism: {tp: 8, dp: 1}\n";

static hs_scenario *load(const char *extra)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "layer", scn);
	hs_err err = {0};
	const char *v[1] = {extra};
	struct hs_strlist sets = {.v = v, .n = extra ? 1 : 0};
	hs_scenario *s = hs_scenario_load(path, &sets, &err);
	unlink(path);
	ck_assert_msg(s != NULL, "%s", err.msg);
	return s;
}

static double list_time(const hs_op_env *e, const hs_scenario *s, enum hs_phase ph)
{
	hs_layer_cfg lc;
	hs_build_layer_cfg(&s->wl, &lc);
	hs_oplist l = {0};
	hs_ops_layer(&s->model, &lc, 1, ph, &l);
	/* two queues (layer_time.h): the host issues op i one after another (the first before the list starts),
	 * each runs once issued and the device is free; a collective over a group of one is no op */
	double host = 0, dev = 0;
	int first = 1;
	for (size_t i = 0; i < l.n; i++) {
		int c;
		double t = hs_op_time(e, &l.ops[i], &c);
		if (l.ops[i].kind == HS_OP_COMM && e->grp_n[l.ops[i].group] <= 1)
			continue;
		if (!first)
			host += l.ops[i].kind == HS_OP_GEMM ? e->host_gemm_s : e->host_kernel_s;
		first = 0;
		dev = (host > dev ? host : dev) + t;
	}
	hs_oplist_free(&l);
	return dev;
}

static void env(const hs_scenario *s, hs_op_env *e, hs_profile **prof, int *tp)
{
	hs_err err = {0};
	memset(e, 0, sizeof *e);
	e->dev = hs_cluster_device(s->cluster, 0);
	*prof = hs_profile_load(e->dev->profile, &err);
	ck_assert_msg(*prof != NULL, "%s", err.msg);
	e->prof = *prof;
	e->cluster = s->cluster;
	e->coll_algo = s->wl.coll_algo;
	hs_op_env_host(e, s->train.recipe); /* as hs_layer_time sets it */
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		e->grp_n[k] = 1;
	e->grp_n[HS_GROUP_TP] = hs_build_group(&s->par, HS_GROUP_TP, 0, 0, tp);
	e->grp[HS_GROUP_TP] = tp;
}

START_TEST(batched_gemm_pays_one_launch)
{
	hs_scenario *s = load(NULL);
	hs_op_env e;
	hs_profile *p;
	int tp[8];
	env(s, &e, &p, tp);
	hs_op o = {.kind = HS_OP_GEMM, .dtype = HS_BF16, .m = 2048, .n = 2048, .k = 128, .count = 1};
	int c;
	double one = hs_op_time(&e, &o, &c), launch = hs_profile_gemm_time(p, e.dev, 1, 1, 1, HS_BF16);
	ck_assert(launch > 1e-6 && launch < one);
	o.count = 32;
	ck_assert(near(hs_op_time(&e, &o, &c), launch + 32 * (one - launch)));
	ck_assert_int_eq(c, 0);
	/* attention against twice the keys: twice the kernel */
	hs_op a = {.kind = HS_OP_ATTN, .dtype = HS_BF16, .b = 1, .h = 8, .s = 2048, .s_kv = 2048, .d = 128,
		   .causal = 1, .count = 1};
	double t1 = hs_op_time(&e, &a, &c);
	a.s_kv = 4096;
	ck_assert(near(hs_op_time(&e, &a, &c), 2 * t1));
	hs_profile_free(p);
	hs_scenario_free(s);
}
END_TEST

START_TEST(layer_time_is_the_sum_of_its_ops)
{
	static const char *modes[] = {"parallelism.recompute=none", "parallelism.recompute=selective",
				      "parallelism.recompute=full"};
	double fwd[3], bwd[3], rc[3];
	for (int i = 0; i < 3; i++) {
		hs_scenario *s = load(modes[i]);
		hs_op_env e;
		hs_profile *p;
		int tp[8];
		env(s, &e, &p, tp);
		hs_layer_times lt;
		hs_err err = {0};
		ck_assert_int_eq(hs_layer_time(&s->wl, 1, &lt, &err), 0);
		ck_assert(near(lt.fwd_s, list_time(&e, s, HS_PH_FWD)));
		double b = list_time(&e, s, HS_PH_RECOMPUTE) + list_time(&e, s, HS_PH_BWD_INPUT) +
			   list_time(&e, s, HS_PH_BWD_WEIGHT);
		ck_assert(near(lt.bwd_s, b));
		ck_assert(lt.fwd_comm_s > 0 && lt.fwd_comm_s < lt.fwd_s);
		fwd[i] = lt.fwd_s, bwd[i] = lt.bwd_s, rc[i] = lt.recompute_s;
		hs_profile_free(p);
		hs_scenario_free(s);
	}
	ck_assert(rc[0] == 0);
	ck_assert(near(fwd[0], fwd[2]) && near(rc[2], fwd[2])); /* full: one more forward */
	ck_assert(near(bwd[2], bwd[0] + fwd[0]));
	ck_assert(rc[1] > 0 && rc[1] < 0.5 * fwd[0]);          /* selective: the attention core only */
}
END_TEST

/* Ring attention: the same attention FLOPs as the KV all-gather; its KV transfers hide behind block
 * attention: exposed CP time is the excess of each transfer over its block, and nothing when they are shorter. */
START_TEST(ring_attention_overlaps_transfers)
{
	hs_model m;
	ck_assert_int_eq(hs_model_preset("llama3-8b", &m), 0);
	hs_layer_cfg c = {.tp = 1, .cp = 4, .ep = 1, .micro_batch = 1, .seq_len = 32768, .dtype = HS_BF16,
			  .flash_attention = 1};
	for (int ph = HS_PH_FWD; ph <= HS_PH_BWD_INPUT; ph++) {
		hs_oplist ag = {0}, ring = {0};
		c.cp_ring = 0;
		hs_ops_layer(&m, &c, 0, (enum hs_phase)ph, &ag);
		c.cp_ring = 1;
		hs_ops_layer(&m, &c, 0, (enum hs_phase)ph, &ring);
		double fa = 0, fr = 0;
		int xfers = 0, blocks = 0;
		for (size_t i = 0; i < ag.n; i++)
			fa += ag.ops[i].kind == HS_OP_ATTN ? ag.ops[i].flops : 0;
		for (size_t i = 0; i < ring.n; i++) {
			const hs_op *o = &ring.ops[i];
			fr += o->kind == HS_OP_ATTN ? o->flops : 0;
			blocks += o->kind == HS_OP_ATTN;
			if (o->kind == HS_OP_COMM && o->group == HS_GROUP_CP) {
				xfers++;
				ck_assert(o->overlap && o->coll == HS_COLL_SENDRECV);
				ck_assert(i + 1 < ring.n && ring.ops[i + 1].kind == HS_OP_ATTN); /* pairs survive reversal */
			}
		}
		ck_assert(fabs(fa - fr) < 1e-9 * fa);
		ck_assert_int_eq(blocks, 4);
		ck_assert_int_eq(xfers, 3);
		hs_oplist_free(&ag);
		hs_oplist_free(&ring);
	}
	/* overlap semantics on a list: [xfer (overlap), attn] takes max; a plain comm op adds */
	hs_scenario *s = load(NULL);
	hs_op_env e;
	hs_profile *p;
	int tp[8];
	env(s, &e, &p, tp);
	hs_op a = {.kind = HS_OP_ATTN, .dtype = HS_BF16, .b = 1, .h = 8, .s = 4096, .s_kv = 4096, .d = 128,
		   .causal = 1, .count = 1, .flops = 1};
	hs_op x = {.kind = HS_OP_COMM, .coll = HS_COLL_SENDRECV, .group = HS_GROUP_TP, .overlap = 1, .bytes = 1e3};
	int cm;
	double ta = hs_op_time(&e, &a, &cm), tx;
	for (int big = 0; big < 2; big++) {
		x.bytes = big ? 4e9 : 1e3;
		tx = hs_op_time(&e, &x, &cm);
		hs_op l[2] = {x, a};
		hs_ops_cost cost = {0};
		hs_ops_time(&e, l, 2, &cost);
		ck_assert(near(cost.comp, ta) && cost.flops == 1);
		ck_assert(near(cost.comm[HS_GROUP_TP] + 1e-300, tx > ta ? tx - ta : 1e-300));
		ck_assert(big ? tx > ta : tx < ta);
	}
	hs_profile_free(p);
	hs_scenario_free(s);
}
END_TEST

/* The host issues kernel i at i x the issue cost (the first was issued before the list began); the device runs
 * each once issued and free. 1000 one-byte copies (each the profile's floor, shorter than the 20 us issue):
 * the last starts at 999 x 20 us, so the list takes 999 x 20 us + one floor, of which the rest is host wait.
 * 100 copies of 1 GB (each far longer than 20 us): the host never holds the device back. */
START_TEST(two_queues_host_bound_and_device_bound)
{
	hs_scenario *s = load(NULL);
	hs_op_env e;
	hs_profile *p;
	int tp[8];
	env(s, &e, &p, tp);
	e.host_kernel_s = 20e-6;
	e.host_gemm_s = 30e-6;
	enum { NT = 1000, NL = 100 };
	hs_op *l = calloc(NT, sizeof *l);
	for (int i = 0; i < NT; i++)
		l[i] = (hs_op){.kind = HS_OP_MEM, .name = "tiny", .dtype = HS_BF16, .count = 1, .bytes = 1};
	int cm;
	double t0 = hs_op_time(&e, &l[0], &cm);
	ck_assert(t0 > 0 && t0 < 20e-6);
	hs_ops_cost c = {0};
	hs_ops_time(&e, l, NT, &c);
	ck_assert_msg(near(c.comp, (NT - 1) * 20e-6 + t0), "tiny: %g s, want %g", c.comp, (NT - 1) * 20e-6 + t0);
	ck_assert(near(c.cls[HS_TC_HOST], c.comp - NT * t0) && near(c.cls[HS_TC_MEM], NT * t0));
	for (int i = 0; i < NL; i++)
		l[i].bytes = 1e9;
	double t1 = hs_op_time(&e, &l[0], &cm);
	ck_assert(t1 > 20e-6);
	c = (hs_ops_cost){0};
	hs_ops_time(&e, l, NL, &c);
	ck_assert(near(c.comp, NL * t1) && c.cls[HS_TC_HOST] == 0);
	/* without a host cost (CUDA graphs) the tiny list is the sum of its kernels */
	e.host_kernel_s = 0;
	c = (hs_ops_cost){0};
	hs_ops_time(&e, l + NL, NT - NL, &c);
	ck_assert(near(c.comp, (NT - NL) * t0) && c.cls[HS_TC_HOST] == 0);
	free(l);
	hs_profile_free(p);
	hs_scenario_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layer_time");
	TCase *t = tcase_create("core");
	tcase_add_test(t, batched_gemm_pays_one_launch);
	tcase_add_test(t, layer_time_is_the_sum_of_its_ops);
	tcase_add_test(t, ring_attention_overlaps_transfers);
	tcase_add_test(t, two_queues_host_bound_and_device_bound);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
