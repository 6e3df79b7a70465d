/* The report of `hetsim validate --json`: predicted against measured, per entry, with the tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

double hs_report_ynum(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n && n->kind == HS_Y_SCALAR && strcmp(n->str, "null") ? atof(n->str) : NAN;
}

const char *hs_report_ystr(const hs_ynode *m, const char *k)
{
	const hs_ynode *n = hs_yaml_get(m, k);
	return n && n->kind == HS_Y_SCALAR ? n->str : "";
}

int hs_report_validate(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o,
			   hs_err *err)
{
	const hs_ynode *es = hs_yaml_get(root, "entries");
	double mape = hs_report_ynum(root, "mape");
	char sub[600];
	snprintf(sub, sizeof sub, "%s: %zu entries, MAPE %.1f%%, %s over tolerance", src, es->n, 100 * mape,
		 hs_report_ystr(root, "failed"));
	if (hs_page_open(pg, g->dir, o->title ? o->title : "Predicted against measured", sub, err))
		return -1;
	char dpath[1200], img[256], script[4096];
	FILE *f = hs_gp_data(g, "validate", dpath, sizeof dpath);
	double lo = INFINITY, hi = 0;
	/* the band is each time row's own tolerance (the entry's, else the manifest's): up to four distinct ones
	 * are drawn, widest first; rows without a tolerance draw none */
	double tols[4];
	int ntol = 0, more = 0;
	for (size_t i = 0; i < es->n; i++) {
		double p = hs_report_ynum(es->vals[i], "predicted_s"), m = hs_report_ynum(es->vals[i], "measured_s");
		if (!isfinite(p) || !isfinite(m)) /* a memory row: not a time */
			continue;
		double t = hs_report_ynum(es->vals[i], "tolerance");
		if (isfinite(t) && t > 0) {
			int seen = 0;
			for (int k = 0; k < ntol; k++)
				seen |= tols[k] == t;
			if (!seen && ntol < 4)
				tols[ntol++] = t;
			else if (!seen)
				more = 1;
		}
		int pass = strcmp(hs_report_ystr(es->vals[i], "pass"), "false") != 0;
		fprintf(f, "%.6g\t%.6g\t%d\t%s\n", m, p, pass, hs_report_ystr(es->vals[i], "entry"));
		lo = fmin(lo, fmin(p, m)), hi = fmax(hi, fmax(p, m));
	}
	for (int a = 0; a < ntol; a++) /* widest first */
		for (int b = a + 1; b < ntol; b++)
			if (tols[b] > tols[a]) {
				double x = tols[a];
				tols[a] = tols[b], tols[b] = x;
			}
	char band[600] = "", bandtxt[200] = "";
	size_t bl = 0, tl = 0;
	for (int k = 0; k < ntol; k++) {
		bl += (size_t)snprintf(band + bl, sizeof band - bl,
				       "%.6g*x with lines dt 2 lc rgb '#bbbbbb' title '±%.3g%%', "
				       "%.6g*x with lines dt 2 lc rgb '#bbbbbb' notitle, ",
				       1 + tols[k], 100 * tols[k], 1 - tols[k] > 0 ? 1 - tols[k] : 1e-9);
		tl += (size_t)snprintf(bandtxt + tl, sizeof bandtxt - tl, "%s±%.3g%%", k ? ", " : "", 100 * tols[k]);
		if (bl >= sizeof band || tl >= sizeof bandtxt)
			break;
	}
	/* times in the unit of their range (a step of 0.14 s reads better as 140 ms), ticks at 1, 2 and 5 of each
	 * decade (a log axis over less than a decade gets one tick by default), and the entries named by the
	 * points when there are few enough to read */
	static const struct {
		double below, scale;
		const char *name;
	} units[] = {{1e-3, 1e6, "us"}, {1, 1e3, "ms"}, {INFINITY, 1, "s"}};
	int u = 0;
	while (!(hi < units[u].below))
		u++;
	double sc = units[u].scale, a0 = lo / 1.5 * sc, a1 = hi * 1.5 * sc;
	char tics[400] = "";
	size_t tl2 = 0;
	for (double dec = pow(10, floor(log10(a0))); dec <= a1 && tl2 < sizeof tics - 40; dec *= 10)
		for (int m = 0; m < 3; m++) {
			double v = dec * (m == 0 ? 1 : m == 1 ? 2 : 5);
			if (v >= a0 && v <= a1)
				tl2 += (size_t)snprintf(tics + tl2, sizeof tics - tl2, "%s%g", tl2 ? ", " : "", v);
		}
	size_t nrows = 0;
	for (size_t i = 0; i < es->n; i++)
		nrows += isfinite(hs_report_ynum(es->vals[i], "predicted_s"));
	char lbl[300] = "";
	if (nrows <= 12)
		snprintf(lbl, sizeof lbl, ", '%s' using ($1*%g):($2*%g):4 with labels offset 0.8,0 left font ',8' noenhanced "
			 "notitle", dpath, sc, sc);
	char xt[460] = "";
	if (tics[0])
		snprintf(xt, sizeof xt, "set xtics (%s)\nset ytics (%s)\n", tics, tics);
	snprintf(script, sizeof script,
		 "set title 'Predicted against measured step time'\nset xlabel 'measured (%s)'\nset ylabel 'predicted "
		 "(%s)'\nset logscale xy\nset xrange [%g:%g]\nset yrange [%g:%g]\n%sset key top left\nset size square\n"
		 "plot x with lines lc rgb '#888888' title 'exact', %s"
		 "'%s' using ($1*%g):($3==1?$2*%g:NaN) with points pt 7 ps 1.2 lc rgb '#59a14f' title 'within tolerance', "
		 "'%s' using ($1*%g):($3==0?$2*%g:NaN) with points pt 7 ps 1.2 lc rgb '#e15759' title 'over tolerance'%s\n",
		 units[u].name, units[u].name, a0, a1, a0, a1, xt, band, dpath, sc, sc, dpath, sc, sc, lbl);
	if (hs_gp_plot(g, "validate", 640, 600, script, img, sizeof img, err)) {
		hs_page_abort(pg);
		return -1;
	}
	o->plots++;
	hs_page_section(pg, "Predicted against measured");
	char cap[400];
	snprintf(cap, sizeof cap, "Each entry of the manifest: predicted step time against the measured one (log scales); %s%s%s.",
		 ntol ? "the dashed lines are the tolerances, " : "no entry has a tolerance", bandtxt,
		 more ? " (and more, not drawn)" : "");
	hs_page_figure(pg, img, cap);
	char ph[32], mh[32];
	snprintf(ph, sizeof ph, "predicted (%s)", units[u].name);
	snprintf(mh, sizeof mh, "measured (%s)", units[u].name);
	const char *hd[] = {"entry", ph, mh, "error", "pass"};
	hs_page_table(pg, 5, hd);
	for (size_t i = 0; i < es->n; i++) {
		char a[32], b[32], c[32];
		double pb = hs_report_ynum(es->vals[i], "predicted_bytes");
		if (isfinite(pb)) { /* peak memory, in GB */
			hs_report_fmt(a, sizeof a, "%.2f GB", pb / 1e9);
			hs_report_fmt(b, sizeof b, "%.2f GB", hs_report_ynum(es->vals[i], "measured_bytes") / 1e9);
		} else {
			hs_report_fmt(a, sizeof a, "%.4g", sc * hs_report_ynum(es->vals[i], "predicted_s"));
			hs_report_fmt(b, sizeof b, "%.4g", sc * hs_report_ynum(es->vals[i], "measured_s"));
		}
		hs_report_fmt(c, sizeof c, "%+.1f%%", 100 * hs_report_ynum(es->vals[i], "error"));
		const char *row[] = {hs_report_ystr(es->vals[i], "entry"), a, b, c, hs_report_ystr(es->vals[i], "pass")};
		hs_page_row(pg, row);
	}
	hs_page_table_end(pg);
	return 0;
}
