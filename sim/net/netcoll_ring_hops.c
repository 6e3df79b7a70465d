/* A ring without symmetry classes whose hops time themselves where they are alone on their links.
 *
 * Under hashed ECMP a fat-tree bears no rotation of a ring (each hop's crossing goes up to its own hashed
 * spine port), so no class forms and every slice of every hop would be a flow: a 16k-GPU Llama step's
 * data-parallel rings are 35M transfers. Yet most hops never meet another flow: counted on an 8,192-GPU copy
 * of that step, a 64-rank ring has 1 to 9 hops that share a link with another ring (two lanes' crossings
 * hashed onto one spine port), and the other 55 to 63 are alone on their links for the whole collective.
 *
 * A hop alone on its links (no flow, set or hold there, and no other hop of this ring on them) is held
 * (hs_net_hold: the model keeps every other flow off those links, and tells us first when one would enter)
 * and timed here: its slices run at the rate a flow alone there gets, so slice q of rank x starts at
 *     S(x, q) = max(A(x, q - 1), A(x - 1, q - k)),  A = S + d(x) + lat(x)
 * (the ring's recurrence, netcoll_ring.c's top) with no flow and no event. The other hops (shared, or refused
 * a hold) send their slices as flows. Set slice by slice, the timed hops would be 2n(n - 1)Ck settings a ring,
 * quadratic in its ranks (the term that separated a hashed 65k-GPU step from the 32k one), so each channel's
 * stretches of consecutive held hops are runs (sim/net/ring_run.h), timed by their closed form: O(1) per slice
 * of the run's input instead of O(hops). A run's inputs are the previous flow hop's arrivals, its outputs the
 * next flow hop's; its hops keep no per-slice state. The ring is a dataflow: a run's outputs are set once its
 * inputs are known, ahead of the clock, and a flow hop's start, known ahead, is an engine event at that
 * instant. A channel whose every hop is held is a cycle, timed whole at its start; a ring with every hop alone
 * ends with one event.
 *
 * When a flow enters a held link at t (another ring's slice that the hash sent through the same port), the
 * hop b breaks and its run splits (run_split): b's slices that left by t stand (their arrivals), the one in
 * flight at t goes on as a flow with what it has left (rem = bytes - rate x elapsed, as the model cuts a flow),
 * the later ones are flows; the hops before b become a run on the same inputs, feeding b, and those after b a
 * run on b's arrivals. Each part is the same function of its inputs and t0 as before, so what it had set
 * stands and only the outputs that b's later slices feed are taken back (with the flow hops' starts set ahead
 * of t, set again); the other runs' inputs are flow arrivals already heard, so nothing of theirs changes. The
 * result is what every slice as a flow gives (tests: test_netsym.c, `ring_hops`, against --no-symmetry).
 *
 * A broken hop stays a flow hop: at 16k GPUs a quarter of such hops' arrivals find their links free again, but
 * a hold taken there would mostly be broken again by the next slice of the ring it shares a port with.
 *
 * Hops of this ring that share a link with each other and with nothing else (the 7 channels' hops between two
 * GPUs of a node and the eighth's crossing through the same ports to its rail's NIC) are a bundle: one hold over
 * their links, their slices in flight rated as max-min rates those flows alone (the model's fill, kept per set
 * in flight) and timed by events as the flow model times flows (sim/net/ring_bundle.c). A broken bundle is
 * held again once its links are free.
 *
 * A ring whose classes timed themselves (netcoll_ring.c `ana`) and whose set breaks goes on here
 * (hs_ring_hops_resume): every hop held, its timeline set again from the ring's start, and the flow that broke
 * the set breaks only the hops it enters.
 *
 * Timed slices' bytes reach the links (hs_net_timed_carried) when the ring is freed, or b's at its break: a
 * count per hop, or, where the network keeps a timeline, each slice spread over its own interval (the run's
 * recurrence replayed slice by slice once, run_emit); the holds are released once every slice is set and the
 * last timed one has arrived. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"
#include "sim/net/netcoll_ring_hops.h"
#include "sim/net/ring_hops_state.h"


static long tq_end(const tq *q) { return q->base + q->len; }
static hs_time tq_at(const tq *q, long i)
{
	assert(i >= q->base && i < q->base + q->len && "a time the deque holds");
	return q->t[(q->off + (int)(i - q->base)) & (q->cap - 1)];
}
static void tq_push(tq *q, hs_time t)
{
	if (q->len == q->cap) {
		int cap = q->cap ? 2 * q->cap : 4;
		hs_time *nt = hs_xmalloc((size_t)cap * sizeof *nt);
		for (int i = 0; i < q->len; i++)
			nt[i] = q->t[(q->off + i) & (q->cap - 1)];
		free(q->t);
		q->t = nt, q->off = 0, q->cap = cap;
	}
	q->t[(q->off + q->len++) & (q->cap - 1)] = t;
}
static void tq_pop_front(tq *q)
{
	q->off = (q->off + 1) & (q->cap - 1);
	q->base++, q->len--;
}


static void push(hops *h, int x)
{
	if (h->nwork == h->capwork)
		hs_xgrow(&h->work, &h->capwork, h->nwork + 1, sizeof *h->work);
	h->work[h->nwork++] = x;
}

void hs_ring_hops_flow(nc_run *r, hops *h, int x, double bytes)
{
	hs_netcoll_send_route(r, h->rt[x], bytes, 0, (uint64_t)x);
}

/* The arrivals at flow hop p that none of its slices can need again: a slice that may be set again (its
 * pending start) reads its predecessor's slice k before it. */
