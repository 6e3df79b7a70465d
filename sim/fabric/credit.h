/* hs_credit: admission schemes for a scale-up fabric's receiver, as function tables.
 *
 * A scheme says which credit pools the receiver grants (up to HS_CREDIT_POOLS, each with a capacity), what an
 * operation demands from each pool, and how much of what it holds comes back when each of its stages at the
 * target completes. The fabric (sim/fabric/fabric.c) does the bookkeeping: an operation is admitted only when every
 * pool can cover its whole demand (all or nothing), returned amounts travel back to the senders with the
 * credit latency, and whatever an operation still holds when its last target stage completes is returned
 * then. Pools never go negative.
 *
 * To add a scheme: write sim/credit_<name>.c defining `const hs_credit_scheme hs_credit_<name>` (pools,
 * demand, release) and add its address to hs_credit_schemes[] in sim/fabric/credit.c. Nothing else changes; every
 * scenario can then list it under `schemes:`. */
#ifndef HS_CREDIT_H
#define HS_CREDIT_H

#include <stdint.h>

#include "sim/base/time.h"

#define HS_CREDIT_POOLS 4

/* Operation kinds a source can issue. */
enum hs_fabric_op { HS_FOP_READ, HS_FOP_WRITE, HS_FOP_ATOMIC, HS_FOP_NOTIFY, HS_FOP_KINDS };
extern const char *const hs_fabric_op_names[]; /* "read", "write", "atomic", "notify", NULL */

/* Stages of an operation at the target, in the order they can complete. */
enum hs_stage {
	HS_STAGE_HBM,    /* all its HBM partition accesses are done (read, write, notify) */
	HS_STAGE_ATOMIC, /* the atomic engine executed it (atomic) */
	HS_STAGE_RESP,   /* the response engine injected its response: the target is done with it */
	HS_STAGE_N
};

/* What one operation asks of the target, in natural units. */
typedef struct hs_credit_op {
	int kind;            /* enum hs_fabric_op */
	uint32_t size;       /* payload bytes */
	uint32_t req_bytes;  /* bytes that land in the receive buffer, headers included */
	uint32_t hbm_bytes;  /* bytes read or written in HBM; 0: no HBM stage */
	uint32_t atomics;    /* atomic executions: 0 or 1 */
	uint32_t resp_bytes; /* bytes the response engine injects, headers included */
} hs_credit_op;

/* Pool sizes a scenario can set (`credits:`); 0 means "derive the default" (see hs_credit_defaults). */
typedef struct hs_credit_cfg {
	int64_t cell;         /* smallest byte charge: a byte credit covers whole cells (default 64 B) */
	int64_t bytes;        /* single pool, bytes (default: the receive buffer) */
	int64_t hbm;          /* per-resource and vector HBM pool, bytes (default: receive buffer) */
	int64_t atomic_bytes; /* per-resource atomic pool, bytes (default: receive buffer) */
	int64_t resp;         /* per-resource and vector response pool, bytes (default: receive buffer) */
	int64_t atomic;       /* vector atomic pool, atomic executions (default: the atomic queue depth) */
	int per_sender;       /* 0: every pool is shared by all senders; 1: each sender owns capacity / senders
			       * of every pool (NVLink-style credits per link; see hs_credit_share) */
} hs_credit_cfg;

/* Fill zero fields: byte pools default to the receive buffer (the buffer they protect); the vector atomic
 * pool defaults to the depth of the atomic engine's queue (the queue it protects). */
void hs_credit_defaults(hs_credit_cfg *c, int64_t rxbuf, int64_t atomic_depth);

/* The capacity one credit set holds: the whole pool when shared, floor(cap / senders) per sender. */
static inline int64_t hs_credit_share(const hs_credit_cfg *c, int64_t cap, int senders)
{
	return c->per_sender && senders > 0 ? cap / senders : cap;
}

/* Whole cells covering `b` bytes, in bytes (0 stays 0). */
static inline int64_t hs_credit_cells(const hs_credit_cfg *c, int64_t b)
{
	return b <= 0 ? 0 : ((b + c->cell - 1) / c->cell) * c->cell;
}

typedef struct hs_credit_scheme {
	const char *name;
	const char *about; /* one line for docs and --help */
	/* Name and capacity of each pool; returns how many (0 to HS_CREDIT_POOLS). */
	int (*pools)(const hs_credit_cfg *cfg, const char **names, int64_t *cap);
	/* need[i]: what `op` takes from pool i when admitted. */
	void (*demand)(const hs_credit_cfg *cfg, const hs_credit_op *op, int64_t *need);
	/* give[i] (<= held[i]): what comes back when `stage` of `op` completes. Stages an operation does not
	 * have are not reported; after its last stage the fabric returns what is still held. */
	void (*release)(const hs_credit_cfg *cfg, const hs_credit_op *op, int stage, const int64_t *held,
			int64_t *give);
} hs_credit_scheme;

/* Every scheme, NULL-terminated, in the order tables print them. */
extern const hs_credit_scheme *const hs_credit_schemes[];
const hs_credit_scheme *hs_credit_find(const char *name);

#endif
