/* Inside hs_net: what the collective programs (sim/net/netcoll*.c) see. Not a public header. */
#ifndef HS_NET_IMPL_H
#define HS_NET_IMPL_H

#include "sim/net/net.h"
#include "sim/net/netsym.h"

typedef struct hs_symrun hs_symrun;

typedef struct hs_xrec {
	const hs_route *r;
	double bytes;
	hs_time t0;
	hs_net_done sent, done;
	void *ctx;
	uint64_t arg;
	int next_free;
	hs_symrun *sym; /* a class transfer (hs_net_sym_xfer): of class cls of sym; r is NULL */
	int cls;
	int h;          /* the model's handle of a plain transfer (ops->xstart), or -1 */
} hs_xrec;

int hs_net_home_rail(const hs_net *n, int src);

struct hs_net {
	const hs_cluster *c;
	hs_topo *t;
	hs_router *router;
	const hs_net_ops *ops;
	hs_net_model *m;
	hs_engine *eng;
	hs_time t_created;
	/* options */
	int channels, ring_order, split, window;
	int rails[HS_NET_MAX_CHANNELS], nrails; /* hs_net_set_rails: channel c crosses on rails[c] (nrails 0: on rail c) */
	int spread;            /* hs_net_set_spread: one channel crosses on every rail */
	double chunk;
	/* transfer records */
	hs_xrec *x;
	size_t nx, capx;
	int free_head;
	/* statistics */
	double *link_bytes;    /* bytes each link carried, less what rb holds */
	/* bytes carried on each route since the last fold (by route id), folded into link_bytes when read: a
	 * transfer's end adds to its route, not to each of its links (the links' records were a third of a
	 * 16,384-GPU step's finishing cost, each a cache miss) */
	struct hs_net_rb {
		const hs_route *r; /* the route of a pending id, NULL when none is */
		double bytes;
	} *rb;                   /* [caprb], one record per route: the check and the sum one cache line */
	size_t caprb;
	int *rpend;              /* ids with bytes pending */
	size_t npend, cappend;
	double *series; /* [nlinks * nbuckets] bytes per bucket */
	int nbuckets;
	double bucket_ps;
	double injected;
	uint64_t transfers;
	/* symmetry classes */
	int symmetry;          /* hs_net_set_symmetry */
	int ring_hops;         /* hs_net_set_ring_hops */
	hs_netsym_scratch sc;  /* sized on first use */
	hs_net_sym_stat sst;
	hs_symrun **runs;      /* [capruns] the open set of each model set id */
	int capruns;
	struct hs_symmemo *memo; /* [HS_SYMMEMO_SLOTS], on first use */
	int solo_pending;        /* entries with solo_bytes (hs_net_solo_carried) */
};

/* A memo of what a collective's classes were, by the caller's key (the ring: its ranks in order, channels and
 * rails): a step's in-layer collectives repeat the same groups thousands of times, and finding their
 * classes (their routes, hashes and the check) was a quarter of a 3-tier fat-tree step's instructions. The
 * memo owns sym and routes; an entry in use by an open set is never replaced. */
typedef struct hs_symmemo {
	uint64_t h;
	int *key, nkey;
	int value;                /* the caller's (the ring: p; n when there are no classes) */
	hs_netsym *sym;           /* NULL: no classes */
	const hs_route **routes;  /* [sym->M] */
	int refs;                 /* open sets on it (and joint sets on its generators) */
	/* the generators as permutations of the collective's devices, where the caller gives them
	 * (hs_net_memo_gens; a ring's), for sets that share links (hs_net_sym_open_joint): gmem[g] on the
	 * members, gdev[g] the image of dev[i] */
	int ngen, ndev;
	int **gmem, **gdev, *dev;
	struct hs_solo_tl *solo;  /* timelines of its transfers alone on their links (netcoll_solo.c), or NULL */
	int *links, nlinks;       /* every link of its routes, ascending (netcoll_solo.c's holds), or NULL */
	int solo_m;               /* the routes those runs carry on (their pairs) */
	double solo_bytes;        /* bytes per pair that runs timed alone carried, not yet on the links */
} hs_symmemo;

/* The collective's transfers of `bytes` each timed alone on their links from their start (hs_net_solo), kept
 * with its memo entry for the next time it runs so (netcoll_solo.c): fin[i] transfer i's finish, `last` the
 * latest of them, `end` the last arrival (finish + route latency). Freed with the entry, never while in use. */
