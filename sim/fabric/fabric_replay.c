/* Replaying a step's scale-up collectives as a fabric experiment (fabric_replay.h). */
#include "sim/fabric/fabric_replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

static const char *const op_names[] = {"all_reduce", "all_gather", "reduce_scatter"};

void hs_fabric_replay_run(const hs_fabric_exp_spec *s, const hs_credit_scheme *sch, const hs_replay_coll *v, int n,
			  hs_replay_row *row)
{
	double step = row->step_s;
	memset(row, 0, sizeof *row);
	row->step_s = step;
	hs_fabric_class_stats *tot = hs_xcalloc(HS_FCOLL_NCLS, sizeof *tot);
	hs_fabric_class_stats *one = hs_xcalloc(HS_FCOLL_NCLS, sizeof *one);
	for (int k = 0; k < HS_FCOLL_NCLS; k++) {
		hs_hist_init(&tot[k].lat);
		hs_hist_init(&tot[k].stall);
	}
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < HS_FCOLL_NCLS; k++) {
			memset(&one[k], 0, sizeof one[k]);
			hs_hist_init(&one[k].lat);
			hs_hist_init(&one[k].stall);
		}
		hs_fcoll_out o;
		hs_fcoll_run(&s->p, sch, &s->credits, &v[i].c, &o, one);
		/* a step runs it `count` times, each alike: its latencies count that many times (a fractional
		 * count, from sliced tasks, rounds) */
		long reps = lround(v[i].count);
		for (long r = 0; r < reps; r++)
			for (int k = 0; k < HS_FCOLL_NCLS; k++) {
				hs_hist_merge(&tot[k].lat, &one[k].lat);
				hs_hist_merge(&tot[k].stall, &one[k].stall);
			}
		row->comm_s += v[i].count * hs_time_to_s(o.time);
		row->rx_bytes += v[i].count * (double)o.data_bytes;
		row->closed_bytes += v[i].count * (double)hs_fcoll_closed_bytes(&v[i].c);
		row->events += o.events;
	}
	for (int k = 0; k < HS_FCOLL_NCLS; k++) {
		hs_fabric_lat *l = &row->cls[k];
		const hs_hist *h = &tot[k].lat;
		l->ops = h->n;
		if (!h->n)
			continue;
		l->p50 = (double)hs_hist_quantile(h, 0.5) / 1e3;
		l->p99 = (double)hs_hist_quantile(h, 0.99) / 1e3;
		l->p999 = (double)hs_hist_quantile(h, 0.999) / 1e3;
		l->mean = hs_hist_mean(h) / 1e3;
		l->stall_mean = hs_hist_mean(&tot[k].stall) / 1e3;
		l->stall_p99 = (double)hs_hist_quantile(&tot[k].stall, 0.99) / 1e3;
	}
	free(tot);
	free(one);
}

static void size_str(char *b, size_t n, double v)
{
	if (v >= 1073741824.0 && fmod(v, 1073741824.0) == 0)
		snprintf(b, n, "%.0f GiB", v / 1073741824.0);
	else if (v >= 1048576.0)
		snprintf(b, n, "%.4g MiB", v / 1048576.0);
	else
		snprintf(b, n, "%.0f B", v);
}

void hs_fabric_replay_print(FILE *out, int json, const hs_fabric_exp_spec *s, const char *from,
			    const hs_replay_coll *v, int n, const hs_replay_row *rows)
{
	if (json) {
		fprintf(out, "{\"experiment\":\"%s\",\"traffic_from\":\"%s\",\"collectives\":[", s->name, from);
		for (int i = 0; i < n; i++)
			fprintf(out, "%s{\"op\":\"%s\",\"ranks\":%d,\"bytes\":%.0f,\"per_step\":%.4g,\"protocol\":\"%s\"}",
				i ? "," : "", op_names[v[i].c.op], v[i].c.n, v[i].c.bytes, v[i].count,
				hs_fcoll_proto_names[v[i].c.proto]);
		fprintf(out, "],\"schemes\":[");
		for (int k = 0; k < s->nschemes; k++) {
			const hs_replay_row *r = &rows[k];
			fprintf(out, "%s{\"scheme\":\"%s\",\"step_s\":%.6g,\"scaleup_comm_s\":%.6g,\"rx_bytes\":%.0f,"
				     "\"closed_form_bytes\":%.0f,\"classes\":{",
				k ? "," : "", s->schemes[k]->name, r->step_s, r->comm_s, r->rx_bytes, r->closed_bytes);
			for (int c = 0; c < HS_FCOLL_NCLS; c++)
				fprintf(out, "%s\"%s\":{\"ops\":%llu,\"p50_ns\":%.1f,\"p99_ns\":%.1f,\"p999_ns\":%.1f,"
					     "\"stall_p99_ns\":%.1f}",
					c ? "," : "", hs_fcoll_class_names[c], (unsigned long long)r->cls[c].ops, r->cls[c].p50,
					r->cls[c].p99, r->cls[c].p999, r->cls[c].stall_p99);
			fprintf(out, "}}");
		}
		fprintf(out, "]}\n");
		return;
	}
	fprintf(out, "fabric experiment %s on the traffic of %s\n", s->name, from);
	fprintf(out, "collectives per step in rep 0's scale-up domain (each run once per scheme, weighted by count):\n");
	for (int i = 0; i < n; i++) {
		char b[32];
		size_str(b, sizeof b, v[i].c.bytes);
		fprintf(out, "  %-15s %2d ranks %12s  x%-6.4g %s, %d channels\n", op_names[v[i].c.op], v[i].c.n, b,
			v[i].count, hs_fcoll_proto_names[v[i].c.proto], v[i].c.channels);
	}
	if (s->nschemes)
		fprintf(out, "bytes into each receiver per step: %.0f replayed, %.0f closed form\n", rows[0].rx_bytes,
			rows[0].closed_bytes);
	fprintf(out, "\n%-13s %-5s %10s %10s %10s %10s %9s\n", "scheme", "class", "ops", "P50 ns", "P99 ns", "P99.9 ns",
		"stall P99");
	for (int k = 0; k < s->nschemes; k++)
		for (int c = 0; c < HS_FCOLL_NCLS; c++) {
			const hs_fabric_lat *l = &rows[k].cls[c];
			fprintf(out, "%-13s %-5s %10llu %10.1f %10.1f %10.1f %9.1f\n", c ? "" : s->schemes[k]->name,
				hs_fcoll_class_names[c], (unsigned long long)l->ops, l->p50, l->p99, l->p999, l->stall_p99);
		}
	fprintf(out, "\n%-13s %14s %14s %10s\n", "scheme", "scale-up s", "step s", "step vs");
	const hs_replay_row *base = NULL;
	for (int k = 0; k < s->nschemes; k++)
		if (s->schemes[k] == s->baseline)
			base = &rows[k];
	for (int k = 0; k < s->nschemes; k++) {
		double ch = base && base->step_s > 0 ? 100 * (rows[k].step_s - base->step_s) / base->step_s : 0;
		fprintf(out, "%-13s %14.6f %14.6f %+9.2f%%\n", s->schemes[k]->name, rows[k].comm_s, rows[k].step_s, ch);
	}
	if (base)
		fprintf(out, "(step vs: change against %s)\n", s->baseline->name);
}