static void prune_in(hops *h, hop *p)
{
	long first = p->sent - (p->ev.seq != 0);
	tq *in = &p->in;
	while (in->len && in->base < first - h->k)
		tq_pop_front(in);
}

/* Hop j of a run that starts at hop x (the channel's next hops, wrapping). */
static int run_hop(const hops *h, int x, int j) { return x - x % h->n + (x % h->n + j) % h->n; }

/* Run u's outputs that its inputs determine, into the next hop's arrivals; returns the slices this set over
 * its hops (and its hops' arrivals, once every slice is set). */
static long run_advance(hops *h, hrun *u)
{
	hs_ring_run *rr = u->rr;
	long ready = hs_ring_run_ready(rr);
	int last = run_hop(h, u->first, u->m - 1), succ = h->hp[last].succ;
	if (hs_ring_run_nout(rr) < ready) {
		while (hs_ring_run_nout(rr) < ready) {
			hs_time A = hs_ring_run_next(rr);
			if (!u->cyclic)
				tq_push(&h->hp[succ].in, A);
		}
		if (!u->cyclic)
			push(h, succ);
	}
	long set = hs_ring_run_set(rr), dn = set - u->counted;
	u->counted = set;
	if (!u->done && set == (long)u->m * h->Q) {
		u->done = 1;
		h->ndone += u->m;
		h->hp[last].tfree = hs_ring_run_last(rr); /* the end's candidate: the run's latest arrival */
	}
	return dn;
}

/* What run u's hops carried, the slices it set: each spread over its own interval where the network keeps a
 * timeline (the recurrence again, slice by slice, once), else a count. */
