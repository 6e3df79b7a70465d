#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_impl.h" /* hs_coll_ring_net_bw */
#include "topology/cluster.h"

static hs_ydoc *doc;

static hs_cluster *mk(const char *text)
{
	hs_err err = {0};
	doc = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

static void done(hs_cluster *c)
{
	hs_cluster_free(c);
	hs_yaml_free(doc);
	doc = NULL;
}

static const char *two_h100 = "cluster:\n"
			      "  groups:\n"
			      "    - {name: h100, nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			      "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			      "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			      "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n";

static int *iota(int n, int from)
{
	int *r = malloc((size_t)n * sizeof *r);
	for (int i = 0; i < n; i++)
		r[i] = from + i;
	return r;
}

START_TEST(names_round_trip)
{
	for (int op = 0; op < HS_COLL_OP_COUNT; op++)
		ck_assert_int_eq(hs_coll_op_parse(hs_coll_op_name(op)), op);
	for (int a = 0; a < HS_ALGO_COUNT; a++)
		ck_assert_int_eq(hs_coll_algo_parse(hs_coll_algo_name(a)), a);
	ck_assert_int_eq(hs_coll_op_parse("allreduce"), HS_COLL_ALL_REDUCE);
	ck_assert_int_eq(hs_coll_op_parse("all-gather"), HS_COLL_ALL_GATHER);
	ck_assert_int_eq(hs_coll_op_parse("alltoall"), HS_COLL_ALL_TO_ALL);
	ck_assert_int_eq(hs_coll_op_parse("bogus"), -1);
	ck_assert_int_eq(hs_coll_algo_parse("nvls"), HS_ALGO_NVLS);
	ck_assert_int_eq(hs_coll_algo_parse("fastest"), HS_ALGO_FASTEST);
	ck_assert_int_eq(hs_coll_algo_parse("nvls-tree"), HS_ALGO_NVLS_TREE);
	ck_assert_int_eq(hs_coll_algo_parse("hd"), HS_ALGO_HALVING_DOUBLING);
	ck_assert_int_eq(hs_coll_algo_parse("nope"), -1);
	ck_assert_str_eq(hs_coll_op_name(HS_COLL_REDUCE_SCATTER), "reduce_scatter");
	ck_assert_str_eq(hs_coll_algo_name(HS_ALGO_TREE), "tree");
}
END_TEST

START_TEST(busbw_factors)
{
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_ALL_REDUCE, 8), 14.0 / 8, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_ALL_GATHER, 8), 7.0 / 8, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_REDUCE_SCATTER, 16), 15.0 / 16, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_ALL_TO_ALL, 2), 0.5, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_BROADCAST, 8), 1, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_REDUCE, 8), 1, 1e-12);
	ck_assert_double_eq_tol(hs_coll_busbw_factor(HS_COLL_SENDRECV, 2), 1, 1e-12);
}
END_TEST

/* Golden: a ring all-reduce on an idle network takes 2(n-1)(alpha + S/(nB)). */
START_TEST(ring_allreduce_closed_form)
{
	hs_cluster *c = mk(two_h100);
	double S = 1 << 30;
	/* inside one node: alpha = scale-up latency, B = scale-up bandwidth */
	int *r = iota(8, 0);
	double want = 2.0 * 7 * (2e-6 + S / (8 * 450e9));
	ck_assert_double_eq_tol(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, 8, S), want, want * 1e-12);
	free(r);
	/* one GPU per node: alpha = NIC + 3 switch hops, B = one GPU's NIC share (50 GB/s) */
	int two[2] = {0, 8};
	want = 2.0 * 1 * (3e-6 + 3e-6 + S / (2 * 50e9));
	ck_assert_double_eq_tol(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, two, 2, S), want, want * 1e-12);
	/* the full 16: the node's 8 NICs carry the one ring crossing (400 GB/s), slower than NVLink's 450 */
	r = iota(16, 0);
	want = 2.0 * 15 * (6e-6 + S / (16 * 400e9));
	ck_assert_double_eq_tol(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, 16, S), want, want * 1e-12);
	free(r);
	done(c);
}
END_TEST

