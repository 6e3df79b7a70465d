/* hs_router: routes on a topology graph (topology/topo.h), cached per (source, destination, rail).
 *
 * A route is the set of links a transfer crosses, each with the fraction of the transfer's bytes it carries
 * (a coefficient in (0, 1]): a single path has every coefficient 1; a transfer split over k paths has 1/k
 * on each (or shares proportional to each path's bottleneck bandwidth, the default). Routing rules:
 *   - shortest paths by hop count, never relaying through a device;
 *   - ECMP: where several next hops are equally short, a hash of (source, destination, label) picks one, so
 *     one flow keeps one path and different flows spread;
 *   - inside a scale-up domain (a node, or every tray of an NVL72 rack), the scale-up only;
 *   - between domains, rail alignment: a transfer leaves through NIC i of its node and arrives at NIC i of the
 *     destination's node (i mod each node's NIC count); if the sender does not own NIC i, the bytes first
 *     cross the scale-up to the device that does (NCCL's PXN). rail = -1 splits the transfer over every
 *     rail (multipath, as NCCL's channels spread a ring over the node's NICs); rail >= 0 takes one;
 *   - explicit graphs (no NICs): up to `kpaths` distinct ECMP paths.
 * Memory: one cached route per distinct (source, destination, rail) asked for, so linear in flows. */
#ifndef HS_ROUTE_H
#define HS_ROUTE_H

#include <stdint.h>

#include "sim/base/err.h"
#include "sim/base/time.h"
#include "topology/topo.h"

typedef struct hs_route {
	int src, dst;   /* vertices */
	int nl;         /* distinct links */
	int *link;      /* [nl], ascending */
	double *coef;   /* [nl]: fraction of the bytes crossing link[i] */
	int npaths;
	hs_time lat;    /* the slowest path's latency */
	double bw;      /* bytes/ps when alone on the network: 1 / max(coef / link bandwidth) */
	int id;         /* 0, 1, ... in the order the router computed its routes: an index for what a network
	                 * model keeps per route (sim/net/net_flow.c: a lone flow's rate) */
} hs_route;

typedef struct hs_router hs_router;

hs_router *hs_router_create(const hs_topo *t);
void hs_router_free(hs_router *r);
/* Paths explicit graphs split over (default 1), and whether splits follow bandwidth (default 1) or are even. */
void hs_router_set_kpaths(hs_router *r, int k);
void hs_router_set_proportional(hs_router *r, int on);

/* Route between vertices src and dst (device i is vertex i; a switch vertex is a valid end, for in-switch
 * reduction). NULL with a message when there is no path (HS_EINPUT) or src == dst. Owned by the router. */
const hs_route *hs_route_get(hs_router *r, int src, int dst, int rail, hs_err *err);
/* Routes computed so far (the cache's size). */
size_t hs_router_cached(const hs_router *r);
/* Every link of routes r[0..n), ascending, each once: a new array (never NULL) of *nlinks (what a hold over a
 * set of routes takes). */
int *hs_routes_links(const hs_route *const *r, int n, int *nlinks);

#endif