static void run_emit(nc_run *r, hops *h, hrun *u)
{
	if (!h->series) {
		for (int j = 0; j < u->m; j++)
			h->hp[run_hop(h, u->first, j)].acc += hs_ring_run_set_at(u->rr, j);
		return;
	}
	hs_time *prev = hs_xmalloc((size_t)h->Q * sizeof *prev), *cur = hs_xmalloc((size_t)h->Q * sizeof *cur);
	const hs_time *in = hs_ring_run_inputs(u->rr);
	for (int j = 0; j < u->m; j++) {
		int x = run_hop(h, u->first, j);
		hop *p = &h->hp[x];
		const hs_time *pa = j ? prev : in; /* the predecessor's arrivals (a cycle's first: its outputs) */
		long c = hs_ring_run_set_at(u->rr, j);
		for (long q = 0; q < c; q++) {
			hs_time S = q ? cur[q - 1] : h->t0;
			if (q >= h->k && pa[q - h->k] > S)
				S = pa[q - h->k];
			cur[q] = S + p->dl;
			hs_net_timed_carried(r->net, h->rt[x], S, S + p->dur, p->slice);
		}
		hs_time *sw = prev;
		prev = cur, cur = sw;
	}
	free(prev), free(cur);
}

/* A run of hops [first, first + m) fed by the arrivals in[0, nin), into slot u; its outputs from `from` on
 * into the arrivals `to` (NULL: none), the deque's first index `from`. Returns the slices it sets. */
static long run_make(hops *h, hrun *u, int first, int m, const hs_time *in, long nin, tq *to, long from, int R)
{
	hs_time *d = hs_xmalloc((size_t)m * sizeof *d);
	for (int j = 0; j < m; j++) {
		hop *p = &h->hp[run_hop(h, first, j)];
		d[j] = p->dl;
		p->run = R;
	}
	*u = (hrun){.rr = hs_ring_run_create(m, h->k, h->Q, d, h->t0, 0), .first = first, .m = m};
	free(d);
	for (long q = 0; q < nin; q++)
		hs_ring_run_input(u->rr, in[q]);
	if (to)
		to->base = from;
	for (long q = 0, ready = hs_ring_run_ready(u->rr); q < ready; q++) {
		hs_time A = hs_ring_run_next(u->rr);
		if (to && q >= from)
			tq_push(to, A);
	}
	u->counted = hs_ring_run_set(u->rr);
	if (u->counted == (long)m * h->Q) {
		u->done = 1;
		h->ndone += m;
		h->hp[run_hop(h, first, m - 1)].tfree = hs_ring_run_last(u->rr);
	}
	return u->counted;
}

/* A flow entered hop b's links at t, b in a run: the run splits there. b's slices that left by t stand (their
 * arrivals), the one in flight at t goes on as a flow with its rest, the later ones are flows; the hops before b
 * are a run on the same inputs, whose outputs b reads, and those after b a run on b's arrivals (a cycle's other
 * hops one such run). Each is the same function of its inputs and t0 as before, so what they had set stands
 * and only the outputs that b's later slices feed are taken back. Returns the bytes of b's slice in flight
 * that are left (-1: none), which the caller sends. */
