/* The report of one run (HDF5 from `hetsim run --hdf5`): summary, breakdown per rank, timeline, memory and
 * the busiest links. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

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
		hs_report_fmt(v, sizeof v, kv[i].f, kv[i].x);
		const char *row[] = {kv[i].k, v};
		hs_page_row(pg, row);
	}
	if (isfinite(r->cps)) {
		char k[64];
		snprintf(k, sizeof k, "cost per step (%s)", r->cur);
		hs_report_fmt(v, sizeof v, "%.4f", r->cps);
		hs_page_row(pg, (const char *const[]){k, v});
		snprintf(k, sizeof k, "cost per M tokens (%s)", r->cur);
		hs_report_fmt(v, sizeof v, "%.3f", r->cpm);
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
static int run_breakdown(const struct hs_rtable *rk, const struct run_facts *r, hs_gp *g, hs_page *pg,
			 hs_report_opts *o, hs_err *err)
{
	int use[NRANK_PARTS], nuse = 0;
	for (int k = 0; k < NRANK_PARTS; k++) {
		double s = 0;
		int c = hs_rtable_col(rk, rank_parts[k]);
		for (size_t q = 0; q < rk->nrow; q++)
			s += fabs(hs_rtable_num(rk, c, q) > 0 ? hs_rtable_num(rk, c, q) : 0);
		if (s > 1e-9 || k == 0)
			use[nuse++] = k;
	}
	char dpath[1200], img[256], script[4096];
	FILE *f = hs_gp_data(g, "breakdown", dpath, sizeof dpath);
	int cst = hs_rtable_col(rk, "stage"), cdp = hs_rtable_col(rk, "dp_index");
	fprintf(f, "rank");
	for (int k = 0; k < nuse; k++)
		fprintf(f, "\t%s", rank_labels[use[k]]);
	fprintf(f, "\n");
	for (size_t q = 0; q < rk->nrow; q++) {
		fprintf(f, r->dp > 1 && rk->nrow > r->pp ? "s%s/d%s" : "stage %s", rk->cells[cst][q], rk->cells[cdp][q]);
		for (int k = 0; k < nuse; k++) {
			double x = hs_rtable_num(rk, hs_rtable_col(rk, rank_parts[use[k]]), q);
			fprintf(f, "\t%.9g", x > 0 ? x : 0);
		}
		fprintf(f, "\n");
	}
	char cols[256] = "";
	for (int k = 0; k < nuse; k++) {
		strcat(cols, hs_report_palette[use[k] % 10]);
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
	int cdev = hs_rtable_col(rk, "device"), cm = hs_rtable_col(rk, "multiplicity");
	for (size_t q = 0; q < rk->nrow && q < 64; q++) {
		char a[32], b[32], c[32], d[32], e[32], fm[32], lab[48];
		double ex = 0;
		for (int k = 1; k <= 5; k++)
			ex += hs_rtable_num(rk, hs_rtable_col(rk, rank_parts[k]), q);
		snprintf(lab, sizeof lab, "stage %s dp %s", rk->cells[cst][q], rk->cells[cdp][q]);
		snprintf(fm, sizeof fm, "%s", rk->cells[cm][q]);
		hs_report_fmt(a, sizeof a, "%.4f", hs_rtable_num(rk, hs_rtable_col(rk, "finish_s"), q));
		hs_report_fmt(b, sizeof b, "%.4f", hs_rtable_num(rk, hs_rtable_col(rk, "compute_s"), q));
		hs_report_fmt(c, sizeof c, "%.4f", ex);
		hs_report_fmt(d, sizeof d, "%.4f", hs_rtable_num(rk, hs_rtable_col(rk, "bubble_s"), q));
		hs_report_fmt(e, sizeof e, "%.1f", hs_rtable_num(rk, hs_rtable_col(rk, "memory_bytes"), q) / HS_GiB);
		const char *row[] = {lab, rk->cells[cdev][q], fm, a, b, c, d, e};
		hs_page_row(pg, row);
	}
	hs_page_table_end(pg);
	return 0;
}

/* A Gantt chart of the first 16 ranks' streams from /tasks (written by --hdf5-tasks), or a note saying how
 * to get one. */
