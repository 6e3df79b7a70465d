/* The report of a fabric experiment (`hetsim run --json` on a `kind: fabric` scenario): the schemes compared. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

int hs_report_fabric(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err)
{
	const hs_ynode *ss = hs_yaml_get(root, "schemes");
	char sub[600];
	snprintf(sub, sizeof sub, "%s: fabric experiment, %zu credit schemes, focus: %s", src, ss ? ss->n : 0,
		 hs_report_ystr(root, "focus"));
	if (hs_page_open(pg, g->dir, o->title ? o->title : hs_report_ystr(root, "name"), sub, err))
		return -1;
	char dpath[1200], img[256], script[4096] = "", plot[2048] = "";
	FILE *f = hs_gp_data(g, "latency", dpath, sizeof dpath);
	for (size_t i = 0; ss && i < ss->n; i++) {
		const hs_ynode *fo = hs_yaml_get(ss->vals[i], "focus");
		/* the tail through the percentiles: P(latency > p50) = 0.5, > p99 = 0.01, > p99.9 = 0.001 */
		fprintf(f, "# %s\n%.6g\t0.5\n%.6g\t0.01\n%.6g\t0.001\n\n\n", hs_report_ystr(ss->vals[i], "scheme"), hs_report_ynum(fo, "p50_ns"),
			hs_report_ynum(fo, "p99_ns"), hs_report_ynum(fo, "p999_ns"));
		char one[200];
		snprintf(one, sizeof one, "%s'%s' index %zu using 1:2 with linespoints lw 2 pt 7 lc rgb '%s' title '%s'",
			 i ? ", " : "", dpath, i, hs_report_palette[i % 10], hs_report_ystr(ss->vals[i], "scheme"));
		if (strlen(plot) + strlen(one) < sizeof plot)
			strcat(plot, one);
	}
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
		double bin = hs_report_ynum(q, "bin_ns");
		fprintf(f, "# %s\n", hs_report_ystr(ss->vals[i], "scheme"));
		for (size_t k = 0; se && k < se->n; k++)
			fprintf(f, "%.6g\t%s\n", (k + 0.5) * bin / 1e3, se->vals[k]->str);
		fprintf(f, "\n\n");
		char one[200];
		snprintf(one, sizeof one, "%s'%s' index %zu using 1:2 with steps lw 1.5 lc rgb '%s' title '%s'", i ? ", " : "",
			 dpath, i, hs_report_palette[i % 10], hs_report_ystr(ss->vals[i], "scheme"));
		if (strlen(plot) + strlen(one) < sizeof plot)
			strcat(plot, one);
	}
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
			hs_report_fmt(a, sizeof a, "%.0f", hs_report_ynum(cl->vals[k], "p50_ns"));
			hs_report_fmt(b, sizeof b, "%.0f", hs_report_ynum(cl->vals[k], "p99_ns"));
			hs_report_fmt(c, sizeof c, "%.0f", hs_report_ynum(cl->vals[k], "p999_ns"));
			hs_report_fmt(d, sizeof d, "%.2f", hs_report_ynum(cl->vals[k], "GB_per_s"));
			const char *row[] = {hs_report_ystr(ss->vals[i], "scheme"), hs_report_ystr(cl->vals[k], "name"), hs_report_ystr(cl->vals[k], "ops"),
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
