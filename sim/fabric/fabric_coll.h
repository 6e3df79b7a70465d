/* hs_fcoll: one collective of a scale-up domain as packet traffic at one receiver (sim/fabric/fabric.h).
 *
 * Every rank of a ring collective inside an NVSwitch domain runs the same program on equivalent hardware, so
 * every GPU's receiver sees the same traffic at the same times (symmetry): one receiver is simulated, and what
 * it sees from its neighbours is what it sends to them. The receiver's senders are its ring predecessor
 * (source 0: data and the "data is ready" flags) and its successor (source 1: the "slot is free" head
 * updates, and the reads of a pulling algorithm). A dependency on "my predecessor received slice j" is, by
 * symmetry, "I received slice j", which the receiver sees when the slice's flag is in its memory
 * (hs_fabric_on_target).
 *
 * The protocols, as NCCL implements them (NCCL 2.18-2.23; files under src/):
 *   Simple  each slice is a bulk write into the receiver's FIFO slot, then, after the write is acknowledged
 *           (the __threadfence_system before the tail store in device/prims_simple.h, postPeer), an 8 B store
 *           of the step counter into the receiver's connection (the tail). Slices are ALLREDUCE_SLICESTEPS = 2
 *           of NCCL_STEPS = 8 FIFO steps (include/collectives.h, include/device.h), a step being the 4 MiB
 *           default buffer (DEFAULT_BUFFSIZE, init.cc) / 8 = 512 KiB: 1 MiB slices, 4 in flight.
 *   LL128   data travels in 128 B lines of 120 B payload and an 8 B flag (NCCL_LL128_LINESIZE 128,
 *           NCCL_LL128_DATAELEMS 15 of NCCL_LL128_LINEELEMS 16 uint64_t, include/device.h): no separate flag;
 *           the receiver polls the lines. A step is the LL128 buffer (NCCL_LL128_ELEMS_PER_THREAD 120 x
 *           NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS x 8 B = 4,915,200 B) / NCCL_STEPS = 614,400 B of lines
 *           (576,000 B of data), one step per slice, 8 in flight.
 *   Both    the receiver posts its head (an 8 B store into the sender's connection) when it has consumed a
 *           slice (device/prims_simple.h, prims_ll128.h: postRecv); a sender waits while its window of slots
 *           is full. Here a slice is consumed when it has landed (the reduction or copy out of the slot is
 *           not timed: the GPU's own reduce rate is above the link's).
 * Signals (the tail and head stores) are 8 B remote writes (`signal: write`, NCCL), or 8 B remote atomics
 * (`signal: atomic`: a put-with-signal, NVSHMEM's nvshmem_putmem_signal with NVSHMEM_SIGNAL_ADD, as
 * NVSHMEM-based collectives signal), which go through the receiver's atomic engine and its atomic credits.
 * `pull` (Simple only): the receiver reads the slice from its predecessor's buffer instead (NCCL's P2P read
 * mode, transport/p2p.cc, NCCL_P2P_READ_ENABLE; NCCL turns it on by default only between sm_80 GPUs): the
 * predecessor's tail says the data is ready, the successor's reads arrive at this receiver and its response
 * engine returns the data.
 *
 * Algorithms: the ring (all-reduce 2(n-1) steps, all-gather and reduce-scatter n-1 steps, a piece of S/n per
 * step and channel, nccl-tests' sizes as sim/coll/coll.h), on C channels, each its own connection with its own
 * slots, the bytes split evenly. Other collectives are not modelled at packet level (hs_fcoll_supported). */
#ifndef HS_FABRIC_COLL_H
#define HS_FABRIC_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/fabric/credit.h"
#include "sim/fabric/fabric.h"

enum hs_fcoll_proto { HS_FCOLL_SIMPLE, HS_FCOLL_LL128 };
extern const char *const hs_fcoll_proto_names[]; /* "simple", "ll128", NULL */
enum hs_fcoll_signal { HS_FCOLL_SIG_WRITE, HS_FCOLL_SIG_ATOMIC };
extern const char *const hs_fcoll_signal_names[]; /* "write", "atomic", NULL */

/* Metric classes of the fabric (hs_fabric_params.nclasses = HS_FCOLL_NCLS). */
enum { HS_FCOLL_CLS_DATA, HS_FCOLL_CLS_TAIL, HS_FCOLL_CLS_HEAD, HS_FCOLL_NCLS };
extern const char *const hs_fcoll_class_names[]; /* "data", "tail", "head" */

/* Ops of the collective (enum hs_coll_op values, models/ops.h) this model runs. */
enum { HS_FCOLL_ALL_REDUCE = 0, HS_FCOLL_ALL_GATHER = 1, HS_FCOLL_REDUCE_SCATTER = 2 };

typedef struct hs_fcoll {
	int op;        /* HS_FCOLL_* (the enum hs_coll_op value) */
	int n;         /* ranks in the ring, >= 2 */
	double bytes;  /* nccl-tests' size */
	int proto;     /* enum hs_fcoll_proto */
	int signal;    /* enum hs_fcoll_signal */
	int pull;      /* Simple: the receiver reads its slices (P2P read) */
	int channels;  /* >= 1 */
} hs_fcoll;

/* What a scenario's `simulation.packet` says for one node group's domains (docs/fabric.md): the receiver,
 * its credits and scheme, and how collectives move their bytes. */
typedef struct hs_fcoll_cfg {
	hs_fabric_params p;
	hs_credit_cfg credits;
	const hs_credit_scheme *scheme;
	int proto, signal, pull, channels;
} hs_fcoll_cfg;

/* 1 when this model runs `op` (all-reduce, all-gather, reduce-scatter). */
int hs_fcoll_supported(int op);

/* What one receiver saw. Bytes are payload bytes by operation kind (writes and notifies landed in its
 * memory, reads served from it, atomics executed). */
typedef struct hs_fcoll_out {
	hs_time time;        /* collective start to the last slice consumed */
	uint64_t events;     /* engine events */
	uint64_t ops;        /* operations issued */
	uint64_t bytes[HS_FOP_KINDS];
	uint64_t data_bytes; /* the collective's own payload into this receiver (protocol flags excluded) */
} hs_fcoll_out;

/* Run collective c at one receiver of fabric parameters p (sources and nclasses are set here) under scheme
 * s with credits cfg, on an engine of its own. With `stats` (HS_FCOLL_NCLS entries, initialised by the
 * caller), each class's latency and stall histograms are merged into it. */
void hs_fcoll_run(const hs_fabric_params *p, const hs_credit_scheme *s, const hs_credit_cfg *cfg, const hs_fcoll *c,
		  hs_fcoll_out *out, hs_fabric_class_stats *stats);

/* 0 when every operation a collective issues (a packet's write or read, an 8 B flag as a notify or an atomic)
 * fits the pools of scheme s (admission is all or nothing: one that does not could never be admitted); else -1
 * with why[n] saying which pool and operation. */
int hs_fcoll_check_fit(const hs_fabric_params *p, const hs_credit_scheme *s, const hs_credit_cfg *cfg, char *why,
		       size_t n);

/* The receiver's payload bytes of the collective in closed form: what the data of a ring step brings, times
 * the steps (all-reduce 2(n-1) S/n, all-gather and reduce-scatter (n-1) S/n), with whole bytes per channel
 * and slice as hs_fcoll_run cuts them. */
uint64_t hs_fcoll_closed_bytes(const hs_fcoll *c);

#endif
