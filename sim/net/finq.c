/* The flow model's finish queue: groups of flows by finish time (sim/net/finq.h). */
#include "sim/net/finq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

void hs_finq_init(hs_finq *q)
{
	memset(q, 0, sizeof *q);
	q->free_g = q->last = -1;
}

void hs_finq_free(hs_finq *q)
{
	for (int i = 0; i < q->ng; i++)
		free(q->g[i].f);
	free(q->g), free(q->heap), free(q->tab), free(q->grp), free(q->pos), free(q->tmp);
	hs_finq_init(q);
}

size_t hs_finq_size(const hs_finq *q)
{
	size_t n = 0;
	for (int h = 0; h < q->nheap; h++)
		n += (size_t)q->g[q->heap[h]].live;
	return n;
}

/* ---- time -> group ---- */

static size_t tslot(hs_time t, size_t cap)
{
	uint64_t x = (uint64_t)t * 0x9e3779b97f4a7c15ULL;
	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

static int tab_find(const hs_finq *q, hs_time t)
{
	if (!q->captab)
		return -1;
	for (size_t i = tslot(t, q->captab);; i = (i + 1) & (q->captab - 1)) {
		if (q->tab[i].g < 0)
			return -1;
		if (q->tab[i].t == t)
			return q->tab[i].g;
	}
}

static void tab_put(hs_finq *q, hs_time t, int g);

static void tab_grow(hs_finq *q)
{
	struct hs_finq_slot *old = q->tab;
	size_t oc = q->captab;
	q->captab = oc ? 2 * oc : 64;
	q->tab = hs_xmalloc(q->captab * sizeof *q->tab);
	for (size_t i = 0; i < q->captab; i++)
		q->tab[i].g = -1;
	for (size_t i = 0; i < oc; i++)
		if (old[i].g >= 0)
			tab_put(q, old[i].t, old[i].g);
	free(old);
}

static void tab_put(hs_finq *q, hs_time t, int g)
{
	size_t i = tslot(t, q->captab);
	while (q->tab[i].g >= 0)
		i = (i + 1) & (q->captab - 1);
	q->tab[i] = (struct hs_finq_slot){t, g};
}

/* Backward-shift deletion: later members of the probe run move into the hole where their home allows. */
static void tab_del(hs_finq *q, hs_time t)
{
	size_t m = q->captab - 1, i = tslot(t, q->captab);
	while (q->tab[i].t != t || q->tab[i].g < 0)
		i = (i + 1) & m;
	q->tab[i].g = -1;
	for (size_t j = (i + 1) & m; q->tab[j].g >= 0; j = (j + 1) & m) {
		size_t h = tslot(q->tab[j].t, q->captab);
		if (((j - h) & m) >= ((j - i) & m)) {
			q->tab[i] = q->tab[j];
			q->tab[j].g = -1;
			i = j;
		}
	}
}

/* ---- the heap of groups by time (times are distinct) ---- */

#define D 4

static void hput(hs_finq *q, int i, int g)
{
	q->heap[i] = g;
	q->g[g].hpos = i;
}

static void hup(hs_finq *q, int i)
{
	int g = q->heap[i];
	hs_time t = q->g[g].t;
	while (i > 0 && t < q->g[q->heap[(i - 1) / D]].t) {
		hput(q, i, q->heap[(i - 1) / D]);
		i = (i - 1) / D;
	}
	hput(q, i, g);
}

static void hdown(hs_finq *q, int i)
{
	int g = q->heap[i];
	hs_time t = q->g[g].t;
	for (;;) {
		int c = D * i + 1, end = c + D < q->nheap ? c + D : q->nheap, s = c;
		if (c >= q->nheap)
			break;
		for (int j = c + 1; j < end; j++)
			if (q->g[q->heap[j]].t < q->g[q->heap[s]].t)
				s = j;
		if (!(q->g[q->heap[s]].t < t))
			break;
		hput(q, i, q->heap[s]);
		i = s;
	}
	hput(q, i, g);
}

/* ---- groups ---- */

static int grp_new(hs_finq *q, hs_time t)
{
	int g;
	if (q->free_g >= 0) {
		g = q->free_g;
		q->free_g = q->g[g].next_free;
	} else {
		if (q->ng == q->capg) {
			q->capg = q->capg ? 2 * q->capg : 16;
			q->g = hs_xrealloc(q->g, (size_t)q->capg * sizeof *q->g);
			q->heap = hs_xrealloc(q->heap, (size_t)q->capg * sizeof *q->heap);
		}
		g = q->ng++;
		q->g[g].f = NULL;
		q->g[g].cap = 0;
	}
	hs_finq_grp *x = &q->g[g];
	x->t = t;
	x->n = x->live = x->head = 0;
	x->sorted = 0;
	x->next_free = -1;
	if ((size_t)(q->nheap + 1) * 2 > q->captab)
		tab_grow(q);
	tab_put(q, t, g);
	q->heap[q->nheap] = g;
	x->hpos = q->nheap++;
	hup(q, x->hpos);
	return g;
}

static void grp_drop(hs_finq *q, int g)
{
	hs_finq_grp *x = &q->g[g];
	tab_del(q, x->t);
	int i = x->hpos, last = q->heap[--q->nheap];
	if (i != q->nheap) {
		hput(q, i, last);
		hup(q, i);
		if (q->g[last].hpos == i)
			hdown(q, i);
	}
	x->next_free = q->free_g;
	q->free_g = g;
}

static void ensure_flow(hs_finq *q, int f)
{
	if ((size_t)f < q->capf)
		return;
	size_t cap = q->capf;
	hs_xgrow(&q->grp, &q->capf, (size_t)f + 1, sizeof *q->grp);
	q->pos = hs_xrealloc(q->pos, q->capf * sizeof *q->pos);
	for (size_t i = cap; i < q->capf; i++)
		q->grp[i] = -1;
}

void hs_finq_remove(hs_finq *q, int f)
{
	int g = q->grp[f], p = q->pos[f];
	hs_finq_grp *x = &q->g[g];
	q->grp[f] = -1;
	if (x->sorted)
		x->f[p] = -1; /* the order stays for the ones after it */
	else {
		x->f[p] = x->f[--x->n];
		if (p < x->n)
			q->pos[x->f[p]] = p;
	}
	if (--x->live == 0)
		grp_drop(q, g);
}

void hs_finq_set(hs_finq *q, int f, hs_time t)
{
	ensure_flow(q, f);
	if (q->grp[f] >= 0) {
		if (q->g[q->grp[f]].t == t)
			return;
		hs_finq_remove(q, f);
	}
	/* a ring step's flows come one after another to one time: the last group looked up first */
	int g = q->last >= 0 && q->g[q->last].t == t && q->g[q->last].live ? q->last : tab_find(q, t);
	if (g < 0)
		g = grp_new(q, t);
	q->last = g;
	hs_finq_grp *x = &q->g[g];
	if (x->sorted) { /* a flow joining the group being taken: the rest is sorted again when next taken */
		int n = 0;
		for (int i = x->head; i < x->n; i++)
			if (x->f[i] >= 0) {
				x->f[n] = x->f[i];
				q->pos[x->f[n]] = n;
				n++;
			}
		x->n = n;
		x->head = 0;
		x->sorted = 0;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->f = hs_xrealloc(x->f, (size_t)x->cap * sizeof *x->f);
	}
	q->grp[f] = g;
	q->pos[f] = x->n;
	x->f[x->n++] = f;
	x->live++;
}

/* Non-negative ints ascending: insertion for a few; above, an LSD radix sort by bytes, as many passes as the
 * largest needs (a group of a thousand flows takes three linear passes where qsort's callbacks took ten
 * thousand comparisons). */
static void radix_sort(hs_finq *q, int *v, int n)
{
	if (n <= 64) { /* most groups are a few flows: the counts' clearing would be most of the work */
		for (int k = 1; k < n; k++) {
			int x = v[k], j = k;
			for (; j > 0 && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	int mx = 0;
	for (int i = 0; i < n; i++)
		mx = v[i] > mx ? v[i] : mx;
	if ((size_t)n > q->captmp) {
		q->captmp = (size_t)n;
		q->tmp = hs_xrealloc(q->tmp, q->captmp * sizeof *q->tmp);
	}
	int *a = v, *b = q->tmp;
	for (int sh = 0; sh < 32 && (mx >> sh) > 0; sh += 8) {
		int cnt[257] = {0};
		for (int i = 0; i < n; i++)
			cnt[((a[i] >> sh) & 255) + 1]++;
		for (int d = 0; d < 256; d++)
			cnt[d + 1] += cnt[d];
		for (int i = 0; i < n; i++)
			b[cnt[(a[i] >> sh) & 255]++] = a[i];
		int *t = a;
		a = b, b = t;
	}
	if (a != v)
		memcpy(v, a, (size_t)n * sizeof *v);
}

/* The group in id order, from slot 0. */
static void grp_sort(hs_finq *q, hs_finq_grp *x)
{
	int n = x->n, up = 1, down = 1;
	for (int i = 1; i < n && (up || down); i++) {
		up &= x->f[i - 1] < x->f[i];
		down &= x->f[i - 1] > x->f[i];
	}
	if (!up && down)
		for (int i = 0, j = n - 1; i < j; i++, j--) {
			int s = x->f[i];
			x->f[i] = x->f[j];
			x->f[j] = s;
		}
	else if (!up)
		radix_sort(q, x->f, n);
	for (int i = 0; i < n; i++)
		q->pos[x->f[i]] = i;
	x->head = 0;
	x->sorted = 1;
}

int hs_finq_pop(hs_finq *q)
{
	int g = q->heap[0];
	hs_finq_grp *x = &q->g[g];
	if (!x->sorted)
		grp_sort(q, x);
	while (x->f[x->head] < 0)
		x->head++;
	int f = x->f[x->head++];
	q->grp[f] = -1;
	if (--x->live == 0)
		grp_drop(q, g);
	return f;
}
