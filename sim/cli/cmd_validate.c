/* hetsim validate MANIFEST.yaml: predicted against measured, entry by entry.
 *
 * A manifest lists scenarios (paths relative to the manifest) with what was measured and, optionally, a
 * tolerance (relative error; default: the manifest's `tolerance`, else none). It prints predicted, measured and
 * error per row, then the MAPE, and exits 4 when any row exceeds its tolerance or the MAPE exceeds --max-mape
 * (DESIGN.md: 4 is drift, 1 stays a bug, so CI can tell them apart; issue 17).
 *
 * What an entry measured, each giving one or more rows (each row counts once in the MAPE):
 *   step_time_s                     the step, against the simulated step;
 *   layer_fwd_s, layer_bwd_s        one transformer layer (backward includes recomputation), predicted by
 *                                   hs_layer_time (sim/exec/layer_time.h) for layer `layer` (default: the last);
 *   collective_time_s + op, size    one collective over the first `ranks` devices, as nccl-tests measures it;
 *   nccl_tests: LOG                 an nccl-tests log (calib/nccl.h), size by size, out-of-place and in-place
 *                                   rows, between min_size and max_size;
 *   training_log: LOG               a training log (calib/trainlog.h; `format` given or detected): the median
 *                                   and P90 of the steps after the first `skip`, against the simulated step's
 *                                   (the P50 and P90 of the simulated steps when variability makes them differ);
 *   peak_mem_bytes                  the busiest device's peak, reported apart from the MAPE, with mem_tolerance.
 * --junit FILE writes one test case per entry (its worst row's error and tolerance in the message). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/fabric.h"
#include "calib/nccl.h"
#include "calib/trainlog.h"
#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"
#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "sim/cli/cmd.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_nccl.h"
#include "sim/exec/layer_time.h"
#include "sim/study/simulate.h"

static int json;
static const char *junit;
static hs_optnum max_mape = {.min = 0, .max = DBL_MAX}; /* checked by hs_opt_parse (sim/cli/opt.h) */
static const hs_opt opts[] = {
	{HS_OPT_FLAG, "json", 0, &json, NULL, "print the table as JSON"},
	{HS_OPT_NUMBER, "max-mape", 0, &max_mape, "FRACTION", "also fail (exit 4) when the MAPE exceeds this (0.15 = 15%)"},
	{HS_OPT_STRING, "junit", 0, &junit, "FILE.xml", "write a JUnit XML report: one test case per entry"},
	{.type = HS_OPT_END},
};
const hs_cmd_usage hs_usage_validate = {
	"validate", "hetsim validate [options] MANIFEST.yaml...",
	"Compare predicted with measured step, layer and collective times per manifest entry; exit 4 when one exceeds its tolerance.",
	opts,
	"Manifest: {source: TEXT, tolerance: FRACTION, entries: [{scenario: PATH, name: TEXT, tolerance: FRACTION,\n"
	"set: [KEY=VALUE, ...], and what was measured: step_time_s: SECONDS | layer_fwd_s, layer_bwd_s: SECONDS,\n"
	"layer: INDEX | collective_time_s: SECONDS, op: NAME, size: BYTES, ranks: N, algo: NAME |\n"
	"nccl_tests: LOG, min_size: BYTES, max_size: BYTES | training_log: LOG, format: auto|megatron|nemo|\n"
	"torchtitan|deepspeed|csv|jsonl, skip: N, samples_per_step: N, tokens_per_step: N |\n"
	"peak_mem_bytes: BYTES, mem_tolerance: FRACTION}]}.\n"
	"Paths are relative to the manifest. The MAPE is over the times; peak memory (the predicted peak of the\n"
	"busiest device against a measured torch.cuda.max_memory_allocated) is reported apart, with mem_tolerance.\n"
	"Exit status: 0 every entry within its tolerance; 1 a bug in hetsim; 2 bad input (a manifest, scenario or\n"
	"log that does not parse, with file and line); 3 an infeasible scenario; 4 an entry beyond its tolerance, or\n"
	"the MAPE above --max-mape."};