START_TEST(trivial_and_bad_groups)
{
	hs_cluster *c = mk(two_h100);
	int one[1] = {3};
	ck_assert_double_eq(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, one, 1, 1e9), 0);
	int out[2] = {0, 16};
	ck_assert_double_eq(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, out, 2, 1e9), -1);
	hs_err err = {0};
	ck_assert_int_eq(hs_coll_check(c, out, 2, &err), -1);
	ck_assert_msg(strstr(err.msg, "device 16, outside the cluster (expected 0 to 15)"), "%s", err.msg);
	int dup[2] = {4, 4};
	hs_err_clear(&err);
	ck_assert_int_eq(hs_coll_check(c, dup, 2, &err), -1);
	ck_assert_msg(strstr(err.msg, "appears twice"), "%s", err.msg);
	int neg[2] = {-1, 2};
	ck_assert_double_eq(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, neg, 2, 1e9), -1);
	done(c);
}
END_TEST

/* FASTEST is the fastest of what is supported; unsupported algorithms run the default, as NCCL does. (AUTO is
 * NCCL's tuner choice, which may rate an algorithm first that the closed forms rate second.) */
START_TEST(auto_is_min)
{
	hs_cluster *c = mk(two_h100);
	int *r = iota(16, 0);
	for (int op = 0; op < HS_COLL_OP_COUNT; op++) {
		int n = op == HS_COLL_SENDRECV ? 2 : 16;
		for (double S = 8; S <= 8e9; S *= 8) {
			double a = hs_coll_time(c, op, HS_ALGO_FASTEST, r, n, S);
			ck_assert(a > 0);
			ck_assert(hs_coll_time(c, op, HS_ALGO_AUTO, r, n, S) >= a * (1 - 1e-12));
			for (int al = HS_ALGO_RING; al < HS_ALGO_COUNT; al++) {
				double t = hs_coll_time(c, op, al, r, n, S);
				ck_assert_msg(a <= t * (1 + 1e-12), "%s auto %g > %s %g at %g", hs_coll_op_name(op), a,
					      hs_coll_algo_name(al), t, S);
			}
		}
	}
	/* small all-reduce: anything with fewer hops beats the ring's 2(n-1); large: the ring beats the tree */
	ck_assert_int_ne(hs_coll_auto_algo(c, HS_COLL_ALL_REDUCE, r, 16, 8), HS_ALGO_RING);
	ck_assert(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, 8, 1e9) <
		  hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, r, 8, 1e9));
	ck_assert(hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, r, 16, 8) <
		  hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, 16, 8));
	ck_assert_double_eq(hs_coll_time(c, HS_COLL_ALL_GATHER, HS_ALGO_TREE, r, 16, 1e6),
			    hs_coll_time(c, HS_COLL_ALL_GATHER, HS_ALGO_RING, r, 16, 1e6));
	ck_assert_double_eq(hs_coll_time(c, HS_COLL_ALL_TO_ALL, HS_ALGO_RING, r, 16, 1e6),
			    hs_coll_time(c, HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, r, 16, 1e6));
	free(r);
	done(c);
}
END_TEST

/* Property: more bandwidth is never slower, for every op and algorithm. */
START_TEST(more_bandwidth_never_slower)
{
	char a[512], b[512];
	const char *fmt = "cluster:\n"
			  "  groups:\n"
			  "    - {name: g, nodes: 4, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
			  "       scaleup: {kind: nvswitch, bandwidth: %s, latency: 2 us},\n"
			  "       nic: {bandwidth: %s, per_node: 4, latency: 3 us}}\n";
	snprintf(a, sizeof a, fmt, "100 GB/s", "100 Gb/s");
	snprintf(b, sizeof b, fmt, "200 GB/s", "200 Gb/s");
	hs_cluster *ca = mk(a);
	hs_ydoc *da = doc;
	hs_cluster *cb = mk(b);
	int *r = iota(16, 0);
	for (int op = 0; op < HS_COLL_OP_COUNT; op++)
		for (int al = 0; al < HS_ALGO_COUNT; al++)
			for (double S = 1; S <= 1e10; S *= 10) {
				double ta = hs_coll_time(ca, op, al, r, 16, S), tb = hs_coll_time(cb, op, al, r, 16, S);
				ck_assert_msg(tb <= ta, "%s/%s at %g: %g > %g", hs_coll_op_name(op), hs_coll_algo_name(al), S, tb, ta);
				/* and larger messages never finish sooner */
				ck_assert(hs_coll_time(ca, op, al, r, 16, S * 10) >= ta);
			}
	free(r);
	hs_cluster_free(ca);
	hs_yaml_free(da);
	done(cb);
}
END_TEST

