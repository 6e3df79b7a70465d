/* The executor's MoE routing per step (sim/exec/exec_impl.h hs_exec_routing_load; the law is
 * models/moe_routing.h's). A compute task's MoE layers each draw the busiest EP rank's load, keyed by
 * (seed, step, EP group, stage, chunk, micro-batch, layer in the chunk): every rank of an EP group, and the
 * forward and backward tasks of one micro-batch, draw the same routing without sharing state, and a seed
 * gives the same run. The task's routed kernels and EP all-to-alls then take the mean load over its layers
 * times their uniform time (exec.c: start_compute): first order in the load, as the expert GEMMs' m and the
 * all-to-alls' bytes grow with it (their efficiency at the larger size is not re-read from the profile). */
#include <stdlib.h>
#include <string.h>

#include "models/moe_routing.h"
#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"

/* Stream numbers of hs_rng_create for routing: a tag above the executor's other streams (1: noise). */
#define ROUTING_STREAM 0x6d6f65ull /* "moe" */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

/* The range's MoE layers and the uniform-load cost of its routed kernels, once per memo entry. */
static void routed_of(struct ex *x, struct rep *r, struct memo *m)
{
	if (m->routed_known)
		return;
	m->routed_known = 1;
	hs_op_env e;
	hs_exec_rep_env(x, r, &e);
	int in = 0;
	for (uint32_t q = m->first; q < m->first + m->count; q++) {
		const hs_op *o = &x->g->ops[q];
		int run = o->routed && !o->recompute; /* a recomputed forward is the same layer's routing again */
		if (run && !in)
			m->moe_runs++;
		in = run;
		if (o->routed && o->kind != HS_OP_COMM) {
			hs_ops_cost c = {0};
			hs_ops_time(&e, o, 1, &c);
			m->routed_s += c.comp;
			m->routed_flops += c.flops;
			for (int k = 0; k < HS_TC_COUNT; k++)
				m->routed_cls[k] += c.cls[k];
		}
	}
}

/* The memo's slot for key: its entry, or the empty slot it goes in (emptied at each new step; grown to stay
 * under half full). */
static struct route_memo *lookup(struct ex *x, uint64_t key)
{
	if (x->route_step != x->step || !x->route_memo) {
		if (!x->route_memo) {
			x->route_cap = 256;
			x->route_memo = hs_xcalloc(x->route_cap, sizeof *x->route_memo);
		} else {
			memset(x->route_memo, 0, x->route_cap * sizeof *x->route_memo);
		}
		x->route_n = 0;
		x->route_step = x->step;
	}
	if (2 * (x->route_n + 1) > x->route_cap) {
		struct route_memo *old = x->route_memo;
		size_t oc = x->route_cap;
		x->route_cap *= 2;
		x->route_memo = hs_xcalloc(x->route_cap, sizeof *x->route_memo);
		for (size_t i = 0; i < oc; i++)
			if (old[i].used) {
				size_t j = (size_t)(old[i].key >> 7) & (x->route_cap - 1);
				while (x->route_memo[j].used)
					j = (j + 1) & (x->route_cap - 1);
				x->route_memo[j] = old[i];
			}
		free(old);
	}
	size_t j = (size_t)(key >> 7) & (x->route_cap - 1);
	while (x->route_memo[j].used && x->route_memo[j].key != key)
		j = (j + 1) & (x->route_cap - 1);
	return &x->route_memo[j];
}

double hs_exec_routing_load(struct ex *x, int rep, uint32_t ti, struct memo *m)
{
	const hs_workload *s = x->s;
	const hs_moe_routing *rt = &s->par->routing;
	struct rep *r = &x->reps[rep];
	if (!(rt->skew > 0) || s->model->experts == 0 || r->grp_n[HS_GROUP_EP] <= 1)
		return 1;
	routed_of(x, r, m);
	if (m->moe_runs == 0)
		return 1;
	const hs_task *t = &x->g->tasks[ti];
	int ep = r->grp_n[HS_GROUP_EP], group = r->grp[HS_GROUP_EP][0];
	for (int i = 1; i < ep; i++) /* the group's name: its lowest rank, the same for every member */
		if (r->grp[HS_GROUP_EP][i] < group)
			group = r->grp[HS_GROUP_EP][i];
	uint64_t key = mix(mix(mix(mix(mix(mix(ROUTING_STREAM, (uint64_t)x->step), (uint64_t)group),
				       (uint64_t)x->g->reps[rep].stage), (uint64_t)t->chunk), (uint64_t)t->mb),
			   (uint64_t)m->moe_runs);
	struct route_memo *slot = lookup(x, key);
	if (slot->used)
		return slot->load;
	hs_rng *g = hs_rng_create(x->o->seed, key);
	if (!g)
		return 1;
	if (!x->route_buf)
		x->route_buf = hs_xmalloc((size_t)s->model->experts * sizeof *x->route_buf);
	/* the group's token-expert assignments of one micro-batch and layer: each rank's tokens x top_k */
	double cp = s->par->cp > 0 ? s->par->cp : 1;
	double tokens = (double)s->train->micro_batch * s->train->seq_len / cp * s->model->top_k * ep;
	double sum = 0;
	for (int l = 0; l < m->moe_runs; l++)
		sum += hs_moe_routing_draw(g, rt, s->model->experts, ep, tokens, x->route_buf, NULL, NULL);
	hs_rng_destroy(g);
	slot->used = 1;
	slot->key = key;
	slot->load = sum / m->moe_runs;
	x->route_n++;
	return slot->load;
}
