/* Symmetry classes of transfers: the link permutation that carries one member's route onto another's,
 * checked, and the orbits it gives (sim/net/netsym.h). */
#include "sim/net/netsym.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

void hs_netsym_scratch_init(hs_netsym_scratch *s, int nlk)
{
	memset(s, 0, sizeof *s);
	s->nlk = nlk;
	size_t n = (size_t)(nlk > 0 ? nlk : 1);
	s->orb = hs_xmalloc(n * sizeof *s->orb);
	s->stamp = hs_xcalloc(n, sizeof *s->stamp);
}

void hs_netsym_scratch_free(hs_netsym_scratch *s)
{
	free(s->orb), free(s->stamp);
	memset(s, 0, sizeof *s);
}

void hs_netsym_free(hs_netsym *s)
{
	if (!s)
		return;
	free(s->cls_of), free(s->mult), free(s->rep), free(s->orb_off), free(s->orb_link);
	free(s->c_off), free(s->c_orb), free(s->c_coef), free(s->c_lat);
	memset(s, 0, sizeof *s);
}

/* ---- canonical order of a route's links ----
 *
 * By hops from the source (a path's links in path order; the parallel links of a split route level by level),
 * then bandwidth, coefficient and link id. An automorphism that keeps the relative id order of parallel links
 * (builders number every node's and switch's links in one pattern) maps position to position; one that does
 * not is refused by the check, never mistaken. */
typedef struct ckey {
	int level;
	double bw, coef;
	int l;
} ckey;

static int cmp_ckey(const void *x, const void *y)
{
	const ckey *a = x, *b = y;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (a->bw != b->bw)
		return a->bw < b->bw ? -1 : 1;
	if (a->coef != b->coef)
		return a->coef < b->coef ? -1 : 1;
	return (a->l > b->l) - (a->l < b->l);
}

/* Keys of r's links in canonical order into k[0..r->nl). */
static void canon(const hs_topo *t, const hs_route *r, ckey *k)
{
	int nl = r->nl;
	for (int i = 0; i < nl; i++)
		k[i] = (ckey){-1, hs_topo_link(t, r->link[i])->bw, r->coef[i], r->link[i]};
	/* levels by relaxation from the source: a route has a handful of links (a few dozen split over rails) */
	int front[64], nf = 1, next[64], nn;
	front[0] = r->src;
	for (int d = 0; nf > 0 && d <= nl; d++) {
		nn = 0;
		for (int i = 0; i < nl; i++) {
			if (k[i].level >= 0)
				continue;
			const hs_link *L = hs_topo_link(t, r->link[i]);
			for (int j = 0; j < nf; j++)
				if (L->from == front[j]) {
					k[i].level = d;
					int seen = 0;
					for (int q = 0; q < nn; q++)
						seen |= next[q] == L->to;
					if (!seen && nn < 64)
						next[nn++] = L->to;
					break;
				}
		}
		memcpy(front, next, (size_t)nn * sizeof *front);
		nf = nn;
	}
	for (int i = 0; i < nl; i++)
		if (k[i].level < 0) /* not reached (a vertex list overflowed): after the rest, by id */
			k[i].level = nl + 1;
	if (nl > 16) {
		qsort(k, (size_t)nl, sizeof *k, cmp_ckey);
		return;
	}
	for (int i = 1; i < nl; i++) { /* a handful of links: insertion sort, no call per comparison */
		ckey x = k[i];
		int j = i;
		for (; j > 0 && cmp_ckey(&k[j - 1], &x) > 0; j--)
			k[j] = k[j - 1];
		k[j] = x;
	}
}

