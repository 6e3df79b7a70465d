/* hs_scenario: a training scenario loaded from YAML and checked: the cluster, the model, the training
 * settings, the parallel strategy and the simulation options. Every key is documented in docs/scenario.md.
 * `--set a.b=v` overrides are applied to the YAML tree before anything is read, so they get the same checks.
 * The document stays alive with the scenario so that later checks (memory, divisibility) can point at the
 * line of the key that caused them. */
#ifndef HS_SCENARIO_H
#define HS_SCENARIO_H

#include <stdint.h>

#include "config/yaml.h"
#include "models/workload.h"
#include "sim/base/err.h"
#include "sim/exec/exec.h"
#include "sim/study/diloco.h"
#include "sim/base/strlist.h"
#include "sim/study/resilience.h"
#include "topology/cluster.h"

/* `cost:` (docs/scenario.md): prices and the power model behind sim/study/cost.h. */
#define HS_COST_MAX_PRICES 16
typedef struct hs_costopts {
	double gpu_hour;        /* flat price per GPU-hour; NAN when not given */
	int nprices;            /* per device type prices (cost: {gpu_hour: {H100-SXM-80GB: 2.5}}) */
	char price_dev[HS_COST_MAX_PRICES][64];
	double price[HS_COST_MAX_PRICES];
	double idle_power;      /* fraction of TDP drawn while not computing (default 0: power = TDP x utilisation) */
	double pue;             /* facility overhead multiplying energy (default 1) */
	char currency[16];      /* for display only (default "$") */
} hs_costopts;

typedef struct hs_scenario {
	hs_ydoc *doc;
	const hs_ynode *root;  /* where model, training and parallelism are: NULL for the document's root, or a
				* job's entry of `jobs:` (hs_scenario_job) */
	int borrowed_doc;      /* a job's: the document belongs to the jobs run, not to this scenario */
	int borrowed_cluster;  /* a sweep point's (hs_scenario_from_doc_on): the cluster is the sweep's */
	const char *path;
	char name[128];
	hs_cluster *cluster;
	hs_model model;
	hs_training train;
	hs_parallel par;
	hs_simopts sim;
	hs_variability var;
	hs_workload wl;        /* the layers below see the scenario through this view of the fields above; it points
				* into this struct, so a scenario is only ever handled by pointer */
	hs_resilience res;
	hs_diloco diloco;
	hs_costopts cost;
	struct hs_fcoll_cfg *packet; /* simulation.packet per node group (sim.packet points here) */
} hs_scenario;

/* The keys a scenario's top level may have, NULL-terminated (for readers of part of a scenario: `hetsim coll`). */
extern const char *const hs_scenario_keys[];

/* Load, apply overrides, check. Returns NULL with err (HS_EINPUT, or HS_EINFEASIBLE for a strategy that
 * cannot run on this cluster). */
hs_scenario *hs_scenario_load(const char *path, const struct hs_strlist *sets, hs_err *err);
/* The same from a parsed document, which the scenario takes over (freed with it, also on failure). */
hs_scenario *hs_scenario_from_doc(hs_ydoc *doc, const char *path, hs_err *err);
/* The same on `cluster`, built before from this document's `cluster:` section (hs_scenario_cluster), which the
 * scenario borrows: it must outlive the scenario. A sweep's points share the one cluster their overrides leave
 * alone, rather than each building it anew from the same nodes. */
hs_scenario *hs_scenario_from_doc_on(hs_ydoc *doc, const char *path, hs_cluster *cluster, hs_err *err);
/* The cluster hs_scenario_from_doc builds from a document with root `root` (its `cluster:` section, the fabric
 * profiles attached); NULL with err when it would fail there. */
hs_cluster *hs_scenario_cluster(const hs_ynode *root, hs_err *err);
/* The head every training document shares (a scenario, a jobs file): its `name` (the file's name when absent)
 * into name[n], and its `cluster` section built. -1 with err (file:line:col) on either. */
int hs_scenario_head(const hs_ynode *root, const char *path, char *name, size_t n, hs_cluster **cluster,
		     hs_err *err);
/* One job of a scenario with `jobs:` (sim/study/jobs.h) as a scenario of its own: model, training and
 * parallelism from the job's entry `job`, simulation options from the document's root, on `cluster` (the job's
 * nodes, hs_cluster_sub), which it takes over (freed with it, also on failure). The document stays the
 * caller's. No variability, resilience, DiLoCo or cost sections: a job has none. */
hs_scenario *hs_scenario_job(hs_ydoc *doc, const char *path, const hs_ynode *job, const char *name,
			     hs_cluster *cluster, hs_err *err);
void hs_scenario_free(hs_scenario *s);
/* Whether parallelism.expert_routing draws differ between the replicas of a stage (several EP groups per
 * stage: ep < dp x cp), so that symmetry must be off. */
int hs_scenario_routing_splits(const hs_scenario *s);
/* Position of a key for later messages ("parallelism.tp"); the root when absent. */
const hs_ynode *hs_scenario_node(const hs_scenario *s, const char *dotted);

/* What a scenario file describes (its `kind:` key, docs/scenario.md): a training step, or a scale-up fabric
 * experiment (sim/fabric/fabric_run.h). hs_scenario_kinds names them in this order; `hetsim run` maps each to
 * its runner. */
enum hs_scenario_kind { HS_KIND_TRAINING, HS_KIND_FABRIC, HS_KIND_COUNT };
extern const char *const hs_scenario_kinds[HS_KIND_COUNT + 1]; /* NULL-terminated */
/* The document's kind; HS_KIND_TRAINING when `kind:` is absent or names no kind (the training loader then
 * reports it, with the kinds it expects). */
enum hs_scenario_kind hs_scenario_kind(hs_ydoc *doc);

#endif
