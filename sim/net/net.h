/* hs_net: transfers and collectives on a cluster's link graph, timed by a network model.
 *
 * A network model is a function table (hs_net_ops) that moves bytes along a route and calls back when the
 * last byte has arrived. Models, by name (hs_net_models[]):
 *   analytical  alpha-beta: route latency + bytes / the route's bottleneck bandwidth, no contention;
 *   flow        max-min fair sharing of every link among the flows crossing it, recomputed when flows
 *               start or finish, only for the flows on links whose flow set changed (and, while their rates
 *               move, the flows they share links with); flows started at one instant are one batch;
 *   packet      not here: the scale-up fabric model (sim/fabric/) implements packets, queues and credits
 *               and fills this slot; hs_net_create("packet") says so;
 *   ns3         every transfer as packets on ns-3 point-to-point links and queues (sim/net/net_ns3.h), where
 *               the build found libns3-dev; elsewhere its entry says "not built".
 * On top, hs_net_collective runs a collective algorithm step by step as transfers (one algorithm per
 * sim/net/netcoll_*.c, sharing sim/net/netcoll_impl.h): a ring rank forwards a chunk only after receiving it, so a slow link or a busy NIC slows the whole ring, and
 * collectives running at once share links. Time is the engine's; callbacks run from engine events. */
#ifndef HS_NET_H
#define HS_NET_H

/* The most parallel channels (rings or trees) a collective runs on: NCCL's MAXCHANNELS (64 since NCCL 2.12,
 * src/include/device.h). hs_net_set_channels and hs_net_set_rails clamp to it. */
#define HS_NET_MAX_CHANNELS 64

#include <stddef.h>
#include <stdint.h>

#include "sim/coll/coll.h"
#include "sim/engine/engine.h"
#include "sim/base/err.h"
#include "topology/cluster.h"
#include "topology/route.h"
#include "topology/topo.h"

typedef struct hs_net hs_net;
typedef void (*hs_net_done)(void *ctx, uint64_t arg);

/* ---- the model interface ---- */

typedef struct hs_net_model hs_net_model; /* a model's private state */
struct hs_netsym;

