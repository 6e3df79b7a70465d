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

static const char *o_output, *o_hdf5, *o_jobs, *o_metric, *o_goal, *o_top, *o_wait, *o_limit;
static int o_fresh, o_quiet;

static const hs_opt opts[] = {
	{HS_OPT_STRING, "output", 'o', &o_output, "FILE.csv", "where the CSV goes (default: the sweep's output:, "
							     "else SWEEP.csv here)"},
	{HS_OPT_STRING, "hdf5", 0, &o_hdf5, "FILE.h5", "also write the rows as HDF5 (/sweep)"},
	{HS_OPT_STRING, "jobs", 'j', &o_jobs, "N", "threads (default 1; 0: one per CPU)"},
	{HS_OPT_STRING, "metric", 0, &o_metric, "COLUMN", "rank by this column (default: the sweep's metric:)"},
	{HS_OPT_STRING, "goal", 0, &o_goal, "min|max", "best is the smallest or the largest (default: by metric)"},
	{HS_OPT_STRING, "top", 0, &o_top, "N", "print the N best points (default 10)"},
	{HS_OPT_FLAG, "fresh", 0, &o_fresh, NULL, "ignore finished points from an earlier, interrupted run"},
	{HS_OPT_FLAG, "quiet", 'q', &o_quiet, NULL, "no progress bar"},
	{HS_OPT_STRING, "limit", 0, &o_limit, "N",
	 "run at most N new points now, then stop as if interrupted (run again to continue)"},
	{HS_OPT_STRING, "rank-wait", 0, &o_wait, "SECONDS",
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
	"it stopped when run again (finished rows are kept in FILE.csv.part-R). Exit status: 0 done, 2 bad\n"
	"sweep, 3 no point is feasible, 1 internal error."};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int env_int(const char *a, const char *b, int def)
{
	const char *v = getenv(a);
	if (!v)
		v = getenv(b);
	return v ? atoi(v) : def;
}

struct work {
	const hs_sweep *sw;
	hs_sweep_row *rows;
	size_t *pending, npending;
	atomic_size_t next;
	atomic_size_t done;
	atomic_int stop;
	pthread_mutex_t mu;
	FILE *journal;
	int rank; /* names the journal in messages */
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
		size_t k = atomic_fetch_add(&w->next, 1);
		if (k >= w->npending)
			break;
		size_t i = w->pending[k];
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

static void progress(size_t done, size_t total, double elapsed, int final)
{
	int width = 30, fill = total ? (int)(width * done / total) : width;
	char bar[64];
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
	bar[width] = 0;
	double rate = elapsed > 0 ? done / elapsed : 0;
	double eta = rate > 0 ? (total - done) / rate : 0;
	fprintf(stderr, "\r[%s] %zu/%zu %3.0f%%  %.0f points/s  ETA %d:%02d ", bar, done, total,
		total ? 100.0 * done / total : 100.0, rate, (int)eta / 60, (int)eta % 60);
	if (final)
		fprintf(stderr, "\r%*s\r", width + 60, "");
	fflush(stderr);
}

static void print_top(const hs_sweep *sw, const hs_sweep_row *rows, const int *rank, int top)
{
	size_t ok = 0, inf = 0, bad = 0;
	for (size_t i = 0; i < sw->npoints; i++) {
		if (!rows[i].text)
			continue;
		if (rows[i].ok)
			ok++;
		else if (strstr(rows[i].text, ",infeasible,"))
			inf++;
		else
			bad++;
	}
	printf("sweep         %s (base %s)\n", sw->path, sw->base);
	printf("points        %zu: %zu ok, %zu infeasible\n", sw->npoints, ok, inf + bad);
	printf("ranked by     %s (%s is best)\n", sw->metric, sw->maximise ? "largest" : "smallest");
	printf("written       %s\n\n", sw->output);
	if (!ok)
		return;
	size_t *order = hs_xcalloc(ok + 1, sizeof *order);
	for (size_t i = 0; i < sw->npoints; i++)
		if (rank[i] > 0 && (size_t)rank[i] <= ok)
			order[rank[i] - 1] = i;
	printf("%4s", "rank");
	for (int a = 0; a < sw->naxes; a++) {
		const char *k = strrchr(sw->axes[a].key, '.');
		printf(" %12s", k ? k + 1 : sw->axes[a].key);
	}
	int extra = strcmp(sw->metric, "step_time_s") && strcmp(sw->metric, "mfu") && strcmp(sw->metric, "tokens_per_s");
	printf(" %11s %6s %12s %8s %14s\n", "step_time_s", "MFU", "tokens/s", "mem_GiB", extra ? sw->metric : "");
	int col = -1;
	for (int i = 0; hs_sweep_columns[i]; i++)
		if (strcmp(hs_sweep_columns[i], sw->metric) == 0)
			col = sw->naxes + i;
	for (size_t r = 0; r < ok && (int)r < top; r++) {
		char *f[64];
		int nf = hs_csv_split(rows[order[r]].text, f, 64);
		int b = sw->naxes; /* status column */
		printf("%4zu", r + 1);
		for (int a = 0; a < sw->naxes; a++)
			printf(" %12s", f[a]);
		if (nf > b + 5)
			printf(" %11.4f %5.1f%% %12.0f %8.1f %14s\n", atof(f[b + 1]), 100 * atof(f[b + 2]), atof(f[b + 4]),
			       atof(f[b + 5]), extra && col >= 0 && col < nf ? f[col] : "");
		for (int k = 0; k < nf; k++)
			free(f[k]);
	}
	free(order);
}

int cmd_sweep(int argc, char **argv)
{
	const char *pos[4];
	o_output = o_hdf5 = o_jobs = o_metric = o_goal = o_top = o_wait = o_limit = NULL;
	o_fresh = o_quiet = 0;
	int n = hs_opt_parse(&hs_usage_sweep, argc, argv, pos, 4);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n != 1) {
		fprintf(stderr, "hetsim sweep: expected one sweep file\nusage: %s\n", hs_usage_sweep.synopsis);
		return HS_EINPUT;
	}
	int jobs = o_jobs ? atoi(o_jobs) : 1, top = o_top ? atoi(o_top) : 10;
	double wait_s = o_wait ? atof(o_wait) : 600;
	if (jobs == 0)
		jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1 || jobs > 1024) {
		fprintf(stderr, "hetsim sweep: --jobs '%s' is not a thread count (expected 0..1024)\n", o_jobs);
		return HS_EINPUT;
	}
	hs_err err = {0};
	hs_sweep sw;
	if (hs_sweep_load(pos[0], &sw, &err))
		return hs_cmd_fail("sweep", &err);
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
	int rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0);
	int size = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);
	if (size < 1 || rank < 0 || rank >= size)
		rank = 0, size = 1;

	hs_sweep_row *rows = hs_xcalloc(sw.npoints + 1, sizeof *rows);
	int *rk = NULL;
	int status = 0;
	size_t had = o_fresh ? 0 : hs_sweep_journal_read(&sw, rows);
	struct work w = {.sw = &sw, .rows = rows};
	w.pending = hs_xcalloc(sw.npoints + 1, sizeof *w.pending);
	for (size_t i = 0; i < sw.npoints; i++)
		if (!rows[i].text && (int)(i % (size_t)size) == rank)
			w.pending[w.npending++] = i;
	int stopped_early = 0;
	if (o_limit && (size_t)atoll(o_limit) < w.npending)
		w.npending = (size_t)atoll(o_limit), stopped_early = 1;
	pthread_mutex_init(&w.mu, NULL);
	if (o_fresh) {
		char jp[1200];
		hs_sweep_journal_name(&sw, rank, jp, sizeof jp);
		remove(jp);
	}
	w.rank = rank;
	w.journal = hs_sweep_journal_open(&sw, rank, &err);
	if (!w.journal) {
		status = hs_cmd_fail("sweep", &err);
		goto out;
	}
	if (had && rank == 0 && !o_quiet)
		fprintf(stderr, "hetsim sweep: resuming: %zu of %zu points already done\n", had, sw.npoints);
	int show = rank == 0 && !o_quiet && isatty(2);
	double t0 = now();
	if (jobs > (int)w.npending)
		jobs = w.npending ? (int)w.npending : 1;
	pthread_t *th = hs_xcalloc((size_t)jobs, sizeof *th);
	for (int t = 0; t < jobs; t++)
		pthread_create(&th[t], NULL, worker, &w);
	if (show) {
		while (atomic_load(&w.done) < w.npending && !atomic_load(&w.stop)) {
			progress(atomic_load(&w.done), w.npending, now() - t0, 0);
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
	for (int t = 0; t < jobs; t++)
		pthread_join(th[t], NULL);
	free(th);
	if (show)
		progress(atomic_load(&w.done), w.npending, now() - t0, 1);
	fclose(w.journal);
	w.journal = NULL;
	if (w.err.code) {
		status = hs_cmd_fail("sweep", &w.err);
		goto out;
	}
	if (stopped_early) {
		if (rank == 0)
			printf("stopped after %zu new points (--limit); %zu of %zu done; run again to continue\n", w.npending,
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
	free(w.pending);
	hs_sweep_free(&sw);
	return hs_cmd_finish(status);
}
