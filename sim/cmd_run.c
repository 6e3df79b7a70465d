/* hetsim run: simulate one training step of each scenario (or run a fabric experiment) and print a summary. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/scenario.h"
#include "models/build.h"
#include "sim/cmd.h"
#include "sim/exec.h"
#include "sim/fabric_run.h"
#include "sim/simulate.h"
#include "traces/summary.h"

static int json, detail, no_symmetry;
static struct hs_strlist sets;

static const hs_opt opts[] = {
	{HS_OPT_FLAG, "json", 0, &json, NULL, "print one JSON object per scenario instead of text"},
	{HS_OPT_FLAG, "detail", 0, &detail, NULL, "add per-stage and per-rank tables"},
	{HS_OPT_LIST, "set", 's', &sets, "KEY=VALUE", "override a scenario key (repeatable): --set parallelism.tp=4"},
	{HS_OPT_FLAG, "no-symmetry", 0, &no_symmetry, NULL,
	 "simulate every data-parallel replica instead of one per stage"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_run = {
	"run", "hetsim run [options] SCENARIO.yaml...",
	"Simulate one training step of each scenario and print step time, MFU, tokens/s, memory and a breakdown.",
	opts,
	"A scenario with `kind: fabric` runs a scale-up fabric experiment instead (docs/fabric.md).\n"
	"Keys are documented in docs/scenario.md. Exit status: 0 done, 1 internal error, 2 bad input,\n"
	"3 infeasible (does not fit in memory)."};

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run_training(const char *path, hs_err *err)
{
	double t0 = wall();
	hs_sim sim;
	if (hs_simulate(path, &sets, no_symmetry ? 0 : -1, &sim, err))
		return -1;
	const hs_summary_format *f = hs_summary_format_find(json ? "json" : "text");
	f->write(stdout, &sim, detail, wall() - t0);
	hs_sim_free(&sim);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *pos[256];
	json = detail = no_symmetry = 0;
	int n = hs_opt_parse(&hs_usage_run, argc, argv, pos, 256);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n == 0) {
		fprintf(stderr, "hetsim run: no scenario given\nusage: %s\n", hs_usage_run.synopsis);
		return HS_EINPUT;
	}
	int status = 0;
	for (int i = 0; i < n; i++) {
		hs_err err = {0};
		hs_ydoc *doc = hs_yaml_load_file(pos[i], &err);
		int rc;
		if (!doc) {
			rc = -1;
		} else if (hs_scenario_is_fabric(doc)) {
			for (int k = 0; k < sets.n && !err.code; k++)
				hs_yaml_set(doc, sets.v[k], &err);
			rc = err.code ? -1 : hs_fabric_run(doc, json, stdout, &err);
			hs_yaml_free(doc);
		} else {
			hs_yaml_free(doc);
			if (i > 0 && !json)
				printf("\n");
			rc = run_training(pos[i], &err);
		}
		if (rc) {
			status = hs_cmd_fail("run", &err);
			break; /* stop at the first failure: nothing half-done is reported as a result */
		}
	}
	hs_strlist_free(&sets);
	return hs_cmd_finish(status);
}
