/* Sweep throughput (issues 7 and 22): the Llama 3 70B / 1,024 H100 layout space of
 * scenarios/sweeps/llama3-70b-1024xh100.yaml (TP x PP x schedule x chunks x micro-batch x recompute x ZeRO,
 * 2,160 points), evaluated through hs_sweep_eval (the path `hetsim sweep` takes: an overlay of the parsed base
 * with the axis overrides, scenario check, Megatron's rules, plan, memory check, step, cost, CSV row) on one
 * thread, in passes of the same run: every step by the event run (the baseline), in closed form on the task
 * graph (sim/exec/closed_step.c, HS_SIM_CLOSED), and from the schedule's items without a graph where the step
 * allows (sim/exec/pipe_step.c, HS_SIM_CLOSED_ITEMS, the sweep's default: the headline figure). The event run's
 * rows must be the closed forms' but for the path column, and the two closed forms' the same byte for byte; the
 * bench exits 1 if they are not. A last pass times the closed form with the reuse off (HETSIM_BUILD_MEMO=0:
 * models/build.c builds every stage's schedule and every layer's ops afresh, and sim/exec/exec.c times every op
 * range of every rep itself, keeping nothing across points, as before issue 22's reuse), the baseline of that
 * speed-up measured in the same run; its rows must equal the closed form's byte for byte, which checks the
 * reuse (the other passes all use it).
 *
 * Figures: "simulated configurations per second" counts the points whose step was simulated (status ok), over
 * the time spent in them; the points the checks reject (they do not divide, do not fit, or break a rule) cost
 * microseconds each and are counted in "points per second" over the whole space. The target of issue 22 is
 * 10,000 simulated configurations per second on one core: times are this thread's CPU time, best of 3. Run from the
 * repository root (make bench), or give the sweep file as the argument.
 *
 * Instructions per simulated configuration, the figure a shared machine does not blur:
 *   valgrind --tool=callgrind --collect-atstart=no build/bench/bench_sweep --callgrind [SWEEP.yaml]
 * evaluates every point once uncollected (which are simulated, and the profiles loaded), then each simulated point
 * once more with collection on (callgrind's client requests, where valgrind's header is installed); the total
 * over the count it prints is the figure (HETSIM_BUILD_MEMO=0 in the environment: the baseline's). With
 * --collect-atstart=yes instead, the total is the load and one pass over the whole space, rejected points
 * included (the toggles then turn collection off for the second pass).
 *
 * Figures (2026-12-03, evening): 0.645 M instructions per simulated point (157.4 M over 244) with the item
 * walk's repeating stretches (69% of the items taken as shifted periods), op lists' repeated layers taken as one
 * copy's sums and kernels' times kept across steps, against 0.79 M (193.0 M) before; on the AMD EPYC VM of that
 * session, which runs the same work at about 55% of the Xeon's speed below, 9,200-9,400 simulated configurations
 * per second against 8,490-8,660 for the binary before (dadc060), in alternating runs (docs/outputs.md,
 * "Repeating stretches and repeated layers"). Before (2026-12-03, sweep-speed3): 0.80 M instructions per simulated point (194.7 M over 244) against
 * 1.24 M (303.4 M) before that branch, 1.42 M before sweep-speed2, 1.57 M before sweep-speed and 3.61 M at
 * 81a72a0; the pass over the space 0.35 G against 0.51 G, 0.55 G, 0.59 G and 1.30 G. On this 2-core machine, two
 * runs of each binary back to back: 15,390-15,570 simulated configurations per second on the item walk (11,220-
 * 11,240 before sweep-speed3), 4,900-4,940 on the graph's closed form, 2,660 by the event run (docs/outputs.md,
 * "Speed", says where the rest goes). The target, 10,000, is met here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/study/simulate.h"
#include "sim/study/sweep.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT ((void)0)
#endif

/* This thread's CPU time: "on one core", and the other work of a shared machine does not count. */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

struct pass {
	double all_s, ok_s;   /* the whole space; the simulated points only */
	size_t ok, closed, items;
	uint64_t walked, extrapolated; /* the item walk's items, timed one by one and taken as shifted periods */
};

/* Evaluate every point on this thread; keep the rows when `keep` is given. Each pass starts with an empty
 * profile cache, as a sweep's worker does: the profiles' loading and the op-range costs it keeps across
 * points (sim/exec/range_cache.h) are built up within the pass and counted in its time, never carried over
 * from a pass before. */
