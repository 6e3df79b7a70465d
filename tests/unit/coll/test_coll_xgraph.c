/* Explicit graphs at analytical fidelity and per-link bytes from the closed forms (sim/coll/coll_route.c,
 * issue 16 item 6 and issue 19): hand-derived times on a star with one slow link, the closed forms against the
 * flow model on an idle network, more bandwidth never slower, the algorithms refused where the closed forms do
 * not route them, bytes conserved over a collective's links, and the closed forms' per-link bytes against the
 * flow model's on the same collective. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll.h"
#include "sim/engine/engine.h"
#include "sim/net/net.h"
#include "topology/cluster.h"
#include "topology/topo.h"

static hs_ydoc *docs[8]; /* the documents of the clusters made since the last done() */
static int ndocs;

static hs_cluster *mk(const char *text)
{
	hs_err err = {0};
	ck_assert(ndocs < 8);
	hs_ydoc *doc = docs[ndocs++] = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

/* Free c (if not NULL) and every document made so far. */
static void done(hs_cluster *c)
{
	hs_cluster_free(c);
	while (ndocs > 0)
		hs_yaml_free(docs[--ndocs]);
}

/* A star: n single-GPU nodes on switch s, every link `bw` but gpu<slow>'s, which is `slow_bw`. */
static hs_cluster *star(int n, const char *bw, int slow, const char *slow_bw)
{
	static char y[4096];
	int k = snprintf(y, sizeof y,
			 "cluster:\n  groups: [{nodes: %d, gpus_per_node: 1, gpu: H100-SXM-80GB}]\n"
			 "  fabric:\n    kind: explicit\n    switches: [s]\n    links:\n",
			 n);
	for (int i = 0; i < n; i++)
		k += snprintf(y + k, sizeof y - (size_t)k, "      - {from: gpu%d, to: s, bandwidth: %s, latency: 1 us}\n",
			      i, i == slow ? slow_bw : bw);
	return mk(y);
}

/* Two switches a and b joined by a trunk of `trunk`, gpu0-3 on a and gpu4-7 on b at 25 GB/s. */
static hs_cluster *two_switches(const char *trunk)
{
	static char y[4096];
	int k = snprintf(y, sizeof y,
			 "cluster:\n  groups: [{nodes: 8, gpus_per_node: 1, gpu: H100-SXM-80GB}]\n"
			 "  fabric:\n    kind: explicit\n    switches: [a, b]\n    links:\n");
	for (int i = 0; i < 8; i++)
		k += snprintf(y + k, sizeof y - (size_t)k,
			      "      - {from: gpu%d, to: %s, bandwidth: 25 GB/s, latency: 1 us}\n", i, i < 4 ? "a" : "b");
	snprintf(y + k, sizeof y - (size_t)k, "      - {from: a, to: b, bandwidth: %s, latency: 2 us}\n", trunk);
	return mk(y);
}

static hs_engine *cur;
static double fin;
static void rec(void *ctx, uint64_t arg)
{
	(void)ctx;
	(void)arg;
	fin = hs_time_to_s(hs_engine_now(cur));
}

/* The flow model's time for the collective, and (if load) the bytes it put on each link. */
static int flow_channels; /* > 1: the flow model's channels (hs_net_set_channels), channel c on rail c */
static double flow(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo a, const int *r, int n, double S,
		   double *load)
{
	hs_err err = {0};
	cur = hs_engine_create();
	hs_net *net = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(net != NULL, "%s", err.msg);
	if (flow_channels > 1)
		hs_net_set_channels(net, flow_channels);
	fin = -1;
	ck_assert_msg(hs_net_collective(net, op, a, r, n, S, rec, NULL, 0, &err) == 0, "%s", err.msg);
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert(fin >= 0);
	if (load) {
		ck_assert_int_eq(hs_net_nlinks(net), hs_topo_nlinks(hs_coll_link_topo(c)));
		for (int l = 0; l < hs_net_nlinks(net); l++) {
			hs_net_link_stat st;
			hs_net_link_stats(net, l, &st, NULL, 0);
			load[l] = st.bytes;
		}
	}
	hs_net_free(net);
	hs_engine_destroy(cur);
	return fin;
}

static const int R[8] = {0, 1, 2, 3, 4, 5, 6, 7};

/* By hand, 4 GPUs on a star, gpu3's link 1 GB/s, the others 25 GB/s, every route 2 links of 1 us (2 us):
 *   ring all-reduce: gpu3's link carries one ring edge each way (2 -> 3 down, 3 -> 0 up), every other link
 *     one: T_ring = 1 / 1 GB/s, so 6 (2 us + (S/4) / 1 GB/s);
 *   direct all-to-all: gpu3's uplink carries its 3 pieces of S/4 and its downlink 3 more: 2 us + 3 (S/4) / 1 GB/s;
 *   tree (4 ranks, each its own node): NCCL's btree over 4 is 1 -> 2, 3 -> 2, 2 -> 0, its mirror 0 -> 1, 2 -> 1,
 *     1 -> 3 (hs_coll_dtree_parent), so gpu3 is on one edge of each, and its link carries 2 x 1/2 of a tree's
 *     bytes each way: T_tree = 1 / 1 GB/s, time 2 ceil(log2 4) x 2 us + S / 1 GB/s;
 *   halving-doubling all-reduce: gpu3 exchanges S/2 with gpu2, S/4 with gpu1, S/4 with gpu1 and S/2 with gpu2,
 *     each step over its link both ways at once and bound by it: 4 x 2 us + (1/2 + 1/4 + 1/4 + 1/2) S / 1 GB/s.
 * Before issue 16 item 6 such a scenario was refused at analytical fidelity. */
START_TEST(star_by_hand)
{
	hs_cluster *c = star(4, "25 GB/s", 3, "1 GB/s");
	double S = 256e6, B = 1e9, a = 2e-6;
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_AUTO, &(hs_err){0}), 0);
	double t = hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, R, 4, S), want = 6 * (a + S / 4 / B);
	ck_assert_msg(fabs(t - want) <= 1e-9 * want, "ring %.9g s, expected %.9g", t, want);
	t = hs_coll_time(c, HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, R, 4, S), want = a + 3 * S / 4 / B;
	ck_assert_msg(fabs(t - want) <= 1e-9 * want, "all-to-all %.9g s, expected %.9g", t, want);
	t = hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, R, 4, S), want = 2 * 2 * a + S / B;
	ck_assert_msg(fabs(t - want) <= 1e-9 * want, "tree %.9g s, expected %.9g", t, want);
	t = hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_HALVING_DOUBLING, R, 4, S), want = 4 * a + 1.5 * S / B;
	ck_assert_msg(fabs(t - want) <= 1e-9 * want, "halving-doubling %.9g s, expected %.9g", t, want);
	/* the slow link slows the ring 25 times against the even star */
	hs_cluster *e = star(4, "25 GB/s", 3, "25 GB/s");
	double te = hs_coll_time(e, HS_COLL_ALL_REDUCE, HS_ALGO_RING, R, 4, S);
	ck_assert_msg(fabs(te - 6 * (a + S / 4 / 25e9)) <= 1e-9 * te, "even ring %.9g s", te);
	hs_cluster_free(e);
	done(c);
}
END_TEST

