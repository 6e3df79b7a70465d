/* A one-phase direct collective (all-to-all, all-gather, reduce-scatter) without symmetry classes, timed alone on
 * its links: its n(n-1) pair transfers start together and nothing waits on them but the end. Under hashed ECMP
 * (the default) the pairs' spine paths collide unevenly, no classes form, and each pair was a flow: a 64-rank
 * expert all-to-all is 4,032 flows and as many finishes and recomputes, 23.6M transfers of the DeepSeek-style
 * EP step's 31.4M. Yet the all-to-all mostly runs alone: counted on that step (bench_ep hash), 5,747 of its
 * 5,856 all-to-alls found every link of theirs free at their start, and 97 of those met another flow before
 * they ended (a pipeline send, a gradient ring).
 *
 * So where the model holds every link of the pairs' routes (hs_net_hold_links: free of any flow, set or
 * other hold), the pairs meet only each other, and max-min sharing, which decomposes over the parts of the
 * network no flow joins, gives them the rates they would have among the network's other flows: their finishes
 * from the start depend only on the group and the bytes. They are computed once (hs_net_solo: the model's
 * solver on these flows alone, by the model's own steps) and kept with the group's memo entry; every later
 * run of the group with those bytes is one engine event at its last finish (the links released, every pair's
 * bytes onto its links) and its arrival one route latency after the last.
 *
 * The first flow to enter a held link breaks the run (the model tells us before the flow enters, at t): the
 * pairs' state at t comes from the solo run again, stopped at t; a pair finished by then has carried its
 * bytes and arrives at its finish plus its latency, and each pair still running carries what it has left on as
 * a flow of its own, which then shares the links with the newcomer as it would have from its start. The
 * arrivals that are still to come by then are one engine event (the latest); the collective ends when it and
 * the flows are in. Tests: tests/unit/net/test_netsym.c `solo` (every completion, link byte and the injected
 * total equal to the per-flow run, symmetry off, to 1e-9, with other flows breaking runs at random times). */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_solo.h"

/* timelines kept per memo entry (per bytes of a pair): a group's all-to-alls run with one or two sizes */
#define SOLO_KEEP 4

struct hs_solo_run {
	nc_run *r;
	hs_symmemo *e;     /* refs held while live */
	hs_solo_tl *tl;    /* likewise */
	int hold;          /* -1 once released or broken */
	int live;
	hs_time t0;
	hs_event_id ev;    /* the last finish */
};

static int M_of(const nc_run *r) { return r->n * (r->n - 1); }

/* e's timeline for `bytes` a pair, computed and kept where missing; NULL where the model cannot time them. */
static hs_solo_tl *timeline(nc_run *r, hs_symmemo *e, double bytes)
{
	int M = M_of(r), kept = 0;
	hs_solo_tl **pp = &e->solo, **evict = NULL;
	for (; *pp; pp = &(*pp)->next, kept++) {
		if ((*pp)->bytes == bytes)
			return *pp;
		if (!(*pp)->refs)
			evict = pp; /* the oldest not in use: the list's last such */
	}
	hs_time *fin = hs_xmalloc((size_t)M * sizeof *fin);
	if (hs_net_solo(r->net, e->routes, M, bytes, HS_TIME_MAX, fin, NULL)) {
		free(fin);
		return NULL;
	}
	hs_solo_tl *t = hs_xcalloc(1, sizeof *t);
	t->bytes = bytes;
	t->fin = fin;
	for (int m = 0; m < M; m++) {
		t->last = fin[m] > t->last ? fin[m] : t->last;
		hs_time a = fin[m] + e->routes[m]->lat;
		t->end = a > t->end ? a : t->end;
	}
	if (kept >= SOLO_KEEP && evict) {
		hs_solo_tl *x = *evict;
		*evict = x->next;
		free(x->fin), free(x);
	}
	t->next = e->solo; /* newest first */
	e->solo = t;
	return t;
}

static void release(hs_solo_run *s)
{
	s->live = 0;
	s->e->refs--;
	s->tl->refs--;
}