static const char *const man_keys[] = {"source", "tolerance", "entries", NULL};
static const char *const ent_keys[] = {"scenario", "step_time_s", "layer_fwd_s", "layer_bwd_s", "layer",
				       "collective_time_s", "op", "size", "ranks", "algo", "peak_mem_bytes",
				       "tolerance", "mem_tolerance", "set", "name", "nccl_tests", "min_size",
				       "max_size", "training_log", "format", "skip", "samples_per_step",
				       "tokens_per_step", NULL};

/* Every row and entry of the run, kept for the JUnit file (printing happens as rows come). */
struct row {
	char label[200];
	double pred, meas, err, tol;
	int bad, mem;
};
struct entry {
	char name[200], manifest[256];
	size_t first, n; /* rows[first .. first+n) */
	int bad;
};
static struct row *rows;
static size_t nrows, caprows;
static struct entry *ents;
static size_t nents, capents;

/* Memory rows, reported apart from the time MAPE. */
static double mem_max_err;
static int mem_rows;

/* One row: kept, counted and printed. `quantity` names what was measured (JSON); `extra` adds a key to it. */
static void add_row(const char *label, const char *quantity, double pred, double meas, double tol, int mem,
		    int dig, const char *extra_key, double extra, int *fails, double *sum_ape, int *n_ape, hs_json *j)
{
	double rel = (pred - meas) / meas;
	int bad = fabs(rel) > tol;
	*fails += bad;
	if (mem) {
		if (fabs(rel) > mem_max_err)
			mem_max_err = fabs(rel);
		mem_rows++;
	} else {
		*sum_ape += fabs(rel);
		(*n_ape)++;
	}
	hs_xgrow(&rows, &caprows, nrows + 1, sizeof *rows);
	struct row *r = &rows[nrows++];
	snprintf(r->label, sizeof r->label, "%s", label);
	r->pred = pred, r->meas = meas, r->err = rel, r->tol = tol, r->bad = bad, r->mem = mem;
	ents[nents - 1].n++;
	ents[nents - 1].bad += bad;
	if (json) {
		hs_json_obj(j);
		hs_json_kstr(j, "entry", label);
		hs_json_kstr(j, "quantity", quantity);
		hs_json_knum(j, mem ? "predicted_bytes" : "predicted_s", pred);
		hs_json_knum(j, mem ? "measured_bytes" : "measured_s", meas);
		hs_json_knum(j, "error", rel);
		if (isfinite(tol))
			hs_json_knum(j, "tolerance", tol);
		if (extra_key)
			hs_json_knum(j, extra_key, extra);
		hs_json_key(j, "pass");
		hs_json_bool(j, !bad);
		hs_json_end_obj(j);
		return;
	}
	char t[32] = "-";
	if (isfinite(tol))
		snprintf(t, sizeof t, "%.1f%%", 100 * tol);
	if (mem) /* bytes, as GB */
		printf("%-44s %10.2fGB %10.2fGB %+8.1f%% %9s%s\n", label, pred / 1e9, meas / 1e9, 100 * rel, t,
		       bad ? "  FAIL" : "");
	else
		printf("%-44s %12.*f %12.*f %+8.1f%% %9s%s\n", label, dig, pred, dig, meas, 100 * rel, t,
		       bad ? "  FAIL" : "");
}

/* The scenario's cluster alone (the nccl-tests hardware scenarios have nothing else). */
static hs_cluster *load_cluster(const char *full, const struct hs_strlist *sets, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_file_set(full, sets->v, sets->n, err);
	if (!d)
		return NULL;
	hs_cluster *c = NULL;
	const hs_ynode *cn = hs_yaml_get(hs_yaml_root(d), "cluster");
	if (!cn)
		hs_cfg_err(hs_yaml_root(d), err, "cluster", "", "missing section (expected {groups: [...]})");
	else
		c = hs_cluster_from_yaml(cn, "cluster", err);
	/* the nccl entries are timed with the closed forms (NCCL's model) */
	if (c && (hs_fabprof_attach(c, err) || hs_coll_closed_form_check(c, HS_ALGO_AUTO, err))) {
		hs_cluster_free(c);
		c = NULL;
	}
	hs_yaml_free(d);
	return c;
}

