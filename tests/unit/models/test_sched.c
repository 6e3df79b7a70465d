#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/schedule.h"

/* A unit-time dependency run of every stage's item list. Forward of (mb, c) on stage s needs it on s-1
 * (stage 0, chunk c > 0: stage pp-1, chunk c-1); backward needs its own forward and the backward on s+1
 * (last stage, chunk c < v-1: stage 0, chunk c+1); weight gradient needs the input gradient. */
struct run {
	int pp, m, v;
	double makespan, busy; /* busy: one stage's work */
	int deadlock, bad;     /* bad: an item missing or repeated */
	int peak[64];          /* in-flight peak per stage */
};

static double dur(enum hs_si_kind k, double f, double b, double bi, double bw)
{
	return k == HS_SI_FWD ? f : k == HS_SI_BWD ? b : k == HS_SI_BWD_INPUT ? bi : bw;
}

static struct run simulate(enum hs_sched_kind kind, int pp, int m, int v, double f, double b, double bi, double bw)
{
	struct run r = {.pp = pp, .m = m, .v = v};
	hs_sched_item *it[64];
	size_t n[64], pos[64] = {0};
	double freeat[64] = {0};
	/* finish[kind][stage][chunk][mb]: kinds F, B (B or BI), W */
	size_t cells = (size_t)3 * pp * v * m;
	double *fin = malloc(cells * sizeof *fin);
	int *seen = calloc((size_t)4 * pp * v * m, sizeof *seen);
	for (size_t i = 0; i < cells; i++)
		fin[i] = -1;
#define FIN(k, s, c, mb) fin[(((size_t)(k) * pp + (s)) * v + (c)) * m + (mb)]
	for (int s = 0; s < pp; s++) {
		hs_err e = {0};
		ck_assert_int_eq(hs_sched_build(kind, pp, s, m, v, &it[s], &n[s], &e), 0);
		int cur = 0;
		for (size_t i = 0; i < n[s]; i++) {
			hs_sched_item x = it[s][i];
			ck_assert(x.mb >= 0 && x.mb < m && x.chunk >= 0 && x.chunk < (kind == HS_SCHED_INTERLEAVED ? v : 1));
			seen[(((size_t)x.kind * pp + s) * v + x.chunk) * m + x.mb]++;
			if (x.kind == HS_SI_FWD && ++cur > r.peak[s])
				r.peak[s] = cur;
			if (x.kind == (kind == HS_SCHED_ZB_H1 ? HS_SI_BWD_WEIGHT : HS_SI_BWD))
				cur--;
		}
	}
	/* exactly once: F and B, or F, BI and BW */
	for (int s = 0; s < pp; s++)
		for (int c = 0; c < (kind == HS_SCHED_INTERLEAVED ? v : 1); c++)
			for (int mb = 0; mb < m; mb++)
				for (int k = 0; k < 4; k++) {
					int want = k == HS_SI_FWD || (kind == HS_SCHED_ZB_H1 ? k >= HS_SI_BWD_INPUT
											 : k == HS_SI_BWD);
					if (seen[(((size_t)k * pp + s) * v + c) * m + mb] != want)
						r.bad = 1;
				}
	int vv = kind == HS_SCHED_INTERLEAVED ? v : 1;
	for (int progress = 1; progress;) {
		progress = 0;
		for (int s = 0; s < pp; s++) {
			while (pos[s] < n[s]) {
				hs_sched_item x = it[s][pos[s]];
				double dep = 0;
				int ok = 1;
#define NEED(k, ss, cc)                                                                                            \
	do {                                                                                                       \
		double t_ = FIN(k, ss, cc, x.mb);                                                                  \
		if (t_ < 0)                                                                                        \
			ok = 0;                                                                                    \
		else if (t_ > dep)                                                                                 \
			dep = t_;                                                                                  \
	} while (0)
				if (x.kind == HS_SI_FWD) {
					if (s > 0)
						NEED(0, s - 1, x.chunk);
					else if (x.chunk > 0)
						NEED(0, pp - 1, x.chunk - 1);
				} else if (x.kind == HS_SI_BWD_WEIGHT) {
					NEED(1, s, x.chunk);
				} else {
					NEED(0, s, x.chunk);
					if (s < pp - 1)
						NEED(1, s + 1, x.chunk);
					else if (x.chunk < vv - 1)
						NEED(1, 0, x.chunk + 1);
				}
				if (!ok)
					break;
				double start = dep > freeat[s] ? dep : freeat[s];
				double d = dur(x.kind, f, b, bi, bw);
				freeat[s] = start + d;
				int k = x.kind == HS_SI_FWD ? 0 : x.kind == HS_SI_BWD_WEIGHT ? 2 : 1;
				FIN(k, s, x.chunk, x.mb) = start + d;
				if (s == 0)
					r.busy += d;
				pos[s]++;
				progress = 1;
			}
		}
	}
	for (int s = 0; s < pp; s++) {
		if (pos[s] < n[s])
			r.deadlock = 1;
		if (freeat[s] > r.makespan)
			r.makespan = freeat[s];
		free(it[s]);
	}
	free(fin);
	free(seen);
	return r;
}

