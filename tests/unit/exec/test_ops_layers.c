/* A list of repeated layers timed with its copies extrapolated (sim/exec/layer_time.c, ops_time: from the copy
 * on where two consecutive copies start at the same lag, or the earlier never waited for the host and the later
 * starts lower, each copy is taken as the earlier's sums) against the same list timed op by op (a list that
 * records its collectives, hs_ops_cost.rec, is always timed op by op), on random lists: a prefix, L copies of a
 * random layer and a suffix; kernels long and short against the host's issue costs (device-bound layers, host-
 * bound ones, and layers that wait for the host only at their start), collectives over a group of eight and of
 * one, some overlapping the next kernel. Every sum, and the lag the list ends with, agree to 1e-12 of the
 * list's time; hs_ops_time_same's repeats name equal ops. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll_impl.h"
#include "sim/exec/layer_time.h"
#include "sim/study/scenario.h"
#include "tests/unit/helpers.h"

static const char *base = "cluster:\n"
			  "  groups:\n"
			  "    - {name: a, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			  "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}}\n";

static const char *const names[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};

/* xorshift: the lists are the same on every run */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uni(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* A random op: a kernel of a fixed duration (HS_OP_TIMED; `scale` sets it against the issue cost) or a
 * collective over TP (eight ranks) or DP (one), overlapping the next op now and then. */
static hs_op random_op(double scale)
{
	hs_op o = {0};
	o.name = names[(int)(uni() * 8)];
	if (uni() < 0.2) {
		o.kind = HS_OP_COMM;
		o.coll = HS_COLL_ALL_REDUCE;
		o.group = uni() < 0.8 ? HS_GROUP_TP : HS_GROUP_DP;
		o.bytes = floor(1 + uni() * 64) * 1048576.0;
		o.overlap = uni() < 0.3;
	} else {
		o.kind = HS_OP_TIMED;
		o.dur_s = scale * (0.2 + uni()) * 1e-5;
		o.flops = floor(uni() * 1e9);
	}
	return o;
}

static void close_to(double a, double b, double scale, const char *what, int c)
{
	ck_assert_msg(fabs(a - b) <= 1e-12 * scale, "case %d: %s %.17g against %.17g", c, what, a, b);
}

START_TEST(copies_taken_as_the_earlier)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(base, strlen(base), "layers", &err);
	ck_assert_msg(d, "%s", err.msg);
	hs_cluster *cl = hs_scenario_cluster(hs_yaml_root(d), &err);
	ck_assert_msg(cl, "%s", err.msg);
	hs_yaml_free(d);
	int tp[8] = {0, 1, 2, 3, 4, 5, 6, 7}, one[1] = {0};
	hs_coll_grp g;
	ck_assert_int_eq(hs_coll_grp_init(&g, cl, tp, 8, &err), 0);
	hs_op_env e = {.dev = hs_cluster_device(cl, 0), .cluster = cl, .host_kernel_s = 4e-6, .host_gemm_s = 6e-6};
	e.grp[HS_GROUP_TP] = tp;
	e.grp_n[HS_GROUP_TP] = 8;
	e.cgrp[HS_GROUP_TP] = &g;
	e.grp[HS_GROUP_DP] = one;
	e.grp_n[HS_GROUP_DP] = 1;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		if (!e.grp_n[k])
			e.grp[k] = one, e.grp_n[k] = 1;
	enum { MAXN = 1200 };
	hs_op *ops = malloc(MAXN * sizeof *ops);
	uint32_t *same = malloc(MAXN * sizeof *same);
	for (int c = 0; c < 400; c++) {
		/* how long kernels run against the issue: tiny (host-bound), long (device-bound), or either */
		double lo = c % 3 == 0 ? 0.05 : c % 3 == 1 ? 3 : 0.3, hi = c % 3 == 2 ? 3 : lo;
		size_t np = (size_t)(uni() * 5), nl = 1 + (size_t)(uni() * 30), L = 2 + (size_t)(uni() * 30),
		       ns = (size_t)(uni() * 5), n = 0;
		for (size_t i = 0; i < np; i++)
			ops[n++] = random_op(lo);
		hs_op layer[32];
		for (size_t i = 0; i < nl; i++)
			layer[i] = random_op(lo + (hi - lo) * uni());
		for (size_t k = 0; k < L; k++)
			for (size_t i = 0; i < nl; i++)
				ops[n++] = layer[i];
		for (size_t i = 0; i < ns; i++)
			ops[n++] = random_op(hi);
		double lag0 = c % 2 ? NAN : -1e-5 * uni(), la = lag0, lb = lag0;
		hs_ops_cost a = {0}, b = {0};
		hs_ops_rec rec = {0};
		b.rec = &rec;
		hs_ops_time_from(&e, ops, n, &la, &a);
		hs_ops_time_from(&e, ops, n, &lb, &b);
		double total = b.comp;
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			total += b.comm[k];
		ck_assert(total > 0);
		close_to(a.comp, b.comp, total, "comp", c);
		close_to(a.comp2, b.comp2, total * total, "comp2", c);
		close_to(a.flops, b.flops, b.flops + 1, "flops", c);
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			close_to(a.comm[k], b.comm[k], total, "comm", c);
		for (int k = 0; k < HS_TC_COUNT; k++)
			close_to(a.cls[k], b.cls[k], total, "class", c);
		close_to(la, lb, total, "lag", c);
		free(rec.v);
		hs_ops_cost s = {0};
		hs_ops_time_same(&e, ops, n, &s, same);
		if (isnan(lag0)) /* a fresh list, as hs_ops_time_same's */
			close_to(s.comp, a.comp, total, "comp (same)", c);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(same[i] <= i && memcmp(&ops[same[i]], &ops[i], sizeof *ops) == 0, "case %d op %zu", c, i);
	}
	free(ops);
	free(same);
	hs_cluster_free(cl);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ops_layers");
	TCase *t = tcase_create("core");
	tcase_add_test(t, copies_taken_as_the_earlier);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
