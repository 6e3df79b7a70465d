#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll.h"
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
	ck_assert_int_eq(hs_coll_algo_parse("nvls"), HS_ALGO_INSWITCH);
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

/* AUTO is the fastest of what is supported; unsupported algorithms run the default, as NCCL does. */
START_TEST(auto_is_min)
{
	hs_cluster *c = mk(two_h100);
	int *r = iota(16, 0);
	for (int op = 0; op < HS_COLL_OP_COUNT; op++) {
		int n = op == HS_COLL_SENDRECV ? 2 : 16;
		for (double S = 8; S <= 8e9; S *= 8) {
			double a = hs_coll_time(c, op, HS_ALGO_AUTO, r, n, S);
			ck_assert(a > 0);
			for (int al = 1; al < HS_ALGO_COUNT; al++) {
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
	suite_add_tcase(s, t);
	return s;
}

#include "check_main.h"
