/* Network models and step-by-step collectives (sim/net/net.h): golden figures, max-min textbook cases, byte
 * conservation, monotonicity in bandwidth, contention, and bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll.h"
#include "sim/net/net.h"
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

/* Two GPUs and one 10 GB/s link between them (5 us). */
static const char *one_link = "cluster:\n"
			      "  groups:\n"
			      "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			      "  fabric:\n"
			      "    kind: explicit\n"
			      "    links: [{from: gpu0, to: gpu1, bandwidth: 10 GB/s, latency: 5 us}]\n";

START_TEST(one_flow_one_link)
{
	hs_err err;
	hs_cluster *c = load(one_link, &err);
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

/* A flow alone on its links is timed outside the solver (net_flow.c); a second flow entering its link moves it
 * into the solver with what it has left. Closed form on one 10 GB/s link (latency 5 us): A (10 MB) starts at 0
 * alone; B (10 MB) starts at 0.5 ms on the same link, when A has 5 MB left; both run at 5 GB/s, A's 5 MB end at
 * 1.5 ms, by when B has sent 5 MB; B's last 5 MB alone at 10 GB/s end at 2.0 ms. C (1 MB) starts at 2.5 ms,
 * alone again: 0.1 ms. Each arrives one latency after its last byte leaves. */
static hs_net *cur_net;
static void start_b(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng, (void)ctx;
	hs_err err;
	hs_err_clear(&err);
	ck_assert_int_eq(hs_net_send(cur_net, 0, 1, arg == 1 ? 10e6 : 1e6, rec, NULL, arg, &err), 0);
}

START_TEST(alone_then_shared)
{
	hs_err err;
	hs_cluster *c = load(one_link, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	cur_net = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(cur_net != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_net_send(cur_net, 0, 1, 10e6, rec, NULL, 0, &err), 0);
	hs_engine_at(cur, hs_time_from_s(0.5e-3), start_b, NULL, 1);
	hs_engine_at(cur, hs_time_from_s(2.5e-3), start_b, NULL, 2);
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert_double_eq_tol(done_at[0], 1.5e-3 + 5e-6, 1e-11);
	ck_assert_double_eq_tol(done_at[1], 2.0e-3 + 5e-6, 1e-11);
	ck_assert_double_eq_tol(done_at[2], 2.6e-3 + 5e-6, 1e-11);
	hs_net_link_stat st;
	hs_net_link_stats(cur_net, 0, &st, NULL, 0);
	ck_assert_double_eq_tol(st.bytes, 21e6, 1e-3);
	hs_net_free(cur_net);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

/* Two pairs of flows, each pair into one GPU (4 nodes x 1 GPU, one 50 GB/s NIC each, one rail switch): each
 * flow gets B/2 and all four 1 MiB transfers arrive together at 2^20 / 25 GB/s + 4 us. The 12 links of one
 * recompute once came out of a heap built with sift-up-then-down in an order that popped a link of share B
 * before one of share B/2: flow 2 -> 1 then ran at B beside 0 -> 1 at B/2 on a link of B. */
START_TEST(maxmin_two_pairs)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
			"  fabric: {kind: rail-optimized, radix: 64, latency: 1 us}\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	const int pairs[4][2] = {{1, 2}, {3, 2}, {0, 1}, {2, 1}};
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(hs_net_send(n, pairs[i][0], pairs[i][1], 1048576, rec, NULL, (uint64_t)i, &err), 0);
	const hs_route *rt = hs_route_get(hs_net_router(n), 0, 1, -1, &err);
	ck_assert_ptr_nonnull(rt);
	double want = 1048576 / 25e9 + hs_time_to_s(rt->lat);
	hs_engine_run(cur, HS_TIME_MAX);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(fabs(done_at[i] - want) < 1e-12, "flow %d -> %d done at %.9g s, expected %.9g s", pairs[i][0],
			      pairs[i][1], done_at[i], want);
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

/* The models' `sent` call: the last byte leaves one route latency before it arrives, and what a sender
 * starts then shares the links at once. One link of B = 10 GB/s, 5 us. Flow model: A (1 MB) and B (2 MB)
 * start at 0 and get B/2 each, so A is sent at 200 us (done 205 us); C (1 MB), started from A's sent, shares
 * with B's remaining 1 MB, both at B/2: sent at 400 us (done 405 us). Analytical (no sharing): A sent at
 * 100 us, B at 200 us, C (from 100 us) at 200 us. */
static double sent_at[4];
static const hs_net_ops *sent_ops;
static hs_net_model *sent_m;
static const hs_route *sent_rt;
static void rec_sent(void *ctx, uint64_t arg)
{
	(void)ctx;
	sent_at[arg] = hs_time_to_s(hs_engine_now(cur));
	if (arg == 0)
		sent_ops->start(sent_m, sent_rt, 1e6, rec_sent, rec, NULL, 2);
}

START_TEST(sent_before_done)
{
	hs_err err;
	hs_cluster *c = load(one_link, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	hs_topo *t = hs_topo_build(c, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	hs_router *ro = hs_router_create(t);
	sent_rt = hs_route_get(ro, 0, 1, -1, &err);
	ck_assert_ptr_nonnull(sent_rt);
	const hs_net_ops *ops[] = {&hs_net_flow, &hs_net_analytical};
	const double want[2][3] = {{200e-6, 400e-6, 400e-6}, {100e-6, 200e-6, 200e-6}};
	for (int m = 0; m < 2; m++) {
		cur = hs_engine_create();
		sent_ops = ops[m];
		sent_m = ops[m]->create(t, cur, &err);
		ck_assert_ptr_nonnull(sent_m);
		memset(sent_at, 0, sizeof sent_at);
		sent_ops->start(sent_m, sent_rt, 1e6, rec_sent, rec, NULL, 0);
		sent_ops->start(sent_m, sent_rt, 2e6, rec_sent, rec, NULL, 1);
		hs_engine_run(cur, HS_TIME_MAX);
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(fabs(sent_at[i] - want[m][i]) < 1e-12, "%s: flow %d sent at %.9g s, expected %.9g s",
				      ops[m]->name, i, sent_at[i], want[m][i]);
			ck_assert_msg(fabs(done_at[i] - want[m][i] - 5e-6) < 1e-12, "%s: flow %d done at %.9g s, expected %.9g s",
				      ops[m]->name, i, done_at[i], want[m][i] + 5e-6);
		}
		ops[m]->destroy(sent_m);
		hs_engine_destroy(cur);
	}
	hs_router_free(ro);
	hs_topo_free(t);
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
	case HS_ALGO_NVLS:
	case HS_ALGO_NVLS_TREE:
		/* every GPU S(1 + 1/p) up to its switch and the switch as much down, at 1/0.85 (H100's NVLS
		 * efficiency); across nodes the trees of the p local indices, 2(N-1) S/p each */
		return 2.0 * n * S * (1 + 1.0 / p) / 0.85 + 2.0 * (N - 1) * S;
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

/* ---- the tree all-reduce (sim/net/netcoll_tree.c) ---- */

static hs_net *flow_net(hs_cluster *c, int channels, double chunk)
{
	hs_err err = {0};
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	hs_net_set_channels(n, channels);
	if (chunk > 0)
		hs_net_set_chunk(n, chunk);
	return n;
}

static void drop_net(hs_net *n)
{
	hs_net_free(n);
	hs_engine_destroy(cur);
}

/* Degree of node k in tree t of NCCL's double binary tree over N nodes, worked out by hand from
 * ncclGetBtree/ncclGetDtree (src/graph/trees.cc) rather than from our code:
 *   N = 3: tree 0 is 0 -> 2 -> 1 (0 the root); tree 1, shifted by one, 1 -> 0 -> 2;
 *   N = 4: tree 0 is 0 -> 2 -> {1, 3}; tree 1, mirrored, 3 -> 1 -> {2, 0}. */
static int node_degree(int N, int t, int k)
{
	static const int d3[2][3] = {{1, 1, 2}, {2, 1, 1}};
	static const int d4[2][4] = {{1, 1, 3, 1}, {1, 3, 1, 1}};
	return N == 3 ? d3[t][k] : d4[t][k];
}

/* Every rank sends, per tree, the tree's share (S / 2C) once to each neighbour: its degree. In a node of p
 * ranks, channel c's chain starts at the owner of NIC c (local index `head`); the head adds its node's degree
 * across nodes. Bytes out of a device are counted on its links (scale-up and NIC). */
START_TEST(tree_bytes_per_rank)
{
	struct {
		int N, p, nics, C;
	} cs[] = {{4, 4, 4, 1}, {4, 4, 4, 2}, {4, 4, 4, 4}, {3, 2, 1, 1}, {3, 2, 1, 2}};
	for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
		int N = cs[q].N, p = cs[q].p, C = cs[q].C, n = N * p;
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: %d, gpus_per_node: %d, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s},\n"
			 "       nic: {bandwidth: 400 Gb/s, per_node: %d}}\n"
			 "  fabric: {kind: fat-tree, tiers: 1}\n",
			 N, p, cs[q].nics);
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		int ranks[16];
		for (int i = 0; i < n; i++)
			ranks[i] = i;
		double S = 8 * 1048576.0, share = S / (2 * C);
		hs_net *net = flow_net(c, C, 0);
		run_coll(net, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, n, S);
		ck_assert_msg(fabs(hs_net_bytes_injected(net) - 2.0 * (n - 1) * S) < 1e-6 * S, "%.0f bytes injected",
			      hs_net_bytes_injected(net));
		double out[16] = {0};
		for (int l = 0; l < hs_net_nlinks(net); l++) {
			hs_net_link_stat st;
			hs_net_link_stats(net, l, &st, NULL, 0);
			if (st.from < n)
				out[st.from] += st.bytes;
		}
		for (int d = 0; d < n; d++) {
			int k = d / p, l = d % p;
			double want = 0;
			for (int ch = 0; ch < C; ch++) {
				int head = (ch % cs[q].nics) * p / cs[q].nics; /* NIC i hangs off device i * p / nics */
				int pos = (l - head + p) % p;
				int chain = p == 1 ? 0 : pos == 0 || pos == p - 1 ? 1 : 2;
				for (int t = 0; t < 2; t++)
					want += share * (chain + (pos == 0 ? node_degree(N, t, k) : 0));
			}
			ck_assert_msg(fabs(out[d] - want) < 1e-6 * S, "N=%d p=%d C=%d: device %d sent %.0f bytes, expected %.0f",
				      N, p, C, d, out[d], want);
		}
		drop_net(net);
		unload(c);
	}
}
END_TEST

/* One node, idle network, C = 1. Both trees are the chain 0 -> 1 -> ... -> k-1 (0 the root) with S/2 each,
 * cut into M slices of s = S/2M; running in lockstep they share each link evenly, so one slice of both trees
 * takes tau = 2s/B = S/(MB) to leave (its transmission) and arrives alpha later (alpha: route latency).
 * When the up and down transfers use different links (a chain of point-to-point links, or k = 2 on a
 * switch), nothing else contends and the protocol is a max-plus recursion. Up, rank i sends slice j at
 *   u_i(j) = max(u_{i+1}(j) + tau + alpha,   the data has arrived from its child (none at the tail k-1),
 *                u_i(j-1) + tau,             its previous slice has left,
 *                u_{i-1}(j-W))               the parent has passed on slice j-W (W slots; at the root:
 *                                            reduced it, u_1(j-W) + tau + alpha),
 * and down, rank i forwards slice j at d_i(j) = max(d_{i-1}(j) + tau + alpha, d_i(j-1) + tau, d_{i+1}(j-W))
 * (a leaf consumes on arrival, d_{k-2}(j) + tau + alpha), the root at d_0(j) = max(u_1(j) + tau + alpha, ...).
 * Let P = max(W tau, tau + alpha), the time W slices take to leave one after another or one slice to make
 * the round trip to a free slot, whichever is longer, and U(j) = floor(j/W) P + (j mod W) tau: the tail
 * sends its W first slices back to back, then each next one W slices later by P. The solution is
 *   u_i(j) = U(j) + (k-1-i)(tau + alpha),   d_i(j) = U(j) + (k-1+i)(tau + alpha):
 * the data term holds with equality, U(j) - U(j-1) >= tau gives the second, and U(j) - U(j-W) = P >=
 * tau + alpha the third (equality exactly when the window binds). The last slice reaches the tail at
 * d_{k-2}(M-1) + tau + alpha:
 *   t = U(M-1) + 2(k-1)(alpha + tau).
 * W = 1 gives P = tau + alpha and the stop-and-wait form (M + 2k - 3)(alpha + S/(MB)); when W tau >= tau +
 * alpha (bandwidth-bound), U(M-1) = (M-1) tau and t = (M-1) S/(MB) + 2(k-1)(alpha + S/(MB)): the bytes' time
 * plus the pipeline's fill, 2k-3 slice times and 2(k-1) latencies. The chains below cover both: 64 MiB in 16
 * slices (tau = 41.9 us against alpha = 2 us, bandwidth-bound for W >= 2) and 4 MiB in 61 (tau = 0.69 us: the
 * window binds for W = 2 and 3, and 60 slices after the first are not a multiple of W).
 * On a switch with k >= 3 a middle rank's one link to the switch carries its up and its down slices of both
 * trees (4 transfers of s, one per connection): each takes between s/B and 4s/B = 2 tau, so the time lies
 * between that of the bytes a middle rank sends, 2S/B, plus one latency, and t with tau doubled (every
 * event time is a max of sums of durations, so it grows with them). */
static double chain_time(int k, int M, int W, double alpha, double tau)
{
	int last = M - 1;
	double P = fmax(W * tau, tau + alpha);
	return (last / W) * P + (last % W) * tau + 2.0 * (k - 1) * (alpha + tau);
}

START_TEST(tree_chain_golden)
{
	const double B = 100e9;
	const struct {
		double S;
		int M;
	} sz[] = {{64 * 1048576.0, 16}, {4 * 1048576.0, 61}};
	const int windows[] = {1, 2, 3, 8};
	for (int k = 2; k <= 8; k *= 2) {
		/* point-to-point chain links; the hub only keeps the graph connected (routes never relay through a
		 * device) and no chain route crosses it: two hops against one */
		char y[2048];
		int o = snprintf(y, sizeof y,
				 "cluster:\n"
				 "  groups:\n"
				 "    - {nodes: 1, gpus_per_node: %d, gpu: H100-SXM-80GB}\n"
				 "  fabric:\n"
				 "    kind: explicit\n"
				 "    switches: [hub]\n"
				 "    links:\n",
				 k);
		for (int i = 0; i < k; i++) {
			o += snprintf(y + o, sizeof y - (size_t)o, "      - {from: gpu%d, to: hub, bandwidth: 1 GB/s}\n", i);
			if (i + 1 < k)
				o += snprintf(y + o, sizeof y - (size_t)o,
					      "      - {from: gpu%d, to: gpu%d, bandwidth: 100 GB/s, latency: 2 us}\n", i, i + 1);
		}
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
		for (int z = 0; z < 2; z++)
			for (int q = 0; q < 4; q++) {
				double S = sz[z].S;
				int M = sz[z].M, W = windows[q];
				/* a chunk a hair above S/2M, so that the share is cut into exactly M slices */
				hs_net *n = flow_net(c, 1, S / 2 / M * (1 + 1e-9));
				hs_net_set_window(n, W);
				const hs_route *rt = hs_route_get(hs_net_router(n), 0, 1, -1, &err);
				ck_assert_ptr_nonnull(rt);
				double alpha = hs_time_to_s(rt->lat), closed = chain_time(k, M, W, alpha, S / (M * B));
				ck_assert_double_eq_tol(alpha, 2e-6, 1e-12);
				if (W == 1) /* the stop-and-wait form */
					ck_assert_double_eq_tol(closed, (M + 2 * k - 3) * (alpha + S / (M * B)), 1e-15);
				double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, k, S);
				ck_assert_msg(fabs(t - closed) < 1e-6 * closed, "chain of %d, M = %d, W = %d: %.9g s, closed form %.9g s",
					      k, M, W, t, closed);
				drop_net(n);
			}
		unload(c);
	}
	/* the same on a switch: exact for k = 2, bounded for k = 8; the default window (8) */
	const double S = 64 * 1048576.0;
	const int M = 16;
	for (int k = 2; k <= 8; k += 6) {
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: 1, gpus_per_node: %d, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us}}\n"
			 "  fabric: {kind: none}\n",
			 k);
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
		hs_net *n = flow_net(c, 1, S / 2 / M);
		const hs_route *rt = hs_route_get(hs_net_router(n), 0, 1, -1, &err);
		ck_assert_ptr_nonnull(rt);
		double alpha = hs_time_to_s(rt->lat), tau = S / (M * B);
		double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, k, S);
		if (k == 2) {
			double closed = chain_time(k, M, 8, alpha, tau);
			ck_assert_msg(fabs(t - closed) < 1e-6 * closed, "switch, k = 2: %.9g s, closed form %.9g s", t, closed);
		} else {
			double lo = 2 * S / B + alpha, hi = chain_time(k, M, 8, alpha, 2 * tau);
			ck_assert_msg(t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9), "switch, k = %d: %.9g s outside [%.9g, %.9g]",
				      k, t, lo, hi);
		}
		drop_net(n);
		unload(c);
	}
}
END_TEST

