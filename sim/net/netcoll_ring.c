/* Ring collectives on the network model, step by step. Also the chain (broadcast, reduce).
 *
 * C channels (hs_net_set_channels) run C rings at once, channel c on rail c (C = 1: one ring whose node
 * crossings spread over every rail). Each channel carries a share of the bytes in proportion to its ring's
 * bottleneck bandwidth (or an even share, hs_net_set_split(0)). A ring step's piece (S/n of the channel's
 * share) is cut into k slices of at most the chunk size. Every rank of a channel has one connection to its
 * successor and sends its slices in order, one at a time; slice q (step q / k) can leave once the
 * predecessor's slice q - k has arrived (the data it forwards or reduces into). So a slow link or a shared
 * NIC delays its successor, and through it the whole ring.
 *   all-reduce: 2(n-1) steps; all-gather, reduce-scatter: n-1 steps; pieces of S/n.
 *   broadcast, reduce: a chain of n-1 links from the root, the channel's share cut into slices of the chunk
 *   size (NCCL's 512 KiB when unset); a rank forwards slice j after receiving it.
 *
 * Symmetry classes (sim/net/netsym.h, hs_net_set_symmetry): every rank of a ring runs the same program, so
 * the ring is invariant under a rotation by p ranks; where the fabric is too (the route of hop i -> i+1 is
 * carried onto that of hop i+p -> i+p+1 by a permutation of links that keeps their bandwidths), the ranks
 * i, i+p, i+2p, ... of a channel move in lockstep and are one class: the ring runs on p representatives, each
 * step one flow per class (on one switch, p = 1: a step is one flow instead of n). p is the smallest divisor of
 * n whose rotation the routes bear. When other traffic enters the ring's links the classes break: the state of
 * each representative becomes that of every rank it stood for, and the ring goes on rank by rank.
 *
 * Where every class is alone on its links (the flow model says so, hs_net_sym_alone_rate: each hop on its own
 * NICs and switch ports, as under dmodk on a fat-tree) each class flow runs at a rate known from its start,
 * and the classes' timeline is a max-plus recurrence: slice q of representative x starts at
 *     S(x, q) = max(A(x, q - 1), A(x - 1, q - k)),  A = S + d(x) + lat(x)
 * (its connection free once the slice before arrived; the data from its predecessor's slice q - k in; d the
 * slice's time at the rate alone, hs_time_for as the model rounds it, lat the class's route latency). The ring
 * then times itself (`ana`): one pass at the start gives the end, one engine event the last byte's leaving
 * and one its arrival, with no flow and no event per slice. The classes' links stay reserved, so other traffic
 * still breaks the set; the break replays the recurrence up to that instant and leaves each representative as
 * the event run would have: slices arrived, one on the wire (its arrival an event of its own), one in flight
 * (cut with what it has left, rem = bytes - rate x elapsed as the model computes it), or none; then the ring
 * goes on rank by rank as after any break. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_flow.h"
#include "sim/net/netcoll_impl.h"
#include "sim/net/netcoll_ring_hops.h"

/* NCCL's broadcast and reduce step: its Simple buffer (DEFAULT_BUFFSIZE 4 MiB, src/init.cc) over NCCL_STEPS = 8
 * (src/include/device.h), one step per chunk (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1,
 * src/include/collectives.h, NCCL 2.23), so a chain forwards 512 KiB pieces per channel: the fill is n - 1 such
 * pieces, where 4 MiB pieces left a 16-rank chain a fifth slower than its closed form at 1 GiB. */
#define CHAIN_CHUNK (512.0 * 1024)

typedef struct rstate {
	int C, chain;
	long Q;        /* slices each sender sends */
	int k;         /* slices per step (ring) */
	double *slice; /* [C] bytes per slice */
	long *sent, *recvd; /* [C * w] */
	char *busy;
	int w;          /* ranks per channel in the state: n, or p while the classes hold */
	int p;          /* classes per channel: rank i stands for i, i+p, ... (p = n: none) */
	int fold;       /* the channels are alike: channel 0's classes stand for every channel's */
	int cw;         /* channels in the state: C, or 1 while folded classes hold */
	hs_symrun *sym; /* the classes (class c * p + i; folded: i), or NULL */
	/* broken classes (sym not live): the ranks an instant's arrivals made ready, tried once the instant's
	 * arrivals are in (the pump), where the classes may re-form */
	int pump;       /* a pump is pending */
	int *xid;       /* [C * n] while broken: a busy rank's transfer (hs_net_xfer's record), -1 */
	int *pend;      /* [C * p] after a re-form: members of class still to arrive one by one, or NULL */
	char *parr;     /* [C * n] with pend: the members among those that have arrived */
	int *todo;      /* [ntodo] channel c's rank i as c * n + i */
	size_t ntodo, captodo;
	int *ord;       /* [C * n] channel c's ring: devices (hs_coll_ring_channel_order) */
	const hs_route **rt; /* [C * n] hop i's route, where rtok (looked up at its first send; the router keeps it) */
	char *rtok;
	/* the ring timing its classes itself (see the top) */
	int ana;            /* on */
	hs_time t0;         /* when its classes started */
	hs_time *dur, *lat; /* [cw * p] a slice's time alone, the class's route latency */
	double *rate;       /* [cw * p] */
	hs_time t_left, t_end; /* the last byte's leaving and arrival */
	int ev_stage;       /* 1: waiting for t_left, 2: for t_end */
	hs_event_id ev;
} rstate;

