#include "sim/study/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"
#include "sim/base/numfmt.h"
#include "sim/study/simulate.h"
#include "sim/study/sweep_rules.h"
#include "sim/base/version.h"
#include "sim/study/cost.h"
#include "sim/base/outfile.h"
#include "sim/base/sizes.h"

/* After the axes: status, the resolved layout, the numbers, reason, where the profiles came from, and which way
 * the step was timed. Keep in step with hs_sweep_eval() and docs/outputs.md. */
const char *const hs_sweep_columns[] = {"status",
					/* the layout the point resolved to (dp: 0 in the scenario is what is left) */
					"tp", "pp", "dp", "cp", "ep", "vstages", "zero", "micro_batch", "microbatches",
					/* the figures (metrics) */
					"step_time_s", "mfu", "hfu", "tokens_per_s", "memory_peak_gib", "compute_s",
					"exposed_comm_s", "bubble_s", "gpu_hours_per_step", "gpu_hours_per_mtok",
					"energy_kj_per_step", "kwh_per_mtok", "cost_per_step", "cost_per_mtok",
					"reason", "profile_source", "path", NULL};
/* numeric columns: [NUM_FIRST, NUM_END), of which the figures [MET_FIRST, NUM_END) can rank a sweep */
enum { NUM_FIRST = 1, MET_FIRST = 10, NUM_END = 24 };

int hs_sweep_column_numeric(int col)
{
	return col >= NUM_FIRST && col < NUM_END;
}

int hs_sweep_metric_valid(const char *name)
{
	for (int i = MET_FIRST; i < NUM_END; i++)
		if (strcmp(hs_sweep_columns[i], name) == 0)
			return 1;
	return 0;
}

int hs_sweep_metric_maximise(const char *name)
{
	return strcmp(name, "mfu") == 0 || strcmp(name, "hfu") == 0 || strcmp(name, "tokens_per_s") == 0;
}

static const char *const sweep_keys[] = {"base", "set", "axes", "metric", "goal", "output", "description", NULL};
static const char *const goals[] = {"auto", "min", "max", NULL};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_file(uint64_t h, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return h;
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		h = fnv(h, buf, n);
	fclose(f);
	return h;
}

static void fmt_num(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.10g", v);
}

