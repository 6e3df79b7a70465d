/* hetsim sweep SWEEP.yaml: run every point of a sweep (sim/study/sweep.h) on threads and MPI ranks, resumably, and
 * write the rows as CSV (and HDF5), ranked by a metric.
 *
 * Threads: --jobs N workers take points from a shared counter; hs_simulate has no global state, so points run
 * side by side. MPI: detected at run time from the launcher's environment (OpenMPI's OMPI_COMM_WORLD_RANK and
 * _SIZE, or PMI_RANK and PMI_SIZE from MPICH/Slurm), so the one binary serves both and needs no mpicc build.
 * Rank r takes the unfinished points i with i % size == r and appends its rows to its own journal
 * (<output>.part-r); rank 0 then waits until the journals cover every point and writes the CSV. The ranks
 * share nothing but the journal folder, which must be on a file system they all see (on one machine, any
 * folder; across machines, a shared one). Resuming is the same mechanism: rows found in journals are not
 * run again. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/base/alloc.h"
#include "sim/cli/cmd.h"
#include "sim/cli/cmd_sweep.h"
#include "sim/study/sweep.h"
#include "traces/hdf5_out.h"

static const char *o_output, *o_hdf5, *o_metric, *o_goal;
static int o_fresh, o_quiet, o_event;
/* the numeric options and their ranges (sim/cli/opt.h checks them); defaults are set in cmd_sweep */
static hs_optnum o_jobs = {.min = 0, .max = 1024}, o_top = {.min = 0, .max = INT_MAX},
		 o_max = {.min = 1, .max = HS_OPT_COUNT_MAX}, o_limit = {.min = 0, .max = HS_OPT_COUNT_MAX},
		 o_wait = {.min = 0, .max = DBL_MAX};

static const hs_opt opts[] = {
	{HS_OPT_STRING, "output", 'o', &o_output, "FILE.csv", "where the CSV goes (default: the sweep's output:, "
							     "else SWEEP.csv here)"},
	{HS_OPT_STRING, "hdf5", 0, &o_hdf5, "FILE.h5", "also write the rows as HDF5 (/sweep)"},
	{HS_OPT_COUNT, "jobs", 'j', &o_jobs, "N", "threads (default 1; 0: one per CPU)"},
	{HS_OPT_STRING, "metric", 0, &o_metric, "COLUMN", "rank by this column (default: the sweep's metric:)"},
	{HS_OPT_STRING, "goal", 0, &o_goal, "min|max", "best is the smallest or the largest (default: by metric)"},
	{HS_OPT_COUNT, "top", 0, &o_top, "N", "print the N best points (default 10)"},
	{HS_OPT_FLAG, "fresh", 0, &o_fresh, NULL, "ignore finished points from an earlier, interrupted run"},
	{HS_OPT_FLAG, "quiet", 'q', &o_quiet, NULL, "no progress on stderr"},
	{HS_OPT_FLAG, "event", 0, &o_event, NULL,
	 "time every point by the event run (default: in closed form where the step's pattern allows)"},
	{HS_OPT_COUNT, "max-points", 0, &o_max, "N", "run sweeps of up to N points (default 1000000)"},
	{HS_OPT_COUNT, "limit", 0, &o_limit, "N",
	 "run at most N new points now, then stop as if interrupted (run again to continue)"},
	{HS_OPT_NUMBER, "rank-wait", 0, &o_wait, "SECONDS",
	 "under MPI: how long rank 0 waits without news from the other ranks (default 600)"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_sweep = {
	"sweep", "hetsim sweep [options] SWEEP.yaml",
	"Run a scenario over axes of keys (threads, MPI ranks), resumably; write ranked rows as CSV and HDF5.",
	opts,
	"SWEEP.yaml: {base: SCENARIO, set: [KEY=VALUE...], axes: {KEY: [v1, v2...] | {from, to, step|times}},\n"
	"metric: COLUMN, goal: min|max, output: FILE.csv}; docs/outputs.md has the columns. Under\n"
	"`mpirun -np N hetsim sweep ...` the points are split across ranks. An interrupted sweep continues where\n"
	"it stopped when run again (finished rows are kept in FILE.csv.part-R). Progress goes to stderr: a bar\n"
	"on a terminal, else a line every 5 s. Exit status: 0 done, 2 bad sweep (or more points than\n"
	"--max-points), 3 no point is feasible, 1 internal error."};

/* Without a terminal (a log, CI), a progress line this often: often enough to see a sweep move, rarely enough
 * that a day-long sweep's log stays readable. */
#define HS_SWEEP_LOG_EVERY_S 5.0

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The MPI launcher's rank or size: variable a (Open MPI), else b (PMI: MPICH, Slurm), else def. A value that is
 * not a whole number from 0 to INT_MAX is -1 (the caller refuses it): read as rank 0 of 1, every rank of a
 * job would run every point. */
static int env_int(const char *a, const char *b, int def, const char **name, const char **val)
{
	*name = a;
	*val = getenv(a);
	if (!*val)
		*name = b, *val = getenv(b);
	if (!*val)
		return def;
	const char *v = *val;
	long long x = 0;
	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || x > INT_MAX / 10)
			return -1;
		x = x * 10 + (*v - '0');
	}
	return x > INT_MAX ? -1 : (int)x;
}

