/* NCCL-faithful collective times: what nccl-tests would measure on an idle cluster.
 *
 * On top of the physical closed forms of sim/coll/coll.h this adds what NCCL's kernels and tuner do: three
 * protocols (LL: 8-byte flag+data stores, a quarter of the link; LL128: 120 of 128 bytes; Simple: full
 * chunks with a fence per step), their per-launch and per-hop latencies, the fraction of a link NCCL's
 * copies reach, host-memory bounce without PCIe peer-to-peer, and NCCL's choice: for every enabled
 * (algorithm, protocol) the time is latency + bytes/bandwidth, and AUTO takes the fastest. Constants and
 * their sources are listed in docs/collectives.md. */
#ifndef HS_COLL_NCCL_H
#define HS_COLL_NCCL_H

#include "sim/coll/coll.h"

enum hs_coll_proto { HS_PROTO_AUTO, HS_PROTO_LL, HS_PROTO_LL128, HS_PROTO_SIMPLE, HS_PROTO_COUNT };

const char *hs_coll_proto_name(enum hs_coll_proto p); /* "auto", "LL", "LL128", "Simple" */
int hs_coll_proto_parse(const char *s);               /* case-insensitive; -1 if unknown */

typedef struct hs_coll_choice {
	enum hs_coll_algo algo;
	enum hs_coll_proto proto;
	double lat_s; /* the latency part of the time */
	double bw_Bps; /* algorithm bandwidth: bytes / (time - latency) */
} hs_coll_choice;

/* Seconds for `op` of `bytes` over ranks[0..n-1] as NCCL would run it with `algo` and `proto` (AUTO: the
 * fastest enabled choice; an algorithm the op lacks runs the op's default, as NCCL does). -1 on a bad group.
 * *choice (if not NULL) receives what ran. */
double hs_coll_nccl_time(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, enum hs_coll_proto proto,
			 const int *ranks, int n, double bytes, hs_coll_choice *choice);

#endif
