/* Variability: devices that are slower than the rest, per-op noise, throttling at a given time, and the
 * number of steps to simulate. A scenario's `variability:` section; docs/heterogeneity.md. Any of these breaks
 * the symmetry between data-parallel replicas, so the executor then simulates every replica. */
#ifndef HS_VARIABILITY_H
#define HS_VARIABILITY_H

#include "config/yaml.h"
#include "sim/base/err.h"

enum hs_noise_dist { HS_NOISE_NONE, HS_NOISE_LOGNORMAL, HS_NOISE_GAMMA };

typedef struct hs_speed_rule {
	int first, last;  /* devices [first, last] */
	double speed;     /* relative speed: 0.7 runs at 70% (every op takes 1/0.7 as long) */
	double at;        /* seconds from the start of the first step (0: from the start) */
} hs_speed_rule;

typedef struct hs_variability {
	int steps;                 /* steps to simulate (>= 1) */
	enum hs_noise_dist noise;  /* per-op multiplicative noise, mean 1 */
	double noise_cv;           /* its coefficient of variation */
	hs_speed_rule *rules;      /* slowdowns (at = 0) and throttles (at > 0), in file order */
	int nrules;
} hs_variability;

/* Parse `variability:` (n may be NULL: defaults: 1 step, no noise, no rules). ngpus bounds device ranges. */
int hs_variability_from_yaml(const hs_ynode *n, int ngpus, hs_variability *out, hs_err *err);
void hs_variability_free(hs_variability *v);
/* Does anything vary between devices or steps? */
int hs_variability_active(const hs_variability *v);
/* Speed of device `gpu` for work starting at time t (seconds since the first step began): the last rule
 * that covers it and has started, else 1. */
double hs_variability_speed(const hs_variability *v, int gpu, double t);

#endif