/* nccl-tests' time of `op` at `size` bytes over the first nr devices of c (sim/coll/coll_nccl.h). */
static double nccl_time(const hs_cluster *c, int op, int algo, int nr, double size)
{
	int *ranks = hs_xmalloc((size_t)nr * sizeof *ranks);
	for (int i = 0; i < nr; i++)
		ranks[i] = i;
	double t = hs_coll_nccl_time(c, (enum hs_coll_op)op, (enum hs_coll_algo)algo, HS_PROTO_AUTO, ranks, nr, size,
				     NULL);
	free(ranks);
	return t;
}

static int parse_op_algo(const hs_ynode *e, const char *path, const char *op_s, const char *algo_s, int *op,
			 int *algo, hs_err *err)
{
	*op = hs_coll_op_parse(op_s), *algo = hs_coll_algo_parse(algo_s);
	if (*op < 0)
		return hs_cfg_err(hs_yaml_get(e, "op"), err, path, "op", "'%s' is not a collective (expected all_reduce, "
									  "all_gather, reduce_scatter, all_to_all, broadcast, "
									  "reduce or sendrecv)", op_s);
	if (*algo < 0)
		return hs_cfg_err(hs_yaml_get(e, "algo"), err, path, "algo", "'%s' is not an algorithm", algo_s);
	return 0;
}

/* A collective entry: {collective_time_s, op, size, ranks, algo} over the first `ranks` devices of the
 * scenario's cluster, predicted as nccl-tests would measure it. Only `cluster` is read, so the nccl-tests
 * hardware scenarios (scenarios/validation/nccl/) serve as they are. */
static int coll_pred(const char *full, const hs_ynode *e, const char *path, const struct hs_strlist *sets,
		     double *pred, hs_err *err)
{
	hs_cluster *c = load_cluster(full, sets, err);
	if (!c)
		return -1;
	const char *op_s, *algo_s;
	double size;
	int64_t nr;
	int G = hs_cluster_ngpus(c), op, algo, rc = -1;
	if (!hs_cfg_str(e, path, "op", NULL, 1, &op_s, err) &&
	    !hs_cfg_num(e, path, "size", HS_U_BYTES, 1, 1e15, 0, 1, &size, err) &&
	    !hs_cfg_int(e, path, "ranks", 2, G, G, 0, &nr, err) && !hs_cfg_str(e, path, "algo", "auto", 0, &algo_s, err) &&
	    !parse_op_algo(e, path, op_s, algo_s, &op, &algo, err)) {
		*pred = nccl_time(c, op, algo, (int)nr, size);
		rc = *pred > 0 ? 0 : hs_cfg_err(e, err, path, "op", "cannot be timed on this cluster");
	}
	hs_cluster_free(c);
	return rc;
}

/* A size as nccl-tests' -b/-e options write it: 128M, 1G, 8 (the grammar of docs/scenario.md). */
static void size_name(double b, char *buf, size_t n)
{
	static const char *const sfx[] = {"", "K", "M", "G", "T"};
	int k = 0;
	while (k < 4 && b >= 1024 && fmod(b, 1024) == 0)
		b /= 1024, k++;
	snprintf(buf, n, "%.0f%s", b, sfx[k]);
}

/* nccl_tests: LOG. The log's collective and rank count (the entry's op and ranks, if given, must agree with
 * them); every size between min_size and max_size gives an out-of-place row and, where the log has it, an
 * in-place one, predicted alike (the model does not tell them apart). */
