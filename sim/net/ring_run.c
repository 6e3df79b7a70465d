/* A run of consecutive ring hops, each alone on its links, timed by its closed form.
 *
 * Hop j's slice q starts once its previous slice has arrived and its predecessor's slice q - k has (the ring's
 * recurrence, netcoll_ring.c's top), and arrives d_j later:
 *     A_j(q) = max(A_j(q - 1), A_{j-1}(q - k)) + d_j,   A_j(-1) = t0,   A_{-1} = I (the run's inputs).
 * Evaluated slice by slice that is m deque writes per input, the quadratic term of a hashed 65k-GPU step
 * (2n(n - 1)Ck settings a ring, docs/collectives.md). As a longest path over (hop, slice), a path enters each
 * hop once and stays at some for a number of slices; the longest stays at the slowest. So the last hop's
 * arrivals are
 *     A(q) = max(F(q), B(q)),
 *     F(q) = max(F(q - 1) + D, I(q - mk) + sum_j d_j)                       (paths from an input; D = max d_j)
 *     B(q) = max over s of t0 + sum_{s<=i<m} d_i + (q - (m-1-s)k) max_{s<=i<m} d_i   (q >= (m-1-s)k)
 * where B are the paths that start inside the run at t0: within a stretch of s with one suffix maximum M the
 * largest s is best (a step left adds d_s - kM <= 0), so only the s where the suffix maximum rises count.
 * O(1) per output where there are few distinct delays (a ring's hops have two or three), instead of O(m).
 * A cycle (a channel whose every hop is alone) feeds itself: I(q) = A(q), known for q - mk < q.
 *
 * Hop j's last arrival, for the ring's end, is the same form on the prefix 0..j: F_j(Q-1) = sum_{i<=j} d_i +
 * L D_j + max_{q<=L} (I(q) - q D_j), L = Q - 1 - (j+1)k, D_j the prefix maximum (one pass over the inputs per
 * distinct D_j); of the paths from t0 the longest stays at the slowest hop: t0 + Q D. Times are integers (ns): every form is
 * exact. tests/unit/net/test_ring_run.c checks each against the recurrence on random runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/ring_run.h"

struct cand {
	int64_t c, M; /* t0 + the suffix's delays; its maximum */
	long v;       /* the first output it reaches */
};

struct hs_ring_run {
	int m, k, cyclic;
	long Q;
	int64_t t0, sum, D;
	int64_t *d;
	struct cand *cd;
	int nc;
	int fset; /* F(nout - 1) holds a path from an input */
	int64_t F;
	long nout;
	hs_time *in; /* the inputs (a cycle's: its outputs) */
	size_t nin, cap;
};

hs_ring_run *hs_ring_run_create(int m, int k, long Q, const hs_time *d, hs_time t0, int cyclic)
{
	hs_ring_run *r = hs_xcalloc(1, sizeof *r);
	r->m = m, r->k = k, r->Q = Q, r->cyclic = cyclic;
	r->t0 = (int64_t)t0;
	r->d = hs_xmalloc((size_t)m * sizeof *r->d);
	r->cd = hs_xmalloc((size_t)m * sizeof *r->cd);
	int64_t suf = 0, M = -1;
	for (int s = m - 1; s >= 0; s--) {
		r->d[s] = (int64_t)d[s];
		suf += r->d[s];
		if (r->d[s] > M) { /* the suffix maximum rises here */
			M = r->d[s];
			r->cd[r->nc++] = (struct cand){r->t0 + suf, M, (long)(m - 1 - s) * k};
		}
	}
	r->sum = suf, r->D = M;
	return r;
}

void hs_ring_run_free(hs_ring_run *r)
{
	if (!r)
		return;
	free(r->d), free(r->cd), free(r->in);
	free(r);
}

static void put(hs_ring_run *r, hs_time a)
{
	hs_xgrow(&r->in, &r->cap, r->nin + 1, sizeof *r->in);
	r->in[r->nin++] = a;
}

void hs_ring_run_input(hs_ring_run *r, hs_time a) { put(r, a); }
long hs_ring_run_nin(const hs_ring_run *r) { return (long)r->nin; }
const hs_time *hs_ring_run_inputs(const hs_ring_run *r) { return r->in; }
long hs_ring_run_nout(const hs_ring_run *r) { return r->nout; }

long hs_ring_run_ready(const hs_ring_run *r)
{
	if (r->cyclic)
		return r->Q;
	long n = (long)r->nin + (long)r->m * r->k;
	return n < r->Q ? n : r->Q;
}

hs_time hs_ring_run_next(hs_ring_run *r)
{
	long q = r->nout, mk = (long)r->m * r->k;
	if (q >= mk) {
		int64_t c = (int64_t)r->in[q - mk] + r->sum;
		r->F = r->fset && r->F + r->D > c ? r->F + r->D : c;
		r->fset = 1;
	}
	int64_t A = r->fset ? r->F : INT64_MIN;
	for (int i = 0; i < r->nc; i++) {
		const struct cand *c = &r->cd[i];
		if (q < c->v) /* the candidates' v grow with i */
			break;
		int64_t b = c->c + (int64_t)(q - c->v) * c->M;
		A = b > A ? b : A;
	}
	r->nout++;
	if (r->cyclic)
		put(r, (hs_time)A);
	return (hs_time)A;
}

long hs_ring_run_set_at(const hs_ring_run *r, int j)
{
	if (r->cyclic)
		return r->Q;
	long n = (long)r->nin + (long)(j + 1) * r->k;
	return n < r->Q ? n : r->Q;
}

long hs_ring_run_set(const hs_ring_run *r)
{
	if (r->cyclic)
		return (long)r->m * r->Q;
	long nin = (long)r->nin, k = r->k, m = r->m;
	/* hops j with nin + (j + 1)k < Q have nin + (j + 1)k slices set, the rest Q */
	long J = r->Q - nin - 1 >= 0 ? (r->Q - nin - 1) / k : 0;
	J = J < m ? J : m;
	return J * nin + k * J * (J + 1) / 2 + (m - J) * r->Q;
}

hs_time hs_ring_run_last(const hs_ring_run *r)
{
	long Q = r->Q, k = r->k;
	/* the paths from t0: the longest stays at the slowest hop from its first slice, t0 + Q max d (a path that
	 * goes on to a later hop trades a stay for that hop's d_i - kD <= 0) */
	int64_t best = r->t0 + (int64_t)Q * r->D, P = 0, D = -1, *pm = NULL;
	for (int j = 0; j < r->m; j++) {
		P += r->d[j];
		long L = Q - 1 - (long)(j + 1) * k;
		if (L < 0)
			break; /* this hop's last slice and the later hops' need no input */
		if (r->d[j] > D) { /* a new prefix maximum: the inputs' prefix maxima of I(q) - qD again */
			D = r->d[j];
			free(pm);
			pm = hs_xmalloc(((size_t)L + 1) * sizeof *pm);
			for (long q = 0; q <= L; q++) {
				int64_t v = (int64_t)r->in[q] - q * D;
				pm[q] = q && pm[q - 1] > v ? pm[q - 1] : v;
			}
		}
		int64_t F = P + L * D + pm[L];
		best = F > best ? F : best;
	}
	free(pm);
	return (hs_time)best;
}