static int load_axis(const hs_ynode *key, const hs_ynode *v, hs_sweep_axis *a, hs_err *err)
{
	/* here, at the sweep file's line, rather than at the first point's --set */
	if (!hs_yaml_path_ok(key->str, strlen(key->str)))
		return hs_cfg_err(key, err, "axes", key->str,
				  "not a scenario key path (expected names joined by '.', with [N] or .N for a list item, "
				  "such as cluster.groups.0.nodes)");
	snprintf(a->key, sizeof a->key, "%s", key->str);
	char path[160];
	snprintf(path, sizeof path, "axes.%s", key->str);
	if (v->kind == HS_Y_SEQ) {
		if (v->n == 0)
			return hs_cfg_err(v, err, "axes", key->str, "an empty list (expected at least one value)");
		a->values = hs_xcalloc(v->n, sizeof *a->values);
		for (size_t i = 0; i < v->n; i++) {
			if (v->vals[i]->kind != HS_Y_SCALAR)
				return hs_cfg_err(v->vals[i], err, "axes", key->str,
						  "item %zu is not a scalar (expected values like 1, 2 or 'selective')", i);
			a->values[a->n++] = hs_xstrdup(v->vals[i]->str);
		}
	} else if (v->kind == HS_Y_MAP) {
		static const char *const rk[] = {"from", "to", "step", "times", NULL};
		double from, to, step, times;
		if (hs_cfg_known(v, path, rk, "a range {from, to, step} or {from, to, times}", err) ||
		    hs_cfg_num(v, path, "from", HS_U_COUNT, -1e300, 1e300, 0, 1, &from, err) ||
		    hs_cfg_num(v, path, "to", HS_U_COUNT, -1e300, 1e300, 0, 1, &to, err) ||
		    hs_cfg_num(v, path, "step", HS_U_COUNT, 0, 1e300, 0, 0, &step, err) ||
		    hs_cfg_num(v, path, "times", HS_U_COUNT, 0, 1e300, 0, 0, &times, err))
			return -1;
		if ((step > 0) == (times > 0))
			return hs_cfg_err(v, err, "axes", key->str, "give exactly one of step (> 0: from, from + step, ...) or times (> 1: from, from * times, ...)");
		if (times > 0 && (times <= 1 || from <= 0))
			return hs_cfg_err(v, err, "axes", key->str, "times needs times > 1 and from > 0");
		if (to < from)
			return hs_cfg_err(v, err, "axes", key->str, "to (%g) is below from (%g)", to, from);
		int cap = 0;
		for (double x = from; x <= to * (1 + 1e-12); x = times > 0 ? x * times : x + step) {
			if (a->n >= 100000)
				return hs_cfg_err(v, err, "axes", key->str, "more than 100000 values");
			if (a->n == cap)
				cap = cap ? 2 * cap : 16, a->values = hs_xrealloc(a->values, (size_t)cap * sizeof *a->values);
			char b[64];
			fmt_num(b, sizeof b, x);
			a->values[a->n++] = hs_xstrdup(b);
		}
	} else {
		return hs_cfg_err(v, err, "axes", key->str, "expected a list of values or a range {from, to, step|times}");
	}
	a->numeric = 1;
	for (int i = 0; i < a->n; i++) {
		char *end;
		strtod(a->values[i], &end);
		if (end == a->values[i] || *end)
			a->numeric = 0;
	}
	return 0;
}

/* Does an axis change the cluster section (its key's first name is `cluster`)? */
static int axes_touch_cluster(const hs_sweep *sw)
{
	for (int a = 0; a < sw->naxes; a++) {
		const char *k = sw->axes[a].key;
		size_t n = strcspn(k, ".[");
		if (n == 7 && strncmp(k, "cluster", 7) == 0)
			return 1;
	}
	return 0;
}

/* What the points share, made once: the base with the fixed overrides (point_doc) and the cluster when no axis
 * changes it. Where either fails, the points go without it and meet the failure themselves, as a point that
 * made them would (the same error at the same point). */
static void prepare(hs_sweep *sw)
{
	hs_err e = {0};
	hs_ydoc *d = hs_yaml_overlay(sw->base_doc);
	if (hs_yaml_set_all(d, sw->sets.v, sw->sets.n, &e)) {
		hs_yaml_free(d);
		return;
	}
	hs_yaml_freeze(d);
	sw->point_doc = d;
	if (!axes_touch_cluster(sw))
		sw->cluster = hs_scenario_cluster(hs_yaml_root(d), &e);
	if (sw->cluster) {
		/* one number per cluster made in this process, never reused: a later sweep's cluster may sit at this
		 * one's address, and the threads' caches outlive a sweep */
		static atomic_uint_least64_t next_id = 1;
		sw->cluster_id = atomic_fetch_add(&next_id, 1);
	}
}

static void dirname_of(const char *path, char *dir, size_t n)
{
	snprintf(dir, n, "%s", path);
	char *s = strrchr(dir, '/');
	if (s)
		s[1] = 0;
	else
		dir[0] = 0;
}

