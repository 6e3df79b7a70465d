#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/engine/engine.h"

struct log {
	uint64_t args[64];
	hs_time times[64];
	int n;
};

static void rec(hs_engine *e, void *ctx, uint64_t arg)
{
	struct log *l = ctx;
	l->args[l->n] = arg;
	l->times[l->n++] = hs_engine_now(e);
}

START_TEST(orders_by_time)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	hs_engine_at(e, 300, rec, &l, 3);
	hs_engine_at(e, 100, rec, &l, 1);
	hs_engine_at(e, 200, rec, &l, 2);
	ck_assert_uint_eq(hs_engine_pending(e), 3);
	ck_assert_uint_eq(hs_engine_run(e, HS_TIME_MAX), 3);
	ck_assert_int_eq(l.n, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(l.args[i], (uint64_t)i + 1);
		ck_assert_uint_eq(l.times[i], (hs_time)(i + 1) * 100);
	}
	ck_assert_uint_eq(hs_engine_now(e), 300);
	hs_engine_destroy(e);
}
END_TEST

START_TEST(ties_run_in_schedule_order)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	for (uint64_t i = 0; i < 40; i++)
		hs_engine_at(e, 500, rec, &l, i);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(l.n, 40);
	for (int i = 0; i < 40; i++)
		ck_assert_uint_eq(l.args[i], (uint64_t)i);
	hs_engine_destroy(e);
}
END_TEST

static void chain(hs_engine *e, void *ctx, uint64_t arg)
{
	struct log *l = ctx;
	rec(e, ctx, arg);
	if (arg < 5) {
		/* two events at the same future time: must run in the order scheduled */
		hs_engine_after(e, 10, chain, l, arg + 1);
		hs_engine_after(e, 10, rec, l, 100 + arg);
	}
}

START_TEST(handler_schedules_keep_order)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	hs_engine_at(e, 0, chain, &l, 0);
	hs_engine_run(e, HS_TIME_MAX);
	/* 0 | 1, 100 | 2, 101 | ... */
	ck_assert_uint_eq(l.args[0], 0);
	for (int k = 1; k <= 5; k++) {
		ck_assert_uint_eq(l.args[2 * k - 1], (uint64_t)k);
		ck_assert_uint_eq(l.args[2 * k], 100 + (uint64_t)k - 1);
		ck_assert_uint_eq(l.times[2 * k], (hs_time)10 * k);
	}
	hs_engine_destroy(e);
}
END_TEST

START_TEST(cancel_removes_only_that_event)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	hs_event_id a = hs_engine_at(e, 10, rec, &l, 1);
	hs_event_id b = hs_engine_at(e, 20, rec, &l, 2);
	hs_engine_at(e, 30, rec, &l, 3);
	ck_assert_int_eq(hs_engine_cancel(e, b), 1);
	ck_assert_int_eq(hs_engine_cancel(e, b), 0); /* twice: no-op */
	ck_assert_uint_eq(hs_engine_pending(e), 2);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(l.n, 2);
	ck_assert_uint_eq(l.args[0], 1);
	ck_assert_uint_eq(l.args[1], 3);
	ck_assert_int_eq(hs_engine_cancel(e, a), 0); /* already ran */
	/* a stale id must not cancel a recycled slot */
	hs_event_id c = hs_engine_at(e, 40, rec, &l, 4);
	ck_assert_int_eq(hs_engine_cancel(e, a), 0);
	ck_assert_int_eq(hs_engine_cancel(e, (hs_event_id){0, 0}), 0);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(l.n, 3);
	(void)c;
	hs_engine_destroy(e);
}
END_TEST

START_TEST(run_until_stops_at_bound)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	for (int i = 1; i <= 10; i++)
		hs_engine_at(e, (hs_time)i * 100, rec, &l, (uint64_t)i);
	ck_assert_uint_eq(hs_engine_run(e, 500), 5);
	ck_assert_uint_eq(hs_engine_now(e), 500);
	ck_assert_uint_eq(hs_engine_pending(e), 5);
	ck_assert_uint_eq(hs_engine_run(e, 549), 0);
	ck_assert_uint_eq(hs_engine_run(e, HS_TIME_MAX), 5);
	ck_assert_uint_eq(hs_engine_executed(e), 10);
	hs_engine_destroy(e);
}
END_TEST