/* The closed forms against the flow model on an idle network, within 5% (they agree to 0.1% here): the star with
 * and without its slow link, and two switches joined by a slow trunk (10 GB/s under 25 GB/s GPU links), for
 * ring all-reduce, all-gather, reduce-scatter and broadcast, the tree, direct all-to-all and halving-doubling.
 * Halving-doubling on the star with the slow link was 18% over the closed form while a rank that ran ahead
 * pushed its next step into its partner's slow link before the partner's previous step was in; its steps are
 * rendezvous exchanges now (sim/net/netcoll_hd.c), and the flow model gives the closed form's sum of steps. */
START_TEST(closed_equals_flow)
{
	struct {
		hs_cluster *c;
		int n;
	} cs[3] = {{star(4, "25 GB/s", 3, "25 GB/s"), 4}, {star(4, "25 GB/s", 3, "1 GB/s"), 4},
		   {two_switches("10 GB/s"), 8}};
	struct {
		enum hs_coll_op op;
		enum hs_coll_algo a;
	} k[] = {{HS_COLL_ALL_REDUCE, HS_ALGO_RING},	  {HS_COLL_ALL_GATHER, HS_ALGO_RING},
		 {HS_COLL_REDUCE_SCATTER, HS_ALGO_RING}, {HS_COLL_BROADCAST, HS_ALGO_RING},
		 {HS_COLL_ALL_REDUCE, HS_ALGO_TREE},	  {HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT},
		 {HS_COLL_ALL_REDUCE, HS_ALGO_HALVING_DOUBLING}};
	double S = 256e6;
	for (int i = 0; i < 3; i++) {
		for (size_t j = 0; j < sizeof k / sizeof *k; j++) {
			double a = hs_coll_time(cs[i].c, k[j].op, k[j].a, R, cs[i].n, S);
			double f = flow(cs[i].c, k[j].op, k[j].a, R, cs[i].n, S, NULL);
			ck_assert_msg(a > 0 && fabs(a - f) <= 0.05 * f, "graph %d %s/%s: closed form %.6g s, flow %.6g s", i,
				      hs_coll_op_name(k[j].op), hs_coll_algo_name(k[j].a), a, f);
		}
		hs_cluster_free(cs[i].c);
	}
	done(NULL);
}
END_TEST

