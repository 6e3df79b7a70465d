/* What a sweep reuses between ranges and points changes no figure (issue 22 item 5):
 *  - the build's aliases (hs_build.ranges: a (stage, chunk) list that repeats an earlier one's ops) hold exactly
 *    the ops of their canonical list, op for op, and they do occur (a pipeline of 4 uniform stages has its
 *    middle stages' lists aliased), so the executor may time one of them for every rep of equal environment;
 *  - op-range costs kept across the steps of one profile cache (sim/exec/range_cache.c) give the same step,
 *    field for field, as a fresh cache and as no cache, cold and warm, and a warm cache is hit;
 *  - the cache compares the ops themselves: a range that shares another's fingerprint but not its ops is
 *    timed, never given the other's cost;
 *  - so do the kernels' times kept across steps, on another device type and another recipe too;
 *  - a group's summary kept by cluster id (hs_range_cache_grp_init) is hs_coll_grp_init's byte for byte, and
 *    the same ranks on a cluster of another id get that cluster's summary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/profile.h"
#include "config/yaml.h"
#include "sim/coll/coll_impl.h"
#include "sim/exec/range_cache.h"
#include "sim/study/scenario.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "topology/device.h"

static const char *base =
	"name: reuse\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {layers: 8, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024}\n"
	"training: {global_batch: 32, micro_batch: 1, precision: bf16}\n"
	"parallelism: {tp: 2, pp: 4, dp: 2, dp_bucket: 4 MB}\n"
	"simulation: {fidelity: analytical}\n";

/* Overrides of one case, ';'-separated: pipelines deep enough to have middle stages, and what changes a list. */
static const char *const cases[] = {
	"parallelism.schedule=1f1b",
	"parallelism.schedule=zb-h1;parallelism.recompute=full",
	"parallelism.schedule=interleaved;parallelism.virtual_stages=2",
	"parallelism.schedule=1f1b;parallelism.zero=1;parallelism.recompute=selective",
	"parallelism.pp=8;parallelism.tp=1;parallelism.schedule=zb-h1",
	"model.layer_pattern=[sliding, full];model.window=256",
	"model.experts=8;model.top_k=2;model.expert_ffn=1024;model.dense_layers=2;parallelism.ep=2",
	"parallelism.stage_layers=[1, 3, 3, 1]",
	"training.precision=fp8",
	"parallelism.schedule=zb-v",     /* a V: stage 0 holds the first and the last chunk */
	"parallelism.schedule=dualpipe",
	/* another device type and another recipe's memory-bound kernels on the same shapes: the kernels' times
	 * kept across steps are keyed by the device's bytes and the recipe's factors */
	"cluster.groups[0].gpu=A100-SXM-80GB",
	"training.recipe=pytorch-amp",
};

static int run(const char *c, int symmetry, hs_profile_cache *cache, hs_sim *sim)
{
	char path[64], buf[512];
	hs_test_write_tmp(path, sizeof path, "reuse", base);
	snprintf(buf, sizeof buf, "%s", c);
	const char *sets[16];
	int n = 0;
	for (char *tok = strtok(buf, ";"); tok && n < 16; tok = strtok(NULL, ";"))
		sets[n++] = tok;
	struct hs_strlist l = {.v = sets, .n = n};
	hs_err err = {0};
	int rc = hs_simulate(path, &l, symmetry, cache, sim, &err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s: %s", c, err.msg);
	return rc;
}

static int same_op(const hs_op *a, const hs_op *b)
{
	return a->kind == b->kind && a->name == b->name && a->dtype == b->dtype && a->family == b->family &&
	       a->m == b->m && a->n == b->n && a->k == b->k && a->count == b->count && a->b == b->b && a->h == b->h &&
	       a->s == b->s && a->d == b->d && a->s_kv == b->s_kv && a->causal == b->causal && a->bwd == b->bwd &&
	       a->flops == b->flops && a->bytes == b->bytes && a->coll == b->coll && a->group == b->group &&
	       a->recompute == b->recompute && a->dur_s == b->dur_s && a->routed == b->routed &&
	       a->overlap == b->overlap;
}

START_TEST(aliases_hold_the_same_ops)
{
	size_t aliased = 0;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		hs_sim sim;
		run(cases[i], -1, NULL, &sim);
		const hs_build *b = &sim.b;
		const hs_graph *g = &b->graph;
		ck_assert_msg(b->nranges > 0, "%s: no ranges recorded", cases[i]);
		for (size_t k = 0; k < b->nranges; k++) {
			const hs_op_range *r = &b->ranges[k];
			ck_assert(k == 0 || b->ranges[k - 1].first <= r->first); /* increasing, for the lookup */
			ck_assert(r->first + r->count <= g->nops);
			ck_assert(hs_build_op_range(b, r->first, r->count) != NULL);
			if (r->canon == r->first)
				continue;
			aliased++;
			ck_assert_msg(r->canon < r->first, "%s: an alias points forward", cases[i]);
			const hs_op_range *c = hs_build_op_range(b, r->canon, r->count);
			ck_assert_msg(c && c->canon == c->first, "%s: canonical range %u is not one", cases[i], r->canon);
			ck_assert_msg(c->fp == r->fp, "%s: equal lists with different fingerprints", cases[i]);
			for (uint32_t q = 0; q < r->count; q++)
				ck_assert_msg(same_op(&g->ops[r->first + q], &g->ops[r->canon + q]),
					      "%s: range at %u differs from its canonical one at %u, op %u", cases[i],
					      r->first, r->canon, q);
		}
		hs_sim_free(&sim);
	}
	ck_assert_uint_gt(aliased, 0); /* the middle stages of pp = 4 and 8 repeat each other */
}
END_TEST

