/* Inside sim/net: the max-min solver of the flow network model (sim/net/net_flow.c). Not a public header.
 *
 * A flow crosses its route's links, putting coefficient c (its share of the bytes on that link) times its
 * rate on each; a link's flows together stay within its capacity. Rates come from progressive filling
 * (Bertsekas & Gallager, Data Networks, 6.5.2): raise every unfrozen flow's rate together until a link
 * saturates, freeze the flows on it, repeat.
 *
 * Incremental and exact: adding or removing a flow marks its links dirty. A recompute takes the flows on
 * dirty links (set A; after removals only, those of them left without a bottleneck; on a link with capacity
 * to spare, only its new flows), holds every other flow at its rate (their load is subtracted from link
 * capacities), and fills A. Then every flow that this left without a bottleneck (a saturated link where none is faster:
 * the test of a max-min allocation) joins A, and A is filled again, until none is left (maxmin.c): the rates
 * are those of a full recompute, to rounding, and the work is the part of the network a change reaches.
 * (Before, A was widened by the flows sharing a link with a moved rate for up to 4 rounds and the rest kept
 * their rates: single flows were found 12-25% off the exact solution, issue 22. `exact = 0` keeps that
 * solver, for the bench that prices exactness.)
 *
 * A recompute runs round by round (hs_maxmin_recompute, for the flow model and the solo runs alike):
 *
 *	while ((n = hs_maxmin_round(mm)) > 0)
 *		for (a = 0; a < n; a++)
 *			if (hs_maxmin_settle(mm, &mm->fl[mm->aff[a]], ...))
 *				the flow's rate moved: new finish time
 *
 * The solver owns the links and the flow records; the model names flows by their index in mm->fl, keeps its
 * own per-flow state beside them, and keeps a few hot fields in the records themselves (hs_maxmin_flow). The
 * structures are shared here, and the helpers the model's pass over A calls are inline: that pass (settle,
 * bring the flow up to now, new finish time) makes no call per flow. */
#ifndef HS_MAXMIN_H
#define HS_MAXMIN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"

/* Relative rate change below which a flow counts as unchanged (double rounding). */
#define HS_MAXMIN_RATE_EPS 1e-9

typedef struct hs_maxmin_ent {
	int f; /* flow */
	int i; /* index in the flow's route */
} hs_maxmin_ent;

/* A link's load, what its flows put on it (rate x coefficient), is kept as an exact sum of integers: each
 * flow's part rounded to a quantum of the link's bandwidth / 2^50 (about 1e-15 of it; QUANT_BITS), so
 * that sum never drifts and does not depend on the order flows came and went. What flows outside a
 * recompute's set A use is then the load less A's parts, without visiting the other flows: a link of a
 * 64-rank all-to-all carries hundreds of flows, a few of them in A, and that visit was half the run time.
 * Headroom: a load up to 2^12 times the bandwidth fits (a valid allocation stays within 1). */
#define HS_MAXMIN_QUANT_BITS 50

/* A link as every flow's start, end and settle touches it: one cache line (the array is aligned to 64
 * bytes). The recompute's scratch lives apart (hs_maxmin_lscr): when it shared the record, a link was 152
 * bytes over two or three lines, and a 16,384-GPU fat-tree's 165k links (25 MB) left a hashed-ECMP step's
 * flow starts waiting on memory for most of their time (issue 22). */
typedef struct hs_maxmin_link {
	hs_maxmin_ent *e;
	int n, cap;
	int twin;       /* >= 0: carries exactly the flows of that link, at its bandwidth (the model's find_twins
	                 * sets it); no flow enters this one */
	int dirty;      /* 0; 1 dirty; 2 dirty by a removal (maxmin.c, the set A after arrivals) */
	double bw;      /* bytes/ps */
	double scale;   /* quanta per byte/ps: 2^QUANT_BITS / bw rounded to a power of 2 (exact inverse) */
	int64_t load;   /* sum over its flows of part() */
	int64_t sat;    /* load from which the link counts as saturated: bw (1 - 1e-6) */
	double ub;      /* >= the rate of every flow on the link: raised as rates are taken (hs_maxmin_settle),
	                 * made exact when check (a) visits the link (maxmin.c) */
} hs_maxmin_link;

_Static_assert(sizeof(hs_maxmin_link) == 64, "a link is one cache line");

