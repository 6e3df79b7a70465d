/* Halving-doubling on the network model. With p2 the largest power of two <= n, rank i < p2 exchanges with
 * i xor 2^d: all-reduce halves S over log2 p2 steps (reduce-scatter) and doubles back (all-gather);
 * reduce-scatter is the halving half, all-gather the doubling half on pieces S/p2 .. S/2. A rank takes step
 * s once it has its step s-1 partner's data and its own previous send has arrived, and when its step s
 * partner can take step s too (try_step). Ranks i >= p2 fold in first (send their data to i - p2) and
 * receive the result at the end.
 *
 * Symmetry classes (sim/net/netsym.h, hs_net_set_symmetry): with n a power of two (nothing folds in), the
 * program is invariant under every translation i -> i xor m: partner(i xor m, s) = partner(i, s) xor m and the
 * bytes of step s are the same for every rank. Each bit b's translation (i -> i xor 2^b) that the fabric bears
 * as well (hs_netsym_find_group checks the link permutation carrying every step's route onto its image's) is a
 * generator; with B the bits that pass, rank i stands for its coset i xor span(B), and step s of a coset is one
 * flow. The state is kept for the cosets' lowest ranks (i with the bits of B clear). Inside an 8-GPU node the
 * bits 0-2 swap GPUs (and their rails, where the fabric is rail-symmetric); the higher bits swap nodes, which a
 * fat-tree bears with `ecmp: dmodk` and inside a leaf. Other traffic entering the classes' links breaks them:
 * every rank takes its coset's state, and each cut class transfer is carried on rank by rank. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

typedef struct hstate {
	int p2, L, nsteps;
	int *step;  /* [n] next step to send */
	int *recvd; /* [n] steps received */
	char *busy, *folded;
	hs_symrun *sym; /* classes: member s * n + i is step s of rank i; NULL when none */
	int bmask;      /* while the classes hold: the translations' bits (rank i stands for i xor span) */
	int live;
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
#define T_CLASS 3 /* step st of rank i's coset, as one class transfer */

static int rep_of(const hstate *s, int i) { return i & ~s->bmask; }

/* Rank i can take its next step: folded in, its previous send arrived and the partner's previous step's data
 * in. */
static int ready(const hstate *s, int i)
{
	int st = s->step[i];
	return !s->busy[i] && st < s->nsteps && s->folded[i] && (st == 0 || s->recvd[i] >= st);
}

static void send_step(nc_run *r, int i)
{
	hstate *s = r->st;
	int st = s->step[i];
	s->busy[i] = 1;
	s->step[i]++;
	if (s->live) {
		r->outstanding++;
		hs_net_sym_xfer(r->net, s->sym, s->sym->sym->cls_of[(size_t)st * r->n + i], bytes(r, s, st), NULL,
				hs_netcoll_child_cb, r, TAG(T_CLASS, i, st));
	} else
		hs_netcoll_send(r, i, partner(s, i, st), bytes(r, s, st), -1, TAG(T_STEP, i, st));
}

/* A step is an exchange: the two partners' sends start together, once both can take it (a rendezvous, as MPI
 * libraries move a message above their eager limit only once its receive is posted: Open MPI's ob1 PML,
 * MPICH's CH3/CH4 rendezvous; NCCL has no halving-doubling). A rank that ran ahead waits for its partner
 * instead of pushing its step into the partner's links while the partner still receives its previous one: on
 * a graph with one slow link that push shared the slow link with the step that was late already and took 18%
 * longer than the steps one after the other (tests/unit/coll/test_coll_xgraph.c). */
static void try_step(nc_run *r, int i)
{
	hstate *s = r->st;
	if (!ready(s, i))
		return;
	int st = s->step[i], j = partner(s, i, st);
	if (s->live)
		j = rep_of(s, j); /* the partner's coset: the same as i's when the step's bit is a translation's */
	if (j == i) {
		send_step(r, i);
		return;
	}
	if (!ready(s, j) || s->step[j] != st)
		return;
	send_step(r, i);
	send_step(r, j);
}

/* The classes: the bits b whose translation i -> i xor 2^b the routes bear (see the head of the file),
 * remembered by the group (hs_net_memo_get); value: their mask, 0 for none. */
