/* Event queue: a 4-ary implicit heap of 16-byte entries (time, slot), with event bodies in a slot pool
 * recycled through a free list (no malloc per event, as in ROSS).
 *
 * Why 4-ary: half the depth of a binary heap, and the four children of a node share one 64-byte cache
 * line (the array is offset by 3 slots so that sibling groups start on a line boundary). Entries hold only
 * the key and a slot index; the sequence number lives in the slot and is read only to break ties.
 *
 * Why the deferred pop: in a simulation most handlers schedule at least one new event. The run loop leaves
 * the running event's entry at the root; the first event the handler schedules replaces it with a single
 * sift-down instead of a sift-down (pop) plus a sift-up (push). If the handler schedules nothing, the root is
 * removed after it returns.
 *
 * Cancel is lazy: the slot is marked and its entry is dropped when it reaches the root. Ids carry a
 * generation counter so a stale id never cancels a recycled slot. */
#include "sim/engine.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc.h"

enum { SLOT_FREE = 0, SLOT_PENDING = 1, SLOT_CANCELLED = 2 };
#define HEAP_OFF 3 /* entry i lives at heap[i + HEAP_OFF]; children of i are 4i+1..4i+4 */

struct entry {
	hs_time t;
	uint32_t slot;
	uint32_t pad;
};

struct slot {
	hs_handler fn;
	void *ctx;
	uint64_t arg;
	uint64_t seq;
	uint32_t gen;
	uint32_t state; /* SLOT_* ; when free, `arg` holds the next free slot */
};

struct hs_engine {
	hs_time now;
	uint64_t seq;
	uint64_t executed;
	struct entry *heap; /* base pointer returned by aligned allocation */
	size_t n, cap;      /* entries in the heap (cancelled included) */
	struct slot *slots;
	size_t nslots, slotcap;
	uint64_t free_head; /* index+1 of first free slot, 0 when none */
	size_t cancelled;   /* cancelled entries still in the heap */
	int root_running;   /* the root entry belongs to the running event (deferred pop) */
	int running, stop;
};

hs_engine *hs_engine_create(void)
{
	hs_engine *e = hs_xcalloc(1, sizeof *e);
	return e;
}

void hs_engine_destroy(hs_engine *e)
{
	if (!e)
		return;
	free(e->heap);
	free(e->slots);
	free(e);
}

hs_time hs_engine_now(const hs_engine *e) { return e->now; }
size_t hs_engine_pending(const hs_engine *e) { return e->n - e->cancelled - (e->root_running ? 1 : 0); }
uint64_t hs_engine_executed(const hs_engine *e) { return e->executed; }
void hs_engine_stop(hs_engine *e) { e->stop = 1; }

static inline struct entry *H(const hs_engine *e) { return e->heap + HEAP_OFF; }

static inline int before(const hs_engine *e, const struct entry *a, const struct entry *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return e->slots[a->slot].seq < e->slots[b->slot].seq;
}

static void heap_reserve(hs_engine *e, size_t need)
{
	if (need <= e->cap)
		return;
	size_t c = e->cap ? e->cap * 2 : 1024;
	while (c < need)
		c *= 2;
	size_t bytes = (c + HEAP_OFF + 1) * sizeof(struct entry);
	bytes = (bytes + 63) & ~(size_t)63;
	struct entry *h = aligned_alloc(64, bytes);
	if (!h) {
		fprintf(stderr, "hetsim: out of memory (event heap of %zu entries)\n", c);
		exit(1);
	}
	if (e->heap)
		memcpy(h + HEAP_OFF, e->heap + HEAP_OFF, e->n * sizeof(struct entry));
	free(e->heap);
	e->heap = h;
	e->cap = c;
}