typedef struct hs_solo_tl {
	double bytes;
	hs_time *fin;
	hs_time last, end;
	int refs;                 /* collectives running on it */
	struct hs_solo_tl *next;
} hs_solo_tl;

#define HS_SYMMEMO_SLOTS 256

/* The entry for key[0..nkey), or NULL. */
hs_symmemo *hs_net_memo_get(hs_net *n, const int *key, int nkey);
/* Enter key's value, with sym and routes (both may be NULL; owned by the memo from here on, or freed when the
 * slot is in use); returns the entry or NULL. */
hs_symmemo *hs_net_memo_put(hs_net *n, const int *key, int nkey, int value, hs_netsym *sym, const hs_route **routes);
/* Give entry e the generators its classes were found with (all owned by e from here on). */
void hs_net_memo_gens(hs_symmemo *e, int ngen, int **gmem, int ndev, int *dev, int **gdev);
/* Classes of M transfers on routes[0..M) that the caller runs as perm respects (sim/net/netsym.h): a new
 * hs_netsym (the caller frees it with hs_netsym_free and free), or NULL (symmetry off, a model without
 * classes, no automorphism, or nothing gained). */
hs_netsym *hs_net_sym_find(hs_net *n, const hs_route *const *routes, const int *perm, int M);
/* The same for the group generated by perms[0..G) (hs_netsym_find_group); with passed[G] (may be NULL), those
 * without a link permutation are left out and marked 0. */
hs_netsym *hs_net_sym_find_group(hs_net *n, const hs_route *const *routes, const int *const *perms, int G, int M,
				 int *passed);

/* A class set of a running collective: the bytes each member of a class carried as the class, which reach
 * the members' links when the set closes (a ring step would otherwise cost its n members' links again). */
struct hs_symrun {
	int id;                 /* the model's set */
	int live;               /* not broken */
	hs_symmemo *memo;       /* its classes */
	hs_symmemo *gmemo;      /* whose generators its classes hold under: memo, or a joint set's partner's */
	const hs_netsym *sym;   /* memo->sym */
	double *bytes;          /* [ncls] per member */
	double *series;         /* [ncls * nbuckets] per member and bucket, with the timeline on */
	int kmin, kmax;         /* buckets touched: the flush visits only those */
	void (*broken)(void *ctx);
	void (*cut)(void *ctx, uint64_t arg, double rem);
	void *ctx;
};

/* Open the classes of memo entry e (e->sym not NULL), or NULL when their links are in use (then the caller
 * runs every member). While the set is live the caller starts class transfers (hs_net_sym_xfer); when it
 * breaks, broken(ctx), then cut(ctx, arg, rem) for each class transfer in flight (started with arg): the
 * caller carries each member's rem bytes on as a transfer of its own; that class transfer is never done. */
hs_symrun *hs_net_sym_open(hs_net *n, hs_symmemo *e, void (*broken)(void *ctx),
			   void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx);
/* The classes of broken set `old` again, on the same memo entry, once the caller has checked that every member
 * is in its representative's state with none of its transfers in flight (a re-form, counted in
 * hs_net_sym_stats' reformed); NULL where old is live or the links are in use (refused, not counted). The caller
 * then closes old (its bytes reach their links) and goes on with the new set. */
hs_symrun *hs_net_sym_reopen(hs_net *n, const hs_symrun *old, void (*broken)(void *ctx),
			     void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx);
/* The live set whose links hold memo entry e's open (hs_net_sym_open refused it) where that is the only thing
 * on them (the model's sym_holder), or NULL. */
hs_symrun *hs_net_sym_holder(hs_net *n, const hs_symmemo *e);
/* Open e's classes beside live set `with`, sharing its links: e's classes must be found under with->gmemo's
 * generators for both collectives together (a joint problem invariant under them). NULL where refused. */
hs_symrun *hs_net_sym_open_joint(hs_net *n, hs_symmemo *e, hs_symrun *with, void (*broken)(void *ctx),
				 void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx);
/* One transfer of `bytes` for every member of class cls, as one flow; done(ctx, arg) once when they arrive. */
void hs_net_sym_xfer(hs_net *n, hs_symrun *s, int cls, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		     uint64_t arg);
/* Class transfers a collective times itself (netcoll_ring.c, a ring whose classes are all alone on their
 * links): the rate the model gives class cls's flows now (hs_net_ops.sym_alone_rate; 0: not known), and the
 * accounting hs_net_sym_xfer, its done and its cut do for such transfers: `count` transfers of `bytes`
 * started (injected, transfers, the statistics' class flows and alone ones; a negative count takes back
 * transfers counted that never start), one cut with `rem` left per member (xcut's), and `bytes` carried per
 * member over [t0, t1] (xdone's). */
