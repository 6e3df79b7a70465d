/* In-layer collectives placed for the Chakra ET writer (traces/chakra_inlayer.h). */
#include "traces/chakra_inlayer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/time.h"
#include "traces/chakra.h"

int hs_chakra_comm_type(int coll)
{
	switch (coll) {
	case HS_COLL_ALL_REDUCE: return HS_ET_ALL_REDUCE;
	case HS_COLL_ALL_GATHER: return HS_ET_ALL_GATHER;
	case HS_COLL_REDUCE_SCATTER: return HS_ET_REDUCE_SCATTER;
	case HS_COLL_ALL_TO_ALL: return HS_ET_ALL_TO_ALL;
	case HS_COLL_BROADCAST: return HS_ET_BROADCAST;
	case HS_COLL_REDUCE: return HS_ET_REDUCE;
	default: return -1;
	}
}

static const hs_inl_span *sort_inl;
static int cmp_inl(const void *a, const void *b)
{
	const hs_inl_span *x = &sort_inl[*(const uint32_t *)a], *y = &sort_inl[*(const uint32_t *)b];
	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->op > y->op) - (x->op < y->op);
}

static int group_size(const hs_parallel *p, int k)
{
	switch (k) {
	case HS_GROUP_TP: return p->tp;
	case HS_GROUP_CP: return p->cp;
	case HS_GROUP_DP: return p->dp;
	case HS_GROUP_EP: return p->ep;
	default: return p->pp;
	}
}

/* Whether op o is an in-layer collective the writer makes a node of. */
static int written(const hs_parallel *p, const hs_op *o)
{
	return o->kind == HS_OP_COMM && group_size(p, o->group) > 1 && o->bytes > 0 &&
	       hs_chakra_comm_type(o->coll) >= 0;
}

struct sel {
	uint32_t op;
	double pos, dur; /* in the task's unscaled time, seconds from its start */
	uint64_t ps;     /* the collective's time on replay */
};

/* Task ti's pieces appended to il (its records rec[0..n-1], sorted by start), or none. */
static void place(const hs_sim *sim, uint32_t ti, int slice, const hs_inl_span *inl, const uint32_t *rec, size_t n,
		  hs_chakra_inl *il, size_t *cap)
{
	const hs_graph *g = &sim->b.graph;
	const hs_task *t = &g->tasks[ti];
	const hs_parallel *p = &sim->s->par;
	const hs_span *sp = &sim->r.spans[ti];
	/* on the network (layer_collectives: network) a slice already ran its own share of the ops, whole */
	int network = sim->s->sim.fidelity == HS_FID_FLOW && sim->s->sim.layer_net;
	double share = network ? 1 : t->scale;
	uint32_t a = t->op_first, b = t->op_first + t->op_count;
	if (!network && t->scale < 1) {
		uint32_t nsl = (uint32_t)lround(1 / t->scale);
		a = t->op_first + (uint32_t)((uint64_t)t->op_count * (uint32_t)slice / nsl);
		b = t->op_first + (uint32_t)((uint64_t)t->op_count * ((uint32_t)slice + 1) / nsl);
	}
	struct sel *s = hs_xmalloc((n + 1) * sizeof *s);
	size_t m = 0, lo = n, hi = 0; /* selected: records [lo, hi] of the task's */
	for (size_t k = 0; k < n; k++) {
		const hs_inl_span *r = &inl[rec[k]];
		if (r->op < a || r->op >= b || !written(p, &g->ops[r->op]))
			continue;
		double pos = (r->start - sp->start) / share, dur = (r->end - r->start) / share;
		s[m++] = (struct sel){r->op, pos, dur, hs_time_from_s(dur)};
		if (lo == n)
			lo = k;
		hi = k;
	}
	if (m == 0) {
		free(s);
		return;
	}
	double total = (sp->end - sp->start) / share;
	double ps_d = llround((sp->end - sp->start) * 1e12); /* whole picoseconds: the span's ends are */
	uint64_t task_ps = ps_d > 0 ? (uint64_t)ps_d : 0, coll_ps = 0;
	for (size_t j = 0; j < m; j++)
		coll_ps += s[j].ps;
	/* the kernel time before, between and after the selected collectives: from the end of the record before
	 * the first (or the task's start) to the start of the record after the last (or the task's end) */
	double *gap = hs_xmalloc((m + 1) * sizeof *gap), G = 0;
	const hs_inl_span *prev = lo > 0 ? &inl[rec[lo - 1]] : NULL, *next = hi + 1 < n ? &inl[rec[hi + 1]] : NULL;
	double from = prev ? (prev->end - sp->start) / share : 0, to = next ? (next->start - sp->start) / share : total;
	for (size_t j = 0; j <= m; j++) {
		double x0 = j == 0 ? from : s[j - 1].pos + s[j - 1].dur, x1 = j == m ? to : s[j].pos;
		gap[j] = x1 > x0 ? x1 - x0 : 0;
		G += gap[j];
	}
	uint64_t comp_ps = 0;
	if (task_ps >= coll_ps)
		comp_ps = task_ps - coll_ps;
	else
		il->short_tasks++;
	hs_xgrow(&il->pieces, cap, il->first[ti] + 2 * m + 1, sizeof *il->pieces);
	size_t q = il->first[ti];
	uint64_t used = 0;
	double cum = 0;
	for (size_t j = 0; j <= m; j++) {
		uint64_t ps;
		if (j == m) {
			ps = comp_ps - used; /* the rounding goes to the last piece */
		} else {
			cum += G > 0 ? gap[j] : 1;
			double want = (double)comp_ps * cum / (G > 0 ? G : (double)(m + 1));
			uint64_t upto = want > 0 ? (uint64_t)llround(want) : 0;
			if (upto > comp_ps)
				upto = comp_ps;
			ps = upto > used ? upto - used : 0;
		}
		used += ps;
		il->pieces[q++] = (hs_chakra_piece){UINT32_MAX, ps};
		if (j < m)
			il->pieces[q++] = (hs_chakra_piece){s[j].op, 0};
	}
	il->first[ti + 1] = (uint32_t)q;
	free(gap);
	free(s);
}