static void same_result(const hs_result *a, const hs_result *b, const char *c, const char *what)
{
	ck_assert_msg(a->step_time_s == b->step_time_s, "%s (%s): step %.17g against %.17g s", c, what, a->step_time_s,
		      b->step_time_s);
	ck_assert_int_eq(a->nreps, b->nreps);
	ck_assert(a->mfu == b->mfu && a->hfu == b->hfu && a->closed_form == b->closed_form);
	for (int i = 0; i < a->nreps; i++) {
		const hs_rep_result *x = &a->reps[i], *y = &b->reps[i];
		ck_assert_msg(x->compute_s == y->compute_s && x->bubble_s == y->bubble_s && x->flops == y->flops &&
			      x->finish_s == y->finish_s && x->optimizer_s == y->optimizer_s,
			      "%s (%s): rep %d differs", c, what, i);
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			ck_assert(x->exposed_s[k] == y->exposed_s[k]);
		for (int k = 0; k < HS_TC_COUNT; k++)
			ck_assert(x->class_s[k] == y->class_s[k]);
	}
}

START_TEST(kept_costs_change_nothing)
{
	size_t n = sizeof cases / sizeof *cases;
	hs_profile_cache *shared = hs_profile_cache_create();
	size_t h0, m0, h1, m1;
	for (int pass = 0; pass < 2; pass++) {
		hs_range_cache_stats(hs_range_cache_of(shared), &h0, &m0);
		for (size_t i = 0; i < n; i++)
			for (int symmetry = -1; symmetry <= 0; symmetry++) {
				hs_sim none, fresh, kept;
				hs_profile_cache *own = hs_profile_cache_create();
				run(cases[i], symmetry, NULL, &none);    /* no cache: every range timed */
				run(cases[i], symmetry, own, &fresh);    /* a cache of its own: filled by this step */
				run(cases[i], symmetry, shared, &kept);  /* a cache kept over every case and pass */
				same_result(&none.r, &fresh.r, cases[i], "own cache");
				same_result(&none.r, &kept.r, cases[i], pass ? "warm cache" : "shared cache");
				hs_sim_free(&none);
				hs_sim_free(&fresh);
				hs_sim_free(&kept);
				hs_profile_cache_free(own);
			}
		hs_range_cache_stats(hs_range_cache_of(shared), &h1, &m1);
	}
	/* the second pass repeats the first: every range it times was kept by then */
	ck_assert_uint_gt(h1, h0);
	ck_assert_uint_eq(m1, m0);
	hs_profile_cache_free(shared);
}
END_TEST