int hs_sweep_load(const char *path, hs_sweep *sw, hs_err *err)
{
	memset(sw, 0, sizeof *sw);
	snprintf(sw->path, sizeof sw->path, "%s", path);
	hs_ydoc *d = hs_yaml_load_file(path, err);
	if (!d)
		return -1;
	int rc = -1;
	const hs_ynode *root = hs_yaml_root(d);
	const char *base, *metric, *output;
	int goal;
	char dir[1024];
	dirname_of(path, dir, sizeof dir);
	if (hs_cfg_known(root, "", sweep_keys, "a sweep {base, set, axes, metric, goal, output}", err) ||
	    hs_cfg_str(root, "", "base", NULL, 1, &base, err) ||
	    hs_cfg_str(root, "", "metric", "step_time_s", 0, &metric, err) ||
	    hs_cfg_enum(root, "", "goal", goals, 0, &goal, err) || hs_cfg_str(root, "", "output", NULL, 0, &output, err))
		goto out;
	snprintf(sw->base, sizeof sw->base, "%s%s", base[0] == '/' ? "" : dir, base);
	if (!hs_sweep_metric_valid(metric)) {
		hs_cfg_err(hs_yaml_get(root, "metric"), err, "", "metric",
			   "'%s' is not a numeric column (expected step_time_s, mfu, tokens_per_s, cost_per_mtok, ...)",
			   metric);
		goto out;
	}
	snprintf(sw->metric, sizeof sw->metric, "%s", metric);
	sw->maximise = goal == 0 ? hs_sweep_metric_maximise(metric) : goal == 2;
	if (output)
		snprintf(sw->output, sizeof sw->output, "%s%s", output[0] == '/' ? "" : dir, output);
	else {
		const char *b = strrchr(path, '/');
		snprintf(sw->output, sizeof sw->output, "%s", b ? b + 1 : path);
		char *dot = strrchr(sw->output, '.');
		if (dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0))
			*dot = 0;
		strncat(sw->output, ".csv", sizeof sw->output - strlen(sw->output) - 1);
	}
	const hs_ynode *sets = hs_yaml_get(root, "set");
	if (sets) {
		if (sets->kind != HS_Y_SEQ) {
			hs_cfg_err(sets, err, "", "set", "not a list (expected [KEY=VALUE, ...])");
			goto out;
		}
		for (size_t i = 0; i < sets->n; i++) {
			const char *it = sets->vals[i]->kind == HS_Y_SCALAR ? sets->vals[i]->str : NULL;
			const char *eq = it ? strchr(it, '=') : NULL;
			if (!eq || !hs_yaml_path_ok(it, (size_t)(eq - it))) {
				hs_cfg_err(sets->vals[i], err, "", "set",
					   "item %zu is not KEY=VALUE with KEY a scenario key path (such as parallelism.tp=4)", i);
				goto out;
			}
			hs_strlist_push(&sw->sets, hs_xstrdup(sets->vals[i]->str));
		}
	}
	const hs_ynode *axes = hs_yaml_get(root, "axes");
	if (!axes || axes->kind != HS_Y_MAP || axes->n == 0) {
		hs_cfg_err(axes ? axes : root, err, "", "axes", "missing or empty (expected a mapping KEY: [values])");
		goto out;
	}
	if (axes->n > HS_SWEEP_MAX_AXES) {
		hs_cfg_err(axes, err, "", "axes", "%zu axes (expected at most %d)", axes->n, HS_SWEEP_MAX_AXES);
		goto out;
	}
	sw->npoints = 1;
	for (size_t i = 0; i < axes->n; i++) {
		/* counted before it is loaded: an axis that fails half-way is the sweep's to free (hs_sweep_free) */
		hs_sweep_axis *ax = &sw->axes[sw->naxes++];
		if (load_axis(axes->keys[i], axes->vals[i], ax, err))
			goto out;
		sw->npoints *= (size_t)ax->n;
		if (sw->npoints > HS_SWEEP_POINTS_CEILING) {
			hs_cfg_err(axes, err, "", "axes", "more than %.0e points (the product of the axes' lengths)",
				   (double)HS_SWEEP_POINTS_CEILING);
			goto out;
		}
	}
	hs_err ferr = {0};
	if (hs_file_check(sw->base, "a scenario", &ferr)) {
		hs_cfg_err(hs_yaml_get(root, "base"), err, "", "base", "%s", ferr.msg);
		goto out;
	}
	sw->base_doc = hs_yaml_load_file(sw->base, err);
	if (!sw->base_doc)
		goto out;
	hs_yaml_freeze(sw->base_doc);
	prepare(sw);
	uint64_t h = fnv(0xcbf29ce484222325ull, HS_VERSION, strlen(HS_VERSION));
	h = fnv(h, HS_SWEEP_ROW_FORMAT, strlen(HS_SWEEP_ROW_FORMAT));
	h = hash_file(hash_file(h, path), sw->base);
	sw->hash = h;
	sw->closed_form = HS_SIM_CLOSED_ITEMS;
	rc = 0;
