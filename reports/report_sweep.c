/* The report of a sweep (its CSV or HDF5): the ranking and how the metric moves along each axis. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

int hs_report_sweep(struct hs_rtable *t, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, const char *metric,
			int maximise, hs_err *err)
{
	int cst = hs_rtable_col(t, "status");
	int first_axis = hs_rtable_col(t, "rank") + 1, naxes = cst - first_axis;
	if (cst < 0 || first_axis < 1 || naxes < 0)
		return hs_err_set(err, HS_EINPUT, "%s: not a sweep table (expected the columns rank, the axes, status, ...)",
				  src);
	size_t ok = 0;
	for (size_t r = 0; r < t->nrow; r++)
		ok += strcmp(t->cells[cst][r], "ok") == 0;
	/* the metric that ranked the sweep: a column, numeric wherever a point ran */
	int cmet = hs_rtable_col(t, metric);
	if (cmet < 0)
		return hs_err_set(err, HS_EINPUT, "%s: no column '%s', the metric the sweep was ranked by", src, metric);
	for (size_t r = 0; r < t->nrow; r++)
		if (strcmp(t->cells[cst][r], "ok") == 0 && !isfinite(hs_rtable_num(t, cmet, r)))
			return hs_err_set(err, HS_EINPUT, "%s: row %zu: the metric %s is '%s' (expected a number)", src,
					  r + 1, metric, t->cells[cmet][r]);
	char title[300], sub[600];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "Sweep");
	snprintf(sub, sizeof sub, "%s: %zu points, %zu feasible; ranked by %s (%s is best)", src, t->nrow, ok, metric,
		 maximise ? "largest" : "smallest");
	if (hs_page_open(pg, g->dir, title, sub, err))
		return -1;
	int cm = hs_rtable_col(t, metric);
	/* numeric axes: every value parses */
	int num[HS_SWEEP_MAX_AXES], nnum = 0;
	for (int a = first_axis; a < cst && nnum < HS_SWEEP_MAX_AXES; a++) {
		int all = 1;
		for (size_t r = 0; r < t->nrow; r++)
			all &= isfinite(hs_rtable_num(t, a, r));
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
			double x = hs_rtable_num(t, ax, r), y = hs_rtable_num(t, ay, r);
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
			double x = hs_rtable_num(t, ax, r), y = hs_rtable_num(t, ay, r), m = hs_rtable_num(t, cm, r);
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
	int ct = hs_rtable_col(t, "step_time_s"), cc = hs_rtable_col(t, "cost_per_mtok"), cg = hs_rtable_col(t, "gpu_hours_per_mtok");
	int priced = 0;
	for (size_t r = 0; r < t->nrow; r++)
		priced |= isfinite(hs_rtable_num(t, cc, r));
	int cy = priced ? cc : cg;
	if (ok && ct >= 0 && cy >= 0) {
		size_t *idx = hs_xcalloc(ok + 1, sizeof *idx), n = 0;
		for (size_t r = 0; r < t->nrow; r++)
			if (!strcmp(t->cells[cst][r], "ok") && isfinite(hs_rtable_num(t, ct, r)) && isfinite(hs_rtable_num(t, cy, r)))
				idx[n++] = r;
		for (size_t i = 1; i < n; i++)
			for (size_t k = i; k > 0 && (hs_rtable_num(t, ct, idx[k - 1]) > hs_rtable_num(t, ct, idx[k]) ||
						     (hs_rtable_num(t, ct, idx[k - 1]) == hs_rtable_num(t, ct, idx[k]) &&
						      hs_rtable_num(t, cy, idx[k - 1]) > hs_rtable_num(t, cy, idx[k])));
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
		/* the front's points are numbered on the plot and listed in a table below it: their settings as
		 * labels would cover the points around them */
		size_t *front = hs_xcalloc(n + 1, sizeof *front), nf = 0;
		for (size_t i = 0; i < n; i++) {
			double x = hs_rtable_num(t, ct, idx[i]), y = hs_rtable_num(t, cy, idx[i]);
			fprintf(f, "%.6g\t%.6g\n", x, y);
			if (y < by) {
				by = y;
				front[nf++] = idx[i];
				fprintf(l, "%.6g\t%.6g\t%zu\n", x, y, nf);
			}
		}
		snprintf(script, sizeof script,
			 "set title 'Step time against cost per million tokens'\nset xlabel 'step time (s)'\n"
			 "set ylabel '%s'\nset key top right\nset offsets graph 0.02, graph 0.05, graph 0.1, graph 0.1\n"
			 "plot '%s' using 1:2 with points pt 7 ps 0.7 lc rgb '#bbbbbb' title 'feasible points', "
			 "'%s' using 1:2 with linespoints pt 7 ps 1.1 lw 2 lc rgb '#e15759' title 'Pareto front', "
			 "'%s' using 1:2:3 with labels offset 0,-1.1 font ',10' tc rgb '#e15759' notitle\n",
			 priced ? "cost per M tokens" : "GPU-hours per M tokens", dpath, lpath, lpath);
		if (hs_gp_plot(g, "pareto", 900, 520, script, img, sizeof img, err)) {
			free(idx);
			free(hd);
			free(front);
			goto fail;
		}
		o->plots++;
		hs_page_figure(pg, img, priced ? "Every feasible point: step time against money per million tokens; the "
						 "red line joins the points that nothing beats on both."
					       : "Every feasible point: step time against GPU-hours per million tokens (no "
						 "price given: cost.gpu_hour); the red line joins the points that nothing "
						 "beats on both.");
		free(idx);
		hs_page_para(pg, "The front's points, as numbered on the plot:");
		const char **fh = hs_xcalloc((size_t)nh + 1, sizeof *fh);
		fh[0] = "#";
		for (int q = 0; q < nh; q++)
			fh[q + 1] = hd[q];
		hs_page_table(pg, nh + 1, fh);
		int cmf = hs_rtable_col(t, "mfu");
		for (size_t k = 0; k < nf; k++) {
			size_t r = front[k];
			const char **row = hs_xcalloc((size_t)nh + 1, sizeof *row);
			char nb[16], a[32], b[32], c[32];
			snprintf(nb, sizeof nb, "%zu", k + 1);
			row[0] = nb;
			for (int q = 0; q < naxes; q++)
				row[q + 1] = t->cells[first_axis + q][r];
			hs_report_fmt(a, sizeof a, "%.4f", hs_rtable_num(t, ct, r));
			hs_report_fmt(b, sizeof b, "%.4g", hs_rtable_num(t, cy, r));
			hs_report_fmt(c, sizeof c, "%.1f%%", 100 * hs_rtable_num(t, cmf, r));
			row[naxes + 1] = a, row[naxes + 2] = b, row[naxes + 3] = c;
			hs_page_row(pg, row);
			free(row);
		}
		hs_page_table_end(pg);
		free(fh);
		free(front);
		/* the best points */
		hs_page_section(pg, "Best points");
		int cr = hs_rtable_col(t, "rank"), cmfu = hs_rtable_col(t, "mfu");
		hs_page_table(pg, nh, hd);
		for (int want = 1; want <= 20; want++) {
			for (size_t r = 0; r < t->nrow; r++) {
				if ((int)hs_rtable_num(t, cr, r) != want)
					continue;
				const char **row = hs_xcalloc((size_t)nh, sizeof *row);
				char a[32], b[32], c[32];
				for (int q = 0; q < naxes; q++)
					row[q] = t->cells[first_axis + q][r];
				hs_report_fmt(a, sizeof a, "%.4f", hs_rtable_num(t, ct, r));
				hs_report_fmt(b, sizeof b, "%.4g", hs_rtable_num(t, cy, r));
				hs_report_fmt(c, sizeof c, "%.1f%%", 100 * hs_rtable_num(t, cmfu, r));
				row[naxes] = a, row[naxes + 1] = b, row[naxes + 2] = c;
				hs_page_row(pg, row);
				free(row);
			}
		}
		hs_page_table_end(pg);
		free(hd);
	}
	/* why points were skipped */
	int creason = hs_rtable_col(t, "reason");
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