#define TAG(c, i) (((uint64_t)(c) << 32) | (uint64_t)(i))
#define CLS_BIT ((uint64_t)1 << 63) /* a class transfer: rank i < p stands for its class */
#define PUMP_TAG ((uint64_t)1 << 62) /* the pump (not a transfer) */
#define ANA_TAG ((uint64_t)1 << 61) /* the end of a ring that timed its classes itself */

/* Channel c's rank i and its successor, as devices. */
static int dev(const nc_run *r, const rstate *s, int c, int i) { return s->ord[(size_t)c * r->n + (size_t)(i % r->n)]; }

static void send_hop(nc_run *r, rstate *s, int c, int i, double bytes, uint64_t tag)
{
	size_t h = (size_t)c * r->n + i;
	if (!s->rtok[h]) {
		s->rt[h] = hs_netcoll_route_v(r, dev(r, s, c, i), dev(r, s, c, i + 1), nc_rail(r, c, s->C));
		s->rtok[h] = 1;
	}
	int x = hs_netcoll_send_route(r, s->rt[h], bytes, s->chain, tag); /* on_sent: a chain's only */
	if (s->xid)
		s->xid[(size_t)c * r->n + i] = x;
}

static void try_send(nc_run *r, int c, int i)
{
	rstate *s = r->st;
	size_t x = (size_t)c * s->w + i;
	if (s->busy[x] || s->sent[x] >= s->Q)
		return;
	long q = s->sent[x];
	if (s->chain) {
		if (i == r->n - 1)
			return;
		if (i > 0 && s->recvd[x] < q + 1)
			return;
	} else if (q >= s->k && s->recvd[x] < q - s->k + 1)
		return;
	s->busy[x] = 1;
	s->sent[x]++;
	if (s->w < r->n) {
		r->outstanding++;
		hs_net_sym_xfer(r->net, s->sym, s->fold ? i : c * s->p + i, s->slice[c], hs_netcoll_sent_cb,
				hs_netcoll_child_cb, r, TAG(c, i) | CLS_BIT);
	} else
		send_hop(r, s, c, i, s->slice[c], TAG(c, i));
}

/* Rank i of channel c may be ready to send. While broken classes could re-form (a ring, not a chain, whose
 * set broke), it is tried by the pump at the end of the instant instead of now: on_done starting the next
 * sends at once would never leave an instant where the classes' states can be compared whole. The pump is
 * an engine event at the same instant, after the deliveries already scheduled there; the sends it starts
 * are at the same time and join the same recompute batch as far as the flow model goes (see below). */
static void kick(nc_run *r, rstate *s, int c, int i)
{
	if (!s->sym || s->w < r->n) {
		try_send(r, c, i);
		return;
	}
	hs_xgrow(&s->todo, &s->captodo, s->ntodo + 1, sizeof *s->todo);
	s->todo[s->ntodo++] = c * r->n + i;
	if (!s->pump) {
		s->pump = 1;
		r->outstanding++; /* the pump holds the run open */
		hs_net_later(r->net, 0, hs_netcoll_child_cb, r, PUMP_TAG);
	}
}

static int reform(nc_run *r, rstate *s);
static void sym_broken(void *ctx);
static void sym_cut(void *ctx, uint64_t tag, double rem);

/* A chain's connection sends its next slice once the previous one's last byte has left (NCCL keeps
 * NCCL_STEPS slices in flight per connection), not once it has arrived: waiting for the arrival put a route
 * latency between slices, a quarter of a 512 KiB slice's time on a 25 GB/s NIC. */
static void on_sent(nc_run *r, uint64_t tag)
{
	rstate *s = r->st;
	if (!s->chain)
		return;
	int c = (int)(tag >> 32), i = (int)(tag & 0xffffffffu);
	s->busy[(size_t)c * s->w + i] = 0;
	try_send(r, c, i);
}

