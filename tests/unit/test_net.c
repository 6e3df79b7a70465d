/* Network models and step-by-step collectives (sim/net.h): golden figures, max-min textbook cases, byte
 * conservation, monotonicity in bandwidth, contention, and bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll.h"
#include "sim/net.h"
#include "topology/cluster.h"

static hs_ydoc *doc;

static hs_cluster *load(const char *text, hs_err *err)
{
	hs_err_clear(err);
	doc = hs_yaml_load_string(text, strlen(text), "t.yaml", err);
	ck_assert_msg(doc != NULL, "%s", err->msg);
	return hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", err);
}

static void unload(hs_cluster *c)
{
	hs_cluster_free(c);
	hs_yaml_free(doc);
	doc = NULL;
}

/* completion times, by arg */
static double done_at[64];
static hs_engine *cur;
static void rec(void *ctx, uint64_t arg)
{
	(void)ctx;
	done_at[arg] = hs_time_to_s(hs_engine_now(cur));
}

static const char *models[] = {"analytical", "flow"};

/* N nodes x 1 GPU, one NIC each, one switch: every hop is NIC latency + one switch hop. */
static const char *ring_cluster = "cluster:\n"
				  "  groups:\n"
				  "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
				  "       nic: {bandwidth: 100 Gb/s, per_node: 1, latency: 2 us}}\n"
				  "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n";

START_TEST(one_flow_one_link)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			"  fabric:\n"
			"    kind: explicit\n"
			"    links: [{from: gpu0, to: gpu1, bandwidth: 10 GB/s, latency: 5 us}]\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	for (int m = 0; m < 2; m++) {
		cur = hs_engine_create();
		hs_net *n = hs_net_create(c, models[m], cur, &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		ck_assert_int_eq(hs_net_send(n, 0, 1, 1e6, rec, NULL, 0, &err), 0);
		hs_engine_run(cur, HS_TIME_MAX);
		ck_assert_double_eq_tol(done_at[0], 5e-6 + 1e6 / 10e9, 1e-11);
		hs_net_link_stat st;
		hs_net_link_stats(n, 0, &st, NULL, 0);
		ck_assert_double_eq_tol(st.bytes, 1e6, 1e-6);
		hs_net_free(n);
		hs_engine_destroy(cur);
	}
	unload(c);
}
END_TEST

/* Bertsekas & Gallager, Data Networks (2nd ed.), 6.5.2: on a line of three unit links, a flow over all
 * three and one flow on each link each get 1/2. Then the two-link case: link A (capacity c) carries f0 and
 * f1, link B (2c) carries f0 and f2: f0 = f1 = c/2 and f2 = 3c/2. Switch-to-switch links are the bottleneck;
 * access links are 100x faster. */
