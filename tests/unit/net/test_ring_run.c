/* A run of held ring hops' closed form (sim/net/ring_run.h) against the recurrence it stands for, slice by slice:
 * A_j(q) = max(A_j(q - 1), A_{j-1}(q - k)) + d_j from t0, on random runs (chains fed by random inputs one at a
 * time, and cycles), with delays drawn from few values (as a ring's are: ties between hops) or many. Every
 * output, the outputs the inputs determine, the slices set per hop and the latest last arrival must be equal. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/net/ring_run.h"

static uint64_t rng = 12345;
static uint32_t next(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33);
}

enum { MAXM = 9, MAXQ = 60 };

/* The recurrence over hops 0..m-1 and slices 0..Q-1; in[] the inputs (a cycle: its last hop). */
static void reference(int m, int k, long Q, const hs_time *d, hs_time t0, int cyclic, const hs_time *in,
		      hs_time A[MAXM][MAXQ])
{
	for (long q = 0; q < Q; q++)
		for (int j = 0; j < m; j++) {
			hs_time s = q ? A[j][q - 1] : t0;
			if (q >= k) {
				hs_time a = j ? A[j - 1][q - k] : cyclic ? A[m - 1][q - k] : in[q - k];
				s = a > s ? a : s;
			}
			A[j][q] = s + d[j];
		}
}

START_TEST(matches_recurrence)
{
	static hs_time A[MAXM][MAXQ];
	for (int trial = 0; trial < 4000; trial++) {
		int m = 1 + (int)(next() % (MAXM - 1)), k = 1 + (int)(next() % 3), cyclic = next() % 4 == 0;
		long Q = 1 + (long)(next() % (MAXQ - 1));
		int few = next() % 2;
		hs_time d[MAXM], in[MAXQ], t0 = next() % 1000;
		for (int j = 0; j < m; j++)
			d[j] = few ? 10 + 5 * (next() % 3) : 1 + next() % 50;
		/* inputs: a predecessor's arrivals (rising, at its own pace), or anything */
		hs_time a = t0;
		for (long q = 0; q < Q; q++)
			in[q] = next() % 3 ? (a += next() % 60) : t0 + next() % 3000;
		reference(m, k, Q, d, t0, cyclic, in, A);
		hs_ring_run *r = hs_ring_run_create(m, k, Q, d, t0, cyclic);
		long nin = 0;
		for (;;) {
			long ready = hs_ring_run_ready(r);
			long expect = cyclic ? Q : nin + (long)m * k < Q ? nin + (long)m * k : Q;
			ck_assert_int_eq(ready, expect);
			while (hs_ring_run_nout(r) < ready) {
				long q = hs_ring_run_nout(r);
				hs_time o = hs_ring_run_next(r);
				ck_assert_msg(o == A[m - 1][q], "trial %d (m %d k %d Q %ld%s) output %ld: %llu, expected %llu",
					      trial, m, k, Q, cyclic ? " cycle" : "", q, (unsigned long long)o,
					      (unsigned long long)A[m - 1][q]);
			}
			long set = 0;
			for (int j = 0; j < m; j++) {
				long sj = cyclic ? Q : nin + (long)(j + 1) * k < Q ? nin + (long)(j + 1) * k : Q;
				ck_assert_int_eq(hs_ring_run_set_at(r, j), sj);
				set += sj;
			}
			ck_assert_int_eq(hs_ring_run_set(r), set);
			if (cyclic || nin == Q)
				break;
			hs_ring_run_input(r, in[nin++]);
		}
		hs_time last = 0;
		for (int j = 0; j < m; j++)
			last = A[j][Q - 1] > last ? A[j][Q - 1] : last;
		ck_assert_msg(hs_ring_run_last(r) == last, "trial %d: last %llu, expected %llu", trial,
			      (unsigned long long)hs_ring_run_last(r), (unsigned long long)last);
		hs_ring_run_free(r);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ring_run");
	TCase *t = tcase_create("ring_run");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, matches_recurrence);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