/* 2 and 4 nodes of 8 GPUs, 8 NICs each, fat-tree, 1 GiB, one channel per NIC (as NCCL runs a tree channel
 * per NIC): the flow tree against sim/coll/coll_tree.c's closed form lat + max(t_up, t_net), t_up = 2S/B_up,
 * t_net = S/B_node (N = 2) or 2S/B_node.
 * Below: no run beats the bytes of its busiest link over that link's bandwidth. With a channel per NIC each
 * channel's chain starts at its NIC's GPU, so every GPU is a head once and a tail once (S/C instead of 2S/C
 * each time) and carries 2(k-1)S/k over the scale-up, 7/8 of the closed form's 2S (a middle rank of one
 * chain); across nodes the busiest NIC carries 4 tree edges x S/2C = 2S/C (N = 4: a node interior in one
 * tree). So t >= max((k-1)/k t_up, t_net). The closed form adds its latency term to that; the flow tree can
 * come in under it, since the latency of one channel's slices overlaps the others' transmissions.
 * Above: the pipeline's fill (64 slices of 1 MiB per tree and channel; the first slice crosses every hop
 * before the links are all busy) and, with few slots, waiting for them.
 *   N = 2 is scale-up-bound: within 1% of lat + max((k-1)/k t_up, t_net) (0.6% under it).
 *   N = 4 is NIC-bound: within 5% of hs_coll_time with NCCL's 8 slots per connection (3.1% over it), where
 *   one slot (stop-and-wait, each sender idle one route latency per slice) is 8.0% over. */