/* More bandwidth never slower: the trunk from 1 to 100 GB/s and the star's slow link from 1 to 50 GB/s, every
 * routed algorithm and AUTO. */
START_TEST(more_bandwidth_never_slower)
{
	const char *bw[] = {"1 GB/s", "2 GB/s", "5 GB/s", "10 GB/s", "25 GB/s", "50 GB/s", "100 GB/s"};
	enum hs_coll_algo al[] = {HS_ALGO_AUTO, HS_ALGO_RING, HS_ALGO_TREE, HS_ALGO_DIRECT, HS_ALGO_HALVING_DOUBLING};
	enum hs_coll_op ops[] = {HS_COLL_ALL_REDUCE, HS_COLL_ALL_GATHER, HS_COLL_ALL_TO_ALL};
	for (int g = 0; g < 2; g++) {
		double prev[5][3];
		for (int b = 0; b < 7; b++) {
			hs_cluster *c = g ? star(4, "25 GB/s", 3, bw[b]) : two_switches(bw[b]);
			for (int a = 0; a < 5; a++)
				for (int o = 0; o < 3; o++) {
					double t = hs_coll_time(c, ops[o], al[a], R, g ? 4 : 8, 64e6);
					ck_assert(t > 0);
					ck_assert_msg(b == 0 || t <= prev[a][o] * (1 + 1e-12),
						      "%s %s/%s: %.9g s at %s, %.9g s at %s", g ? "star" : "trunk",
						      hs_coll_op_name(ops[o]), hs_coll_algo_name(al[a]), t, bw[b], prev[a][o],
						      bw[b - 1]);
					prev[a][o] = t;
				}
			done(c);
		}
	}
}
END_TEST

/* On the flow model, too, more bandwidth never makes halving-doubling slower, now that its steps wait for the
 * partner (a rendezvous): the star's slow link from 1 to 100 GB/s with 4 ranks and with 6 (two fold in), and
 * the trunk; all-reduce, all-gather and reduce-scatter. */
