/* DiLoCo-style low-communication training across sites (Douillard et al. 2023, "DiLoCo: Distributed
 * Low-Communication Training of Language Models").
 *
 * The cluster's devices are split into sites (by default one per node group) joined by a wide-area link. Every
 * inner step synchronises gradients only inside a site (the data-parallel group of a replica is its site's
 * replicas; models/build.c numbers replicas site-major). Every H inner steps the sites average their parameter
 * deltas: an outer all-reduce of params x 4 bytes x compression over the WAN, then an all-gather inside each
 * site. The simulated step is the inner step; hs_diloco_outer prices the outer synchronisation and the effective
 * step, inner + outer / H (and, with variability.steps >= H, the simulated steps with the outer sync inserted
 * after every H-th). */
#ifndef HS_DILOCO_H
#define HS_DILOCO_H

#include "config/yaml.h"
#include "sim/base/err.h"

typedef struct hs_diloco {
	int enabled;
	int inner_steps;     /* H: inner steps between outer synchronisations */
	double compression;  /* outer_compression: bytes sent / fp32 bytes (1: fp32 deltas; 0.25: 8-bit) */
	int sites;           /* 0: one site per node group */
	double wan_bw;       /* bytes/s per site and direction over the WAN; 0: from the cluster's fabric */
	double wan_lat;      /* seconds one WAN message takes; < 0: from the cluster's fabric */
} hs_diloco;

/* Parse `diloco:` (n may be NULL: disabled). */
int hs_diloco_from_yaml(const hs_ynode *n, hs_diloco *out, hs_err *err);

struct hs_scenario;
struct hs_build;
struct hs_result;

typedef struct hs_diloco_out {
	int sites, inner_steps;
	double params;        /* whole model */
	double outer_bytes;   /* params x 4 x compression */
	double wan_bw, wan_lat;
	double inner_s;       /* the simulated (inner) step: mean over simulated steps */
	double outer_wan_s;   /* ring all-reduce of outer_bytes over the sites' WAN links */
	double outer_site_s;  /* all-gather of the averaged parameters inside a site (slowest stage) */
	double outer_s;       /* outer_wan_s + outer_site_s */
	double effective_s;   /* inner_s + outer_s / H */
	double simulated_s;   /* with variability.steps >= H: mean of the simulated steps with the outer sync
			       * after every H-th; 0 otherwise */
	double sync_wan_s;    /* for comparison: a synchronous fp32 gradient all-reduce across the sites' WAN
			       * every step would take at least this (lower bound: no overlap hides it) */
} hs_diloco_out;

/* Price the outer synchronisation of a simulated inner step. */
void hs_diloco_outer(const struct hs_scenario *s, const struct hs_build *b, const struct hs_result *r,
		     hs_diloco_out *out);
/* Seconds of a ring all-reduce of `bytes` over n sites: 2 (n - 1) (lat + bytes / (n bw)). */
double hs_diloco_wan_allreduce(int n, double bytes, double bw, double lat);

#endif