static void on_done(nc_run *r, uint64_t tag)
{
	rstate *s = r->st;
	if (tag == ANA_TAG)
		return; /* the whole ring has arrived (ana_event) */
	if (tag == PUMP_TAG) {
		s->pump = 0;
		if (reform(r, s)) { /* the representatives' ring from here */
			s->ntodo = 0;
			for (int c = 0; c < s->cw; c++)
				for (int i = 0; i < s->w; i++)
					try_send(r, c, i);
			return;
		}
		for (size_t q = 0; q < s->ntodo; q++)
			try_send(r, s->todo[q] / r->n, s->todo[q] % r->n);
		s->ntodo = 0;
		return;
	}
	int cls = (tag & CLS_BIT) != 0;
	tag &= ~CLS_BIT;
	int c = (int)(tag >> 32), i = (int)(tag & 0xffffffffu);
	if (!cls && s->w < r->n) { /* a member's, sent before the classes formed again: the class's arrival once
				    * the last of them is in (they arrive at one instant, reform checked it) */
		s->parr[(size_t)c * r->n + i] = 1;
		c = s->fold ? 0 : c, i %= s->p;
		if (--s->pend[(size_t)c * s->p + i])
			return;
		for (int cc = c; cc < (s->fold ? s->C : c + 1); cc++) /* the class's arrival stands for them all */
			for (int k = i; k < r->n; k += s->p)
				s->parr[(size_t)cc * r->n + k] = 0;
		cls = 1;
	}
	if (cls && s->w < r->n) { /* the classes hold: the representatives' ring */
		int j = (i + 1) % s->p;
		s->busy[(size_t)c * s->w + i] = 0;
		s->recvd[(size_t)c * s->w + j]++;
		try_send(r, c, i);
		try_send(r, c, j);
		return;
	}
	if (cls) { /* sent before the classes broke: it arrives for every rank of the class (folded: of every
		    * channel) */
		int c0 = s->fold ? 0 : c, c1 = s->fold ? s->C : c + 1;
		for (int cc = c0; cc < c1; cc++)
			for (int k = i; k < r->n; k += s->p) {
				s->busy[(size_t)cc * r->n + k] = 0;
				s->recvd[(size_t)cc * r->n + (k + 1) % r->n]++;
			}
		for (int cc = c0; cc < c1; cc++)
			for (int k = i; k < r->n; k += s->p) {
				kick(r, s, cc, k);
				kick(r, s, cc, (k + 1) % r->n);
			}
		return;
	}
	int j = (i + 1) % r->n;
	if (!s->chain)
		s->busy[(size_t)c * r->n + i] = 0;
	s->recvd[(size_t)c * r->n + j]++;
	kick(r, s, c, i);
	kick(r, s, c, j);
}

/* ---- a ring that times its classes itself ---- */

/* Representative x = c * p + i (c < cw), its predecessor, its class (x itself: channel c's rank i is class
 * c * p + i, or i folded, where cw = 1) and its slice. */
static int ana_pred(const rstate *s, int x) { return x - x % s->p + (x % s->p + s->p - 1) % s->p; }
static double ana_slice(const rstate *s, int x) { return s->slice[s->fold ? 0 : x / s->p]; }

/* The recurrence in send order, q = 0 .. Q-1 (A of every representative's last k slices kept in a ring
 * buffer); visit(x, q, S) for each slice, which returns nonzero to stop the pass (at a break: everything
 * later starts later). Returns the latest arrival and, in *left, the latest leaving. */
typedef int (*ana_visit)(nc_run *r, int x, long q, hs_time S, void *aux);
static hs_time ana_walk(nc_run *r, ana_visit visit, void *aux, hs_time *left)
{
	rstate *s = r->st;
	int X = s->cw * s->p, k = s->k;
	hs_time *A = hs_xmalloc((size_t)X * (size_t)k * sizeof *A), *S = hs_xmalloc((size_t)X * sizeof *S);
	hs_time end = s->t0, lft = s->t0;
	for (long q = 0; q < s->Q; q++) {
		int stop = 1;
		for (int x = 0; x < X; x++) {
			hs_time a = q > 0 ? A[(size_t)x * k + (q - 1) % k] : s->t0;
			if (q >= k) {
				hs_time b = A[(size_t)ana_pred(s, x) * k + (q - k) % k];
				a = b > a ? b : a;
			}
			S[x] = a;
		}
		for (int x = 0; x < X; x++) {
			hs_time f = S[x] + s->dur[x], a = f + s->lat[x];
			A[(size_t)x * k + q % k] = a;
			end = a > end ? a : end;
			lft = f > lft ? f : lft;
			if (!visit || !visit(r, x, q, S[x], aux))
				stop = 0;
		}
		if (visit && stop)
			break;
	}
	free(A), free(S);
	if (left)
		*left = lft;
	return end;
}

static int ana_account(nc_run *r, int x, long q, hs_time S, void *aux)
{
	(void)q, (void)aux;
	rstate *s = r->st;
	hs_net_sym_carried(r->net, s->sym, x, S, S + s->dur[x], ana_slice(s, x));
	return 0;
}

static void ana_event(hs_engine *eng, void *ctx, uint64_t arg);

/* The classes of ring r are all alone (with the set just opened and nothing of it in flight): time them here.
 * Returns 0 where some class is not (the ring runs its class flows on the model). */
static int ana_start(nc_run *r)
{
	rstate *s = r->st;
	int X = s->cw * s->p;
	double *rate = hs_xmalloc((size_t)X * sizeof *rate);
	for (int x = 0; x < X; x++)
		if (!(ana_slice(s, x) > 0) || !((rate[x] = hs_net_sym_alone_rate(r->net, s->sym, x)) > 0)) {
			free(rate);
			return 0;
		}
	s->rate = rate;
	s->dur = hs_xmalloc((size_t)X * sizeof *s->dur);
	s->lat = hs_xmalloc((size_t)X * sizeof *s->lat);
	for (int x = 0; x < X; x++) {
		s->dur[x] = hs_time_for(ana_slice(s, x), rate[x]);
		s->lat[x] = s->sym->sym->c_lat[x];
		hs_net_sym_started(r->net, s->sym, x, s->Q, ana_slice(s, x));
	}
	s->ana = 1;
	s->t0 = hs_engine_now(r->net->eng);
	s->t_end = ana_walk(r, NULL, NULL, &s->t_left);
	/* the end as the event run reaches it: the last byte leaves, then arrives one latency later */
	s->ev_stage = 1;
	s->ev = hs_engine_at(r->net->eng, s->t_left, ana_event, r, 0);
	r->outstanding++;
	return 1;
}

