/* MoE routing drawn per step (models/moe_routing.h):
 * - the busiest expert's expected load at skew 1 (Dirichlet(1) shares) is the harmonic number H_E over the
 *   uniform share, derived in models/moe_routing.c; the sample mean of many draws is checked against it
 *   within 4 standard errors (the variance of the maximum of E exponentials is below pi^2/6);
 * - skew 0 draws nothing and returns the uniform load; the busiest rank moves between draws; the same seed
 *   gives the same draws; a larger skew gives a larger mean load; multinomial counts conserve the tokens. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "models/moe_routing.h"

START_TEST(busiest_expert_matches_order_statistic)
{
	const int E = 64, n = 20000;
	hs_moe_routing rt = {.skew = 1, .multinomial = 0};
	hs_rng *r = hs_rng_create(7, 3);
	double *buf = malloc(E * sizeof *buf), sum = 0, sum2 = 0;
	for (int i = 0; i < n; i++) {
		double ex;
		double rank = hs_moe_routing_draw(r, &rt, E, E, 1e6, buf, &ex, NULL);
		ck_assert(fabs(rank - ex) < 1e-9); /* one expert per rank: the busiest rank is the busiest expert */
		sum += ex;
		sum2 += ex * ex;
	}
	double h = 0;
	for (int k = 1; k <= E; k++)
		h += 1.0 / k; /* H_64 = 4.7439 */
	double mean = sum / n, se = sqrt((sum2 / n - mean * mean) / n);
	ck_assert_msg(fabs(mean - h) < 4 * se, "mean busiest load %.4f, H_E %.4f, se %.4f", mean, h, se);
	ck_assert(se < 0.02); /* the check has teeth: 4 se is under 2% of H_E */
	/* ranks of 8 experts each: the busiest rank's load is at most the busiest expert's and at least 1 */
	double rsum = 0;
	for (int i = 0; i < 2000; i++) {
		double ex, rk = hs_moe_routing_draw(r, &rt, E, 8, 1e6, buf, &ex, NULL);
		ck_assert(rk <= ex + 1e-9 && rk >= 1 - 1e-9);
		rsum += rk;
	}
	ck_assert(rsum / 2000 < h);
	free(buf);
	hs_rng_destroy(r);
}
END_TEST

START_TEST(uniform_seeded_and_moving)
{
	const int E = 256;
	double *buf = malloc(E * sizeof *buf), ex;
	int rank;
	hs_moe_routing none = {.skew = 0, .multinomial = 1};
	ck_assert(hs_moe_routing_draw(NULL, &none, E, 64, 1e5, buf, &ex, &rank) == 1 && ex == 1 && rank == 0);
	hs_moe_routing rt = {.skew = 0.1, .multinomial = 1};
	hs_rng *a = hs_rng_create(1, 9), *b = hs_rng_create(1, 9);
	int seen[64] = {0}, distinct = 0;
	double prev = 0, m1 = 0, m2 = 0;
	for (int i = 0; i < 200; i++) {
		double la = hs_moe_routing_draw(a, &rt, E, 64, 262144, buf, NULL, &rank);
		double t = 0;
		for (int e = 0; e < E; e++)
			t += buf[e];
		ck_assert(t == 262144); /* multinomial counts keep every token */
		double lb = hs_moe_routing_draw(b, &rt, E, 64, 262144, buf, NULL, NULL);
		ck_assert(la == lb); /* same seed and stream, same draws */
		ck_assert(la >= 1);
		distinct += !seen[rank]++;
		if (i)
			ck_assert(la != prev);
		prev = la;
		m1 += la;
	}
	ck_assert_msg(distinct > 10, "the busiest rank moved among %d ranks only", distinct);
	hs_moe_routing more = {.skew = 1, .multinomial = 1};
	for (int i = 0; i < 200; i++)
		m2 += hs_moe_routing_draw(a, &more, E, 64, 262144, buf, NULL, NULL);
	ck_assert(m2 > m1);
	free(buf);
	hs_rng_destroy(a);
	hs_rng_destroy(b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("moe_routing");
	TCase *t = tcase_create("draw");
	tcase_add_test(t, busiest_expert_matches_order_statistic);
	tcase_add_test(t, uniform_seeded_and_moving);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
