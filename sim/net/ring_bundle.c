/* Bundles: a ring's hops that share links only with each other (a node's channels on its scale-up ports, with
 * the crossing that reaches its rail's NIC through them), held together and timed by the ring
 * (sim/net/ring_hops_state.h has the bundle's record; netcoll_ring_hops.c the ring around it).
 *
 * The flow model rates a flow that starts on links no flow crosses at its start (alone); any other start
 * joins the recompute at the end of its instant, and a finish is followed by one at once; a recompute brings
 * each flow's bytes left up to now at the rate it had, and a flow whose rate moved by no more than
 * HS_MAXMIN_RATE_EPS keeps that rate and the finish set with it (hs_maxmin_settle). A bundle does the same on
 * its own links, with the rates the model's fill gives its slices in flight there (hs_net_fill), since no
 * other flow is on them: what the model would give those slices. test_netsym.c `ring_bundles` compares it
 * with the per-flow run. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/maxmin.h"
#include "sim/net/ring_hops_state.h"

static void bundle_fin_event(hs_engine *eng, void *ctx, uint64_t arg);
static void bundle_rate_event(hs_engine *eng, void *ctx, uint64_t arg);

/* The bundle's finish event at its least finish. */
static void bundle_schedule(nc_run *r, hops *h, int b)
{
	bundle *B = &h->bd[b];
	hs_engine *eng = r->net->eng;
	hs_time m = HS_TIME_MAX;
	for (int i = 0; i < B->nact; i++) {
		const hop *p = &h->hp[B->act[i]];
		if (p->bq && p->bfin < m)
			m = p->bfin;
	}
	if (B->fin_ev.seq && B->fin_at == m)
		return;
	if (B->fin_ev.seq)
		hs_engine_cancel(eng, B->fin_ev);
	B->fin_ev = (hs_event_id){0, 0};
	if (m < HS_TIME_MAX) {
		B->fin_ev = hs_engine_at(eng, m, bundle_fin_event, r, (uint64_t)b);
		B->fin_at = m;
	}
}

#define BDIRECT 8  /* up to this many members, every set's rates have a place of their own (2^n of them) */
#define BMEMO 256  /* more members: sets kept by hash (a power of 2), up to half full; the others filled each time */

/* The rates of the members in set `key` (bits of their places), by place: the model's fill over their routes in
 * the order of their places, kept by set. */
static const double *bundle_rates(nc_run *r, hops *h, bundle *B, uint64_t key)
{
	int direct = B->nmem <= BDIRECT;
	size_t nent = direct ? (size_t)1 << B->nmem : BMEMO + 1;
	if (!B->mkey) {
		B->mkey = hs_xcalloc(direct ? nent : BMEMO, sizeof *B->mkey);
		B->mrate = hs_xmalloc(nent * B->nmem * sizeof *B->mrate);
	}
	size_t j;
	if (direct) {
		j = (size_t)key;
		if (B->mkey[j])
			return B->mrate + j * B->nmem;
		B->mkey[j] = 1;
	} else {
		j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 56);
		while (B->mkey[j] && B->mkey[j] != key)
			j = (j + 1) & (BMEMO - 1);
		if (B->mkey[j] == key)
			return B->mrate + j * B->nmem;
		if (2 * (B->nmemo + 1) > BMEMO)
			j = BMEMO; /* full enough: the last entry is scratch, filled each time */
		else
			B->mkey[j] = key, B->nmemo++;
	}
	int n = 0;
	for (int q = 0; q < B->nmem; q++)
		if (key >> q & 1)
			B->rts[n++] = h->rt[B->mem[q]];
	hs_net_fill(r->net, B->rts, n, B->rates);
	double *v = B->mrate + j * B->nmem;
	n = 0;
	for (int q = 0; q < B->nmem; q++)
		if (key >> q & 1)
			v[q] = B->rates[n++];
	return v;
}

/* The recompute: every slice in flight up to now, at the rates max-min gives them from now. */
static void bundle_rate(nc_run *r, hops *h, int b, hs_time now)
{
	bundle *B = &h->bd[b];
	B->dirty = 0;
	if (B->rate_ev.seq)
		hs_engine_cancel(r->net->eng, B->rate_ev);
	B->rate_ev = (hs_event_id){0, 0};
	uint64_t key = 0;
	for (int i = 0; i < B->nact; i++)
		key |= (uint64_t)1 << h->hp[B->act[i]].bpos;
	const double *v = B->nact ? bundle_rates(r, h, B, key) : NULL;
	for (int i = 0; i < B->nact; i++) {
		hop *p = &h->hp[B->act[i]];
		double x = v[p->bpos];
		if (p->bq) {
			p->brem -= p->brate * (double)(now - p->bt_upd);
			p->brem = p->brem < 0 ? 0 : p->brem;
		}
		p->bt_upd = now;
		if (p->bq && fabs(x - p->brate) <= HS_MAXMIN_RATE_EPS * p->brate)
			continue; /* the rate it had, and the finish set with it */
		p->brate = x;
		hs_time d = hs_time_for(p->brem, x);
		p->bfin = d > HS_TIME_MAX - now ? HS_TIME_MAX : now + d;
		p->bq = 1;
	}
	bundle_schedule(r, h, b);
}