out:
	hs_yaml_free(d);
	if (rc)
		hs_sweep_free(sw);
	return rc;
}

void hs_sweep_free(hs_sweep *sw)
{
	hs_cluster_free(sw->cluster);
	sw->cluster = NULL;
	sw->cluster_id = 0;
	hs_yaml_free(sw->point_doc); /* an overlay of the base: before it */
	sw->point_doc = NULL;
	hs_yaml_free(sw->base_doc);
	sw->base_doc = NULL;
	for (int i = 0; i < sw->naxes; i++) {
		for (int k = 0; k < sw->axes[i].n; k++)
			free(sw->axes[i].values[k]);
		free(sw->axes[i].values);
	}
	for (int i = 0; i < sw->sets.n; i++)
		free((char *)sw->sets.v[i]);
	free(sw->sets.v);
	sw->naxes = 0;
	sw->sets.v = NULL;
	sw->sets.n = 0;
}

void hs_sweep_point(const hs_sweep *sw, size_t i, int *idx)
{
	for (int a = sw->naxes - 1; a >= 0; a--) {
		idx[a] = (int)(i % (size_t)sw->axes[a].n);
		i /= (size_t)sw->axes[a].n;
	}
}

/* growable string */
struct sb {
	char *s;
	size_t n, cap;
};

static void sb_putn(struct sb *b, const char *t, size_t l)
{
	hs_xgrow(&b->s, &b->cap, b->n + l + 1, 1);
	memcpy(b->s + b->n, t, l);
	b->n += l;
	b->s[b->n] = 0;
}

static void sb_put(struct sb *b, const char *t)
{
	sb_putn(b, t, strlen(t));
}

/* A field as CSV: quoted when it holds a comma, a quote or a line break; a quote doubled, a break a space. */
static void sb_csv(struct sb *b, const char *t)
{
	if (!strpbrk(t, ",\"\n\r")) {
		sb_put(b, t);
		return;
	}
	sb_putn(b, "\"", 1);
	for (const char *p = t; *p;) {
		size_t run = strcspn(p, "\"\n\r"); /* what goes as it is, in one copy */
		sb_putn(b, p, run);
		p += run;
		if (*p)
			sb_putn(b, *p == '"' ? "\"\"" : " ", *p == '"' ? 2 : 1), p++;
	}
	sb_putn(b, "\"", 1);
}

static void sb_num(struct sb *b, double v)
{
	char t[64] = ",";
	size_t n = isfinite(v) ? hs_fmt_6g(t + 1, v) : 0; /* "%.6g" */
	sb_putn(b, t, n + 1);
}

/* Is an input error at a point a property of the point (it does not divide) rather than of the sweep? */
static int divisibility(const char *msg)
{
	static const char *const pats[] = {"divis", "does not divide", "expected the product", "needs", "multiple",
					   "more than hetsim", "virtual stages need", NULL};
	for (int i = 0; pats[i]; i++)
		if (strstr(msg, pats[i]))
			return 1;
	return 0;
}

void hs_sweep_set_closed_form(hs_sweep *sw, int on)
{
	if ((sw->closed_form != 0) != (on != 0)) /* the closed forms give the event run's rows; the hash says which ran */
		sw->hash = fnv(sw->hash, "event-run", 9);
	sw->closed_form = on;
}

