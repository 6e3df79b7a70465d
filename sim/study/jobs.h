/* Several training jobs on one cluster (`jobs:`, docs/scenario.md): each job has its own model, training and
 * parallelism and is placed on a range of the cluster's nodes; all run together at flow fidelity on one
 * network, so their collectives share the links they cross (sim/exec/exec.h, hs_exec_jobs). Each job also runs
 * alone on the same nodes of the same network, and its slowdown is its step time together over alone.
 *
 * A job is a scenario of its own (hs_scenario_job) on a cluster cut to its nodes (hs_cluster_sub): its
 * parallelism divides its own GPUs, its ranks are numbered from 0 on its first node, and its traffic on the
 * shared network leaves from the devices of its range. */
#ifndef HS_JOBS_H
#define HS_JOBS_H

#include "calib/profile_cache.h"
#include "config/yaml.h"
#include "models/build.h"
#include "sim/base/err.h"
#include "sim/exec/exec.h"
#include "sim/study/scenario.h"
#include "topology/cluster.h"

/* The most jobs one scenario runs, and the most steps a job runs while the others finish their own (a job
 * whose step is 1000 times shorter than another's: exit 3, rather than unbounded work). */
#define HS_JOBS_MAX 64
#define HS_JOBS_MAX_STEPS 1000

typedef struct hs_job {
	char name[64];
	char nodes[64];      /* the placement as written ("0-15", "h100:0-3") */
	int node0, nnodes;   /* its nodes on the cluster: [node0, node0 + nnodes) */
	int dev0, ndev;      /* its devices: [dev0, dev0 + ndev) */
	hs_scenario *s;      /* the job on its own nodes */
	hs_build b;          /* its graph, built without symmetry */
	hs_result alone;     /* on its nodes with the rest of the cluster idle */
	hs_result together;  /* beside every other job */
	double slowdown;     /* together.step_time_s / alone.step_time_s */
} hs_job;

typedef struct hs_jobs {
	hs_ydoc *doc;
	const char *path;
	char name[128];
	hs_cluster *cluster; /* the whole cluster, whose network the jobs share */
	hs_simopts sim;      /* the scenario's `simulation:` (fidelity flow; symmetry off whatever it says) */
	int njobs;
	hs_job *jobs;
	uint64_t events;     /* engine events of the run together */
} hs_jobs;

/* Does the document describe several jobs (a `jobs:` key at its top)? */
int hs_jobs_in(hs_ydoc *doc);
/* Load the jobs of `doc` (taken over: freed with out, also on failure), check their placements and plan each
 * (HS_EINFEASIBLE: a job that does not fit its nodes). On failure nothing needs freeing. */
int hs_jobs_load(hs_ydoc *doc, const char *path, hs_jobs *out, hs_err *err);
/* Run each loaded job alone and all together (their results into J->jobs). Profiles come from `cache`
 * (NULL: loaded for this call). On failure J stays loaded (hs_jobs_free it). */
int hs_jobs_simulate(hs_jobs *J, hs_profile_cache *cache, hs_err *err);
/* Both. */
int hs_jobs_run(hs_ydoc *doc, const char *path, hs_profile_cache *cache, hs_jobs *out, hs_err *err);
void hs_jobs_free(hs_jobs *j);

#endif
