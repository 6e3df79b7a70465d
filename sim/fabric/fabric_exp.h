/* hs_fabric_exp: a parsed fabric scenario and the outcome of running it under one scheme. This is what
 * hs_fabric_run (sim/fabric/fabric_run.h) is built from; tests and benchmarks use it to read numbers directly. */
#ifndef HS_FABRIC_EXP_H
#define HS_FABRIC_EXP_H

#include <stdint.h>

#include "config/yaml.h"
#include "sim/fabric/credit.h"
#include "sim/base/err.h"
#include "sim/fabric/fabric.h"
#include "sim/engine/stats.h"
#include "sim/fabric/traffic.h"

#define HS_FABRIC_MAX_SCHEMES 16

typedef struct hs_fabric_exp_spec {
	const char *name;
	hs_fabric_params p;
	hs_credit_cfg credits;
	hs_traffic traffic;
	const hs_credit_scheme *schemes[HS_FABRIC_MAX_SCHEMES];
	int nschemes;
	const hs_credit_scheme *baseline;
	uint32_t small_max;     /* bytes: the `small` focus keyword means classes of at most this size */
	char focus_desc[160];   /* what the focus aggregate holds, for the table */
	uint8_t focus[HS_TRAFFIC_MAX_GROUPS * HS_TRAFFIC_MAX_CLASSES]; /* per class id: in the focus set */
} hs_fabric_exp_spec;

int hs_fabric_exp_parse(hs_ydoc *doc, hs_fabric_exp_spec *s, hs_err *err);
/* The same for a replay of recorded traffic (hetsim run --traffic-from): the `traffic:` section is not read. */
int hs_fabric_exp_parse_replay(hs_ydoc *doc, hs_fabric_exp_spec *s, hs_err *err);

/* The `fabric:` and `credits:` mappings (docs/fabric.md) at `m` (NULL: nothing to change), `path` naming it in
 * messages ("fabric", "simulation.packet.fabric"): what they set overrides *p and *c, the rest stays. */
int hs_fabric_parse_params(const hs_ynode *m, const char *path, hs_fabric_params *p, hs_err *err);
int hs_fabric_parse_credits(const hs_ynode *m, const char *path, hs_credit_cfg *c, hs_err *err);

typedef struct hs_fabric_lat {
	uint64_t ops;
	double p50, p99, p999, mean; /* ns */
	double ops_per_s, GB_per_s;
	double stall_mean, stall_p99; /* ns */
} hs_fabric_lat;

enum { HS_FQ_RXBUF, HS_FQ_INGRESS, HS_FQ_HBM, HS_FQ_ATOMIC, HS_FQ_RESP, HS_FQ_ADMIT, HS_FQ_FWD, HS_FQ_N };
extern const char *const hs_fabric_queue_names[]; /* rxbuf_bytes, ingress, hbm_max_partition, ... */

typedef struct hs_fabric_queue_sum {
	double mean, max;
	double bin_ns;
	size_t nbins;
	double series[HS_OCC_BINS];
} hs_fabric_queue_sum;

typedef struct hs_fabric_outcome {
	const hs_credit_scheme *scheme;
	int nclasses;
	hs_fabric_lat cls[HS_TRAFFIC_MAX_GROUPS * HS_TRAFFIC_MAX_CLASSES];
	hs_fabric_lat focus;
	hs_fabric_queue_sum q[HS_FQ_N];
	int npools;
	const char *pool_names[HS_CREDIT_POOLS];
	int64_t pool_cap[HS_CREDIT_POOLS], pool_min[HS_CREDIT_POOLS], pool_end[HS_CREDIT_POOLS];
	uint64_t issued, events;
	double sim_us;
	/* Little's law on every queue: largest |L - lambda W| / max(L, 1e-12) over queues. */
	double little_err;
} hs_fabric_outcome;

/* Run the spec's traffic under `scheme`. */
void hs_fabric_exp_run(const hs_fabric_exp_spec *s, const hs_credit_scheme *scheme, hs_fabric_outcome *o);

#endif
