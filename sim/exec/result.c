/* Result aggregation: what a run's reps and network measured, into hs_result (sim/exec/exec.h). Per step,
 * every rep's finish time and the communication that outlasts its compute stream; after the last step, means
 * over the steps, the critical and the memory-peak rep, the step-time quantiles, FLOPs and MFU, the timeline,
 * and (flow fidelity) the busiest links. This is where the executor's hs_time becomes the seconds printers use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

/* The step that just ran: each rep's finish, and the step's time (the last rep's finish). */
void hs_exec_account_step(struct ex *x, int step, hs_result *out)
{
	double makespan = 0;
	for (int i = 0; i < x->g->nreps; i++) {
		struct rep *r = &x->reps[i];
		hs_rep_result *rr = r->res;
		double finish = hs_exec_step_s(x, r->last_end);
		rr->finish_s += finish;
		/* communication that ends after the compute stream (parameter all-gather after the optimizer)
		 * is exposed: the next step cannot start before it */
		double acc = rr->compute_s + rr->bubble_s + rr->offload_s;
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			acc += rr->exposed_s[k];
		if (rr->finish_s > acc)
			rr->exposed_s[HS_GROUP_DP] += rr->finish_s - acc;
		if (finish > makespan)
			makespan = finish;
	}
	out->step_times[step] = makespan;
	/* ranks that finish early wait for the step's end: that wait belongs to the next step's start, and
	 * is not part of any rank's breakdown (finish_s is per rank) */
}

/* Most bytes first; among equal bytes the lower link index, so that the links kept at the cut are the same
 * on every libc and at both fidelities (comm_closed.c orders its per-link bytes the same way). */
/* Bytes to 30 bits of mantissa (9 significant digits): links that carried the same traffic sort by id, not by
 * the last bits of sums that the order transfers ended in rounds differently (the network sums a route's
 * bytes before its links', sim/net/net.c fold); the table reports them so. */
static double bytes_key(double b)
{
	int e;
	double m = frexp(b, &e);
	return ldexp(nearbyint(ldexp(m, 30)), e - 30);
}

static int cmp_bytes_desc(const void *a, const void *b)
{
	const double *x = a, *y = b; /* {key, link} pairs */
	if (x[0] != y[0])
		return (x[0] < y[0]) - (x[0] > y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The HS_EXEC_LINK_TOP links that carried the most bytes, with their utilisation over time (the bins that
 * comm_net.c asked the network to keep). */
void hs_exec_collect_links(struct ex *x, hs_result *out)
{
	int nl = hs_net_nlinks(x->net);
	if (nl <= 0)
		return;
	double *order = hs_xmalloc((size_t)nl * 2 * sizeof *order);
	for (int l = 0; l < nl; l++) {
		hs_net_link_stat st;
		hs_net_link_stats(x->net, l, &st, NULL, 0);
		order[2 * l] = bytes_key(st.bytes);
		order[2 * l + 1] = l;
	}
	qsort(order, (size_t)nl, 2 * sizeof *order, cmp_bytes_desc);
	int n = nl < HS_EXEC_LINK_TOP ? nl : HS_EXEC_LINK_TOP;
	while (n > 0 && order[2 * (n - 1)] <= 0)
		n--;
	hs_link_util *u = &out->links;
	u->nlinks = n;
	u->nbins = HS_EXEC_LINK_BINS;
	u->bin_s = 1.5 * x->horizon_s / HS_EXEC_LINK_BINS;
	u->names = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->names);
	u->capacity_Bps = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->capacity_Bps);
	u->mean_util = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->mean_util);
	u->bytes = hs_xcalloc((size_t)(n ? n : 1), sizeof *u->bytes);
	u->util = hs_xcalloc((size_t)(n ? n : 1) * HS_EXEC_LINK_BINS, sizeof *u->util);
	const hs_topo *t = hs_net_topo(x->net);
	for (int i = 0; i < n; i++) {
		int l = (int)order[2 * i + 1];
		hs_net_link_stat st;
		hs_net_link_stats(x->net, l, &st, u->util + (size_t)i * HS_EXEC_LINK_BINS, HS_EXEC_LINK_BINS);
		char a[64], b[64], name[160];
		snprintf(name, sizeof name, "%s->%s", hs_topo_vname(t, st.from, a, sizeof a),
			 hs_topo_vname(t, st.to, b, sizeof b));
		u->names[i] = hs_xstrdup(name);
		u->capacity_Bps[i] = st.bw_Bps;
		u->mean_util[i] = st.util;
		u->bytes[i] = bytes_key(st.bytes); /* as sorted: the rows' bytes never rise */
	}
	free(order);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (type 7, the default of R and NumPy). */