static double bubble(const struct run *r) { return (r->makespan - r->busy) / r->makespan; }

START_TEST(names)
{
	ck_assert_int_eq(hs_sched_parse("gpipe"), HS_SCHED_GPIPE);
	ck_assert_int_eq(hs_sched_parse("1f1b"), HS_SCHED_1F1B);
	ck_assert_int_eq(hs_sched_parse("interleaved"), HS_SCHED_INTERLEAVED);
	ck_assert_int_eq(hs_sched_parse("zb-h1"), HS_SCHED_ZB_H1);
	ck_assert_int_eq(hs_sched_parse("zb"), -1);
	ck_assert_str_eq(hs_sched_name(HS_SCHED_ZB_H1), "zb-h1");
	ck_assert_ptr_null(hs_sched_names[HS_SCHED_COUNT]);
	/* the list sim/study/scenario.c writes into its "not a known schedule" message */
	char buf[128];
	ck_assert_str_eq(hs_sched_expected(buf, sizeof buf), "gpipe, 1f1b, interleaved or zb-h1");
}
END_TEST

START_TEST(one_f_one_b_bubble)
{
	static const int ps[] = {1, 2, 4, 8}, ms[] = {1, 3, 8, 16};
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int p = ps[i], m = ms[j];
			for (int k = HS_SCHED_GPIPE; k <= HS_SCHED_1F1B; k++) {
				struct run r = simulate(k, p, m, 1, 1, 2, 0, 0);
				ck_assert(!r.deadlock && !r.bad);
				double want = (double)(p - 1) / (m + p - 1);
				ck_assert_msg(fabs(bubble(&r) - want) < 1e-12, "%s p %d m %d: %g vs %g", hs_sched_name(k),
					      p, m, bubble(&r), want);
			}
		}
}
END_TEST

START_TEST(one_f_one_b_order_and_memory)
{
	hs_sched_item *it;
	size_t n;
	hs_err e = {0};
	ck_assert_int_eq(hs_sched_build(HS_SCHED_1F1B, 4, 1, 6, 1, &it, &n, &e), 0);
	/* warm-up 2, then F B pairs, then cool-down */
	static const char *want = "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5";
	char got[128] = "";
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%c%d", i ? " " : "",
			 it[i].kind == HS_SI_FWD ? 'F' : 'B', it[i].mb);
	ck_assert_str_eq(got, want);
	free(it);
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_1F1B, 4, s, 8, 1), 4 - s);
		ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_1F1B, 4, s, 2, 1), 4 - s < 2 ? 4 - s : 2);
		ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_GPIPE, 4, s, 8, 1), 8);
	}
}
END_TEST