START_TEST(maxmin_textbook)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {nodes: 8, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			"  fabric:\n"
			"    kind: explicit\n"
			"    switches: [s0, s1, s2, s3]\n"
			"    links:\n"
			"      - {from: s0, to: s1, bandwidth: 1 GB/s, duplex: false}\n"
			"      - {from: s1, to: s2, bandwidth: 1 GB/s, duplex: false}\n"
			"      - {from: s2, to: s3, bandwidth: 1 GB/s, duplex: false}\n"
			"      - {from: s3, to: s0, bandwidth: 100 GB/s, duplex: false}\n"
			"      - {from: gpu0, to: s0, bandwidth: 100 GB/s}\n"
			"      - {from: gpu1, to: s0, bandwidth: 100 GB/s}\n"
			"      - {from: gpu2, to: s1, bandwidth: 100 GB/s}\n"
			"      - {from: gpu3, to: s2, bandwidth: 100 GB/s}\n"
			"      - {from: gpu4, to: s3, bandwidth: 100 GB/s}\n"
			"      - {from: gpu5, to: s1, bandwidth: 100 GB/s}\n"
			"      - {from: gpu6, to: s2, bandwidth: 100 GB/s}\n"
			"      - {from: gpu7, to: s3, bandwidth: 100 GB/s}\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	double B = 1e8; /* access links add B / 100 GB/s twice */
	ck_assert_int_eq(hs_net_send(n, 0, 4, B, rec, NULL, 0, &err), 0); /* s0-s1-s2-s3 */
	ck_assert_int_eq(hs_net_send(n, 1, 2, B, rec, NULL, 1, &err), 0); /* s0-s1 */
	ck_assert_int_eq(hs_net_send(n, 5, 3, B, rec, NULL, 2, &err), 0); /* s1-s2 */
	ck_assert_int_eq(hs_net_send(n, 6, 7, B, rec, NULL, 3, &err), 0); /* s2-s3 */
	hs_engine_run(cur, HS_TIME_MAX);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq_tol(done_at[i], B / 0.5e9, 1e-3 * B / 0.5e9);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);

	const char *y2 = "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			 "  fabric:\n"
			 "    kind: explicit\n"
			 "    switches: [a, b, z]\n"
			 "    links:\n"
			 "      - {from: a, to: b, bandwidth: 1 GB/s, duplex: false}\n"
			 "      - {from: b, to: z, bandwidth: 2 GB/s, duplex: false}\n"
			 "      - {from: z, to: a, bandwidth: 100 GB/s, duplex: false}\n"
			 "      - {from: gpu0, to: a, bandwidth: 1000 GB/s}\n"
			 "      - {from: gpu1, to: b, bandwidth: 1000 GB/s}\n"
			 "      - {from: gpu2, to: z, bandwidth: 1000 GB/s}\n"
			 "      - {from: gpu3, to: b, bandwidth: 1000 GB/s}\n";
	c = load(y2, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	n = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_net_send(n, 0, 2, B, rec, NULL, 0, &err), 0); /* a-b-z: f0 */
	ck_assert_int_eq(hs_net_send(n, 0, 1, B, rec, NULL, 1, &err), 0); /* a-b: f1 */
	ck_assert_int_eq(hs_net_send(n, 3, 2, B, rec, NULL, 2, &err), 0); /* b-z: f2 */
	hs_engine_run(cur, HS_TIME_MAX);
	/* f0 and f1 share gpu0's access link too, at 1000 GB/s: negligible */
	ck_assert_double_eq_tol(done_at[0], B / 0.5e9, 1e-3 * B / 0.5e9);
	ck_assert_double_eq_tol(done_at[1], B / 0.5e9, 1e-3 * B / 0.5e9);
	ck_assert_double_eq_tol(done_at[2], B / 1.5e9, 1e-3 * B / 1.5e9);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

static double run_coll(hs_net *n, enum hs_coll_op op, enum hs_coll_algo a, const int *ranks, int nr, double S)
{
	hs_err err = {0};
	done_at[0] = -1;
	ck_assert_msg(hs_net_collective(n, op, a, ranks, nr, S, rec, NULL, 0, &err) == 0, "%s", err.msg);
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert(done_at[0] >= 0);
	return done_at[0];
}

START_TEST(ring_allreduce_golden)
{
	hs_err err;
	hs_cluster *c = load(ring_cluster, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int ranks[4] = {0, 1, 2, 3};
	double S = 64 * 1048576.0, B = 100e9 / 8, alpha = 2e-6 + 1e-6;
	double closed = 2 * 3 * (alpha + S / (4 * B));
	double ana = hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, ranks, 4, S);
	ck_assert_double_eq_tol(ana, closed, 1e-12);
	for (int m = 0; m < 2; m++) {
		cur = hs_engine_create();
		hs_net *n = hs_net_create(c, models[m], cur, &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, ranks, 4, S);
		ck_assert_msg(fabs(t - closed) < 1e-6 * closed, "%s: %.9g vs closed form %.9g", models[m], t, closed);
		hs_net_free(n);
		hs_engine_destroy(cur);
	}
	unload(c);
}
END_TEST

/* Two all-reduces across the same two nodes, one NIC per node: each takes about twice as long together. */
START_TEST(concurrent_share_nic)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {nodes: 2, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s},\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 1}}\n"
			"  fabric: {kind: fat-tree, tiers: 1}\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int g0[2] = {0, 2}, g1[2] = {1, 3};
	double S = 256 * 1048576.0;
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	double alone = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, g0, 2, S);
	hs_net_free(n);
	hs_engine_destroy(cur);
	cur = hs_engine_create();
	n = hs_net_create(c, "flow", cur, &err);
	ck_assert_int_eq(hs_net_collective(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, g0, 2, S, rec, NULL, 0, &err), 0);
	ck_assert_int_eq(hs_net_collective(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, g1, 2, S, rec, NULL, 1, &err), 0);
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert_msg(fabs(done_at[0] / alone - 2) < 0.02 && fabs(done_at[1] / alone - 2) < 0.02,
		      "alone %.6g s, together %.6g and %.6g s", alone, done_at[0], done_at[1]);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