static double quantile(const double *sorted, int n, double q)
{
	double h = (n - 1) * q;
	int lo = (int)floor(h);
	int hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/* sum + every device's peak FLOP/s at dtype, added in device order. A node group's devices are consecutive,
 * so each group's figure is added once per device without looking the device up (that was 1,024 lookups a
 * step on bench_sweep's cluster); a group whose devices are not where its size says falls back to that. */
static double cluster_peak_flops(const hs_cluster *c, int dtype, double sum)
{
	int n = hs_cluster_ngpus(c);
	for (int i = 0; i < n;) {
		int gi = hs_cluster_group_of(c, i);
		const hs_node_group *ng = hs_cluster_group(c, gi);
		int end = i + ng->nodes * ng->gpus_per_node;
		if (end <= i || end > n || hs_cluster_group_of(c, end - 1) != gi ||
		    (end < n && hs_cluster_group_of(c, end) == gi))
			end = i + 1;
		double f = hs_cluster_device(c, i)->peak_flops[dtype];
		for (; i < end; i++)
			sum += f;
	}
	return sum;
}

/* After the last step: the timeline (of the last step), means over the steps, and the cluster's figures. */
void hs_exec_aggregate(struct ex *x, const hs_build *b, hs_result *out)
{
	const hs_graph *g = x->g;
	const hs_workload *s = x->s;
	int steps = out->steps;
	out->spans = hs_xmalloc((g->ntasks ? g->ntasks : 1) * sizeof *out->spans);
	double s0 = hs_time_to_s(x->step_start); /* hs_exec_step_s's, once */
	for (size_t i = 0; i < g->ntasks; i++)
		out->spans[i] = (hs_span){hs_time_to_s(x->ts[i].start) - s0, hs_time_to_s(x->ts[i].end) - s0};
	if (x->ninl) {
		out->inl = hs_xmalloc(x->ninl * sizeof *out->inl);
		memcpy(out->inl, x->inl, x->ninl * sizeof *out->inl);
		out->ninl = x->ninl;
	}
	out->events += hs_engine_executed(x->eng); /* after what comm->collect added (packet runs' events) */
	out->tasks = g->ntasks;
	for (int i = 0; i < g->nreps; i++) {
		hs_rep_result *rr = &out->reps[i];
		rr->finish_s /= steps;
		rr->compute_s /= steps;
		rr->optimizer_s /= steps;
		for (int k = 0; k < HS_TC_COUNT; k++)
			rr->class_s[k] /= steps;
		rr->bubble_s /= steps;
		rr->offload_s /= steps;
		rr->straggler_wait_s /= steps;
		rr->flops /= steps;
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			rr->exposed_s[k] /= steps;
		if (rr->finish_s > out->reps[out->critical_rep].finish_s)
			out->critical_rep = i;
		if (rr->mem_bytes > out->mem_peak_bytes) {
			out->mem_peak_bytes = rr->mem_bytes;
			out->mem_peak_rep = i;
		}
		out->hw_flops += rr->flops * g->reps[i].multiplicity;
	}
	double sum = 0;
	for (int k = 0; k < steps; k++)
		sum += out->step_times[k];
	out->step_time_s = sum / steps;
	double *sorted = hs_xmalloc((size_t)steps * sizeof *sorted);
	memcpy(sorted, out->step_times, (size_t)steps * sizeof *sorted);
	qsort(sorted, (size_t)steps, sizeof *sorted, cmp_double);
	out->step_min_s = sorted[0];
	out->step_max_s = sorted[steps - 1];
	out->step_p50_s = quantile(sorted, steps, 0.50);
	out->step_p99_s = quantile(sorted, steps, 0.99);
	free(sorted);
	out->peak_flops = cluster_peak_flops(s->cluster, s->train->dtype, out->peak_flops);
	out->model_flops = b->model_flops;
	double tokens = (double)s->train->global_batch * s->train->seq_len;
	if (out->step_time_s > 0) {
		out->mfu = out->model_flops / (out->step_time_s * out->peak_flops);
		out->hfu = out->hw_flops / (out->step_time_s * out->peak_flops);
		out->tokens_per_s = tokens / out->step_time_s;
	}
}

void hs_result_free(hs_result *r)
{
	if (!r)
		return;
	free(r->reps);
	free(r->spans);
	free(r->inl);
	free(r->step_times);
	for (int i = 0; i < r->links.nlinks; i++)
		free(r->links.names[i]);
	free(r->links.names);
	free(r->links.capacity_Bps);
	free(r->links.mean_util);
	free(r->links.bytes);
	free(r->links.util);
	memset(&r->links, 0, sizeof r->links);
	r->step_times = NULL;
	r->reps = NULL;
	r->spans = NULL;
	r->inl = NULL;
	r->ninl = 0;
}
