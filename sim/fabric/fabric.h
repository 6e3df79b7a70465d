/* hs_fabric: a packet-level scale-up fabric in front of one target's receiver, on hs_engine.
 *
 *   source i --(egress link, serialises)--> spray over k forward paths (FIFO queue, serialisation,
 *   latency) --> receive buffer (bytes; full => the paths hold their packets: hop-by-hop backpressure)
 *   --> stage by kind:
 *        read   : HBM (its bytes, per interleave chunk)     -> response engine (header + data)
 *        write  : HBM (each arriving packet's data)         -> response engine (ack header)
 *        notify : HBM (its bytes)                           -> response engine (ack header)
 *        atomic : atomic engine (serialised, fixed service) -> response engine (header + operand)
 *   --> response engine (FIFO, injection rate) --> spray over k reverse paths --> source: done.
 *
 * Arrived packets are dispatched in order to bounded stage queues (hbm_depth jobs per partition,
 * atomic_depth atomics); a full stage queue stops the dispatcher and everything behind it (head-of-line
 * blocking). HBM is address-interleaved: byte address a lives in partition (a / interleave) mod partitions, and each
 * partition is a FIFO server at its own bandwidth followed by a fixed access latency. A request's bytes stay
 * in the receive buffer until the stage that consumes them completes (a write packet: its HBM access; a
 * read, notify or atomic request: its HBM or atomic stage).
 *
 * Admission: before an operation leaves its source it must get its credits (sim/fabric/credit.h). Operations
 * queue per (source, kind). By default credits are taken at transmission, as a link-level transmitter gates
 * each packet on its credits (PCIe's gating function, InfiniBand's per-VL credits): an operation is admitted
 * only when its sender's egress link has nothing else left to send, so credits are never held by an
 * operation still waiting for the sender's own link, and an operation whose credits are short does not
 * stop another kind behind it. `admit_at_issue` restores the first version's rule (credits taken at issue,
 * then a FIFO egress queue). When credits come back the waiting queues are served round robin, one
 * operation per queue per round. Credit returns reach the sources after `credit_latency`.
 *
 * Every component schedules itself and keeps at most one pending event (a server or link when busy, a delay
 * line for its oldest item, a source for its next arrival), as in htsim. Operations live in a pool that
 * grows by doubling; packets and jobs are values in per-component rings: no allocation per event. */
#ifndef HS_SIM_FABRIC_H
#define HS_SIM_FABRIC_H

#include <stdint.h>

#include "sim/fabric/credit.h"
#include "sim/engine/engine.h"
#include "sim/engine/stats.h"

typedef struct hs_fabric_params {
	int sources;            /* senders */
	int paths;              /* k: parallel forward paths (and as many reverse paths) */
	int spray_random;       /* 0: each sender sprays round robin; 1: uniformly at random */
	int admit_at_issue;     /* 0 (default): credits are taken when an operation starts on its sender's
				 * egress link; 1: when it is issued, before it queues for the link */
	double src_rate;        /* sender egress, bytes/ps */
	double path_rate;       /* each path, bytes/ps */
	hs_time path_latency;   /* propagation + switching, each path */
	uint32_t mtu;           /* payload bytes per packet */
	uint32_t header;        /* header bytes per packet */
	int partitions;         /* HBM partitions */
	uint32_t interleave;    /* bytes per interleave granule */
	double hbm_rate;        /* each partition, bytes/ps */
	hs_time hbm_latency;    /* access latency after a partition serves a chunk */
	uint32_t hbm_depth;     /* jobs a partition's queue holds (in service included) */
	uint32_t atomic_depth;  /* atomics the atomic engine's queue holds (in service included) */
	hs_time atomic_time;    /* atomic engine service time per atomic */
	double resp_rate;       /* response engine injection, bytes/ps */
	uint32_t rxbuf;         /* receive buffer, bytes */
	hs_time credit_latency; /* credit return, target to sender */
	uint32_t atomic_operand;/* bytes an atomic carries and returns */
	uint64_t seed;          /* spraying stream when spray_random */
	int nclasses;           /* metric classes ops are tagged with (>= 1) */
} hs_fabric_params;

/* Defaults (see docs/fabric.md for where they come from). */
void hs_fabric_params_default(hs_fabric_params *p);

/* Per class of operation: latency (issue to response received), credit stall (issue to admission). */
typedef struct hs_fabric_class_stats {
	hs_hist lat, stall;
	uint64_t ops, bytes;
	hs_time first_issue, last_done;
} hs_fabric_class_stats;

/* Queues observed over time. Item queues count items; rxbuf counts bytes. */
typedef struct hs_fabric_queues {
	hs_occ rxbuf;      /* receive buffer bytes */
	hs_occ ingress;    /* arrived packets waiting for the in-order dispatcher */
	hs_occ *hbm;       /* [partitions] jobs queued or in service */
	hs_occ atomic;     /* atomics queued or in service */
	hs_occ resp;       /* responses queued or being injected */
	hs_occ *fwd, *rev; /* [paths] packets queued or on the wire (serialising) */
	hs_occ *egress;    /* [sources] packets' ops admitted, not yet fully sent */
	hs_occ admit;      /* operations waiting for credits, all sources */
	hs_occ inflight;   /* operations issued and not yet complete */
} hs_fabric_queues;

typedef struct hs_fabric hs_fabric;

/* Called when an operation completes at its source (after its stats are recorded). */
typedef void (*hs_fabric_done_fn)(void *ctx, int src, int cls, uint64_t tag);

hs_fabric *hs_fabric_create(hs_engine *eng, const hs_fabric_params *p, const hs_credit_scheme *s,
			    const hs_credit_cfg *cfg);
void hs_fabric_destroy(hs_fabric *f);
void hs_fabric_on_done(hs_fabric *f, hs_fabric_done_fn fn, void *ctx);
/* Called when an operation's data is in place at the target: its HBM stage (read, write, notify) or its
 * atomic execution completed, before the response is queued. A receiver that polls a flag sees it then,
 * one response and one reverse path before its sender does (sim/fabric/fabric_coll.c uses it). */
void hs_fabric_on_target(hs_fabric *f, hs_fabric_done_fn fn, void *ctx);

/* The credit view of an operation (used by validation: does every operation fit the pools?). */
hs_credit_op hs_fabric_describe(const hs_fabric_params *p, int kind, uint32_t size);

/* Issue an operation now. `record`: whether its latency counts in the class stats (0 during warm-up). */
void hs_fabric_issue(hs_fabric *f, int src, int kind, uint32_t size, uint64_t addr, int cls, int record,
		     uint64_t tag);

const hs_fabric_class_stats *hs_fabric_class(const hs_fabric *f, int cls);
const hs_fabric_queues *hs_fabric_queues_of(const hs_fabric *f);
/* Close every occupancy integral at the current time (call once after the run). */
void hs_fabric_close(hs_fabric *f);

/* Credit pools: count, names, capacities, available now, and the least ever available. */
int hs_fabric_pools(const hs_fabric *f, const char **names, const int64_t **cap, const int64_t **avail,
		    const int64_t **min_avail);
/* Operations issued and not yet complete; credit returns still travelling. */
uint64_t hs_fabric_inflight(const hs_fabric *f);
uint64_t hs_fabric_credit_returns_pending(const hs_fabric *f);
/* Atomic engine: total waiting time before service (ps) and atomics served. */
void hs_fabric_atomic_wait(const hs_fabric *f, double *wait_sum, uint64_t *served);

#endif