static int nccl_entry(const char *full, const char *dir, const hs_ynode *e, const char *path, const char *name,
		      const struct hs_strlist *sets, double tol, int *fails, double *sum_ape, int *n_ape, hs_json *j,
		      hs_err *err)
{
	const char *logp, *op_s, *algo_s;
	double lo, hi;
	int64_t nr;
	if (hs_cfg_str(e, path, "nccl_tests", NULL, 1, &logp, err) || hs_cfg_str(e, path, "op", "", 0, &op_s, err) ||
	    hs_cfg_str(e, path, "algo", "auto", 0, &algo_s, err) ||
	    hs_cfg_num(e, path, "min_size", HS_U_BYTES, 0, 1e18, 1, 0, &lo, err) ||
	    hs_cfg_num(e, path, "max_size", HS_U_BYTES, 0, 1e18, 1e18, 0, &hi, err) ||
	    hs_cfg_int(e, path, "ranks", 0, 1 << 24, 0, 0, &nr, err))
		return -1;
	char lpath[2048];
	snprintf(lpath, sizeof lpath, "%s%s", logp[0] == '/' ? "" : dir, logp);
	hs_nccl_log log;
	if (hs_nccl_load(lpath, &log, err)) {
		hs_nccl_free(&log); /* a row that fails after good ones leaves those allocated */
		return -1;
	}
	hs_cluster *c = NULL;
	int rc = -1, line0 = log.n ? log.rows[0].line : 1, op, algo;
	const char *lop = log.collective[0] ? log.collective : op_s;
	if (!lop[0]) {
		hs_err_set(err, HS_EINPUT, "%s:%d: the log does not say which collective it ran (give the entry's op)",
			   lpath, line0);
		goto out;
	}
	if (op_s[0] && hs_coll_op_parse(op_s) != hs_coll_op_parse(lop)) {
		hs_err_set(err, HS_EINPUT, "%s:%d: the log ran %s, the entry's op is %s (%s)", lpath, line0, lop, op_s,
			   path);
		goto out;
	}
	if (parse_op_algo(e, path, lop, algo_s, &op, &algo, err))
		goto out;
	if (!(c = load_cluster(full, sets, err)))
		goto out;
	int G = hs_cluster_ngpus(c), n = nr ? (int)nr : log.ranks;
	if (n < 2 || n > G) {
		hs_err_set(err, HS_EINPUT, "%s:%d: the log ran on %d ranks; %s's cluster has %d devices (%s: give ranks "
					   "between 2 and %d)", lpath, line0, n, full, G, path, G);
		goto out;
	}
	int used = 0;
	for (size_t i = 0; i < log.n; i++) {
		const hs_nccl_row *r = &log.rows[i];
		if (!(r->bytes > 0) || r->bytes < lo || r->bytes > hi)
			continue;
		/* the sizes must be the op's: nccl-tests prints count elements of the type in size bytes */
		if (r->count > 0 && fmod(r->bytes, r->count) != 0) {
			hs_err_set(err, HS_EINPUT, "%s:%d: size %.0f B is not a whole number of %.0f elements: not an "
						   "nccl-tests row of %s", lpath, r->line, r->bytes, r->count, lop);
			goto out;
		}
		double p = nccl_time(c, op, algo, n, r->bytes);
		if (!(p > 0)) {
			hs_err_set(err, HS_EINPUT, "%s:%d: %s of %.0f B cannot be timed on %s's cluster", lpath, r->line,
				   lop, r->bytes, full);
			goto out;
		}
		char sz[32], label[200];
		size_name(r->bytes, sz, sizeof sz);
		snprintf(label, sizeof label, "%s %s", name, sz);
		add_row(label, "collective_time_s", p, r->t, tol, 0, 6, "size_bytes", r->bytes, fails, sum_ape, n_ape, j);
		if (r->t_inplace > 0) {
			snprintf(label, sizeof label, "%s %s in-place", name, sz);
			add_row(label, "collective_time_inplace_s", p, r->t_inplace, tol, 0, 6, "size_bytes", r->bytes, fails,
				sum_ape, n_ape, j);
		}
		used++;
	}
	if (!used) {
		hs_err_set(err, HS_EINPUT, "%s:%d: no sizes between min_size %.0f and max_size %.0f B (%s)", lpath, line0,
			   lo, hi, path);
		goto out;
	}
	rc = 0;
out:
	hs_cluster_free(c);
	hs_nccl_free(&log);
	return rc;
}

