/* Inside hs_net: what the collective programs (sim/net/netcoll*.c) see. Not a public header. */
#ifndef HS_NET_IMPL_H
#define HS_NET_IMPL_H

#include "sim/net/net.h"

typedef struct hs_xrec {
	const hs_route *r;
	double bytes;
	hs_time t0;
	hs_net_done sent, done;
	void *ctx;
	uint64_t arg;
	int next_free;
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
};

/* Start one transfer on a route (the model's start, with accounting); sent (may be NULL) and done as the
 * model's start calls them. bytes <= 0 is sent at once and done one route latency later (engine events). */
void hs_net_xfer(hs_net *n, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		 uint64_t arg);
/* Call done(ctx, arg) from an engine event `delay` picoseconds from now. */
void hs_net_later(hs_net *n, hs_time delay, hs_net_done done, void *ctx, uint64_t arg);

#endif