/* ",tp,pp,dp,cp,ep,vstages,zero,micro_batch,microbatches" of a resolved scenario */
static void layout_cells(const hs_scenario *s, char *t, size_t n)
{
	snprintf(t, n, ",%d,%d,%d,%d,%d,%d,%d,%d,%d", s->par.tp, s->par.pp, s->par.dp, s->par.cp, s->par.ep,
		 s->par.vstages, s->par.zero, s->train.micro_batch, s->par.micro_batches);
}

/* A row that did not run: status, the layout (NULL: the scenario did not resolve), empty figures, the reason. */
static void row_not_run(const hs_sweep *sw, struct sb *b, const char *status, const char *layout, const char *msg)
{
	sb_put(b, status);
	if (layout)
		sb_put(b, layout);
	else
		for (int k = NUM_FIRST; k < MET_FIRST; k++)
			sb_put(b, ",");
	for (int k = MET_FIRST; k < NUM_END; k++)
		sb_put(b, ",");
	sb_put(b, ",");
	/* the base path prefix says nothing a reader of the sweep needs */
	const char *m = msg;
	size_t bl = strlen(sw->base);
	if (strncmp(m, sw->base, bl) == 0 && m[bl] == ':') {
		m += bl + 1;
		while ((*m >= '0' && *m <= '9') || *m == ':') /* line:col: */
			m++;
	}
	while (*m == ' ')
		m++;
	sb_csv(b, m);
	sb_put(b, ",,");
}

