#include "reports/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "reports/gnuplot.h"
#include "reports/page.h"
#include "sim/base/alloc.h"
#include "sim/study/sweep.h"
#include "traces/hdf5_out.h"
#include "sim/base/sizes.h"

/* Tableau 10: distinguishable, and readable by most colour-blind readers. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

static void fmt(char *b, size_t n, const char *f, double v)
{
	if (isfinite(v))
		snprintf(b, n, f, v);
	else
		snprintf(b, n, "n/a");
}

/* ---------- a table of strings (sweep rows from HDF5 or CSV) ---------- */

struct table {
	int ncol;
	size_t nrow;
	char **names;
	char ***cells; /* [col][row] */
};

static void table_free(struct table *t)
{
	for (int c = 0; c < t->ncol; c++) {
		for (size_t r = 0; r < t->nrow; r++)
			free(t->cells[c][r]);
		free(t->cells[c]);
		free(t->names[c]);
	}
	free(t->cells);
	free(t->names);
	memset(t, 0, sizeof *t);
}

static int table_col(const struct table *t, const char *name)
{
	for (int c = 0; c < t->ncol; c++)
		if (strcmp(t->names[c], name) == 0)
			return c;
	return -1;
}

static double cell_num(const struct table *t, int c, size_t r)
{
	if (c < 0)
		return NAN;
	char *end;
	double v = strtod(t->cells[c][r], &end);
	return end == t->cells[c][r] || *end ? NAN : v;
}

static int table_from_h5(hs_h5r *h, const char *grp, struct table *t)
{
	memset(t, 0, sizeof *t);
	if (hs_h5_columns(h, grp, &t->names, &t->ncol))
		return -1;
	t->cells = hs_xcalloc((size_t)t->ncol, sizeof *t->cells);
	for (int c = 0; c < t->ncol; c++) {
		size_t n = 0;
		if (hs_h5_is_str(h, grp, t->names[c])) {
			hs_h5_read_str(h, grp, t->names[c], &t->cells[c], &n);
		} else {
			double *v = NULL;
			hs_h5_read_num(h, grp, t->names[c], &v, &n);
			t->cells[c] = hs_xcalloc(n + 1, sizeof **t->cells);
			for (size_t r = 0; r < n; r++) {
				char b[64] = "";
				if (isfinite(v[r]))
					snprintf(b, sizeof b, "%.10g", v[r]);
				t->cells[c][r] = hs_xstrdup(b);
			}
			free(v);
		}
		if (c == 0)
			t->nrow = n;
	}
	return 0;
}

static int table_from_csv(const char *path, struct table *t, hs_err *err)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "r");
	if (!f)
		return hs_err_set(err, HS_EINPUT, "%s: cannot open", path);
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		char *fl[64];
		int n = hs_csv_split(line, fl, 64);
		if (!t->names) {
			t->ncol = n;
			t->names = hs_xcalloc((size_t)n, sizeof *t->names);
			t->cells = hs_xcalloc((size_t)n, sizeof *t->cells);
			for (int c = 0; c < n; c++)
				t->names[c] = fl[c];
			continue;
		}
		if (t->nrow == rcap) {
			rcap = rcap ? 2 * rcap : 64;
			for (int c = 0; c < t->ncol; c++)
				t->cells[c] = hs_xrealloc(t->cells[c], rcap * sizeof **t->cells);
		}
		for (int c = 0; c < t->ncol; c++)
			t->cells[c][t->nrow] = c < n ? fl[c] : hs_xstrdup("");
		for (int c = t->ncol; c < n; c++)
			free(fl[c]);
		t->nrow++;
	}
	free(line);
	fclose(f);
	if (!t->names || table_col(t, "status") < 0) {
		table_free(t);
		return hs_err_set(err, HS_EINPUT, "%s: not a hetsim sweep CSV (no status column)", path);
	}
	return 0;
}

/* ---------- run ---------- */

static const char *const what_names[] = {"forward",   "backward",	   "backward (input)", "backward (weights)",
					 "optimizer", "gradient reduce", "parameter gather", "p2p"};
static const char *const what_colors[] = {"#4e79a7", "#f28e2b", "#f28e2b", "#edc948",
					  "#59a14f", "#e15759", "#b07aa1", "#9c755f"};

/* What the root and /parallelism, /cost groups of a run's HDF5 say about the step: the page's title and summary. */
struct run_facts {
	char scn[256], model[128], sched[32], rc[32], cur[16];
	double step, mfu, hfu, tps, memp, gpus, tp, pp, dp, mbs;
	double gh, util, pw, ej, kwh, cps, cpm;
};

/* Read the run's attributes; absent ones stay NaN (shown as n/a), or their defaults (TP = PP = DP = 1, "$"). */
static void run_read_facts(hs_h5r *h, struct run_facts *r)
{
	*r = (struct run_facts){.cur = "$", .step = NAN, .mfu = NAN, .hfu = NAN, .tps = NAN, .memp = NAN, .gpus = NAN,
				.tp = 1, .pp = 1, .dp = 1, .mbs = 0, .gh = NAN, .util = NAN, .pw = NAN, .ej = NAN,
				.kwh = NAN, .cps = NAN, .cpm = NAN};
	hs_h5_get_str(h, "/", "scenario", r->scn, sizeof r->scn);
	hs_h5_get_str(h, "/", "model", r->model, sizeof r->model);
	hs_h5_get_num(h, "/", "step_time_s", &r->step);
	hs_h5_get_num(h, "/", "mfu", &r->mfu);
	hs_h5_get_num(h, "/", "hfu", &r->hfu);
	hs_h5_get_num(h, "/", "tokens_per_s", &r->tps);
	hs_h5_get_num(h, "/", "memory_peak_bytes", &r->memp);
	hs_h5_get_num(h, "/", "gpus", &r->gpus);
	hs_h5_get_num(h, "/parallelism", "tp", &r->tp);
	hs_h5_get_num(h, "/parallelism", "pp", &r->pp);
	hs_h5_get_num(h, "/parallelism", "dp", &r->dp);
	hs_h5_get_num(h, "/parallelism", "micro_batches", &r->mbs);
	hs_h5_get_str(h, "/parallelism", "schedule", r->sched, sizeof r->sched);
	hs_h5_get_str(h, "/parallelism", "recompute", r->rc, sizeof r->rc);
	hs_h5_get_num(h, "/cost", "gpu_hours_per_step", &r->gh);
	hs_h5_get_num(h, "/cost", "utilisation", &r->util);
	hs_h5_get_num(h, "/cost", "power_w", &r->pw);
	hs_h5_get_num(h, "/cost", "energy_j_per_step", &r->ej);
	hs_h5_get_num(h, "/cost", "kwh_per_mtok", &r->kwh);
	hs_h5_get_num(h, "/cost", "cost_per_step", &r->cps);
	hs_h5_get_num(h, "/cost", "cost_per_mtok", &r->cpm);
	hs_h5_get_str(h, "/cost", "currency", r->cur, sizeof r->cur);
}