/* Points are handed out by index from a counter: nothing is listed first, so a sweep of many points costs its
 * rows, not a list of them as well. A worker skips the points of other MPI ranks and those a journal has. */
struct work {
	const hs_sweep *sw;
	hs_sweep_row *rows;
	int rank, size;      /* MPI: this rank takes i % size == rank; rank also names the journal in messages */
	size_t budget;       /* new points to run now (--limit; SIZE_MAX: all) */
	atomic_size_t next;  /* next point index to look at */
	atomic_size_t taken; /* new points started */
	atomic_size_t done;
	atomic_int stop;
	pthread_mutex_t mu;
	FILE *journal;
	hs_err err;
};

/* An output could not be written: say so, and that the journal stays for the rerun. */
static int outputs_failed(hs_err *err)
{
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof err->msg - n, "; the journal is kept: run again to write the outputs");
	return hs_cmd_fail("sweep", err);
}

static void *worker(void *arg)
{
	struct work *w = arg;
	hs_profile_cache *cache = hs_profile_cache_create(); /* this thread's: profiles are read once */
	for (;;) {
		if (atomic_load(&w->stop))
			break;
		size_t i = atomic_fetch_add(&w->next, 1);
		if (i >= w->sw->npoints)
			break;
		if ((int)(i % (size_t)w->size) != w->rank || w->rows[i].text)
			continue; /* another rank's, or done before */
		if (atomic_fetch_add(&w->taken, 1) >= w->budget)
			break;
		hs_sweep_row row = {0};
		hs_err e = {0};
		if (hs_sweep_eval(w->sw, i, &row, cache, &e)) {
			pthread_mutex_lock(&w->mu);
			if (!w->err.code)
				w->err = e;
			pthread_mutex_unlock(&w->mu);
			atomic_store(&w->stop, 1);
			break;
		}
		pthread_mutex_lock(&w->mu);
		w->rows[i] = row;
		if (hs_sweep_journal_append(w->journal, i, &row) && !w->err.code) {
			int en = errno;
			char jp[1200];
			hs_sweep_journal_name(w->sw, w->rank, jp, sizeof jp);
			hs_err_set(&w->err, HS_EINPUT, "%s: writing the sweep journal failed: %s", jp, strerror(en));
			atomic_store(&w->stop, 1);
		}
		pthread_mutex_unlock(&w->mu);
		atomic_fetch_add(&w->done, 1);
	}
	hs_profile_cache_free(cache);
	return NULL;
}

/* On a terminal, a bar redrawn in place; elsewhere (a log, CI), one line every few seconds that a reader of the
 * log can follow: points done, the rate with decimals (a flow sweep runs a point a second or slower) and the
 * time left at that rate. */