START_TEST(tree_vs_analytical)
{
	const double S = 1073741824.0, B_up = 450e9, B_node = 8 * 50e9; /* 8 NICs x 400 Gb/s */
	const int k = 8;
	for (int N = 2; N <= 4; N += 2) {
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: %d, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			 "  fabric: {kind: fat-tree, tiers: 2, radix: 64, latency: 1 us}\n",
			 N);
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		int ranks[32];
		for (int i = 0; i < N * k; i++)
			ranks[i] = i;
		double ana = hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, N * k, S);
		double t_up = 2 * S / B_up, t_net = (N == 2 ? 1 : 2) * S / B_node;
		double lat = ana - fmax(t_up, t_net); /* the closed form's latency term */
		double busiest = fmax((k - 1.0) / k * t_up, t_net), derived = lat + busiest;
		hs_net *n = flow_net(c, 8, 0);
		double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, N * k, S);
		drop_net(n);
		ck_assert_msg(t >= busiest * (1 - 1e-9), "N = %d: %.6g s, under the busiest link's %.6g s", N, t, busiest);
		if (N == 2)
			ck_assert_msg(fabs(t / derived - 1) < 0.01, "N = 2: %.6g s, derived %.6g s", t, derived);
		else {
			ck_assert_msg(fabs(t / ana - 1) < 0.05, "N = 4: %.6g s, hs_coll_time %.6g s", t, ana);
			n = flow_net(c, 8, 0);
			hs_net_set_window(n, 1);
			double t1 = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, N * k, S);
			drop_net(n);
			ck_assert_msg(t1 > ana * 1.05, "N = 4, one slot: %.6g s, hs_coll_time %.6g s", t1, ana);
		}
		unload(c);
	}
}
END_TEST

