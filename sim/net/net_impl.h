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
	double *link_bytes;
	double *series; /* [nlinks * nbuckets] bytes per bucket */
	int nbuckets;
	double bucket_ps;
	double injected;
	uint64_t transfers;
	/* symmetry classes */
	int symmetry;          /* hs_net_set_symmetry */
	hs_netsym_scratch sc;  /* sized on first use */
	hs_net_sym_stat sst;
	struct hs_symmemo *memo; /* [HS_SYMMEMO_SLOTS], on first use */
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
	int refs;                 /* open sets on it */
} hs_symmemo;

#define HS_SYMMEMO_SLOTS 256

/* The entry for key[0..nkey), or NULL. */
hs_symmemo *hs_net_memo_get(hs_net *n, const int *key, int nkey);
/* Enter key's value, with sym and routes (both may be NULL; owned by the memo from here on, or freed when the
 * slot is in use); returns the entry or NULL. */
hs_symmemo *hs_net_memo_put(hs_net *n, const int *key, int nkey, int value, hs_netsym *sym, const hs_route **routes);
/* Classes of M transfers on routes[0..M) that the caller runs as perm respects (sim/net/netsym.h): a new
 * hs_netsym (the caller frees it with hs_netsym_free and free), or NULL (symmetry off, a model without
 * classes, no automorphism, or nothing gained). */
hs_netsym *hs_net_sym_find(hs_net *n, const hs_route *const *routes, const int *perm, int M);

/* A class set of a running collective: the bytes each member of a class carried as the class, which reach
 * the members' links when the set closes (a ring step would otherwise cost its n members' links again). */
struct hs_symrun {
	int id;                 /* the model's set */
	int live;               /* not broken */
	hs_symmemo *memo;       /* its classes */
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
/* One transfer of `bytes` for every member of class cls, as one flow; done(ctx, arg) once when they arrive. */
void hs_net_sym_xfer(hs_net *n, hs_symrun *s, int cls, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		     uint64_t arg);
/* The set's bytes onto its members' links; frees it. None of its transfers may be in flight. */
void hs_net_sym_close(hs_net *n, hs_symrun *s);

/* Start one transfer on a route (the model's start, with accounting); sent (may be NULL) and done as the
 * model's start calls them. bytes <= 0 is sent at once and done one route latency later (engine events). */
void hs_net_xfer(hs_net *n, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		 uint64_t arg);
/* Call done(ctx, arg) from an engine event `delay` picoseconds from now. */
void hs_net_later(hs_net *n, hs_time delay, hs_net_done done, void *ctx, uint64_t arg);

#endif
