/* hs_engine: the discrete-event core. A clock in integer picoseconds and a queue of events ordered by
 * (time, sequence number): events at equal times run in the order they were scheduled, so every run is
 * deterministic. No global state: create as many engines as you like (a sweep runs many at once).
 *
 * An event is a handler, a context pointer and a 64-bit argument. Scheduling returns an id that can cancel
 * the event until it runs. Time never runs backwards: scheduling in the past is a bug and aborts. */
#ifndef HS_ENGINE_H
#define HS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"

typedef struct hs_engine hs_engine;
typedef void (*hs_handler)(hs_engine *eng, void *ctx, uint64_t arg);
/* Names a scheduled event: its time and sequence number. The zero id names no event. */
typedef struct hs_event_id {
	hs_time t;
	uint64_t seq;
} hs_event_id;

hs_engine *hs_engine_create(void);
void hs_engine_destroy(hs_engine *eng);

hs_time hs_engine_now(const hs_engine *eng);
/* Schedule at absolute time `at` (>= now). */
hs_event_id hs_engine_at(hs_engine *eng, hs_time at, hs_handler fn, void *ctx, uint64_t arg);
/* Schedule `delay` picoseconds from now. */
hs_event_id hs_engine_after(hs_engine *eng, hs_time delay, hs_handler fn, void *ctx, uint64_t arg);
/* Cancel a pending event. Returns 1 if it was pending and is now cancelled, 0 if it already ran, was
 * cancelled before, or the id is the zero id. */
int hs_engine_cancel(hs_engine *eng, hs_event_id id);

/* Run events whose time is <= until (HS_TIME_MAX: until the queue is empty or hs_engine_stop is called).
 * Afterwards now = time of the last event run (the clock does not jump to `until`). Returns the number of
 * events run by this call. */
uint64_t hs_engine_run(hs_engine *eng, hs_time until);
/* Ask hs_engine_run to return after the current event. */
void hs_engine_stop(hs_engine *eng);

size_t hs_engine_pending(const hs_engine *eng);   /* scheduled, not yet run, not cancelled */
uint64_t hs_engine_executed(const hs_engine *eng); /* events run since creation */

#endif
