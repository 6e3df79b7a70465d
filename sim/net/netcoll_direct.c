/* Direct collectives on the network model: every rank sends to every other rank at once, one transfer per
 * pair (NCCL's all-to-all and send/recv). All-to-all, all-gather and reduce-scatter move S/n per pair;
 * all-reduce is a direct reduce-scatter and then, per rank once its n-1 pieces have arrived, a direct
 * all-gather of its reduced piece; send/recv moves S from the first rank to the second.
 *
 * Symmetry classes (sim/net/netsym.h, hs_net_set_symmetry). An all-to-all, all-gather or reduce-scatter is one
 * phase: its n(n-1) pair transfers start together with the same bytes and nothing waits on any of them but
 * the end, so the program is invariant under every permutation of the ranks, and any permutation the fabric
 * bears as well makes classes. Candidates, on the group's nodes (scale-up domains, in rank order, each holding
 * the same number q of consecutive ranks): rotating the local ranks of every node by one (a rail-symmetric
 * node and fabric bear it), and for every divisor b of the node count, rotating the nodes inside blocks of b
 * consecutive nodes (a fat-tree leaf's nodes) and rotating the blocks. Each is checked (hs_netsym_find_group:
 * a link permutation carrying every pair's route onto its image's); the classes are the orbits of the pairs
 * under those that pass, together. On one switch that is n - 1 classes of n pairs (by
 * j - i); with hashed ECMP paths the checks usually fail and every pair is a flow, as without classes.
 * Other traffic entering the classes' links breaks them: each class transfer in flight is cut and its pairs
 * carry their rest on one by one. The two-phase direct all-reduce runs every pair (its second phase starts
 * per rank). */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

typedef struct dstate {
	int *got; /* [n] reduce-scatter pieces received (all-reduce) */
	hs_symrun *sym; /* the pairs' classes, or NULL */
	int *moff, *mem; /* the members of each class (CSR over classes), built at the first cut */
} dstate;

#define CLS_BIT ((uint64_t)1 << 61) /* a class transfer: the low bits are its class */

/* Pair (i, j), i != j, is member i (n - 1) + (j < i ? j : j - 1). */
static int member(int n, int i, int j) { return i * (n - 1) + (j < i ? j : j - 1); }

static void scatter(nc_run *r, int i, uint64_t phase)
{
	for (int j = 0; j < r->n; j++)
		if (j != i)
			hs_netcoll_send(r, i, j, r->S / r->n, -1, phase << 62 | (uint64_t)j);
}

/* The route hs_netcoll_send takes for pair (a, b) (rail -1: the sender's own NIC, or every rail). */
static const hs_route *pair_route(nc_run *r, int a, int b)
{
	hs_err err;
	hs_err_clear(&err);
	int va = r->rk[a], vb = r->rk[b];
	return hs_route_get(r->net->router, va, vb, hs_net_home_rail(r->net, va), &err);
}

/* perm on pairs from a permutation pi of the ranks */
static void pair_perm(int n, const int *pi, int *perm)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j)
				perm[member(n, i, j)] = member(n, pi[i], pi[j]);
}

/* Rank permutation: node k, local l -> node nk(k), local nl(l) (q ranks per node, N nodes). */
static void rank_perm(int N, int q, int kind, int b, int *pi)
{
	for (int k = 0; k < N; k++)
		for (int l = 0; l < q; l++) {
			int k2 = k, l2 = l;
			if (kind == 0)
				l2 = (l + 1) % q;
			else if (kind == 1)
				k2 = k / b * b + (k % b + 1) % b;
			else
				k2 = (k + b) % N;
			pi[k * q + l] = k2 * q + l2;
		}
}