static void sift_up(hs_engine *e, size_t i, struct entry x)
{
	struct entry *h = H(e);
	while (i > 0) {
		size_t p = (i - 1) >> 2;
		if (!before(e, &x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

/* Place x at position i (a hole) and sift it down among n entries. */
static void sift_down(hs_engine *e, size_t i, struct entry x, size_t n)
{
	struct entry *h = H(e);
	for (;;) {
		size_t c = 4 * i + 1;
		if (c >= n)
			break;
		size_t best = c, end = c + 4 < n ? c + 4 : n;
		for (size_t k = c + 1; k < end; k++)
			if (before(e, &h[k], &h[best]))
				best = k;
		if (!before(e, &h[best], &x))
			break;
		h[i] = h[best];
		i = best;
	}
	h[i] = x;
}

static void pop_root(hs_engine *e)
{
	e->n--;
	if (e->n > 0)
		sift_down(e, 0, H(e)[e->n], e->n);
}

static uint32_t slot_alloc(hs_engine *e)
{
	if (e->free_head) {
		uint32_t s = (uint32_t)(e->free_head - 1);
		e->free_head = e->slots[s].arg;
		return s;
	}
	if (e->nslots == UINT32_MAX) {
		fprintf(stderr, "hetsim: internal error: more than 2^32 pending events\n");
		exit(1);
	}
	hs_xgrow(&e->slots, &e->slotcap, e->nslots + 1, sizeof *e->slots);
	e->slots[e->nslots].gen = 1;
	return (uint32_t)e->nslots++;
}

static void slot_free(hs_engine *e, uint32_t s)
{
	struct slot *sl = &e->slots[s];
	sl->state = SLOT_FREE;
	sl->gen++;
	if (sl->gen == 0)
		sl->gen = 1;
	sl->arg = e->free_head;
	e->free_head = (uint64_t)s + 1;
}

hs_event_id hs_engine_at(hs_engine *e, hs_time at, hs_handler fn, void *ctx, uint64_t arg)
{
	if (at < e->now) {
		fprintf(stderr, "hetsim: internal error: event scheduled at %llu ps, before now %llu ps\n",
			(unsigned long long)at, (unsigned long long)e->now);
		abort();
	}
	uint32_t s = slot_alloc(e);
	struct slot *sl = &e->slots[s];
	sl->fn = fn;
	sl->ctx = ctx;
	sl->arg = arg;
	sl->seq = e->seq++;
	sl->state = SLOT_PENDING;
	struct entry x = {.t = at, .slot = s};
	if (e->root_running) {
		/* Replace the running event's root entry: one sift-down instead of pop + push. */
		e->root_running = 0;
		sift_down(e, 0, x, e->n);
	} else {
		heap_reserve(e, e->n + 1);
		sift_up(e, e->n++, x);
	}
	return ((uint64_t)sl->gen << 32) | s;
}

hs_event_id hs_engine_after(hs_engine *e, hs_time delay, hs_handler fn, void *ctx, uint64_t arg)
{
	hs_time at = delay > HS_TIME_MAX - e->now ? HS_TIME_MAX : e->now + delay;
	return hs_engine_at(e, at, fn, ctx, arg);
}

int hs_engine_cancel(hs_engine *e, hs_event_id id)
{
	uint32_t s = (uint32_t)id, gen = (uint32_t)(id >> 32);
	if (id == 0 || s >= e->nslots)
		return 0;
	struct slot *sl = &e->slots[s];
	if (sl->gen != gen || sl->state != SLOT_PENDING)
		return 0;
	sl->state = SLOT_CANCELLED;
	e->cancelled++;
	return 1;
}

uint64_t hs_engine_run(hs_engine *e, hs_time until)
{
	assert(!e->running && "hs_engine_run is not reentrant");
	e->running = 1;
	e->stop = 0;
	uint64_t count = 0;
	while (e->n > 0 && !e->stop) {
		struct entry top = H(e)[0];
		struct slot *sl = &e->slots[top.slot];
		if (sl->state == SLOT_CANCELLED) {
			e->cancelled--;
			slot_free(e, top.slot);
			pop_root(e);
			continue;
		}
		if (top.t > until)
			break;
		assert(top.t >= e->now);
		e->now = top.t;
		hs_handler fn = sl->fn;
		void *ctx = sl->ctx;
		uint64_t arg = sl->arg;
		slot_free(e, top.slot);
		e->root_running = 1;
		fn(e, ctx, arg);
		if (e->root_running) {
			e->root_running = 0;
			pop_root(e);
		}
		count++;
	}
	e->executed += count;
	e->running = 0;
	return count;
}