/* FASTEST (and AUTO, test_coll) on the flow model runs what the analytical choice runs. 4 nodes x 8 GPUs, rail-optimised, 256 MiB, a
 * channel per NIC: the closed forms choose the tree (1.38 ms against the ring's 1.67 ms); AUTO must then take
 * exactly the tree's time (1.55 ms), not the ring's (1.67 ms), which it ran in the tree's place while the
 * tree kept one slice in flight per connection. */
START_TEST(auto_runs_tree_on_flow)
{
	const char *y = "cluster:\n"
			"  groups:\n"
			"    - {nodes: 4, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			"  fabric: {kind: rail-optimized, radix: 64, latency: 1 us}\n";
	hs_err err;
	hs_cluster *c = load(y, &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int ranks[32];
	for (int i = 0; i < 32; i++)
		ranks[i] = i;
	const double S = 256 * 1048576.0;
	/* the tree, and since the pipelined hierarchical closed form (fill + its NVLink phases) the hierarchical */
	enum hs_coll_algo fa = hs_coll_resolve_algo(c, HS_COLL_ALL_REDUCE, HS_ALGO_FASTEST, ranks, 32, S);
	ck_assert_int_eq(fa, HS_ALGO_HIERARCHICAL);
	const enum hs_coll_algo algos[3] = {HS_ALGO_FASTEST, fa, HS_ALGO_RING};
	double t[3];
	for (int a = 0; a < 3; a++) {
		hs_net *n = flow_net(c, 8, 0);
		t[a] = run_coll(n, HS_COLL_ALL_REDUCE, algos[a], ranks, 32, S);
		drop_net(n);
	}
	ck_assert_msg(t[0] == t[1], "FASTEST %.9g s, its choice %.9g s", t[0], t[1]);
	ck_assert_msg(t[1] < t[2], "its choice %.9g s, ring %.9g s", t[1], t[2]);
	unload(c);
}
END_TEST

/* NVLS on 8 GPUs, NVLS-tree on 2 x 8 and the pipelined two-phase hierarchical all-reduce: closed forms derived
 * by hand, equal to hs_coll_time, and the flow model on an idle network within 5% of them. The cluster is
 * scenarios/validation/nccl/h100x16-ndr.yaml: H100 (NVLS efficiency e = 0.85, NCCL 2.28.3), NVSwitch 450 GB/s
 * per direction, a_up = 1 us; 8 x 400 Gb/s NICs (B_node = 400 GB/s), a_net = 3 us NIC + 3 switch hops of 1 us
 * = 6 us. S = 1 GiB = 1073741824 B, chunks of 1 MiB: M = 1024.
 *   NVLS, p = 8:  t = 2 a_up + S (1 + 1/8) / (e 450 GB/s) = 2 us + 3158.06 us                = 3160.06 us
 *   NVLS-tree:    t_up = 3158.06 us, t_net = S / 400 GB/s (two nodes: each sends S) = 2684.35 us,
 *                 t = 2 a_up + 2 log2(2) a_net + (t_up + t_net)/M + (M-1)/M t_up
 *                   = 14 us + 5.71 us + 3154.98 us                                           = 3174.69 us
 *   hierarchical: t_up = 2 (7/8) S / 450 GB/s = 4175.66 us (reduce-scatter + all-gather on NVLink),
 *                 t_net = 2 (1/2) (S/8) / (400/8 GB/s) = 2684.35 us,
 *                 t = 2 (7) a_up + 2 (1) a_net + (t_up + t_net)/M + (M-1)/M t_up
 *                   = 26 us + 6.70 us + 4171.58 us                                           = 4204.28 us
 * (the phases one after the other took 4175.66 + 2684.35 us + latencies: 6886 us).
 * Where the NICs bind: the same nodes with 8 x 200 Gb/s NICs (B_node = 200 GB/s), on 2 and on 4 nodes
 * (4 nodes: the fat-tree's 3 switch hops, a_net = 6 us, as before):
 *   NVLS-tree, 2 x 8: t_net = S / 200 GB/s = 5368.71 us > t_up,
 *                 t = 14 us + (3158.06 + 5368.71)/M + (M-1)/M t_net = 14 + 8.33 + 5363.47 us   = 5385.80 us
 *   hierarchical, 2 x 8: t_net = 2 (1/2) (S/8) / (200/8 GB/s) = 5368.71 us > t_up = 4175.66 us,
 *                 t = 26 us + (4175.66 + 5368.71)/M + (M-1)/M t_net = 26 + 9.32 + 5363.47 us   = 5398.79 us
 *   NVLS-tree, 4 x 8: each tree edge S/2p per GPU; a node interior in one tree sends 3 pieces of it (up, and
 *                 down to two children) and as the other tree's leaf 1: t_net = 2 S / 200 GB/s = 10737.42
 *                 us, latency 2 a_up + 2 log2(4) a_net = 26 us,
 *                 t = 26 us + (3158.06 + 10737.42)/M + (M-1)/M t_net = 26 + 13.57 + 10726.93 us = 10766.50 us
 *   hierarchical, 4 x 8: t_net = 2 (3/4) (S/8) / (200/8 GB/s) = 8053.06 us, latency 2 (7) a_up + 2 (3) a_net
 *                 = 50 us, t = 50 us + (4175.66 + 8053.06)/M + (M-1)/M t_net = 50 + 11.94 + 8045.20 us
 *                                                                                            = 8107.14 us
 * And with NVLink ten times as fast (4500 GB/s), 8 x 400 Gb/s NICs, 2 x 8: t_net = 2684.35 us binds,
 *   NVLS-tree:    t_up = 315.81 us, t = 14 us + (315.81 + 2684.35)/M + (M-1)/M t_net = 14 + 2.93 + 2681.73 us
 *                                                                                            = 2698.66 us
 *   hierarchical: t_up = 417.57 us, t = 26 us + (417.57 + 2684.35)/M + (M-1)/M t_net          = 2710.76 us
 * Before the pipeline's transfers went on connections that send one transfer at a time (netcoll_pipe.c),
 * the window's chunks advanced in lockstep and the flow NVLS-tree took 5801 us on 2 x 8 at 200 Gb/s (+7.7%)
 * and 2959 us with the fast NVLink (+9.6%), the hierarchical 5769 us (+6.9%) and 2967 us (+9.5%). */
START_TEST(nvls_and_pipelined_vs_flow)
{
	const double S = 1073741824.0, M = 1024;
	double t_nvls = S * 1.125 / (0.85 * 450e9), t_hup = 1.75 * S / 450e9;
	double f_nvls = t_nvls / 10, f_hup = t_hup / 10; /* NVLink at 4500 GB/s */
	const struct {
		int nodes, nic, up; /* Gb/s, GB/s */
		enum hs_coll_algo a;
		int n;
		double want;
	} cs[] = {
		{2, 400, 450, HS_ALGO_NVLS, 8, 2e-6 + t_nvls},
		{2, 400, 450, HS_ALGO_NVLS_TREE, 16, 14e-6 + (t_nvls + S / 400e9) / M + (M - 1) / M * t_nvls},
		{2, 400, 450, HS_ALGO_HIERARCHICAL, 16, 26e-6 + (t_hup + S / 400e9) / M + (M - 1) / M * t_hup},
		{2, 200, 450, HS_ALGO_NVLS_TREE, 16, 14e-6 + (t_nvls + S / 200e9) / M + (M - 1) / M * (S / 200e9)},
		{2, 200, 450, HS_ALGO_HIERARCHICAL, 16, 26e-6 + (t_hup + S / 200e9) / M + (M - 1) / M * (S / 200e9)},
		{4, 200, 450, HS_ALGO_NVLS_TREE, 32, 26e-6 + (t_nvls + 2 * S / 200e9) / M + (M - 1) / M * (2 * S / 200e9)},
		{4, 200, 450, HS_ALGO_HIERARCHICAL, 32, 50e-6 + (t_hup + 1.5 * S / 200e9) / M + (M - 1) / M * (1.5 * S / 200e9)},
		{2, 400, 4500, HS_ALGO_NVLS_TREE, 16, 14e-6 + (f_nvls + S / 400e9) / M + (M - 1) / M * (S / 400e9)},
		{2, 400, 4500, HS_ALGO_HIERARCHICAL, 16, 26e-6 + (f_hup + S / 400e9) / M + (M - 1) / M * (S / 400e9)},
	};
	int ranks[32];
	for (int i = 0; i < 32; i++)
		ranks[i] = i;
	for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n"
			 "  groups:\n"
			 "    - {nodes: %d, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			 "       scaleup: {kind: nvswitch, bandwidth: %d GB/s, latency: 1 us, in_switch_reduction: true},\n"
			 "       nic: {bandwidth: %d Gb/s, per_node: 8, latency: 3 us}}\n"
			 "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n",
			 cs[i].nodes, cs[i].up, cs[i].nic);
		hs_err err;
		hs_cluster *c = load(y, &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		const char *name = hs_coll_algo_name(cs[i].a);
		double cf = hs_coll_time(c, HS_COLL_ALL_REDUCE, cs[i].a, ranks, cs[i].n, S);
		ck_assert_msg(fabs(cf / cs[i].want - 1) < 1e-9, "%s, %d x 8, %d Gb/s, %d GB/s: closed form %.9g s, by hand %.9g s",
			      name, cs[i].nodes, cs[i].nic, cs[i].up, cf, cs[i].want);
		hs_net *n = flow_net(c, cs[i].n > 8 ? 8 : 1, 0);
		double fl = run_coll(n, HS_COLL_ALL_REDUCE, cs[i].a, ranks, cs[i].n, S);
		ck_assert_msg(fabs(fl / cf - 1) < 0.05, "%s, %d x 8, %d Gb/s, %d GB/s: flow %.9g s, closed form %.9g s",
			      name, cs[i].nodes, cs[i].nic, cs[i].up, fl, cf);
		/* bytes (bytes_conserved's count, here with a tree over 4 nodes): N (p = 8) x 2 (p-1) S/p x p inside
		 * (hierarchical), n 2 S (1 + 1/p) / e through the switches (NVLS), 2 (N-1) S across nodes */
		int N = cs[i].n / 8;
		double want = (cs[i].a == HS_ALGO_HIERARCHICAL ? 2.0 * N * 7 * S : 2.0 * cs[i].n * S * 1.125 / 0.85) +
			      2.0 * (N - 1) * S;
		ck_assert_msg(fabs(hs_net_bytes_injected(n) / want - 1) < 1e-9, "%s, %d x 8: %.0f bytes sent, expected %.0f",
			      name, cs[i].nodes, hs_net_bytes_injected(n), want);
		drop_net(n);
		unload(c);
	}
}
END_TEST

