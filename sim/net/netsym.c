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
	s->map = hs_xmalloc(n * sizeof *s->map);
	s->inv = hs_xmalloc(n * sizeof *s->inv);
	s->orb = hs_xmalloc(n * sizeof *s->orb);
	s->stamp = hs_xcalloc(n, sizeof *s->stamp);
}

void hs_netsym_scratch_free(hs_netsym_scratch *s)
{
	free(s->map), free(s->inv), free(s->orb), free(s->stamp);
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

static void touch(hs_netsym_scratch *sc, int l, int **U, size_t *nU, size_t *capU)
{
	if (sc->stamp[l] == sc->cur)
		return;
	sc->stamp[l] = sc->cur;
	sc->map[l] = sc->inv[l] = sc->orb[l] = -1;
	hs_xgrow(U, capU, *nU + 1, sizeof **U);
	(*U)[(*nU)++] = l;
}

int hs_netsym_find(const hs_topo *t, const hs_route *const *routes, const int *perm, int M, hs_netsym_scratch *sc,
		   hs_netsym *out)
{
	memset(out, 0, sizeof *out);
	if (M <= 0)
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
	int *U = NULL, ok = 1;
	size_t nU = 0, capU = 0;
	for (int i = 0; i < M && ok; i++) {
		int j = perm[i];
		const hs_route *a = routes[i], *b = routes[j];
		if (j < 0 || j >= M || a->nl != b->nl || a->lat != b->lat) {
			ok = 0;
			break;
		}
		for (int h = 0; h < a->nl; h++) {
			const ckey *x = &k[off[i] + (size_t)h], *y = &k[off[j] + (size_t)h];
			if (x->bw != y->bw || x->coef != y->coef || x->level != y->level) {
				ok = 0;
				break;
			}
			touch(sc, x->l, &U, &nU, &capU);
			touch(sc, y->l, &U, &nU, &capU);
			if (sc->map[x->l] < 0) {
				if (sc->inv[y->l] >= 0) { /* two links onto one */
					ok = 0;
					break;
				}
				sc->map[x->l] = y->l;
				sc->inv[y->l] = x->l;
			} else if (sc->map[x->l] != y->l) { /* one link onto two */
				ok = 0;
				break;
			}
		}
	}
	/* every link of U leaves (it is on some member's route) and is reached (on perm's image of one): a
	 * bijection of U, by construction; checked again, as an invariant */
	for (size_t u = 0; ok && u < nU; u++)
		if (sc->map[U[u]] < 0 || sc->inv[U[u]] < 0)
			ok = 0;
	free(k);
	if (!ok) {
		free(off), free(U);
		return -1;
	}
	/* link orbits */
	out->orb_link = hs_xmalloc((nU ? nU : 1) * sizeof *out->orb_link);
	out->orb_off = hs_xmalloc((nU + 1) * sizeof *out->orb_off);
	size_t w = 0;
	for (size_t u = 0; u < nU; u++) {
		if (sc->orb[U[u]] >= 0)
			continue;
		out->orb_off[out->norb] = (int)w;
		for (int l = U[u]; sc->orb[l] < 0; l = sc->map[l]) {
			sc->orb[l] = out->norb;
			out->orb_link[w++] = l;
		}
		out->norb++;
	}
	out->orb_off[out->norb] = (int)w;
	free(U);
	/* member classes */
	out->M = M;
	out->cls_of = hs_xmalloc((size_t)M * sizeof *out->cls_of);
	for (int i = 0; i < M; i++)
		out->cls_of[i] = -1;
	out->rep = hs_xmalloc((size_t)M * sizeof *out->rep);
	out->mult = hs_xmalloc((size_t)M * sizeof *out->mult);
	for (int i = 0; i < M; i++) {
		if (out->cls_of[i] >= 0)
			continue;
		int c = out->ncls++, m = 0;
		out->rep[c] = i;
		for (int j = i; out->cls_of[j] < 0; j = perm[j], m++)
			out->cls_of[j] = c;
		out->mult[c] = m;
	}
	/* each class on its orbits: the representative's coefficients summed per orbit, spread over the orbit */
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
