/* hs_fabprof: a fabric profile, what nccl-tests measured on a cluster against what hetsim's NCCL model
 * (sim/coll/coll_nccl.c) predicts for it, as a few fitted corrections that predictions then use.
 *
 * An entry holds, for one collective, scope (inside a scale-up domain, across domains) and protocol regime
 * (the protocol the model's tuner runs at that size: LL, LL128, Simple; "any" pools a scope's regimes), a
 * latency scale and an efficiency:
 *
 *     t = latency_scale * lat + bytes / (efficiency * bw)
 *
 * lat and bw being the model's latency and algorithm bandwidth for the call. Over size the achieved bandwidth
 * bytes / t is a curve: it rises through each regime as the latency is amortised, and steps where the tuner
 * changes protocol, each regime with its own efficiency. A ramp inside a regime such as efficiency *
 * S / (S + s_half) would add nothing: lat and bw are constant inside a regime, so it is the same as a larger
 * latency (s_half / (efficiency * bw) seconds), which the latency scale already fits. Fitted by weighted linear
 * least squares (GSL, weights 1/t^2: relative error) in (latency_scale, 1/efficiency). Files are YAML (docs/calibration.md); `hetsim calib import-nccl-tests
 * --scenario` writes them, `cluster.fabric_profile:` (or a node group's) names one. */
#ifndef HS_FABRIC_H
#define HS_FABRIC_H

#include <stddef.h>

#include "sim/base/err.h"
#include "topology/cluster.h"

typedef struct hs_fabprof hs_fabprof;

enum { HS_FAB_INTRA, HS_FAB_INTER };

typedef struct hs_fab_entry {
	char collective[32]; /* "all_reduce", ... (hs_coll_op_name) */
	int scope;           /* HS_FAB_INTRA or HS_FAB_INTER */
	char proto[8];       /* "LL", "LL128", "Simple" (hs_coll_proto_name), or "any" */
	double lat_scale, eff;
	int points;          /* rows fitted */
	double mape;         /* busbw MAPE of those rows with the correction, percent */
} hs_fab_entry;

/* One measured row with the model's view of it (what the fit needs; the command layer computes lat and bw). */
typedef struct hs_fab_row {
	const char *collective;
	int scope;
	const char *proto; /* the protocol the model runs */
	double bytes, t;   /* measured seconds */
	double lat, bw;    /* the model's latency (s) and algorithm bandwidth (bytes/s) */
	int log;           /* index of the log the row came from (for leave-one-out) */
} hs_fab_row;

/* What the logs were measured on. A profile applies to node groups of the same shape: GPUs per node and
 * scale-up kind (the GPU and NICs are recorded for the reader). */
typedef struct hs_fab_shape {
	char gpu[64];
	int gpus_per_node;
	char scaleup[32];
	double nic_bw;
	int nics_per_node;
} hs_fab_shape;

/* Fit every (collective, scope, protocol) of rows[0..n-1] with log != skip (-1: none skipped), and the pooled
 * "any" entry of every (collective, scope). NULL with err when no row is usable. */
hs_fabprof *hs_fabprof_fit(const hs_fab_row *rows, size_t n, int skip, const hs_fab_shape *shape, const char *name,
			   hs_err *err);
void hs_fabprof_free(hs_fabprof *p);

/* The entry that times a call: (collective, scope, protocol), else the scope's pooled entry; NULL when the
 * profile has neither (the model's time stands: a profile says nothing about a scope it did not measure). */
const hs_fab_entry *hs_fabprof_lookup(const hs_fabprof *p, const char *collective, int scope, const char *proto);
/* The corrected time of a call the model times as lat + bytes / bw. */
double hs_fab_entry_time(const hs_fab_entry *e, double bytes, double lat, double bw);

size_t hs_fabprof_nentries(const hs_fabprof *p);
const hs_fab_entry *hs_fabprof_entry(const hs_fabprof *p, size_t i);
const hs_fab_shape *hs_fabprof_shape(const hs_fabprof *p);
const char *hs_fabprof_name(const hs_fabprof *p);
/* Free text kept with the profile (its sources and leave-one-log-out errors); set before saving. */
void hs_fabprof_set_note(hs_fabprof *p, const char *source, const char *note);

/* Load a profile file; errors name file:line:col (HS_EINPUT). */
hs_fabprof *hs_fabprof_load(const char *path, hs_err *err);
/* The same from a document already parsed (`path` names it in messages; the profile does not borrow it). */
hs_fabprof *hs_fabprof_from_doc(hs_ydoc *doc, const char *path, hs_err *err);
/* Write as YAML (temporary file, then rename). `extra` (may be NULL) is appended verbatim (the per-log
 * alpha-beta table). */
int hs_fabprof_save(const hs_fabprof *p, const char *path, const char *extra, hs_err *err);

/* For every node group of `c` that names a fabric_profile: load it and attach it to the group (every group
 * naming the same file gets its own copy). -1 with err (HS_EINPUT, at the key's file:line:col) when a file
 * does not load or was measured on another cluster shape. Call once, right after hs_cluster_from_yaml. */
int hs_fabprof_attach(hs_cluster *c, hs_err *err);

#endif
