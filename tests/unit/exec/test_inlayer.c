/* Collectives inside a layer (TP, CP, EP) at flow fidelity run on the network (sim/exec/inlayer.c, "collectives
 * inside compute tasks"):
 * - golden: with nothing else on the network (one node, TP only), the TP communication a step exposes is the
 *   sum, over the step's in-layer collectives, of each one's time alone on the idle flow network, and the
 *   kernels are the analytical run's;
 * - contention: an EP all-to-all that runs while the data-parallel reduction crosses the same NICs is slower
 *   than alone, and the exposed EP time exceeds the idle sum;
 * - one representative per stage (symmetry) and every replica simulated agree on an oversubscribed fabric,
 *   where every replica's EP groups meet on the spine;
 * - more NIC bandwidth is never slower;
 * - a data-parallel group of whole nodes crosses on every NIC (a channel per NIC, as NCCL opens them). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/build.h"
#include "sim/net/net.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static void run(const char *text, const char *set, int symmetry, hs_sim *out)
{
	hs_err err = {0};
	char path[64];
	hs_test_write_tmp(path, sizeof path, "inlayer", text);
	struct hs_strlist sets = {0};
	if (set) {
		sets.v = &set;
		sets.n = 1;
	}
	int rc = hs_simulate(path, set ? &sets : NULL, symmetry, NULL, out, &err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s", err.msg);
}

static double done_at;
static void done(void *ctx, uint64_t arg)
{
	(void)arg;
	done_at = hs_time_to_s(hs_engine_now(ctx));
}

/* One collective alone on an idle flow network over the cluster. */
static double idle_time(const hs_cluster *c, enum hs_coll_op op, int algo, const int *ranks, int n, double bytes)
{
	hs_err err = {0};
	hs_engine *eng = hs_engine_create();
	hs_net *net = hs_net_create(c, "flow", eng, &err);
	ck_assert_msg(net != NULL, "%s", err.msg);
	done_at = -1;
	ck_assert_int_eq(hs_net_collective(net, op, (enum hs_coll_algo)algo, ranks, n, bytes, done, eng, 0, &err), 0);
	hs_engine_run(eng, HS_TIME_MAX);
	ck_assert(done_at > 0);
	hs_net_free(net);
	hs_engine_destroy(eng);
	return done_at;
}

/* Sum over rep 0's compute tasks of the idle time of every in-layer collective of group k (each run once, its
 * slices included: a sliced task runs its share of the ops). */
static double idle_sum(const hs_sim *sim, enum hs_group k)
{
	const hs_scenario *s = sim->s;
	const hs_graph *g = &sim->b.graph;
	int ranks[64];
	int n = hs_build_group(&s->par, k, 0, 0, ranks);
	double sum = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->rep != 0 || t->kind != HS_T_COMPUTE)
			continue;
		for (uint32_t j = t->op_first; j < t->op_first + t->op_count; j++) {
			const hs_op *o = &g->ops[j];
			if (o->kind == HS_OP_COMM && o->group == k && o->bytes > 0)
				sum += t->scale * idle_time(s->cluster, o->coll, s->wl.coll_algo, ranks, n, o->bytes);
		}
	}
	return sum;
}

static const char *tp_node =
	"name: tp-one-node\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}}\n"
	"model: {layers: 2, hidden: 4096, heads: 32, ffn: 16384, vocab: 32000, seq_len: 2048}\n"
	"training: {global_batch: 2, micro_batch: 1}\n"
	"parallelism: {tp: 8, pp: 1, dp: 1, sequence_parallel: true}\n"
	"simulation: {collective_algorithm: ring, fidelity: flow}\n";

START_TEST(tp_alone_is_the_sum_of_idle_collectives)
{
	hs_sim a, f;
	run(tp_node, "simulation.fidelity=analytical", 1, &a);
	run(tp_node, NULL, 1, &f);
	double want = idle_sum(&f, HS_GROUP_TP);
	double got = f.r.reps[0].exposed_s[HS_GROUP_TP];
	ck_assert(want > 0);
	/* each collective's end is rounded to a picosecond: a few ps per collective at most */
	ck_assert_msg(fabs(got - want) < 1e-9, "exposed TP %.12g s, idle sum %.12g s", got, want);
	ck_assert_double_eq_tol(f.r.reps[0].compute_s, a.r.reps[0].compute_s, 1e-9);
	ck_assert_double_eq_tol(f.r.step_time_s, f.r.reps[0].compute_s + got, 1e-9);
	/* the closed form and the step-by-step ring differ only in latency terms (protocols, launch) */
	double ac = a.r.reps[0].exposed_s[HS_GROUP_TP];
	ck_assert_msg(fabs(got - ac) < 0.25 * ac, "flow TP %g s, analytical %g s", got, ac);
	hs_sim_free(&a);
	hs_sim_free(&f);
}
END_TEST

/* 8 nodes x 4 GPUs; one micro-batch per replica and small DP buckets, so that the gradient reduction runs during
 * the whole backward pass, beside its all-to-alls. */
static const char *moe_tmpl =
	"name: moe-contention\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 8, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: %s, per_node: 4, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, radix: %d, oversubscription: %g, latency: 1 us}\n"
	"model: {layers: 4, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 2048, experts: 32, top_k: 2,\n"
	"        expert_ffn: 2048}\n"
	"training: {global_batch: 32, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: 1, dp: %d, ep: %d, dp_bucket: 16 MB}\n"
	"simulation: {collective_algorithm: ring, fidelity: flow}\n";