START_TEST(a_shared_fingerprint_is_not_a_match)
{
	hs_err err = {0};
	hs_profile *p = hs_profile_load("H100-SXM-80GB", &err);
	ck_assert_msg(p, "%s", err.msg);
	const hs_device_type *dev = hs_device_builtin("H100-SXM-80GB");
	ck_assert(dev);
	hs_op_env e = {.prof = p, .dev = dev};
	hs_op_env_host(&e, NULL);
	hs_op ops[2] = {{.kind = HS_OP_GEMM, .name = "fc1", .dtype = HS_BF16, .m = 8192, .n = 4096, .k = 1024,
			 .count = 1, .flops = 2.0 * 8192 * 4096 * 1024},
			{.kind = HS_OP_MEM, .name = "act", .dtype = HS_BF16, .bytes = 64e6}};
	hs_profile_cache *pc = hs_profile_cache_create();
	hs_range_cache *rc = hs_range_cache_of(pc);
	uint64_t fp = 42;
	hs_ops_cost direct = {0}, a = {0}, b = {0}, c = {0};
	hs_ops_time(&e, ops, 2, &direct);
	int nc;
	ck_assert_int_eq(hs_range_cache_cost(rc, &e, ops, 2, &fp, 0, &a, &nc), 0); /* a miss: timed and kept */
	ck_assert_int_eq(hs_range_cache_cost(rc, &e, ops, 2, &fp, 0, &b, &nc), 1); /* the same ops: kept */
	ck_assert(a.comp == direct.comp && b.comp == direct.comp && b.flops == direct.flops && nc == 0);
	ops[0].m *= 2;
	ops[0].flops *= 2;
	hs_ops_cost direct2 = {0};
	hs_ops_time(&e, ops, 2, &direct2);
	ck_assert_int_eq(hs_range_cache_cost(rc, &e, ops, 2, &fp, 0, &c, &nc), 0); /* same fingerprint, other ops */
	ck_assert(c.comp == direct2.comp && c.comp > direct.comp);
	hs_ops_cost d = {0};
	ck_assert_int_eq(hs_range_cache_cost(rc, &e, ops, 2, NULL, 0, &d, &nc), 0); /* no fingerprint: timed */
	ck_assert(d.comp == direct2.comp);
	size_t hits, misses;
	hs_range_cache_stats(rc, &hits, &misses);
	ck_assert_uint_eq(hits, 1);
	ck_assert_uint_eq(misses, 2);
	hs_profile_cache_free(pc);
	hs_profile_free(p);
}
END_TEST

static hs_cluster *cluster_of(const char *text)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "grp", &err);
	ck_assert_msg(d, "%s", err.msg);
	hs_cluster *c = hs_scenario_cluster(hs_yaml_root(d), &err);
	ck_assert_msg(c, "%s", err.msg);
	hs_yaml_free(d);
	return c;
}

START_TEST(kept_group_summaries_are_the_groups)
{
	hs_cluster *a = cluster_of(base);
	char other[2048];
	snprintf(other, sizeof other, "%s", base);
	char *nic = strstr(other, "400 Gb/s");
	ck_assert(nic);
	memcpy(nic, "200", 3); /* the same ranks, half the NIC bandwidth */
	hs_cluster *b = cluster_of(other);
	hs_profile_cache *pc = hs_profile_cache_create();
	hs_range_cache *rc = hs_range_cache_of(pc);
	const int groups[][4] = {{0, 1, 2, 3}, {0, 8, 1, 9}, {3, 11, 4, 12}, {15, 7, 6, 14}};
	hs_err err = {0};
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 2; k++) {
				const hs_cluster *c = k ? b : a;
				hs_coll_grp direct, kept;
				memset(&kept, 0xa5, sizeof kept); /* the copy must write every byte */
				ck_assert_int_eq(hs_coll_grp_init(&direct, c, groups[i], 4, &err), 0);
				ck_assert_int_eq(hs_range_cache_grp_init(rc, 7 + (uint64_t)k, &kept, c, groups[i], 4, &err), 0);
				ck_assert_msg(memcmp(&direct, &kept, sizeof kept) == 0, "group %d, cluster %d, pass %d", i, k,
					      pass);
			}
	hs_coll_grp ga, gb;
	ck_assert_int_eq(hs_range_cache_grp_init(rc, 7, &ga, a, groups[1], 4, &err), 0);
	ck_assert_int_eq(hs_range_cache_grp_init(rc, 8, &gb, b, groups[1], 4, &err), 0);
	ck_assert(ga.bw_nic > gb.bw_nic); /* across nodes: each cluster's own NICs */
	hs_profile_cache_free(pc);
	hs_cluster_free(a);
	hs_cluster_free(b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("range_reuse");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, aliases_hold_the_same_ops);
	tcase_add_test(tc, kept_costs_change_nothing);
	tcase_add_test(tc, a_shared_fingerprint_is_not_a_match);
	tcase_add_test(tc, kept_group_summaries_are_the_groups);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
