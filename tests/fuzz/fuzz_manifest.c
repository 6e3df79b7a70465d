/* libFuzzer harness: arbitrary bytes as a validation manifest (docs/calibration.md), through `hetsim validate`
 * itself: the manifest's keys and checks, the scenarios, nccl-tests logs and training logs its entries name
 * (relative to the manifest, as in use: the harness's folder links scenarios/ and tests/ of the working
 * directory, so seeds name scenarios/validation/... and tests/data/...), the simulations and the comparison.
 * stdout goes to /dev/null. Errors are fine; a crash, a leak or a sanitizer report is a bug. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cmd.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], manifest[300];

/* the folder and its links go when the process ends */
static void cleanup(void)
{
	char p[PATH_MAX];
	static const char *const names[] = {"scenarios", "tests", "m.yaml"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static int setup(void)
{
	char cwd[PATH_MAX], link[PATH_MAX + 16], to[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/hetsim-fuzz-manifest-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
	snprintf(manifest, sizeof manifest, "%s/m.yaml", dir);
	return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready)
		ready = setup() == 0 ? 1 : -1;
	if (ready < 0)
		abort(); /* the harness itself cannot run: say so loudly */
	FILE *f = fopen(manifest, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	char a0[] = "validate", a1[sizeof manifest];
	memcpy(a1, manifest, sizeof manifest);
	char *argv[] = {a0, a1, NULL};
	cmd_validate(2, argv);
	return 0;
}
