/* libFuzzer harness: arbitrary bytes as the resume journals of a sweep (<output>.part-<R>, sim/study/sweep.h),
 * through `hetsim sweep` itself: the journals read back (header, point index, row, a line cut short), the rows
 * ranked, the HDF5 and the CSV written from them and the summary table printed, as when a sweep resumes with
 * every point already done. The sweep is fixed (8 points of scenarios/default.yaml, in a folder of its own); the
 * input is two journals, part-0 and part-1, split at the first form feed, each given this sweep's header
 * unless it starts with '#' (then it is written as it is, so headers are fuzzed too). `--limit 0` keeps the
 * command from simulating the points the journals lack: a fuzzed row costs no simulation. stdout goes to
 * /dev/null. Errors are fine; a crash, a leak or a sanitizer report is a bug. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cmd_sweep.h"
#include "sim/study/sweep.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], sweep[300], csv[300], h5[300], part[2][320], header[256];

static void cleanup(void)
{
	char p[PATH_MAX];
	static const char *const names[] = {"s.yaml", "s.csv", "s.h5", "s.csv.part-0", "s.csv.part-1"};
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* The sweep, and its journal header as hs_sweep_journal_open writes it (not copied here: a change of format
 * must not leave the harness feeding headers that no longer match). */
static int setup(void)
{
	char cwd[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/hetsim-fuzz-sweepjournal-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd))
		return -1;
	atexit(cleanup);
	snprintf(sweep, sizeof sweep, "%s/s.yaml", dir);
	snprintf(csv, sizeof csv, "%s/s.csv", dir);
	snprintf(h5, sizeof h5, "%s/s.h5", dir);
	for (int r = 0; r < 2; r++)
		snprintf(part[r], sizeof part[r], "%s.part-%d", csv, r);
	FILE *f = fopen(sweep, "w");
	if (!f)
		return -1;
	fprintf(f, "base: %s/scenarios/default.yaml\nset: [parallelism.dp=0]\n"
		   "axes:\n  parallelism.tp: [1, 2, 4, 8]\n  training.micro_batch: [1, 2]\noutput: s.csv\n", cwd);
	if (fclose(f))
		return -1;
	hs_err err = {0};
	hs_sweep sw;
	if (hs_sweep_load(sweep, &sw, &err))
		return -1;
	FILE *j = hs_sweep_journal_open(&sw, 0, &err);
	hs_sweep_free(&sw);
	if (!j)
		return -1;
	fclose(j);
	j = fopen(part[0], "r");
	if (!j || !fgets(header, sizeof header, j))
		return -1;
	fclose(j);
	return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

static void write_journal(const char *p, const uint8_t *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	if (!f)
		abort();
	if (!(n > 0 && data[0] == '#'))
		fputs(header, f);
	fwrite(data, 1, n, f);
	if (fclose(f))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready)
		ready = setup() == 0 ? 1 : -1;
	if (ready < 0)
		abort(); /* the harness itself cannot run: say so loudly */
	const uint8_t *ff = memchr(data, '\f', size);
	size_t n0 = ff ? (size_t)(ff - data) : size;
	write_journal(part[0], data, n0);
	if (ff)
		write_journal(part[1], ff + 1, size - n0 - 1);
	else
		unlink(part[1]);
	char a0[] = "sweep", a1[] = "-q", a2[] = "--limit", a3[] = "0", a4[] = "--hdf5", a5[sizeof h5], a6[sizeof sweep];
	memcpy(a5, h5, sizeof h5);
	memcpy(a6, sweep, sizeof sweep);
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
	cmd_sweep(7, argv);
	/* a finished sweep removes its journals and leaves the CSV: start the next input from none */
	unlink(csv);
	unlink(h5);
	return 0;
}