static void ana_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)arg;
	nc_run *r = ctx;
	rstate *s = r->st;
	if (s->ev_stage == 1) {
		s->ev_stage = 2;
		s->ev = hs_engine_at(eng, s->t_end, ana_event, r, 0);
		return;
	}
	ana_walk(r, ana_account, NULL, NULL);
	s->ana = 0;
	hs_netcoll_child_cb(r, ANA_TAG);
}

/* A break at `t`: each representative's slices, replayed. */
typedef struct ana_cut {
	int x;
	double rem;
} ana_cut;
typedef struct ana_state {
	hs_time t;
	ana_cut *cut;
	int ncut;
	ana_cut *wire; /* x, and the arrival in rem's place (as hs_time) */
	hs_time *wire_at;
	int nwire;
} ana_state;

static int ana_replay(nc_run *r, int x, long q, hs_time S, void *aux)
{
	rstate *s = r->st;
	ana_state *b = aux;
	hs_time t = b->t, F = S + s->dur[x], A = F + s->lat[x];
	double bytes = ana_slice(s, x);
	if (S >= t) /* not started: the ranks start it themselves (an event at t would have, after or before) */
		return 1;
	s->sent[x]++;
	if (A <= t) { /* arrived */
		hs_net_sym_carried(r->net, s->sym, x, S, F, bytes);
		s->recvd[s->fold ? (x + 1) % s->p : x - x % s->p + (x % s->p + 1) % s->p]++;
		return 0;
	}
	s->busy[x] = 1;
	if (F <= t) { /* on the wire: arrives for every rank of the class */
		hs_net_sym_carried(r->net, s->sym, x, S, F, bytes);
		b->wire_at[b->nwire] = A;
		b->wire[b->nwire++].x = x;
		return 0;
	}
	/* in flight: cut as the model cuts a class flow (sym_break: rem = rem - rate x elapsed) */
	double rem = bytes - s->rate[x] * (double)(t - S);
	if (rem < 0)
		rem = 0;
	hs_net_sym_carried(r->net, s->sym, x, S, t, bytes - rem);
	hs_net_sym_cut_back(r->net, s->sym, x, rem);
	b->cut[b->ncut++] = (ana_cut){x, rem};
	return 0;
}

static void ana_arrive(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	nc_run *r = ctx;
	rstate *s = r->st;
	int x = (int)arg, c = s->fold ? 0 : x / s->p, i = x % s->p;
	hs_netcoll_child_cb(r, TAG(c, i) | CLS_BIT);
}

static void expand(nc_run *r);
static int ana_to_hops(nc_run *r);

/* Other traffic enters the classes' links at t while the ring times them: the state at t, then rank by rank. */
static void ana_break(nc_run *r)
{
	rstate *s = r->st;
	hs_time t = hs_engine_now(r->net->eng);
	if (t >= s->t_left)
		return; /* every byte has left: the arrivals still come, and ana_event ends the ring as it would */
	hs_engine_cancel(r->net->eng, s->ev);
	int X = s->cw * s->p;
	ana_state b = {t, hs_xmalloc((size_t)X * sizeof(ana_cut)), 0, hs_xmalloc((size_t)X * sizeof(ana_cut)),
		       hs_xmalloc((size_t)X * sizeof(hs_time)), 0};
	ana_walk(r, ana_replay, &b, NULL);
	for (int x = 0; x < X; x++) /* the slices counted at the start that never started as the class's */
		if (s->sent[x] < s->Q)
			hs_net_sym_started(r->net, s->sym, x, -(s->Q - s->sent[x]), ana_slice(s, x));
	s->ana = 0;
	expand(r);
	for (int j = 0; j < b.nwire; j++) {
		r->outstanding++;
		hs_engine_at(r->net->eng, b.wire_at[j], ana_arrive, r, (uint64_t)b.wire[j].x);
	}
	for (int j = 0; j < b.ncut; j++) {
		int x = b.cut[j].x, c = s->fold ? 0 : x / s->p, i = x % s->p;
		int c0 = s->fold ? 0 : c, c1 = s->fold ? s->C : c + 1;
		for (int cc = c0; cc < c1; cc++)
			for (int m = i; m < r->n; m += s->p)
				send_hop(r, s, cc, m, b.cut[j].rem, TAG(cc, m));
	}
	r->outstanding--; /* the ring's own end, which ana_event would have taken */
	for (int c = 0; c < s->C; c++)
		for (int m = 0; m < r->n; m++)
			try_send(r, c, m);
	free(b.cut), free(b.wire), free(b.wire_at);
}

