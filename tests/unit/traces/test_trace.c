/* Chrome trace: the file is valid JSON (read back with the YAML parser, of which JSON is a subset), every slice
 * has a track with a name, slices on one track do not overlap, every flow that starts also finishes, and rank
 * sampling keeps only what was asked. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/yaml.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/trace_chrome.h"

struct slice {
	int pid, tid;
	double ts, dur;
};

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid - y->pid;
	if (x->tid != y->tid)
		return x->tid - y->tid;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static double num(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n ? atof(n->str) : NAN;
}

static const char *str(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n && n->kind == HS_Y_SCALAR ? n->str : "";
}

/* Check one trace file; returns the number of slices and the set of pids seen (bitmask of pid-1 < 64). */
static size_t check_trace(const char *path, uint64_t *pids)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_file(path, &err);
	ck_assert_msg(d != NULL, "trace is not valid JSON: %s", err.msg);
	const hs_ynode *ev = hs_yaml_get(hs_yaml_root(d), "traceEvents");
	ck_assert(ev && ev->kind == HS_Y_SEQ);
	struct slice *s = calloc(ev->n + 1, sizeof *s);
	size_t ns = 0;
	long starts[4096] = {0}, ends[4096] = {0};
	uint64_t named = 0;
	*pids = 0;
	for (size_t i = 0; i < ev->n; i++) {
		const hs_ynode *e = ev->vals[i];
		const char *ph = str(e, "ph");
		int pid = (int)num(e, "pid");
		if (strcmp(ph, "M") == 0 && strcmp(str(e, "name"), "process_name") == 0)
			named |= 1ull << ((pid - 1) & 63);
		if (strcmp(ph, "X") == 0) {
			s[ns] = (struct slice){pid, (int)num(e, "tid"), num(e, "ts"), num(e, "dur")};
			ck_assert_msg(s[ns].dur >= 0 && isfinite(s[ns].ts), "slice %zu has no proper time", i);
			ck_assert(strlen(str(e, "name")) > 0);
			*pids |= 1ull << ((pid - 1) & 63);
			ns++;
		}
		long id = (long)num(e, "id");
		if (strcmp(ph, "s") == 0 && id < 4096)
			starts[id]++;
		if (strcmp(ph, "f") == 0 && id < 4096)
			ends[id]++;
	}
	for (int i = 0; i < 4096; i++)
		ck_assert_msg(starts[i] == ends[i] && starts[i] <= 1, "flow %d: %ld starts, %ld ends", i, starts[i], ends[i]);
	ck_assert_msg((*pids & ~named) == 0, "a slice's track has no process_name");
	/* no overlap on a track (1 ns of rounding allowed) */
	qsort(s, ns, sizeof *s, cmp_slice);
	for (size_t i = 1; i < ns; i++)
		if (s[i].pid == s[i - 1].pid && s[i].tid == s[i - 1].tid)
			ck_assert_msg(s[i].ts >= s[i - 1].ts + s[i - 1].dur - 1e-3, "overlap on track %d/%d at %g us", s[i].pid,
				      s[i].tid, s[i].ts);
	free(s);
	hs_yaml_free(d);
	return ns;
}

static void run_trace(int symmetry, const char *ranks, size_t limit, hs_trace_opts *o, size_t *ntasks, size_t *nslices,
		      uint64_t *pids)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(hs_simulate("scenarios/default.yaml", NULL, symmetry, NULL, &sim, &err) == 0, "%s", err.msg);
	char path[64];
	hs_test_tmpfile(path, sizeof path, "trace", "");
	*o = (hs_trace_opts){.ranks = ranks, .max_events = limit};
	ck_assert_msg(hs_trace_chrome_write(path, sim.s, &sim.b, &sim.r, o, &err) == 0, "%s", err.msg);
	*ntasks = sim.b.graph.ntasks;
	*nslices = check_trace(path, pids);
	ck_assert_int_eq(*nslices, o->slices);
	hs_sim_free(&sim);
	unlink(path);
}

START_TEST(all_ranks)
{
	hs_trace_opts o;
	size_t nt, ns;
	uint64_t pids;
	run_trace(1, NULL, 0, &o, &nt, &ns, &pids);
	ck_assert_int_eq(ns, nt); /* every task is a slice */
	ck_assert(o.flows > 0);   /* pipeline sends */
	ck_assert_str_eq(o.note, "");
}
END_TEST

START_TEST(rendezvous_flows)
{
	hs_trace_opts o;
	size_t nt, ns;
	uint64_t pids;
	run_trace(0, "all", 0, &o, &nt, &ns, &pids); /* every replica: DP collectives rendezvous across ranks */
	ck_assert_int_eq(ns, nt);
	ck_assert_int_eq(o.kept_reps, 8);
	ck_assert(o.flows > 0);
}
END_TEST

START_TEST(sampled)
{
	hs_trace_opts o;
	size_t nt, ns;
	uint64_t pids;
	run_trace(0, "0,3-4", 0, &o, &nt, &ns, &pids);
	ck_assert_int_eq(pids, (1u << 0) | (1u << 3) | (1u << 4));
	run_trace(0, "every:4", 0, &o, &nt, &ns, &pids);
	ck_assert_int_eq(pids, (1u << 0) | (1u << 4));
	/* a limit below the task count samples ranks and says so */
	run_trace(0, NULL, 200, &o, &nt, &ns, &pids);
	ck_assert(ns <= 200 && ns > 0);
	ck_assert(strstr(o.note, "kept every") != NULL);
}
END_TEST

START_TEST(bad_spec)
{
	unsigned char keep[8];
	hs_err err = {0};
	ck_assert_int_eq(hs_trace_select("1,x", 8, keep, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_trace_select("every:0", 8, keep, &err), -1);
	hs_err_clear(&err);
	ck_assert_int_eq(hs_trace_select("6-20", 8, keep, &err), 0);
	ck_assert(keep[6] && keep[7] && !keep[5]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trace");
	TCase *t = tcase_create("chrome");
	tcase_add_test(t, all_ranks);
	tcase_add_test(t, rendezvous_flows);
	tcase_add_test(t, sampled);
	tcase_add_test(t, bad_spec);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