static double run_split(nc_run *r, hops *h, int b, hs_time t)
{
	int R = h->hp[b].run;
	hrun old = h->runs[R];
	const hs_time *in = hs_ring_run_inputs(old.rr);
	long nin = hs_ring_run_nin(old.rr);
	int pos = (b % h->n - old.first % h->n + h->n) % h->n, m1 = pos, m2 = old.m - pos - 1;
	hop *pb = &h->hp[b];
	h->ndone -= old.done ? old.m : 0;
	for (int j = 0; j < old.m; j++) {
		hop *p = &h->hp[run_hop(h, old.first, j)];
		p->tfree = h->t0;
		p->run = -1;
	}
	/* b's arrivals: the prefix up to b as a run of its own on the same inputs */
	hs_time *d = hs_xmalloc((size_t)(pos + 1) * sizeof *d);
	for (int j = 0; j <= pos; j++)
		d[j] = h->hp[run_hop(h, old.first, j)].dl;
	hs_ring_run *pre = hs_ring_run_create(pos + 1, h->k, h->Q, d, h->t0, 0);
	free(d);
	long cb = hs_ring_run_set_at(old.rr, pos), kept = 0, sent = 0;
	for (long q = 0; q < (old.cyclic ? h->Q : nin); q++)
		hs_ring_run_input(pre, in[q]);
	hs_time *ab = hs_xmalloc(((size_t)cb + 1) * sizeof *ab), Sf = 0;
	double rem = -1;
	for (long q = 0; q < cb; q++) {
		hs_time A = hs_ring_run_next(pre), S = A - pb->dl;
		if (S > t)
			break; /* set ahead: taken back, a flow from now */
		sent = q + 1;
		if (S + pb->dur > t) { /* in flight at t: its rest goes on as a flow */
			Sf = S;
			rem = pb->slice - pb->rate * (double)(t - S);
			rem = rem < 0 ? 0 : rem;
			break;
		}
		ab[kept++] = A;
		if (h->series)
			hs_net_timed_carried(r->net, h->rt[b], S, S + pb->dur, pb->slice);
	}
	hs_ring_run_free(pre);
	/* b from here: a flow hop */
	pb->sent = sent;
	pb->acc += h->series ? 0 : kept;
	pb->tfree = kept ? ab[kept - 1] : h->t0;
	pb->busy = rem >= 0;
	h->ndone += sent == h->Q;
	if (rem >= 0) {
		hs_net_timed_carried(r->net, h->rt[b], Sf, t, pb->slice - rem);
		hs_net_timed_started(r->net, -1, -rem); /* the flow counts its rest again */
	}
	long from = sent - h->k > 0 ? sent - h->k : 0, set = sent;
	h->runs[R].rr = NULL; /* the slot is free until a part of the run takes it */
	if (old.cyclic) { /* the other hops: one run on b's arrivals, into b */
		if (old.m > 1)
			set += run_make(h, &h->runs[R], run_hop(h, b, 1), old.m - 1, ab, kept, &pb->in, from, R);
	} else {
		tq *out = &h->hp[h->hp[run_hop(h, old.first, old.m - 1)].succ].in;
		long keep = kept; /* the outputs that stand: b's arrivals that stand, or the run after b's on them */
		if (m1) { /* the hops before b: a run on the same inputs, into b */
			set += run_make(h, &h->runs[R], old.first, m1, in, nin, &pb->in, from, R);
		} else { /* b reads the run's inputs */
			pb->in.base = from;
			for (long q = from; q < nin; q++)
				tq_push(&pb->in, in[q]);
		}
		if (m2) { /* the hops after b: a run on b's arrivals, whose outputs up to its ready ones stand */
			int slot = m1 ? h->nruns++ : R;
			set += run_make(h, &h->runs[slot], pb->succ, m2, ab, kept, NULL, 0, slot);
			keep = hs_ring_run_nout(h->runs[slot].rr);
		}
		assert(tq_end(out) >= keep && keep >= out->base && "the outputs that stand were all set, none read");
		out->len -= (int)(tq_end(out) - keep);
	}
	free(ab);
	hs_ring_run_free(old.rr);
	hs_net_timed_started(r->net, set - old.counted, (double)(set - old.counted) * pb->slice);
	return rem;
}

static void end_event(hs_engine *eng, void *ctx, uint64_t arg);
static void start_event(hs_engine *eng, void *ctx, uint64_t arg);