static void progress(size_t done, size_t total, double elapsed, int tty, int final)
{
	double rate = elapsed > 0 ? done / elapsed : 0;
	double eta = rate > 0 ? (total - done) / rate : 0;
	/* before the first point ends there is no rate to go by: the ETA is unknown, not 0 */
	char when[48];
	int e = (int)((final ? elapsed : eta) + 0.5);
	if (!final && done == 0)
		snprintf(when, sizeof when, "ETA unknown");
	else
		snprintf(when, sizeof when, "%s %d:%02d:%02d", final ? "took" : "ETA", e / 3600, e / 60 % 60, e % 60);
	if (!tty) {
		fprintf(stderr, "hetsim sweep: %zu/%zu points (%.1f%%), %.2f points/s, %s\n", done, total,
			total ? 100.0 * done / total : 100.0, rate, when);
		return;
	}
	int width = 30, fill = total ? (int)(width * done / total) : width;
	char bar[64];
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
	bar[width] = 0;
	fprintf(stderr, "\r[%s] %zu/%zu %3.0f%%  %.2f points/s  %s ", bar, done, total,
		total ? 100.0 * done / total : 100.0, rate, when);
	if (final)
		fprintf(stderr, "\r%*s\r", width + 70, "");
	fflush(stderr);
}

/* The field of a row that holds column `name` of hs_sweep_columns (the axes come first). */
static int column(const hs_sweep *sw, const char *name)
{
	for (int i = 0; hs_sweep_columns[i]; i++)
		if (strcmp(hs_sweep_columns[i], name) == 0)
			return sw->naxes + i;
	return -1;
}

static void print_top(const hs_sweep *sw, const hs_sweep_row *rows, const int *rank, int top)
{
	size_t ok = 0, inf = 0, invalid = 0, closed = 0;
	for (size_t i = 0; i < sw->npoints; i++) {
		if (!rows[i].text)
			continue;
		if (rows[i].ok)
			ok++, closed += rows[i].closed;
		else if (strstr(rows[i].text, ",invalid,"))
			invalid++;
		else
			inf++;
	}
	printf("sweep         %s (base %s)\n", sw->path, sw->base);
	printf("points        %zu: %zu ok, %zu infeasible, %zu invalid (Megatron-LM's rules)\n", sw->npoints, ok, inf,
	       invalid);
	printf("timed         %zu in closed form, %zu by the event run\n", closed, ok - closed);
	printf("ranked by     %s (%s is best)\n", sw->metric, sw->maximise ? "largest" : "smallest");
	printf("written       %s\n\n", sw->output);
	if (!ok)
		return;
	/* only ranked rows are listed: an ok row whose metric is empty (cost_per_mtok without a price) has no rank,
	 * and listing ok rows by rank would leave places that name no row */
	size_t ranked = 0;
	for (size_t i = 0; i < sw->npoints; i++)
		ranked += rank[i] > 0;
	if (!ranked) {
		printf("no ok point has a value of %s: nothing to rank%s\n", sw->metric,
		       strncmp(sw->metric, "cost", 4) == 0 ? " (set cost.gpu_hour for a price)" : "");
		return;
	}
	size_t *order = hs_xcalloc(ranked, sizeof *order);
	for (size_t i = 0; i < sw->npoints; i++)
		if (rank[i] > 0 && (size_t)rank[i] <= ranked)
			order[rank[i] - 1] = i;
	printf("%4s", "rank");
	for (int a = 0; a < sw->naxes; a++) {
		const char *k = strrchr(sw->axes[a].key, '.');
		printf(" %12s", k ? k + 1 : sw->axes[a].key);
	}
	int extra = strcmp(sw->metric, "step_time_s") && strcmp(sw->metric, "mfu") && strcmp(sw->metric, "tokens_per_s");
	printf(" %11s %6s %12s %8s %14s\n", "step_time_s", "MFU", "tokens/s", "mem_GiB", extra ? sw->metric : "");
	int col = column(sw, sw->metric), c_st = column(sw, "step_time_s"), c_mfu = column(sw, "mfu"),
	    c_tps = column(sw, "tokens_per_s"), c_mem = column(sw, "memory_peak_gib");
	for (size_t r = 0; r < ranked && (int)r < top; r++) {
		char *f[64];
		int nf = hs_csv_split(rows[order[r]].text, f, 64);
		printf("%4zu", r + 1);
		for (int a = 0; a < sw->naxes; a++)
			printf(" %12s", f[a]);
		if (nf > c_mem && nf > col)
			printf(" %11.4f %5.1f%% %12.0f %8.1f %14s\n", atof(f[c_st]), 100 * atof(f[c_mfu]), atof(f[c_tps]),
			       atof(f[c_mem]), extra ? f[col] : "");
		else
			putchar('\n');
		for (int k = 0; k < nf; k++)
			free(f[k]);
	}
	free(order);
}

