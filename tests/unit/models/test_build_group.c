/* hs_build_group (models/build.c) writes a group's ranks as a first rank and a constant step: the same ranks
 * as hs_build_rank of every member (the group's definition in its header), for every kind of group, every
 * replica and stage, over rank orders, sizes of one, DiLoCo sites, and expert groups that do and do not
 * divide a site's replicas (those that do not cross into the next site, rank by rank). */
#include <check.h>
#include <string.h>

#include "models/build.h"

/* hs_build_group's members, rank by rank as its header defines them. */
static int reference(const hs_parallel *p, enum hs_group k, int d, int stage, int *ranks)
{
	int dpg = hs_build_dp_group_size(p), dbase = d / dpg * dpg;
	int sizes[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp, [HS_GROUP_DP] = dpg,
				     [HS_GROUP_EP] = p->ep, [HS_GROUP_PP] = p->pp};
	for (int i = 0; i < sizes[k]; i++) {
		switch (k) {
		case HS_GROUP_TP: ranks[i] = hs_build_rank(p, i, 0, d, stage); break;
		case HS_GROUP_CP: ranks[i] = hs_build_rank(p, 0, i, d, stage); break;
		case HS_GROUP_DP: ranks[i] = hs_build_rank(p, 0, 0, dbase + i, stage); break;
		case HS_GROUP_EP: ranks[i] = hs_build_rank(p, 0, 0, (d / p->ep) * p->ep + i, stage); break;
		case HS_GROUP_PP: ranks[i] = hs_build_rank(p, 0, 0, d, i); break;
		default: break;
		}
	}
	return sizes[k];
}

/* Every group of layout p against the reference; returns the groups compared. */
static int compare(const hs_parallel *p)
{
	int got[64], want[64], n = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		for (int d = 0; d < p->dp; d++)
			for (int st = 0; st < p->pp; st++) {
				int a = hs_build_group(p, (enum hs_group)k, d, st, got);
				int b = reference(p, (enum hs_group)k, d, st, want);
				ck_assert_int_eq(a, b);
				ck_assert_msg(memcmp(got, want, (size_t)a * sizeof *got) == 0,
					      "group %d of replica %d, stage %d (tp %d cp %d dp %d pp %d ep %d sites %d "
					      "order %d%d%d%d)",
					      k, d, st, p->tp, p->cp, p->dp, p->pp, p->ep, p->sites, p->order[0],
					      p->order[1], p->order[2], p->order[3]);
				n++;
			}
	return n;
}

START_TEST(groups_are_their_ranks)
{
	static const int orders[][4] = {{0, 0, 0, 0}, {0, 1, 2, 3}, {2, 0, 1, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}};
	/* tp, cp, dp, pp, ep, sites */
	static const int layouts[][6] = {{2, 1, 4, 2, 2, 1}, {1, 1, 8, 1, 1, 1}, {4, 2, 2, 2, 1, 1},
					 {2, 1, 6, 2, 4, 1}, {2, 1, 8, 2, 2, 2}, {1, 2, 12, 2, 3, 2},
					 {2, 1, 12, 1, 4, 3}, {1, 1, 1, 4, 1, 1}, {3, 1, 4, 3, 2, 2},
					 {1, 1, 12, 1, 8, 3}, {1, 1, 6, 2, 4, 2}};
	int n = 0;
	for (size_t o = 0; o < sizeof orders / sizeof *orders; o++)
		for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
			hs_parallel p = {.tp = layouts[l][0], .cp = layouts[l][1], .dp = layouts[l][2],
					 .pp = layouts[l][3], .ep = layouts[l][4], .sites = layouts[l][5]};
			memcpy(p.order, orders[o], sizeof p.order);
			n += compare(&p);
		}
	ck_assert_int_gt(n, 1000);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("build_group");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, groups_are_their_ranks);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