int hs_chakra_inl_plan(const hs_sim *sim, hs_chakra_inl *il, hs_err *err)
{
	const hs_graph *g = &sim->b.graph;
	const hs_result *r = &sim->r;
	const hs_parallel *p = &sim->s->par;
	memset(il, 0, sizeof *il);
	il->ntasks = g->ntasks;
	il->first = hs_xcalloc(g->ntasks + 1, sizeof *il->first);
	if (!r->inl) {
		/* a graph with in-layer collectives simulated without keeping them would lose them silently */
		for (size_t i = 0; i < g->ntasks; i++) {
			const hs_task *t = &g->tasks[i];
			for (uint32_t q = t->op_first; t->kind == HS_T_COMPUTE && q < t->op_first + t->op_count; q++)
				if (written(p, &g->ops[q]))
					return hs_err_set(err, HS_EINTERNAL,
							  "internal error: task %zu has collectives inside it but the step "
							  "was simulated without keeping where they ran (record_inlayer)",
							  i);
		}
		return 0;
	}
	uint32_t *idx = hs_xmalloc((r->ninl + 1) * sizeof *idx);
	for (size_t i = 0; i < r->ninl; i++)
		idx[i] = (uint32_t)i;
	sort_inl = r->inl;
	qsort(idx, r->ninl, sizeof *idx, cmp_inl);
	/* slice k of a backward pass cut into gradient-bucket slices: the k-th of a run of compute tasks of one
	 * rep with the same op range and scale (as sim/exec/inlayer.c numbers them) */
	int *prev = hs_xmalloc((size_t)(g->nreps > 0 ? g->nreps : 1) * sizeof *prev);
	uint16_t *slice = hs_xcalloc(g->ntasks + 1, sizeof *slice);
	for (int i = 0; i < g->nreps; i++)
		prev[i] = -1;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (t->kind != HS_T_COMPUTE)
			continue;
		int pi = prev[t->rep];
		const hs_task *pt = pi >= 0 ? &g->tasks[pi] : NULL;
		if (t->scale < 1 && pt && pt->op_first == t->op_first && pt->op_count == t->op_count &&
		    pt->scale == t->scale && slice[pi] + 1 < lround(1 / t->scale))
			slice[i] = (uint16_t)(slice[pi] + 1);
		prev[t->rep] = (int)i;
	}
	size_t cap = 0, k = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		il->first[i + 1] = il->first[i];
		size_t k0 = k;
		while (k < r->ninl && r->inl[idx[k]].task == i)
			k++;
		if (k > k0 && g->tasks[i].kind == HS_T_COMPUTE)
			place(sim, (uint32_t)i, slice[i], r->inl, idx + k0, k - k0, il, &cap);
	}
	free(prev);
	free(slice);
	free(idx);
	return 0;
}

void hs_chakra_inl_free(hs_chakra_inl *il)
{
	free(il->first);
	free(il->pieces);
	memset(il, 0, sizeof *il);
}
