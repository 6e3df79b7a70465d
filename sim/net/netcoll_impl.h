/* Inside hs_net_collective: a running collective and the table of step-by-step algorithms. Not a public
 * header. Each algorithm (sim/netcoll_<algo>.c) starts its first transfers in `start`, and in `on_done`
 * starts whatever a finished transfer (named by the tag it was sent with) makes ready. An algorithm that
 * pipelines a connection also has `on_sent`: the transfer's last byte has left its source (the links are
 * free for the next piece) and arrives one route latency later. The run ends when no transfer is
 * outstanding after an on_done. Ranks are indices 0..n-1 into rk[] (devices). */
#ifndef HS_NETCOLL_IMPL_H
#define HS_NETCOLL_IMPL_H

#include "sim/net/net_impl.h"

typedef struct nc_run nc_run;

typedef struct nc_algo {
	const char *name;
	void (*start)(nc_run *r);
	void (*on_done)(nc_run *r, uint64_t tag);
	void (*free)(nc_run *r);
	void (*on_sent)(nc_run *r, uint64_t tag); /* NULL: not needed */
} nc_algo;

struct nc_run {
	hs_net *net;
	enum hs_coll_op op;
	int n;
	int *rk;      /* devices, in ring order when the net orders rings */
	double S;     /* bytes as sim/coll/coll.h defines them */
	hs_net_done done;
	void *ctx;
	uint64_t arg;
	/* the net's rail options when the collective started (hs_net_set_spread, hs_net_set_rails): a
	 * communicator keeps its channels, whatever another group sets before its own collective meanwhile */
	int spread, nrails;
	int rails[HS_NET_MAX_CHANNELS];
	long outstanding;
	const nc_algo *alg;
	void *st;
};

extern const nc_algo hs_nc_ring, hs_nc_direct, hs_nc_hd, hs_nc_tree, hs_nc_hier, hs_nc_inswitch, hs_nc_nvls;

/* Send `bytes` from rank a to rank b (indices) on `rail` (-1: every rail); when its last byte leaves,
 * alg->on_sent(tag) if the algorithm has one; on arrival, alg->on_done(tag). */
void hs_netcoll_send(nc_run *r, int a, int b, double bytes, int rail, uint64_t tag);
/* The same between two vertices (a switch, for in-switch reduction). Returns the transfer's record
 * (hs_net_xfer), -1 when it has none. */
int hs_netcoll_send_v(nc_run *r, int va, int vb, double bytes, int rail, uint64_t tag);
/* The route hs_netcoll_send_v would take from va to vb on rail (NULL from a vertex to itself), and a send by
 * it: an algorithm that sends over the same pairs again and again (a ring's hops, every slice of every
 * step) looks each up once, where a lookup per send was a cache miss into the router's table each time
 * (9% of a hashed-ECMP 16k-GPU step). */
const hs_route *hs_netcoll_route_v(nc_run *r, int va, int vb, int rail);
/* sent: 0 where the algorithm's on_sent does nothing with this transfer (a ring's hop, not a chain's: each of
 * a hashed 16k-GPU step's 35M transfers called it through three layers to return) */
int hs_netcoll_send_route(nc_run *r, const hs_route *rt, double bytes, int sent, uint64_t tag);
/* The completion of a child collective (hs_net_collective's done, with ctx = the run): counts as one
 * arrival, so the caller increments outstanding before starting the child. */
void hs_netcoll_child_cb(void *ctx, uint64_t tag);
/* A transfer's last byte has left (alg->on_sent), for a transfer started other than by hs_netcoll_send. */
void hs_netcoll_sent_cb(void *ctx, uint64_t tag);
/* Bottleneck bandwidth (bytes/ps) of the route a -> b on rail (ranks). */
double hs_netcoll_route_bw(nc_run *r, int a, int b, int rail);
#define NC_ALL_RAILS (-2) /* a rail argument: every rail, even where the sender has a NIC of its own */

/* The NIC rail channel c of C crosses on: rails[c] (hs_net_set_rails) or c; with one channel, the sender's
 * own NIC (-1), or every rail when spread (hs_net_set_spread); as they were when the collective started. */
static inline int nc_rail(const nc_run *r, int c, int C)
{
	if (C <= 1)
		return r->spread ? NC_ALL_RAILS : -1;
	return c < r->nrails ? r->rails[c] : c;
}

#endif
