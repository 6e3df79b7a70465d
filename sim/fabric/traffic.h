/* hs_traffic: operation generators for the scale-up fabric (sim/fabric/fabric.h).
 *
 * Traffic is a list of groups. A group is a number of sources sharing an arrival process (open loop:
 * Poisson or periodic at a per-source rate; closed loop: a window of outstanding operations per source)
 * and a weighted mix of operation classes (kind, size, address pattern). Every class is a metric class of
 * the fabric. Each source draws from its own GSL stream (seed, stream 1000 + source), so a seed always
 * gives the same operations, and changing one group never shifts another's draws.
 *
 * Named mixes (hs_traffic_mix) are the published experiments' shapes, written as YAML `groups:` lists. */
#ifndef HS_TRAFFIC_H
#define HS_TRAFFIC_H

#include <stdint.h>

#include "sim/engine/engine.h"
#include "sim/fabric/fabric.h"

/* Arrival processes. HS_ARR_STEPS is bulk-synchronous, the shape of a collective: in each step every source
 * of the group issues `count` operations of each class, in the order listed, at once; the step ends when
 * every operation of the group's step has completed (the step dependency of a ring or tree), and the next
 * starts `gap` later. */
enum hs_arrival { HS_ARR_POISSON, HS_ARR_PERIODIC, HS_ARR_CLOSED, HS_ARR_STEPS };
extern const char *const hs_arrival_names[]; /* "poisson", "periodic", "closed", "steps", NULL */

#define HS_TRAFFIC_MAX_CLASSES 8
#define HS_TRAFFIC_MAX_GROUPS 8

typedef struct hs_traffic_class {
	char name[64];
	int kind;           /* enum hs_fabric_op */
	uint32_t size;      /* payload bytes */
	double weight;      /* relative share within its group (not for steps) */
	uint32_t count;     /* steps: operations of this class per source per step (>= 1) */
	double hot_frac;    /* probability that an operation targets the hot region */
	uint64_t hot_bytes; /* hot region [0, hot_bytes) */
	int id;             /* fabric metric class */
} hs_traffic_class;

typedef struct hs_traffic_group {
	char name[32];
	int first_src, nsrc;
	int arrival;     /* enum hs_arrival */
	double interval; /* open loop: mean picoseconds between a source's operations */
	int window;      /* closed loop: outstanding operations per source */
	hs_time gap;     /* steps: time from the end of one step to the start of the next */
	int nclasses;
	hs_traffic_class cls[HS_TRAFFIC_MAX_CLASSES];
} hs_traffic_group;

typedef struct hs_traffic {
	int ngroups;
	hs_traffic_group g[HS_TRAFFIC_MAX_GROUPS];
	uint64_t address_space; /* bytes; uniform addresses fall in [0, address_space) */
	uint64_t ops;           /* operations to issue in all (0: until `duration`) */
	hs_time duration;       /* stop issuing at this time (0: after `ops`) */
	uint64_t warmup;        /* the first `warmup` operations issued are not measured */
	uint64_t seed;
} hs_traffic;

/* Total sources and metric classes (classes are numbered in group order). */
int hs_traffic_sources(const hs_traffic *t);
int hs_traffic_nclasses(const hs_traffic *t);

/* Issue the traffic on `f` (created with hs_traffic_sources sources and nclasses classes) and run `eng`
 * until every operation has completed. Returns the number of operations issued. */
uint64_t hs_traffic_run(const hs_traffic *t, hs_engine *eng, hs_fabric *f);

/* YAML text of the `groups:` list of a named mix, or NULL. hs_traffic_mix_names: NULL-terminated. */
const char *hs_traffic_mix(const char *name);
extern const char *const hs_traffic_mix_names[];

#endif
