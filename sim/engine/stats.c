/* Latency histogram and time-weighted occupancy; see stats.h for the error bound and the series scheme. */
#include "sim/engine/stats.h"

#include <math.h>
#include <string.h>

#define SUB (1u << HS_HIST_SUB_BITS)

void hs_hist_init(hs_hist *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

/* Values below 2*SUB map to themselves. Above, with e = floor(log2 v) >= SUB_BITS+1, shift s = e - SUB_BITS
 * keeps v >> s in [SUB, 2 SUB); bucket = s * SUB + (v >> s). Consecutive ranges tile without gaps. */
size_t hs_hist_bucket(uint64_t v)
{
	if (v < 2 * SUB)
		return (size_t)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	unsigned s = e - HS_HIST_SUB_BITS;
	return (size_t)s * SUB + (size_t)(v >> s);
}

void hs_hist_bucket_range(size_t b, uint64_t *lo, uint64_t *hi)
{
	if (b < 2 * SUB) {
		*lo = *hi = b;
		return;
	}
	size_t s = b / SUB - 1;
	uint64_t m = b - s * SUB; /* in [SUB, 2 SUB) */
	*lo = m << s;
	*hi = *lo + ((uint64_t)1 << s) - 1;
}

void hs_hist_add(hs_hist *h, uint64_t v)
{
	h->count[hs_hist_bucket(v)]++;
	h->n++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void hs_hist_merge(hs_hist *into, const hs_hist *from)
{
	if (!from->n)
		return;
	for (size_t i = 0; i < HS_HIST_BUCKETS; i++)
		into->count[i] += from->count[i];
	into->n += from->n;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t hs_hist_quantile(const hs_hist *h, double q)
{
	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t cum = 0;
	size_t lob = hs_hist_bucket(h->min), hib = hs_hist_bucket(h->max);
	for (size_t b = lob; b <= hib; b++) {
		cum += h->count[b];
		if (cum >= rank) {
			uint64_t lo, hi;
			hs_hist_bucket_range(b, &lo, &hi);
			uint64_t mid = lo + (hi - lo) / 2;
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;
}

double hs_hist_mean(const hs_hist *h) { return h->n ? h->sum / (double)h->n : 0; }

void hs_occ_init(hs_occ *o, hs_time t0, hs_time bin_w)
{
	memset(o, 0, sizeof *o);
	o->t0 = o->last = t0;
	o->bin_w = bin_w ? bin_w : 1000000; /* 1 us */
}

/* Add level*(b - a) to the series, merging bins when [a, b) runs past the last one. */
static void series_add(hs_occ *o, hs_time a, hs_time b, double level)
{
	if (b <= a)
		return;
	/* Merge even when level is 0, so every hs_occ closed at the same time has the same bin width. */
	while ((b - o->t0) > (hs_time)HS_OCC_BINS * o->bin_w) {
		for (size_t i = 0; i < HS_OCC_BINS / 2; i++)
			o->bins[i] = o->bins[2 * i] + o->bins[2 * i + 1];
		memset(o->bins + HS_OCC_BINS / 2, 0, sizeof(double) * (HS_OCC_BINS / 2));
		o->bin_w *= 2;
	}
	hs_time x = a;
	while (level != 0 && x < b) {
		size_t i = (size_t)((x - o->t0) / o->bin_w);
		hs_time end = o->t0 + (hs_time)(i + 1) * o->bin_w;
		if (end > b)
			end = b;
		o->bins[i] += level * (double)(end - x);
		x = end;
	}
}

void hs_occ_close(hs_occ *o, hs_time t)
{
	if (t <= o->last)
		return;
	o->area += o->level * (double)(t - o->last);
	series_add(o, o->last, t, o->level);
	o->last = t;
}

void hs_occ_add(hs_occ *o, hs_time t, double delta)
{
	hs_occ_close(o, t);
	o->level += delta;
	if (o->level > o->max)
		o->max = o->level;
}

double hs_occ_mean(const hs_occ *o)
{
	return o->last > o->t0 ? o->area / (double)(o->last - o->t0) : 0;
}

size_t hs_occ_nbins(const hs_occ *o)
{
	if (o->last <= o->t0)
		return 0;
	size_t n = (size_t)((o->last - o->t0 + o->bin_w - 1) / o->bin_w);
	return n > HS_OCC_BINS ? HS_OCC_BINS : n;
}

double hs_occ_bin_mean(const hs_occ *o, size_t i)
{
	hs_time a = o->t0 + (hs_time)i * o->bin_w, b = a + o->bin_w;
	if (b > o->last)
		b = o->last;
	return b > a ? o->bins[i] / (double)(b - a) : 0;
}