int hs_sweep_eval(const hs_sweep *sw, size_t i, hs_sweep_row *row, hs_profile_cache *cache, hs_err *err)
{
	int idx[HS_SWEEP_MAX_AXES];
	hs_sweep_point(sw, i, idx);
	/* the fixed overrides are point_doc's already, unless they failed there */
	int nfixed = sw->point_doc ? 0 : sw->sets.n;
	const char **sets = hs_xcalloc((size_t)(nfixed + sw->naxes) + 1, sizeof *sets);
	int nsets = 0;
	char *own[HS_SWEEP_MAX_AXES];
	struct sb b = {0};
	sb_put(&b, "");
	for (int k = 0; k < nfixed; k++)
		sets[nsets++] = sw->sets.v[k];
	for (int a = 0; a < sw->naxes; a++) {
		const char *v = sw->axes[a].values[idx[a]];
		size_t kl = strlen(sw->axes[a].key), vl = strlen(v);
		own[a] = hs_xmalloc(kl + vl + 2); /* KEY=VALUE */
		memcpy(own[a], sw->axes[a].key, kl);
		own[a][kl] = '=';
		memcpy(own[a] + kl + 1, v, vl + 1);
		sets[nsets++] = own[a];
		sb_csv(&b, v);
		sb_put(&b, ",");
	}
	/* the base document was parsed once (hs_sweep_load); each point runs on an overlay with the overrides */
	hs_err e = {0};
	hs_ydoc *doc = hs_yaml_overlay(sw->point_doc ? sw->point_doc : sw->base_doc);
	int rc = hs_yaml_set_all(doc, sets, nsets, &e);
	for (int a = 0; a < sw->naxes; a++)
		free(own[a]);
	free(sets);
	hs_scenario *s = NULL;
	if (rc)
		hs_yaml_free(doc);
	else
		s = sw->cluster ? hs_scenario_from_doc_on(doc, sw->base, sw->cluster, &e)
				: hs_scenario_from_doc(doc, sw->base, &e);
	if (s && sw->cluster)
		s->wl.cluster_id = sw->cluster_id;
	if (!s) {
		if (e.code != HS_EINFEASIBLE && !divisibility(e.msg)) {
			/* not a property of this point (an unknown key, a bad value, a missing profile): the sweep is wrong */
			free(b.s);
			*err = e;
			hs_err_prefix(err, "point %zu: ", i);
			return -1;
		}
		row_not_run(sw, &b, "infeasible", NULL, e.msg);
		row->text = b.s;
		row->ok = 0;
		return 0;
	}
	/* the layout, kept for the row: the simulation owns s from the call on, also when it fails */
	char layout[160];
	layout_cells(s, layout, sizeof layout);
	char why[512];
	if (hs_sweep_rules_check(s, why, sizeof why)) {
		row_not_run(sw, &b, "invalid", layout, why);
		hs_scenario_free(s);
		row->text = b.s;
		row->ok = 0;
		return 0;
	}
	hs_sim sim;
	if (hs_simulate_scenario(s, sw->base, -1, cache, sw->closed_form, &sim, &e)) {
		if (e.code != HS_EINFEASIBLE && !divisibility(e.msg)) {
			free(b.s);
			*err = e;
			hs_err_prefix(err, "point %zu: ", i);
			return -1;
		}
		row_not_run(sw, &b, "infeasible", layout, e.msg);
		row->text = b.s;
		row->ok = 0;
		return 0;
	}
	const hs_result *r = &sim.r;
	const hs_rep_result *c = &r->reps[r->critical_rep];
	double ex = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		ex += c->exposed_s[k];
	const hs_cost cost = sim.cost;
	sb_put(&b, "ok");
	sb_put(&b, layout);
	sb_num(&b, r->step_time_s);
	sb_num(&b, r->mfu);
	sb_num(&b, r->hfu);
	sb_num(&b, r->tokens_per_s);
	sb_num(&b, r->mem_peak_bytes / HS_GiB);
	sb_num(&b, c->compute_s);
	sb_num(&b, ex);
	sb_num(&b, c->bubble_s);
	sb_num(&b, cost.gpu_hours_per_step);
	sb_num(&b, cost.tokens_per_step > 0 ? cost.gpu_hours_per_step / cost.tokens_per_step * 1e6 : NAN);
	sb_num(&b, cost.energy_j_per_step / 1e3);
	sb_num(&b, cost.kwh_per_mtok);
	sb_num(&b, cost.cost_per_step);
	sb_num(&b, cost.cost_per_mtok);
	sb_put(&b, ",,");
	/* where each device type's profile came from: "B200: derived from H200-SXM-141GB by ...; ..." */
	char src[HS_SIM_MAXDEV * 400] = "";
	size_t sl = 0;
	for (int k = 0; k < sim.ndev && sl < sizeof src; k++)
		sl += (size_t)snprintf(src + sl, sizeof src - sl, "%s%s: %s", k ? "; " : "", sim.dev[k].profile,
				       sim.dev[k].source);
	sb_csv(&b, src);
	sb_put(&b, r->closed_form ? ",closed-form" : ",event");
	row->closed = r->closed_form != 0;
	row->items = r->closed_form == 2;
	row->items_walked = r->items_walked;
	row->items_extrapolated = r->items_extrapolated;
	hs_sim_free(&sim);
	row->text = b.s;
	row->ok = 1;
	return 0;
}

/* journals */

void hs_sweep_journal_name(const hs_sweep *sw, int rank, char *buf, size_t n)
{
	snprintf(buf, n, "%s.part-%d", sw->output, rank);
}

static void header(const hs_sweep *sw, char *buf, size_t n)
{
	snprintf(buf, n, "#hetsim-sweep-journal 1 %016llx %zu\n", (unsigned long long)sw->hash, sw->npoints);
}

/* Is a journal row one that hs_sweep_eval could have written for point i: every column, the point's own axis
 * values (as sb_csv wrote them: line breaks as spaces) and a status it writes? A row that is not (a journal
 * edited or damaged on disk) is not taken: the point runs again, rather than a row the CSV, the ranking and the
 * summary cannot read. Only the shape is checked, never a figure: a row this function refused that eval wrote
 * would be run again on every resume. */