/* More NIC or NVLink bandwidth never makes the pipelined programs (NVLS-tree, hierarchical all-reduce, all-gather
 * and reduce-scatter) slower on the flow model: their connections send the oldest chunk's ready transfer
 * first, a priority schedule, where a faster link could in principle reorder the rest for the worse. 2 and 3
 * nodes of 4 GPUs, one NIC per GPU and one per node, a size of one chunk and of 24. */
START_TEST(pipelined_more_bandwidth_never_slower)
{
	const struct {
		int N, nics;
	} cs[] = {{2, 4}, {3, 4}, {3, 1}};
	const int nic[] = {100, 200, 400, 800}, up[] = {100, 200, 450, 900};
	const double sizes[] = {1048576.0, 24 * 1048576.0};
	const struct {
		enum hs_coll_op op;
		enum hs_coll_algo a;
	} prog[] = {{HS_COLL_ALL_REDUCE, HS_ALGO_NVLS_TREE},
		    {HS_COLL_ALL_REDUCE, HS_ALGO_HIERARCHICAL},
		    {HS_COLL_ALL_GATHER, HS_ALGO_HIERARCHICAL},
		    {HS_COLL_REDUCE_SCATTER, HS_ALGO_HIERARCHICAL}};
	int ranks[12];
	for (int i = 0; i < 12; i++)
		ranks[i] = i;
	for (size_t q = 0; q < sizeof cs / sizeof *cs; q++)
		for (int vary = 0; vary < 2; vary++) { /* 0: the NICs, 1: NVLink */
			double prev[2][4];
			for (int b = 0; b < 4; b++) {
				char y[512];
				snprintf(y, sizeof y,
					 "cluster:\n"
					 "  groups:\n"
					 "    - {nodes: %d, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
					 "       scaleup: {kind: nvswitch, bandwidth: %d GB/s, latency: 1 us, in_switch_reduction: true},\n"
					 "       nic: {bandwidth: %d Gb/s, per_node: %d, latency: 3 us}}\n"
					 "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n",
					 cs[q].N, vary ? up[b] : 450, vary ? 200 : nic[b], cs[q].nics);
				hs_err err;
				hs_cluster *c = load(y, &err);
				ck_assert_msg(c != NULL, "%s", err.msg);
				for (int z = 0; z < 2; z++)
					for (size_t g = 0; g < sizeof prog / sizeof *prog; g++) {
						hs_net *n = flow_net(c, cs[q].nics, 0);
						double t = run_coll(n, prog[g].op, prog[g].a, ranks, 4 * cs[q].N, sizes[z]);
						drop_net(n);
						if (b)
							ck_assert_msg(t <= prev[z][g] * (1 + 1e-9),
								      "%s %s, %d x 4, %d NICs, %g bytes: %g s at step %d of the %s, %g s before",
								      hs_coll_op_name(prog[g].op), hs_coll_algo_name(prog[g].a), cs[q].N,
								      cs[q].nics, sizes[z], t, b, vary ? "NVLink" : "NICs", prev[z][g]);
						prev[z][g] = t;
					}
				unload(c);
			}
		}
}
END_TEST

