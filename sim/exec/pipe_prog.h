/* hs_pipe_prog: a pipeline schedule's items in the order the closed-form pipeline step (pipe_step.c) takes
 * them, each with its dependencies resolved to the indices of the items it waits for, so that the walk does
 * per item the arithmetic of its recurrence and nothing else.
 *
 * Which item waits for which, and the order the walk takes them in (the stages round-robin, one item each per
 * round where what it needs exists, so that a steady state repeats with the fewest items: hs_pipe_period), follow from the schedule alone (its kind, pp, chunks, micro-batches, the
 * model chunks and where each runs), not from any duration: a sweep's points that share a schedule share its
 * program. hs_pipe_progs keeps them across a thread's steps, beside the schedules they are made from
 * (range_cache.h), keyed by the schedule's items themselves (the schedule cache's, which live as long). */
#ifndef HS_PIPE_PROG_H
#define HS_PIPE_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "models/build.h"

enum { HS_PO_SENDS = 1, HS_PO_LAST_WEIGHT = 2 };

/* One item. Items are numbered two ways: by the walk's order (the program's) and by stage (a stage's items in
 * its schedule's order, stage after stage: hs_pipe_prog.first), the numbering of what the walk keeps per item,
 * so that a stage's accounting reads it in order. The items it waits for come before it in the program. */
typedef struct hs_pipe_op {
	int32_t need;   /* the item whose send it waits for (a neighbour's), by stage; -1: none */
	uint32_t at;    /* its own number by stage */
	uint32_t needx; /* that send's (stage * pp + the stage it goes to): where its seconds are kept */
	uint32_t sendx; /* the same of its own send (HS_PO_SENDS) */
	uint32_t inc;   /* (stage * v + chunk) * 4 + kind: what its compute task adds */
	int32_t mb;
	uint16_t s, to; /* its stage; the stage its send goes to (HS_PO_SENDS) */
	uint16_t chunk; /* local chunk */
	uint8_t kind;   /* enum hs_si_kind */
	uint8_t flags;  /* HS_PO_*: it sends; it is its chunk's last weight-gradient item */
} hs_pipe_op;

/* A stretch of the program that repeats: `count` periods of `len` items from `start` (program order), each
 * item of a period the item `len` before it with every number by stage moved on by its stage's `shift` (the
 * items a stage runs per period). In a pipeline's steady state the walk's times then repeat too, shifted by
 * the period's length in time, once the times they read repeat (pipe_step.c checks that and extrapolates).
 * Only a stretch whose items, and the items after it, read no further back than one period is kept, so that
 * one period's times and the stages' state at its end decide every period after. count 0: none. */
typedef struct hs_pipe_period {
	uint32_t start, len, count;
	uint32_t *shift; /* [pp] a stage's items per period (0: it runs none) */
	uint32_t *at0;   /* [pp] the number by stage of its first item in the first period */
	uint8_t *sends;  /* [pp] its items of a period include a send */
} hs_pipe_period;

typedef struct hs_pipe_prog {
	hs_pipe_op *op; /* [n] in the walk's order */
	size_t n;
	uint32_t *first; /* [pp + 1] stage s's items are numbers first[s] .. first[s + 1] - 1 by stage */
	uint32_t *byat;  /* [n] the program's index of each number by stage */
	/* [nfirst] the program's indices of the items that first run a (stage, chunk, kind) or a chunk's last
	 * weight item's, or first send from one stage to another, in order: where the walk forms what those
	 * cost before it walks (their op ranges' costs, the sends' seconds) */
	uint32_t *first_use;
	size_t nfirst;
	int stuck; /* items no order reaches (the schedule deadlocks): op holds those it does */
	hs_pipe_period per;
} hs_pipe_prog;

/* The program of q's schedule over pp stages; NULL where it cannot say (more than 65,535 stages or chunks, or
 * a schedule that places a chunk by micro-batch: DualPipe, which the build gives as tasks). Free with
 * hs_pipe_prog_free. */
hs_pipe_prog *hs_pipe_prog_make(const hs_pipe *q, int pp);
void hs_pipe_prog_free(hs_pipe_prog *p);

/* Programs kept across steps. */
typedef struct hs_pipe_progs hs_pipe_progs;
hs_pipe_progs *hs_pipe_progs_create(void);
void hs_pipe_progs_free(hs_pipe_progs *c);
/* q's program from c where q's items are kept (q->own_items 0: a schedule cache's, alive as long as c), made
 * and kept on first use; NULL where q's items are its build's own (make one), or c is NULL or full. */
const hs_pipe_prog *hs_pipe_progs_get(hs_pipe_progs *c, const hs_pipe *q, int pp);

#endif