static hs_symmemo *find_classes(nc_run *r, hstate *s)
{
	int n = r->n, nkey = 3 + n;
	int *key = hs_xmalloc((size_t)nkey * sizeof *key);
	key[0] = -2, key[1] = n, key[2] = s->nsteps; /* -2: neither a ring's (its size) nor a direct one's (-1) */
	for (int i = 0; i < n; i++)
		key[3 + i] = r->rk[i];
	hs_symmemo *e = hs_net_memo_get(r->net, key, nkey);
	if (e) {
		free(key);
		return e;
	}
	size_t M = (size_t)n * s->nsteps;
	const hs_route **rt = hs_xmalloc(M * sizeof *rt);
	int ok = 1;
	for (int st = 0; st < s->nsteps && ok; st++)
		for (int i = 0; i < n && ok; i++) {
			hs_err err;
			hs_err_clear(&err);
			int va = r->rk[i], vb = r->rk[partner(s, i, st)];
			ok = (rt[(size_t)st * n + i] = hs_route_get(r->net->router, va, vb, hs_net_home_rail(r->net, va), &err)) != NULL;
		}
	int *gen[31], G = 0, mask = 0, pass[31];
	for (int b = 0; ok && b < s->L; b++) {
		gen[G] = hs_xmalloc(M * sizeof *gen[G]);
		for (size_t m = 0; m < M; m++)
			gen[G][m] = (int)(m / (size_t)n * (size_t)n + ((m % (size_t)n) ^ ((size_t)1 << b)));
		G++;
	}
	hs_netsym *sym = G ? hs_net_sym_find_group(r->net, rt, (const int *const *)gen, G, (int)M, pass) : NULL;
	for (int g = 0; g < G; g++) {
		if (sym && pass[g])
			mask |= 1 << g;
		free(gen[g]);
	}
	if (!sym) {
		free(rt);
		rt = NULL;
		mask = 0;
	}
	e = hs_net_memo_put(r->net, key, nkey, mask, sym, rt);
	free(key);
	return e;
}

/* Other traffic entered the classes' links: every rank takes its coset's state. */
static void sym_broken(void *ctx)
{
	nc_run *r = ctx;
	hstate *s = r->st;
	for (int i = 0; i < r->n; i++) {
		int k = rep_of(s, i);
		s->step[i] = s->step[k], s->recvd[i] = s->recvd[k], s->busy[i] = s->busy[k];
	}
	s->live = 0;
}

/* A class transfer cut by the break: each rank of the coset sends the rest of its step on its own. */
static void sym_cut(void *ctx, uint64_t tag, double rem)
{
	nc_run *r = ctx;
	hstate *s = r->st;
	int i = (int)(tag >> 16 & 0xffffffffu), st = (int)(tag & 0xffff);
	for (int k = 0; k < r->n; k++)
		if (rep_of(s, k) == i)
			hs_netcoll_send(r, k, partner(s, k, st), rem, -1, TAG(T_STEP, k, st));
	r->outstanding--; /* the class transfer never arrives; its ranks' transfers were counted above */
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
	hs_net *net = r->net;
	if (s->p2 == r->n && r->n > 2 && net->symmetry && net->ops->sym_open) {
		hs_symmemo *e = find_classes(r, s);
		if (e && e->sym && (s->sym = hs_net_sym_open(net, e, sym_broken, sym_cut, r))) {
			s->bmask = e->value;
			s->live = 1;
			for (int i = 0; i < r->n; i++)
				if (rep_of(s, i) == i)
					try_step(r, i);
			return;
		}
	}
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
	if (kind == T_CLASS && s->live) { /* the representatives' exchange: rank i's coset sent step st */
		int j = rep_of(s, partner(s, i, st));
		s->busy[i] = 0;
		s->recvd[j]++;
		try_step(r, i);
		try_step(r, j);
		return;
	}
	if (kind == T_CLASS) { /* sent before the classes broke: it arrives for every rank of the coset */
		for (int k = 0; k < r->n; k++)
			if (rep_of(s, k) == i) {
				s->busy[k] = 0;
				s->recvd[partner(s, k, st)]++;
			}
		for (int k = 0; k < r->n; k++)
			if (rep_of(s, k) == i) {
				try_step(r, k);
				try_step(r, partner(s, k, st));
			}
		return;
	}
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
	hs_net_sym_close(r->net, s->sym);
	free(s);
}

const nc_algo hs_nc_hd = {"halving_doubling", start, on_done, sfree, NULL};
