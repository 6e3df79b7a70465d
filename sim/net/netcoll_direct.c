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
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"
#include "sim/net/netcoll_solo.h"

typedef struct dstate {
	int *got; /* [n] reduce-scatter pieces received (all-reduce) */
	hs_symrun *sym; /* the pairs' classes, or NULL */
	int *moff, *mem; /* the members of each class (CSR over classes), built at the first cut */
	hs_solo_run *solo; /* timed alone on its links (netcoll_solo.c), or NULL */
} dstate;

#define CLS_BIT ((uint64_t)1 << 61) /* a class transfer: the low bits are its class */

/* Pair (i, j), i != j, is member i (n - 1) + (j < i ? j : j - 1). */
static int member(int n, int i, int j) { return i * (n - 1) + (j < i ? j : j - 1); }

/* Rank i's pieces to every other rank, on the pairs' routes rt (member order) or, with rt NULL, on the routes
 * hs_netcoll_send looks up (the same ones). */
static void scatter(nc_run *r, int i, uint64_t phase, const hs_route *const *rt)
{
	for (int j = 0; j < r->n; j++)
		if (j != i) {
			if (rt)
				hs_netcoll_send_route(r, rt[member(r->n, i, j)], r->S / r->n, 1, phase << 62 | (uint64_t)j);
			else
				hs_netcoll_send(r, i, j, r->S / r->n, -1, phase << 62 | (uint64_t)j);
		}
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
	int routed = 1; /* every pair has a route (the pairs may then run timed alone, netcoll_solo.c) */
	for (int i = 0; i < n && routed; i++)
		for (int j = 0; j < n && routed; j++)
			if (i != j && !(rt[member(n, i, j)] = pair_route(r, i, j)))
				routed = ok = 0;
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
	/* the routes stay with the memo without classes too (where the nodes are uneven as well): the pairs then
	 * run timed alone on them (netcoll_solo.c) or start one by one (start), where each asked the router's
	 * table (6% of a hashed-ECMP EP step); not for groups of over 256 ranks (half a MiB of pointers each, in
	 * up to HS_SYMMEMO_SLOTS entries) */
	if (!routed || (!sym && M > 256 * 255)) {
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

/* ---- beside another collective's set ----
 *
 * Where a live set holds some of the pairs' links (a data-parallel ring over the same GPUs, whose gradient
 * reduction the expert all-to-alls run beside), neither can stand alone, but both together can: the joint
 * problem (the ring's members, the pairs) is invariant under every permutation that the ring's program and
 * the fabric bear and that maps the pairs onto pairs, and the all-to-all maps onto itself under any
 * permutation of its ranks. So the ring's generators, as maps of its devices (hs_symmemo gdev; identity
 * elsewhere), act on the pairs (i, j) -> (pi i, pi j), and hs_netsym_find_group checks them on the union of
 * both collectives' routes, one link permutation per generator for both. The ring's classes and link orbits
 * under them must be the ring set's own (the ring's flows in flight stay as they are), which is checked; the
 * pairs' classes and the orbits they cross make the all-to-all's set, opened in the ring's group (a foreign
 * flow on any of their links breaks both). Returns the pairs' classes, or NULL. */
static hs_netsym *joint_classes(nc_run *r, const hs_symmemo *e, const hs_symmemo *G)
{
	hs_net *net = r->net;
	int n = r->n, Mr = G->sym->M, Ma = e->sym->M, M = Mr + Ma, nd = hs_cluster_ngpus(net->c), ok = 1;
	int *idx = hs_xmalloc((size_t)nd * sizeof *idx), *gpos = hs_xmalloc((size_t)nd * sizeof *gpos);
	for (int d = 0; d < nd; d++)
		idx[d] = gpos[d] = -1;
	for (int i = 0; i < n; i++)
		if (r->rk[i] >= 0 && r->rk[i] < nd)
			idx[r->rk[i]] = i;
	for (int q = 0; q < G->ndev; q++)
		if (G->dev[q] >= 0 && G->dev[q] < nd)
			gpos[G->dev[q]] = q;
	const hs_route **rt = hs_xmalloc((size_t)M * sizeof *rt);
	for (int x = 0; x < Mr; x++)
		rt[x] = G->routes[x];
	for (int x = 0; x < Ma; x++)
		rt[Mr + x] = e->routes[x];
	int **gen = hs_xmalloc((size_t)G->ngen * sizeof *gen), *pi = hs_xmalloc((size_t)n * sizeof *pi);
	for (int g = 0; g < G->ngen; g++) {
		gen[g] = hs_xmalloc((size_t)M * sizeof *gen[g]);
		memcpy(gen[g], G->gmem[g], (size_t)Mr * sizeof *gen[g]);
		for (int i = 0; i < n && ok; i++) {
			int d = r->rk[i], q = d >= 0 && d < nd ? gpos[d] : -1, d2 = q >= 0 ? G->gdev[g][q] : d;
			pi[i] = d2 >= 0 && d2 < nd ? idx[d2] : -1;
			ok = pi[i] >= 0;
		}
		if (ok) {
			pair_perm(n, pi, gen[g] + Mr);
			for (int x = Mr; x < M; x++)
				gen[g][x] += Mr;
		}
	}
	free(pi), free(gpos);
	hs_netsym *J = ok ? hs_net_sym_find_group(net, rt, (const int *const *)gen, G->ngen, M, NULL) : NULL;
	for (int g = 0; g < G->ngen; g++)
		free(gen[g]);
	free(gen), free(rt);
	hs_netsym *A = NULL;
	int nlk = hs_net_nlinks(net), *jo = NULL, *go = NULL;
	if (J) { /* the ring's classes and orbits are the ring set's own */
		int *c2 = hs_xmalloc((size_t)J->ncls * sizeof *c2), *g2 = hs_xmalloc((size_t)G->sym->ncls * sizeof *g2);
		for (int c = 0; c < J->ncls; c++)
			c2[c] = -1;
		for (int c = 0; c < G->sym->ncls; c++)
			g2[c] = -1;
		for (int x = 0; x < Mr && ok; x++) {
			int a = J->cls_of[x], b = G->sym->cls_of[x];
			if (c2[a] < 0 && g2[b] < 0)
				c2[a] = b, g2[b] = a;
			ok = c2[a] == b && g2[b] == a;
		}
		free(c2), free(g2);
		jo = hs_xmalloc((size_t)nlk * sizeof *jo), go = hs_xmalloc((size_t)nlk * sizeof *go);
		for (int l = 0; l < nlk; l++)
			jo[l] = go[l] = -1;
		for (int o = 0; o < J->norb; o++)
			for (int u = J->orb_off[o]; u < J->orb_off[o + 1]; u++)
				jo[J->orb_link[u]] = o;
		for (int o = 0; o < G->sym->norb; o++)
			for (int u = G->sym->orb_off[o]; u < G->sym->orb_off[o + 1]; u++)
				go[G->sym->orb_link[u]] = o;
		/* each of the ring's orbits is one of J's, whole */
		for (int o = 0; o < G->sym->norb && ok; o++) {
			int a = G->sym->orb_off[o], jj = jo[G->sym->orb_link[a]];
			ok = jj >= 0 && J->orb_off[jj + 1] - J->orb_off[jj] == G->sym->orb_off[o + 1] - a;
			for (int u = J->orb_off[jj]; ok && u < J->orb_off[jj + 1]; u++)
				ok = go[J->orb_link[u]] == o;
		}
	}
	if (J && ok) { /* the pairs' part of J */
		A = hs_xcalloc(1, sizeof *A);
		A->M = Ma;
		A->cls_of = hs_xmalloc((size_t)Ma * sizeof *A->cls_of);
		A->rep = hs_xmalloc((size_t)Ma * sizeof *A->rep);
		A->mult = hs_xcalloc((size_t)Ma, sizeof *A->mult);
		int *cn = hs_xmalloc((size_t)J->ncls * sizeof *cn), *on = hs_xmalloc((size_t)(J->norb ? J->norb : 1) * sizeof *on);
		for (int c = 0; c < J->ncls; c++)
			cn[c] = -1;
		for (int o = 0; o < J->norb; o++)
			on[o] = -1;
		for (int x = 0; x < Ma; x++) {
			int c = J->cls_of[Mr + x];
			if (cn[c] < 0)
				A->rep[A->ncls] = x, cn[c] = A->ncls++;
			A->cls_of[x] = cn[c];
			A->mult[cn[c]]++;
		}
		/* the orbits the pairs' classes cross, numbered in order of J's */
		for (int c = 0; c < J->ncls; c++)
			if (cn[c] >= 0)
				for (int q = J->c_off[c]; q < J->c_off[c + 1]; q++)
					on[J->c_orb[q]] = 0;
		int nu = 0;
		for (int o = 0; o < J->norb; o++)
			if (on[o] == 0)
				on[o] = A->norb++, nu += J->orb_off[o + 1] - J->orb_off[o];
		A->orb_off = hs_xmalloc(((size_t)A->norb + 1) * sizeof *A->orb_off);
		A->orb_link = hs_xmalloc((size_t)(nu ? nu : 1) * sizeof *A->orb_link);
		A->orb_off[0] = 0;
		for (int o = 0, w = 0; o < J->norb; o++)
			if (on[o] >= 0) {
				for (int u = J->orb_off[o]; u < J->orb_off[o + 1]; u++)
					A->orb_link[w++] = J->orb_link[u];
				A->orb_off[on[o] + 1] = w;
			}
		int nco = 0;
		A->c_off = hs_xmalloc(((size_t)A->ncls + 1) * sizeof *A->c_off);
		A->c_lat = hs_xmalloc((size_t)A->ncls * sizeof *A->c_lat);
		for (int k = 0; k < A->ncls; k++) {
			int c = J->cls_of[Mr + A->rep[k]];
			nco += J->c_off[c + 1] - J->c_off[c];
		}
		A->c_orb = hs_xmalloc((size_t)(nco ? nco : 1) * sizeof *A->c_orb);
		A->c_coef = hs_xmalloc((size_t)(nco ? nco : 1) * sizeof *A->c_coef);
		for (int k = 0, w = 0; k < A->ncls; k++) {
			int c = J->cls_of[Mr + A->rep[k]];
			A->c_off[k] = w;
			A->c_lat[k] = J->c_lat[c];
			for (int q = J->c_off[c]; q < J->c_off[c + 1]; q++, w++)
				A->c_orb[w] = on[J->c_orb[q]], A->c_coef[w] = J->c_coef[q];
			A->c_off[k + 1] = w;
		}
		free(cn), free(on);
		if (A->ncls == Ma) { /* nothing gained */
			hs_netsym_free(A);
			free(A);
			A = NULL;
		}
	}
	free(jo), free(go), free(idx);
	if (J)
		hs_netsym_free(J), free(J);
	return A;
}

static void sym_broken(void *ctx);
static void sym_cut(void *ctx, uint64_t tag, double rem);

/* The all-to-all's set beside the live set that holds its links, from the memo by both groups' keys. */
static hs_symrun *joint_open(nc_run *r, hs_symmemo *e)
{
	hs_net *net = r->net;
	hs_symrun *P = hs_net_sym_holder(net, e);
	hs_symmemo *G = P ? P->gmemo : NULL;
	if (!G || !G->ngen || !G->sym || !G->routes)
		return NULL;
	int n = r->n, nkey = 2 + n + G->nkey;
	int *key = hs_xmalloc((size_t)nkey * sizeof *key);
	key[0] = -3, key[1] = n; /* -3: a joint key */
	memcpy(key + 2, r->rk, (size_t)n * sizeof *key);
	memcpy(key + 2 + n, G->key, (size_t)G->nkey * sizeof *key);
	hs_symmemo *je = hs_net_memo_get(net, key, nkey);
	if (!je) {
		hs_netsym *A = joint_classes(r, e, G);
		je = hs_net_memo_put(net, key, nkey, A ? 1 : 0, A, NULL);
	}
	free(key);
	return je && je->sym ? hs_net_sym_open_joint(net, je, P, sym_broken, sym_cut, r) : NULL;
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
	hs_symmemo *e = r->op != HS_COLL_ALL_REDUCE && r->n > 2 ? find_classes(r) : NULL;
	if (e && e->sym && net->symmetry && net->ops->sym_open) {
		if ((s->sym = hs_net_sym_open(net, e, sym_broken, sym_cut, r)) || (s->sym = joint_open(r, e))) {
			for (int k = 0; k < s->sym->sym->ncls; k++) {
				r->outstanding++;
				hs_net_sym_xfer(net, s->sym, k, r->S / r->n, NULL, hs_netcoll_child_cb, r, CLS_BIT | (uint64_t)k);
			}
			return;
		}
		e = find_classes(r); /* joint_open's memo entry may have taken e's slot */
	}
	if (e && !e->sym && hs_solo_start(r, e, &s->solo))
		return;
	for (int i = 0; i < r->n; i++)
		scatter(r, i, 1, e ? e->routes : NULL);
}

static void on_done(nc_run *r, uint64_t tag)
{
	if (r->op != HS_COLL_ALL_REDUCE || tag >> 62 != 1)
		return;
	dstate *s = r->st;
	int j = (int)(tag & 0xffffffffu);
	if (++s->got[j] == r->n - 1)
		scatter(r, j, 2, NULL);
}

static void sfree(nc_run *r)
{
	dstate *s = r->st;
	if (s) {
		hs_net_sym_close(r->net, s->sym);
		free(s->got), free(s->moff), free(s->mem);
		hs_solo_free(s->solo);
	}
	free(s);
}

const nc_algo hs_nc_direct = {"direct", start, on_done, sfree, NULL};