/* Other traffic entered the ring's links: each representative's state becomes every rank's of its class. */
static void sym_broken(void *ctx)
{
	nc_run *r = ctx;
	rstate *s = r->st;
	if (s->ana) {
		if (hs_engine_now(r->net->eng) < s->t_left && ana_to_hops(r))
			return;
		ana_break(r);
		return;
	}
	expand(r);
}

static void expand(nc_run *r)
{
	rstate *s = r->st;
	int n = r->n, C = s->C;
	long *sent = hs_xmalloc((size_t)C * n * sizeof *sent), *recvd = hs_xmalloc((size_t)C * n * sizeof *recvd);
	char *busy = hs_xmalloc((size_t)C * n);
	for (int c = 0; c < C; c++)
		for (int k = 0; k < n; k++) {
			size_t x = (size_t)c * n + k, y = (size_t)(s->fold ? 0 : c) * s->p + k % s->p;
			sent[x] = s->sent[y], recvd[x] = s->recvd[y], busy[x] = s->busy[y];
		}
	free(s->sent), free(s->recvd), free(s->busy);
	s->sent = sent, s->recvd = recvd, s->busy = busy;
	s->w = n;
	s->cw = C;
	if (!s->xid)
		s->xid = hs_xmalloc((size_t)C * n * sizeof *s->xid);
	for (size_t x = 0; x < (size_t)C * n; x++)
		s->xid[x] = -1; /* the class transfers in flight are no member's (their cuts are) */
	/* members of a re-formed class that arrived one by one before the last of them: their arrivals are in
	 * (where the class's state, copied above, still waits for them) */
	int narr = 0;
	for (size_t x = 0; s->pend && x < (size_t)C * n; x++)
		if (s->parr[x]) {
			size_t c = x / (size_t)n, k = x % (size_t)n;
			s->busy[x] = 0;
			s->recvd[c * n + (k + 1) % n]++;
			narr++;
		}
	free(s->pend);
	s->pend = NULL;
	for (size_t x = 0; narr && x < (size_t)C * n; x++)
		if (s->parr[x]) {
			int c = (int)(x / (size_t)n), k = (int)(x % (size_t)n);
			kick(r, s, c, k);
			kick(r, s, c, (k + 1) % n);
		}
	free(s->parr);
	s->parr = NULL;
}

/* The pump, once the instant's arrivals are in: the classes form again where
 *   (a) every rank is in the state of its class's representative (sent, received, busy; across channels
 *       when folded), with something left to send;
 *   (b) the busy members of each class are alike in flight: all carried, with one number of bytes left, or
 *       all past their last byte, arriving at one instant (one finish time, and a class has one latency);
 *   (c) the classes' links carry no other flow (sym_fits, before anything is taken; sym_open checks it too).
 * Then the max-min problem on those links is the one the classes were found for, in a state that they can
 * carry: the carried members are taken off the network with what they had left (hs_net_xtake) and go on as
 * one class flow of the same bytes, the others arrive as they would and count towards their class's arrival
 * (pend), and from here on the classes stand for their members as exactly as they did before the break.
 * "One number of bytes left" is equality, not a tolerance: members whose rates differed in the last bits
 * (their links summed in another order) keep the ring rank by rank. Returns 1 with the state compressed to
 * the representatives. */
