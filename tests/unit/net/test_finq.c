/* The flow model's finish queue (sim/net/finq.h) against a reference: random puts, moves, removals and pops,
 * with times drawn from a few values (so groups are large and ties many, as a ring step's are) and ids reused
 * in the orders a free list gives; every pop must be the (time, id)-least flow queued, and the size and the
 * least time must agree after every operation. Then the way the flow model drives it: pops at the least time
 * while flows join and leave that time's group. */
#include <check.h>
#include <stdlib.h>

#include "sim/net/finq.h"

static uint64_t rng;
static uint32_t next(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33);
}

enum { MAXF = 3000 };

/* The reference: each flow's time. */
static long long ref_t[MAXF]; /* -1: not queued */

static int ref_min(void)
{
	int best = -1;
	for (int f = 0; f < MAXF; f++)
		if (ref_t[f] >= 0 && (best < 0 || ref_t[f] < ref_t[best]))
			best = f; /* ascending f: the first of the least time is the least id */
	return best;
}

static size_t ref_size(void)
{
	size_t n = 0;
	for (int f = 0; f < MAXF; f++)
		n += ref_t[f] >= 0;
	return n;
}

static void check_same(const hs_finq *q)
{
	int m = ref_min();
	ck_assert_uint_eq(hs_finq_size(q), ref_size());
	ck_assert_int_eq(hs_finq_empty(q), m < 0);
	if (m >= 0)
		ck_assert_int_eq((long long)hs_finq_min_t(q), (long long)ref_t[m]);
	for (int f = 0; f < MAXF; f += 97)
		ck_assert_int_eq(hs_finq_queued(q, f), ref_t[f] >= 0);
}

START_TEST(random_against_reference)
{
	for (int seed = 1; seed <= 6; seed++) {
		rng = (uint64_t)seed * 7919;
		hs_finq q;
		hs_finq_init(&q);
		for (int f = 0; f < MAXF; f++)
			ref_t[f] = -1;
		hs_time now = 0;
		int ntimes = seed % 2 ? 4 : 40; /* few times: big groups; more: many groups */
		for (int op = 0; op < 40000; op++) {
			uint32_t r = next() % 100;
			int f = (int)(next() % (seed > 3 ? MAXF : 300));
			if (r < 45) { /* put or move, at a time from now on */
				hs_time t = now + (hs_time)(next() % ntimes) * 1000;
				hs_finq_set(&q, f, t);
				ref_t[f] = t;
			} else if (r < 60) {
				if (ref_t[f] >= 0) {
					hs_finq_remove(&q, f);
					ref_t[f] = -1;
				}
			} else if (!hs_finq_empty(&q)) { /* pop: the clock goes to the least time */
				int m = ref_min();
				now = ref_t[m];
				ck_assert_int_eq(hs_finq_pop(&q), m);
				ref_t[m] = -1;
			}
			if (op % 101 == 0)
				check_same(&q);
		}
		while (!hs_finq_empty(&q)) {
			int m = ref_min();
			ck_assert_int_eq(hs_finq_pop(&q), m);
			ref_t[m] = -1;
		}
		check_same(&q);
		hs_finq_free(&q);
	}
}
END_TEST

/* As finish_event drives it: take every flow of the least time while, in between, flows of that time leave
 * (a set broken) and join (a flow finishing at once), ids in ascending, descending and mixed orders. */
START_TEST(taking_a_group)
{
	for (int order = 0; order < 3; order++) {
		rng = 11 + (uint64_t)order;
		hs_finq q;
		hs_finq_init(&q);
		for (int f = 0; f < MAXF; f++)
			ref_t[f] = -1;
		for (int k = 0; k < 1000; k++) {
			int f = order == 0 ? k : order == 1 ? 999 - k : (int)((k * 379) % 1000);
			hs_time t = 5000 + (k % 3 == 0) * 7;
			hs_finq_set(&q, f, t);
			ref_t[f] = t;
		}
		int taken = 0;
		while (!hs_finq_empty(&q) && hs_finq_min_t(&q) == 5000) {
			int m = ref_min();
			ck_assert_int_eq(hs_finq_pop(&q), m);
			ref_t[m] = -1;
			taken++;
			int g = (int)(next() % 2000);
			if (taken % 7 == 0 && ref_t[g] >= 0) {
				hs_finq_remove(&q, g);
				ref_t[g] = -1;
			}
			if (taken % 11 == 0 && ref_t[1000 + taken] < 0) { /* joins the group being taken */
				hs_finq_set(&q, 1000 + taken, 5000);
				ref_t[1000 + taken] = 5000;
			}
			check_same(&q);
		}
		ck_assert_int_gt(taken, 600);
		while (!hs_finq_empty(&q)) {
			int m = ref_min();
			ck_assert_int_eq(hs_finq_pop(&q), m);
			ref_t[m] = -1;
		}
		hs_finq_free(&q);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("finq");
	TCase *t = tcase_create("finq");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, random_against_reference);
	tcase_add_test(t, taking_a_group);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