static const char *conserve_cluster = "cluster:\n"
				      "  groups:\n"
				      "    - {nodes: 2, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
				      "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, in_switch_reduction: true},\n"
				      "       nic: {bandwidth: 400 Gb/s, per_node: 2}}\n"
				      "  fabric: {kind: rail-optimized, radix: 8}\n";

/* Bytes every rank must send, summed over ranks, as each algorithm moves them. */
static double expected_bytes(enum hs_coll_op op, enum hs_coll_algo a, int n, int N, int p, double S)
{
	switch (a) {
	case HS_ALGO_HIERARCHICAL:
		if (op == HS_COLL_ALL_REDUCE)
			return 2.0 * N * (p - 1) * S / p * p / p * 1 + 2.0 * (N - 1) * S; /* 2N(p-1)S/p*... see below */
		return N * (p - 1.0) * S / p + (N - 1.0) * S;
	case HS_ALGO_INSWITCH: return 2.0 * n * S + 2.0 * (N - 1) * S;
	default: break;
	}
	switch (op) {
	case HS_COLL_ALL_REDUCE: return 2.0 * (n - 1) * S;
	case HS_COLL_SENDRECV: return S;
	default: return (n - 1.0) * S;
	}
}

START_TEST(bytes_conserved)
{
	hs_err err;
	hs_cluster *c = load(conserve_cluster, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	double S = 8 * 1048576.0;
	for (int op = 0; op < HS_COLL_OP_COUNT; op++)
		for (int a = HS_ALGO_RING; a < HS_ALGO_COUNT; a++) {
			int nr = op == HS_COLL_SENDRECV ? 2 : 8;
			if (!hs_coll_supported(c, (enum hs_coll_op)op, (enum hs_coll_algo)a, ranks, nr))
				continue;
			cur = hs_engine_create();
			hs_net *n = hs_net_create(c, "flow", cur, &err);
			ck_assert_msg(n != NULL, "%s", err.msg);
			run_coll(n, (enum hs_coll_op)op, (enum hs_coll_algo)a, ranks, nr, S);
			double want;
			if (a == HS_ALGO_HIERARCHICAL && op == HS_COLL_ALL_REDUCE)
				want = 2 * 2 * 3 * S + 2 * 1 * S; /* intra RS + AG: N(p-1)S each; inter: 2(N-1)S */
			else if (a == HS_ALGO_HIERARCHICAL)
				want = 2 * 3 * S + 1 * S; /* intra N(p-1)S + inter (N-1)S */
			else
				want = expected_bytes((enum hs_coll_op)op, (enum hs_coll_algo)a, nr, 2, 4, S);
			ck_assert_msg(fabs(hs_net_bytes_injected(n) - want) < 1e-6 * want, "%s/%s: %.0f bytes sent, expected %.0f",
				      hs_coll_op_name((enum hs_coll_op)op), hs_coll_algo_name((enum hs_coll_algo)a),
				      hs_net_bytes_injected(n), want);
			/* every byte that enters a device's links leaves another's: into devices == out of devices */
			double in = 0, out = 0;
			const hs_topo *t = hs_net_topo(n);
			for (int l = 0; l < hs_net_nlinks(n); l++) {
				hs_net_link_stat st;
				hs_net_link_stats(n, l, &st, NULL, 0);
				if (hs_topo_vkind(t, st.from) == HS_V_GPU)
					out += st.bytes;
				if (hs_topo_vkind(t, st.to) == HS_V_GPU)
					in += st.bytes;
			}
			if (a != HS_ALGO_INSWITCH)
				ck_assert_msg(fabs(in - out) < 1e-6 * out, "%s/%s: %.0f bytes out of devices, %.0f in",
					      hs_coll_op_name((enum hs_coll_op)op), hs_coll_algo_name((enum hs_coll_algo)a), out, in);
			hs_net_free(n);
			hs_engine_destroy(cur);
		}
	unload(c);
}
END_TEST

/* Raising any bandwidth never makes a collective slower. */
START_TEST(more_bandwidth_never_slower)
{
	char y[1024];
	double prev[HS_COLL_OP_COUNT];
	int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	const int nics[] = {100, 200, 400, 800};
	for (int k = 0; k < 4; k++) {
		snprintf(y, sizeof y,
			 "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: 4, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 100 GB/s},\n"
			 "       nic: {bandwidth: %d Gb/s, per_node: 1}}\n"
			 "  fabric: {kind: fat-tree, tiers: 2, radix: 4, oversubscription: 2}\n",
			 nics[k]);
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		for (int op = 0; op < HS_COLL_OP_COUNT; op++) {
			cur = hs_engine_create();
			hs_net *n = hs_net_create(c, "flow", cur, &err);
			ck_assert_msg(n != NULL, "%s", err.msg);
			double t = run_coll(n, (enum hs_coll_op)op, HS_ALGO_AUTO, ranks, op == HS_COLL_SENDRECV ? 2 : 8, 4e6);
			if (k)
				ck_assert_msg(t <= prev[op] * (1 + 1e-9), "%s: %g s at %d Gb/s, %g s at %d Gb/s",
					      hs_coll_op_name((enum hs_coll_op)op), t, nics[k], prev[op], nics[k - 1]);
			prev[op] = t;
			hs_net_free(n);
			hs_engine_destroy(cur);
		}
		unload(c);
	}
}
END_TEST

/* A slow NIC on one node slows the whole ring to its pace (flow model), as on hardware. */
START_TEST(slow_link_slows_ring)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {name: fast, nodes: 3, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 0 us}}\n"
			"    - {name: slow, nodes: 1, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			"       nic: {bandwidth: 100 Gb/s, per_node: 1, latency: 0 us}}\n"
			"  fabric: {kind: fat-tree, tiers: 1, latency: 0 us}\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int ranks[4] = {0, 1, 2, 3};
	double S = 64e6;
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, ranks, 4, S);
	double want = 2 * 3 * (S / 4) / (100e9 / 8);
	ck_assert_msg(fabs(t - want) < 1e-3 * want, "%g s, expected %g s", t, want);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

