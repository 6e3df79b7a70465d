/* hs_stats: latency histograms and time-weighted occupancy for simulation metrics.
 *
 * hs_hist is a log-linear ("HDR-style") histogram of non-negative integers (picoseconds, bytes). Values
 * below 256 are counted exactly; above, each power-of-two range [2^e, 2^(e+1)) is split into 128 equal
 * buckets, so a bucket is at most 1/128 of its lower bound wide. A percentile is reported as the midpoint of
 * its bucket (clamped to the observed min and max), so its relative error is at most 1/256 (0.39%) against
 * the exact order statistic. Recording is O(1) with no allocation; memory is fixed (7.3k counters, 58 KiB).
 *
 * hs_occ integrates a level over simulated time (queue length, bytes in a buffer): mean, maximum, and a
 * bounded time series (at most HS_OCC_BINS bins; when time runs past the last bin, adjacent bins merge and
 * the bin width doubles), so "occupancy over time" costs fixed memory whatever the run length. It also
 * counts arrivals and departures so that Little's law (L = lambda W) can be checked on any queue. */
#ifndef HS_STATS_H
#define HS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"

#define HS_HIST_SUB_BITS 7 /* 128 sub-buckets per power of two: relative bucket width <= 2^-7 */
#define HS_HIST_BUCKETS ((64 - HS_HIST_SUB_BITS) * (1u << HS_HIST_SUB_BITS) + (1u << HS_HIST_SUB_BITS))

typedef struct hs_hist {
	uint64_t n;
	uint64_t min, max;
	double sum;
	uint64_t count[HS_HIST_BUCKETS];
} hs_hist;

void hs_hist_init(hs_hist *h);
void hs_hist_add(hs_hist *h, uint64_t v);
void hs_hist_merge(hs_hist *into, const hs_hist *from);
/* The q-quantile (0 <= q <= 1): the smallest recorded value v such that at least ceil(q n) values are
 * <= v, within the relative error above. 0 when empty. */
uint64_t hs_hist_quantile(const hs_hist *h, double q);
double hs_hist_mean(const hs_hist *h);
/* Bucket index of v and the [lo, hi] range of values that share it (exposed for tests). */
size_t hs_hist_bucket(uint64_t v);
void hs_hist_bucket_range(size_t b, uint64_t *lo, uint64_t *hi);

#define HS_OCC_BINS 64

typedef struct hs_occ {
	hs_time t0, last; /* start of observation; time of the last change */
	double level;     /* current level */
	double area;      /* integral of level over [t0, last] */
	double max;
	uint64_t arrivals, departures;
	double sojourn; /* sum of the time items spent inside (picoseconds), recorded by the caller */
	hs_time bin_w;  /* width of a series bin; 0 until the first change */
	double bins[HS_OCC_BINS]; /* integral of level in each bin */
} hs_occ;

/* Start observing at time t0 with level 0. bin_w: initial series bin width (0 picks 1 us). */
void hs_occ_init(hs_occ *o, hs_time t0, hs_time bin_w);
/* The level changes by `delta` at time t (t >= last change). */
void hs_occ_add(hs_occ *o, hs_time t, double delta);
/* Convenience for queues of items: one item in / one item out after `stay` picoseconds. */
static inline void hs_occ_in(hs_occ *o, hs_time t) { hs_occ_add(o, t, 1); o->arrivals++; }
static inline void hs_occ_out(hs_occ *o, hs_time t, hs_time stay)
{
	hs_occ_add(o, t, -1);
	o->departures++;
	o->sojourn += (double)stay;
}
/* Extend the integral to time t without a change (call before reading at the end of a run). */
void hs_occ_close(hs_occ *o, hs_time t);
/* Time-weighted mean level over [t0, last]. */
double hs_occ_mean(const hs_occ *o);
/* Number of series bins in use and the time-averaged level of bin i. */
size_t hs_occ_nbins(const hs_occ *o);
double hs_occ_bin_mean(const hs_occ *o, size_t i);

#endif