static uint64_t mixh(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

uint64_t hs_netsym_route_hash(const hs_topo *t, const hs_route *r)
{
	ckey kb[16], *k = r->nl <= 16 ? kb : hs_xmalloc((size_t)r->nl * sizeof *k);
	canon(t, r, k);
	uint64_t h = mixh((uint64_t)r->nl, r->lat);
	for (int i = 0; i < r->nl; i++)
		h = mixh(mixh(mixh(h, (uint64_t)k[i].level), dbits(k[i].bw)), dbits(k[i].coef));
	if (k != kb)
		free(k);
	return h;
}

/* ---- the check ---- */

static int uf_find(int *par, int x)
{
	while (par[x] != x)
		x = par[x] = par[par[x]];
	return x;
}

/* Joins the sets of a and b; the lower root stays the root, so a set is named by its lowest element. */
static void uf_join(int *par, int a, int b)
{
	a = uf_find(par, a), b = uf_find(par, b);
	if (a < b)
		par[b] = a;
	else if (b < a)
		par[a] = b;
}

int hs_netsym_find(const hs_topo *t, const hs_route *const *routes, const int *perm, int M, hs_netsym_scratch *sc,
		   hs_netsym *out)
{
	return hs_netsym_find_group(t, routes, &perm, 1, M, sc, NULL, out);
}

int hs_netsym_find_group(const hs_topo *t, const hs_route *const *routes, const int *const *perms, int G, int M,
			 hs_netsym_scratch *sc, int *passed, hs_netsym *out)
{
	memset(out, 0, sizeof *out);
	if (M <= 0 || G <= 0)
		return -1;
	if (++sc->cur == 0) { /* the stamp wrapped: start over */
		memset(sc->stamp, 0, (size_t)sc->nlk * sizeof *sc->stamp);
		sc->cur = 1;
	}
	size_t *off = hs_xmalloc(((size_t)M + 1) * sizeof *off), tot = 0;
	for (int i = 0; i < M; i++) {
		off[i] = tot;
		tot += (size_t)routes[i]->nl;
	}
	off[M] = tot;
	ckey *k = hs_xmalloc((tot ? tot : 1) * sizeof *k);
	for (int i = 0; i < M; i++)
		canon(t, routes[i], k + off[i]);
	/* U: every member's links, each with its place in U (sc->orb, while the check runs) */
	int *U = NULL, ok = 1;
	size_t nU = 0, capU = 0;
	for (size_t x = 0; x < tot; x++) {
		int l = k[x].l;
		if (sc->stamp[l] == sc->cur)
			continue;
		sc->stamp[l] = sc->cur;
		sc->orb[l] = (int)nU;
		hs_xgrow(&U, &capU, nU + 1, sizeof *U);
		U[nU++] = l;
	}
	/* each generator's sigma on U (map, inv: places in U), position h of member i onto position h of
	 * perm[i]; the link orbits are the classes of U under every sigma together (union-find) */
	int *map = hs_xmalloc((nU ? nU : 1) * sizeof *map), *inv = hs_xmalloc((nU ? nU : 1) * sizeof *inv);
	int *lpar = hs_xmalloc((nU ? nU : 1) * sizeof *lpar), *mpar = hs_xmalloc((size_t)M * sizeof *mpar);
	for (size_t u = 0; u < nU; u++)
		lpar[u] = (int)u;
	for (int i = 0; i < M; i++)
		mpar[i] = i;
	int npass = 0;
	for (int g = 0; g < G && ok; g++) {
		const int *perm = perms[g];
		for (size_t u = 0; u < nU; u++)
			map[u] = inv[u] = -1;
		for (int i = 0; i < M && ok; i++) {
			int j = perm[i];
			if (j < 0 || j >= M || routes[i]->nl != routes[j]->nl || routes[i]->lat != routes[j]->lat) {
				ok = 0;
				break;
			}
			for (int h = 0; h < routes[i]->nl; h++) {
				const ckey *x = &k[off[i] + (size_t)h], *y = &k[off[j] + (size_t)h];
				if (x->bw != y->bw || x->coef != y->coef || x->level != y->level) {
					ok = 0;
					break;
				}
				int a = sc->orb[x->l], b = sc->orb[y->l];
				if (map[a] < 0) {
					if (inv[b] >= 0) { /* two links onto one */
						ok = 0;
						break;
					}
					map[a] = b;
					inv[b] = a;
				} else if (map[a] != b) { /* one link onto two */
					ok = 0;
					break;
				}
			}
		}
		/* every link of U leaves (it is on some member's route) and is reached (on perm's image of one): a
		 * bijection of U, by construction; checked again, as an invariant */
		for (size_t u = 0; ok && u < nU; u++)
			if (map[u] < 0 || inv[u] < 0)
				ok = 0;
		if (passed) { /* a generator that fails is left out, the others still count */
			passed[g] = ok;
			if (!ok) {
				ok = 1;
				continue;
			}
		}
		npass += ok;
		for (size_t u = 0; ok && u < nU; u++)
			uf_join(lpar, (int)u, map[u]);
		for (int i = 0; ok && i < M; i++)
			uf_join(mpar, i, perm[i]);
	}
	ok = ok && npass > 0;
	free(k), free(map), free(inv);
	if (!ok) {
		free(off), free(U), free(lpar), free(mpar);
		return -1;
	}
	/* link orbits, numbered by their first link in U; sc->orb becomes a link's orbit */
	int *onum = hs_xmalloc((nU ? nU : 1) * sizeof *onum), *osz = hs_xcalloc(nU + 1, sizeof *osz);
	for (size_t u = 0; u < nU; u++) {
		int root = uf_find(lpar, (int)u);
		if (root == (int)u)
			onum[u] = out->norb++;
		osz[onum[root]]++;
	}
	out->orb_off = hs_xmalloc(((size_t)out->norb + 1) * sizeof *out->orb_off);
	out->orb_link = hs_xmalloc((nU ? nU : 1) * sizeof *out->orb_link);
	out->orb_off[0] = 0;
	for (int o = 0; o < out->norb; o++)
		out->orb_off[o + 1] = out->orb_off[o] + osz[o];
	memset(osz, 0, (nU + 1) * sizeof *osz); /* now: links placed per orbit */
	for (size_t u = 0; u < nU; u++) {
		int o = onum[uf_find(lpar, (int)u)];
		out->orb_link[out->orb_off[o] + osz[o]++] = U[u];
		sc->orb[U[u]] = o;
	}
	free(onum), free(osz), free(U), free(lpar);
	/* member classes, numbered by their lowest member */
	out->M = M;
	out->cls_of = hs_xmalloc((size_t)M * sizeof *out->cls_of);
	out->rep = hs_xmalloc((size_t)M * sizeof *out->rep);
	out->mult = hs_xcalloc((size_t)M, sizeof *out->mult);
	for (int i = 0; i < M; i++) {
		int root = uf_find(mpar, i);
		if (root == i) {
			out->rep[out->ncls] = i;
			out->cls_of[i] = out->ncls++;
		} else
			out->cls_of[i] = out->cls_of[root]; /* root < i: numbered already */
		out->mult[out->cls_of[i]]++;
	}
	free(mpar);
	/* each class on its orbits: the representative's coefficients summed per orbit, spread over the orbit.
	 * Every member of the class has the same sums (the generators carry its route onto theirs, orbit onto
	 * orbit), and the group permutes an orbit's links transitively, so each carries 1/|orbit| of the
	 * class's load on the orbit. */
	out->c_off = hs_xmalloc(((size_t)out->ncls + 1) * sizeof *out->c_off);
	size_t nco = 0;
	for (int c = 0; c < out->ncls; c++)
		nco += (size_t)routes[out->rep[c]]->nl;
	out->c_orb = hs_xmalloc((nco ? nco : 1) * sizeof *out->c_orb);
	out->c_coef = hs_xmalloc((nco ? nco : 1) * sizeof *out->c_coef);
	out->c_lat = hs_xmalloc((size_t)out->ncls * sizeof *out->c_lat);
	int p = 0;
	for (int c = 0; c < out->ncls; c++) {
		const hs_route *r = routes[out->rep[c]];
		out->c_off[c] = p;
		out->c_lat[c] = r->lat;
		for (int i = 0; i < r->nl; i++) {
			int o = sc->orb[r->link[i]], q;
			for (q = out->c_off[c]; q < p && out->c_orb[q] != o; q++)
				;
			if (q == p) {
				out->c_orb[p] = o;
				out->c_coef[p++] = 0;
			}
			out->c_coef[q] += r->coef[i];
		}
		for (int q = out->c_off[c]; q < p; q++) {
			int size = out->orb_off[out->c_orb[q] + 1] - out->orb_off[out->c_orb[q]];
			/* mult / size is 1 exactly in the common case (each member on one link of the orbit) */
			out->c_coef[q] *= (double)out->mult[c] / size;
		}
	}
	out->c_off[out->ncls] = p;
	free(off);
	return 0;
}
