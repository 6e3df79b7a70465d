/* hetsim validate MANIFEST.yaml: predicted against measured, entry by entry.
 *
 * A manifest lists scenarios (paths relative to the manifest) with a measured step time and, optionally, a
 * tolerance (relative error, default: the manifest's `tolerance`, else none). It prints predicted, measured and
 * error per entry, then the MAPE, and exits 1 when any entry exceeds its tolerance (issue 5).
 *
 * An entry may give, instead of or besides step_time_s, the measured forward and backward time of one
 * transformer layer (layer_fwd_s, layer_bwd_s; backward includes recomputation), predicted by hs_layer_time
 * (sim/exec/layer_time.h) from the same ops and profile the step simulation uses, for layer `layer` (default: the
 * model's last). Each measured figure is one row and counts once in the MAPE. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/cli/cmd.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_nccl.h"
#include "sim/exec/layer_time.h"
#include "sim/study/simulate.h"
#include "sim/base/json.h"

static int json;
static const char *max_mape;
static const hs_opt opts[] = {
	{HS_OPT_FLAG, "json", 0, &json, NULL, "print the table as JSON"},
	{HS_OPT_STRING, "max-mape", 0, &max_mape, "FRACTION", "also fail when the MAPE exceeds this (0.15 = 15%)"},
	{.type = HS_OPT_END},
};
const hs_cmd_usage hs_usage_validate = {
	"validate", "hetsim validate [options] MANIFEST.yaml...",
	"Compare predicted with measured step, layer and collective times per manifest entry; exit 1 when one exceeds its tolerance.",
	opts,
	"Manifest: {source: TEXT, tolerance: FRACTION, entries: [{scenario: PATH, step_time_s: SECONDS,\n"
	"layer_fwd_s: SECONDS, layer_bwd_s: SECONDS, layer: INDEX, collective_time_s: SECONDS, op: NAME, size: BYTES,\n"
	"ranks: N, algo: NAME, peak_mem_bytes: BYTES, tolerance: FRACTION, mem_tolerance: FRACTION,\n"
	"set: [KEY=VALUE, ...]}]}.\n"
	"Each entry needs step_time_s, a layer time, collective_time_s or peak_mem_bytes. Paths are relative to the\n"
	"manifest. The MAPE is over the times; peak memory (the predicted peak of the busiest device against a\n"
	"measured torch.cuda.max_memory_allocated) is reported apart, with mem_tolerance."};

static const char *const man_keys[] = {"source", "tolerance", "entries", NULL};
static const char *const ent_keys[] = {"scenario", "step_time_s", "layer_fwd_s", "layer_bwd_s", "layer",
				       "collective_time_s", "op", "size", "ranks", "algo", "peak_mem_bytes",
				       "tolerance", "mem_tolerance", "set", "name", NULL};

struct row {
	char name[160];
	double pred, meas, err, tol;
};

/* A collective entry: {collective_time_s, op, size, ranks, algo} over the first `ranks` devices of the
 * scenario's cluster, predicted as nccl-tests would measure it (sim/coll/coll_nccl.h). Only `cluster` is read, so the
 * nccl-tests hardware scenarios (scenarios/validation/nccl/) serve as they are. */
static int coll_pred(const char *full, const hs_ynode *e, const char *path, const struct hs_strlist *sets,
		     double *pred, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_file_set(full, sets->v, sets->n, err);
	if (!d)
		return -1;
	int rc = -1;
	const hs_ynode *cn = hs_yaml_get(hs_yaml_root(d), "cluster");
	if (!cn) {
		hs_cfg_err(hs_yaml_root(d), err, "cluster", "", "missing section (expected {groups: [...]})");
		goto done;
	}
	hs_cluster *c = hs_cluster_from_yaml(cn, "cluster", err);
	if (!c)
		goto done;
	const char *op_s, *algo_s;
	double size;
	int64_t nr;
	int G = hs_cluster_ngpus(c);
	if (hs_cfg_str(e, path, "op", NULL, 1, &op_s, err) ||
	    hs_cfg_num(e, path, "size", HS_U_BYTES, 1, 1e15, 0, 1, &size, err) ||
	    hs_cfg_int(e, path, "ranks", 2, G, G, 0, &nr, err) || hs_cfg_str(e, path, "algo", "auto", 0, &algo_s, err)) {
		hs_cluster_free(c);
		goto done;
	}
	int op = hs_coll_op_parse(op_s), algo = hs_coll_algo_parse(algo_s);
	if (op < 0)
		hs_cfg_err(hs_yaml_get(e, "op"), err, path, "op", "'%s' is not a collective (expected all_reduce, "
								   "all_gather, reduce_scatter, all_to_all, broadcast, "
								   "reduce or sendrecv)", op_s);
	else if (algo < 0)
		hs_cfg_err(hs_yaml_get(e, "algo"), err, path, "algo", "'%s' is not an algorithm", algo_s);
	else {
		int *ranks = malloc((size_t)nr * sizeof *ranks);
		for (int i = 0; i < nr; i++)
			ranks[i] = i;
		*pred = hs_coll_nccl_time(c, (enum hs_coll_op)op, (enum hs_coll_algo)algo, HS_PROTO_AUTO, ranks, (int)nr,
					  size, NULL);
		free(ranks);
		rc = *pred > 0 ? 0 : hs_cfg_err(e, err, path, "op", "cannot be timed on this cluster");
	}
	hs_cluster_free(c);
done:
	hs_yaml_free(d);
	return rc;
}

