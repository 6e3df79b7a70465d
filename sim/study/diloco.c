#include "sim/study/diloco.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/exec/exec.h"

static const char *const keys[] = {"inner_steps", "outer_compression", "sites", "wan_bandwidth", "wan_latency",
				   NULL};

int hs_diloco_from_yaml(const hs_ynode *n, hs_diloco *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->wan_lat = -1;
	if (!n)
		return 0;
	const char *P = "diloco";
	int64_t h, sites;
	if (hs_cfg_known(n, P, keys, "a mapping {inner_steps, outer_compression, sites, wan_bandwidth, wan_latency}",
			 err) ||
	    hs_cfg_int(n, P, "inner_steps", 1, 1000000, 500, 0, &h, err) ||
	    hs_cfg_num(n, P, "outer_compression", HS_U_COUNT, 1e-6, 1, 1, 0, &out->compression, err) ||
	    hs_cfg_int(n, P, "sites", 0, 1 << 20, 0, 0, &sites, err) ||
	    hs_cfg_num(n, P, "wan_bandwidth", HS_U_BW, 1, 1e18, 0, 0, &out->wan_bw, err) ||
	    hs_cfg_num(n, P, "wan_latency", HS_U_TIME, 0, 10, -1, 0, &out->wan_lat, err))
		return -1;
	if (sites == 1)
		return hs_cfg_err(hs_yaml_get(n, "sites"), err, P, "sites",
				  "one site has nothing to synchronise over a WAN (expected at least 2)");
	out->enabled = 1;
	out->inner_steps = (int)h;
	out->sites = (int)sites;
	return 0;
}

double hs_diloco_wan_allreduce(int n, double bytes, double bw, double lat)
{
	if (n <= 1)
		return 0;
	return 2.0 * (n - 1) * (lat + bytes / ((double)n * bw));
}

/* What main's cluster model says about the way out of a site: the NIC bandwidth of its devices, divided by the
 * fabric's oversubscription (the bytes cross its top tier), and a NIC-to-NIC latency through every tier. */
static void fabric_wan(const hs_scenario *s, int sites, double *bw, double *lat)
{
	int n = hs_cluster_ngpus(s->cluster), per = n / sites;
	const hs_fabric_spec *f = hs_cluster_fabric(s->cluster);
	double over = f->oversubscription >= 1 ? f->oversubscription : 1;
	*bw = HUGE_VAL;
	for (int k = 0; k < sites; k++) {
		double sum = 0;
		for (int d = k * per; d < (k + 1) * per; d++) {
			const hs_node_group *g = hs_cluster_group(s->cluster, hs_cluster_group_of(s->cluster, d));
			sum += g->nic_bw * g->nics_per_node / g->gpus_per_node;
		}
		if (sum / over < *bw)
			*bw = sum / over;
	}
	const hs_node_group *g0 = hs_cluster_group(s->cluster, 0);
	*lat = g0->nic_lat + (2.0 * f->tiers - 1) * f->latency;
}

void hs_diloco_outer(const hs_scenario *s, const hs_build *b, const hs_result *r, hs_diloco_out *out)
{
	memset(out, 0, sizeof *out);
	const hs_diloco *dl = &s->diloco;
	const hs_parallel *p = &s->par;
	int S = p->sites > 1 ? p->sites : 1;
	out->sites = S;
	out->inner_steps = dl->inner_steps;
	out->params = hs_model_params(&s->model);
	out->outer_bytes = out->params * 4.0 * dl->compression;
	double fbw, flat;
	fabric_wan(s, S, &fbw, &flat);
	out->wan_bw = dl->wan_bw > 0 ? dl->wan_bw : fbw;
	out->wan_lat = dl->wan_lat >= 0 ? dl->wan_lat : flat;
	out->outer_wan_s = hs_diloco_wan_allreduce(S, out->outer_bytes, out->wan_bw, out->wan_lat);
	/* each site's replicas split the WAN work by slices of their shard, then all-gather the averaged slices */
	int *ranks = hs_xmalloc((size_t)p->dp * sizeof *ranks);
	for (int st = 0; st < b->pp; st++) {
		int n = hs_build_group(p, HS_GROUP_DP, 0, st, ranks);
		double t = n > 1 ? hs_coll_time(s->cluster, HS_COLL_ALL_GATHER, (enum hs_coll_algo)s->wl.coll_algo,
						ranks, n, b->stages[st].params * 4.0 * dl->compression)
				 : 0;
		if (t > out->outer_site_s)
			out->outer_site_s = t;
	}
	free(ranks);
	out->outer_s = out->outer_wan_s + out->outer_site_s;
	out->inner_s = r->step_time_s;
	int H = dl->inner_steps > 0 ? dl->inner_steps : 1;
	out->effective_s = out->inner_s + out->outer_s / H;
	if (r->steps >= H) {
		double sum = 0;
		for (int i = 0; i < r->steps; i++)
			sum += r->step_times[i];
		out->simulated_s = (sum + (double)(r->steps / H) * out->outer_s) / r->steps;
	}
	out->sync_wan_s = hs_diloco_wan_allreduce(S, out->params * 4.0, out->wan_bw, out->wan_lat);
}