/* training_log: LOG, read into per-step times. */
static int tlog_entry(const char *dir, const hs_ynode *e, const char *path, hs_tlog *log, size_t *skip, hs_err *err)
{
	const char *logp;
	int fmt;
	int64_t sk;
	hs_tlog_opts o = {0};
	if (hs_cfg_str(e, path, "training_log", NULL, 1, &logp, err) ||
	    hs_cfg_enum(e, path, "format", hs_tlog_fmt_names, HS_TLOG_AUTO, &fmt, err) ||
	    hs_cfg_int(e, path, "skip", 0, 1 << 30, 0, 0, &sk, err) ||
	    hs_cfg_num(e, path, "samples_per_step", HS_U_COUNT, 0, 1e15, 0, 0, &o.samples_per_step, err) ||
	    hs_cfg_num(e, path, "tokens_per_step", HS_U_COUNT, 0, 1e15, 0, 0, &o.tokens_per_step, err))
		return -1;
	char lpath[2048];
	snprintf(lpath, sizeof lpath, "%s%s", logp[0] == '/' ? "" : dir, logp);
	*skip = (size_t)sk;
	return hs_tlog_load(lpath, (enum hs_tlog_fmt)fmt, &o, log, err);
}

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
	if (!es || es->kind != HS_Y_SEQ || es->n == 0) {
		/* an empty list would pass with nothing checked: a CI gate that cannot fail */
		hs_cfg_err(es ? es : root, err, "entries", "",
			   es && es->kind == HS_Y_SEQ ? "empty (expected at least one entry to check)"
						      : "missing or not a list (expected a list of entries)");
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
		if (hs_cfg_known(e, path, ent_keys, "an entry {scenario, name, tolerance, set, and step_time_s, "
						     "layer_fwd_s/layer_bwd_s, collective_time_s, nccl_tests, "
						     "training_log or peak_mem_bytes}",
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
		int has_nccl = hs_yaml_get(e, "nccl_tests") != NULL, has_tlog = hs_yaml_get(e, "training_log") != NULL;
		if (!nmeas && !has_nccl && !has_tlog) {
			hs_cfg_err(e, err, path, "step_time_s", "missing (expected step_time_s, layer_fwd_s, "
								"layer_bwd_s, collective_time_s, nccl_tests, training_log "
								"or peak_mem_bytes)");
			goto out;
		}
		hs_xgrow(&ents, &capents, nents + 1, sizeof *ents);
		struct entry *en = &ents[nents++];
		snprintf(en->name, sizeof en->name, "%s", name);
		snprintf(en->manifest, sizeof en->manifest, "%s", mpath);
		en->first = nrows, en->n = 0, en->bad = 0;
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
		/* the manifest's position for a scenario that is not there (it is read much later) */
		hs_err fe = {0};
		if (hs_file_check(full, "a scenario", &fe)) {
			free(sets.v);
			hs_cfg_err(hs_yaml_get(e, "scenario"), err, path, "scenario", "%s", fe.msg);
			goto out;
		}
		double pred[5] = {0}, pred_p50 = 0, pred_p90 = 0;
		hs_tlog tl = {0};
		size_t skip = 0;
		if (has_tlog && tlog_entry(dir, e, path, &tl, &skip, err)) {
			free(sets.v);
			goto out;
		}
		if (meas[0] > 0 || meas[4] > 0 || has_tlog) {
			hs_sim sim;
			int r = hs_simulate(full, &sets, -1, NULL, &sim, err);
			if (r) {
				free(sets.v);
				hs_tlog_free(&tl);
				goto out;
			}
			pred[0] = sim.r.step_time_s;
			pred[4] = sim.r.mem_peak_bytes;
			/* the simulated steps' distribution when variability spreads them, else the one step */
			int spread = sim.r.steps > 1 && sim.r.step_times;
			pred_p50 = spread ? hs_tlog_quantile(sim.r.step_times, (size_t)sim.r.steps, 0.5) : pred[0];
			pred_p90 = spread ? hs_tlog_quantile(sim.r.step_times, (size_t)sim.r.steps, 0.9) : pred[0];
			hs_sim_free(&sim);
		}
		if (meas[1] > 0 || meas[2] > 0) {
			hs_scenario *sc = hs_scenario_load(full, &sets, err);
			if (!sc) {
				free(sets.v);
				hs_tlog_free(&tl);
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
				hs_tlog_free(&tl);
				goto out;
			}
			pred[1] = lt.fwd_s;
			pred[2] = lt.bwd_s;
		}
		if (meas[3] > 0 && coll_pred(full, e, path, &sets, &pred[3], err)) {
			free(sets.v);
			hs_tlog_free(&tl);
			goto out;
		}
		int bad_nccl = has_nccl && nccl_entry(full, dir, e, path, name, &sets, tol, fails, sum_ape, n_ape, j, err);
		free(sets.v);
		if (bad_nccl) {
			hs_tlog_free(&tl);
			goto out;
		}
		if (has_tlog) {
			double med, p90;
			size_t used;
			int r = hs_tlog_stats(&tl, skip, &med, &p90, &used, err);
			hs_tlog_free(&tl);
			if (r)
				goto out;
			char label[200];
			snprintf(label, sizeof label, "%s median", name);
			add_row(label, "step_time_median_s", pred_p50, med, tol, 0, 4, "steps", (double)used, fails, sum_ape,
				n_ape, j);
			snprintf(label, sizeof label, "%s p90", name);
			add_row(label, "step_time_p90_s", pred_p90, p90, tol, 0, 4, "steps", (double)used, fails, sum_ape,
				n_ape, j);
		}
		for (int k = 0; k < 5; k++) {
			if (!(meas[k] > 0))
				continue;
			char label[200];
			snprintf(label, sizeof label, "%s%s", name, nmeas > 1 || k ? suffix[k] : "");
			add_row(label, what[k], pred[k], meas[k], k == 4 ? mtol : tol, k == 4, k ? 6 : 4, NULL, 0, fails,
				sum_ape, n_ape, j);
		}
	}
	rc = 0;
out:
	hs_yaml_free(d);
	return rc;
}

/* XML text with the five predefined entities, and control characters (not allowed in XML 1.0) as '?'. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? '?' : *s, f);
		}
	}
}

/* One test case per entry: its worst row (largest |error| relative to its tolerance) in the message, every
 * row in system-out. One suite per manifest. Written through hs_outfile, so a CI job never reads half a file. */
static int write_junit(const char *path, int nman, const char *const *man, hs_err *err)
{
	hs_outfile o;
	if (hs_outfile_open(&o, path, err))
		return -1;
	FILE *f = o.f;
	int tot_bad = 0;
	for (size_t i = 0; i < nents; i++)
		tot_bad += ents[i].bad > 0;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hetsim validate\" tests=\"%zu\" "
		   "failures=\"%d\">\n", nents, tot_bad);
	for (int m = 0; m < nman; m++) {
		size_t n = 0;
		int bad = 0;
		for (size_t i = 0; i < nents; i++)
			if (strcmp(ents[i].manifest, man[m]) == 0)
				n++, bad += ents[i].bad > 0;
		fputs("  <testsuite name=\"", f);
		xml_text(f, man[m]);
		fprintf(f, "\" tests=\"%zu\" failures=\"%d\" errors=\"0\">\n", n, bad);
		for (size_t i = 0; i < nents; i++) {
			const struct entry *en = &ents[i];
			if (strcmp(en->manifest, man[m]) != 0)
				continue;
			const struct row *w = NULL;
			double wscore = -1;
			for (size_t k = en->first; k < en->first + en->n; k++) {
				const struct row *r = &rows[k];
				double s = isfinite(r->tol) && r->tol > 0 ? fabs(r->err) / r->tol : fabs(r->err) * 1e-6;
				if (s > wscore)
					wscore = s, w = r;
			}
			char msg[512] = "no rows", tolb[32] = "none";
			if (w) {
				if (isfinite(w->tol))
					snprintf(tolb, sizeof tolb, "%.1f%%", 100 * w->tol);
				snprintf(msg, sizeof msg, "%s: error %+.1f%% (predicted %.6g, measured %.6g), tolerance %s; %d of "
							  "%zu rows beyond tolerance", w->label, 100 * w->err, w->pred, w->meas,
					 tolb, en->bad, en->n);
			}
			fputs("    <testcase classname=\"", f);
			xml_text(f, man[m]);
			fputs("\" name=\"", f);
			xml_text(f, en->name);
			fputs("\" time=\"0\">\n", f);
			if (en->bad) {
				fputs("      <failure type=\"drift\" message=\"", f);
				xml_text(f, msg);
				fputs("\"/>\n", f);
			}
			fputs("      <system-out>", f);
			if (!en->bad) {
				xml_text(f, msg);
				fputc('\n', f);
			}
			for (size_t k = en->first; k < en->first + en->n; k++) {
				const struct row *r = &rows[k];
				char line[400];
				snprintf(line, sizeof line, "%s: predicted %.6g, measured %.6g, error %+.2f%%%s\n", r->label,
					 r->pred, r->meas, 100 * r->err, r->bad ? " FAIL" : "");
				xml_text(f, line);
			}
			fputs("</system-out>\n    </testcase>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	return hs_outfile_commit(&o, err);
}

static void reset(void)
{
	free(rows);
	free(ents);
	rows = NULL, ents = NULL;
	nrows = caprows = nents = capents = 0;
	mem_max_err = 0;
	mem_rows = 0;
}

int cmd_validate(int argc, char **argv)
{
	const char *pos[64];
	json = 0;
	junit = NULL;
	max_mape.given = 0, max_mape.v = 0;
	reset();
	int n = hs_opt_parse(&hs_usage_validate, argc, argv, pos, 64);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n == 0) {
		fprintf(stderr, "hetsim validate: no manifest given\nusage: %s\n", hs_usage_validate.synopsis);
		return HS_EINPUT;
	}
	double mm = max_mape.given ? max_mape.v : INFINITY;
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
		if (one(pos[i], &fails, &sum, &nape, &j, &err)) {
			reset();
			return hs_cmd_finish(hs_cmd_fail("validate", &err));
		}
	}
	double mape = nape ? sum / nape : 0;
	int mape_bad = mape > mm;
	if (json) {
		hs_json_end_arr(&j);
		hs_json_knum(&j, "mape", mape);
		hs_json_kint(&j, "failed", fails);
		if (mem_rows)
			hs_json_knum(&j, "mem_max_error", mem_max_err);
		hs_json_end_obj(&j);
	} else {
		printf("MAPE %.1f%% over %d entries%s; %d over tolerance\n", 100 * mape, nape,
		       mape_bad ? " (above --max-mape)" : "", fails);
		if (mem_rows)
			printf("peak memory: largest error %.1f%% over %d entries\n", 100 * mem_max_err, mem_rows);
	}
	if (junit) {
		hs_err err = {0};
		if (write_junit(junit, n, pos, &err)) {
			reset();
			return hs_cmd_finish(hs_cmd_fail("validate", &err));
		}
	}
	reset();
	return hs_cmd_finish(fails || mape_bad ? HS_EDRIFT : 0);
}