/* Set every slice whose inputs are known (the worklist's ranks, and whatever that makes ready). */
static void run(nc_run *r, hops *h)
{
	if (h->running)
		return;
	h->running = 1;
	hs_engine *eng = r->net->eng;
	hs_time now = h->resuming ? h->clock : hs_engine_now(eng), real = hs_engine_now(eng);
	long timed = 0;
	double tb = 0;
	while (h->nwork) {
		int x = h->work[--h->nwork];
		hop *p = &h->hp[x];
		if (p->run >= 0) { /* a run's hops are set by their first's turn */
			if (x == h->runs[p->run].first) {
				long dn = run_advance(h, &h->runs[p->run]);
				timed += dn, tb += (double)dn * p->slice;
			}
			continue;
		}
		if (p->sent >= h->Q || p->busy)
			continue;
		long q = p->sent;
		hs_time S = p->tfree;
		if (q >= h->k) {
			tq *in = &p->in;
			if (tq_end(in) <= q - h->k)
				continue;
			hs_time a = tq_at(in, q - h->k);
			S = a > S ? a : S;
		}
		/* the inputs are arrivals heard now or timed ones set ahead, and an input known earlier waited on
		 * one known now: never before now */
		assert(S >= now);
		if (S < now)
			S = now;
		assert(p->hold < 0 && !h->resuming && "every held hop is in a run; a resumed ring's are all held");
		prune_in(h, p); /* before this slice counts: it may be set again, and reads input q - k */
		h->ndone += ++p->sent == h->Q;
		p->busy = 1;
		if (S > now) {
			r->outstanding++; /* the start holds the run open */
			p->ev = hs_engine_at(eng, S, start_event, r, (uint64_t)x);
		} else
			hs_ring_hop_send(r, h, x, p->slice);
	}
	h->running = 0;
	if (timed) /* the transfers these timed slices stand for */
		hs_net_timed_started(r->net, timed, tb);
	if (h->ndone == h->X && !h->end_pending && !h->ended) {
		hs_time end = real; /* the latest timed arrival (a broken hop's last may still be on the wire) */
		for (int x = 0; x < h->X; x++)
			if (h->hp[x].tfree > end)
				end = h->hp[x].tfree;
		r->outstanding++;
		h->end_pending = 1;
		h->end_ev = hs_engine_at(eng, end, end_event, r, 0);
	}
}

static void start_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	nc_run *r = ctx;
	hops *h = r->st;
	int x = (int)arg;
	h->hp[x].ev = (hs_event_id){0, 0};
	r->outstanding--; /* the flow below holds it from here */
	hs_ring_hop_send(r, h, x, h->hp[x].slice);
}

/* Every slice is set and the last timed one has arrived: the holds go back, and the flows still in flight
 * end the run. */
static void end_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng, (void)arg;
	nc_run *r = ctx;
	hops *h = r->st;
	h->end_pending = 0;
	h->ended = 1;
	for (int x = 0; x < h->X; x++)
		if (h->hp[x].hold >= 0) {
			hs_net_unhold(r->net, h->hp[x].hold);
			h->hp[x].hold = -1;
		}
	for (int b = 0; b < h->nbd; b++) /* a bundle with a slice in flight keeps its hold until it finishes */
		hs_ring_bundle_release(r, h, b);
	hs_netcoll_child_cb(r, END_TAG);
}

/* A flow entered hop b's links at t (the model released the hold): everything set ahead of t is taken back,
 * b's slice in flight goes on as a flow, and the ring sets its slices again (see the top). */
void hs_ring_hops_broken(void *ctx, uint64_t arg)
{
	nc_run *r = ctx;
	hops *h = r->st;
	if (arg & BUNDLE_TAG) {
		hs_ring_bundle_break(r, h, (int)(arg & ~BUNDLE_TAG));
		return;
	}
	int b = (int)arg;
	hs_engine *eng = r->net->eng;
	hs_time t = hs_engine_now(eng);
	r->net->sst.holds_broken++;
	assert(h->hp[b].run >= 0 && "a held hop is in a run");
	double rem = run_split(r, h, b, t);
	if (h->end_pending) {
		hs_engine_cancel(eng, h->end_ev);
		h->end_pending = 0;
		r->outstanding--;
	}
	for (int x = 0; x < h->X; x++) {
		hop *p = &h->hp[x];
		if (p->hold < 0 && p->ev.seq && p->ev.t > t) { /* a flow hop's start set ahead of t */
			hs_engine_cancel(eng, p->ev);
			p->ev = (hs_event_id){0, 0};
			h->ndone -= p->sent == h->Q;
			p->sent--;
			p->busy = 0;
			r->outstanding--;
		}
	}
	/* b from here: its slices as flows; the one in flight at t goes on with its rest */
	h->hp[b].hold = -1;
	for (int x = 0; x < h->X; x++)
		push(h, x);
	if (rem >= 0)
		hs_ring_hops_flow(r, h, b, rem);
	run(r, h);
}