START_TEST(interleaved_divides_bubble_by_v)
{
	static const int ps[] = {2, 4, 8}, vs[] = {2, 3, 4}, mult[] = {1, 2, 4};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			for (int q = 0; q < 3; q++) {
				int p = ps[i], v = vs[j], m = p * mult[q];
				/* a chunk is 1/v of the stage: F = 1, B = 2 per chunk */
				struct run r = simulate(HS_SCHED_INTERLEAVED, p, m, v, 1, 2, 0, 0);
				ck_assert(!r.deadlock && !r.bad);
				double idle = r.makespan - r.busy;
				/* 1F1B: bubble / ideal = (p - 1) / m; interleaved: (p - 1) / (m v) */
				ck_assert_msg(fabs(idle / r.busy - (double)(p - 1) / (m * v)) < 1e-12,
					      "p %d v %d m %d: %g vs %g", p, v, m, idle / r.busy,
					      (double)(p - 1) / (m * v));
				/* Megatron's peak: the warm-up + 1 chunks at stage 0 */
				int warm = m == p ? m * v : (p - 1) * 2 + (v - 1) * p;
				ck_assert_int_eq(r.peak[0], warm < m * v ? warm + 1 : m * v);
			}
	hs_sched_item *it;
	size_t n;
	hs_err e = {0};
	ck_assert_int_eq(hs_sched_build(HS_SCHED_INTERLEAVED, 4, 0, 6, 2, &it, &n, &e), -1);
	ck_assert_int_eq(e.code, HS_EINFEASIBLE);
	ck_assert_str_eq(e.msg, "interleaved 1F1B needs micro-batches (6) divisible by pp (4)");
}
END_TEST

START_TEST(zb_h1_smaller_bubble)
{
	static const int ps[] = {2, 4, 8}, ms[] = {4, 8, 16, 32};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++) {
			int p = ps[i], m = ms[j];
			if (m < p)
				continue;
			struct run z = simulate(HS_SCHED_ZB_H1, p, m, 1, 1, 0, 1, 1);
			struct run o = simulate(HS_SCHED_1F1B, p, m, 1, 1, 2, 0, 0);
			ck_assert(!z.deadlock && !z.bad);
			ck_assert_msg(bubble(&z) < bubble(&o), "p %d m %d: zb %g 1f1b %g", p, m, bubble(&z), bubble(&o));
			/* Qi et al.: ZB-H1's bubble is (p - 1)(T_F + T_B - T_W) = p - 1 here, against 3(p - 1) */
			ck_assert_msg(z.makespan - z.busy <= (p - 1) + 1e-9, "p %d m %d: idle %g", p, m,
				      z.makespan - z.busy);
			/* Qi et al.: every worker holds p micro-batches, 1F1B's peak (its first stage) */
			for (int s = 0; s < p; s++)
				ck_assert_int_le(z.peak[s], p);
			if (p == 4 && m == 8)
				printf("zb-h1 p 4 m 8: idle %g (1f1b %g), bubble %.4f (1f1b %.4f)\n", z.makespan - z.busy,
				       o.makespan - o.busy, bubble(&z), bubble(&o));
		}
}
END_TEST

START_TEST(few_micro_batches)
{
	for (int p = 1; p <= 8; p *= 2)
		for (int m = 1; m < 2 * p + 2; m++)
			for (int k = 0; k < HS_SCHED_COUNT; k++) {
				if (k == HS_SCHED_INTERLEAVED && m % p)
					continue;
				struct run r = k == HS_SCHED_ZB_H1 ? simulate(k, p, m, 1, 1, 0, 1, 1)
								   : simulate(k, p, m, 2, 1, 2, 0, 0);
				ck_assert_msg(!r.deadlock && !r.bad, "%s p %d m %d", hs_sched_name(k), p, m);
			}
}
END_TEST

START_TEST(bad_arguments)
{
	hs_sched_item *it;
	size_t n;
	hs_err e = {0};
	ck_assert_int_eq(hs_sched_build(HS_SCHED_1F1B, 4, 4, 8, 1, &it, &n, &e), -1);
	ck_assert_int_eq(e.code, HS_EINPUT);
	hs_err_clear(&e);
	ck_assert_int_eq(hs_sched_build(HS_SCHED_1F1B, 4, 0, 0, 1, &it, &n, &e), -1);
	ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_INTERLEAVED, 4, 0, 6, 2), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, names);
	tcase_add_test(tc, one_f_one_b_bubble);
	tcase_add_test(tc, one_f_one_b_order_and_memory);
	tcase_add_test(tc, interleaved_divides_bubble_by_v);
	tcase_add_test(tc, zb_h1_smaller_bubble);
	tcase_add_test(tc, few_micro_batches);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