/* ---- route-aware ring bandwidth (sim/coll/coll_route.c) ----
 * Latencies are zero in these clusters, so a ring all-reduce of S over n ranks takes exactly its bandwidth
 * term 2(n-1) S/(n B), B the ring's inter-node edge bandwidth. */

static double ring_ar(hs_cluster *c, const int *r, int n, double S)
{
	return hs_coll_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, n, S);
}

static void expect_ring_bw(hs_cluster *c, const int *r, int n, double B)
{
	double S = 1e9, want = 2.0 * (n - 1) * S / (n * B), got = ring_ar(c, r, n, S);
	ck_assert_msg(fabs(got - want) <= want * 1e-9, "ring all-reduce %.12g s, expected %.12g s (B = %g B/s)", got,
		      want, B);
}

/* 2-tier fat-tree, radix 5, oversubscription 4: leaves of D = round(5*4/5) = 4 NIC ports and U = 1 uplink to
 * the one spine, carrying the leaf's NIC bandwidth / 4.
 * (a) 8 single-GPU nodes, one 50 GB/s NIC each: leaves {0-3} {4-7}, uplink 4 x 50 / 4 = 50 GB/s.
 *     Ring 0..7: only 3->4 and 7->0 cross the spine, one channel per uplink: 50/1 = the NIC's 50 GB/s (the
 *     old worst case said 50/4). Ring 0,4,1,5,2,6,3,7: all 8 edges cross, 4 per uplink and 4 per downlink:
 *     50/4 = 12.5 GB/s.
 * (b) 8 nodes of 2 GPUs with two 25 GB/s NICs: leaves hold 2 nodes ({0,1} {2,3} ...), uplink 4 x 25 / 4 =
 *     25 GB/s. The ring of all 16 GPUs leaves each node once over both NICs (2 channels of 25 GB/s); the edges
 *     1->2, 3->4, 5->6, 7->0 cross the spine, each leaf's uplink carries that edge's 2 channels: 25/2 per
 *     channel, so B = 2 x 12.5 = 25 GB/s (half the node's 50 GB/s of NICs). */
START_TEST(ring_congestion_fat_tree_oversubscribed)
{
	hs_cluster *c = mk("cluster:\n  groups:\n"
			   "    - {nodes: 8, gpus_per_node: 1, gpu: H100-SXM-80GB, nic: {bandwidth: 50 GB/s, per_node: 1,"
			   " latency: 0 us}}\n"
			   "  fabric: {kind: fat-tree, tiers: 2, radix: 5, oversubscription: 4, latency: 0 us}\n");
	int *r = iota(8, 0);
	expect_ring_bw(c, r, 8, 50e9);
	int cross[8] = {0, 4, 1, 5, 2, 6, 3, 7};
	expect_ring_bw(c, cross, 8, 12.5e9);
	free(r);
	done(c);
	c = mk("cluster:\n  groups:\n"
	       "    - {nodes: 8, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
	       "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 0 us},\n"
	       "       nic: {bandwidth: 25 GB/s, per_node: 2, latency: 0 us}}\n"
	       "  fabric: {kind: fat-tree, tiers: 2, radix: 5, oversubscription: 4, latency: 0 us}\n");
	r = iota(16, 0);
	expect_ring_bw(c, r, 16, 25e9);
	free(r);
	done(c);
}
END_TEST

/* Loads count bytes, not channels: an edge split over two NICs weighs as much on a link as one over one NIC.
 * The fat-tree of case (b) above (leaves {0,1} {2,3} ..., one 25 GB/s uplink each, two 25 GB/s NICs per node),
 * ring over GPUs 0,1 (node 0), 4 (node 2), 2 (node 1), 6 (node 3): node 0's 2 ranks own both NICs (2 channels
 * of half the edge), the other nodes one NIC (1 channel). Edges 0->2 and 1->3 both leave leaf 0 by its uplink,
 * 2->1 and 3->0 leave leaf 1: each uplink carries two edges' bytes, B = 25/2 = 12.5 GB/s. (Counting channels,
 * leaf 0's uplink would hold 3 and give edge 1->3 a third of it: 8.3 GB/s.) */
