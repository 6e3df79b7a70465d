/* Transfers timed alone on their links (sim/net/solo.h): a solver of their own, over the links they cross (the
 * model's twins left out, as its solver leaves them out), driven as net_flow.c drives its own: every transfer
 * enters at time 0 and one recompute rates them; then, instant by instant, the transfers whose finish has come
 * leave together and a recompute rates the rest, each flow of a round's set brought up to the instant at its
 * old rate first. The same solver code on the same flows gives the model's rates (exact max-min, to rounding:
 * the links' loads are sums of integers, whatever the order), so the finishes are the model's. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/finq.h"
#include "sim/net/solo.h"

int hs_solo_run(const hs_maxmin *g, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin,
		double *rem)
{
	/* the links, numbered in ascending order of the model's (a route's stay ascending) */
	int *map = hs_xmalloc((size_t)(g->nlk ? g->nlk : 1) * sizeof *map);
	for (int l = 0; l < g->nlk; l++)
		map[l] = -1;
	int nl = 0, maxh = 1;
	for (int i = 0; i < nr; i++) {
		maxh = r[i]->nl > maxh ? r[i]->nl : maxh;
		for (int k = 0; k < r[i]->nl; k++)
			if (g->lk[r[i]->link[k]].twin < 0 && map[r[i]->link[k]] < 0)
				map[r[i]->link[k]] = 0, nl++;
	}
	int *lid = hs_xmalloc((size_t)(nl ? nl : 1) * sizeof *lid);
	for (int l = 0, k = 0; l < g->nlk; l++)
		if (map[l] == 0)
			lid[k] = l, map[l] = k++;
	hs_maxmin mm;
	hs_maxmin_init(&mm, nl);
	for (int k = 0; k < nl; k++)
		hs_maxmin_set_bw(&mm, k, g->lk[lid[k]].bw);
	int *hl = hs_xmalloc((size_t)maxh * sizeof *hl);
	double *hc = hs_xmalloc((size_t)maxh * sizeof *hc);
	for (int i = 0; i < nr; i++) {
		int id = hs_maxmin_new_flow(&mm), n = 0;
		for (int k = 0; k < r[i]->nl; k++)
			if (map[r[i]->link[k]] >= 0)
				hl[n] = map[r[i]->link[k]], hc[n++] = r[i]->coef[k];
		hs_maxmin_flow *f = &mm.fl[id];
		f->rem = bytes;
		f->t_upd = 0;
		f->t_fin = HS_TIME_MAX;
		hs_maxmin_add(&mm, id, n, hl, hc);
		fin[i] = HS_TIME_MAX;
	}
	free(hl), free(hc), free(lid), free(map);
	hs_finq fq;
	hs_finq_init(&fq);
	int rc = hs_maxmin_recompute(&mm, &fq, 0) ? -1 : 0; /* -1: a flow without a finish */
	while (!rc && !hs_finq_empty(&fq)) {
		hs_time now = hs_finq_min_t(&fq);
		if (now > stop)
			break;
		while (!hs_finq_empty(&fq) && hs_finq_min_t(&fq) <= now) {
			int id = hs_finq_pop(&fq);
			fin[id] = now;
			hs_maxmin_remove(&mm, id);
		}
		if (mm.ndirty)
			rc = hs_maxmin_recompute(&mm, &fq, now) ? -1 : 0;
	}
	if (!rc && rem)
		for (int i = 0; i < nr; i++) {
			const hs_maxmin_flow *f = &mm.fl[i];
			double x = fin[i] == HS_TIME_MAX ? f->rem - f->rate * (double)(stop - f->t_upd) : 0;
			rem[i] = x < 0 ? 0 : x;
		}
	hs_finq_free(&fq);
	hs_maxmin_free(&mm);
	return rc;
}
