/* The cost of an exact incremental max-min (issue 22, item 2): the flow model's solver (sim/net/maxmin.h) with
 * its exactness check against the old propagation (exact = 0: up to 4 rounds, the rest keep their rates), on
 * the same changes in the same run, in CPU seconds (clock()). Two shapes:
 *   - a two-level fat-tree: 64 leaves x 16 uplinks to 16 spines, flows between random hosts (4 hops across
 *     the spine, ECMP-hashed), 4,000 flows in flight (dense: a spine link carries ~250), each change one
 *     arrival and one departure, where exactness costs most;
 *   - chains: 2,000 links in a line, each flow over 1 to 4 consecutive links, where a change travels far.
 * Prints each pair's ratio (exact / old) and the worst rate of the old solver off the exact one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/net/maxmin.h"

static uint64_t rng;
static uint32_t next(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33);
}

enum { MAXH = 8 };
typedef struct route {
	int nl, link[MAXH];
	double coef[MAXH];
} route;

static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* One route: fat tree (kind 0) or chain (kind 1). Links ascend, as hs_maxmin_add wants. */
static void draw(int kind, route *r)
{
	if (kind == 0) {
		/* links: host up [0,1024), host down [1024,2048), leaf->spine [2048, 3072), spine->leaf [3072, 4096) */
		int a = (int)(next() % 1024), b = (int)(next() % 1024);
		while (b / 16 == a / 16)
			b = (int)(next() % 1024);
		int s = (int)(next() % 16);
		int l[4] = {a, 1024 + b, 2048 + (a / 16) * 16 + s, 3072 + (b / 16) * 16 + s};
		r->nl = 4;
		for (int i = 0; i < 4; i++)
			r->link[i] = l[i], r->coef[i] = 1;
	} else {
		int n = 1 + (int)(next() % 4), s = (int)(next() % (2000 - n));
		r->nl = n;
		for (int i = 0; i < n; i++)
			r->link[i] = s + i, r->coef[i] = 1;
	}
}

static double run(int kind, int exact, int inflight, int changes, double **rates)
{
	int nlk = kind == 0 ? 4096 : 2000;
	hs_maxmin mm;
	hs_maxmin_init(&mm, nlk);
	mm.exact = exact;
	rng = 12345 + (uint64_t)kind;
	for (int l = 0; l < nlk; l++)
		hs_maxmin_set_bw(&mm, l, kind == 0 && l >= 2048 ? 0.5 + (next() % 4) * 0.25 : 1);
	int total = inflight + changes;
	route *rt = malloc((size_t)total * sizeof *rt);
	int *rated = calloc((size_t)total, sizeof *rated);
	for (int i = 0; i < total; i++)
		draw(kind, &rt[i]);
	double t0 = cpu_s();
	int head = 0; /* flows [head, next) are in flight */
	for (int i = 0; i < total; i++) {
		int id = hs_maxmin_new_flow(&mm);
		hs_maxmin_add(&mm, id, rt[i].nl, rt[i].link, rt[i].coef);
		if (i >= inflight)
			hs_maxmin_remove(&mm, head++);
		if (i < inflight && i % 1000 != 999)
			continue; /* fill up in batches */
		size_t n;
		while ((n = hs_maxmin_round(&mm)) > 0)
			for (size_t a = 0; a < n; a++) {
				int f = mm.aff[a];
				hs_maxmin_settle(&mm, &mm.fl[f], rated[f]);
				rated[f] = 1;
			}
	}
	double t = cpu_s() - t0;
	*rates = malloc((size_t)inflight * sizeof **rates);
	for (int i = 0; i < inflight; i++)
		(*rates)[i] = mm.fl[head + i].rate;
	hs_maxmin_free(&mm);
	free(rt);
	free(rated);
	return t;
}

int main(void)
{
	const char *names[] = {"fat-tree 1,024 hosts, 4,000 flows", "chain of 2,000 links, 4,000 flows"};
	int inflight[] = {4000, 4000}, changes[] = {4000, 20000};
	for (int k = 0; k < 2; k++) {
		double *re, *ro;
		double te = run(k, 1, inflight[k], changes[k], &re);
		double to = run(k, 0, inflight[k], changes[k], &ro);
		double w = 0;
		for (int i = 0; i < inflight[k]; i++) {
			double d = fabs(ro[i] - re[i]) / re[i];
			w = d > w ? d : w;
		}
		printf("maxmin %-36s %d changes: exact %.3f s CPU, old %.3f s CPU, ratio %.2fx; old rates off by up to %.3g\n",
		       names[k], changes[k], te, to, te / to, w);
		free(re);
		free(ro);
	}
	return 0;
}