START_TEST(ring_congestion_counts_bytes)
{
	hs_cluster *c = mk("cluster:\n  groups:\n"
			   "    - {nodes: 8, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			   "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 0 us},\n"
			   "       nic: {bandwidth: 25 GB/s, per_node: 2, latency: 0 us}}\n"
			   "  fabric: {kind: fat-tree, tiers: 2, radix: 5, oversubscription: 4, latency: 0 us}\n");
	int r[5] = {0, 1, 4, 2, 6};
	double bw = hs_coll_ring_net_bw(c, r, 5, 0);
	ck_assert_msg(fabs(bw - 12.5e9) <= 12.5e9 * 1e-12, "%.12g", bw);
	done(c);
}
END_TEST

/* A ring of 8 single-GPU nodes on a 1-D torus (dims [8, 1]), 50 GB/s router links and NICs.
 * Neighbour order 0..7: each edge is one router link, one channel per link: B = 50 GB/s.
 * Order 0,2,4,6,1,3,5,7: the edges span 2,2,2,3,2,2,2,1 links, all the short way round (forward), 16 link
 * crossings over the 8 forward links, 2 on each: B = 50/2 = 25 GB/s, a congestion factor of 2. */
START_TEST(ring_congestion_torus)
{
	hs_cluster *c = mk("cluster:\n  groups:\n"
			   "    - {nodes: 8, gpus_per_node: 1, gpu: H100-SXM-80GB, nic: {bandwidth: 50 GB/s, per_node: 1,"
			   " latency: 0 us}}\n"
			   "  fabric: {kind: torus2d, dims: [8, 1], link_bandwidth: 50 GB/s, latency: 0 us}\n");
	int *r = iota(8, 0);
	expect_ring_bw(c, r, 8, 50e9);
	int skip[8] = {0, 2, 4, 6, 1, 3, 5, 7};
	expect_ring_bw(c, skip, 8, 25e9);
	/* the answer is cached per rank set: asking again gives the same */
	expect_ring_bw(c, skip, 8, 25e9);
	expect_ring_bw(c, r, 8, 50e9);
	free(r);
	done(c);
}
END_TEST

/* Deterministic shuffles for the properties below. */
static void shuffle(int *r, int n, unsigned *seed)
{
	for (int i = n - 1; i > 0; i--) {
		*seed = *seed * 1103515245u + 12345u;
		int j = (int)((*seed >> 8) % (unsigned)(i + 1));
		int x = r[i];
		r[i] = r[j];
		r[j] = x;
	}
}

/* Property: faster router (dragonfly local/global, torus) or WAN links never make a collective slower, for any
 * ring order, op and algorithm. */
START_TEST(faster_fabric_links_never_slower)
{
	static const char *fmt[] = {
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
		"       nic: {bandwidth: 400 Gb/s, per_node: 2}}\n"
		"  fabric: {kind: dragonfly, routers_per_group: 2, nics_per_router: 4, link_bandwidth: %g GB/s}\n",
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
		"       nic: {bandwidth: 400 Gb/s, per_node: 2}}\n"
		"  fabric: {kind: torus2d, dims: [4, 4], link_bandwidth: %g GB/s}\n",
		"cluster:\n  groups:\n"
		"    - {name: a, nodes: 4, gpus_per_node: 2, gpu: H100-SXM-80GB, nic: {per_node: 2}}\n"
		"    - {name: b, nodes: 4, gpus_per_node: 2, gpu: H100-SXM-80GB, nic: {per_node: 2}}\n"
		"  fabric: {kind: wan, tiers: 2, radix: 8, wan_bandwidth: %g GB/s, wan_latency: 1 ms}\n",
	};
	static const double bws[] = {5, 12.5, 25, 50, 100, 400};
	for (size_t f = 0; f < sizeof fmt / sizeof *fmt; f++) {
		hs_cluster *cs[6];
		hs_ydoc *ds[6];
		for (int k = 0; k < 6; k++) {
			char y[1024];
			snprintf(y, sizeof y, fmt[f], bws[k]);
			cs[k] = mk(y);
			ds[k] = doc;
		}
		int G = hs_cluster_ngpus(cs[0]);
		int *r = iota(G, 0);
		unsigned seed = 7;
		for (int trial = 0; trial < 6; trial++) {
			int n = trial % 2 ? G : G / 2; /* the whole cluster, or one GPU per node's worth */
			for (int op = 0; op < HS_COLL_OP_COUNT; op++)
				for (int al = HS_ALGO_FASTEST; al < HS_ALGO_COUNT; al++) {
					/* AUTO follows NCCL's tuner, whose choice may switch to an algorithm the closed forms
					 * rate slower (its own time, hs_coll_nccl_time, is checked in test_coll_nccl.c) */
					double prev = INFINITY;
					for (int k = 0; k < 6; k++) {
						double t = hs_coll_time(cs[k], op, al, r, op == HS_COLL_SENDRECV ? 2 : n, 1e8);
						ck_assert_msg(t <= prev * (1 + 1e-12), "fabric %zu, %s/%s, %g GB/s: %g > %g", f,
							      hs_coll_op_name(op), hs_coll_algo_name(al), bws[k], t, prev);
						prev = t;
					}
				}
			shuffle(r, G, &seed);
		}
		free(r);
		for (int k = 0; k < 6; k++) {
			hs_cluster_free(cs[k]);
			hs_yaml_free(ds[k]);
		}
		doc = NULL;
	}
}
END_TEST