static int row_fits(const hs_sweep *sw, size_t i, char *const *fld, int nf)
{
	int ncols = 0;
	while (hs_sweep_columns[ncols])
		ncols++;
	if (nf != sw->naxes + ncols)
		return 0;
	int idx[HS_SWEEP_MAX_AXES];
	hs_sweep_point(sw, i, idx);
	for (int a = 0; a < sw->naxes; a++) {
		const char *v = sw->axes[a].values[idx[a]], *f = fld[a];
		for (; *v && *f; v++, f++)
			if (*f != (*v == '\n' || *v == '\r' ? ' ' : *v))
				return 0;
		if (*v || *f)
			return 0;
	}
	const char *st = fld[sw->naxes];
	return strcmp(st, "ok") && strcmp(st, "infeasible") && strcmp(st, "invalid") ? 0 : 1;
}

static size_t read_one(const hs_sweep *sw, const char *path, hs_sweep_row *rows)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char want[128];
	header(sw, want, sizeof want);
	char *line = NULL;
	size_t cap = 0, got = 0;
	ssize_t len = getline(&line, &cap, f);
	if (len > 0 && strcmp(line, want) == 0) {
		while ((len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] != '\n')
				break; /* a line cut short by a kill: not done */
			line[len - 1] = 0;
			char *tab = strchr(line, '\t'), *end;
			if (!tab)
				continue;
			unsigned long long i = strtoull(line, &end, 10);
			if (end != tab || !(line[0] >= '0' && line[0] <= '9') || i >= sw->npoints || rows[i].text)
				continue;
			char *fld[64];
			int nf = hs_csv_split(tab + 1, fld, 64);
			if (row_fits(sw, (size_t)i, fld, nf)) {
				rows[i].text = hs_xstrdup(tab + 1);
				rows[i].ok = strcmp(fld[sw->naxes], "ok") == 0;
				rows[i].closed = rows[i].ok && strcmp(fld[nf - 1], "closed-form") == 0;
				got++;
			}
			for (int k = 0; k < nf; k++)
				free(fld[k]);
		}
	}
	free(line);
	fclose(f);
	return got;
}