static int run(const hs_sweep *sw, struct pass *p, char **keep)
{
	memset(p, 0, sizeof *p);
	hs_profile_cache *cache = hs_profile_cache_create();
	double t0 = now();
	for (size_t i = 0; i < sw->npoints; i++) {
		hs_sweep_row row = {0};
		hs_err err = {0};
		double a = now();
		if (hs_sweep_eval(sw, i, &row, cache, &err)) {
			fprintf(stderr, "bench_sweep: %s\n", err.msg);
			hs_profile_cache_free(cache);
			return -1;
		}
		if (row.ok) {
			p->ok_s += now() - a;
			p->ok++;
			p->closed += row.closed;
			p->items += row.items;
			p->walked += row.items_walked;
			p->extrapolated += row.items_extrapolated;
		}
		if (keep) {
			free(keep[i]);
			keep[i] = row.text;
		} else {
			free(row.text);
		}
	}
	p->all_s = now() - t0;
	hs_profile_cache_free(cache);
	return 0;
}

/* The row without its last column (path). */
static size_t body(const char *row)
{
	const char *c = strrchr(row, ',');
	return c ? (size_t)(c - row) : strlen(row);
}

/* The points whose rows a and b differ byte for byte; the first is printed (what, and the two rows' names). */
static size_t differing(char *const *a, char *const *b, size_t n, const char *what, const char *an, const char *bn)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i], b[i])) {
			if (!d)
				fprintf(stderr, "bench_sweep: point %zu differs %s:\n  %s %s\n  %s %s\n", i, what, an, a[i], bn,
					b[i]);
			d++;
		}
	return d;
}

/* --callgrind: the simulated points once more each, collected (see the top), on a profile cache of their own
 * (empty at the start, as in run()). */
static int callgrind(const hs_sweep *sw)
{
	char *ok = calloc(sw->npoints + 1, 1);
	size_t n = 0;
	hs_profile_cache *cache = hs_profile_cache_create();
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sw->npoints; i++) {
			if (pass == 1 && i == 0) {
				hs_profile_cache_free(cache);
				cache = hs_profile_cache_create();
			}
			if (pass && !ok[i])
				continue;
			hs_sweep_row row = {0};
			hs_err err = {0};
			if (pass)
				CALLGRIND_TOGGLE_COLLECT;
			int rc = hs_sweep_eval(sw, i, &row, cache, &err);
			if (pass)
				CALLGRIND_TOGGLE_COLLECT;
			if (rc) {
				fprintf(stderr, "bench_sweep: %s\n", err.msg);
				free(ok);
				hs_profile_cache_free(cache);
				return 1;
			}
			if (!pass) {
				ok[i] = (char)row.ok;
				n += row.ok;
			}
			free(row.text);
		}
	printf("bench_sweep --callgrind: %zu simulated points collected once each, closed form, reuse %s: "
	       "instructions per simulated configuration = callgrind's total / %zu\n",
	       n, getenv("HETSIM_BUILD_MEMO") && strcmp(getenv("HETSIM_BUILD_MEMO"), "0") == 0 ? "off" : "on", n);
	free(ok);
	hs_profile_cache_free(cache);
	return 0;
}