static int reform(nc_run *r, rstate *s)
{
	if (!s->sym || s->sym->live)
		return 0;
	int n = r->n, C = s->C, p = s->p, cw = s->fold ? 1 : C, more = 0;
	for (int c = 0; c < C; c++)
		for (int k = 0; k < n; k++) {
			size_t x = (size_t)c * n + k, y = (size_t)(s->fold ? 0 : c) * n + k % p;
			if (s->sent[x] != s->sent[y] || s->recvd[x] != s->recvd[y] || s->busy[x] != s->busy[y])
				return 0;
			more |= s->sent[x] < s->Q;
		}
	if (!more)
		return 0;
	int ncl = cw * p, *kind = hs_xmalloc((size_t)ncl * sizeof *kind), *take = NULL, ok = 1;
	double *rem = hs_xmalloc((size_t)ncl * sizeof *rem);
	size_t ntake = 0, captake = 0;
	for (int c0 = 0; c0 < cw && ok; c0++)
		for (int i = 0; i < p && ok; i++) {
			int y = c0 * p + i;
			kind[y] = -1;
			if (!s->busy[(size_t)c0 * n + i])
				continue;
			hs_time fin0 = 0;
			for (int cc = c0; cc < (s->fold ? C : c0 + 1) && ok; cc++)
				for (int k = i; k < n && ok; k += p) {
					double rm = 0;
					hs_time fin;
					int st = hs_net_xpeek(r->net, s->xid[(size_t)cc * n + k], &rm, &fin);
					if (st < 0 || (kind[y] >= 0 && (st != kind[y] || fin != fin0 || (st == 1 && rm != rem[y]))))
						ok = 0;
					kind[y] = st, fin0 = fin, rem[y] = rm;
					if (ok && st == 1) {
						hs_xgrow(&take, &captake, ntake + 1, sizeof *take);
						take[ntake++] = s->xid[(size_t)cc * n + k];
					}
				}
		}
	hs_symrun *ns = NULL;
	if (ok && ntake && !hs_net_sym_fits(r->net, s->sym->memo, take, (int)ntake))
		ok = 0;
	if (ok) {
		for (size_t q = 0; q < ntake; q++)
			hs_net_xtake(r->net, take[q]);
		r->outstanding -= (long)ntake;
		ns = hs_net_sym_reopen(r->net, s->sym, sym_broken, sym_cut, r);
		assert((ns || !ntake) && "sym_fits said the classes' links were free");
	}
	free(take);
	if (!ns) {
		free(kind), free(rem);
		return 0;
	}
	hs_net_sym_close(r->net, s->sym); /* the broken set: its classes' bytes onto their members' links */
	s->sym = ns;
	for (int c = 0; c < cw; c++)
		for (int i = 0; i < p; i++) {
			size_t x = (size_t)c * p + i, y = (size_t)c * n + i;
			s->sent[x] = s->sent[y], s->recvd[x] = s->recvd[y], s->busy[x] = s->busy[y];
		}
	s->w = p;
	s->cw = cw;
	s->pend = hs_xcalloc((size_t)ncl, sizeof *s->pend);
	free(s->parr);
	s->parr = hs_xcalloc((size_t)C * n, 1);
	for (int c = 0; c < cw; c++)
		for (int i = 0; i < p; i++) {
			int y = c * p + i;
			if (kind[y] == 0) /* past their last byte: each arrives on its own */
				s->pend[y] = (s->fold ? C : 1) * (n / p);
			else if (kind[y] == 1) { /* carried: on as one class flow */
				r->outstanding++;
				hs_net_sym_xfer(r->net, s->sym, s->fold ? i : c * p + i, rem[y], hs_netcoll_sent_cb,
						hs_netcoll_child_cb, r, TAG(c, i) | CLS_BIT);
			}
		}
	free(kind), free(rem);
	return 1;
}

/* A class transfer cut by the break: each rank of the class sends what is left of its slice on its own. */
static void sym_cut(void *ctx, uint64_t tag, double rem)
{
	nc_run *r = ctx;
	rstate *s = r->st;
	tag &= ~CLS_BIT;
	int c = (int)(tag >> 32), i = (int)(tag & 0xffffffffu);
	int c0 = s->fold ? 0 : c, c1 = s->fold ? s->C : c + 1;
	for (int cc = c0; cc < c1; cc++)
		for (int k = i; k < r->n; k += s->p)
			send_hop(r, s, cc, k, rem, TAG(cc, k));
	r->outstanding--; /* the class transfer itself never arrives; its members were counted above */
}

/* The classes of a ring (not a chain): the smallest divisor p of n such that rotating every channel's ring by
 * p ranks maps the routes onto each other (hs_net_sym_find checks it). The routes' hashes rule out most
 * divisors cheaply; a few candidates at most are checked in full. Remembered by the ranks, channels and rails
 * (hs_net_memo_get): the result for a group is found once per network. Returns the memo entry (value p; p = n,
 * no sym: no classes; -p: classes of p ranks with the channels folded), or NULL. */