/* The page's title (the option's, else the scenario's) and a subtitle naming the model and its parallelism. */
static int run_open_page(hs_page *pg, const char *dir, const struct run_facts *r, const hs_report_opts *o,
			 hs_err *err)
{
	char title[400], sub[400];
	snprintf(title, sizeof title, "%s", o->title ? o->title : r->scn);
	snprintf(sub, sizeof sub, "%s on %.0f GPUs: TP %.0f, PP %.0f, DP %.0f, %s schedule, %.0f micro-batches, "
				  "recompute %s", r->model, r->gpus, r->tp, r->pp, r->dp, r->sched, r->mbs, r->rc);
	return hs_page_open(pg, dir, title, sub, err);
}

/* The summary table: step time, utilisation, memory, energy, and the cost rows when the run priced the step. */
static void run_summary(hs_page *pg, const struct run_facts *r)
{
	hs_page_section(pg, "Summary");
	const char *kh[] = {"quantity", "value"};
	hs_page_table(pg, 2, kh);
	char v[64];
	struct { const char *k, *f; double x; } kv[] = {
		{"step time (s)", "%.4f", r->step},
		{"MFU", "%.1f%%", 100 * r->mfu},
		{"HFU", "%.1f%%", 100 * r->hfu},
		{"tokens/s", "%.0f", r->tps},
		{"peak memory per GPU (GiB)", "%.1f", r->memp / HS_GiB},
		{"GPU-hours per step", "%.4f", r->gh},
		{"utilisation (compute busy)", "%.1f%%", 100 * r->util},
		{"power (kW)", "%.1f", r->pw / 1e3},
		{"energy per step (kJ)", "%.1f", r->ej / 1e3},
		{"energy per M tokens (kWh)", "%.3f", r->kwh},
	};
	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
		fmt(v, sizeof v, kv[i].f, kv[i].x);
		const char *row[] = {kv[i].k, v};
		hs_page_row(pg, row);
	}
	if (isfinite(r->cps)) {
		char k[64];
		snprintf(k, sizeof k, "cost per step (%s)", r->cur);
		fmt(v, sizeof v, "%.4f", r->cps);
		hs_page_row(pg, (const char *const[]){k, v});
		snprintf(k, sizeof k, "cost per M tokens (%s)", r->cur);
		fmt(v, sizeof v, "%.3f", r->cpm);
		hs_page_row(pg, (const char *const[]){k, v});
	}
	hs_page_table_end(pg);
}

/* The parts of a rank's step in /ranks, in stacking order: compute, then exposed communication by group
 * (parts[1..5]), bubble and idle tail. */
static const char *const rank_parts[] = {"compute_s",    "exposed_tp_s", "exposed_cp_s", "exposed_dp_s",
					 "exposed_ep_s", "exposed_pp_s", "bubble_s",     "idle_tail_s"};
static const char *const rank_labels[] = {"compute",    "exposed TP", "exposed CP",      "exposed DP",
					  "exposed EP", "exposed PP", "pipeline bubble", "idle (waiting for the step)"};
#define NRANK_PARTS ((int)(sizeof rank_parts / sizeof rank_parts[0]))

/* The step-time breakdown per rank (stacked bars of the parts any rank has, compute always) and a table of
 * the first 64 ranks. */
