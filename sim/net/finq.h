/* Inside sim/net: the flow model's finish queue (sim/net/net_flow.c). Not a public header.
 *
 * Flows by finish time, taken in (time, flow id) order: flows finishing together leave in one order whatever
 * came before. Flows of one finish time are one group: a ring step's slices start at one instant with one size
 * and one rate, so hundreds to thousands of flows share each time. The groups' times are a 4-ary heap, and a
 * group is sorted by flow id only when its flows are taken (often it is in order already, or in reverse: ids
 * come back from the free list last freed first), so putting a flow in is a lookup and an append, and taking one
 * a step along a sorted array. The heap of single flows it replaces sifted every flow in and out, a fifth of a
 * hashed-ECMP 8,192-GPU step's instructions. */
#ifndef HS_FINQ_H
#define HS_FINQ_H

#include <stddef.h>

#include "sim/base/time.h"

typedef struct hs_finq_grp {
	hs_time t;
	int *f;        /* its flows (-1: one taken out while sorted) */
	int n, cap;    /* slots used, allocated */
	int live;      /* flows in it */
	int head;      /* sorted: the first slot not taken */
	int sorted;
	int hpos;      /* in the heap of times */
	int next_free;
} hs_finq_grp;

typedef struct hs_finq {
	hs_finq_grp *g;
	int ng, capg, free_g;
	int *heap, nheap; /* groups by time */
	struct hs_finq_slot {
		hs_time t;
		int g; /* -1: empty */
	} *tab;           /* time -> group, open addressing */
	size_t captab;
	int *grp, *pos;   /* per flow: its group (-1: not queued), its slot there */
	size_t capf;
	int last;         /* the group hs_finq_set put a flow in last, -1 */
	int *tmp;         /* sorting scratch */
	size_t captmp;
} hs_finq;

void hs_finq_init(hs_finq *q);
void hs_finq_free(hs_finq *q);
/* Flow f (>= 0) to finish at t: queued, or moved if queued at another time. */
void hs_finq_set(hs_finq *q, int f, hs_time t);
void hs_finq_remove(hs_finq *q, int f);
static inline int hs_finq_queued(const hs_finq *q, int f) { return (size_t)f < q->capf && q->grp[f] >= 0; }
static inline int hs_finq_empty(const hs_finq *q) { return q->nheap == 0; }
/* The least finish time (the queue not empty). */
static inline hs_time hs_finq_min_t(const hs_finq *q) { return q->g[q->heap[0]].t; }
/* Take the flow of least (time, id) out (the queue not empty), returning it. */
int hs_finq_pop(hs_finq *q);
/* Flows queued. */
size_t hs_finq_size(const hs_finq *q);

#endif