START_TEST(hd_flow_more_bandwidth_never_slower)
{
	const char *bw[] = {"1 GB/s", "2 GB/s", "5 GB/s", "10 GB/s", "25 GB/s", "50 GB/s", "100 GB/s"};
	enum hs_coll_op ops[] = {HS_COLL_ALL_REDUCE, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
	const int nr[3] = {4, 6, 8};
	for (int g = 0; g < 3; g++) {
		double prev[3];
		for (int b = 0; b < 7; b++) {
			hs_cluster *c = g < 2 ? star(nr[g], "25 GB/s", 3, bw[b]) : two_switches(bw[b]);
			for (int o = 0; o < 3; o++) {
				double t = flow(c, ops[o], HS_ALGO_HALVING_DOUBLING, R, nr[g], 64e6, NULL);
				ck_assert(t > 0);
				ck_assert_msg(b == 0 || t <= prev[o] * (1 + 1e-9), "%s of %d, %s: %.9g s at %s, %.9g s at %s",
					      g < 2 ? "star" : "trunk", nr[g], hs_coll_op_name(ops[o]), t, bw[b], prev[o], bw[b - 1]);
				prev[o] = t;
			}
			done(c);
		}
	}
}
END_TEST

/* What the closed forms do not route on a graph is refused, naming the flow fidelity: NVLS, NVLS-tree and
 * in-switch everywhere (no reducing switch is listed), the tree and hierarchical where a node holds several
 * GPUs (the flow model chains them). AUTO never resolves to one of them, and the closed forms time one asked
 * for directly as the operation's default. */
START_TEST(unrouted_refused)
{
	hs_cluster *c = star(4, "25 GB/s", -1, "");
	hs_err err = {0};
	enum hs_coll_algo bad[] = {HS_ALGO_NVLS, HS_ALGO_NVLS_TREE, HS_ALGO_INSWITCH};
	for (int i = 0; i < 3; i++) {
		hs_err_clear(&err);
		ck_assert_int_eq(hs_coll_closed_form_check(c, bad[i], &err), -1);
		ck_assert_msg(strstr(err.msg, "t.yaml:4:5: cluster.fabric: kind explicit") && strstr(err.msg, "--fidelity flow"),
			      "%s", err.msg);
	}
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_TREE, &err), 0);
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_RING, &err), 0);
	done(c);
	c = mk("cluster:\n  groups: [{nodes: 2, gpus_per_node: 2, gpu: H100-SXM-80GB}]\n"
	       "  fabric:\n    kind: explicit\n    switches: [s]\n    links:\n"
	       "      - {from: gpu0, to: s, bandwidth: 25 GB/s}\n      - {from: gpu1, to: s, bandwidth: 25 GB/s}\n"
	       "      - {from: gpu2, to: s, bandwidth: 25 GB/s}\n      - {from: gpu3, to: s, bandwidth: 25 GB/s}\n");
	hs_err_clear(&err);
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_TREE, &err), -1);
	ck_assert_msg(strstr(err.msg, "algorithm tree") && strstr(err.msg, "fidelity: flow"), "%s", err.msg);
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_HIERARCHICAL, &err), -1);
	ck_assert_int_eq(hs_coll_closed_form_check(c, HS_ALGO_AUTO, &err), 0);
	for (double S = 1e3; S <= 1e10; S *= 10) {
		enum hs_coll_algo a = hs_coll_resolve_algo(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, R, 4, S);
		ck_assert_msg(a == HS_ALGO_RING || a == HS_ALGO_DIRECT || a == HS_ALGO_HALVING_DOUBLING, "AUTO ran %s at %g",
			      hs_coll_algo_name(a), S);
		/* asked for directly (the flow model runs it), the closed forms time the tree as the default ring */
		ck_assert(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, R, 4, S) ==
			  hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, R, 4, S));
	}
	done(c);
}
END_TEST