int main(int argc, char **argv)
{
	int cg = argc > 1 && strcmp(argv[1], "--callgrind") == 0;
	if (cg)
		argc--, argv++;
	const char *path = argc > 1 ? argv[1] : "scenarios/sweeps/llama3-70b-1024xh100.yaml";
	hs_sweep sw;
	hs_err err = {0};
	if (hs_sweep_load(path, &sw, &err)) {
		fprintf(stderr, "bench_sweep: %s (run from the repository root, or give the sweep file)\n", err.msg);
		return 1;
	}
	if (cg) {
		int rc = callgrind(&sw);
		hs_sweep_free(&sw);
		return rc;
	}
	char **ev = calloc(sw.npoints, sizeof *ev), **cf = calloc(sw.npoints, sizeof *cf),
	     **nm = calloc(sw.npoints, sizeof *nm), **gr = calloc(sw.npoints, sizeof *gr);
	char **wa = calloc(sw.npoints, sizeof *wa);
	struct pass e, c, u, q, wk, be = {.ok_s = INFINITY}, bc = {.ok_s = INFINITY}, bu = {.ok_s = INFINITY},
				   bq = {.ok_s = INFINITY}, ba = {.ok_s = INFINITY};
	int rc = 0;
	for (int rep = 0; rep < 3 && !rc; rep++) {
		hs_sweep_set_closed_form(&sw, HS_SIM_EVENT);
		rc |= run(&sw, &e, rep == 0 ? ev : NULL);
		hs_sweep_set_closed_form(&sw, HS_SIM_CLOSED);
		rc |= run(&sw, &q, rep == 0 ? gr : NULL);
		hs_sweep_set_closed_form(&sw, HS_SIM_CLOSED_ITEMS);
		rc |= run(&sw, &c, rep == 0 ? cf : NULL);
		setenv("HETSIM_BUILD_MEMO", "0", 1);
		rc |= run(&sw, &u, rep == 0 ? nm : NULL);
		unsetenv("HETSIM_BUILD_MEMO");
		setenv("HETSIM_PIPE_PERIODIC", "0", 1);
		rc |= run(&sw, &wk, rep == 0 ? wa : NULL);
		unsetenv("HETSIM_PIPE_PERIODIC");
		if (e.ok_s < be.ok_s)
			be = e;
		if (q.ok_s < bq.ok_s)
			bq = q;
		if (c.ok_s < bc.ok_s)
			bc = c;
		if (u.ok_s < bu.ok_s)
			bu = u;
		if (wk.ok_s < ba.ok_s)
			ba = wk;
	}
	if (rc)
		return 1;
	size_t differ = 0;
	for (size_t i = 0; i < sw.npoints; i++) {
		size_t a = body(ev[i]), b = body(cf[i]);
		if (a != b || memcmp(ev[i], cf[i], a)) {
			if (!differ)
				fprintf(stderr, "bench_sweep: point %zu differs:\n  event  %s\n  closed %s\n", i, ev[i], cf[i]);
			differ++;
		}
	}
	size_t graph_differ = differing(cf, gr, sw.npoints, "between the item walk and the graph", "items", "graph");
	size_t memo_differ = differing(cf, nm, sw.npoints, "with HETSIM_BUILD_MEMO=0", "memo on", "memo off");
	size_t walk_differ = differing(cf, wa, sw.npoints, "with HETSIM_PIPE_PERIODIC=0", "periods", "every item");
	double re = be.ok / be.ok_s, rcf = bc.ok / bc.ok_s, rnm = bu.ok / bu.ok_s, rg = bq.ok / bq.ok_s,
	       rwa = ba.ok / ba.ok_s;
	printf("sweep: Llama 3 70B, 1024 x H100 (%s): %zu points, %zu simulated\n", path, sw.npoints, bc.ok);
	printf("  event run    : %8.0f simulated configurations/s (%.0f us each), %6.0f points/s over the space\n", re,
	       1e6 / re, sw.npoints / be.all_s);
	printf("  closed form, reuse off (HETSIM_BUILD_MEMO=0, the baseline): %8.0f simulated configurations/s "
	       "(%.0f us each)\n", rnm, 1e6 / rnm);
	printf("  closed form on the task graph (HS_SIM_CLOSED): %8.0f simulated configurations/s (%.0f us each)\n", rg,
	       1e6 / rg);
	printf("  closed form  : %8.0f simulated configurations/s (%.0f us each), %6.0f points/s over the space\n", rcf,
	       1e6 / rcf, sw.npoints / bc.all_s);
	printf("  closed-form path: %zu of %zu simulated points (%.1f%%), %zu of them from the schedule's items without "
	       "a task graph; speed-up over the event run %.2fx\n",
	       bc.closed, bc.ok, bc.ok ? 100.0 * bc.closed / bc.ok : 0.0, bc.items, rcf / re);
	printf("  reuse: %.2fx the baseline's simulated configurations/s; rows equal to the baseline's: %zu of %zu\n",
	       rcf / rnm, sw.npoints - memo_differ, sw.npoints);
	printf("  rows equal to the event run's (all columns but path): %zu of %zu\n", sw.npoints - differ, sw.npoints);
	printf("  rows equal to the closed form on the graph's: %zu of %zu; item walk %.2fx its speed\n",
	       sw.npoints - graph_differ, sw.npoints, rcf / rg);
	printf("  item walk: %.1f%% of the items taken as shifted periods of a repeating stretch (%llu of %llu); "
	       "rows equal to walking every item's (HETSIM_PIPE_PERIODIC=0, %.0f simulated configurations/s): %zu of "
	       "%zu, %.2fx its speed\n",
	       bc.walked + bc.extrapolated ? 100.0 * bc.extrapolated / (bc.walked + bc.extrapolated) : 0.0,
	       (unsigned long long)bc.extrapolated, (unsigned long long)(bc.walked + bc.extrapolated), rwa,
	       sw.npoints - walk_differ, sw.npoints, rcf / rwa);
	printf("  target (>= 10000 simulated configurations/s on one thread): %s\n", rcf >= 10000 ? "met" : "NOT met");
	for (size_t i = 0; i < sw.npoints; i++)
		free(ev[i]), free(cf[i]), free(nm[i]), free(gr[i]), free(wa[i]);
	free(ev);
	free(wa);
	free(gr);
	free(nm);
	free(cf);
	hs_sweep_free(&sw);
	return differ || memo_differ || graph_differ || walk_differ ? 1 : 0;
}