/* The collective's one arrival (r->outstanding counted it). */
static void arrive(void *ctx, uint64_t arg) { hs_netcoll_child_cb(ctx, arg); }

/* The last finish: the links free again, every pair's bytes onto its links, the arrival one latency on. */
static void last_ev(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	(void)arg;
	hs_solo_run *s = ctx;
	nc_run *r = s->r;
	hs_net_unhold(r->net, s->hold);
	s->hold = -1;
	hs_net_solo_carried(r->net, s->e, s->t0, s->tl->fin, s->tl->bytes);
	hs_time wait = s->tl->end - s->tl->last;
	release(s);
	if (wait)
		hs_net_later(r->net, wait, arrive, r, 0);
	else
		hs_netcoll_child_cb(r, 0);
}

/* A flow is about to enter a held link, now (the hold is released): the pairs' state now, and those still
 * running on as flows (see the top). */
static void broken(void *ctx, uint64_t arg)
{
	(void)arg;
	hs_solo_run *s = ctx;
	nc_run *r = s->r;
	hs_net *net = r->net;
	hs_engine_cancel(net->eng, s->ev);
	s->hold = -1;
	net->sst.solo_broken++;
	int M = M_of(r);
	hs_time now = hs_engine_now(net->eng), stop = now - s->t0, late = 0;
	double bytes = s->tl->bytes;
	hs_time *fin = hs_xmalloc((size_t)M * sizeof *fin);
	double *rem = hs_xmalloc((size_t)M * sizeof *rem);
	int rc = hs_net_solo(net, s->e->routes, M, bytes, stop, fin, rem);
	(void)rc; /* it timed these transfers before (timeline) */
	for (int m = 0; m < M; m++) {
		const hs_route *rt = s->e->routes[m];
		if (fin[m] != HS_TIME_MAX) {
			hs_net_timed_carried(net, rt, s->t0, s->t0 + fin[m], bytes);
			late = fin[m] + rt->lat > late ? fin[m] + rt->lat : late;
			continue;
		}
		hs_net_timed_carried(net, rt, s->t0, now, bytes - rem[m]);
		hs_net_timed_started(net, -1, -rem[m]); /* the flow below counts its rest again */
		hs_netcoll_send_route(r, rt, rem[m], 1, 0);
	}
	free(fin), free(rem);
	release(s);
	/* the arrivals still to come of the pairs finished by now: the latest of them (at once where none is: the
	 * collective may then end, which is not for inside another flow's start) */
	hs_net_later(net, late > stop ? late - stop : 0, arrive, r, 0);
}

int hs_solo_start(nc_run *r, hs_symmemo *e, hs_solo_run **out)
{
	hs_net *net = r->net;
	double bytes = r->S / r->n;
	int M = M_of(r);
	if (!e || !e->routes || !(bytes > 0) || M < 2)
		return 0;
	if (!e->links) { /* the routes' links, once: the hold then reads one list, not every route's */
		e->links = hs_routes_links(e->routes, M, &e->nlinks);
		e->solo_m = M;
	}
	hs_solo_run *s = hs_xcalloc(1, sizeof *s);
	s->hold = hs_net_hold_links(net, e->links, e->nlinks, broken, s, 0);
	if (s->hold < 0) {
		free(s);
		return 0;
	}
	hs_solo_tl *tl = timeline(r, e, bytes);
	if (!tl) {
		hs_net_unhold(net, s->hold);
		free(s);
		return 0;
	}
	s->r = r;
	s->e = e;
	s->tl = tl;
	s->live = 1;
	e->refs++;
	tl->refs++;
	s->t0 = hs_engine_now(net->eng);
	s->ev = hs_engine_at(net->eng, s->t0 + tl->last, last_ev, s, 0);
	hs_net_timed_started(net, M, (double)M * bytes);
	net->sst.solo++;
	r->outstanding++;
	*out = s;
	return 1;
}

void hs_solo_free(hs_solo_run *s)
{
	free(s);
}