/* every "<output>.part-N" beside the output */
static int list_journals(const hs_sweep *sw, char ***names)
{
	char dir[1024], prefix[1100];
	dirname_of(sw->output, dir, sizeof dir);
	const char *b = strrchr(sw->output, '/');
	snprintf(prefix, sizeof prefix, "%s.part-", b ? b + 1 : sw->output);
	DIR *d = opendir(dir[0] ? dir : ".");
	int n = 0;
	*names = NULL;
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) || strstr(e->d_name, ".tmp."))
			continue;
		*names = hs_xrealloc(*names, (size_t)(n + 1) * sizeof **names);
		size_t l = strlen(dir) + strlen(e->d_name) + 1;
		(*names)[n] = hs_xmalloc(l);
		snprintf((*names)[n], l, "%s%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

size_t hs_sweep_journal_read(const hs_sweep *sw, hs_sweep_row *rows)
{
	char **names;
	int n = list_journals(sw, &names);
	for (int k = 0; k < n; k++) {
		read_one(sw, names[k], rows);
		free(names[k]);
	}
	free(names);
	size_t got = 0;
	for (size_t i = 0; i < sw->npoints; i++)
		got += rows[i].text != NULL;
	return got;
}

FILE *hs_sweep_journal_open(const hs_sweep *sw, int rank, hs_err *err)
{
	char path[1200], want[128];
	hs_sweep_journal_name(sw, rank, path, sizeof path);
	header(sw, want, sizeof want);
	/* keep it when it is this sweep's, else start it afresh */
	FILE *f = fopen(path, "r");
	int keep = 0;
	if (f) {
		char line[128];
		keep = fgets(line, sizeof line, f) && strcmp(line, want) == 0;
		fclose(f);
	}
	f = fopen(path, keep ? "a" : "w");
	if (!f) {
		hs_err_set(err, HS_EINPUT, "%s: cannot write the sweep journal: %s", path, strerror(errno));
		return NULL;
	}
	if (!keep) {
		fputs(want, f);
		fflush(f);
	} else {
		/* a kill may have cut the last line short: end it, so the next row starts on its own line */
		fputs("\n", f);
		fflush(f);
	}
	return f;
}

int hs_sweep_journal_append(FILE *f, size_t i, const hs_sweep_row *row)
{
	errno = 0;
	int bad = fprintf(f, "%zu\t%s\n", i, row->text) < 0;
	bad |= fflush(f) != 0 || ferror(f);
	if (bad && !errno)
		errno = EIO;
	return bad ? -1 : 0;
}

void hs_sweep_journal_remove(const hs_sweep *sw)
{
	char **names;
	int n = list_journals(sw, &names);
	for (int k = 0; k < n; k++) {
		remove(names[k]);
		free(names[k]);
	}
	free(names);
}

int hs_csv_split(const char *line, char **out, int max)
{
	int n = 0;
	const char *p = line;
	for (;;) {
		struct sb b = {0};
		sb_put(&b, "");
		if (*p == '"') {
			p++;
			while (*p) {
				if (*p == '"' && p[1] == '"')
					sb_put(&b, "\""), p += 2;
				else if (*p == '"') {
					p++;
					break;
				} else {
					char c[2] = {*p++, 0};
					sb_put(&b, c);
				}
			}
		}
		while (*p && *p != ',') {
			char c[2] = {*p++, 0};
			sb_put(&b, c);
		}
		if (n < max)
			out[n++] = b.s;
		else
			free(b.s);
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

static int metric_col(const hs_sweep *sw)
{
	for (int i = 0; hs_sweep_columns[i]; i++)
		if (strcmp(hs_sweep_columns[i], sw->metric) == 0)
			return sw->naxes + i;
	return -1;
}

struct rk {
	double v;
	size_t i;
	int max;
};

static int cmp_rk(const void *a, const void *b)
{
	const struct rk *x = a, *y = b;
	if (x->v != y->v)
		return (x->max ? x->v > y->v : x->v < y->v) ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void hs_sweep_rank(const hs_sweep *sw, const hs_sweep_row *rows, int *rank)
{
	int col = metric_col(sw);
	struct rk *v = hs_xcalloc(sw->npoints + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < sw->npoints; i++) {
		rank[i] = 0;
		if (!rows[i].text || !rows[i].ok)
			continue;
		char *f[64];
		int nf = hs_csv_split(rows[i].text, f, 64);
		char *end;
		double x = col < nf ? strtod(f[col], &end) : NAN;
		if (col < nf && (end == f[col] || *end))
			x = NAN;
		for (int k = 0; k < nf; k++)
			free(f[k]);
		if (isnan(x))
			continue;
		v[n++] = (struct rk){x, i, sw->maximise};
	}
	qsort(v, n, sizeof *v, cmp_rk);
	for (size_t k = 0; k < n; k++)
		rank[v[k].i] = (int)k + 1;
	free(v);
}

int hs_sweep_write_csv(const hs_sweep *sw, const hs_sweep_row *rows, const int *rank, const char *path, hs_err *err)
{
	hs_outfile o;
	if (hs_outfile_open(&o, path, err))
		return -1;
	fprintf(o.f, "index,rank");
	for (int a = 0; a < sw->naxes; a++) {
		struct sb b = {0};
		sb_put(&b, ",");
		sb_csv(&b, sw->axes[a].key);
		fputs(b.s, o.f);
		free(b.s);
	}
	for (int i = 0; hs_sweep_columns[i]; i++)
		fprintf(o.f, ",%s", hs_sweep_columns[i]);
	fputc('\n', o.f);
	for (size_t i = 0; i < sw->npoints; i++) {
		if (!rows[i].text)
			continue;
		if (rank[i])
			fprintf(o.f, "%zu,%d,%s\n", i, rank[i], rows[i].text);
		else
			fprintf(o.f, "%zu,,%s\n", i, rows[i].text);
	}
	return hs_outfile_commit(&o, err);
}