/* The classes of the group's pairs (see the head of the file), remembered by the ranks (hs_net_memo_get). */
static hs_symmemo *find_classes(nc_run *r)
{
	int n = r->n, nkey = 2 + n;
	int *key = hs_xmalloc((size_t)nkey * sizeof *key);
	key[0] = -1, key[1] = n; /* -1: not a ring's key, whose key[0] is its size */
	for (int i = 0; i < n; i++)
		key[2 + i] = r->rk[i];
	hs_symmemo *e = hs_net_memo_get(r->net, key, nkey);
	if (e) {
		free(key);
		return e;
	}
	/* nodes: runs of consecutive ranks in one domain, every run q long, no domain in two runs */
	const hs_cluster *c = r->net->c;
	int N = 1;
	for (int i = 1; i < n; i++)
		if (hs_cluster_domain_of(c, r->rk[i]) != hs_cluster_domain_of(c, r->rk[i - 1]))
			N++;
	int q = n / N, ok = n % N == 0;
	for (int i = 0; i < n && ok; i++)
		ok = hs_cluster_domain_of(c, r->rk[i]) == hs_cluster_domain_of(c, r->rk[i / q * q]) &&
		     (i % q || i == 0 || hs_cluster_domain_of(c, r->rk[i]) != hs_cluster_domain_of(c, r->rk[i - 1]));
	size_t M = (size_t)n * (n - 1);
	const hs_route **rt = hs_xmalloc(M * sizeof *rt);
	for (int i = 0; i < n && ok; i++)
		for (int j = 0; j < n && ok; j++)
			if (i != j && !(rt[member(n, i, j)] = pair_route(r, i, j)))
				ok = 0;
	/* candidates (see the head of the file), checked together: the routes' canonical orders are built once */
	int *gen[1 + 2 * 64], G = 0, pass[1 + 2 * 64];
	for (int kind = 0; ok && kind < 3; kind++)
		for (int b = kind ? N : 0; kind ? b >= 2 : b == 0; b--) {
			if ((kind == 0 && q < 2) || (kind && N % b) || (kind == 2 && b == N) || G == 1 + 2 * 64)
				continue;
			int *pi = hs_xmalloc((size_t)n * sizeof *pi);
			rank_perm(N, q, kind, b, pi);
			gen[G] = hs_xmalloc(M * sizeof *gen[G]);
			pair_perm(n, pi, gen[G++]);
			free(pi);
		}
	hs_netsym *sym = G ? hs_net_sym_find_group(r->net, rt, (const int *const *)gen, G, (int)M, pass) : NULL;
	for (int g = 0; g < G; g++)
		free(gen[g]);
	if (!sym) {
		free(rt);
		rt = NULL;
	}
	e = hs_net_memo_put(r->net, key, nkey, sym ? 1 : 0, sym, rt);
	free(key);
	return e;
}

/* Other traffic entered the classes' links: nothing more starts as a class (this program starts all at once). */
static void sym_broken(void *ctx) { (void)ctx; }

/* A class transfer cut by the break: each pair of the class sends what is left on its own. */
static void sym_cut(void *ctx, uint64_t tag, double rem)
{
	nc_run *r = ctx;
	dstate *s = r->st;
	const hs_netsym *y = s->sym->sym;
	int n = r->n, cl = (int)(tag & ~CLS_BIT);
	if (!s->moff) { /* members by class, once */
		s->moff = hs_xcalloc((size_t)y->ncls + 1, sizeof *s->moff);
		s->mem = hs_xmalloc((size_t)y->M * sizeof *s->mem);
		for (int m = 0; m < y->M; m++)
			s->moff[y->cls_of[m] + 1]++;
		for (int k = 0; k < y->ncls; k++)
			s->moff[k + 1] += s->moff[k];
		int *fill = hs_xcalloc((size_t)y->ncls, sizeof *fill);
		for (int m = 0; m < y->M; m++)
			s->mem[s->moff[y->cls_of[m]] + fill[y->cls_of[m]]++] = m;
		free(fill);
	}
	for (int k = s->moff[cl]; k < s->moff[cl + 1]; k++) {
		int m = s->mem[k], i = m / (n - 1), j = m % (n - 1);
		j += j >= i;
		hs_netcoll_send(r, i, j, rem, -1, (uint64_t)1 << 62 | (uint64_t)j);
	}
	r->outstanding--; /* the class transfer itself never arrives; its members were counted above */
}

static void start(nc_run *r)
{
	if (r->op == HS_COLL_SENDRECV) {
		hs_netcoll_send(r, 0, 1, r->S, -1, 0);
		return;
	}
	dstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	s->got = hs_xcalloc((size_t)r->n, sizeof *s->got);
	hs_net *net = r->net;
	if (r->op != HS_COLL_ALL_REDUCE && r->n > 2 && net->symmetry && net->ops->sym_open) {
		hs_symmemo *e = find_classes(r);
		if (e && e->sym && (s->sym = hs_net_sym_open(net, e, sym_broken, sym_cut, r))) {
			for (int k = 0; k < e->sym->ncls; k++) {
				r->outstanding++;
				hs_net_sym_xfer(net, s->sym, k, r->S / r->n, NULL, hs_netcoll_child_cb, r, CLS_BIT | (uint64_t)k);
			}
			return;
		}
	}
	for (int i = 0; i < r->n; i++)
		scatter(r, i, 1);
}

static void on_done(nc_run *r, uint64_t tag)
{
	if (r->op != HS_COLL_ALL_REDUCE || tag >> 62 != 1)
		return;
	dstate *s = r->st;
	int j = (int)(tag & 0xffffffffu);
	if (++s->got[j] == r->n - 1)
		scatter(r, j, 2);
}

static void sfree(nc_run *r)
{
	dstate *s = r->st;
	if (s) {
		hs_net_sym_close(r->net, s->sym);
		free(s->got), free(s->moff), free(s->mem);
	}
	free(s);
}

const nc_algo hs_nc_direct = {"direct", start, on_done, sfree, NULL};