/* More NIC bandwidth never makes the tree slower: one and several NICs per node, one and several channels,
 * an odd and an even node count, small and large sizes. */
START_TEST(tree_more_nic_never_slower)
{
	struct {
		int N, p, nics, C;
	} cs[] = {{4, 2, 1, 1}, {3, 4, 4, 1}, {3, 4, 4, 4}, {5, 2, 2, 2}};
	const int nics[] = {100, 200, 400, 800};
	const double sizes[] = {4e6, 64e6};
	for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++)
		for (int z = 0; z < 2; z++) {
			double prev = 0;
			for (int b = 0; b < 4; b++) {
				char y[512];
				snprintf(y, sizeof y,
					 "cluster:\n"
					 "  groups:\n"
					 "    - {nodes: %d, gpus_per_node: %d, gpu: H100-SXM-80GB,\n"
					 "       scaleup: {kind: nvswitch, bandwidth: 100 GB/s},\n"
					 "       nic: {bandwidth: %d Gb/s, per_node: %d}}\n"
					 "  fabric: {kind: fat-tree, tiers: 2, radix: 4, oversubscription: 2}\n",
					 cs[q].N, cs[q].p, nics[b], cs[q].nics);
				hs_err err;
				hs_cluster *c = load(y, &err);
				ck_assert_msg(c != NULL, "%s", err.msg);
				int ranks[16];
				for (int i = 0; i < cs[q].N * cs[q].p; i++)
					ranks[i] = i;
				hs_net *n = flow_net(c, cs[q].C, 0);
				double t = run_coll(n, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, ranks, cs[q].N * cs[q].p, sizes[z]);
				if (b)
					ck_assert_msg(t <= prev * (1 + 1e-9), "%d x %d, %d NICs, C=%d, %g bytes: %g s at %d Gb/s, %g s at %d Gb/s",
						      cs[q].N, cs[q].p, cs[q].nics, cs[q].C, sizes[z], t, nics[b], prev, nics[b - 1]);
				prev = t;
				drop_net(n);
				unload(c);
			}
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("net");
	TCase *t = tcase_create("net");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, one_flow_one_link);
	tcase_add_test(t, alone_then_shared);
	tcase_add_test(t, sent_before_done);
	tcase_add_test(t, maxmin_textbook);
	tcase_add_test(t, maxmin_two_pairs);
	tcase_add_test(t, ring_allreduce_golden);
	tcase_add_test(t, concurrent_share_nic);
	tcase_add_test(t, bytes_conserved);
	tcase_add_test(t, more_bandwidth_never_slower);
	tcase_add_test(t, slow_link_slows_ring);
	tcase_add_test(t, bad_input);
	tcase_add_test(t, tree_bytes_per_rank);
	tcase_add_test(t, tree_chain_golden);
	tcase_add_test(t, tree_vs_analytical);
	tcase_add_test(t, tree_more_nic_never_slower);
	tcase_add_test(t, auto_runs_tree_on_flow);
	tcase_add_test(t, nvls_and_pipelined_vs_flow);
	tcase_add_test(t, pipelined_more_bandwidth_never_slower);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
