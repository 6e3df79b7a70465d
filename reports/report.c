/* hetsim report: find the kind of a result file (a run or sweep HDF5, a sweep CSV, a validate or fabric JSON)
 * in a table, and let that kind draw its plots and write its page (one file per kind: reports/report_*.c). */
#include "reports/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"

/* Tableau 10: distinguishable, and readable by most colour-blind readers. */
const char *const hs_report_palette[HS_REPORT_PALETTE] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

void hs_report_fmt(char *b, size_t n, const char *f, double v)
{
	if (isfinite(v))
		snprintf(b, n, f, v);
	else
		snprintf(b, n, "n/a");
}

/* ---------- the report kinds ---------- */

/* A result as hs_report_make opened it: its path, and its HDF5 handle or the root of its JSON document. */
struct source {
	const char *path;
	hs_h5r *h5;
	const hs_ynode *root;
};

/* How a result is stored, which decides how its kind is recognised: an HDF5 file names its kind in the
 * root's hetsim_kind; a CSV is a sweep's; a JSON document is recognised by its contents. */
enum form { FORM_HDF5, FORM_CSV, FORM_JSON };

static int make_run(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	return hs_report_run(s->h5, g, pg, o, err);
}

/* The sweep's HDF5 says which metric ranked it, and in which direction. */
static int make_sweep_h5(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct hs_rtable t;
	char metric[64] = "step_time_s", goal[8] = "min";
	hs_h5_get_str(s->h5, "/", "metric", metric, sizeof metric);
	hs_h5_get_str(s->h5, "/", "goal", goal, sizeof goal);
	static const char *const need[] = {"rank", "status", NULL};
	if (hs_rtable_from_h5(s->h5, "/sweep", need, &t))
		return hs_err_set(err, HS_EINPUT, "%s: no /sweep table", s->path);
	int rc = hs_report_sweep(&t, s->path, g, pg, o, metric, strcmp(goal, "max") == 0, err);
	hs_rtable_free(&t);
	return rc;
}

/* The CSV does not say which metric ranked it: the row ranked 1 and its neighbours tell. */
static int make_sweep_csv(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct hs_rtable t;
	if (hs_rtable_from_csv(s->path, &t, err))
		return -1;
	int rc = hs_report_sweep(&t, s->path, g, pg, o, "step_time_s", 0, err);
	hs_rtable_free(&t);
	return rc;
}

static int is_validate(const hs_ynode *root)
{
	const hs_ynode *es = hs_yaml_get(root, "entries");
	return es && es->kind == HS_Y_SEQ;
}

static int make_validate(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	return hs_report_validate(s->root, s->path, g, pg, o, err);
}

static int is_fabric(const hs_ynode *root) { return strcmp(hs_report_ystr(root, "kind"), "fabric") == 0; }

static int make_fabric(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	return hs_report_fabric(s->root, s->path, g, pg, o, err);
}

/* Each kind of report: its name (reported in o->kind; an HDF5 file's hetsim_kind), its form, how a JSON
 * document is recognised as one (the first that matches, in this order), and what draws it. A new kind is a
 * row here, and the message in hs_report_make that lists what report reads. */
static const struct report_kind {
	const char *name;
	enum form form;
	int (*is)(const hs_ynode *root); /* FORM_JSON only */
	int (*make)(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err);
} kinds[] = {
	{"run", FORM_HDF5, NULL, make_run},
	{"sweep", FORM_HDF5, NULL, make_sweep_h5},
	{"sweep", FORM_CSV, NULL, make_sweep_csv},
	{"validate", FORM_JSON, is_validate, make_validate},
	{"fabric", FORM_JSON, is_fabric, make_fabric},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The kind of a result of form `form`: by name for HDF5 (`name`), the only one for CSV, the first whose test
 * holds for JSON; NULL when none. */
static const struct report_kind *find_kind(enum form form, const char *name, const hs_ynode *root)
{
	for (size_t i = 0; i < NKINDS; i++) {
		const struct report_kind *k = &kinds[i];
		if (k->form != form)
			continue;
		if ((form == FORM_HDF5 && strcmp(k->name, name) == 0) || form == FORM_CSV ||
		    (form == FORM_JSON && k->is(root)))
			return k;
	}
	return NULL;
}

/* Read the result and let its kind draw the plots and fill the page; the page is left open on success. */
static int make(const char *result, int is_h5, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	const char *ext = strrchr(result, '.');
	struct source src = {result, NULL, NULL};
	const struct report_kind *k;
	int rc;
	if (is_h5) {
		src.h5 = hs_h5_open(result, err);
		if (!src.h5)
			return -1;
		char kind[32] = "";
		hs_h5_get_str(src.h5, "/", "hetsim_kind", kind, sizeof kind);
		snprintf(o->kind, sizeof o->kind, "%s", kind);
		k = find_kind(FORM_HDF5, kind, NULL);
		rc = k ? k->make(&src, g, pg, o, err)
		       : hs_err_set(err, HS_EINPUT, "%s: not a hetsim result (hetsim_kind '%s')", result, kind);
		/* a part of the file that broke the schema is the root cause of whatever failed after it, and a
		 * report drawn around it would be wrong: it decides */
		const hs_err *fe = hs_h5_error(src.h5);
		if (fe) {
			*err = *fe;
			rc = -1;
		}
		hs_h5_close(src.h5);
		return rc;
	}
	if (ext && strcmp(ext, ".csv") == 0) {
		k = find_kind(FORM_CSV, NULL, NULL);
		snprintf(o->kind, sizeof o->kind, "%s", k->name);
		return k->make(&src, g, pg, o, err);
	}
	hs_ydoc *d = hs_yaml_load_file(result, err);
	if (!d)
		return -1;
	src.root = hs_yaml_root(d);
	k = find_kind(FORM_JSON, NULL, src.root);
	if (k) {
		snprintf(o->kind, sizeof o->kind, "%s", k->name);
		rc = k->make(&src, g, pg, o, err);
	} else {
		/* lists the rows of `kinds`, by form */
		rc = hs_err_set(err, HS_EINPUT,
				"%s: not a result hetsim report reads (expected the HDF5 of run or sweep, a sweep CSV, or "
				"the JSON of validate --json or of a fabric run --json)",
				result);
	}
	hs_yaml_free(d);
	return rc;
}

/* Every file of the report goes through g's hs_outdir: on any failure (a bad result, a full disk, gnuplot)
 * what was written is removed, and the folder too when this made it. */
int hs_report_make(const char *result, const char *dir, hs_report_opts *o, hs_err *err)
{
	hs_gp g;
	hs_page pg;
	memset(&pg, 0, sizeof pg); /* so that hs_page_abort is safe whether or not a kind opened it */
	o->plots = 0;
	size_t nm = 0;
	unsigned char magic[8] = {0};
	if (hs_file_head(result, "a result", magic, sizeof magic, &nm, err))
		return -1;
	int is_h5 = nm == 8 && memcmp(magic, "\x89HDF\r\n\x1a\n", 8) == 0;
	if (hs_gp_init(&g, dir, o->format, err))
		return -1;
	int rc = make(result, is_h5, &g, &pg, o, err);
	if (rc == 0) {
		hs_gp_add(&g, "index.html");
		hs_gp_add(&g, "summary.md");
		rc = hs_page_close(&pg, err);
	}
	if (rc == 0)
		return hs_gp_done(&g, err);
	hs_page_abort(&pg); /* a kind that failed after opening its page may have left it open */
	hs_gp_abort(&g);
	return -1;
}
