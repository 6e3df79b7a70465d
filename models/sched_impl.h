/* What the schedule files share (models/schedule.c and one models/sched_<name>.c per schedule that needs more
 * than a few lines): the item list a builder appends to, and the builders the schedule table points at. */
#ifndef HS_SCHED_IMPL_H
#define HS_SCHED_IMPL_H

#include <stddef.h>

#include "models/schedule.h"

typedef struct hs_sched_list {
	hs_sched_item *v;
	size_t n, cap;
} hs_sched_list;

void hs_sched_add(hs_sched_list *l, int mb, int chunk, enum hs_si_kind kind);

/* Stage `stage` of pp, m micro-batches (models/sched_zbv.c, models/sched_dualpipe.c). */
void hs_sched_zbv(hs_sched_list *l, int pp, int stage, int m);
void hs_sched_dualpipe(hs_sched_list *l, int pp, int stage, int m);

#endif
