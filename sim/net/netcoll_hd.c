/* Halving-doubling on the network model. With p2 the largest power of two <= n, rank i < p2 exchanges with
 * i xor 2^d: all-reduce halves S over log2 p2 steps (reduce-scatter) and doubles back (all-gather);
 * reduce-scatter is the halving half, all-gather the doubling half on pieces S/p2 .. S/2. A rank takes step
 * s once it has the partner's step s-1 and its own previous send has left. Ranks i >= p2 fold in first
 * (send their data to i - p2) and receive the result at the end. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

typedef struct hstate {
	int p2, L, nsteps;
	int *step;  /* [n] next step to send */
	int *recvd; /* [n] steps received */
	char *busy, *folded;
} hstate;

static int partner(const hstate *s, int i, int st)
{
	int d = st < s->L ? st : (s->nsteps == s->L ? st : 2 * s->L - 1 - st);
	return i ^ (1 << d);
}

static double bytes(const nc_run *r, const hstate *s, int st)
{
	if (r->op == HS_COLL_ALL_GATHER)
		return r->S / s->p2 * (double)(1 << st);
	if (st < s->L)
		return r->S / (double)(2 << st);
	return r->S / (double)(1 << (2 * s->L - st)); /* doubling back */
}

#define T_STEP 0
#define T_FOLDIN 1
#define T_FOLDOUT 2
#define TAG(kind, i, st) ((uint64_t)(kind) << 48 | (uint64_t)(i) << 16 | (uint64_t)(st))

static void try_step(nc_run *r, int i)
{
	hstate *s = r->st;
	if (s->busy[i] || s->step[i] >= s->nsteps || !s->folded[i])
		return;
	int st = s->step[i];
	if (st > 0 && s->recvd[i] < st)
		return;
	s->busy[i] = 1;
	s->step[i]++;
	hs_netcoll_send(r, i, partner(s, i, st), bytes(r, s, st), -1, TAG(T_STEP, i, st));
}

static void fold_out(nc_run *r, int i)
{
	hstate *s = r->st;
	if (i + s->p2 < r->n && s->recvd[i] == s->nsteps && !s->busy[i] && s->step[i] == s->nsteps) {
		s->busy[i] = 2; /* only once */
		hs_netcoll_send(r, i, i + s->p2, r->op == HS_COLL_REDUCE_SCATTER ? r->S / r->n : r->S, -1, TAG(T_FOLDOUT, i, 0));
	}
}

static void start(nc_run *r)
{
	hstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	s->p2 = 1;
	while (s->p2 * 2 <= r->n)
		s->p2 *= 2, s->L++;
	s->nsteps = r->op == HS_COLL_ALL_REDUCE ? 2 * s->L : s->L;
	s->step = hs_xcalloc((size_t)r->n, sizeof *s->step);
	s->recvd = hs_xcalloc((size_t)r->n, sizeof *s->recvd);
	s->busy = hs_xcalloc((size_t)r->n, 1);
	s->folded = hs_xcalloc((size_t)r->n, 1);
	for (int i = 0; i < s->p2; i++)
		s->folded[i] = i + s->p2 >= r->n;
	for (int i = s->p2; i < r->n; i++)
		hs_netcoll_send(r, i, i - s->p2, r->op == HS_COLL_ALL_GATHER ? r->S / r->n : r->S, -1, TAG(T_FOLDIN, i, 0));
	for (int i = 0; i < s->p2; i++)
		try_step(r, i);
}

static void on_done(nc_run *r, uint64_t tag)
{
	hstate *s = r->st;
	int kind = (int)(tag >> 48), i = (int)(tag >> 16 & 0xffffffffu), st = (int)(tag & 0xffff);
	if (kind == T_FOLDIN) {
		s->folded[i - s->p2] = 1;
		try_step(r, i - s->p2);
		return;
	}
	if (kind == T_FOLDOUT)
		return;
	int j = partner(s, i, st);
	s->busy[i] = 0;
	s->recvd[j]++;
	try_step(r, i);
	try_step(r, j);
	fold_out(r, i);
	fold_out(r, j);
}

static void sfree(nc_run *r)
{
	hstate *s = r->st;
	if (!s)
		return;
	free(s->step);
	free(s->recvd);
	free(s->busy);
	free(s->folded);
	free(s);
}

const nc_algo hs_nc_hd = {"halving_doubling", start, on_done, sfree, NULL};
