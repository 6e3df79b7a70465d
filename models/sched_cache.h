/* hs_sched_cache: every stage's schedule items for (schedule, pp, micro-batches, chunks), built once and kept
 * across the builds of one thread (a sweep's points repeat a pipeline under other tensor parallelism,
 * recomputation and ZeRO stages: the items depend on nothing else). The items are what hs_sched_build_stages
 * gives, read-only; the cache owns them until it is freed, and holds at most HS_SCHED_CACHE_ITEMS items in all
 * (past that it stops adding and a caller builds its own). */
#ifndef HS_SCHED_CACHE_H
#define HS_SCHED_CACHE_H

#include <stddef.h>

#include "models/schedule.h"

#define HS_SCHED_CACHE_ITEMS (1u << 20) /* 12 MB of items at most */

typedef struct hs_sched_cache hs_sched_cache;

hs_sched_cache *hs_sched_cache_create(void);
void hs_sched_cache_free(hs_sched_cache *c);
/* What a schedule's items say that a build asks every time: each stage's in-flight peak (hs_sched_peak
 * unweighted) and the kinds of item any stage runs (1 << enum hs_si_kind), found once with the items. */
typedef struct hs_sched_facts {
	const double *peak; /* [pp] */
	unsigned kinds;
} hs_sched_facts;

/* The items of every stage: *items[s], *n[s], and their facts, kept in c (not to be freed), or 1 with nothing
 * set where c is full (build them with hs_sched_build_stages); -1 with hs_sched_build_stages's error. */
int hs_sched_cache_get(hs_sched_cache *c, enum hs_sched_kind k, int pp, int micro_batches, int vstages,
		       hs_sched_item *const **items, const size_t **n, hs_sched_facts *facts, hs_err *err);
/* The facts of items[0..pp-1] (n[s] each) into *f, its peaks into peak[pp]. */
void hs_sched_facts_of(hs_sched_item *const *items, const size_t *n, int pp, double *peak, hs_sched_facts *f);

#endif
