#include "models/graph.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

void hs_graph_free(hs_graph *g)
{
	if (!g)
		return;
	free(g->tasks);
	free(g->deps);
	free(g->ops);
	free(g->reps);
	free(g->xg_first);
	free(g->xg_ranks);
	memset(g, 0, sizeof *g);
}

uint32_t hs_graph_add(hs_graph *g, const hs_task *t)
{
	hs_xgrow(&g->tasks, &g->captasks, g->ntasks + 1, sizeof *g->tasks);
	hs_task *n = &g->tasks[g->ntasks];
	*n = *t;
	n->dep_first = (uint32_t)g->ndeps;
	n->dep_count = 0;
	return (uint32_t)g->ntasks++;
}

void hs_graph_dep(hs_graph *g, uint32_t task, uint32_t dep)
{
	/* Dependencies of a task are contiguous: only the most recently added task may gain them. */
	assert(task == g->ntasks - 1);
	assert(dep < task);
	hs_xgrow(&g->deps, &g->capdeps, g->ndeps + 1, sizeof *g->deps);
	g->deps[g->ndeps++] = dep;
	g->tasks[task].dep_count++;
}

uint32_t hs_graph_add_ops(hs_graph *g, const hs_oplist *l)
{
	hs_xgrow(&g->ops, &g->capops, g->nops + l->n, sizeof *g->ops);
	if (l->n) /* an empty list may have no array at all */
		memcpy(g->ops + g->nops, l->ops, l->n * sizeof *l->ops);
	uint32_t first = (uint32_t)g->nops;
	g->nops += l->n;
	return first;
}