/* Full-bisection Clos fabrics are not routed (sim/coll/coll_route.c); routing them anyway gives the NIC share, for any
 * ring order and ranks per node, so skipping them changes nothing. */
START_TEST(full_bisection_routes_to_nic_share)
{
	static const char *ys[] = {
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 4, gpu: H100-SXM-80GB, nic: {per_node: 4}}\n"
		"  fabric: {kind: fat-tree, tiers: 2, radix: 8}\n",
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 4, gpu: H100-SXM-80GB, nic: {per_node: 2}}\n"
		"  fabric: {kind: fat-tree, tiers: 3, radix: 4}\n",
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 4, gpu: H100-SXM-80GB, nic: {per_node: 4}}\n"
		"  fabric: {kind: rail-optimized, radix: 8}\n",
		"cluster:\n  groups:\n    - {nodes: 16, gpus_per_node: 4, gpu: H100-SXM-80GB, nic: {per_node: 4}}\n"
		"  fabric: {kind: multi-plane, planes: 2, tiers: 2, radix: 4}\n",
	};
	for (size_t f = 0; f < sizeof ys / sizeof *ys; f++) {
		hs_cluster *c = mk(ys[f]);
		const hs_node_group *g = hs_cluster_group(c, 0);
		double per_gpu = g->nic_bw * g->nics_per_node / g->gpus_per_node;
		int *r = iota(64, 0);
		unsigned seed = 11;
		ck_assert_double_eq(hs_coll_ring_net_bw(c, r, 64, 0), -1); /* not routed */
		for (int trial = 0; trial < 8; trial++) {
			/* all 64 GPUs (4 per node) or one local rank per node, in shuffled orders */
			int n = trial % 2 ? 64 : 16, sub[64];
			for (int i = 0; i < n; i++)
				sub[i] = n == 64 ? r[i] : 4 * i + trial % 4;
			if (n == 16)
				shuffle(sub, n, &seed);
			double want = (n == 64 ? 4 : 1) * per_gpu;
			double got = hs_coll_ring_net_bw(c, sub, n, 1);
			ck_assert_msg(fabs(got - want) <= want * 1e-12, "fabric %zu trial %d: %g, expected %g", f, trial, got,
				      want);
			shuffle(r, 64, &seed);
		}
		free(r);
		done(c);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll");
	TCase *t = tcase_create("coll");
	tcase_add_test(t, names_round_trip);
	tcase_add_test(t, busbw_factors);
	tcase_add_test(t, ring_allreduce_closed_form);
	tcase_add_test(t, trivial_and_bad_groups);
	tcase_add_test(t, auto_is_min);
	tcase_add_test(t, more_bandwidth_never_slower);
	tcase_add_test(t, ring_congestion_fat_tree_oversubscribed);
	tcase_add_test(t, ring_congestion_counts_bytes);
	tcase_add_test(t, ring_congestion_torus);
	tcase_add_test(t, faster_fabric_links_never_slower);
	tcase_add_test(t, full_bisection_routes_to_nic_share);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
