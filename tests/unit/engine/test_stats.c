#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "sim/engine/stats.h"

START_TEST(buckets_tile_and_bound_error)
{
	/* consecutive buckets cover consecutive values with no gap, and each is at most 1/128 of its lower bound */
	uint64_t prev_hi = 0;
	for (size_t b = 0; b < HS_HIST_BUCKETS; b++) {
		uint64_t lo, hi;
		hs_hist_bucket_range(b, &lo, &hi);
		if (b)
			ck_assert_uint_eq(lo, prev_hi + 1);
		ck_assert_uint_eq(hs_hist_bucket(lo), b);
		ck_assert_uint_eq(hs_hist_bucket(hi), b);
		if (lo >= 256)
			ck_assert((double)(hi - lo + 1) / (double)lo <= 1.0 / 128 + 1e-12);
		prev_hi = hi;
	}
	ck_assert_uint_eq(prev_hi, UINT64_MAX);
}
END_TEST

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

START_TEST(quantiles_within_bound)
{
	static hs_hist h;
	hs_hist_init(&h);
	enum { N = 20000 };
	static uint64_t v[N];
	uint64_t x = 12345;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (x >> 20) % 10000000; /* 0 .. 10 ms in ps */
		hs_hist_add(&h, v[i]);
	}
	qsort(v, N, sizeof v[0], cmp);
	double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (int i = 0; i < 4; i++) {
		uint64_t exact = v[(size_t)ceil(qs[i] * N) - 1];
		uint64_t got = hs_hist_quantile(&h, qs[i]);
		ck_assert_msg(fabs((double)got - (double)exact) <= (double)exact / 256 + 1, "q %g: %llu vs %llu", qs[i],
			      (unsigned long long)got, (unsigned long long)exact);
	}
	ck_assert_uint_eq(hs_hist_quantile(&h, 0), v[0]);
	ck_assert_uint_eq(hs_hist_quantile(&h, 1), v[N - 1]);
	/* small values are exact */
	hs_hist_init(&h);
	for (uint64_t i = 1; i <= 100; i++)
		hs_hist_add(&h, i);
	ck_assert_uint_eq(hs_hist_quantile(&h, 0.5), 50);
	ck_assert_uint_eq(hs_hist_quantile(&h, 0.99), 99);
}
END_TEST

START_TEST(occupancy_mean_series_little)
{
	hs_occ o;
	hs_occ_init(&o, 0, 100);
	/* item A in [0, 300), item B in [100, 200): area 400, mean over [0, 400) = 1 */
	hs_occ_in(&o, 0);
	hs_occ_in(&o, 100);
	hs_occ_out(&o, 200, 100);
	hs_occ_out(&o, 300, 300);
	hs_occ_close(&o, 400);
	ck_assert(fabs(hs_occ_mean(&o) - 1.0) < 1e-12);
	ck_assert(fabs(o.max - 2) < 1e-12);
	ck_assert(fabs(o.area - o.sojourn) < 1e-9); /* Little: L T = sum of stays */
	ck_assert_uint_eq(hs_occ_nbins(&o), 4);
	ck_assert(fabs(hs_occ_bin_mean(&o, 0) - 1) < 1e-12);
	ck_assert(fabs(hs_occ_bin_mean(&o, 1) - 2) < 1e-12);
	ck_assert(fabs(hs_occ_bin_mean(&o, 3) - 0) < 1e-12);
	/* running past 64 bins merges pairs: the integral is kept */
	hs_occ_add(&o, 400, 1);
	hs_occ_close(&o, 100000);
	ck_assert_uint_le(hs_occ_nbins(&o), HS_OCC_BINS);
	double sum = 0;
	for (size_t i = 0; i < HS_OCC_BINS; i++)
		sum += o.bins[i];
	ck_assert(fabs(sum - o.area) < 1e-6);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stats");
	TCase *t = tcase_create("core");
	tcase_add_test(t, buckets_tile_and_bound_error);
	tcase_add_test(t, quantiles_within_bound);
	tcase_add_test(t, occupancy_mean_series_little);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