/* A pseudo-random workload run twice gives the identical trace; checks heap order against a sort. */
struct rnd {
	uint64_t s;
	hs_time last;
	uint64_t lastseq;
	uint64_t hash;
	int n;
	int bad;
};
static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}
static void rstep(hs_engine *e, void *ctx, uint64_t arg)
{
	struct rnd *r = ctx;
	hs_time now = hs_engine_now(e);
	if (now < r->last)
		r->bad = 1;
	r->last = now;
	r->hash = r->hash * 1000003u ^ (now * 31 + arg);
	if (++r->n < 20000) {
		int k = (int)(xs(&r->s) % 3); /* 0, 1 or 2 children keeps the population roughly stable */
		for (int i = 0; i < k; i++)
			hs_engine_after(e, xs(&r->s) % 50, rstep, r, xs(&r->s) & 0xffff);
		if (xs(&r->s) % 7 == 0) {
			hs_event_id id = hs_engine_after(e, 5, rstep, r, 1);
			hs_engine_cancel(e, id);
		}
	}
}
static uint64_t run_random(void)
{
	hs_engine *e = hs_engine_create();
	struct rnd r = {.s = 88172645463325252ull};
	for (int i = 0; i < 500; i++)
		hs_engine_at(e, xs(&r.s) % 1000, rstep, &r, (uint64_t)i);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(r.bad, 0);
	ck_assert_uint_eq(hs_engine_pending(e), 0);
	hs_engine_destroy(e);
	return r.hash;
}
START_TEST(deterministic_and_monotone)
{
	uint64_t a = run_random(), b = run_random();
	ck_assert_uint_eq(a, b);
}
END_TEST

/* Scheduling between the clock and the next pending event after a bounded run must still order correctly. */
START_TEST(schedule_after_bounded_run)
{
	hs_engine *e = hs_engine_create();
	struct log l = {0};
	hs_engine_at(e, 100, rec, &l, 1);
	hs_engine_at(e, 1000, rec, &l, 4);
	hs_engine_run(e, 500); /* runs 100; 1000 stays pending */
	hs_engine_at(e, 600, rec, &l, 2);
	hs_engine_at(e, 600, rec, &l, 3);
	hs_engine_at(e, 1000, rec, &l, 5);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(l.n, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(l.args[i], (uint64_t)i + 1);
	hs_engine_destroy(e);
}
END_TEST

/* Against a reference: every event runs in (time, seq) order, cancelled ones never. */
struct refrun {
	hs_time t[4096];
	uint64_t seq[4096];
	int n;
};
static void refrec(hs_engine *e, void *ctx, uint64_t arg)
{
	struct refrun *r = ctx;
	r->t[r->n] = hs_engine_now(e);
	r->seq[r->n++] = arg;
}
START_TEST(matches_reference_order)
{
	hs_engine *e = hs_engine_create();
	static struct refrun r;
	r.n = 0;
	uint64_t s = 12345;
	hs_event_id ids[3000];
	int cancelled[3000] = {0};
	for (int i = 0; i < 3000; i++)
		ids[i] = hs_engine_at(e, xs(&s) % 200 * 1000 + (xs(&s) % 3), refrec, &r, (uint64_t)i);
	int nc = 0;
	for (int i = 0; i < 3000; i += 7) {
		ck_assert_int_eq(hs_engine_cancel(e, ids[i]), 1);
		cancelled[i] = 1;
		nc++;
	}
	ck_assert_uint_eq(hs_engine_pending(e), (size_t)(3000 - nc));
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_int_eq(r.n, 3000 - nc);
	for (int k = 0; k < r.n; k++) {
		ck_assert_int_eq(cancelled[r.seq[k]], 0);
		ck_assert_uint_eq(r.t[k], ids[r.seq[k]].t);
		if (k > 0) {
			ck_assert(r.t[k] >= r.t[k - 1]);
			if (r.t[k] == r.t[k - 1])
				ck_assert(r.seq[k] > r.seq[k - 1]);
		}
	}
	hs_engine_destroy(e);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("engine");
	TCase *t = tcase_create("core");
	tcase_add_test(t, orders_by_time);
	tcase_add_test(t, ties_run_in_schedule_order);
	tcase_add_test(t, handler_schedules_keep_order);
	tcase_add_test(t, cancel_removes_only_that_event);
	tcase_add_test(t, run_until_stops_at_bound);
	tcase_add_test(t, deterministic_and_monotone);
	tcase_add_test(t, schedule_after_bounded_run);
	tcase_add_test(t, matches_reference_order);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