int cmd_sweep(int argc, char **argv)
{
	const char *pos[4];
	o_output = o_hdf5 = o_metric = o_goal = NULL;
	o_fresh = o_quiet = o_event = 0;
	o_jobs.v = 1, o_top.v = 10, o_max.v = HS_SWEEP_MAX_POINTS, o_limit.v = 0, o_wait.v = 600;
	o_jobs.given = o_top.given = o_max.given = o_limit.given = o_wait.given = 0;
	int n = hs_opt_parse(&hs_usage_sweep, argc, argv, pos, 4);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n != 1) {
		fprintf(stderr, "hetsim sweep: expected one sweep file\nusage: %s\n", hs_usage_sweep.synopsis);
		return HS_EINPUT;
	}
	int jobs = (int)o_jobs.v, top = (int)o_top.v;
	double wait_s = o_wait.v;
	if (jobs == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = ncpu < 1 ? 1 : ncpu > 1024 ? 1024 : (int)ncpu;
	}
	hs_err err = {0};
	hs_sweep sw;
	if (hs_sweep_load(pos[0], &sw, &err))
		return hs_cmd_fail("sweep", &err);
	unsigned long long maxp = (unsigned long long)o_max.v;
	if (sw.npoints > maxp) {
		fprintf(stderr, "hetsim sweep: %s: %zu points (the product of the axes' lengths), more than the limit of "
				"%llu; --max-points %zu runs them (each point keeps a row of about 300 bytes until the "
				"CSV is written)\n", sw.path, sw.npoints, maxp, sw.npoints);
		hs_sweep_free(&sw);
		return HS_EINPUT;
	}
	if (o_event)
		hs_sweep_set_closed_form(&sw, 0);
	if (o_output)
		snprintf(sw.output, sizeof sw.output, "%s", o_output);
	if (o_metric) {
		if (!hs_sweep_metric_valid(o_metric)) {
			fprintf(stderr, "hetsim sweep: --metric '%s' is not a numeric column (expected step_time_s, mfu, "
					"tokens_per_s, cost_per_mtok, ...)\n", o_metric);
			hs_sweep_free(&sw);
			return HS_EINPUT;
		}
		snprintf(sw.metric, sizeof sw.metric, "%s", o_metric);
		sw.maximise = hs_sweep_metric_maximise(o_metric);
	}
	if (o_goal) {
		if (strcmp(o_goal, "min") && strcmp(o_goal, "max")) {
			fprintf(stderr, "hetsim sweep: --goal '%s' (expected min or max)\n", o_goal);
			hs_sweep_free(&sw);
			return HS_EINPUT;
		}
		sw.maximise = strcmp(o_goal, "max") == 0;
	}
	const char *rn, *rv, *sn, *sv;
	int rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0, &rn, &rv);
	int size = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1, &sn, &sv);
	if (size < 1 || rank < 0 || rank >= size) {
		if (size < 1)
			fprintf(stderr, "hetsim sweep: %s='%s' (the MPI launcher's job size): expected a whole number "
					"from 1\n", sn, sv ? sv : "");
		else
			fprintf(stderr, "hetsim sweep: %s='%s' (the MPI launcher's rank): expected a whole number from "
					"0 to %d (%s%s%s)\n", rn, rv ? rv : "", size - 1, sv ? sn : "no job size set: one process",
				sv ? "=" : "", sv ? sv : "");
		hs_sweep_free(&sw);
		return HS_EINPUT;
	}

	hs_sweep_row *rows = hs_xcalloc(sw.npoints + 1, sizeof *rows);
	int *rk = NULL;
	int status = 0;
	size_t had = o_fresh ? 0 : hs_sweep_journal_read(&sw, rows);
	struct work w = {.sw = &sw, .rows = rows, .rank = rank, .size = size, .budget = SIZE_MAX};
	size_t npending = 0; /* this rank's points not done yet */
	for (size_t i = 0; i < sw.npoints; i++)
		npending += !rows[i].text && (int)(i % (size_t)size) == rank;
	int stopped_early = 0;
	if (o_limit.given && (size_t)o_limit.v < npending)
		w.budget = npending = (size_t)o_limit.v, stopped_early = 1;
	pthread_mutex_init(&w.mu, NULL);
	if (o_fresh) {
		char jp[1200];
		hs_sweep_journal_name(&sw, rank, jp, sizeof jp);
		remove(jp);
	}
	w.journal = hs_sweep_journal_open(&sw, rank, &err);
	if (!w.journal) {
		status = hs_cmd_fail("sweep", &err);
		goto out;
	}
	if (had && rank == 0 && !o_quiet)
		fprintf(stderr, "hetsim sweep: resuming: %zu of %zu points already done\n", had, sw.npoints);
	int show = rank == 0 && !o_quiet, tty = isatty(2);
	double t0 = now(), last_line = t0;
	/* no more workers than points to run: none when the journals hold every point or --limit is 0 (a thread
	 * that finds no work costs its stack and, under the sanitizers, much more) */
	if ((size_t)jobs > npending)
		jobs = (int)npending;
	pthread_t *th = hs_xcalloc((size_t)jobs, sizeof *th);
	for (int t = 0; t < jobs; t++)
		if (pthread_create(&th[t], NULL, worker, &w)) {
			/* out of threads (ulimit -u, memory): run with those started, or on this one */
			if (t == 0)
				worker(&w);
			jobs = t;
			break;
		}
	int lines = 0;
	if (show) {
		while (atomic_load(&w.done) < npending && !atomic_load(&w.stop)) {
			double t = now();
			if (tty)
				progress(atomic_load(&w.done), npending, t - t0, 1, 0);
			else if (t - last_line >= HS_SWEEP_LOG_EVERY_S)
				progress(atomic_load(&w.done), npending, t - t0, 0, 0), last_line = t, lines++;
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
	for (int t = 0; t < jobs; t++)
		pthread_join(th[t], NULL);
	free(th);
	if (show && (tty || lines))
		progress(atomic_load(&w.done), npending, now() - t0, tty, 1);
	fclose(w.journal);
	w.journal = NULL;
	if (w.err.code) {
		status = hs_cmd_fail("sweep", &w.err);
		goto out;
	}
	if (stopped_early) {
		if (rank == 0)
			printf("stopped after %zu new points (--limit); %zu of %zu done; run again to continue\n", npending,
			       hs_sweep_journal_read(&sw, rows), sw.npoints);
		goto out;
	}
	if (rank != 0)
		goto out; /* rank 0 merges */
	/* wait for the other ranks' rows */
	size_t got = hs_sweep_journal_read(&sw, rows), last = got;
	double since = now();
	while (got < sw.npoints) {
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
		got = hs_sweep_journal_read(&sw, rows);
		if (got > last)
			last = got, since = now();
		else if (now() - since > wait_s) {
			hs_err_set(&err, HS_EINTERNAL,
				   "%zu of %zu points are missing after %.0f s without news from the other ranks; "
				   "run the sweep again to finish it", sw.npoints - got, sw.npoints, wait_s);
			status = hs_cmd_fail("sweep", &err);
			goto out;
		}
	}
	rk = hs_xcalloc(sw.npoints + 1, sizeof *rk);
	hs_sweep_rank(&sw, rows, rk);
	/* the HDF5 first, the CSV last: the CSV beside no journal means the sweep is done. When either cannot be
	 * written, neither is left and the journal stays, so a rerun writes both without simulating again. */
	if (o_hdf5 && hs_h5_write_sweep(&sw, rows, rk, o_hdf5, &err)) {
		status = outputs_failed(&err);
		goto out;
	}
	if (hs_sweep_write_csv(&sw, rows, rk, sw.output, &err)) {
		if (o_hdf5)
			remove(o_hdf5);
		status = outputs_failed(&err);
		goto out;
	}
	hs_sweep_journal_remove(&sw);
	print_top(&sw, rows, rk, top);
	int anyok = 0;
	for (size_t i = 0; i < sw.npoints; i++)
		anyok |= rows[i].ok;
	if (!anyok)
		status = HS_EINFEASIBLE;
out:
	if (w.journal)
		fclose(w.journal);
	pthread_mutex_destroy(&w.mu);
	for (size_t i = 0; i < sw.npoints; i++)
		free(rows[i].text);
	free(rows);
	free(rk);
	hs_sweep_free(&sw);
	return hs_cmd_finish(status);
}
