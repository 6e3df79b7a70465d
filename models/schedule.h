/* hs_sched: pipeline schedules as pure functions: the ordered work items one pipeline stage executes.
 *
 * Items name a micro-batch (0-based), a model chunk on this rank (0..chunks-1) and a kind. The model is cut
 * into model chunks g = 0..G-1 in layer order; where each lives is the schedule's placement
 * (hs_sched_chunk_of): Megatron's interleaving puts g = chunk * pp + stage; ZB-V folds the pipeline into a V
 * (stage s holds g = s and 2pp-1-s); DualPipe gives every stage two copies, g = s and pp-1-s, and feeds
 * half the micro-batches from each end (hs_sched_place says which copy a micro-batch runs through).
 * Dependencies are implied: the forward of (mb, g) needs that of (mb, g-1), the backward of (mb, g) needs
 * that of (mb, g+1), and the last chunk's backward needs its own forward. BWD is the whole backward;
 * zero-bubble schedules split it into BWD_INPUT (input gradient, on the critical path) and BWD_WEIGHT
 * (weight gradient, deferred into bubbles); DualPipe uses both forms. A micro-batch's activations on a chunk
 * are held from its forward to its BWD or BWD_WEIGHT. */
#ifndef HS_SCHEDULE_H
#define HS_SCHEDULE_H

#include <stddef.h>

#include "sim/base/err.h"

enum hs_sched_kind {
	HS_SCHED_GPIPE,
	HS_SCHED_1F1B,
	HS_SCHED_INTERLEAVED,
	HS_SCHED_ZB_H1,
	HS_SCHED_ZB_V,
	HS_SCHED_DUALPIPE,
	HS_SCHED_COUNT
};

enum hs_si_kind { HS_SI_FWD, HS_SI_BWD, HS_SI_BWD_INPUT, HS_SI_BWD_WEIGHT };

typedef struct hs_sched_item {
	int mb;
	int chunk;
	enum hs_si_kind kind;
} hs_sched_item;

/* "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe", NULL. */
extern const char *const hs_sched_names[];
/* The kind named, or -1. */
int hs_sched_parse(const char *name);
const char *hs_sched_name(enum hs_sched_kind k);
/* One line: what the schedule does and its source. */
const char *hs_sched_about(enum hs_sched_kind k);
/* "gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe": the names for an "expected ..." message, into buf; returns buf. */
const char *hs_sched_expected(char *buf, size_t len);

/* Model chunks per rank: vstages for INTERLEAVED, 2 for ZB_V and DUALPIPE, 1 for the others. */
int hs_sched_chunks(enum hs_sched_kind k, int vstages);
/* Model chunks G the layers are cut into: pp x chunks, but pp for DUALPIPE (each stage holds two copies). */
int hs_sched_model_chunks(enum hs_sched_kind k, int pp, int vstages);
/* The model chunk g that local chunk `chunk` of stage `stage` runs. */
int hs_sched_chunk_of(enum hs_sched_kind k, int pp, int vstages, int stage, int chunk);
/* Where micro-batch mb (of m) runs model chunk g: its stage and local chunk. */
void hs_sched_place(enum hs_sched_kind k, int pp, int vstages, int m, int mb, int g, int *stage, int *chunk);
/* Does where a model chunk runs depend on the micro-batch (DualPipe's two copies)? Where not, one
 * hs_sched_place per chunk says it for every micro-batch. */
int hs_sched_place_by_mb(enum hs_sched_kind k);
/* Why the schedule cannot run pp stages with m micro-batches (into buf, returned), or NULL when it can:
 * interleaving needs m % pp == 0, DualPipe an even pp >= 2 and an even m >= 2 pp. */
const char *hs_sched_infeasible(enum hs_sched_kind k, int pp, int m, char *buf, size_t len);

/* The ordered items of stage `stage` (0..pp-1); *items is allocated (free it). vstages is used only by
 * INTERLEAVED (>= 2; others take hs_sched_chunks). Errors: HS_EINPUT for out-of-range arguments;
 * HS_EINFEASIBLE where hs_sched_infeasible says so.
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
 *         3 (pp - 1).
 *   ZB_V: Qi et al. 2024, "Pipeline Parallelism with Controllable Memory" (V-ZB, the ZB-V of the zero-bubble
 *         repository): two chunks per stage in a V, F, B and W apart, at most 2 pp chunk-forwards held (1F1B's
 *         pp micro-batches); models/sched_zbv.c.
 *   DUALPIPE: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", section 3.2.1: micro-batches fed from both
 *         ends, each stage holding the model chunks of stages s and pp-1-s; models/sched_dualpipe.c. */
int hs_sched_build(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages, hs_sched_item **items,
		   size_t *n, hs_err *err);

/* Every stage's items at once: items[s], n[s] for s = 0..pp-1 (each allocated; free them), the lists
 * hs_sched_build gives stage by stage, with its errors (then nothing is allocated). Cheaper where one run
 * orders all stages (ZB-H1: its unit-time run of the whole pipeline, once instead of once per stage). */
int hs_sched_build_stages(enum hs_sched_kind k, int pp, int micro_batches, int vstages, hs_sched_item **items,
			  size_t *n, hs_err *err);
/* Peak number of (micro-batch, chunk) forwards whose activations are held (forward done, backward not; for
 * ZB-H1 until the weight gradient), over the stage's item list; -1 on bad arguments. Multiply by the layers
 * of one chunk for activation memory. 1F1B: min(pp - stage, m); GPipe: m; ZB-H1: up to pp on every stage;
 * interleaved: Megatron's warm-up + 1 chunks (m v when m == pp); ZB-V: up to 2 pp (chunks of half a stage);
 * DualPipe: pp + 1 (chunks of a whole stage). */
int hs_sched_in_flight(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages);
/* The same peak with each held forward weighted by weight[chunk] (its chunk's layers, when a stage's chunks
 * differ): the layer-activations held at peak. NULL weights count 1 each. */
double hs_sched_in_flight_weighted(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages,
				   const double *weight);
/* The same peak over an item list already built (hs_sched_build's for that stage): what the two above
 * compute after building it. */
double hs_sched_peak(const hs_sched_item *items, size_t n, const double *weight);

#endif
