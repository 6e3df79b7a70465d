/* Inside sim/net: the state of a ring whose hops are timed by the ring (sim/net/netcoll_ring_hops.c), shared with
 * its bundles (sim/net/ring_bundle.c). Not a public header: its names are the two files' own. */
#ifndef HS_RING_HOPS_STATE_H
#define HS_RING_HOPS_STATE_H

#include "sim/net/netcoll_impl.h"
#include "sim/net/ring_run.h"

/* A deque of times with absolute indices: element i (base <= i < base + len) at t[(off + i - base) & mask]. */
typedef struct tq {
	hs_time *t;
	long base;
	int off, len, cap;
} tq;

/* Hop x's record: what setting one of its slices reads and writes, together (a 16k-GPU step sets 35M). */
typedef struct hop {
	hs_time tfree;        /* its connection free: its last slice's arrival (timed, or a flow's, heard) */
	hs_time dl;           /* a timed slice's time alone plus the route latency (start to arrival) */
	hs_time dur;          /* a timed slice's time alone */
	long sent;            /* slices whose start is set */
	long acc;             /* timed slices accounted (arrived), whose bytes reach the links at the end */
	int succ;             /* the rank it sends to */
	int hold;             /* its hold while the ring times it, -1: its slices are flows */
	char busy;            /* a flow hop's slice (or its pending start) not yet arrived */
	double slice;         /* bytes per slice (its channel's) */
	tq in;                /* arrival times at x of its predecessor's slices, by slice number */
	double rate;
	hs_event_id ev;       /* a flow hop's pending start */
	int run;              /* the run it is timed in (-1: none) */
	int bnd;              /* the bundle it is timed in (-1: none) */
	int bpos;             /* its place among the bundle's members */
	/* its slice in flight in its bundle: bytes, start, bytes left at bt_upd, rate since then (0: not rated
	 * yet), finish at that rate (rated: bq) */
	double bbytes, brem, brate;
	hs_time bs, bt_upd, bfin;
	char bq;
} hop;

/* Hops of one ring that share links with each other and with nothing else: the channels' hops between two
 * devices of a node cross the same pair of scale-up ports (7 of a node's 8 channels on each such pair, and the
 * eighth's node crossing, which reaches its rail's NIC through them). One hold keeps every other flow off
 * their links, and their slices in flight there share them as max-min shares those flows alone (the model's
 * fill, hs_net_fill). Timed here by events: a slice's start, the least finish, its arrival a route latency
 * later, as the flow model times flows (sim/net/ring_bundle.c). */
typedef struct bundle {
	int hold;             /* -1: broken (until taken again) or released */
	int done;             /* released: every member has sent every slice */
	int nmem, nact;
	int *mem;             /* [nmem] its hops */
	int *act;             /* [nmem] those with a slice in flight, in the order they started */
	int *links, nlinks;   /* every link of its hops' routes, ascending (the hold's) */
	uint64_t *mask;       /* [nmem] the links of each member's route, as bits of links[] (all where > 64) */
	const hs_route **rts; /* [nmem] scratch: the routes in flight */
	double *rates;        /* [nmem] scratch: their rates */
	/* the rates of the sets in flight met so far (a set: bits of the members' places; a bundle has at most 64
	 * members), each nmem rates by place: a set recurs as the channels' slices come and go */
	uint64_t *mkey;       /* [2^nmem] set kept (up to BDIRECT members), or [BMEMO] the set kept there, 0: empty */
	double *mrate;        /* [2^nmem or BMEMO + 1][nmem], the last of BMEMO + 1 a scratch entry */
	int nmemo;
	int dirty;            /* a slice started and is not rated yet (rate_ev pending) */
	hs_event_id fin_ev, rate_ev;
	hs_time fin_at;
} bundle;

/* Consecutive held hops of one channel timed by their closed form (sim/net/ring_run.h) while no flow has
 * entered the ring's holds: a chain fed by the flow hop before it, or a whole channel, a cycle. */
typedef struct hrun {
	hs_ring_run *rr;
	int first, m;         /* its first hop and how many (the channel's next ones, wrapping) */
	int cyclic, done;
	long counted;         /* slices set that the network has been told of (hs_net_timed_started) */
} hrun;

typedef struct hops {
	int C, n, k;
	long Q;
	int X;                /* C * n ranks: channel c's rank i is x = c * n + i, its hop to c * n + (i + 1) % n */
	int *ord;             /* [X] devices */
	double *slice;        /* [C] bytes per slice */
	const hs_route **rt;  /* [X] hop x's route */
	hop *hp;              /* [X] */
	int *work;            /* ranks to try */
	size_t nwork, capwork;
	long ndone;           /* ranks with all Q slices set */
	hs_time t0;
	hs_event_id end_ev;   /* the last timed arrival, once every slice is set */
	int end_pending, ended, running;
	int resuming;         /* run() sets slices from `clock` (a ring resumed from its start, all timed) */
	hs_time clock;
	int series;           /* the network keeps a timeline: each timed slice spread over its own interval */
	hrun *runs;           /* [nruns]: the held hops (none where series); a run split leaves rr NULL */
	int nruns;
	bundle *bd;           /* [nbd] */
	int nbd;
} hops;

#define END_TAG ((uint64_t)1 << 62)
#define BUNDLE_TAG ((uint64_t)1 << 40) /* a broken hold's: bundle BUNDLE_TAG | b, else hop x's */

/* netcoll_ring_hops.c: hop x's slice of `bytes` as a flow now; a broken hold's callback (arg: BUNDLE_TAG | b, or
 * hop x). */
void hs_ring_hops_flow(nc_run *r, hops *h, int x, double bytes);
void hs_ring_hops_broken(void *ctx, uint64_t arg);

/* ring_bundle.c. The shared hops (shared[x], comp[x] the lowest hop of the links' component x is in) as
 * bundles, held where their links can be; returns the hops bundled. */
int hs_ring_bundles_form(nc_run *r, hops *h, const int *comp, const char *shared);
/* Hop x's slice of `bytes` starts now: in its bundle (held again first where it was broken and its links are
 * free), or as a flow. */
void hs_ring_hop_send(nc_run *r, hops *h, int x, double bytes);
/* A flow entered bundle b's links now (the model released its hold). */
void hs_ring_bundle_break(nc_run *r, hops *h, int b);
/* Bundle b's hold goes back if none of its hops has a slice to send. */
void hs_ring_bundle_release(nc_run *r, hops *h, int b);
/* Every bundle's holds and memory (its slices have all arrived). */
void hs_ring_bundles_free(nc_run *r, hops *h);

#endif