/* Memory rows, reported apart from the time MAPE. */
static double mem_max_err;
static int mem_rows;

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
		double meas[5], tol, mtol;
		int64_t layer;
		static const char *const what[5] = {"step_time_s", "layer_fwd_s", "layer_bwd_s", "collective_time_s",
						    "peak_mem_bytes"};
		static const char *const suffix[5] = {"", " fwd", " bwd", " coll", " mem"};
		if (hs_cfg_known(e, path, ent_keys, "an entry {scenario, step_time_s, layer_fwd_s, layer_bwd_s, "
						     "layer, tolerance, set}",
				 err) ||
		    hs_cfg_str(e, path, "scenario", NULL, 1, &scn, err) ||
		    hs_cfg_num(e, path, "tolerance", HS_U_COUNT, 0, 1e9, deftol, 0, &tol, err) ||
		    hs_cfg_num(e, path, "mem_tolerance", HS_U_COUNT, 0, 1e9, INFINITY, 0, &mtol, err) ||
		    hs_cfg_int(e, path, "layer", 0, 1 << 20, -1, 0, &layer, err) ||
		    hs_cfg_str(e, path, "name", scn, 0, &name, err))
			goto out;
		int nmeas = 0;
		for (int k = 0; k < 5; k++) {
			if (hs_cfg_num(e, path, what[k], k == 4 ? HS_U_BYTES : HS_U_TIME, k == 4 ? 1 : 1e-12,
				       k == 4 ? 1e18 : 1e12, 0, 0, &meas[k], err))
				goto out;
			nmeas += meas[k] > 0;
		}
		if (!nmeas) {
			hs_cfg_err(e, err, path, "step_time_s", "missing (expected step_time_s, layer_fwd_s, "
								"layer_bwd_s, collective_time_s or peak_mem_bytes)");
			goto out;
		}
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
		double pred[5] = {0};
		if (meas[0] > 0 || meas[4] > 0) {
			hs_sim sim;
			int r = hs_simulate(full, &sets, -1, NULL, &sim, err);
			if (r) {
				free(sets.v);
				goto out;
			}
			pred[0] = sim.r.step_time_s;
			pred[4] = sim.r.mem_peak_bytes;
			hs_sim_free(&sim);
		}
		if (meas[1] > 0 || meas[2] > 0) {
			hs_scenario *sc = hs_scenario_load(full, &sets, err);
			if (!sc) {
				free(sets.v);
				goto out;
			}
			int l = layer >= 0 ? (int)layer : sc->model.layers - 1;
			hs_layer_times lt;
			int r = -1;
			if (l >= sc->model.layers)
				hs_cfg_err(hs_yaml_get(e, "layer"), err, path, "layer",
					   "%d is not a layer of the model (expected 0..%d)", l, sc->model.layers - 1);
			else
				r = hs_layer_time(&sc->wl, l, &lt, err);
			hs_scenario_free(sc);
			if (r) {
				free(sets.v);
				goto out;
			}
			pred[1] = lt.fwd_s;
			pred[2] = lt.bwd_s;
		}
		if (meas[3] > 0 && coll_pred(full, e, path, &sets, &pred[3], err)) {
			free(sets.v);
			goto out;
		}
		free(sets.v);
		for (int k = 0; k < 5; k++) {
			if (!(meas[k] > 0))
				continue;
			double rel = (pred[k] - meas[k]) / meas[k], t_k = k == 4 ? mtol : tol;
			int bad = fabs(rel) > t_k;
			*fails += bad;
			if (k == 4) {
				if (fabs(rel) > mem_max_err)
					mem_max_err = fabs(rel);
				mem_rows++;
			} else {
				*sum_ape += fabs(rel);
				(*n_ape)++;
			}
			char label[200];
			snprintf(label, sizeof label, "%s%s", name, nmeas > 1 || k ? suffix[k] : "");
			if (json) {
				hs_json_obj(j);
				hs_json_kstr(j, "entry", label);
				hs_json_kstr(j, "quantity", what[k]);
				hs_json_knum(j, k == 4 ? "predicted_bytes" : "predicted_s", pred[k]);
				hs_json_knum(j, k == 4 ? "measured_bytes" : "measured_s", meas[k]);
				hs_json_knum(j, "error", rel);
				if (isfinite(t_k))
					hs_json_knum(j, "tolerance", t_k);
				hs_json_key(j, "pass");
				hs_json_bool(j, !bad);
				hs_json_end_obj(j);
			} else {
				char t[32] = "-";
				if (isfinite(t_k))
					snprintf(t, sizeof t, "%.1f%%", 100 * t_k);
				int dig = k ? 6 : 4; /* layer and collective times are milliseconds or less */
				if (k == 4) /* bytes, as GB */
					printf("%-44s %10.2fGB %10.2fGB %+8.1f%% %9s%s\n", label, pred[k] / 1e9, meas[k] / 1e9,
					       100 * rel, t, bad ? "  FAIL" : "");
				else
					printf("%-44s %12.*f %12.*f %+8.1f%% %9s%s\n", label, dig, pred[k], dig, meas[k],
					       100 * rel, t, bad ? "  FAIL" : "");
			}
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
	mem_max_err = 0;
	mem_rows = 0;
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
		if (mem_rows)
			hs_json_knum(&j, "mem_max_error", mem_max_err);
	} else {
		printf("MAPE %.1f%% over %d entries%s; %d over tolerance\n", 100 * mape, nape,
		       mape_bad ? " (above --max-mape)" : "", fails);
		if (mem_rows)
			printf("peak memory: largest error %.1f%% over %d entries\n", 100 * mem_max_err, mem_rows);
	}
	return hs_cmd_finish(fails || mape_bad ? HS_EINTERNAL : 0);
}