START_TEST(bad_input)
{
	hs_err err;
	/* two nodes and no fabric */
	hs_cluster *c = load("cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			     "  fabric: {kind: none}\n",
			     &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	ck_assert_ptr_null(hs_net_create(c, "flow", cur, &err));
	ck_assert_msg(strstr(err.msg, "not connected"), "%s", err.msg);
	hs_engine_destroy(cur);
	unload(c);
	/* a one-way link: gpu1 cannot reach gpu0 */
	c = load("cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
		 "  fabric: {kind: explicit, links: [{from: gpu0, to: gpu1, bandwidth: 1 GB/s, duplex: false}]}\n",
		 &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_net_create(c, "analytical", cur, &err));
	ck_assert_msg(strstr(err.msg, "gpu1 has no path to gpu0"), "%s", err.msg);
	hs_engine_destroy(cur);
	unload(c);
	/* zero and negative bandwidth, a link to nowhere */
	const char *bad[] = {"bandwidth: 0 GB/s", "bandwidth: -5 GB/s", "bandwidth: 1 GB/s, to: sw9"};
	for (int i = 0; i < 3; i++) {
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			 "  fabric: {kind: explicit, links: [{from: gpu0, %s%s}]}\n",
			 bad[i], i < 2 ? ", to: gpu1" : "");
		c = load(y, &err);
		ck_assert_ptr_null(c);
		ck_assert_msg(strstr(err.msg, i < 2 ? "bandwidth" : "sw9"), "%s", err.msg);
		hs_yaml_free(doc);
	}
	/* unknown model, a group outside the cluster, a send outside it */
	c = load(ring_cluster, &err);
	cur = hs_engine_create();
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_net_create(c, "packet", cur, &err));
	ck_assert_msg(strstr(err.msg, "fabric"), "%s", err.msg);
	hs_err_clear(&err);
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	int bad_ranks[2] = {0, 9};
	ck_assert_int_eq(hs_net_collective(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, bad_ranks, 2, 1e6, rec, NULL, 0, &err), -1);
	ck_assert_msg(strstr(err.msg, "outside the cluster"), "%s", err.msg);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_net_send(n, 0, 7, 1e6, rec, NULL, 0, &err), -1);
	ck_assert_msg(strstr(err.msg, "outside the cluster"), "%s", err.msg);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("net");
	TCase *t = tcase_create("net");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, one_flow_one_link);
	tcase_add_test(t, maxmin_textbook);
	tcase_add_test(t, ring_allreduce_golden);
	tcase_add_test(t, concurrent_share_nic);
	tcase_add_test(t, bytes_conserved);
	tcase_add_test(t, more_bandwidth_never_slower);
	tcase_add_test(t, slow_link_slows_ring);
	tcase_add_test(t, bad_input);
	suite_add_tcase(s, t);
	return s;
}

#include "check_main.h"