static int run_timeline(hs_h5r *h, const struct hs_rtable *rk, const struct run_facts *r, hs_gp *g, hs_page *pg,
			hs_report_opts *o, hs_err *err)
{
	struct hs_rtable tk;
	hs_page_section(pg, "Pipeline timeline");
	static const char *const need[] = {"rank", "stream", "what", "start_s", "end_s", NULL};
	if (hs_rtable_from_h5(h, "/tasks", need, &tk) != 0) {
		hs_page_para(pg, "This result has no task table: run with --hdf5-tasks to draw the timeline.");
		return 0;
	}
	char dpath[1200], img[256], script[4096];
	int cst = hs_rtable_col(rk, "stage");
	int crk = hs_rtable_col(&tk, "rank"), cs = hs_rtable_col(&tk, "stream"), cw = hs_rtable_col(&tk, "what"),
	    c0 = hs_rtable_col(&tk, "start_s"), c1 = hs_rtable_col(&tk, "end_s");
	int maxr = 16, nr = (int)rk->nrow < maxr ? (int)rk->nrow : maxr;
	int used[8] = {0};
	FILE *f = hs_gp_data(g, "timeline", dpath, sizeof dpath);
	for (size_t q = 0; q < tk.nrow; q++) {
		int rr = (int)hs_rtable_num(&tk, crk, q), s = (int)hs_rtable_num(&tk, cs, q), w = (int)hs_rtable_num(&tk, cw, q);
		if (rr >= nr || w < 0 || w > 7)
			continue;
		double a = hs_rtable_num(&tk, c0, q), b = hs_rtable_num(&tk, c1, q);
		if (!(b > a))
			continue;
		used[w] = 1;
		unsigned col = (unsigned)strtoul(what_colors[w] + 1, NULL, 16);
		fprintf(f, "%.9g\t%d\t%.9g\t%.3f\t%u\n", (a + b) / 2, rr * 4 + s, (b - a) / 2, s == 0 ? 0.4 : 0.25, col);
	}
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
	hs_rtable_free(&tk);
	return rc ? -1 : 0;
}

/* Memory of one GPU per stage from /stages, stacked by kind, against the usable capacity /ranks reports;
 * nothing when the file has no /stages. */