static void on_done(nc_run *r, uint64_t tag)
{
	hops *h = r->st;
	if (tag == END_TAG)
		return;
	int x = (int)tag;
	hs_time now = hs_engine_now(r->net->eng);
	hop *p = &h->hp[x];
	p->busy = 0;
	p->tfree = now;
	if (h->hp[p->succ].run >= 0) /* the first hop of a run */
		hs_ring_run_input(h->runs[h->hp[p->succ].run].rr, now);
	else
		tq_push(&h->hp[p->succ].in, now);
	push(h, p->succ);
	push(h, x);
	run(r, h);
}

static void sfree(nc_run *r)
{
	hops *h = r->st;
	if (!h)
		return;
	for (int R = 0; R < h->nruns; R++) { /* a run's hops carried the slices it set */
		hrun *u = &h->runs[R];
		if (!u->rr)
			continue;
		run_emit(r, h, u);
		hs_ring_run_free(u->rr);
	}
	free(h->runs);
	hs_ring_bundles_free(r, h);
	for (int x = 0; x < h->X; x++) {
		hop *p = &h->hp[x];
		if (p->acc)
			hs_net_timed_carried(r->net, h->rt[x], h->t0, h->t0, (double)p->acc * p->slice);
		if (p->hold >= 0)
			hs_net_unhold(r->net, p->hold);
		free(p->in.t);
	}
	free(h->ord), free(h->slice), free(h->rt), free(h->hp), free(h->work);
	free(h);
	r->st = NULL;
}

static void unused_start(nc_run *r) { (void)r; }

static const nc_algo ring_hops = {"ring (hops timed alone)", unused_start, on_done, sfree, NULL};

static int cmp_int2(const void *a, const void *b)
{
	const int *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The held hops as runs: each channel's maximal stretches of them (the whole channel, a cycle, where every hop
 * is held). */
static void runs_form(hops *h)
{
	int n = h->n;
	h->runs = hs_xmalloc((size_t)h->X * sizeof *h->runs);
	hs_time *d = hs_xmalloc((size_t)n * sizeof *d);
	for (int c = 0; c < h->C; c++) {
		int nh = 0;
		for (int i = 0; i < n; i++)
			nh += h->hp[c * n + i].hold >= 0;
		for (int i = 0; i < n && nh; i++) {
			int x = c * n + i, cyclic = nh == n;
			if (h->hp[x].hold < 0 || (!cyclic && h->hp[run_hop(h, x, n - 1)].hold >= 0))
				continue; /* not held, or not a run's first */
			int m = 0;
			while (m < n && h->hp[run_hop(h, x, m)].hold >= 0)
				m++;
			hrun *u = &h->runs[h->nruns];
			*u = (hrun){.first = x, .m = m, .cyclic = cyclic};
			for (int j = 0; j < m; j++) {
				hop *p = &h->hp[run_hop(h, x, j)];
				d[j] = p->dl;
				p->run = h->nruns;
			}
			u->rr = hs_ring_run_create(m, h->k, h->Q, d, h->t0, cyclic);
			h->nruns++;
			if (cyclic)
				break;
		}
	}
	free(d);
}