static double sum(const double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* Bytes conserved: a collective's bytes summed over its links equal each transfer's bytes times its hops.
 *   star, 4 ranks, 2 hops per route: ring all-reduce 4 edges x 2(3)/4 S x 2; all-to-all 12 pieces of S/4 x 2;
 *     tree 2 trees x 3 edges x 2 ways x S/2 x 2; broadcast's chain 3 edges x S x 2;
 *   two switches, 8 ranks: ring all-reduce, edges 3 -> 4 and 7 -> 0 cross the trunk (3 hops), the other 6 have
 *     2: (6 x 2 + 2 x 3) x 2(7)/8 S; all-to-all: 32 of the 56 pieces cross (3 hops), 24 stay (2): (24 x 2 + 32
 *     x 3) S/8. */
START_TEST(bytes_conserved)
{
	double S = 64e6;
	hs_cluster *c = star(4, "25 GB/s", 3, "1 GB/s");
	int nl = hs_topo_nlinks(hs_coll_link_topo(c));
	double *ld = calloc((size_t)nl, sizeof *ld);
	struct {
		enum hs_coll_op op;
		enum hs_coll_algo a;
		double want;
	} k[] = {{HS_COLL_ALL_REDUCE, HS_ALGO_RING, 4 * 1.5 * S * 2},
		 {HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, 12 * S / 4 * 2},
		 {HS_COLL_ALL_REDUCE, HS_ALGO_TREE, 2 * 3 * 2 * S / 2 * 2},
		 {HS_COLL_BROADCAST, HS_ALGO_RING, 3 * S * 2}};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		memset(ld, 0, (size_t)nl * sizeof *ld);
		ck_assert_int_eq(hs_coll_link_bytes(c, k[i].op, k[i].a, R, 4, S, 1, NULL, ld), 0);
		ck_assert_msg(fabs(sum(ld, nl) - k[i].want) <= 1e-9 * k[i].want, "%s/%s: %.6g bytes on links, expected %.6g",
			      hs_coll_op_name(k[i].op), hs_coll_algo_name(k[i].a), sum(ld, nl), k[i].want);
	}
	free(ld);
	done(c);
	c = two_switches("10 GB/s");
	nl = hs_topo_nlinks(hs_coll_link_topo(c));
	ld = calloc((size_t)nl, sizeof *ld);
	ck_assert_int_eq(hs_coll_link_bytes(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, R, 8, S, 1, NULL, ld), 0);
	ck_assert(fabs(sum(ld, nl) - 18 * 1.75 * S) <= 1e-9 * 18 * 1.75 * S);
	memset(ld, 0, (size_t)nl * sizeof *ld);
	ck_assert_int_eq(hs_coll_link_bytes(c, HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, R, 8, S, 1, NULL, ld), 0);
	ck_assert(fabs(sum(ld, nl) - 144 * S / 8) <= 1e-9 * 144 * S / 8);
	/* an algorithm with no per-link transfers adds nothing and says so */
	memset(ld, 0, (size_t)nl * sizeof *ld);
	ck_assert_int_eq(hs_coll_link_bytes(c, HS_COLL_ALL_REDUCE, HS_ALGO_HIERARCHICAL, R, 8, S, 1, NULL, ld), -1);
	ck_assert(sum(ld, nl) == 0);
	free(ld);
	done(c);
}
END_TEST

/* The closed forms' per-link bytes equal the flow model's on the same collective, link by link (to rounding):
 * the explicit graphs above, and built fabrics (2 nodes x 4 GPUs on a fat-tree with a NIC per GPU, and on an
 * NVSwitch node) for ring, direct, halving-doubling and NVLS, where each transfer leaves by its sender's own
 * NIC as the flow model sends a collective it is handed (one channel). */
START_TEST(link_bytes_equal_flow)
{
	hs_cluster *cs[4] = {star(4, "25 GB/s", 3, "1 GB/s"), two_switches("10 GB/s"),
			     mk("cluster:\n  groups: [{nodes: 2, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
				"    scaleup: {kind: nvswitch, bandwidth: 450 GB/s}, nic: {bandwidth: 400 Gb/s, per_node: 4}}]\n"
				"  fabric: {kind: fat-tree, tiers: 2, radix: 4}\n"),
			     NULL};
	cs[3] = mk("cluster:\n  groups: [{nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
		   "    scaleup: {kind: nvswitch, bandwidth: 450 GB/s}}]\n");
	int n[4] = {4, 8, 8, 8};
	struct {
		enum hs_coll_op op;
		enum hs_coll_algo a;
	} k[] = {{HS_COLL_ALL_REDUCE, HS_ALGO_RING},	  {HS_COLL_ALL_GATHER, HS_ALGO_RING},
		 {HS_COLL_BROADCAST, HS_ALGO_RING},	  {HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT},
		 {HS_COLL_REDUCE_SCATTER, HS_ALGO_DIRECT}, {HS_COLL_ALL_REDUCE, HS_ALGO_HALVING_DOUBLING},
		 {HS_COLL_ALL_REDUCE, HS_ALGO_TREE},	  {HS_COLL_ALL_REDUCE, HS_ALGO_NVLS}};
	double S = 32e6;
	for (int i = 0; i < 4; i++) {
		int nl = hs_topo_nlinks(hs_coll_link_topo(cs[i]));
		double *a = calloc((size_t)nl, sizeof *a), *f = calloc((size_t)nl, sizeof *f);
		int compared = 0;
		for (size_t j = 0; j < sizeof k / sizeof *k; j++) {
			if (!hs_coll_supported(cs[i], k[j].op, k[j].a, R, n[i]))
				continue;
			memset(a, 0, (size_t)nl * sizeof *a);
			if (hs_coll_link_bytes(cs[i], k[j].op, k[j].a, R, n[i], S, 1, NULL, a))
				continue; /* the tree over multi-GPU nodes: no per-link transfers (checked above) */
			flow(cs[i], k[j].op, k[j].a, R, n[i], S, f);
			for (int l = 0; l < nl; l++)
				ck_assert_msg(fabs(a[l] - f[l]) <= 1e-9 * S, "cluster %d %s/%s link %d: %.6g bytes, flow %.6g", i,
					      hs_coll_op_name(k[j].op), hs_coll_algo_name(k[j].a), l, a[l], f[l]);
			ck_assert(sum(a, nl) > 0);
			compared++;
		}
		ck_assert_msg(compared >= 4, "cluster %d: %d collectives compared", i, compared);
		free(a);
		free(f);
		hs_cluster_free(cs[i]);
	}
	done(NULL);
}
END_TEST