/* A link's recompute scratch (maxmin.c), beside mm->lk in mm->lx. */
typedef struct hs_maxmin_lscr {
	double res, w;
	int64_t aload;  /* sum of part() over its flows in A */
	int hpos;       /* -2: not involved; -1: involved, not in heap; >= 0 heap position */
	int na;         /* entries of flows in A */
	/* exactness check scratch */
	double bx;      /* share this link froze A's flows at, when it carries others too; -1 */
	int64_t anew;   /* sum of part() over A at A's new rates */
	double amo, amn; /* fastest flow of A before, after */
	double mrate;   /* fastest flow, at check mstamp */
	int mstamp, chg;
} hs_maxmin_lscr;

/* One link of a flow's route, copied from the route with the flow's place in that link's entries: the loops
 * over a flow's links read one array instead of the route's two and a third of positions. */
typedef struct hs_maxmin_hop {
	int l;       /* link */
	int pos;     /* the flow's entry in the link's list */
	double coef; /* fraction of the flow's bytes on the link */
} hs_maxmin_hop;

/* Hops kept in the flow's own record: an inter-node flow of a fat-tree or rail-optimised cluster has 4 to
 * 6 after twins (the model's find_twins); a longer route (one split over rails) keeps its hops in `ext`. */
#define HS_MAXMIN_NHOP_IN 8

/* What a recompute reads and writes of a flow: 64 bytes, then its hops, on cache lines of their own (the
 * flow array is aligned to 64 bytes). The hops were a separate allocation, a cache miss of their own each
 * time a flow was visited or an entry of a link moved. The rest lives apart (the model's fcold).
 * rem, t_upd and t_fin are the model's, kept here because its loop over A reads them with the rates (its finish
 * heap positions are its own array). */
typedef struct hs_maxmin_flow {
	double rem, rate;
	double old;   /* rate before this round */
	hs_time t_upd, t_fin;
	hs_maxmin_hop *ext; /* [xcap] hops when nl > NHOP_IN */
	int nl, xcap;
	int mark;     /* 0 not in A; 1 in A, unfrozen; 2 in A, frozen */
	hs_maxmin_hop in[HS_MAXMIN_NHOP_IN];
} hs_maxmin_flow;

_Static_assert(offsetof(hs_maxmin_flow, in) == 64, "a flow's hot fields fill one cache line");

static inline hs_maxmin_hop *hs_maxmin_hops(hs_maxmin_flow *f)
{
	return f->nl <= HS_MAXMIN_NHOP_IN ? f->in : f->ext;
}

typedef struct hs_maxmin {
	hs_maxmin_link *lk; /* aligned to 64 bytes inside lkraw */
	hs_maxmin_lscr *lx; /* [nlk] */
	void *lkraw;
	int nlk;
	hs_maxmin_flow *fl; /* aligned to 64 bytes inside flraw */
	void *flraw;
	size_t nfl, capfl;
	int *dirty, ndirty;
	int *aff;           /* set A of the round */
	size_t naff, capaff;
	int *inv;           /* [nlk] links involved in a round */
	size_t ninv;
	struct hs_maxmin_lhent *lh; /* link heap (progressive filling) */
	int nlh;
	int *bn, nbn;       /* [nlk] bottlenecks of a fill that carry flows outside A */
	int round;          /* rounds run in this recompute */
	int vstamp;         /* exactness checks run */
	int exact;          /* 1 (default): exact; 0: the old propagation, HS_MAXMIN_LEGACY_ROUNDS rounds */
	int added;          /* a flow entered since the last recompute (hs_maxmin_add) */
	uint64_t quiet;     /* recomputes after removals that found no flow without a bottleneck: no fill (tests) */
	uint64_t grows;     /* times a check widened A, over the solver's life (bench) */
} hs_maxmin;

/* Rounds of the old propagation (exact = 0): each widened A by the flows sharing a link with a moved rate. */
#define HS_MAXMIN_LEGACY_ROUNDS 4

/* nlk links, each of bandwidth 0 until hs_maxmin_set_bw; no flows. */
void hs_maxmin_init(hs_maxmin *mm, int nlk);
void hs_maxmin_set_bw(hs_maxmin *mm, int l, double bw);
void hs_maxmin_free(hs_maxmin *mm);

