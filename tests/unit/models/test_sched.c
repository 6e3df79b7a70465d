#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/schedule.h"

/* A unit-time dependency run of every stage's item list, on the model chunks g the schedule places
 * (hs_sched_chunk_of, hs_sched_place): the forward of (mb, g) needs that of (mb, g-1); a backward (B or BI)
 * needs its own forward and the backward of (mb, g+1); a weight gradient needs its input gradient. */
struct run {
	int pp, m, v;
	double makespan, busy; /* busy: one stage's work */
	int deadlock, bad;     /* bad: an item missing, repeated or on a stage that does not hold it */
	int peak[64];          /* in-flight peak per stage (chunk-forwards held) */
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
	int G = hs_sched_model_chunks(kind, pp, v), vv = hs_sched_chunks(kind, v);
	/* finish[k][g][mb]: k 0 forward, 1 backward (B or BI), 2 weight gradient */
	size_t cells = (size_t)3 * G * m;
	double *fin = malloc(cells * sizeof *fin);
	int *seen = calloc((size_t)4 * G * m, sizeof *seen);
	for (size_t i = 0; i < cells; i++)
		fin[i] = -1;
#define FIN(k, g, mb) fin[((size_t)(k) * G + (g)) * m + (mb)]
	for (int s = 0; s < pp; s++) {
		hs_err e = {0};
		ck_assert_int_eq(hs_sched_build(kind, pp, s, m, v, &it[s], &n[s], &e), 0);
		int cur = 0;
		for (size_t i = 0; i < n[s]; i++) {
			hs_sched_item x = it[s][i];
			ck_assert(x.mb >= 0 && x.mb < m && x.chunk >= 0 && x.chunk < vv);
			int g = hs_sched_chunk_of(kind, pp, v, s, x.chunk), ps, pc;
			hs_sched_place(kind, pp, v, m, x.mb, g, &ps, &pc);
			if (ps != s || pc != x.chunk)
				r.bad = 1;
			seen[((size_t)x.kind * G + g) * m + x.mb]++;
			if (x.kind == HS_SI_FWD && ++cur > r.peak[s])
				r.peak[s] = cur;
			if (x.kind == HS_SI_BWD || x.kind == HS_SI_BWD_WEIGHT)
				cur--;
		}
	}
	/* exactly once per (mb, g): F, and B or both BI and BW */
	for (int g = 0; g < G; g++)
		for (int mb = 0; mb < m; mb++) {
			int c[4];
			for (int k = 0; k < 4; k++)
				c[k] = seen[((size_t)k * G + g) * m + mb];
			if (c[HS_SI_FWD] != 1 || c[HS_SI_BWD_INPUT] != c[HS_SI_BWD_WEIGHT] ||
			    c[HS_SI_BWD] + c[HS_SI_BWD_INPUT] != 1)
				r.bad = 1;
		}
	for (int progress = 1; progress;) {
		progress = 0;
		for (int s = 0; s < pp; s++) {
			while (pos[s] < n[s]) {
				hs_sched_item x = it[s][pos[s]];
				int g = hs_sched_chunk_of(kind, pp, v, s, x.chunk);
				double dep = 0;
				int ok = 1;
#define NEED(k, gg)                                                                                                \
	do {                                                                                                       \
		double t_ = FIN(k, gg, x.mb);                                                                      \
		if (t_ < 0)                                                                                        \
			ok = 0;                                                                                    \
		else if (t_ > dep)                                                                                 \
			dep = t_;                                                                                  \
	} while (0)
				if (x.kind == HS_SI_FWD) {
					if (g > 0)
						NEED(0, g - 1);
				} else if (x.kind == HS_SI_BWD_WEIGHT) {
					NEED(1, g);
				} else {
					NEED(0, g);
					if (g < G - 1)
						NEED(1, g + 1);
				}
				if (!ok)
					break;
				double start = dep > freeat[s] ? dep : freeat[s];
				double d = dur(x.kind, f, b, bi, bw);
				freeat[s] = start + d;
				int k = x.kind == HS_SI_FWD ? 0 : x.kind == HS_SI_BWD_WEIGHT ? 2 : 1;
				FIN(k, g, x.mb) = start + d;
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
	ck_assert_str_eq(hs_sched_expected(buf, sizeof buf), "gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe");
	ck_assert_int_eq(hs_sched_parse("zb-v"), HS_SCHED_ZB_V);
	ck_assert_int_eq(hs_sched_parse("dualpipe"), HS_SCHED_DUALPIPE);
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
				char why[160];
				if (hs_sched_infeasible(k, p, m, why, sizeof why))
					continue;
				int split = k == HS_SCHED_ZB_H1 || k == HS_SCHED_ZB_V || k == HS_SCHED_DUALPIPE;
				struct run r = split ? simulate(k, p, m, 1, 1, 2, 1, 1) : simulate(k, p, m, 2, 1, 2, 0, 0);
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


/* ZB-V in unit time per chunk (each a chunk of half a stage's layers). By hand (models/sched_zbv.c): stage
 * pp-1 starts at pp-1 at the earliest and has 6m units at F = B = W, so the step is at least 6m + pp - 1; the
 * order (found at B = 2F, so that it holds at other times) takes 6m + 2pp - 1 for m = 2pp, 4pp: for pp 4,
 * m 8, bubble 7 / 55 = 0.127, 3.5 stage units against ZB-H1's 3 and 1F1B's 9. At F = 1, B = 2, W = 1 its
 * idle is 2pp - 2 chunk units (pp - 1 stage units), half of ZB-H1's (pp - 1)(F + B - W) = 2 (pp - 1), and the
 * idle does not grow with m. Activations: 2 pp chunk-forwards, pp micro-batches of a stage: 1F1B's first
 * stage (Qi et al.: "1x" of 1F1B), on every stage. */
START_TEST(zb_v_unit_time)
{
	for (int p = 4; p <= 8; p *= 2) /* pp >= 3; pp 2 idles 2 */
		for (int m = 2 * p; m <= 4 * p; m += 2 * p) {
			struct run r = simulate(HS_SCHED_ZB_V, p, m, 1, 1, 2, 1, 1);
			ck_assert(!r.deadlock && !r.bad);
			ck_assert(fabs(r.busy - 6.0 * m) < 1e-9);
			ck_assert(r.makespan >= 6.0 * m + p - 1 - 1e-9); /* the bound, by hand */
			ck_assert_msg(fabs(r.makespan - (6.0 * m + 2 * p - 1)) < 1e-9, "p %d m %d: %g (expected %d)", p,
				      m, r.makespan, 6 * m + 2 * p - 1);
			struct run t = simulate(HS_SCHED_ZB_V, p, m, 1, 1, 2, 2, 1);
			ck_assert_msg(fabs(t.makespan - t.busy - (2 * p - 2)) < 1e-9, "p %d m %d at B = 2F: idle %g", p, m,
				      t.makespan - t.busy);
			struct run h = simulate(HS_SCHED_ZB_H1, p, m, 1, 2, 0, 4, 2); /* a stage = 2 chunks */
			ck_assert(h.makespan - h.busy > t.makespan - t.busy);
			for (int s = 0; s < p; s++) {
				ck_assert_int_eq(r.peak[s], 2 * p);
				ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_ZB_V, p, s, m, 1), 2 * p);
			}
		}
	struct run r = simulate(HS_SCHED_ZB_V, 4, 8, 1, 1, 2, 1, 1);
	ck_assert(fabs(bubble(&r) - 7.0 / 55) < 1e-12);
	/* fewer micro-batches than stages still runs, never beating the bound */
	r = simulate(HS_SCHED_ZB_V, 4, 2, 1, 1, 2, 1, 1);
	ck_assert(!r.deadlock && !r.bad && r.makespan >= 6.0 * 2 + 3 - 1e-9);
	ck_assert_int_eq(hs_sched_chunks(HS_SCHED_ZB_V, 1), 2);
	ck_assert_int_eq(hs_sched_model_chunks(HS_SCHED_ZB_V, 4, 1), 8);
	/* the V: stage 0 holds the first and the last chunk, stage pp-1 the two middle ones */
	ck_assert_int_eq(hs_sched_chunk_of(HS_SCHED_ZB_V, 4, 2, 0, 1), 7);
	ck_assert_int_eq(hs_sched_chunk_of(HS_SCHED_ZB_V, 4, 2, 3, 0), 3);
	ck_assert_int_eq(hs_sched_chunk_of(HS_SCHED_ZB_V, 4, 2, 3, 1), 4);
}
END_TEST

/* DualPipe in unit time (F = I = W = 1 per chunk of a whole stage, B = I + W = 2). By hand
 * (models/sched_dualpipe.c): the middle ranks start at pp/2 - 1 and are then never idle, so the step is
 * 3m + pp/2 - 1 and every rank idles pp/2 - 1 units: for pp 8, m 16, 3 / 51 = 0.0588 against ZB-H1's
 * 7 / 55 and 1F1B's 21 / 69. DeepSeek's Table 2: bubble (PP/2 - 1)(F&B + B - 3W), which is pp/2 - 1 for an
 * F&B pair as long as one backward; activations PP + 1 on every rank; parameters twice (two chunks per rank
 * with pp model chunks). */
START_TEST(dualpipe_unit_time)
{
	static const int cases[][2] = {{2, 4}, {4, 8}, {4, 12}, {4, 10}, {6, 12}, {8, 16}, {8, 18}, {8, 32}, {16, 32}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int p = cases[i][0], m = cases[i][1];
		struct run r = simulate(HS_SCHED_DUALPIPE, p, m, 1, 1, 2, 1, 1);
		ck_assert(!r.deadlock && !r.bad);
		ck_assert_msg(fabs(r.makespan - (3.0 * m + p / 2 - 1)) < 1e-9, "p %d m %d: %g (expected %d)", p, m,
			      r.makespan, 3 * m + p / 2 - 1);
		ck_assert(fabs(r.busy - 3.0 * m) < 1e-9);
		for (int s = 0; s < p; s++) {
			ck_assert_int_eq(r.peak[s], p + 1);
			ck_assert_int_eq(hs_sched_in_flight(HS_SCHED_DUALPIPE, p, s, m, 1), p + 1);
		}
	}
	struct run r = simulate(HS_SCHED_DUALPIPE, 8, 16, 1, 1, 2, 1, 1);
	ck_assert(fabs(bubble(&r) - 3.0 / 51) < 1e-12);
	ck_assert_int_eq(hs_sched_model_chunks(HS_SCHED_DUALPIPE, 8, 1), 8);
	/* rank s holds model chunks s and pp-1-s; micro-batch 0 runs down chunk 0, micro-batch m/2 up chunk 1 */
	ck_assert_int_eq(hs_sched_chunk_of(HS_SCHED_DUALPIPE, 8, 2, 2, 1), 5);
	int st, ch;
	hs_sched_place(HS_SCHED_DUALPIPE, 8, 2, 16, 8, 0, &st, &ch);
	ck_assert(st == 7 && ch == 1);
	hs_sched_place(HS_SCHED_DUALPIPE, 8, 2, 16, 7, 0, &st, &ch);
	ck_assert(st == 0 && ch == 0);
	/* what it cannot run: odd pp, odd or too few micro-batches */
	hs_sched_item *it;
	size_t n;
	hs_err e = {0};
	ck_assert_int_eq(hs_sched_build(HS_SCHED_DUALPIPE, 3, 0, 12, 1, &it, &n, &e), -1);
	ck_assert_int_eq(e.code, HS_EINFEASIBLE);
	hs_err_clear(&e);
	ck_assert_int_eq(hs_sched_build(HS_SCHED_DUALPIPE, 4, 0, 6, 1, &it, &n, &e), -1);
	hs_err_clear(&e);
	ck_assert_int_eq(hs_sched_build(HS_SCHED_DUALPIPE, 4, 0, 9, 1, &it, &n, &e), -1);
	char buf[160];
	ck_assert_ptr_nonnull(hs_sched_infeasible(HS_SCHED_DUALPIPE, 4, 6, buf, sizeof buf));
	ck_assert_ptr_null(hs_sched_infeasible(HS_SCHED_DUALPIPE, 4, 8, buf, sizeof buf));
}
END_TEST

/* hs_sched_build_stages gives every stage the list hs_sched_build gives it alone (ZB-H1 from one run of the
 * pipeline instead of one per stage), with the same errors; hs_sched_peak over a stage's list is
 * hs_sched_in_flight's answer. */
START_TEST(build_stages_equal_per_stage)
{
	static const int pps[] = {1, 2, 3, 4, 8}, ms[] = {1, 2, 4, 7, 8, 16, 24};
	for (int k = 0; k < HS_SCHED_COUNT; k++)
		for (size_t a = 0; a < sizeof pps / sizeof *pps; a++)
			for (size_t b = 0; b < sizeof ms / sizeof *ms; b++)
				for (int v = 1; v <= 3; v++) {
					int pp = pps[a], m = ms[b];
					hs_sched_item *all[8], *one;
					size_t nall[8], n;
					hs_err e1 = {0}, e2 = {0};
					int rc = hs_sched_build_stages(k, pp, m, v, all, nall, &e1);
					for (int s = 0; s < pp; s++) {
						int r1 = hs_sched_build(k, pp, s, m, v, &one, &n, &e2);
						ck_assert_int_eq(r1, rc);
						if (rc) {
							ck_assert_str_eq(e1.msg, e2.msg);
							ck_assert_ptr_null(all[s]);
							continue;
						}
						ck_assert_uint_eq(n, nall[s]);
						for (size_t i = 0; i < n; i++) {
							ck_assert_int_eq(one[i].mb, all[s][i].mb);
							ck_assert_int_eq(one[i].chunk, all[s][i].chunk);
							ck_assert_int_eq(one[i].kind, all[s][i].kind);
						}
						double w[3] = {1, 2.5, 4};
						ck_assert_int_eq((int)hs_sched_peak(one, n, NULL),
								 hs_sched_in_flight(k, pp, s, m, v));
						ck_assert(hs_sched_peak(one, n, w) ==
							  hs_sched_in_flight_weighted(k, pp, s, m, v, w));
						free(one);
						free(all[s]);
					}
				}
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
	tcase_add_test(tc, zb_v_unit_time);
	tcase_add_test(tc, dualpipe_unit_time);
	tcase_add_test(tc, build_stages_equal_per_stage);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