static int run_breakdown(const struct table *rk, const struct run_facts *r, hs_gp *g, hs_page *pg,
			 hs_report_opts *o, hs_err *err)
{
	int use[NRANK_PARTS], nuse = 0;
	for (int k = 0; k < NRANK_PARTS; k++) {
		double s = 0;
		int c = table_col(rk, rank_parts[k]);
		for (size_t q = 0; q < rk->nrow; q++)
			s += fabs(cell_num(rk, c, q) > 0 ? cell_num(rk, c, q) : 0);
		if (s > 1e-9 || k == 0)
			use[nuse++] = k;
	}
	char dpath[1200], img[256], script[4096];
	FILE *f = hs_gp_data(g, "breakdown", dpath, sizeof dpath);
	int cst = table_col(rk, "stage"), cdp = table_col(rk, "dp_index");
	fprintf(f, "rank");
	for (int k = 0; k < nuse; k++)
		fprintf(f, "\t%s", rank_labels[use[k]]);
	fprintf(f, "\n");
	for (size_t q = 0; q < rk->nrow; q++) {
		fprintf(f, r->dp > 1 && rk->nrow > r->pp ? "s%s/d%s" : "stage %s", rk->cells[cst][q], rk->cells[cdp][q]);
		for (int k = 0; k < nuse; k++) {
			double x = cell_num(rk, table_col(rk, rank_parts[use[k]]), q);
			fprintf(f, "\t%.9g", x > 0 ? x : 0);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	char cols[256] = "";
	for (int k = 0; k < nuse; k++) {
		strcat(cols, palette[use[k] % 10]);
		strcat(cols, " ");
	}
	snprintf(script, sizeof script,
		 "colors = '%s'\nset title 'Step time breakdown per rank (step %.4f s)'\nset ylabel 'seconds'\n"
		 "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 border lc rgb "
		 "'#ffffff'\nset boxwidth 0.75\nset key outside right top\nset yrange [0:*]\nset xtics rotate by -30 "
		 "nomirror\nplot for [i=2:%d] '%s' using i:xtic(1) title columnheader(i) lc rgb word(colors, i-1)\n",
		 cols, r->step, nuse + 1, dpath);
	if (hs_gp_plot(g, "breakdown", 960, 480, script, img, sizeof img, err))
		return -1;
	o->plots++;
	hs_page_section(pg, "Where the step goes");
	hs_page_figure(pg, img, "Step-time breakdown per simulated rank: compute, communication that blocked the "
				"compute stream (by group), pipeline bubble, and idle time after the rank's last task.");
	const char *hd[] = {"rank", "device", "x ranks", "finish (s)", "compute (s)", "exposed comm (s)", "bubble (s)",
			    "memory (GiB)"};
	hs_page_table(pg, 8, hd);
	int cdev = table_col(rk, "device"), cm = table_col(rk, "multiplicity");
	for (size_t q = 0; q < rk->nrow && q < 64; q++) {
		char a[32], b[32], c[32], d[32], e[32], fm[32], lab[48];
		double ex = 0;
		for (int k = 1; k <= 5; k++)
			ex += cell_num(rk, table_col(rk, rank_parts[k]), q);
		snprintf(lab, sizeof lab, "stage %s dp %s", rk->cells[cst][q], rk->cells[cdp][q]);
		snprintf(fm, sizeof fm, "%s", rk->cells[cm][q]);
		fmt(a, sizeof a, "%.4f", cell_num(rk, table_col(rk, "finish_s"), q));
		fmt(b, sizeof b, "%.4f", cell_num(rk, table_col(rk, "compute_s"), q));
		fmt(c, sizeof c, "%.4f", ex);
		fmt(d, sizeof d, "%.4f", cell_num(rk, table_col(rk, "bubble_s"), q));
		fmt(e, sizeof e, "%.1f", cell_num(rk, table_col(rk, "memory_bytes"), q) / HS_GiB);
		const char *row[] = {lab, rk->cells[cdev][q], fm, a, b, c, d, e};
		hs_page_row(pg, row);
	}
	hs_page_table_end(pg);
	return 0;
}

/* A Gantt chart of the first 16 ranks' streams from /tasks (written by --hdf5-tasks), or a note saying how
 * to get one. */
static int run_timeline(hs_h5r *h, const struct table *rk, const struct run_facts *r, hs_gp *g, hs_page *pg,
			hs_report_opts *o, hs_err *err)
{
	struct table tk;
	hs_page_section(pg, "Pipeline timeline");
	if (table_from_h5(h, "/tasks", &tk) != 0) {
		hs_page_para(pg, "This result has no task table: run with --hdf5-tasks to draw the timeline.");
		return 0;
	}
	char dpath[1200], img[256], script[4096];
	int cst = table_col(rk, "stage");
	int crk = table_col(&tk, "rank"), cs = table_col(&tk, "stream"), cw = table_col(&tk, "what"),
	    c0 = table_col(&tk, "start_s"), c1 = table_col(&tk, "end_s");
	int maxr = 16, nr = (int)rk->nrow < maxr ? (int)rk->nrow : maxr;
	int used[8] = {0};
	FILE *f = hs_gp_data(g, "timeline", dpath, sizeof dpath);
	for (size_t q = 0; q < tk.nrow; q++) {
		int rr = (int)cell_num(&tk, crk, q), s = (int)cell_num(&tk, cs, q), w = (int)cell_num(&tk, cw, q);
		if (rr >= nr || w < 0 || w > 7)
			continue;
		double a = cell_num(&tk, c0, q), b = cell_num(&tk, c1, q);
		if (!(b > a))
			continue;
		used[w] = 1;
		unsigned col = (unsigned)strtoul(what_colors[w] + 1, NULL, 16);
		fprintf(f, "%.9g\t%d\t%.9g\t%.3f\t%u\n", (a + b) / 2, rr * 4 + s, (b - a) / 2, s == 0 ? 0.4 : 0.25, col);
	}
	fclose(f);
	char yt[4096] = "set ytics (";
	for (int q = 0; q < nr; q++) {
		char one[96];
		snprintf(one, sizeof one, "%s'stage %s compute' %d, 'comm' %d, 'p2p' %d", q ? ", " : "",
			 rk->cells[cst][q], q * 4, q * 4 + 1, q * 4 + 2);
		if (strlen(yt) + strlen(one) < sizeof yt - 8)
			strcat(yt, one);
	}
	strcat(yt, ")\n");
	char keys[1024] = "";
	for (int w = 0; w < 8; w++)
		if (used[w] && !(w == 2 && used[1]) && w != 7) {
			char one[128];
			snprintf(one, sizeof one, ", NaN with boxes fs solid lc rgb '%s' title '%s'", what_colors[w],
				 what_names[w]);
			strcat(keys, one);
		}
	/* yrange with reverse: rank 0 on top */
	snprintf(script, sizeof script,
		 "set title 'Timeline of one step (first %d simulated ranks, step %.4f s)'\nset xlabel 'seconds'\n"
		 "set yrange [%d:-1] reverse\nset grid xtics lc rgb '#eeeeee'\nset key outside right top noenhanced\n"
		 "set style fill solid 0.95 noborder\nplot '%s' using 1:2:3:4:5 with boxxyerror lc rgb variable "
		 "notitle%s, NaN with boxes fs solid lc rgb '%s' title 'p2p send'\n",
		 nr, r->step, nr * 4 - 1, dpath, keys, what_colors[7]);
	char full[8192];
	snprintf(full, sizeof full, "%s%s", yt, script);
	int rc = hs_gp_plot(g, "timeline", 1100, 120 + 60 * nr, full, img, sizeof img, err);
	if (rc == 0) {
		o->plots++;
		hs_page_figure(pg, img, "Gantt chart of the step: compute (tall bars) and communication streams of each "
					"simulated rank, coloured by what the task does.");
	}
	table_free(&tk);
	return rc ? -1 : 0;
}

/* Memory of one GPU per stage from /stages, stacked by kind, against the usable capacity /ranks reports;
 * nothing when the file has no /stages. */
static int run_memory(hs_h5r *h, const struct table *rk, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct table st;
	if (table_from_h5(h, "/stages", &st) != 0)
		return 0;
	static const char *const mparts[] = {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
					     "logits_bytes"};
	char dpath[1200], img[256], script[4096];
	int cst = table_col(rk, "stage");
	FILE *f = hs_gp_data(g, "memory", dpath, sizeof dpath);
	fprintf(f, "stage\tweights\tgradients\toptimizer\tactivations\tlogits\tcapacity\n");
	for (size_t q = 0; q < st.nrow; q++) {
		fprintf(f, "stage %s", st.cells[0][q]);
		for (int k = 0; k < 5; k++)
			fprintf(f, "\t%.6g", cell_num(&st, table_col(&st, mparts[k]), q) / HS_GiB);
		double cap = NAN;
		for (size_t x = 0; x < rk->nrow; x++)
			if (strcmp(rk->cells[cst][x], st.cells[0][q]) == 0) {
				cap = cell_num(rk, table_col(rk, "memory_capacity_bytes"), x);
				break;
			}
		fprintf(f, "\t%.6g\n", cap / HS_GiB);
	}
	fclose(f);
	snprintf(script, sizeof script,
		 "colors = '#4e79a7 #76b7b2 #f28e2b #e15759 #b07aa1'\nset title 'Memory per GPU, by pipeline stage'\n"
		 "set ylabel 'GiB'\nset key autotitle columnheader\nset style data histograms\nset style histogram rowstacked\nset style fill "
		 "solid 0.9 border lc rgb '#ffffff'\nset boxwidth 0.6\nset key outside right top\nset yrange [0:*]\n"
		 "plot for [i=2:6] '%s' using i:xtic(1) title columnheader(i) lc rgb word(colors, i-1), "
		 "'%s' using 0:7 with linespoints lw 2 dt 2 pt 7 ps 1.5 lc rgb '#222222' title 'usable capacity'\n",
		 dpath, dpath);
	int rc = hs_gp_plot(g, "memory", 900, 450, script, img, sizeof img, err);
	if (rc == 0) {
		o->plots++;
		hs_page_section(pg, "Memory");
		hs_page_figure(pg, img, "Memory of one GPU of each stage (weights, gradients, optimizer state, "
					"activations at peak, logits) against its usable capacity (capacity minus reserve).");
	}
	table_free(&st);
	return rc ? -1 : 0;
}

/* Busy fraction over time of the eight busiest links, when the network model recorded /links; otherwise a
 * note saying which models do. */
static int run_links(hs_h5r *h, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	hs_page_section(pg, "Link utilisation");
	double nl = 0;
	double *lu = NULL;
	size_t nlk = 0, nbin = 0;
	if (!(hs_h5_get_num(h, "/", "links", &nl) == 0 && nl > 0 &&
	      hs_h5_read_matrix(h, "/links/utilisation", &lu, &nlk, &nbin) == 0)) {
		hs_page_para(pg, "No link time series in this result: the analytical network model has no links. "
				 "Results of a network model that tracks links (flow) carry /links.");
		return 0;
	}
	char dpath[1200], img[256], script[4096];
	double bin = 1;
	hs_h5_get_num(h, "/links", "bin_s", &bin);
	char **names = NULL;
	size_t nn = 0;
	hs_h5_read_str(h, "/links", "name", &names, &nn);
	/* the 8 busiest links */
	int top[8], ntop = 0;
	for (int k = 0; k < 8 && k < (int)nlk; k++) {
		int best = -1;
		double bm = -1;
		for (size_t l = 0; l < nlk; l++) {
			int taken = 0;
			for (int q = 0; q < ntop; q++)
				taken |= top[q] == (int)l;
			double m = 0;
			for (size_t b = 0; b < nbin; b++)
				m += lu[l * nbin + b];
			if (!taken && m > bm)
				bm = m, best = (int)l;
		}
		top[ntop++] = best;
	}
	FILE *f = hs_gp_data(g, "links", dpath, sizeof dpath);
	fprintf(f, "time_s");
	for (int q = 0; q < ntop; q++)
		fprintf(f, "\t%s", (size_t)top[q] < nn ? names[top[q]] : "link");
	fprintf(f, "\n");
	for (size_t b = 0; b < nbin; b++) {
		fprintf(f, "%.9g", (b + 0.5) * bin);
		for (int q = 0; q < ntop; q++)
			fprintf(f, "\t%.4f", lu[(size_t)top[q] * nbin + b]);
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(script, sizeof script,
		 "set title 'Utilisation of the busiest links'\nset xlabel 'seconds'\nset ylabel 'busy fraction'\n"
		 "set yrange [0:1.05]\nset key outside right top\nplot for [i=2:%d] '%s' using 1:i with steps lw 1.5 "
		 "title columnheader(i)\n", ntop + 1, dpath);
	for (size_t q = 0; q < nn; q++)
		free(names[q]);
	free(names);
	free(lu);
	if (hs_gp_plot(g, "links", 960, 420, script, img, sizeof img, err))
		return -1;
	o->plots++;
	hs_page_figure(pg, img, "Busy fraction over time of the eight busiest links.");
	return 0;
}

/* Kind run: the summary, then one section per step of the page, in the order the reader meets them. */
static int report_run(hs_h5r *h, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct run_facts r;
	run_read_facts(h, &r);
	if (run_open_page(pg, g->dir, &r, o, err))
		return -1;
	run_summary(pg, &r);
	struct table rk;
	if (table_from_h5(h, "/ranks", &rk))
		return hs_err_set(err, HS_EINPUT, "no /ranks table: not a `hetsim run --hdf5` file");
	if (run_breakdown(&rk, &r, g, pg, o, err) || run_timeline(h, &rk, &r, g, pg, o, err) ||
	    run_memory(h, &rk, g, pg, o, err) || run_links(h, g, pg, o, err)) {
		table_free(&rk);
		hs_page_abort(pg);
		return -1;
	}
	table_free(&rk);
	return 0;
}

/* ---------- sweep ---------- */

static int report_sweep(struct table *t, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, const char *metric,
			int maximise, hs_err *err)
{
	int cst = table_col(t, "status");
	int first_axis = table_col(t, "rank") + 1, naxes = cst - first_axis;
	size_t ok = 0;
	for (size_t r = 0; r < t->nrow; r++)
		ok += strcmp(t->cells[cst][r], "ok") == 0;
	char title[300], sub[600];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "Sweep");
	snprintf(sub, sizeof sub, "%s: %zu points, %zu feasible; ranked by %s (%s is best)", src, t->nrow, ok, metric,
		 maximise ? "largest" : "smallest");
	if (hs_page_open(pg, g->dir, title, sub, err))
		return -1;
	int cm = table_col(t, metric);
	/* numeric axes: every value parses */
	int num[HS_SWEEP_MAX_AXES], nnum = 0;
	for (int a = first_axis; a < cst && nnum < HS_SWEEP_MAX_AXES; a++) {
		int all = 1;
		for (size_t r = 0; r < t->nrow; r++)
			all &= isfinite(cell_num(t, a, r));
		if (all)
			num[nnum++] = a;
	}
	char dpath[1200], lpath[1200], img[256], script[4096];
	if (nnum >= 2 && cm >= 0 && ok) {
		int ax = num[0], ay = num[1];
		/* distinct sorted values of each */
		double xs[256], ys[256];
		int nx = 0, ny = 0;
		for (size_t r = 0; r < t->nrow; r++) {
			double x = cell_num(t, ax, r), y = cell_num(t, ay, r);
			int fx = 0, fy = 0;
			for (int i = 0; i < nx; i++)
				fx |= xs[i] == x;
			for (int i = 0; i < ny; i++)
				fy |= ys[i] == y;
			if (!fx && nx < 256)
				xs[nx++] = x;
			if (!fy && ny < 256)
				ys[ny++] = y;
		}
		for (int i = 1; i < nx; i++)
			for (int k = i; k > 0 && xs[k - 1] > xs[k]; k--) {
				double tmp = xs[k];
				xs[k] = xs[k - 1], xs[k - 1] = tmp;
			}
		for (int i = 1; i < ny; i++)
			for (int k = i; k > 0 && ys[k - 1] > ys[k]; k--) {
				double tmp = ys[k];
				ys[k] = ys[k - 1], ys[k - 1] = tmp;
			}
		double *best = hs_xcalloc((size_t)(nx * ny), sizeof *best);
		for (int i = 0; i < nx * ny; i++)
			best[i] = NAN;
		for (size_t r = 0; r < t->nrow; r++) {
			if (strcmp(t->cells[cst][r], "ok"))
				continue;
			double x = cell_num(t, ax, r), y = cell_num(t, ay, r), m = cell_num(t, cm, r);
			int i = 0, k = 0;
			while (i < nx && xs[i] != x)
				i++;
			while (k < ny && ys[k] != y)
				k++;
			if (i == nx || k == ny || isnan(m))
				continue;
			double *b = &best[k * nx + i];
			if (isnan(*b) || (maximise ? m > *b : m < *b))
				*b = m;
		}
		FILE *f = hs_gp_data(g, "heatmap", dpath, sizeof dpath);
		FILE *l = hs_gp_data(g, "heatmap_labels", lpath, sizeof lpath);
		for (int k = 0; k < ny; k++)
			for (int i = 0; i < nx; i++) {
				double b = best[k * nx + i];
				if (isnan(b))
					fprintf(l, "%d\t%d\tinfeasible\n", i, k);
				else
					fprintf(f, "%d\t%d\t%.6g\n", i, k, b), fprintf(l, "%d\t%d\t%.4g\n", i, k, b);
			}
		fclose(f);
		fclose(l);
		free(best);
		char xt[2048] = "set xtics (", ytt[2048] = "set ytics (";
		for (int i = 0; i < nx; i++) {
			char one[64];
			snprintf(one, sizeof one, "%s'%g' %d", i ? ", " : "", xs[i], i);
			strcat(xt, one);
		}
		for (int k = 0; k < ny; k++) {
			char one[64];
			snprintf(one, sizeof one, "%s'%g' %d", k ? ", " : "", ys[k], k);
			strcat(ytt, one);
		}
		snprintf(script, sizeof script,
			 "%s)\n%s)\nset title \"%s (best over the other axes)\" noenhanced\nset xlabel '%s' noenhanced\n"
			 "set ylabel '%s' noenhanced\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\nunset grid\n"
			 "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n%s\n"
			 "set cblabel '%s' noenhanced\nset object 1 rectangle from graph 0,0 to graph 1,1 behind "
			 "fc rgb '#eeeeee' fs solid noborder\n"
			 "plot '%s' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder fc palette notitle, "
			 "'%s' using 1:2:3 with labels font ',9' notitle\n",
			 xt, ytt, metric, t->names[ax], t->names[ay], nx - 1, ny - 1,
			 maximise ? "set palette negative" : "", metric, dpath, lpath);
		if (hs_gp_plot(g, "heatmap", 760, 560, script, img, sizeof img, err))
			goto fail;
		o->plots++;
		hs_page_section(pg, "Heat map");
		char cap[512];
		snprintf(cap, sizeof cap, "%s over %s and %s: the best value over the other axes at each cell; blank cells "
					  "have no feasible point.", metric, t->names[ax], t->names[ay]);
		hs_page_figure(pg, img, cap);
	}
	/* Pareto: time against cost (money when priced, else GPU-hours) per million tokens */
	int ct = table_col(t, "step_time_s"), cc = table_col(t, "cost_per_mtok"), cg = table_col(t, "gpu_hours_per_mtok");
	int priced = 0;
	for (size_t r = 0; r < t->nrow; r++)
		priced |= isfinite(cell_num(t, cc, r));
	int cy = priced ? cc : cg;
	if (ok && ct >= 0 && cy >= 0) {
		size_t *idx = hs_xcalloc(ok + 1, sizeof *idx), n = 0;
		for (size_t r = 0; r < t->nrow; r++)
			if (!strcmp(t->cells[cst][r], "ok") && isfinite(cell_num(t, ct, r)) && isfinite(cell_num(t, cy, r)))
				idx[n++] = r;
		for (size_t i = 1; i < n; i++)
			for (size_t k = i; k > 0 && (cell_num(t, ct, idx[k - 1]) > cell_num(t, ct, idx[k]) ||
						     (cell_num(t, ct, idx[k - 1]) == cell_num(t, ct, idx[k]) &&
						      cell_num(t, cy, idx[k - 1]) > cell_num(t, cy, idx[k])));
			     k--) {
				size_t tmp = idx[k];
				idx[k] = idx[k - 1], idx[k - 1] = tmp;
			}
		FILE *f = hs_gp_data(g, "pareto", dpath, sizeof dpath);
		FILE *l = hs_gp_data(g, "pareto_front", lpath, sizeof lpath);
		double by = INFINITY;
		hs_page_section(pg, "Pareto front: time against cost");
		int nh = naxes + 3;
		const char **hd = hs_xcalloc((size_t)nh, sizeof *hd);
		for (int a = 0; a < naxes; a++)
			hd[a] = t->names[first_axis + a];
		hd[naxes] = "step time (s)";
		hd[naxes + 1] = priced ? "cost per M tokens" : "GPU-hours per M tokens";
		hd[naxes + 2] = "MFU";
		for (size_t i = 0; i < n; i++) {
			double x = cell_num(t, ct, idx[i]), y = cell_num(t, cy, idx[i]);
			fprintf(f, "%.6g\t%.6g\n", x, y);
			if (y < by) {
				by = y;
				char lab[256] = "";
				for (int a = 0; a < naxes; a++) {
					const char *k = strrchr(t->names[first_axis + a], '.');
					char one[80];
					snprintf(one, sizeof one, "%s%s=%s", a ? " " : "", k ? k + 1 : t->names[first_axis + a],
						 t->cells[first_axis + a][idx[i]]);
					if (strlen(lab) + strlen(one) < sizeof lab)
						strcat(lab, one);
				}
				fprintf(l, "%.6g\t%.6g\t%s\n", x, y, lab);
			}
		}
		fclose(f);
		fclose(l);
		snprintf(script, sizeof script,
			 "set title 'Step time against cost per million tokens'\nset xlabel 'step time (s)'\n"
			 "set ylabel '%s'\nset key top right\nset offsets graph 0.02, graph 0.3, graph 0.3, graph 0.05\n"
			 "plot '%s' using 1:2 with points pt 7 ps 0.7 lc rgb '#bbbbbb' title 'feasible points', "
			 "'%s' using 1:2 with linespoints pt 7 ps 1.1 lw 2 lc rgb '#e15759' title 'Pareto front', "
			 "'%s' using 1:2:3 with labels rotate by 25 offset 0.8,0.6 left font ',8' noenhanced notitle\n",
			 priced ? "cost per M tokens" : "GPU-hours per M tokens", dpath, lpath, lpath);
		if (hs_gp_plot(g, "pareto", 900, 520, script, img, sizeof img, err)) {
			free(idx);
			free(hd);
			goto fail;
		}
		o->plots++;
		hs_page_figure(pg, img, priced ? "Every feasible point: step time against money per million tokens; the "
						 "red line joins the points that nothing beats on both."
					       : "Every feasible point: step time against GPU-hours per million tokens (no "
						 "price given: cost.gpu_hour); the red line joins the points that nothing "
						 "beats on both.");
		free(idx);
		/* the best points */
		hs_page_section(pg, "Best points");
		int cr = table_col(t, "rank"), cmfu = table_col(t, "mfu");
		hs_page_table(pg, nh, hd);
		for (int want = 1; want <= 20; want++) {
			for (size_t r = 0; r < t->nrow; r++) {
				if ((int)cell_num(t, cr, r) != want)
					continue;
				const char **row = hs_xcalloc((size_t)nh, sizeof *row);
				char a[32], b[32], c[32];
				for (int q = 0; q < naxes; q++)
					row[q] = t->cells[first_axis + q][r];
				fmt(a, sizeof a, "%.4f", cell_num(t, ct, r));
				fmt(b, sizeof b, "%.4g", cell_num(t, cy, r));
				fmt(c, sizeof c, "%.1f%%", 100 * cell_num(t, cmfu, r));
				row[naxes] = a, row[naxes + 1] = b, row[naxes + 2] = c;
				hs_page_row(pg, row);
				free(row);
			}
		}
		hs_page_table_end(pg);
		free(hd);
	}
	/* why points were skipped */
	int creason = table_col(t, "reason");
	if (ok < t->nrow && creason >= 0) {
		hs_page_section(pg, "Skipped points");
		const char *hd[] = {"points", "status", "first reason (example)"};
		hs_page_table(pg, 3, hd);
		/* group reasons that differ only in their numbers */
		char **seen = hs_xcalloc(t->nrow + 1, sizeof *seen);
		int *cnt = hs_xcalloc(t->nrow + 1, sizeof *cnt);
		size_t *ex = hs_xcalloc(t->nrow + 1, sizeof *ex), ns = 0;
		for (size_t r = 0; r < t->nrow; r++) {
			if (!strcmp(t->cells[cst][r], "ok"))
				continue;
			const char *why = t->cells[creason][r];
			char *key = hs_xcalloc(strlen(why) + 1, 1), *k = key;
			for (const char *c = why; *c && *c != '('; c++)
				if (!(*c >= '0' && *c <= '9') && *c != '.')
					*k++ = *c;
			size_t q = 0;
			for (; q < ns; q++)
				if (strcmp(seen[q], key) == 0)
					break;
			if (q == ns)
				seen[ns] = key, ex[ns] = r, ns++;
			else
				free(key);
			cnt[q]++;
		}
		for (size_t q = 0; q < ns; q++) {
			char c[32];
			snprintf(c, sizeof c, "%d", cnt[q]);
			const char *row[] = {c, t->cells[cst][ex[q]], t->cells[creason][ex[q]]};
			hs_page_row(pg, row);
		}
		hs_page_table_end(pg);
		for (size_t q = 0; q < ns; q++)
			free(seen[q]);
		free(seen);
		free(cnt);
		free(ex);
	}
	return 0;
fail:
	hs_page_abort(pg);
	return -1;
}

/* ---------- validate and fabric (JSON, read as YAML: JSON is YAML) ---------- */

static double ynum(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n && n->kind == HS_Y_SCALAR && strcmp(n->str, "null") ? atof(n->str) : NAN;
}

static const char *ystr(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n && n->kind == HS_Y_SCALAR ? n->str : "";
}

static int report_validate(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o,
			   hs_err *err)
{
	const hs_ynode *es = hs_yaml_get(root, "entries");
	double mape = ynum(root, "mape");
	char sub[600];
	snprintf(sub, sizeof sub, "%s: %zu entries, MAPE %.1f%%, %s over tolerance", src, es->n, 100 * mape,
		 ystr(root, "failed"));
	if (hs_page_open(pg, g->dir, o->title ? o->title : "Predicted against measured", sub, err))
		return -1;
	char dpath[1200], img[256], script[2048];
	FILE *f = hs_gp_data(g, "validate", dpath, sizeof dpath);
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < es->n; i++) {
		double p = ynum(es->vals[i], "predicted_s"), m = ynum(es->vals[i], "measured_s");
		int pass = strcmp(ystr(es->vals[i], "pass"), "false") != 0;
		fprintf(f, "%.6g\t%.6g\t%d\t%s\n", m, p, pass, ystr(es->vals[i], "entry"));
		lo = fmin(lo, fmin(p, m)), hi = fmax(hi, fmax(p, m));
	}
	fclose(f);
	snprintf(script, sizeof script,
		 "set title 'Predicted against measured step time'\nset xlabel 'measured (s)'\nset ylabel 'predicted (s)'\n"
		 "set logscale xy\nset xrange [%g:%g]\nset yrange [%g:%g]\nset key top left\nset size square\n"
		 "plot x with lines lc rgb '#888888' title 'exact', 1.1*x with lines dt 2 lc rgb '#bbbbbb' title '±10%%', "
		 "0.9*x with lines dt 2 lc rgb '#bbbbbb' notitle, "
		 "'%s' using 1:($3==1?$2:NaN) with points pt 7 ps 1.2 lc rgb '#59a14f' title 'within tolerance', "
		 "'%s' using 1:($3==0?$2:NaN) with points pt 7 ps 1.2 lc rgb '#e15759' title 'over tolerance'\n",
		 lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5, dpath, dpath);
	if (hs_gp_plot(g, "validate", 640, 600, script, img, sizeof img, err)) {
		hs_page_abort(pg);
		return -1;
	}
	o->plots++;
	hs_page_section(pg, "Predicted against measured");
	hs_page_figure(pg, img, "Each entry of the manifest: predicted step time against the measured one (log scales); "
				"the dashed lines are ±10%.");
	const char *hd[] = {"entry", "predicted (s)", "measured (s)", "error", "pass"};
	hs_page_table(pg, 5, hd);
	for (size_t i = 0; i < es->n; i++) {
		char a[32], b[32], c[32];
		fmt(a, sizeof a, "%.4f", ynum(es->vals[i], "predicted_s"));
		fmt(b, sizeof b, "%.4f", ynum(es->vals[i], "measured_s"));
		fmt(c, sizeof c, "%+.1f%%", 100 * ynum(es->vals[i], "error"));
		const char *row[] = {ystr(es->vals[i], "entry"), a, b, c, ystr(es->vals[i], "pass")};
		hs_page_row(pg, row);
	}
	hs_page_table_end(pg);
	return 0;
}

static int report_fabric(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	const hs_ynode *ss = hs_yaml_get(root, "schemes");
	char sub[600];
	snprintf(sub, sizeof sub, "%s: fabric experiment, %zu credit schemes, focus: %s", src, ss ? ss->n : 0,
		 ystr(root, "focus"));
	if (hs_page_open(pg, g->dir, o->title ? o->title : ystr(root, "name"), sub, err))
		return -1;
	char dpath[1200], img[256], script[4096] = "", plot[2048] = "";
	FILE *f = hs_gp_data(g, "latency", dpath, sizeof dpath);
	for (size_t i = 0; ss && i < ss->n; i++) {
		const hs_ynode *fo = hs_yaml_get(ss->vals[i], "focus");
		/* the tail through the percentiles: P(latency > p50) = 0.5, > p99 = 0.01, > p99.9 = 0.001 */
		fprintf(f, "# %s\n%.6g\t0.5\n%.6g\t0.01\n%.6g\t0.001\n\n\n", ystr(ss->vals[i], "scheme"), ynum(fo, "p50_ns"),
			ynum(fo, "p99_ns"), ynum(fo, "p999_ns"));
		char one[200];
		snprintf(one, sizeof one, "%s'%s' index %zu using 1:2 with linespoints lw 2 pt 7 lc rgb '%s' title '%s'",
			 i ? ", " : "", dpath, i, palette[i % 10], ystr(ss->vals[i], "scheme"));
		if (strlen(plot) + strlen(one) < sizeof plot)
			strcat(plot, one);
	}
	fclose(f);
	snprintf(script, sizeof script,
		 "set title 'Latency tail of the focus traffic, per credit scheme'\nset xlabel 'latency (ns)'\n"
		 "set ylabel 'fraction of operations slower'\nset logscale xy\nset yrange [0.0005:1]\nset ytics ('half' 0.5, "
		 "'1 in 100' 0.01, '1 in 1000' 0.001)\nset key outside right top noenhanced\nplot %s\n", plot);
	if (hs_gp_plot(g, "latency", 900, 480, script, img, sizeof img, err))
		goto fail;
	o->plots++;
	hs_page_section(pg, "Latency");
	hs_page_figure(pg, img, "Complementary CDF of the focus operations' latency through its median, 99th and "
				"99.9th percentiles (the fabric result keeps percentiles, not every sample).");
	/* occupancy of the receive buffer over time */
	plot[0] = 0;
	f = hs_gp_data(g, "occupancy", dpath, sizeof dpath);
	for (size_t i = 0; ss && i < ss->n; i++) {
		const hs_ynode *q = hs_yaml_get(hs_yaml_get(ss->vals[i], "queues"), "rxbuf_bytes");
		const hs_ynode *se = hs_yaml_get(q, "series");
		double bin = ynum(q, "bin_ns");
		fprintf(f, "# %s\n", ystr(ss->vals[i], "scheme"));
		for (size_t k = 0; se && k < se->n; k++)
			fprintf(f, "%.6g\t%s\n", (k + 0.5) * bin / 1e3, se->vals[k]->str);
		fprintf(f, "\n\n");
		char one[200];
		snprintf(one, sizeof one, "%s'%s' index %zu using 1:2 with steps lw 1.5 lc rgb '%s' title '%s'", i ? ", " : "",
			 dpath, i, palette[i % 10], ystr(ss->vals[i], "scheme"));
		if (strlen(plot) + strlen(one) < sizeof plot)
			strcat(plot, one);
	}
	fclose(f);
	snprintf(script, sizeof script,
		 "set title 'Receive-buffer occupancy over time'\nset xlabel 'time (us)'\nset ylabel 'bytes'\n"
		 "set key outside right top noenhanced\nplot %s\n", plot);
	if (hs_gp_plot(g, "occupancy", 900, 420, script, img, sizeof img, err))
		goto fail;
	o->plots++;
	hs_page_figure(pg, img, "Mean receive-buffer occupancy per time bin, per scheme.");
	hs_page_section(pg, "Per class");
	const char *hd[] = {"scheme", "class", "ops", "p50 (ns)", "p99 (ns)", "p99.9 (ns)", "GB/s"};
	hs_page_table(pg, 7, hd);
	for (size_t i = 0; ss && i < ss->n; i++) {
		const hs_ynode *cl = hs_yaml_get(ss->vals[i], "classes");
		for (size_t k = 0; cl && k < cl->n; k++) {
			char a[32], b[32], c[32], d[32];
			fmt(a, sizeof a, "%.0f", ynum(cl->vals[k], "p50_ns"));
			fmt(b, sizeof b, "%.0f", ynum(cl->vals[k], "p99_ns"));
			fmt(c, sizeof c, "%.0f", ynum(cl->vals[k], "p999_ns"));
			fmt(d, sizeof d, "%.2f", ynum(cl->vals[k], "GB_per_s"));
			const char *row[] = {ystr(ss->vals[i], "scheme"), ystr(cl->vals[k], "name"), ystr(cl->vals[k], "ops"),
					     a, b, c, d};
			hs_page_row(pg, row);
		}
	}
	hs_page_table_end(pg);
	return 0;
fail:
	hs_page_abort(pg);
	return -1;
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
	return report_run(s->h5, g, pg, o, err);
}

/* The sweep's HDF5 says which metric ranked it, and in which direction. */
static int make_sweep_h5(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct table t;
	char metric[64] = "step_time_s", goal[8] = "min";
	hs_h5_get_str(s->h5, "/", "metric", metric, sizeof metric);
	hs_h5_get_str(s->h5, "/", "goal", goal, sizeof goal);
	int rc = table_from_h5(s->h5, "/sweep", &t)
			 ? hs_err_set(err, HS_EINPUT, "%s: no /sweep table", s->path)
			 : report_sweep(&t, s->path, g, pg, o, metric, strcmp(goal, "max") == 0, err);
	if (!rc || t.names)
		table_free(&t);
	return rc;
}

/* The CSV does not say which metric ranked it: the row ranked 1 and its neighbours tell. */
static int make_sweep_csv(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct table t;
	if (table_from_csv(s->path, &t, err))
		return -1;
	int rc = report_sweep(&t, s->path, g, pg, o, "step_time_s", 0, err);
	table_free(&t);
	return rc;
}

static int is_validate(const hs_ynode *root)
{
	const hs_ynode *es = hs_yaml_get(root, "entries");
	return es && es->kind == HS_Y_SEQ;
}

static int make_validate(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	return report_validate(s->root, s->path, g, pg, o, err);
}

static int is_fabric(const hs_ynode *root) { return strcmp(ystr(root, "kind"), "fabric") == 0; }

static int make_fabric(const struct source *s, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	return report_fabric(s->root, s->path, g, pg, o, err);
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

int hs_report_make(const char *result, const char *dir, hs_report_opts *o, hs_err *err)
{
	hs_gp g;
	hs_page pg;
	o->plots = 0;
	FILE *probe = fopen(result, "rb");
	if (!probe)
		return hs_err_set(err, HS_EINPUT, "%s: cannot open", result);
	unsigned char magic[8] = {0};
	size_t nm = fread(magic, 1, 8, probe);
	fclose(probe);
	int is_h5 = nm == 8 && memcmp(magic, "\x89HDF\r\n\x1a\n", 8) == 0;
	const char *ext = strrchr(result, '.');
	if (hs_gp_init(&g, dir, o->format, err))
		return -1;
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
		rc = k ? k->make(&src, &g, &pg, o, err)
		       : hs_err_set(err, HS_EINPUT, "%s: not a hetsim result (hetsim_kind '%s')", result, kind);
		hs_h5_close(src.h5);
		return rc ? -1 : hs_page_close(&pg, err);
	}
	if (ext && strcmp(ext, ".csv") == 0) {
		k = find_kind(FORM_CSV, NULL, NULL);
		snprintf(o->kind, sizeof o->kind, "%s", k->name);
		rc = k->make(&src, &g, &pg, o, err);
		return rc ? -1 : hs_page_close(&pg, err);
	}
	hs_ydoc *d = hs_yaml_load_file(result, err);
	if (!d)
		return -1;
	src.root = hs_yaml_root(d);
	k = find_kind(FORM_JSON, NULL, src.root);
	if (k) {
		snprintf(o->kind, sizeof o->kind, "%s", k->name);
		rc = k->make(&src, &g, &pg, o, err);
	} else {
		/* lists the rows of `kinds`, by form */
		rc = hs_err_set(err, HS_EINPUT,
				"%s: not a result hetsim report reads (expected the HDF5 of run or sweep, a sweep CSV, or "
				"the JSON of validate --json or of a fabric run --json)",
				result);
	}
	hs_yaml_free(d);
	return rc ? -1 : hs_page_close(&pg, err);
}