typedef struct hs_net_ops {
	const char *name;
	hs_net_model *(*create)(const hs_topo *t, hs_engine *eng, hs_err *err);
	void (*destroy)(hs_net_model *m);
	/* Move `bytes` (> 0) along `r` starting now; call done(ctx, arg) from an engine event when the last byte
	 * has arrived. With `sent` (may be NULL), call sent(ctx, arg) first, when the last byte has left the
	 * source and the route's links are free again (one route latency before done): a pipelined sender starts
	 * its next piece then, while this one is still on its way. */
	void (*start)(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		      uint64_t arg);
	size_t (*active)(const hs_net_model *m); /* transfers in flight */
	/* Symmetry classes (sim/net/netsym.h; NULL in a model that carries every transfer). sym_open reserves the
	 * links of s's orbits for its classes and returns an id, or -1 when another flow or class set is on one
	 * of them (the classes would not see what their members see). While reserved, sym_start carries class
	 * `cls` as one flow of its members' rate. A flow of anything else that enters a reserved link breaks the
	 * set, before it enters: broken(ctx) first, then cut(ctx, arg, rem) for each class flow in flight, which
	 * leaves the model with rem of each member's bytes left (the caller carries them on as members) and is
	 * never done. sym_close releases the set; none of its flows may be in flight. sym_start returns 1 when the
	 * model timed the class flow without its solver (a class alone on its links), else 0. */
	int (*sym_open)(hs_net_model *m, const struct hs_netsym *s, void (*broken)(void *ctx), void *ctx);
	int (*sym_start)(hs_net_model *m, int id, int cls, double bytes, hs_net_done sent, hs_net_done done,
			 void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx, uint64_t arg);
	void (*sym_close)(hs_net_model *m, int id);
	/* The rate (bytes/ps) a class flow of set id's class cls would run at from now until it finished or the
	 * set broke, where the model knows it without solving (a class alone on its links, none of its flows in
	 * flight); 0 otherwise. NULL: never known. */
	double (*sym_alone_rate)(hs_net_model *m, int id, int cls);
	/* Taking plain flows back, for classes that form again (NULL in a model without them). xstart is start
	 * returning a handle, valid until the flow's done. xpeek: 1 while the flow is being carried and finishes
	 * after now (*rem: its bytes left now), 0 once its last byte has left (*fin: when), -1 when it finishes at
	 * this very instant. xtake removes a carried flow now (xpeek 1); neither of its callbacks is ever called.
	 * sym_fits: sym_open(s) would succeed once the carried flows h[0..nh) had left. */
	int (*xstart)(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		      uint64_t arg);
	int (*xpeek)(const hs_net_model *m, int h, double *rem, hs_time *fin);
	void (*xtake)(hs_net_model *m, int h);
	int (*sym_fits)(const hs_net_model *m, const struct hs_netsym *s, const int *h, int nh);
	/* Sets that share links (NULL in a model without them): sym_open_joint opens s beside live set `with`,
	 * in its group, on links that are free or the group's (the caller has found classes that hold for both:
	 * a foreign flow on any link of the group breaks every set in it). sym_holder: the live set whose group
	 * holds s's links that are taken, where no other flow is on them; -1 otherwise. */
	int (*sym_open_joint)(hs_net_model *m, const struct hs_netsym *s, int with, void (*broken)(void *ctx), void *ctx);
	int (*sym_holder)(const hs_net_model *m, const struct hs_netsym *s);
	/* Holds (NULL in a model without them): an owner that times its transfers on route r itself holds r's
	 * links, which must carry no flow, set or other hold (else -1); *rate (may be NULL) is what a flow alone on
	 * them gets. With r NULL, the links are links[0..nlinks) (the owner's, until the hold is released). The
	 * first flow to enter a held link releases the hold and calls broken(ctx, arg) before it enters (the owner
	 * starts as flows what it had in flight). unhold releases a hold not broken. */
	int (*hold)(hs_net_model *m, const hs_route *r, const int *links, int nlinks, double *rate,
		    void (*broken)(void *ctx, uint64_t arg), void *ctx, uint64_t arg);
	void (*unhold)(hs_net_model *m, int h);
	/* Transfers alone on their links (NULL in a model that cannot time them so): nr transfers of `bytes`
	 * each, started together on routes r[0..nr) with nothing else on their links, timed as the model would
	 * time them: each one's finish (its last byte leaves), from their start, in fin[i]; with stop below
	 * HS_TIME_MAX, only up to `stop`, a transfer still running then with fin[i] = HS_TIME_MAX and its bytes
	 * left in rem[i]. Returns 0, or -1 (the caller carries them as flows). */
	int (*solo)(hs_net_model *m, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin,
		    double *rem);
	/* The rates (bytes/ps) of n flows on routes r[0..n), rate[i] route i's, where nothing else is on their
	 * links, as the model would rate them (a flow alone: hold's *rate): what an owner that times n transfers
	 * at once on links it holds shares them by. NULL in a model without holds. */
	void (*fill)(hs_net_model *m, const hs_route *const *r, int n, double *rate);
} hs_net_ops;

extern const hs_net_ops hs_net_analytical, hs_net_flow;
/* Packets on ns-3 (sim/net/net_ns3.h): only in builds where libns3-dev was found (HS_HAVE_NS3). */
extern const hs_net_ops hs_net_ns3;

/* Name-to-model table, NULL-terminated. An entry with create == NULL is a slot another module fills
 * ("packet": sim/fabric/). */
typedef struct hs_net_entry {
	const char *name;
	const hs_net_ops *ops;
	const char *note;
} hs_net_entry;
extern const hs_net_entry hs_net_models[];
const hs_net_ops *hs_net_find(const char *name, hs_err *err);

/* ---- transfers and collectives ---- */

/* Build the cluster's topology and routes and a `model` ("analytical" | "flow") on engine `eng`. */
hs_net *hs_net_create(const hs_cluster *c, const char *model /* "analytical" | "flow" */, hs_engine *eng,
		      hs_err *err);
void hs_net_free(hs_net *n);

/* Run `op` over devices ranks[0..nranks-1] starting now (engine time), step by step as transfers on the
 * model; done(ctx, arg) from an engine event at completion. `bytes` as in sim/coll/coll.h (nccl-tests' sizes).
 * AUTO picks as hs_coll_auto_algo does; an algorithm the operation lacks runs the operation's default. */
int hs_net_collective(hs_net *n, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int nranks,
		      double bytes, hs_net_done done, void *ctx, uint64_t arg, hs_err *err);
/* One point-to-point transfer from device src to device dst, spread over the nodes' rails. */
int hs_net_send(hs_net *n, int src, int dst, double bytes, hs_net_done done, void *ctx, uint64_t arg, hs_err *err);

