/* hetsim validate MANIFEST.yaml: predicted against measured, entry by entry.
 *
 * A manifest lists scenarios (paths relative to the manifest) with a measured step time and, optionally, a
 * tolerance (relative error, default: the manifest's `tolerance`, else none). It prints predicted, measured and
 * error per entry, then the MAPE, and exits 1 when any entry exceeds its tolerance (issue 5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/cmd.h"
#include "sim/simulate.h"
#include "traces/json.h"

static int json;
static const char *max_mape;
static const hs_opt opts[] = {
	{HS_OPT_FLAG, "json", 0, &json, NULL, "print the table as JSON"},
	{HS_OPT_STRING, "max-mape", 0, &max_mape, "FRACTION", "also fail when the MAPE exceeds this (0.15 = 15%)"},
	{.type = HS_OPT_END},
};
const hs_cmd_usage hs_usage_validate = {
	"validate", "hetsim validate [options] MANIFEST.yaml...",
	"Compare predicted with measured step times for each manifest entry; exit 1 when one exceeds its tolerance.",
	opts,
	"Manifest: {source: TEXT, tolerance: FRACTION, entries: [{scenario: PATH, step_time_s: SECONDS,\n"
	"tolerance: FRACTION, set: [KEY=VALUE, ...]}]}. Paths are relative to the manifest."};

static const char *const man_keys[] = {"source", "tolerance", "entries", NULL};
static const char *const ent_keys[] = {"scenario", "step_time_s", "tolerance", "set", "name", NULL};

struct row {
	char name[160];
	double pred, meas, err, tol;
};

static int one(const char *mpath, int *fails, double *sum_ape, int *n_ape, hs_json *j, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_file(mpath, err);
	if (!d)
		return -1;
	int rc = -1;
	const hs_ynode *root = hs_yaml_root(d);
	double deftol;
	const char *source;
	if (hs_cfg_known(root, "", man_keys, "a manifest {source, tolerance, entries}", err) ||
	    hs_cfg_num(root, "", "tolerance", HS_U_COUNT, 0, 1e9, INFINITY, 0, &deftol, err) ||
	    hs_cfg_str(root, "", "source", "", 0, &source, err))
		goto out;
	const hs_ynode *es = hs_yaml_get(root, "entries");
	if (!es || es->kind != HS_Y_SEQ) {
		hs_cfg_err(es ? es : root, err, "entries", "", "missing or not a list (expected a list of entries)");
		goto out;
	}
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", mpath);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		dir[0] = 0;
	if (!json)
		printf("%s%s\n%-44s %12s %12s %9s %9s\n", source[0] ? "source: " : "", source, "entry", "predicted_s",
		       "measured_s", "error", "tolerance");
	for (size_t i = 0; i < es->n; i++) {
		const hs_ynode *e = es->vals[i];
		char path[64];
		snprintf(path, sizeof path, "entries[%zu]", i);
		const char *scn, *name;
		double meas, tol;
		if (hs_cfg_known(e, path, ent_keys, "an entry {scenario, step_time_s, tolerance, set}", err) ||
		    hs_cfg_str(e, path, "scenario", NULL, 1, &scn, err) ||
		    hs_cfg_num(e, path, "step_time_s", HS_U_TIME, 1e-12, 1e12, 0, 1, &meas, err) ||
		    hs_cfg_num(e, path, "tolerance", HS_U_COUNT, 0, 1e9, deftol, 0, &tol, err) ||
		    hs_cfg_str(e, path, "name", scn, 0, &name, err))
			goto out;
		struct hs_strlist sets = {0};
		const hs_ynode *sl = hs_yaml_get(e, "set");
		if (sl) {
			if (sl->kind != HS_Y_SEQ) {
				hs_cfg_err(sl, err, path, "set", "not a list (expected [KEY=VALUE, ...])");
				goto out;
			}
			sets.v = calloc(sl->n + 1, sizeof *sets.v);
			for (size_t k = 0; k < sl->n; k++)
				if (sl->vals[k]->kind == HS_Y_SCALAR)
					sets.v[sets.n++] = sl->vals[k]->str;
		}
		char full[2048];
		snprintf(full, sizeof full, "%s%s", scn[0] == '/' ? "" : dir, scn);
		hs_sim sim;
		int r = hs_simulate(full, &sets, -1, &sim, err);
		free(sets.v);
		if (r)
			goto out;
		double pred = sim.r.step_time_s, rel = (pred - meas) / meas;
		hs_sim_free(&sim);
		int bad = fabs(rel) > tol;
		*fails += bad;
		*sum_ape += fabs(rel);
		(*n_ape)++;
		if (json) {
			hs_json_obj(j);
			hs_json_kstr(j, "entry", name);
			hs_json_knum(j, "predicted_s", pred);
			hs_json_knum(j, "measured_s", meas);
			hs_json_knum(j, "error", rel);
			if (isfinite(tol))
				hs_json_knum(j, "tolerance", tol);
			hs_json_key(j, "pass");
			hs_json_bool(j, !bad);
			hs_json_end_obj(j);
		} else {
			char t[32] = "-";
			if (isfinite(tol))
				snprintf(t, sizeof t, "%.1f%%", 100 * tol);
			printf("%-44s %12.4f %12.4f %+8.1f%% %9s%s\n", name, pred, meas, 100 * rel, t,
			       bad ? "  FAIL" : "");
		}
	}
	rc = 0;
out:
	hs_yaml_free(d);
	return rc;
}

int cmd_validate(int argc, char **argv)
{
	const char *pos[64];
	json = 0;
	max_mape = NULL;
	int n = hs_opt_parse(&hs_usage_validate, argc, argv, pos, 64);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n == 0) {
		fprintf(stderr, "hetsim validate: no manifest given\nusage: %s\n", hs_usage_validate.synopsis);
		return HS_EINPUT;
	}
	double mm = INFINITY;
	if (max_mape) {
		char *end;
		mm = strtod(max_mape, &end);
		if (*end || !(mm >= 0)) {
			fprintf(stderr, "hetsim validate: --max-mape '%s' is not a fraction (expected e.g. 0.15)\n",
				max_mape);
			return HS_EINPUT;
		}
	}
	int fails = 0, nape = 0;
	double sum = 0;
	hs_json j;
	hs_json_init(&j, stdout);
	if (json) {
		hs_json_obj(&j);
		hs_json_key(&j, "entries");
		hs_json_arr(&j);
	}
	for (int i = 0; i < n; i++) {
		hs_err err = {0};
		if (one(pos[i], &fails, &sum, &nape, &j, &err))
			return hs_cmd_finish(hs_cmd_fail("validate", &err));
	}
	double mape = nape ? sum / nape : 0;
	int mape_bad = mape > mm;
	if (json) {
		hs_json_end_arr(&j);
		hs_json_knum(&j, "mape", mape);
		hs_json_kint(&j, "failed", fails);
		hs_json_end_obj(&j);
	} else {
		printf("MAPE %.1f%% over %d entries%s; %d over tolerance\n", 100 * mape, nape,
		       mape_bad ? " (above --max-mape)" : "", fails);
	}
	return hs_cmd_finish(fails || mape_bad ? HS_EINTERNAL : 0);
}