/* With a channel per NIC over whole nodes, channel c's ring enters each node at NIC c's GPU
 * (hs_coll_ring_channel_order): the closed forms' per-link bytes follow the same per-channel orders as the flow
 * model, link by link (2 nodes x 4 GPUs, 4 NICs, 4 channels; 3 nodes to have a ring whose hops differ). */
START_TEST(link_bytes_equal_flow_channels)
{
	for (int nodes = 2; nodes <= 3; nodes++) {
		char y[512];
		snprintf(y, sizeof y,
			 "cluster:\n  groups: [{nodes: %d, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
			 "    scaleup: {kind: nvswitch, bandwidth: 450 GB/s}, nic: {bandwidth: 400 Gb/s, per_node: 4}}]\n"
			 "  fabric: {kind: fat-tree, tiers: 2, radix: 8}\n",
			 nodes);
		hs_cluster *c = mk(y);
		int n = 4 * nodes, rk[12];
		for (int i = 0; i < n; i++)
			rk[i] = i;
		hs_coll_channels ch = {4, {0, 1, 2, 3}, 0};
		int nl = hs_topo_nlinks(hs_coll_link_topo(c));
		double *a = calloc((size_t)nl, sizeof *a), *f = calloc((size_t)nl, sizeof *f), S = 32e6;
		enum hs_coll_op ops[] = {HS_COLL_ALL_REDUCE, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
		flow_channels = 4;
		for (int j = 0; j < 3; j++) {
			memset(a, 0, (size_t)nl * sizeof *a);
			ck_assert_int_eq(hs_coll_link_bytes(c, ops[j], HS_ALGO_RING, rk, n, S, 1, &ch, a), 0);
			flow(c, ops[j], HS_ALGO_RING, rk, n, S, f);
			for (int l = 0; l < nl; l++)
				ck_assert_msg(fabs(a[l] - f[l]) <= 1e-9 * S, "%d nodes, %s, 4 channels, link %d: %.6g bytes, flow %.6g",
					      nodes, hs_coll_op_name(ops[j]), l, a[l], f[l]);
			ck_assert(sum(a, nl) > 0);
		}
		flow_channels = 0;
		free(a);
		free(f);
		hs_cluster_free(c);
	}
	done(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_xgraph");
	TCase *t = tcase_create("coll_xgraph");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, star_by_hand);
	tcase_add_test(t, closed_equals_flow);
	tcase_add_test(t, more_bandwidth_never_slower);
	tcase_add_test(t, hd_flow_more_bandwidth_never_slower);
	tcase_add_test(t, unrouted_refused);
	tcase_add_test(t, bytes_conserved);
	tcase_add_test(t, link_bytes_equal_flow);
	tcase_add_test(t, link_bytes_equal_flow_channels);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