static void moe(char *buf, size_t n, const char *nic, int radix, double o, int dp, int ep)
{
	snprintf(buf, n, moe_tmpl, nic, radix, o, dp, ep);
}

START_TEST(ep_alltoall_shares_nics_with_dp)
{
	char text[2048];
	moe(text, sizeof text, "400 Gb/s", 64, 1, 32, 32);
	hs_sim f, c;
	run(text, NULL, 1, &f);
	run(text, "simulation.layer_collectives=closed_form", 1, &c);
	double idle = idle_sum(&f, HS_GROUP_EP);
	double got = f.r.reps[0].exposed_s[HS_GROUP_EP];
	double dp_net = f.r.reps[0].exposed_s[HS_GROUP_DP], dp_closed = c.r.reps[0].exposed_s[HS_GROUP_DP];
	ck_assert(idle > 0);
	/* Max-min sharing per flow: an all-to-all's many flows per NIC take most of it from the ring's few, so
	 * the all-to-all slows by little (0.4%) and the gradient ring by much (39%). Both must show; 0.1% is far
	 * above the picosecond rounding of the all-to-alls' ends. */
	ck_assert_msg(got > 1.001 * idle, "exposed EP %g s, alone %g s: the gradient traffic did not slow it", got,
		      idle);
	ck_assert_msg(dp_net > 1.05 * dp_closed,
		      "exposed DP %g s with the all-to-alls on the network, %g s without: no contention", dp_net,
		      dp_closed);
	/* without the all-to-alls on the network their time is the closed form's, as at analytical fidelity */
	ck_assert_int_eq(c.r.links.nlinks > 0, 1);
	hs_sim_free(&f);
	hs_sim_free(&c);
}
END_TEST

START_TEST(replicas_agree_with_representative_when_oversubscribed)
{
	/* radix 16, oversubscription 3: 12 NICs per leaf, 4 uplinks; EP 8 of DP 32: four EP groups per step, all
	 * crossing the spine */
	char text[2048];
	moe(text, sizeof text, "400 Gb/s", 16, 3, 32, 8);
	hs_sim a, b;
	run(text, NULL, 1, &a);
	run(text, NULL, 0, &b);
	ck_assert_int_eq(a.b.graph.nreps, 1);
	ck_assert_int_eq(b.b.graph.nreps, 32);
	ck_assert_msg(fabs(a.r.step_time_s - b.r.step_time_s) < 0.03 * b.r.step_time_s,
		      "one representative %g s, every replica %g s", a.r.step_time_s, b.r.step_time_s);
	hs_sim_free(&a);
	hs_sim_free(&b);
}
END_TEST

START_TEST(more_nic_bandwidth_never_slower)
{
	const char *bw[] = {"100 Gb/s", "200 Gb/s", "400 Gb/s", "800 Gb/s"};
	double prev = INFINITY;
	for (int i = 0; i < 4; i++) {
		char text[2048];
		moe(text, sizeof text, bw[i], 16, 3, 32, 8);
		hs_sim f;
		run(text, NULL, 1, &f);
		ck_assert_msg(f.r.step_time_s <= prev * (1 + 1e-12), "%s: %g s, slower than %g s", bw[i],
			      f.r.step_time_s, prev);
		prev = f.r.step_time_s;
		hs_sim_free(&f);
	}
}
END_TEST

/* DP 16 over two 8-GPU nodes with a NIC per GPU: the gradient ring's communicator holds whole nodes, so NCCL
 * opens a channel per NIC and the ring crosses on all 8; with one channel it crossed on the one NIC of the GPU
 * at the node's edge and the step took 4.3x the analytical one. On an idle network the step-by-step ring
 * takes the ring closed form 2(n-1)(alpha + S/(nB)) up to its routed latencies, so the steps agree to 3%
 * (1.4% measured). */
static const char *dp_nodes =
	"name: dp-two-nodes\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {layers: 8, hidden: 4096, heads: 32, ffn: 16384, vocab: 32000, seq_len: 2048}\n"
	"training: {global_batch: 16, micro_batch: 1}\n"
	"parallelism: {tp: 1, pp: 1, dp: 16}\n"
	"simulation: {collective_algorithm: ring, fidelity: flow}\n";

START_TEST(whole_node_groups_cross_on_every_nic)
{
	hs_sim a, f;
	run(dp_nodes, "simulation.fidelity=analytical", 1, &a);
	run(dp_nodes, NULL, 1, &f);
	double ea = a.r.reps[0].exposed_s[HS_GROUP_DP], ef = f.r.reps[0].exposed_s[HS_GROUP_DP];
	ck_assert(ea > 0);
	ck_assert_msg(fabs(f.r.step_time_s - a.r.step_time_s) < 0.03 * a.r.step_time_s,
		      "flow %g s (DP exposed %g), analytical %g s (DP exposed %g)", f.r.step_time_s, ef,
		      a.r.step_time_s, ea);
	hs_sim_free(&a);
	hs_sim_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("inlayer");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, tp_alone_is_the_sum_of_idle_collectives);
	tcase_add_test(t, ep_alltoall_shares_nics_with_dp);
	tcase_add_test(t, replicas_agree_with_representative_when_oversubscribed);
	tcase_add_test(t, more_nic_bandwidth_never_slower);
	tcase_add_test(t, whole_node_groups_cross_on_every_nic);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
