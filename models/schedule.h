/* hs_sched: pipeline schedules as pure functions: the ordered work items one pipeline stage executes.
 *
 * Items name a micro-batch (0-based), a model chunk on this rank (0..vstages-1; the global chunk is
 * chunk * pp + stage, Megatron's interleaving) and a kind. Dependencies are implied: the forward of
 * (mb, chunk) on stage s needs it on stage s-1 (stage 0 of chunk c > 0 needs stage pp-1 of chunk c-1);
 * backward runs the other way, and the last global chunk's backward needs its own forward. BWD is the whole
 * backward; ZB-H1 splits it into BWD_INPUT (input gradient, on the critical path) and BWD_WEIGHT (weight
 * gradient, deferred into bubbles). */
#ifndef HS_SCHEDULE_H
#define HS_SCHEDULE_H

#include <stddef.h>

#include "sim/base/err.h"

enum hs_sched_kind { HS_SCHED_GPIPE, HS_SCHED_1F1B, HS_SCHED_INTERLEAVED, HS_SCHED_ZB_H1, HS_SCHED_COUNT };

enum hs_si_kind { HS_SI_FWD, HS_SI_BWD, HS_SI_BWD_INPUT, HS_SI_BWD_WEIGHT };

typedef struct hs_sched_item {
	int mb;
	int chunk;
	enum hs_si_kind kind;
} hs_sched_item;

/* "gpipe", "1f1b", "interleaved", "zb-h1", NULL. */
extern const char *const hs_sched_names[];
/* The kind named, or -1. */
int hs_sched_parse(const char *name);
const char *hs_sched_name(enum hs_sched_kind k);
/* "gpipe, 1f1b, interleaved or zb-h1": the names for an "expected ..." message, into buf; returns buf. */
const char *hs_sched_expected(char *buf, size_t len);

/* The ordered items of stage `stage` (0..pp-1); *items is allocated (free it). vstages is used only by
 * INTERLEAVED (>= 2; others take 1). Errors: HS_EINPUT for out-of-range arguments; HS_EINFEASIBLE for
 * interleaving with micro_batches % pp != 0.
 *   GPIPE: every forward, then every backward (micro-batch order).
 *   1F1B: min(pp - stage - 1, m) warm-up forwards, then one forward / one backward, then the cool-down
 *         backwards (Narayanan et al. 2021, PipeDream-Flush).
 *   INTERLEAVED: Megatron's interleaved 1F1B (Narayanan et al. 2021, section 2.2.2): chunks in groups of pp
 *         micro-batches, (pp - stage - 1) * 2 + (vstages - 1) * pp warm-up forwards (all of them when
 *         m == pp).
 *   ZB_H1: Qi et al. 2023, "Zero Bubble Pipeline Parallelism", ZB-H1: 1F1B's order of F and B (B = input
 *         gradient only), with each W (weight gradient) placed in the slots where the stage would wait, found
 *         by a unit-time (F = B = W) run of all stages; every stage holds at most pp micro-batches between F and W
 *         (Qi et al.: "all workers maintain the same number of in-flight micro-batches", so the peak over
 *         workers is 1F1B's, its first stage's pp). Its bubble is then (pp - 1) units against 1F1B's
 *         3 (pp - 1). */
int hs_sched_build(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages, hs_sched_item **items,
		   size_t *n, hs_err *err);

/* Peak number of (micro-batch, chunk) forwards whose activations are held (forward done, backward not; for
 * ZB-H1 until the weight gradient), over the stage's item list; -1 on bad arguments. Multiply by the layers
 * of one chunk for activation memory. 1F1B: min(pp - stage, m); GPipe: m; ZB-H1: up to pp on every stage;
 * interleaved: Megatron's warm-up + 1 chunks (m v when m == pp). */
int hs_sched_in_flight(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages);
/* The same peak with each held forward weighted by weight[chunk] (its chunk's layers, when a stage's chunks
 * differ): the layer-activations held at peak. NULL weights count 1 each. */
double hs_sched_in_flight_weighted(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages,
				   const double *weight);

#endif
