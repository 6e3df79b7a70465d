/* DualPipe: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report" (arXiv 2412.19437), section 3.2.1 and its
 * Figure 5, as the authors' reference implementation (github.com/deepseek-ai/DualPipe) orders a rank's work.
 *
 * Every rank s holds two copies' chunks: model chunk s (local chunk 0, "direction 0": micro-batches
 * [0, m/2) entering at rank 0) and model chunk pp-1-s (local chunk 1, direction 1: micro-batches [m/2, m)
 * entering at rank pp-1). For a rank, the direction whose micro-batches reach it first is "near", the other
 * "far"; h = pp/2 and r = min(s, pp-1-s), the rank's distance to its nearer end. The rank runs eight phases
 * (B alone is the whole backward, I an input gradient whose W is queued, W the oldest queued weight gradient):
 *   1. 2 (h - r - 1) x F near                      5. (h - r - 1) x B far, F far, B near
 *   2. (r + 1) x F near, F far                     6. (r + 1) x B far, B near; from the middle of the phase
 *   3. (h - r - 1) x I far, W, F far                  on, as I (DeepSeek: "the second half uses zero bubble")
 *   4. (m/2 - pp + r + 1) x F near, B far,         7. (h - r - 1) x W, I near
 *      F far, B near (the overlapped F&B pairs)    8. (r + 1) x W
 * Phase counts add up to m/2 forwards and m/2 backwards per direction and as many W as I.
 *
 * What it achieves in unit time (F = I = W = 1, B = 2), by hand and checked in tests/unit/models/
 * test_schedule.c: each rank has 3m units of work; the middle ranks (r = h - 1) cannot start before
 * h - 1, and the phases above keep them busy from then on, so the step takes 3m + pp/2 - 1 units, a bubble
 * fraction of (pp/2 - 1) / (3m + pp/2 - 1), half of ZB-H1's pp - 1. DeepSeek's Table 2 writes the bubble
 * (PP/2 - 1)(F&B + B - 3W) with B the whole backward; with a perfectly overlapped F&B of 2 units it is the
 * same pp/2 - 1. hetsim runs F and B of a pair one after the other on the compute stream (what the overlap
 * buys is hiding the expert all-to-all behind the other micro-batch's compute, which hetsim's comm stream
 * does for any order). Peak activations: after phase 2 a rank holds 2 (h - r - 1) + 2 (r + 1) = pp chunk-
 * forwards, phase 3 keeps it at pp (an I and a W free one, an F takes one), and phase 4's first F reaches
 * pp + 1 before its B frees one: DeepSeek's "PP + 1" micro-batches of a stage on every rank, with twice the
 * parameters (both copies). */
#include "models/sched_impl.h"

#include <stdlib.h>

#include "sim/base/alloc.h"

struct dp {
	hs_sched_list *l;
	int half;           /* micro-batches per direction */
	int nf[2], nb[2];   /* next micro-batch of each direction to forward / backward */
	int *wq, wh, wn;    /* queued weight gradients (direction * half + index), oldest first */
};

static void fwd(struct dp *d, int dir)
{
	hs_sched_add(d->l, dir * d->half + d->nf[dir]++, dir, HS_SI_FWD);
}

/* zb: split the backward and queue its W */
static void bwd(struct dp *d, int dir, int zb)
{
	int i = d->nb[dir]++, mb = dir * d->half + i;
	hs_sched_add(d->l, mb, dir, zb ? HS_SI_BWD_INPUT : HS_SI_BWD);
	if (zb)
		d->wq[d->wh + d->wn++] = mb;
}

static void weight(struct dp *d)
{
	int mb = d->wq[d->wh++];
	d->wn--;
	hs_sched_add(d->l, mb, mb >= d->half, HS_SI_BWD_WEIGHT);
}

void hs_sched_dualpipe(hs_sched_list *l, int pp, int s, int m)
{
	int h = pp / 2, r = s < pp - 1 - s ? s : pp - 1 - s;
	int near = s < h ? 0 : 1, far = 1 - near;
	struct dp d = {.l = l, .half = m / 2, .wq = hs_xmalloc((size_t)m * sizeof *d.wq)};
	for (int i = 0; i < 2 * (h - r - 1); i++)
		fwd(&d, near);
	for (int i = 0; i < r + 1; i++) {
		fwd(&d, near);
		fwd(&d, far);
	}
	for (int i = 0; i < h - r - 1; i++) {
		bwd(&d, far, 1);
		weight(&d);
		fwd(&d, far);
	}
	for (int i = 0; i < d.half - pp + r + 1; i++) {
		fwd(&d, near);
		bwd(&d, far, 0);
		fwd(&d, far);
		bwd(&d, near, 0);
	}
	for (int i = 0; i < h - r - 1; i++) {
		bwd(&d, far, 0);
		fwd(&d, far);
		bwd(&d, near, 0);
	}
	/* phase 6: the split starts at the phase's middle item, which is a B far when r is odd (r + 1 even) and
	 * a B near when r is even, so r + 1 of its 2 (r + 1) backwards are split either way */
	int zb = 0;
	for (int i = 0; i < r + 1; i++) {
		if (i == (r + 1) / 2 && r % 2 == 1)
			zb = 1;
		bwd(&d, far, zb);
		if (i == (r + 1) / 2 && r % 2 == 0)
			zb = 1;
		bwd(&d, near, zb);
	}
	for (int i = 0; i < h - r - 1; i++) {
		weight(&d);
		bwd(&d, near, 1);
	}
	while (d.wn > 0)
		weight(&d);
	free(d.wq);
}
