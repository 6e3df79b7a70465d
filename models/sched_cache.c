/* Schedules kept across builds (models/sched_cache.h). A handful of keys per sweep: a list searched linearly. */
#include "models/sched_cache.h"

#include <stdlib.h>

#include "sim/base/alloc.h"

struct entry {
	int kind, pp, m, v;
	hs_sched_item **items; /* [pp] */
	size_t *n;             /* [pp] */
	double *peak;          /* [pp] */
	hs_sched_facts facts;
};

struct hs_sched_cache {
	struct entry *e;
	size_t ne, cap;
	size_t items; /* held in all */
};

hs_sched_cache *hs_sched_cache_create(void) { return hs_xcalloc(1, sizeof(hs_sched_cache)); }

void hs_sched_cache_free(hs_sched_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ne; i++) {
		for (int s = 0; s < c->e[i].pp; s++)
			free(c->e[i].items[s]);
		free(c->e[i].items);
		free(c->e[i].n);
		free(c->e[i].peak);
	}
	free(c->e);
	free(c);
}

int hs_sched_cache_get(hs_sched_cache *c, enum hs_sched_kind k, int pp, int micro_batches, int vstages,
		       hs_sched_item *const **items, const size_t **n, hs_sched_facts *facts, hs_err *err)
{
	for (size_t i = 0; i < c->ne; i++) {
		const struct entry *e = &c->e[i];
		if (e->kind == (int)k && e->pp == pp && e->m == micro_batches && e->v == vstages) {
			*items = e->items;
			*n = e->n;
			*facts = e->facts;
			return 0;
		}
	}
	if (c->items >= HS_SCHED_CACHE_ITEMS || pp < 1)
		return 1;
	struct entry e = {.kind = (int)k, .pp = pp, .m = micro_batches, .v = vstages,
			  .items = hs_xcalloc((size_t)pp, sizeof *e.items), .n = hs_xcalloc((size_t)pp, sizeof *e.n)};
	if (hs_sched_build_stages(k, pp, micro_batches, vstages, e.items, e.n, err)) {
		free(e.items);
		free(e.n);
		return -1;
	}
	for (int s = 0; s < pp; s++)
		c->items += e.n[s];
	e.peak = hs_xmalloc((size_t)pp * sizeof *e.peak);
	hs_sched_facts_of(e.items, e.n, pp, e.peak, &e.facts);
	hs_xgrow(&c->e, &c->cap, c->ne + 1, sizeof *c->e);
	c->e[c->ne++] = e;
	*items = e.items;
	*n = e.n;
	*facts = e.facts;
	return 0;
}

void hs_sched_facts_of(hs_sched_item *const *items, const size_t *n, int pp, double *peak, hs_sched_facts *f)
{
	f->kinds = 0;
	for (int s = 0; s < pp; s++) {
		peak[s] = hs_sched_peak(items[s], n[s], NULL);
		for (size_t i = 0; i < n[s]; i++)
			f->kinds |= 1u << items[s][i].kind;
	}
	f->peak = peak;
}