double hs_net_sym_alone_rate(hs_net *n, hs_symrun *s, int cls);
void hs_net_sym_started(hs_net *n, hs_symrun *s, int cls, long count, double bytes);
void hs_net_sym_cut_back(hs_net *n, hs_symrun *s, int cls, double rem);
void hs_net_sym_carried(hs_net *n, hs_symrun *s, int cls, hs_time t0, hs_time t1, double bytes);
/* The set's bytes onto its members' links; frees it. None of its transfers may be in flight. */
void hs_net_sym_close(hs_net *n, hs_symrun *s);

/* Start one transfer on a route (the model's start, with accounting); sent (may be NULL) and done as the
 * model's start calls them. bytes <= 0 is sent at once and done one route latency later (engine events).
 * Returns the transfer's record, valid until done, for hs_net_xpeek and hs_net_xtake; -1 when it cannot be
 * taken back (no bytes, or a model without xstart). */
int hs_net_xfer(hs_net *n, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		uint64_t arg);
/* Transfer x (hs_net_xfer's record): the model's xpeek (net.h); -1 where it has no handle. */
int hs_net_xpeek(const hs_net *n, int x, double *rem, hs_time *fin);
/* Take transfer x (xpeek 1) off the network now: what it carried so far reaches its links and the bytes it
 * had left are no longer injected (the caller carries them on, as part of a class transfer); its callbacks
 * are never called and its record is freed. */
void hs_net_xtake(hs_net *n, int x);
/* Memo entry e's classes could open (hs_net_sym_reopen) once transfers x[0..nx) were taken. */
int hs_net_sym_fits(const hs_net *n, const hs_symmemo *e, const int *x, int nx);
/* Holds (the model's hold and unhold, sim/net/net.h): route r's links held for an owner that times its
 * transfers there itself, *rate what a flow alone there gets; -1 where refused, symmetry is off or the model has
 * none. broken(ctx, arg) when a flow enters (the hold is released). Counted in hs_net_sym_stats' holds. */
int hs_net_hold(hs_net *n, const hs_route *r, double *rate, void (*broken)(void *ctx, uint64_t arg), void *ctx,
		uint64_t arg);
void hs_net_unhold(hs_net *n, int h);
/* The rates of k flows on routes r[0..k) with nothing else on their links (the model's fill): 0, or -1 in a
 * model without. */
int hs_net_fill(hs_net *n, const hs_route *const *r, int k, double *rate);
/* Links links[0..nlinks) held for one owner (the model's hold; the array lasts until released), for transfers
 * the model times alone there (hs_net_solo); -1 where refused, symmetry is off or the model has no holds or no
 * solo. Released by hs_net_unhold; broken as hs_net_hold's. Counted by the caller. */
int hs_net_hold_links(hs_net *n, const int *links, int nlinks, void (*broken)(void *ctx, uint64_t arg), void *ctx,
		      uint64_t arg);
/* What a run timed alone (netcoll_solo.c) carried, from t0: `bytes` on each of memo entry e's routes, route m's
 * over [t0, t0 + fin[m]] (the timeline's); kept per entry until the links' bytes are read (a 64-rank
 * all-to-all is 4,032 routes a run), where no timeline of link use is kept. */
void hs_net_solo_carried(hs_net *n, hs_symmemo *e, hs_time t0, const hs_time *fin, double bytes);
/* The model's solo (sim/net/net.h): nr transfers of `bytes` started together on routes r[], alone on their
 * links, timed from their start (up to stop); -1 where the model cannot. */
int hs_net_solo(hs_net *n, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin, double *rem);
/* The accounting of transfers an owner times itself: `count` transfers of `bytes` in all started (injected,
 * transfers; negative, ones counted that never ran, or a cut's remainder that goes on as a transfer of its
 * own), and `bytes` carried on r over [t0, t1] (what the transfer's done counts). */
void hs_net_timed_started(hs_net *n, long count, double bytes);
void hs_net_timed_carried(hs_net *n, const hs_route *r, hs_time t0, hs_time t1, double bytes);
/* Call done(ctx, arg) from an engine event `delay` picoseconds from now. */
void hs_net_later(hs_net *n, hs_time delay, hs_net_done done, void *ctx, uint64_t arg);

#endif