/* A new flow record, at index mm->nfl (which grows by one); mm->fl may move. */
int hs_maxmin_new_flow(hs_maxmin *mm);
/* Flow id (a record not on any link) enters links link[0..n) (ascending), with coefficients coef, at rate 0;
 * its links are dirty. A twin link is left out. */
void hs_maxmin_add(hs_maxmin *mm, int id, int n, const int *link, const double *coef);
/* The same for a flow that already runs at `rate`, the rate it would have been given alone on these links
 * (the model timed it outside the solver while nothing else crossed them): it enters as if it had been added
 * at its start and rated then, its rate taken on each link (load and bound, as hs_maxmin_settle takes one)
 * and no link marked dirty, so the solver is left as it would be had the flow been in it all along. */
void hs_maxmin_add_rated(hs_maxmin *mm, int id, int n, const int *link, const double *coef, double rate);
/* Flow id leaves its links; the saturated ones among them are dirty. */
void hs_maxmin_remove(hs_maxmin *mm, int id);

/* The next round of a recompute: fills the flows of the dirty links and those the exactness check adds, set
 * A, mm->aff[0..n), returning n. Each flow of A has its rate before the round in old and its new one in rate;
 * the caller then calls hs_maxmin_settle for each, in order, before the next round. Returns 0 when the
 * recompute is over (exact: after one round; no link is dirty; or the old propagation's rounds are spent). */
size_t hs_maxmin_round(hs_maxmin *mm);

struct hs_finq;
/* A whole recompute at `now`: the rounds, and each flow of a round's set brought up to now at its old rate
 * (rem, t_upd) and, where its rate moved (hs_maxmin_settle), its new finish time t_fin put in fq (the flow
 * model's and a solo run's finish queue, sim/net/finq.h). Returns how many flows it left without a finite
 * finish (t_fin HS_TIME_MAX: a rate too low for the bytes left). */
size_t hs_maxmin_recompute(hs_maxmin *mm, struct hs_finq *fq, hs_time now);

/* A flow's part of a link's load, in quanta, rounded to nearest (inline, where llrint is a call). */
static inline int64_t hs_maxmin_part(const hs_maxmin_link *k, double rate, double coef)
{
	return (int64_t)(rate * coef * k->scale + 0.5);
}

static inline void hs_maxmin_mark_dirty(hs_maxmin *mm, int l)
{
	if (!mm->lk[l].dirty) {
		mm->lk[l].dirty = 1;
		mm->dirty[mm->ndirty++] = l;
	}
}

/* Whether a flow of A takes the rate the round gave it (1: the caller sets its new finish time) or keeps
 * its old one (0). timed: the flow has a finish time, set with its old rate. Without exactness, the links
 * where a moved rate meets flows outside A are dirty for the next round. */
static inline int hs_maxmin_settle(hs_maxmin *mm, hs_maxmin_flow *f, int timed)
{
	f->mark = 0;
	const hs_maxmin_hop *h = hs_maxmin_hops(f);
	/* Same rate, to RATE_EPS: the flow keeps its rate and the finish time set with it, and nothing
	 * moves. The filling reaches a share by other sums when other flows are in A, so a rate that
	 * has not moved comes back a few ulps off; in a 64-rank all-to-all 60% of the flows a
	 * recompute visits come back so, 15% exactly equal, 25% moved. Keeping the old rate leaves a
	 * link's flows over its capacity by at most RATE_EPS of it. */
	if (timed && fabs(f->rate - f->old) <= HS_MAXMIN_RATE_EPS * f->old) {
		f->rate = f->old; /* a rate it had: within every link's ub already (maxmin.c, check (a)) */
		return 0;
	}
	for (int i = 0; i < f->nl; i++) {
		hs_maxmin_link *k = &mm->lk[h[i].l];
		k->load += hs_maxmin_part(k, f->rate, h[i].coef) - hs_maxmin_part(k, f->old, h[i].coef);
		k->ub = f->rate > k->ub ? f->rate : k->ub;
	}
	if (!mm->exact && fabs(f->rate - f->old) > HS_MAXMIN_RATE_EPS * f->rate)
		for (int i = 0; i < f->nl; i++) {
			int l = h[i].l;
			if (mm->lx[l].na < mm->lk[l].n)
				hs_maxmin_mark_dirty(mm, l);
		}
	return 1;
}

#endif