static int uf_find(int *uf, int x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

/* The ring's hops, held where they can be (all of them, or nothing taken, with `all`), from t0. */
static int setup(nc_run *r, int C, int k, long Q, int *ord, double *slice, const hs_route **rt, hs_time t0, int all)
{
	int n = r->n, X = C * n;
	if (!r->net->symmetry || !r->net->ops->hold || k < 1 || Q < 1)
		return 0;
	for (int c = 0; c < C; c++)
		if (!(slice[c] > 0))
			return 0;
	for (int x = 0; x < X; x++)
		if (!rt[x])
			return 0;
	/* hops of this ring that share a link are flows (each would break the other's hold) */
	size_t np = 0;
	for (int x = 0; x < X; x++)
		np += (size_t)rt[x]->nl;
	int *pl = hs_xmalloc((np ? np : 1) * 2 * sizeof *pl);
	np = 0;
	for (int x = 0; x < X; x++)
		for (int i = 0; i < rt[x]->nl; i++)
			pl[2 * np] = rt[x]->link[i], pl[2 * np + 1] = x, np++;
	qsort(pl, np, 2 * sizeof *pl, cmp_int2);
	char *shared = hs_xcalloc((size_t)X, 1);
	int *uf = hs_xmalloc((size_t)X * sizeof *uf); /* hops joined by the links they share */
	for (int x = 0; x < X; x++)
		uf[x] = x;
	for (size_t i = 1; i < np; i++)
		if (pl[2 * i] == pl[2 * i - 2] && pl[2 * i + 1] != pl[2 * i - 1]) {
			shared[pl[2 * i + 1]] = shared[pl[2 * i - 1]] = 1;
			int a = uf_find(uf, pl[2 * i + 1]), b = uf_find(uf, pl[2 * i - 1]);
			uf[a > b ? a : b] = a < b ? a : b;
		}
	free(pl);
	hops *h = hs_xcalloc(1, sizeof *h);
	h->C = C, h->n = n, h->k = k, h->Q = Q, h->X = X;
	h->ord = ord, h->slice = slice, h->rt = rt;
	h->hp = hs_xcalloc((size_t)X, sizeof *h->hp);
	h->t0 = t0;
	h->series = r->net->series != NULL;
	int timed = 0;
	for (int x = 0; x < X; x++) {
		hop *p = &h->hp[x];
		p->tfree = t0;
		p->succ = x - x % n + (x % n + 1) % n;
		p->slice = slice[x / n];
		p->run = -1;
		p->bnd = -1;
		p->hold = shared[x] ? -1 : hs_net_hold(r->net, rt[x], &p->rate, hs_ring_hops_broken, r, (uint64_t)x);
		if (p->hold >= 0 && !(p->rate > 0)) {
			hs_net_unhold(r->net, p->hold);
			p->hold = -1;
		}
		if (p->hold < 0)
			continue;
		timed++;
		p->dur = hs_time_for(p->slice, p->rate);
		p->dl = p->dur + rt[x]->lat;
	}
	if (!all) { /* a resumed ring's hops are timed from its start, ahead of the clock: no bundle can be */
		for (int x = 0; x < X; x++)
			uf[x] = uf_find(uf, x);
		timed += hs_ring_bundles_form(r, h, uf, shared);
	}
	free(uf);
	free(shared);
	if (!timed || (all && timed < X)) { /* the plain ring, which owns ord, slice and rt still */
		h->ord = NULL, h->slice = NULL, h->rt = NULL;
		void *st = r->st;
		r->st = h;
		sfree(r);
		r->st = st;
		return 0;
	}
	r->st = h;
	r->alg = &ring_hops;
	runs_form(h);
	for (int x = X - 1; x >= 0; x--)
		push(h, x);
	return 1;
}

int hs_ring_hops_start(nc_run *r, int C, int k, long Q, int *ord, double *slice, const hs_route **rt)
{
	if (!setup(r, C, k, Q, ord, slice, rt, hs_engine_now(r->net->eng), 0))
		return 0;
	run(r, r->st);
	return 1;
}

int hs_ring_hops_resume(nc_run *r, int C, int k, long Q, int *ord, double *slice, const hs_route **rt, hs_time t0)
{
	if (!setup(r, C, k, Q, ord, slice, rt, t0, 1))
		return 0;
	hops *h = r->st;
	h->resuming = 1, h->clock = t0; /* every hop timed: the whole timeline from t0, as the classes had it */
	run(r, h);
	h->resuming = 0;
	return 1;
}