static hs_symmemo *find_classes(nc_run *r, rstate *s)
{
	int n = r->n, C = s->C;
	int nkey = 2 + C + n;
	int *key = hs_xmalloc((size_t)nkey * sizeof *key);
	key[0] = n, key[1] = C;
	for (int c = 0; c < C; c++)
		key[2 + c] = nc_rail(r, c, C);
	for (int i = 0; i < n; i++)
		key[2 + C + i] = r->rk[i];
	hs_symmemo *e = hs_net_memo_get(r->net, key, nkey);
	if (e) {
		free(key);
		return e;
	}
	size_t M = (size_t)C * n;
	const hs_route **rt = hs_xmalloc(M * sizeof *rt);
	uint64_t *h = hs_xmalloc(M * sizeof *h);
	int *perm = hs_xmalloc(M * sizeof *perm), *chperm = hs_xmalloc(M * sizeof *chperm);
	int ok = 1, found = n, fold = 0;
	hs_netsym *sym = NULL;
	for (int c = 0; c < C && ok; c++)
		for (int i = 0; i < n && ok; i++) {
			hs_err err;
			hs_err_clear(&err);
			int rail = nc_rail(r, c, C), va = dev(r, s, c, i), vb = dev(r, s, c, i + 1);
			if (rail == NC_ALL_RAILS)
				rail = -1;
			else if (rail < 0)
				rail = hs_net_home_rail(r->net, va);
			const hs_route *x = va == vb ? NULL : hs_route_get(r->net->router, va, vb, rail, &err);
			if (!x) {
				ok = 0;
				break;
			}
			rt[(size_t)c * n + i] = x;
			h[(size_t)c * n + i] = hs_netsym_route_hash(hs_net_topo(r->net), x);
		}
	/* The channels alike: channel c's rank i onto channel c + 1's rank i. Where every node's ring is rotated
	 * to its NIC's device (hs_coll_ring_channel_order), that is the fabric's rotation of every node's devices
	 * and NICs by one, which a rail-optimised fabric bears; the hashes say whether to try it. Slices must be
	 * equal too (they are where the routes are alike: the shares follow the routes' bottlenecks). */
	int alike = C > 1;
	for (size_t x = 0; x < M && alike; x++)
		alike = h[x] == h[(x + (size_t)n) % M] && s->slice[x / (size_t)n] == s->slice[0];
	for (size_t x = 0; x < M; x++)
		chperm[x] = (int)((x + (size_t)n) % M);
	for (int p = 1, tries = 0; ok && p < n && tries < 4; p++) {
		if (n % p)
			continue;
		int periodic = 1;
		for (size_t x = 0; x < M && periodic; x++) {
			size_t c = x / (size_t)n, i = x % (size_t)n;
			periodic = h[x] == h[c * n + (i + (size_t)p) % n];
		}
		if (!periodic)
			continue;
		tries++;
		for (size_t x = 0; x < M; x++) {
			size_t c = x / (size_t)n, i = x % (size_t)n;
			perm[x] = (int)(c * n + (i + (size_t)p) % n);
		}
		if (alike) { /* the ring's rotation and the channels' together, or the ring's alone */
			const int *gen[2] = {perm, chperm};
			int pass[2];
			sym = hs_net_sym_find_group(r->net, rt, gen, 2, (int)M, pass);
			if (sym && pass[0]) { /* with pass[1] 0 the classes are the ring's rotation's alone */
				found = p, fold = pass[1];
				break;
			}
			if (sym)
				hs_netsym_free(sym), free(sym), sym = NULL;
			continue;
		}
		if ((sym = hs_net_sym_find(r->net, rt, perm, (int)M))) {
			found = p;
			break;
		}
	}
	/* classes are numbered by their lowest member: channel c's rank i < p is class c * p + i, or i where
	 * the channels are folded (channel 0's rank i is the lowest of its class) */
	for (int c = 0; sym && c < C; c++)
		for (int i = 0; i < found; i++)
			assert(sym->cls_of[(size_t)c * n + i] == (fold ? i : c * found + i));
	free(h);
	if (!sym) {
		free(rt);
		rt = NULL;
	}
	e = hs_net_memo_put(r->net, key, nkey, fold ? -found : found, sym, rt);
	free(key);
	/* the generators, for sets that share the ring's links (sim/net/netcoll_direct.c): the rotation by found
	 * ranks (perm holds it: the loop stopped there) and the channels' (chperm) where folded, as member
	 * permutations and as maps of the devices (channel 0's rank i onto its rank i + found, onto channel 1's
	 * rank i); the joint check verifies them, so a map that is no automorphism is refused, never assumed */
	if (e && sym) {
		int G = fold ? 2 : 1;
		int **gmem = hs_xmalloc((size_t)G * sizeof *gmem), **gdev = hs_xmalloc((size_t)G * sizeof *gdev);
		int *dv = hs_xmalloc((size_t)n * sizeof *dv);
		gmem[0] = perm, perm = NULL;
		if (fold)
			gmem[1] = chperm, chperm = NULL;
		for (int g = 0; g < G; g++)
			gdev[g] = hs_xmalloc((size_t)n * sizeof *gdev[g]);
		for (int i = 0; i < n; i++) {
			dv[i] = dev(r, s, 0, i);
			gdev[0][i] = dev(r, s, 0, i + found);
			if (fold)
				gdev[1][i] = dev(r, s, 1, i);
		}
		hs_net_memo_gens(e, G, gmem, n, dv, gdev);
	}
	free(perm), free(chperm);
	return e;
}

/* Every hop's route (0 where one is a send to oneself). */
static int all_routes(nc_run *r, rstate *s)
{
	for (int c = 0; c < s->C; c++)
		for (int i = 0; i < r->n; i++) {
			size_t h = (size_t)c * r->n + i;
			s->rt[h] = hs_netcoll_route_v(r, dev(r, s, c, i), dev(r, s, c, i + 1), nc_rail(r, c, s->C));
			s->rtok[h] = 1;
			if (!s->rt[h])
				return 0;
		}
	return 1;
}

/* The ring's state, but its order, slices and routes where `handed` (sim/net/netcoll_ring_hops.c has them). */
static void rs_free(rstate *s, int handed)
{
	free(s->rate), free(s->dur), free(s->lat);
	free(s->sent), free(s->recvd), free(s->busy);
	free(s->todo), free(s->xid), free(s->pend), free(s->parr);
	free(s->rtok);
	if (!handed)
		free(s->slice), free(s->ord), free(s->rt);
	free(s);
}

/* No classes: the hops alone on their links timed by the ring (sim/net/netcoll_ring_hops.c), which takes the
 * ring's order, slices and routes; 1 when it runs the ring from here. */
static int hops(nc_run *r, rstate *s)
{
	if (!r->net->symmetry || !r->net->ring_hops || !all_routes(r, s) ||
	    !hs_ring_hops_start(r, s->C, s->k, s->Q, s->ord, s->slice, s->rt))
		return 0;
	rs_free(s, 1);
	return 1;
}

