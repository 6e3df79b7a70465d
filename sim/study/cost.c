#include "sim/study/cost.h"

#include <math.h>
#include <string.h>

static double price_of(const hs_costopts *c, const char *dev)
{
	for (int i = 0; i < c->nprices; i++)
		if (strcmp(c->price_dev[i], dev) == 0)
			return c->price[i];
	return c->gpu_hour; /* NAN when neither is given */
}

void hs_cost_compute(const hs_scenario *s, const hs_build *b, const hs_result *r, hs_cost *out)
{
	memset(out, 0, sizeof *out);
	const hs_costopts *c = &s->cost;
	const hs_graph *g = &b->graph;
	double step = r->step_time_s, ngpus = 0, util = 0, power = 0, perhour = 0;
	for (int i = 0; i < r->nreps; i++) {
		const hs_rep_result *q = &r->reps[i];
		double m = i < g->nreps ? g->reps[i].multiplicity : 1;
		const hs_device_type *dev = NULL;
		int gpu = hs_build_rank(&s->par, 0, 0, q->dp_index, q->stage);
		dev = hs_cluster_device(s->cluster, gpu);
		double u = step > 0 ? q->compute_s / step : 0;
		if (u > 1)
			u = 1;
		ngpus += m;
		util += m * u;
		power += m * dev->tdp_w * (c->idle_power + (1 - c->idle_power) * u);
		perhour += m * price_of(c, dev->name);
	}
	out->utilisation = ngpus > 0 ? util / ngpus : 0;
	out->power_w = power * c->pue;
	out->gpu_hours_per_step = ngpus * step / 3600.0;
	out->energy_j_per_step = out->power_w * step;
	out->tokens_per_step = (double)s->train.global_batch * s->train.seq_len;
	out->energy_j_per_token = out->tokens_per_step > 0 ? out->energy_j_per_step / out->tokens_per_step : NAN;
	out->kwh_per_mtok = out->energy_j_per_token * 1e6 / 3.6e6;
	out->cost_per_hour = perhour;
	out->cost_per_step = perhour * step / 3600.0;
	out->cost_per_mtok = out->tokens_per_step > 0 ? out->cost_per_step / out->tokens_per_step * 1e6 : NAN;
	out->currency = c->currency;
}