/* Options (before starting transfers). Channels: parallel rings per collective, each on its own rail
 * (default 1: one ring whose node-crossing hops spread over every rail). Chunk: bytes per pipelined slice
 * of a ring step or chain (default 0: a ring step is one slice; chains use 4 MiB). Ring order: 1 (default)
 * orders the group so that each node's devices are adjacent and slow groups are crossed once; 0 keeps the
 * caller's order. Split: 1 (default) splits bytes over channels and paths in proportion to their bottleneck
 * bandwidth; 0 splits evenly. Window: slices a tree connection's sender may be ahead of its receiver
 * (default 0: NCCL_STEPS, 8; 1 is stop-and-wait). */
void hs_net_set_channels(hs_net *n, int channels);
/* Channel c crosses nodes on NIC rails[c] of each node instead of NIC c (count 0 or NULL: NIC c again): for a
 * group that holds only some devices of a node, whose channels should leave by its own devices' NICs, as
 * NCCL's search puts each channel next to a NIC of the communicator's GPUs. */
void hs_net_set_rails(hs_net *n, const int *rails, int count);
/* With one channel, a ring's or tree's node crossings spread over every NIC of the node (on: 1) even where
 * each device has its own, standing for a channel per NIC at 1/NICs of the transfers: for a group of whole
 * nodes, whose NCCL channels leave by every NIC and are alike. Off (default): a crossing leaves by the
 * sending device's own NIC. */
void hs_net_set_spread(hs_net *n, int on);
void hs_net_set_chunk(hs_net *n, double bytes);
void hs_net_set_window(hs_net *n, int slices);
void hs_net_set_ring_order(hs_net *n, int on);
void hs_net_set_split(hs_net *n, int proportional);

/* Symmetry classes (sim/net/netsym.h): on (default), a collective whose transfers are equivalent under the
 * fabric's and its own symmetry runs one flow per class; off, every transfer is a flow. Results are the same
 * (to rounding); the cost is the number of classes. */
void hs_net_set_symmetry(hs_net *n, int on);
/* With symmetry on: a ring without classes times its hops alone on their links, and a ring whose classes
 * timed themselves goes on that way when another flow breaks its set (sim/net/netcoll_ring_hops.c); on by
 * default. Off, both go rank by rank as flows (what the classes' replay and re-form do; tests compare both). */
void hs_net_set_ring_hops(hs_net *n, int on);

typedef struct hs_net_sym_stat {
	uint64_t sets;     /* class sets opened */
	uint64_t refused;  /* symmetric, but links already in use */
	uint64_t broken;   /* sets broken by other traffic */
	uint64_t flows;    /* class transfers started (each standing for several transfers) */
	uint64_t alone;    /* of those, timed without the solver: the class alone on its links (net_flow.c) */
	uint64_t reformed; /* broken sets whose classes formed again (their collective's ranks back in step) */
	uint64_t joint;    /* sets opened beside another on shared links, under its generators */
	uint64_t holds;    /* hops of rings without classes timed by their ring (netcoll_ring_hops.c) */
	uint64_t holds_broken; /* of those, hops another flow entered: their slices went on as flows */
	uint64_t bundled;  /* hops of such rings timed by their ring in bundles, with the others on their route (each
			    * bundle one hold; netcoll_ring_hops.c) */
	uint64_t bundles_broken; /* bundles another flow entered: their slices went on as flows */
	uint64_t bundles_reformed; /* broken bundles held again once their links were free */
	uint64_t solo;     /* direct collectives without classes timed alone on their links (netcoll_solo.c) */
	uint64_t solo_broken; /* of those, ones another flow entered: their transfers went on as flows */
} hs_net_sym_stat;
hs_net_sym_stat hs_net_sym_stats(const hs_net *n);

/* ---- statistics, for reports ---- */

typedef struct hs_net_link_stat {
	int from, to;       /* vertices (hs_topo_vname names them) */
	double bw_Bps;      /* capacity per direction */
	double bytes;       /* carried so far */
	double util;        /* bytes / (capacity x time since the network was created) */
} hs_net_link_stat;

int hs_net_nlinks(const hs_net *n);
/* One link's totals; with `series` (nb buckets of `bucket_s` seconds from time 0) its utilisation per bucket
 * as well: 0 unless hs_net_stats_timeline was called before the traffic (then each transfer's bytes are
 * spread evenly over its duration, per link). */
void hs_net_link_stats(hs_net *n, int link, hs_net_link_stat *out, double *series, int nb);
void hs_net_stats_timeline(hs_net *n, double bucket_s, int nbuckets);
double hs_net_bytes_injected(const hs_net *n); /* bytes handed to the model by sends and collectives */
uint64_t hs_net_transfers(const hs_net *n);   /* transfers started */
const hs_topo *hs_net_topo(const hs_net *n);
hs_router *hs_net_router(hs_net *n);
hs_engine *hs_net_engine(hs_net *n);

#endif