static void bundle_rate_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	nc_run *r = ctx;
	hops *h = r->st;
	h->bd[arg].rate_ev = (hs_event_id){0, 0};
	if (h->bd[arg].dirty)
		bundle_rate(r, h, (int)arg, hs_engine_now(eng));
}

/* Hop x's slice of `bytes` starts now in its bundle. */
static void bundle_send(nc_run *r, hops *h, int x, double bytes)
{
	hop *p = &h->hp[x];
	int b = p->bnd;
	bundle *B = &h->bd[b];
	hs_time now = hs_engine_now(r->net->eng);
	p->bbytes = p->brem = bytes;
	p->bs = p->bt_upd = now;
	p->brate = 0;
	p->bq = 0;
	uint64_t busy = 0;
	for (int i = 0; i < B->nact; i++)
		busy |= B->mask[h->hp[B->act[i]].bpos];
	B->act[B->nact++] = x;
	r->outstanding++; /* until it arrives (bundle_arrive) */
	hs_net_timed_started(r->net, 1, bytes);
	if (!(busy & B->mask[p->bpos])) { /* no slice in flight on its links: rated at its start, alone */
		p->brate = bundle_rates(r, h, B, (uint64_t)1 << p->bpos)[p->bpos];
		hs_time d = hs_time_for(bytes, p->brate);
		p->bfin = d > HS_TIME_MAX - now ? HS_TIME_MAX : now + d;
		p->bq = 1;
		bundle_schedule(r, h, b);
	} else if (!B->dirty) {
		B->dirty = 1;
		B->rate_ev = hs_engine_at(r->net->eng, now, bundle_rate_event, r, (uint64_t)b);
	}
}

static void bundle_arrive(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	hs_netcoll_child_cb(ctx, arg); /* as a flow's arrival: the ring hears of it, and may end */
}

/* Bundle b's hold goes back once none of its hops has a slice to send. */
void hs_ring_bundle_release(nc_run *r, hops *h, int b)
{
	bundle *B = &h->bd[b];
	if (B->hold < 0 || B->nact)
		return;
	for (int i = 0; i < B->nmem; i++) {
		const hop *p = &h->hp[B->mem[i]];
		if (p->sent < h->Q || p->ev.seq)
			return;
	}
	hs_net_unhold(r->net, B->hold);
	B->hold = -1;
	B->done = 1;
}

static void bundle_fin_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	nc_run *r = ctx;
	hops *h = r->st;
	int b = (int)arg;
	bundle *B = &h->bd[b];
	hs_time now = hs_engine_now(eng);
	B->fin_ev = (hs_event_id){0, 0};
	int left = 0;
	for (int i = 0; i < B->nact; i++) {
		int x = B->act[i];
		hop *p = &h->hp[x];
		if (!p->bq || p->bfin > now) {
			B->act[left++] = x;
			continue;
		}
		/* its last byte has left: on the links over [start, now], as the model spreads a flow's */
		hs_net_timed_carried(r->net, h->rt[x], p->bs, now, p->bbytes);
		hs_engine_at(eng, now + h->rt[x]->lat, bundle_arrive, r, (uint64_t)x);
	}
	int gone = left < B->nact;
	B->nact = left;
	if (B->nact && (gone || B->dirty))
		bundle_rate(r, h, b, now);
	else
		bundle_schedule(r, h, b);
	hs_ring_bundle_release(r, h, b);
}

/* A flow entered bundle b's links at t (the model released the hold): each slice in flight goes on as a flow
 * with what it has left, and its hops' slices are flows until the bundle is held again (hs_ring_hop_send). */
