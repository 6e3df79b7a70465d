/* Several jobs on one cluster (sim/study/jobs.h):
 * - two jobs whose traffic crosses the same oversubscribed leaf's uplinks: each slower than alone;
 * - two jobs on disjoint parts of a non-blocking fabric (disjoint leaves of a fat-tree, or the rails'
 *   leaves of a rail-optimised fabric, which every job reaches through its own NICs): each equal to alone to
 *   1e-9, and a job whose device offset were wrong would send into the other's devices and fail this;
 * - one job on the whole cluster: its step is the plain run's without symmetry (the jobs machinery adds
 *   nothing of its own to a job's time);
 * - bad placements (overlap, outside the cluster, missing) and the analytical fidelity exit 2 with
 *   file:line:col and the key; the same scenario twice gives byte-identical summaries;
 * - hs_cluster_sub numbers a job's devices as the whole cluster does from its first node.
 *
 * The cluster: 8 nodes of 2 H100 with one 400 Gb/s NIC each per GPU, on a 2-tier fat-tree of radix 8. With
 * oversubscription 3, a leaf has D = round(8 x 3 / 4) = 6 down ports (topology/topo.c, leaf_down_ports), so
 * leaves hold nodes 0-2, 3-5 and 6-7: job a on nodes 0-3 crosses between leaves 0 and 1, job b on nodes 4-7
 * between leaves 1 and 2, and both cross leaf 1's two uplinks. With oversubscription 1, D = 4: leaves hold
 * nodes 0-1, 2-3, 4-5, 6-7, and jobs on nodes 0-3 and 4-7 share no link. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/jobs.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/jobs_summary.h"

static const char *model =
	"    model: {layers: 2, hidden: 2048, heads: 16, ffn: 8192, vocab: 32000, seq_len: 1024, "
	"tied_embeddings: false}\n";

/* A scenario of two jobs: a on nodes `na` (DP only), b on nodes `nb` with parallelism `pb`. */
static void two_jobs(char *buf, size_t cap, const char *fabric, const char *fidelity, const char *na, int ba,
		     const char *nb, int bb, const char *pb)
{
	snprintf(buf, cap,
		 "name: two-jobs\n"
		 "cluster:\n"
		 "  groups:\n"
		 "    - {name: h100, nodes: 8, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
		 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 2, latency: 3 us}}\n"
		 "  fabric: %s\n"
		 "simulation: {fidelity: %s, seed: 1}\n"
		 "jobs:\n"
		 "  - name: a\n"
		 "%s%s"
		 "    training: {global_batch: %d, micro_batch: 1}\n"
		 "    parallelism: {tp: 1, pp: 1, dp_bucket: 1 TB}\n"
		 "  - name: b\n"
		 "%s%s"
		 "    training: {global_batch: %d, micro_batch: 1}\n"
		 "    parallelism: %s\n",
		 fabric, fidelity, na, model, ba, nb, model, bb, pb);
}

static int run_text(const char *text, hs_jobs *J, hs_err *err)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "jobs", text);
	hs_ydoc *doc = hs_yaml_load_file_set(path, NULL, 0, err);
	ck_assert_msg(doc != NULL, "%s", err->msg);
	int rc = hs_jobs_run(doc, path, NULL, J, err);
	unlink(path);
	return rc;
}

static const char *over = "{kind: fat-tree, tiers: 2, radix: 8, oversubscription: 3, latency: 1 us}";
static const char *nonblocking = "{kind: fat-tree, tiers: 2, radix: 8, oversubscription: 1, latency: 1 us}";
static const char *rails = "{kind: rail-optimized, radix: 16, oversubscription: 1, latency: 1 us}";
static const char *dp_only = "{tp: 1, pp: 1, dp_bucket: 1 TB}";
/* b with pipeline sends between nodes and TP collectives inside a layer (on the network at flow fidelity) */
static const char *tp_pp = "{tp: 2, pp: 2, dp_bucket: 1 TB}";

