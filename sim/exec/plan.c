#include "sim/exec/plan.h"

#include <string.h>

#include "sim/base/sizes.h"
#include "sim/exec/partition.h"

int hs_plan_symmetric(const hs_workload *w, const hs_graph *g)
{
	return g->nrendezvous == 0 && g->nreps == w->par->pp;
}

int hs_plan_slower(const hs_device_type *a, const hs_device_type *b, enum hs_dtype dt)
{
	return !b || a->peak_flops[dt] < b->peak_flops[dt] ||
	       (a->peak_flops[dt] == b->peak_flops[dt] && a->hbm_bw < b->hbm_bw);
}

const hs_device_type *hs_plan_rep_device(const hs_workload *w, const hs_rep *rp, int symmetry, int *ngroup)
{
	const hs_parallel *p = w->par;
	const hs_device_type *best = NULL;
	enum hs_dtype dt = w->train->dtype;
	int d0 = symmetry ? 0 : rp->dp_index, d1 = symmetry ? p->dp : rp->dp_index + 1;
	if (hs_cluster_ngroups(w->cluster) == 1) {
		/* one node group: every rank is that group's device, and the loop below keeps the first it meets
		 * (a sweep point of 1,024 GPUs asked this of every rank, three times per rep) */
		int g = hs_build_rank(p, 0, 0, d0, rp->stage);
		*ngroup = hs_cluster_group_of(w->cluster, g);
		return hs_cluster_device(w->cluster, g);
	}
	for (int d = d0; d < d1; d++)
		for (int c = 0; c < p->cp; c++)
			for (int t = 0; t < p->tp; t++) {
				int g = hs_build_rank(p, t, c, d, rp->stage);
				const hs_device_type *dv = hs_cluster_device(w->cluster, g);
				if (hs_plan_slower(dv, best, dt)) {
					best = dv;
					*ngroup = hs_cluster_group_of(w->cluster, g);
				}
			}
	return best;
}

const hs_device_type *hs_plan_rep_smallest(const hs_workload *w, const hs_rep *rp, int symmetry, int *gpu)
{
	const hs_parallel *p = w->par;
	const hs_device_type *best = NULL;
	int d0 = symmetry ? 0 : rp->dp_index, d1 = symmetry ? p->dp : rp->dp_index + 1;
	if (hs_cluster_ngroups(w->cluster) == 1) { /* as in hs_plan_rep_device: the first rank is the answer */
		*gpu = hs_build_rank(p, 0, 0, d0, rp->stage);
		return hs_cluster_device(w->cluster, *gpu);
	}
	for (int d = d0; d < d1; d++)
		for (int c = 0; c < p->cp; c++)
			for (int t = 0; t < p->tp; t++) {
				int g = hs_build_rank(p, t, c, d, rp->stage);
				const hs_device_type *dv = hs_cluster_device(w->cluster, g);
				if (!best || dv->hbm_bytes < best->hbm_bytes) {
					best = dv;
					*gpu = g;
				}
			}
	return best;
}

/* Offload: what a node's ranks keep in host memory against the node's `host.memory` where the group gives it
 * (every GPU of a node holds the rep's bytes: a node's GPUs are one stage's TP ranks or replicas of one
 * program). Exit 3 with the numbers when it does not fit. */
static int hs_plan_check_host_memory(const hs_workload *w, const hs_build *b, hs_err *err)
{
	const hs_graph *g = &b->graph;
	for (int i = 0; i < g->nreps; i++) {
		double host = b->stages[g->reps[i].stage].mem.host;
		if (host <= 0)
			continue;
		int gpu = hs_build_rank(w->par, 0, 0, g->reps[i].dp_index, g->reps[i].stage);
		const hs_node_group *ng = hs_cluster_group(w->cluster, hs_cluster_group_of(w->cluster, gpu));
		double need = host * ng->gpus_per_node;
		if (ng->host.mem_bytes > 0 && need > ng->host.mem_bytes)
			return hs_err_set(err, HS_EINFEASIBLE,
					  "does not fit in host memory: offload keeps %.1f GiB per GPU of stage %d in host "
					  "memory, %.1f GiB for a node of %d GPUs, but node group '%s' has %.1f GiB "
					  "(host.memory, at %s)",
					  host / HS_GiB, g->reps[i].stage, need / HS_GiB, ng->gpus_per_node, ng->name,
					  ng->host.mem_bytes / HS_GiB, ng->host.at);
	}
	return 0;
}

/* Every device a rep stands for holds the same bytes (a stage's ranks run one program), so the rep fits when
 * its smallest device does: that one is checked and named, whichever device paces the rep's speed (under
 * symmetry the rep stands for every replica of the stage, on every device type they run on). */
int hs_plan_check_memory(const hs_workload *w, const hs_build *b, hs_err *err)
{
	const hs_graph *g = &b->graph;
	int symmetry = hs_plan_symmetric(w, g);
	double reserve = w->par->memory_reserve;
	/* the rep short of the most bytes is named, so symmetry on and off name the same device */
	int worst = -1, wgpu = 0;
	double short_by = 0;
	for (int i = 0; i < g->nreps; i++) {
		int gpu = 0;
		const hs_device_type *dev = hs_plan_rep_smallest(w, &g->reps[i], symmetry, &gpu);
		double d = b->stages[g->reps[i].stage].mem.total - (dev->hbm_bytes - reserve);
		if (d > short_by) {
			short_by = d;
			worst = i;
			wgpu = gpu;
		}
	}
	if (worst < 0)
		return hs_plan_check_host_memory(w, b, err);
	const hs_device_type *dev = hs_cluster_device(w->cluster, wgpu);
	int stage = g->reps[worst].stage;
	double need = b->stages[stage].mem.total, usable = dev->hbm_bytes - reserve;
	const double G = HS_GiB;
	return hs_err_set(err, HS_EINFEASIBLE,
			  "does not fit in memory: stage %d needs %.1f GiB per GPU but %s (GPU %d, of %.1f GiB) has %.1f "
			  "GiB usable (capacity minus a reserve of %.1f GiB); try more pipeline or tensor parallelism, "
			  "recomputation, or ZeRO",
			  stage, need / G, dev->name, wgpu, dev->hbm_bytes / G, usable / G, reserve / G);
}

static int plan(const hs_workload *w, int symmetry, int items, hs_sched_cache *sc, hs_build *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	hs_partition part;
	if (hs_partition_resolve(w, &part, err))
		return -1;
	/* the memory check runs inside the build, before the graph: it reads only the reps and the stages */
	int rc = items ? hs_build_step_items(w, &part, symmetry, hs_plan_check_memory, sc, out, err)
		       : hs_build_step_checked(w, &part, symmetry, hs_plan_check_memory, out, err);
	if (rc)
		return -1; /* the build took the partition over and freed what it had built */
	return 0;
}

int hs_plan_step(const hs_workload *w, int symmetry, hs_build *out, hs_err *err)
{
	return plan(w, symmetry, 0, NULL, out, err);
}

int hs_plan_step_items(const hs_workload *w, int symmetry, hs_sched_cache *sc, hs_build *out, hs_err *err)
{
	return plan(w, symmetry, 1, sc, out, err);
}