/* A ring timing its classes (ana) whose set broke now, before anything of it was seen outside: on as a ring
 * of hops timed from its start, where every hop can be held (the flow that broke the set then breaks only the
 * hops it enters), instead of rank by rank. The classes' rate alone is their members' (each class alone on
 * its links), so the timeline is the one the classes had. */
static int ana_to_hops(nc_run *r)
{
	rstate *s = r->st;
	if (!r->net->ring_hops || !all_routes(r, s) ||
	    !hs_ring_hops_resume(r, s->C, s->k, s->Q, s->ord, s->slice, s->rt, s->t0))
		return 0;
	hs_engine_cancel(r->net->eng, s->ev);
	r->outstanding--; /* the classes' end, which the hops' own holds from here */
	for (int x = 0; x < s->cw * s->p; x++)
		hs_net_sym_started(r->net, s->sym, x, -s->Q, ana_slice(s, x));
	hs_net_sym_close(r->net, s->sym);
	rs_free(s, 1);
	return 1;
}

static void start(nc_run *r)
{
	hs_net *net = r->net;
	rstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	int n = r->n, C = net->channels;
	s->C = C;
	s->chain = r->op == HS_COLL_BROADCAST || r->op == HS_COLL_REDUCE;
	s->ord = hs_xmalloc((size_t)C * n * sizeof *s->ord);
	s->rt = hs_xmalloc((size_t)C * n * sizeof *s->rt);
	s->rtok = hs_xcalloc((size_t)C * n, 1);
	for (int c = 0; c < C; c++) { /* a chain keeps its order from the root */
		int rail = C > 1 && !s->chain ? nc_rail(r, c, C) : -1;
		hs_coll_ring_channel_order(net->c, r->rk, n, rail, s->ord + (size_t)c * n);
	}
	int steps = r->op == HS_COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
	/* channel shares: proportional to each channel ring's (or chain's) bottleneck */
	double *w = hs_xmalloc((size_t)C * sizeof *w), sum = 0;
	for (int c = 0; c < C; c++) {
		double b = 1e300;
		if (net->split && C > 1)
			for (int i = 0; i < (s->chain ? n - 1 : n); i++) {
				int rail = nc_rail(r, c, C);
				hs_err err;
				hs_err_clear(&err);
				const hs_route *rt = hs_route_get(net->router, dev(r, s, c, i), dev(r, s, c, i + 1),
								  rail == NC_ALL_RAILS ? -1 : rail, &err);
				double x = rt ? rt->bw : 1e300;
				if (x < b)
					b = x;
			}
		w[c] = net->split && C > 1 ? b : 1;
		sum += w[c];
	}
	s->slice = hs_xmalloc((size_t)C * sizeof *s->slice);
	double maxshare = 0;
	for (int c = 0; c < C; c++)
		if (r->S * w[c] / sum > maxshare)
			maxshare = r->S * w[c] / sum;
	if (s->chain) {
		double ch = net->chunk > 0 ? net->chunk : CHAIN_CHUNK;
		s->Q = (long)ceil(maxshare / ch);
		if (s->Q < 1)
			s->Q = 1;
		for (int c = 0; c < C; c++)
			s->slice[c] = r->S * w[c] / sum / s->Q;
	} else {
		s->k = net->chunk > 0 ? (int)ceil(maxshare / n / net->chunk) : 1;
		if (s->k < 1)
			s->k = 1;
		s->Q = (long)steps * s->k;
		for (int c = 0; c < C; c++)
			s->slice[c] = r->S * w[c] / sum / n / s->k;
	}
	free(w);
	s->w = s->p = n;
	s->cw = C;
	if (!s->chain && n > 2 && net->symmetry && net->ops->sym_open) {
		hs_symmemo *e = find_classes(r, s);
		int equal = 1; /* folded channels carry equal slices (alike routes give alike shares) */
		for (int c = 1; c < C; c++)
			equal &= s->slice[c] == s->slice[0];
		if (e && e->sym && (e->value > 0 || equal) && (s->sym = hs_net_sym_open(net, e, sym_broken, sym_cut, r))) {
			s->fold = e->value < 0;
			s->p = s->w = s->fold ? -e->value : e->value;
			s->cw = s->fold ? 1 : C;
		}
	}
	if (!s->sym && !s->chain && hops(r, s))
		return;
	s->sent = hs_xcalloc((size_t)C * s->w, sizeof *s->sent);
	s->recvd = hs_xcalloc((size_t)C * s->w, sizeof *s->recvd);
	s->busy = hs_xcalloc((size_t)C * s->w, 1);
	if (s->sym && ana_start(r))
		return;
	for (int c = 0; c < s->cw; c++)
		for (int i = 0; i < s->w; i++)
			try_send(r, c, i);
}

static void sfree(nc_run *r)
{
	rstate *s = r->st;
	if (!s)
		return;
	hs_net_sym_close(r->net, s->sym);
	rs_free(s, 0);
}

const nc_algo hs_nc_ring = {"ring", start, on_done, sfree, on_sent};