START_TEST(oversubscribed_leaf_slows_both)
{
	char y[4096];
	const char *pb[] = {dp_only, tp_pp};
	for (int v = 0; v < 2; v++) {
		two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: 4-7\n", v ? 4 : 8, pb[v]);
		hs_jobs J;
		hs_err err = {0};
		ck_assert_msg(run_text(y, &J, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(J.njobs, 2);
		ck_assert_int_eq(J.jobs[1].dev0, 8);
		ck_assert_int_eq(J.jobs[1].ndev, 8);
		for (int i = 0; i < 2; i++) {
			const hs_job *j = &J.jobs[i];
			ck_assert_msg(j->together.step_time_s > j->alone.step_time_s * (1 + 1e-3),
				      "variant %d job %s: together %.9f s, alone %.9f s", v, j->name,
				      j->together.step_time_s, j->alone.step_time_s);
			ck_assert_double_eq_tol(j->slowdown, j->together.step_time_s / j->alone.step_time_s, 1e-15);
			/* what slows it is communication: the compute is the same */
			const hs_rep_result *a = &j->alone.reps[j->alone.critical_rep];
			const hs_rep_result *t = &j->together.reps[j->together.critical_rep];
			ck_assert_double_eq_tol(t->compute_s, a->compute_s, 1e-12 * a->compute_s);
		}
		hs_jobs_free(&J);
	}
}
END_TEST

static void check_equal_alone(const char *fabric, const char *na, int ba, const char *nb, int bb, const char *pb)
{
	char y[4096];
	two_jobs(y, sizeof y, fabric, "flow", na, ba, nb, bb, pb);
	hs_jobs J;
	hs_err err = {0};
	ck_assert_msg(run_text(y, &J, &err) == 0, "%s", err.msg);
	for (int i = 0; i < 2; i++) {
		const hs_job *j = &J.jobs[i];
		ck_assert_msg(fabs(j->together.step_time_s / j->alone.step_time_s - 1) < 1e-9,
			      "%s job %s: together %.12f s, alone %.12f s", fabric, j->name, j->together.step_time_s,
			      j->alone.step_time_s);
		ck_assert(j->alone.step_time_s > 0);
	}
	hs_jobs_free(&J);
}

START_TEST(disjoint_leaves_equal_alone)
{
	check_equal_alone(nonblocking, "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 8, dp_only);
	check_equal_alone(nonblocking, "    nodes: 0-3\n", 8, "    nodes: h100:4-7\n", 4, tp_pp);
}
END_TEST

START_TEST(disjoint_rails_equal_alone)
{
	/* every rail's NICs on one leaf of 8 ports: a crossing goes NIC -> rail leaf -> NIC, its own links */
	check_equal_alone(rails, "    nodes: 0-2\n", 6, "    nodes: 3-7\n", 10, dp_only);
	check_equal_alone(rails, "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 4, tp_pp);
}
END_TEST

/* One job on every node: the plain run of the same cluster, model and strategy without symmetry. */
START_TEST(whole_cluster_job_is_plain_run)
{
	const char *pb[] = {dp_only, tp_pp};
	for (int v = 0; v < 2; v++) {
		char y[4096], path[64];
		snprintf(y, sizeof y,
			 "name: one\n"
			 "cluster:\n"
			 "  groups:\n"
			 "    - {name: h100, nodes: 8, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			 "       nic: {bandwidth: 400 Gb/s, per_node: 2, latency: 3 us}}\n"
			 "  fabric: %s\n"
			 "simulation: {fidelity: flow, seed: 1}\n"
			 "jobs:\n"
			 "  - name: all\n"
			 "    nodes: 0-7\n"
			 "%s"
			 "    training: {global_batch: 16, micro_batch: 1}\n"
			 "    parallelism: %s\n",
			 over, model, pb[v]);
		hs_jobs J;
		hs_err err = {0};
		ck_assert_msg(run_text(y, &J, &err) == 0, "%s", err.msg);
		snprintf(y, sizeof y,
			 "name: one\n"
			 "cluster:\n"
			 "  groups:\n"
			 "    - {name: h100, nodes: 8, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			 "       nic: {bandwidth: 400 Gb/s, per_node: 2, latency: 3 us}}\n"
			 "  fabric: %s\n"
			 "simulation: {fidelity: flow, seed: 1}\n"
			 "%s"
			 "training: {global_batch: 16, micro_batch: 1}\n"
			 "parallelism: %s\n",
			 over, model + 4, pb[v]);
		hs_test_write_tmp(path, sizeof path, "jobs1", y);
		hs_sim sim;
		ck_assert_msg(hs_simulate(path, NULL, 0, NULL, &sim, &err) == 0, "%s", err.msg);
		unlink(path);
		ck_assert_msg(J.jobs[0].alone.step_time_s == sim.r.step_time_s, "variant %d: jobs %.12f s, plain %.12f s",
			      v, J.jobs[0].alone.step_time_s, sim.r.step_time_s);
		ck_assert(J.jobs[0].together.step_time_s == sim.r.step_time_s);
		hs_sim_free(&sim);
		hs_jobs_free(&J);
	}
}
END_TEST

/* A bad scenario: exit status 2, a message at file:line:col that names `key` and contains `what`. */
static void bad(const char *text, const char *key, const char *what)
{
	hs_jobs J;
	hs_err err = {0};
	ck_assert_int_eq(run_text(text, &J, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	char file[64];
	int line = 0, col = 0;
	ck_assert_msg(sscanf(err.msg, "%63[^:]:%d:%d: ", file, &line, &col) == 3 && line > 0 && col > 0,
		      "no position: %s", err.msg);
	ck_assert_msg(strstr(err.msg, key) != NULL, "no '%s' in: %s", key, err.msg);
	ck_assert_msg(strstr(err.msg, what) != NULL, "no '%s' in: %s", what, err.msg);
}

START_TEST(bad_placements_exit_2)
{
	char y[4096];
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-4\n", 10, "    nodes: 4-7\n", 8, dp_only);
	bad(y, "jobs[1].nodes", "overlap job 'a'");
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: 4-8\n", 8, dp_only);
	bad(y, "jobs[1].nodes", "outside the cluster");
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: h100:6-9\n", 8, dp_only);
	bad(y, "jobs[1].nodes", "outside group 'h100'");
	two_jobs(y, sizeof y, over, "flow", "", 8, "    nodes: 4-7\n", 8, dp_only);
	bad(y, "jobs[0].nodes", "no placement");
	two_jobs(y, sizeof y, over, "flow", "    nodes: 3-1\n", 8, "    nodes: 4-7\n", 8, dp_only);
	bad(y, "jobs[0].nodes", "ends before it starts");
	two_jobs(y, sizeof y, over, "flow", "    nodes: a100:0-3\n", 8, "    nodes: 4-7\n", 8, dp_only);
	bad(y, "jobs[0].nodes", "names no node group");
	/* the analytical fidelity has no links to share: refused, naming what to write */
	two_jobs(y, sizeof y, over, "analytical", "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 8, dp_only);
	bad(y, "simulation.fidelity", "simulation.fidelity: flow");
	/* a job's own keys are reported with the job's index */
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 7, dp_only);
	bad(y, "jobs[1].training.global_batch", "not divisible");
}
END_TEST

START_TEST(plain_loader_refuses_jobs)
{
	char y[4096], path[64];
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 8, dp_only);
	hs_test_write_tmp(path, sizeof path, "jobs2", y);
	hs_err err = {0};
	hs_sim sim;
	ck_assert_int_eq(hs_simulate(path, NULL, -1, NULL, &sim, &err), -1);
	unlink(path);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "jobs") && strstr(err.msg, "hetsim run"), "%s", err.msg);
}
END_TEST

static char *summary(const char *text, const char *fmt, size_t *len)
{
	hs_jobs J;
	hs_err err = {0};
	ck_assert_msg(run_text(text, &J, &err) == 0, "%s", err.msg);
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	hs_jobs_format_find(fmt)->write(f, &J);
	fclose(f);
	hs_jobs_free(&J);
	return buf;
}

START_TEST(same_seed_same_bytes)
{
	char y[4096];
	two_jobs(y, sizeof y, over, "flow", "    nodes: 0-3\n", 8, "    nodes: 4-7\n", 4, tp_pp);
	const char *fmts[] = {"text", "json"};
	for (int k = 0; k < 2; k++) {
		size_t n1, n2;
		char *a = summary(y, fmts[k], &n1), *b = summary(y, fmts[k], &n2);
		ck_assert_uint_eq(n1, n2);
		ck_assert(memcmp(a, b, n1) == 0);
		ck_assert(strstr(a, "slowdown") != NULL);
		free(a);
		free(b);
	}
}
END_TEST

/* hs_cluster_sub: a heterogeneous cluster cut to a range across its two groups keeps the groups' order and
 * shapes, numbers devices as the whole cluster does from the range's first node, and refuses ranges that leave
 * the cluster or cut a scale-up domain spanning nodes. */
START_TEST(cluster_sub_cuts_groups)
{
	const char *y = "groups:\n"
			"  - {name: h100, nodes: 4, gpus_per_node: 8, gpu: H100-SXM-80GB, nic: {per_node: 8}}\n"
			"  - {name: a100, nodes: 3, gpus_per_node: 4, gpu: A100-SXM-80GB, nic: {per_node: 2}}\n"
			"  - {name: rack, nodes: 36, gpus_per_node: 4, gpu: B200, scaleup: {kind: nvl72, domain: 72}}\n";
	hs_err err = {0};
	hs_ydoc *doc = hs_yaml_load_string(y, strlen(y), "sub", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_root(doc), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	hs_cluster *s = hs_cluster_sub(c, 2, 4, &err); /* h100 nodes 2-3, a100 nodes 0-1 */
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_cluster_ngroups(s), 2);
	ck_assert_int_eq(hs_cluster_nnodes(s), 4);
	ck_assert_int_eq(hs_cluster_ngpus(s), 2 * 8 + 2 * 4);
	ck_assert_str_eq(hs_cluster_group(s, 1)->name, "a100");
	ck_assert_int_eq(hs_cluster_group(s, 1)->nics_per_node, 2);
	int dev0 = 2 * 8; /* first device of node 2 in c */
	for (int i = 0; i < hs_cluster_ngpus(s); i++) {
		ck_assert_str_eq(hs_cluster_device(s, i)->name, hs_cluster_device(c, dev0 + i)->name);
		ck_assert_int_eq(hs_cluster_local_rank(s, i), hs_cluster_local_rank(c, dev0 + i));
		ck_assert_int_eq(hs_cluster_node_of(s, i), hs_cluster_node_of(c, dev0 + i) - 2);
	}
	hs_cluster_free(s);
	s = hs_cluster_sub(c, 7, 18, &err); /* one whole NVL72 rack */
	ck_assert_msg(s != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_cluster_ndomains(s), 1);
	hs_cluster_free(s);
	hs_err e1 = {0}, e2 = {0};
	ck_assert_ptr_null(hs_cluster_sub(c, 7, 9, &e1)); /* half a rack */
	ck_assert_msg(strstr(e1.msg, "split a scale-up domain") != NULL, "%s", e1.msg);
	ck_assert_ptr_null(hs_cluster_sub(c, 40, 4, &e2));
	ck_assert_msg(strstr(e2.msg, "outside the cluster") != NULL, "%s", e2.msg);
	ck_assert_int_eq(e2.code, HS_EINPUT);
	hs_cluster_free(c);
	hs_yaml_free(doc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, oversubscribed_leaf_slows_both);
	tcase_add_test(t, disjoint_leaves_equal_alone);
	tcase_add_test(t, disjoint_rails_equal_alone);
	tcase_add_test(t, whole_cluster_job_is_plain_run);
	tcase_add_test(t, bad_placements_exit_2);
	tcase_add_test(t, plain_loader_refuses_jobs);
	tcase_add_test(t, same_seed_same_bytes);
	tcase_add_test(t, cluster_sub_cuts_groups);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