void hs_ring_bundle_break(nc_run *r, hops *h, int b)
{
	bundle *B = &h->bd[b];
	hs_engine *eng = r->net->eng;
	hs_time t = hs_engine_now(eng);
	r->net->sst.bundles_broken++;
	B->hold = -1;
	if (B->fin_ev.seq)
		hs_engine_cancel(eng, B->fin_ev);
	if (B->rate_ev.seq)
		hs_engine_cancel(eng, B->rate_ev);
	B->fin_ev = B->rate_ev = (hs_event_id){0, 0};
	B->dirty = 0;
	int nact = B->nact;
	B->nact = 0;
	for (int i = 0; i < nact; i++) {
		int x = B->act[i];
		hop *p = &h->hp[x];
		double rem = p->brem;
		if (p->bq)
			rem -= p->brate * (double)(t - p->bt_upd);
		rem = rem < 0 ? 0 : rem;
		hs_net_timed_carried(r->net, h->rt[x], p->bs, t, p->bbytes - rem);
		hs_net_timed_started(r->net, -1, -rem); /* the flow counts its rest again */
		r->outstanding--; /* the flow holds the ring open from here */
		hs_ring_hops_flow(r, h, x, rem);
	}
}

/* Hop x's slice of `bytes` starts now: in its bundle, or as a flow. A broken bundle is taken again where its
 * links are free once more (the flow that broke it has left, and its own hops' flows too: a flow on a link
 * refuses the hold), so that traffic crossing a node's ports for a while (an expert all-to-all's pairs) does not
 * leave the ring's hops there flows to the end. */
void hs_ring_hop_send(nc_run *r, hops *h, int x, double bytes)
{
	int b = h->hp[x].bnd;
	bundle *B = b >= 0 ? &h->bd[b] : NULL;
	if (B && B->hold < 0 && !B->done) {
		B->hold = hs_net_hold_links(r->net, B->links, B->nlinks, hs_ring_hops_broken, r, BUNDLE_TAG | (uint64_t)b);
		r->net->sst.bundles_reformed += B->hold >= 0;
	}
	if (B && B->hold >= 0)
		bundle_send(r, h, x, bytes);
	else
		hs_ring_hops_flow(r, h, x, bytes);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int hs_ring_bundles_form(nc_run *r, hops *h, const int *comp, const char *shared)
{
	int X = h->X, nb = 0;
	int *cnt = hs_xcalloc((size_t)X, sizeof *cnt);
	for (int x = 0; x < X; x++)
		if (shared[x])
			cnt[comp[x]]++;
	h->bd = hs_xmalloc((size_t)X / 2 * sizeof *h->bd + 1);
	for (int c = 0; c < X; c++) {
		if (cnt[c] < 2 || cnt[c] > 64) /* a set in flight is a word's bits */
			continue;
		bundle *B = &h->bd[h->nbd];
		*B = (bundle){.hold = -1, .nmem = cnt[c]};
		B->mem = hs_xmalloc((size_t)cnt[c] * sizeof *B->mem);
		B->rts = hs_xmalloc((size_t)B->nmem * sizeof *B->rts);
		for (int x = c; x < X; x++)
			if (shared[x] && comp[x] == c) {
				B->rts[B->nact] = h->rt[x];
				B->mem[B->nact++] = x;
			}
		B->nact = 0;
		B->links = hs_routes_links(B->rts, B->nmem, &B->nlinks);
		B->hold = hs_net_hold_links(r->net, B->links, B->nlinks, hs_ring_hops_broken, r, BUNDLE_TAG | (uint64_t)h->nbd);
		if (B->hold < 0) {
			free(B->mem), free(B->links), free(B->rts);
			continue;
		}
		B->act = hs_xmalloc((size_t)B->nmem * sizeof *B->act);
		B->mask = hs_xmalloc((size_t)B->nmem * sizeof *B->mask);
		B->rates = hs_xmalloc((size_t)B->nmem * sizeof *B->rates);
		for (int i = 0; i < B->nmem; i++) {
			hop *p = &h->hp[B->mem[i]];
			const hs_route *rt = h->rt[B->mem[i]];
			p->bnd = h->nbd;
			p->bpos = i;
			B->mask[i] = B->nlinks > 64 ? ~(uint64_t)0 : 0;
			for (int k = 0; k < rt->nl && B->nlinks <= 64; k++) {
				const int *at = bsearch(&rt->link[k], B->links, (size_t)B->nlinks, sizeof *B->links, cmp_int);
				B->mask[i] |= (uint64_t)1 << (at - B->links);
			}
		}
		nb += B->nmem;
		h->nbd++;
	}
	free(cnt);
	r->net->sst.bundled += (uint64_t)nb;
	return nb;
}

void hs_ring_bundles_free(nc_run *r, hops *h)
{
	for (int b = 0; b < h->nbd; b++) {
		bundle *B = &h->bd[b];
		assert(!B->nact && !B->fin_ev.seq && !B->rate_ev.seq && "a bundle's slices have all arrived");
		if (B->hold >= 0)
			hs_net_unhold(r->net, B->hold);
		free(B->mem), free(B->act), free(B->links), free(B->mask), free(B->rts), free(B->rates);
		free(B->mkey), free(B->mrate);
	}
	free(h->bd);
	h->bd = NULL;
	h->nbd = 0;
}