static int run_memory(hs_h5r *h, const struct hs_rtable *rk, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct hs_rtable st;
	static const char *const need[] = {"stage", NULL};
	if (hs_rtable_from_h5(h, "/stages", need, &st) != 0)
		return 0;
	static const char *const mparts[] = {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
					     "logits_bytes"};
	char dpath[1200], img[256], script[4096];
	int cst = hs_rtable_col(rk, "stage"), sst = hs_rtable_col(&st, "stage");
	FILE *f = hs_gp_data(g, "memory", dpath, sizeof dpath);
	fprintf(f, "stage\tweights\tgradients\toptimizer\tactivations\tlogits\tcapacity\n");
	for (size_t q = 0; q < st.nrow; q++) {
		fprintf(f, "stage %s", st.cells[sst][q]);
		for (int k = 0; k < 5; k++)
			fprintf(f, "\t%.6g", hs_rtable_num(&st, hs_rtable_col(&st, mparts[k]), q) / HS_GiB);
		double cap = NAN;
		for (size_t x = 0; x < rk->nrow; x++)
			if (strcmp(rk->cells[cst][x], st.cells[sst][q]) == 0) {
				cap = hs_rtable_num(rk, hs_rtable_col(rk, "memory_capacity_bytes"), x);
				break;
			}
		fprintf(f, "\t%.6g\n", cap / HS_GiB);
	}
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
	hs_rtable_free(&st);
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
	/* the matrix beside the /links table (schema 2), or inside the /links group (schema 1) */
	if (!(hs_h5_get_num(h, "/", "links", &nl) == 0 && nl > 0 &&
	      (hs_h5_read_matrix(h, "/links_utilisation", &lu, &nlk, &nbin) == 0 ||
	       (!hs_h5_error(h) && hs_h5_read_matrix(h, "/links/utilisation", &lu, &nlk, &nbin) == 0)))) {
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
	/* Links whose series are the same (the lanes of a symmetric fabric) drawn once, named by the first with
	 * a count: eight identical lines would hide behind each other. The 8 busiest classes get a line each, the
	 * remaining links one dashed line of their mean. */
	int *cls = hs_xcalloc(nlk + 1, sizeof *cls), *csize = hs_xcalloc(nlk + 1, sizeof *csize), ncls = 0;
	int *crep = hs_xcalloc(nlk + 1, sizeof *crep);
	for (size_t l = 0; l < nlk; l++) {
		int c = 0;
		while (c < ncls && memcmp(&lu[l * nbin], &lu[(size_t)crep[c] * nbin], nbin * sizeof *lu) != 0)
			c++;
		if (c == ncls)
			crep[ncls++] = (int)l;
		cls[l] = c;
		csize[c]++;
	}
	int top[8], ntop = 0;
	for (int k = 0; k < 8 && k < ncls; k++) {
		int best = -1;
		double bm = -1;
		for (int c = 0; c < ncls; c++) {
			int taken = 0;
			for (int q = 0; q < ntop; q++)
				taken |= top[q] == c;
			double m = 0;
			for (size_t b = 0; b < nbin; b++)
				m += lu[(size_t)crep[c] * nbin + b];
			if (!taken && m > bm)
				bm = m, best = c;
		}
		top[ntop++] = best;
	}
	size_t nrest = 0;
	for (size_t l = 0; l < nlk; l++) {
		int in = 0;
		for (int q = 0; q < ntop; q++)
			in |= cls[l] == top[q];
		nrest += !in;
	}
	FILE *f = hs_gp_data(g, "links", dpath, sizeof dpath);
	fprintf(f, "time_s");
	for (int q = 0; q < ntop; q++) {
		int l = crep[top[q]];
		const char *nm = (size_t)l < nn ? names[l] : "link";
		if (csize[top[q]] > 1)
			fprintf(f, "\t\"%s (+%d alike)\"", nm, csize[top[q]] - 1);
		else
			fprintf(f, "\t\"%s\"", nm);
	}
	if (nrest)
		fprintf(f, "\t\"mean of the other %zu links\"", nrest);
	fprintf(f, "\n");
	/* one bin (analytical fidelity: the closed forms' bytes over the run, sim/exec/comm_closed.c): the mean
	 * drawn flat from the run's start to its end, since steps of a single point draw nothing */
	double ymax = 1;
	for (size_t r = 0, rows = nbin == 1 ? 2 : nbin; r < rows; r++) {
		size_t b = nbin == 1 ? 0 : r;
		fprintf(f, "%.9g", nbin == 1 ? r * bin : (b + 0.5) * bin);
		for (int q = 0; q < ntop; q++)
			ymax = lu[(size_t)crep[top[q]] * nbin + b] > ymax ? lu[(size_t)crep[top[q]] * nbin + b] : ymax;
		for (int q = 0; q < ntop; q++)
			fprintf(f, "\t%.4f", lu[(size_t)crep[top[q]] * nbin + b]);
		if (nrest) {
			double sum = 0;
			for (size_t l = 0; l < nlk; l++) {
				int in = 0;
				for (int q = 0; q < ntop; q++)
					in |= cls[l] == top[q];
				sum += in ? 0 : lu[l * nbin + b];
			}
			fprintf(f, "\t%.4f", sum / (double)nrest);
		}
		fprintf(f, "\n");
	}
	/* the series spans more than the step (its bins cover the run's estimate with a margin): the step only */
	double step = 0;
	char xr[64] = "";
	if (hs_h5_get_num(h, "/", "step_time_s", &step) == 0 && step > 0 && step < nbin * bin)
		snprintf(xr, sizeof xr, "set xrange [0:%.6g]\n", step);
	snprintf(script, sizeof script,
		 "set title 'Utilisation of the busiest links'\nset xlabel 'seconds'\nset ylabel 'busy fraction'\n"
		 "set yrange [0:%.4g]\n%sset key outside right top\nplot for [i=2:%d] '%s' using 1:i with steps lw 1.5 "
		 "title columnheader(i)%s\n",
		 1.05 * ymax, xr, ntop + 1, dpath,
		 nrest ? "" : "");
	if (nrest) {
		size_t l = strlen(script);
		snprintf(script + l - 1, sizeof script - l + 1,
			 ", '%s' using 1:%d with steps lw 1.5 dt 2 lc rgb '#888888' title columnheader(%d)\n", dpath,
			 ntop + 2, ntop + 2);
	}
	free(cls);
	free(csize);
	free(crep);
	for (size_t q = 0; q < nn; q++)
		free(names[q]);
	free(names);
	free(lu);
	if (hs_gp_plot(g, "links", 960, 420, script, img, sizeof img, err))
		return -1;
	o->plots++;
	hs_page_figure(pg, img, "Busy fraction over the step of the busiest links: links with the same series (the "
				"lanes of a symmetric fabric) drawn once with their count, the rest as one dashed mean.");
	return 0;
}

/* Kind run: the summary, then one section per step of the page, in the order the reader meets them. */
int hs_report_run(hs_h5r *h, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	struct run_facts r;
	run_read_facts(h, &r);
	if (run_open_page(pg, g->dir, &r, o, err))
		return -1;
	run_summary(pg, &r);
	struct hs_rtable rk;
	static const char *const need[] = {"stage", "dp_index", "multiplicity", "device", NULL};
	if (hs_rtable_from_h5(h, "/ranks", need, &rk))
		return hs_err_set(err, HS_EINPUT, "no /ranks table: not a `hetsim run --hdf5` file");
	if (run_breakdown(&rk, &r, g, pg, o, err) || run_timeline(h, &rk, &r, g, pg, o, err) ||
	    run_memory(h, &rk, g, pg, o, err) || run_links(h, g, pg, o, err)) {
		hs_rtable_free(&rk);
		hs_page_abort(pg);
		return -1;
	}
	hs_rtable_free(&rk);
	return 0;
}
