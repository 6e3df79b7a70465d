/* libFuzzer harness: arbitrary bytes as a sweep file (docs/outputs.md, `hetsim sweep`), through hs_sweep_load
 * (the sweep's keys, its fixed overrides, every axis as a list or a range, the bound on points, the base
 * scenario it names), then the first and the last point evaluated as `hetsim sweep` does (the overrides and the
 * axis values applied to a copy of the base, the scenario's checks, Megatron-LM's rules, the simulation in closed
 * form where it can; at the analytical fidelity, see below). The sweep file lies in a folder of its own that links scenarios/ and tests/ of the working
 * directory, so a relative `base: scenarios/default.yaml` resolves as in use. Nothing is written: the CSV and
 * the journals are fuzz_sweepjournal's. Errors are fine; a crash, a leak or a sanitizer report is a bug. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/alloc.h"
#include "sim/study/sweep.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], path[300];
static hs_profile_cache *cache;

/* the folder and its links go when the process ends */
static void cleanup(void)
{
	char p[PATH_MAX];
	static const char *const names[] = {"scenarios", "tests", "s.yaml"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
	hs_profile_cache_free(cache);
}

static int setup(void)
{
	char cwd[PATH_MAX], link[PATH_MAX + 16], to[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/hetsim-fuzz-sweep-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd))
		return -1;
	atexit(cleanup);
	static const char *const links[] = {"scenarios", "tests"};
	for (int i = 0; i < 2; i++) {
		snprintf(link, sizeof link, "%s/%s", cwd, links[i]);
		snprintf(to, sizeof to, "%s/%s", dir, links[i]);
		if (symlink(link, to))
			return -1;
	}
	snprintf(path, sizeof path, "%s/s.yaml", dir);
	/* profiles are read once per process, as by one sweep worker */
	cache = hs_profile_cache_create();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready)
		ready = setup() == 0 ? 1 : -1;
	if (ready < 0)
		abort(); /* the harness itself cannot run: say so loudly */
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	hs_err err = {0};
	hs_sweep sw;
	if (hs_sweep_load(path, &sw, &err))
		return 0;
	/* Points run at the analytical fidelity (a fixed override after the sweep's own), so that each costs a
	 * closed form, not a flow simulation of a second or more: the network models are fuzz_scenario's, the
	 * sweep's keys, overrides and axes are this harness's. A sweep with an axis on simulation.* is only
	 * loaded. Beyond HS_SWEEP_MAX_POINTS `hetsim sweep` stops before any point without --max-points. */
	int eval = sw.npoints <= HS_SWEEP_MAX_POINTS;
	for (int a = 0; a < sw.naxes; a++)
		eval &= strncmp(sw.axes[a].key, "simulation", 10) != 0;
	if (eval) {
		hs_strlist_push(&sw.sets, hs_xstrdup("simulation.fidelity=analytical"));
		size_t pts[2] = {0, sw.npoints - 1};
		for (int k = 0; k < (sw.npoints > 1 ? 2 : 1); k++) {
			hs_sweep_row row = {0};
			hs_err e = {0};
			if (hs_sweep_eval(&sw, pts[k], &row, cache, &e) == 0 && !row.text)
				abort(); /* a point that ran must have its row */
			free(row.text);
		}
	}
	hs_sweep_free(&sw);
	return 0;
}
