#include "config/variability.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"

static const char *const keys[] = {"steps", "noise", "slowdown", "throttle", NULL};
static const char *const noise_keys[] = {"distribution", "cv", NULL};
static const char *const slow_keys[] = {"gpus", "speed", NULL};
static const char *const thr_keys[] = {"gpus", "speed", "at", NULL};
static const char *const dists[] = {"none", "lognormal", "gamma", NULL};

/* gpus: an integer, "a-b", or a list of those; each range becomes one rule. */
static int add_ranges(const hs_ynode *g, const char *path, int ngpus, double speed, double at, hs_variability *v,
		      hs_err *err)
{
	size_t n = g->kind == HS_Y_SEQ ? g->n : 1;
	for (size_t i = 0; i < n; i++) {
		const hs_ynode *it = g->kind == HS_Y_SEQ ? g->vals[i] : g;
		if (it->kind != HS_Y_SCALAR)
			return hs_cfg_err(it, err, path, "gpus", "expected a device index or range such as 0-7");
		long a, b;
		char *end;
		a = strtol(it->str, &end, 10);
		if (end == it->str)
			return hs_cfg_err(it, err, path, "gpus", "'%s' is not a device index or range (expected 5 or 0-7)",
					  it->str);
		b = a;
		if (*end == '-') {
			char *e2;
			b = strtol(end + 1, &e2, 10);
			if (e2 == end + 1 || *e2)
				return hs_cfg_err(it, err, path, "gpus", "'%s' is not a range (expected 0-7)", it->str);
		} else if (*end) {
			return hs_cfg_err(it, err, path, "gpus", "'%s' is not a device index or range (expected 5 or 0-7)",
					  it->str);
		}
		if (b < a)
			return hs_cfg_err(it, err, path, "gpus", "'%s' runs from high to low (expected %ld-%ld)", it->str, b,
					  a);
		if (a < 0 || b >= ngpus)
			return hs_cfg_err(it, err, path, "gpus", "'%s' is outside the cluster's devices 0-%d", it->str,
					  ngpus - 1);
		v->rules = hs_xrealloc(v->rules, (size_t)(v->nrules + 1) * sizeof *v->rules);
		v->rules[v->nrules++] = (hs_speed_rule){(int)a, (int)b, speed, at};
	}
	return 0;
}

static int rules(const hs_ynode *list, const char *name, const char *const *k, int ngpus, hs_variability *v,
		 hs_err *err)
{
	if (!list)
		return 0;
	if (list->kind != HS_Y_SEQ)
		return hs_cfg_err(list, err, "variability", name, "expected a list of {gpus, speed%s}",
				  k == thr_keys ? ", at" : "");
	for (size_t i = 0; i < list->n; i++) {
		char path[64];
		snprintf(path, sizeof path, "variability.%s[%zu]", name, i);
		const hs_ynode *r = list->vals[i];
		double speed, at = 0;
		if (hs_cfg_known(r, path, k, "a mapping {gpus, speed}", err) ||
		    hs_cfg_num(r, path, "speed", HS_U_COUNT, 1e-3, 1e3, 1, 1, &speed, err))
			return -1;
		if (k == thr_keys && hs_cfg_num(r, path, "at", HS_U_TIME, 0, 1e12, 0, 1, &at, err))
			return -1;
		const hs_ynode *g = hs_yaml_get(r, "gpus");
		if (!g)
			return hs_cfg_err(r, err, path, "gpus", "missing required key");
		if (add_ranges(g, path, ngpus, speed, at, v, err))
			return -1;
	}
	return 0;
}

int hs_variability_from_yaml(const hs_ynode *n, int ngpus, hs_variability *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->steps = 1;
	if (!n)
		return 0;
	if (hs_cfg_known(n, "variability", keys, "a mapping {steps, noise, slowdown, throttle}", err))
		return -1;
	int64_t steps;
	if (hs_cfg_int(n, "variability", "steps", 1, 100000, 1, 0, &steps, err))
		return -1;
	out->steps = (int)steps;
	const hs_ynode *nz = hs_yaml_get(n, "noise");
	if (nz) {
		int d;
		if (hs_cfg_known(nz, "variability.noise", noise_keys, "a mapping {distribution, cv}", err) ||
		    hs_cfg_enum(nz, "variability.noise", "distribution", dists, 1, &d, err) ||
		    hs_cfg_num(nz, "variability.noise", "cv", HS_U_COUNT, 0, 10, 0, 1, &out->noise_cv, err))
			return -1;
		out->noise = (enum hs_noise_dist)d;
		if (out->noise_cv == 0)
			out->noise = HS_NOISE_NONE;
	}
	if (rules(hs_yaml_get(n, "slowdown"), "slowdown", slow_keys, ngpus, out, err) ||
	    rules(hs_yaml_get(n, "throttle"), "throttle", thr_keys, ngpus, out, err)) {
		hs_variability_free(out);
		return -1;
	}
	return 0;
}

void hs_variability_free(hs_variability *v)
{
	free(v->rules);
	v->rules = NULL;
	v->nrules = 0;
}

int hs_variability_active(const hs_variability *v)
{
	return v->noise != HS_NOISE_NONE || v->nrules > 0;
}

double hs_variability_speed(const hs_variability *v, int gpu, double t)
{
	double s = 1;
	for (int i = 0; i < v->nrules; i++) {
		const hs_speed_rule *r = &v->rules[i];
		if (gpu >= r->first && gpu <= r->last && t >= r->at)
			s = r->speed;
	}
	return s;
}
