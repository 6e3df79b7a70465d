/* hs_exec: runs a step's task graph (models/graph.h) on a cluster with the event engine.
 *
 * Each rep has a compute stream, a comm stream and a p2p stream; a stream runs its tasks in graph order, each
 * once its dependencies are done. Compute tasks take the time of their ops on the rep's device (the device
 * profile's roofline) plus the collectives inside them (TP, CP, EP); collective and p2p tasks take the time
 * of the network model. Collectives with a rendezvous id start when every member has arrived.
 *
 * Accounting: the compute stream's time splits into compute, communication that blocks it (by kind: inside
 * the layer, or waiting for gradients or pipeline transfers) and pipeline bubble (waiting for a neighbour
 * stage's work). For every rep, compute + exposed comm + bubble = its finish time. */
#ifndef HS_EXEC_H
#define HS_EXEC_H

#include <stdint.h>

#include "calib/profile_cache.h"
#include "models/build.h"
#include "models/workload.h"
#include "sim/base/err.h"
#include "sim/exec/layer_time.h"

/* How a step is simulated (the scenario's `simulation:` section, docs/scenario.md). */
enum hs_fidelity { HS_FID_ANALYTICAL, HS_FID_FLOW, HS_FID_PACKET };

/* Where a long run stands, for a progress line (the command layer prints it; sim/cli/cmd_run.c). */
typedef struct hs_progress {
	double sim_s;     /* simulated time so far */
	double horizon_s; /* the analytical estimate of the whole run, simulated seconds */
	uint64_t events;  /* engine events run so far */
	int final;        /* 1 on the call after the last event */
} hs_progress;
typedef void (*hs_progress_fn)(void *ctx, const hs_progress *p);

typedef struct hs_simopts {
	enum hs_fidelity fidelity;
	uint64_t seed;
	int steps;
	int symmetry;          /* simulate one representative per equivalence class */
	int layer_net;         /* layer_collectives: network (TP/CP/EP collectives inside a layer as flows; flow
				* fidelity only) */
	/* Called every 1/1000 of the horizon of simulated time (flow fidelity with a horizon; NULL: never): the
	 * engine runs in slices up to each, which changes no event and no result. */
	hs_progress_fn progress;
	void *progress_ctx;
	/* Time the step in closed form where its pattern allows (sim/exec/closed_step.c: communication by the closed
	 * forms, no rendezvous across replicas, no slowdowns or noise, one step), else by the event run; the two
	 * agree to rounding (tests/unit/exec/test_closed_step.c). 0: always the event run. */
	int closed_form;
	/* Record where each collective inside a compute task ran (hs_result.inl), for traces; 0: not kept. */
	int record_inlayer;
	/* Packet fidelity: the receiver model of each node group's scale-up domains (simulation.packet, [npacket],
	 * indexed by node group; owned by the scenario). Collectives inside one domain run on it
	 * (sim/exec/comm_packet.c). */
	const struct hs_fcoll_cfg *packet;
	int npacket;
	/* At the closed forms (analytical fidelity), compute per-link bytes into hs_result.links (comm_closed.c);
	 * 0: none (sweeps, a run whose outputs show no links). The flow model keeps its links whenever it has a
	 * horizon. */
	int record_links;
	/* simulation.network: the network model a flow-fidelity step's transfers run on, by name in
	 * hs_net_models[] ("flow", "ns3"); NULL: "flow" */
	const char *network;
} hs_simopts;

typedef struct hs_rep_result {
	int stage, dp_index;
	const char *device;  /* device type name */
	double finish_s;     /* end of its last task */
	double compute_s;    /* compute kernels on the compute stream */
	double optimizer_s;  /* the part of compute_s spent in the optimizer step */
	double class_s[HS_TC_COUNT]; /* compute_s by kind of kernel, and the device's waits for the host */
	double exposed_s[HS_GROUP_COUNT]; /* communication that blocked the compute stream, by group kind */
	double bubble_s;     /* waiting for neighbour stages */
	double offload_s;    /* waiting for host offload: copies over the host link and the CPU optimizer step */
	double straggler_wait_s; /* at data-parallel collectives, waiting for the slowest member */
	double flops;        /* per real rank, recompute included */
	double mem_bytes;    /* per real rank, peak */
	double mem_capacity; /* device capacity minus reserve */
} hs_rep_result;

/* When each task of the graph ran (seconds from the step's start), indexed like hs_graph.tasks. */
typedef struct hs_span {
	double start, end;
} hs_span;

/* A collective inside compute task `task` (its op `op`: TP, CP or EP in a layer), when it ran in the step
 * (seconds from the step's start): at the closed forms, where op timing places it inside the task (kernels
 * before it scaled as the task's compute was, collectives not); on the network, as it ran there. */
typedef struct hs_inl_span {
	uint32_t task, op;
	double start, end;
} hs_inl_span;

/* The busiest links of a run: utilisation over time (flow fidelity), or the closed forms' per-link bytes over
 * one bin spanning the run (analytical fidelity); for HDF5 and reports. */
typedef struct hs_link_util {
	int nlinks, nbins;
	double bin_s;
	char **names;          /* [nlinks] "n0.nic3->leaf2" */
	double *capacity_Bps;  /* [nlinks] */
	double *mean_util;     /* [nlinks] over the whole run */
	double *bytes;         /* [nlinks] carried over the whole run (the links are in decreasing order of it) */
	double *util;          /* [nlinks * nbins] busy fraction per bin, row per link */
} hs_link_util;

typedef struct hs_result {
	double step_time_s;  /* mean over the simulated steps (figures per rank are means too) */
	int steps;
	double step_p50_s, step_p99_s, step_min_s, step_max_s;
	double *step_times;  /* [steps] */
	int critical_rep;    /* rep whose finish defines the step */
	hs_rep_result *reps;
	int nreps;
	uint64_t events;
	uint64_t tasks;
	double model_flops;  /* per step, cluster: no recompute */
	double hw_flops;     /* per step, cluster: recompute included */
	double peak_flops;   /* sum over devices of peak FLOP/s in the training precision */
	double mfu, hfu, tokens_per_s;
	double mem_peak_bytes;
	int mem_peak_rep;
	hs_span *spans;      /* [tasks]: the timeline, for traces and reports */
	hs_inl_span *inl;    /* with hs_simopts.record_inlayer: the last step's in-layer collectives, by start */
	size_t ninl;
	hs_link_util links;  /* the busiest links: over time at flow fidelity; at analytical fidelity (with
			      * hs_simopts.record_links) their bytes from the closed forms' routes, one bin */
	int closed_form;     /* 1: timed in closed form on the task graph, 2: from the schedule's items (events is 0; no
			      * timeline); 0: by the event run */
	const char *event_why; /* with closed_form asked for and not taken: why (a static string); else NULL */
	uint64_t items_walked, items_extrapolated; /* closed_form 2: the schedule's items timed one by one, and
						    * those of a repeating stretch taken as shifted periods */
} hs_result;

/* Run one step of workload w's graph b with options o. Returns -1 with err on failure (a profile that cannot
 * be loaded, ...). Profiles come from `cache` (NULL: loaded for this call and freed after). `horizon_s`, an
 * estimate of the run's length (seconds; 0: none), sizes the flow model's link-utilisation bins. */
int hs_exec_step(const hs_workload *w, const hs_simopts *o, const hs_build *b, hs_profile_cache *cache,
		 double horizon_s, hs_result *out, hs_err *err);
/* hs_exec_step's answer for a build of schedule items (hs_build.pipe, hs_build_step_items) that the item walk
 * (sim/exec/pipe_step.c) cannot time exactly (two waits of different kinds ending at one instant: the event
 * run's order decides their charge): nothing is in *out; plan the step as a task graph and run that. */
#define HS_EXEC_NEEDS_GRAPH 1
/* Is a step of w under o one the item walk times (the closed form asked for, analytical fidelity, one step,
 * no slowdowns, noise or drawn MoE routing, no per-link bytes or in-layer trace)? Where it is, a caller may
 * plan it with hs_build_step_items; the result then has no timeline (no spans). */
int hs_exec_items_ok(const hs_workload *w, const hs_simopts *o);
void hs_result_free(hs_result *r);

/* One collective the packet fidelity runs on the fabric model, as a step of b issues it at the receivers of
 * rep 0's domain: what it is (op, ranks, bytes; the protocol from o->packet), how many times a step runs it
 * (in-layer collectives of sliced tasks count their share) and its node group. */
typedef struct hs_packet_use {
	int op, n, group;
	double bytes, count;
} hs_packet_use;
/* The collectives of one step of b that packet fidelity puts on the fabric model (sim/exec/comm_packet.c's
 * rule), rep 0's, distinct (op, n, bytes, group) with their counts, in the order first met; *out is malloc'd
 * (free it). */
size_t hs_exec_packet_uses(const hs_workload *w, const hs_simopts *o, const hs_build *b, hs_packet_use **out);

/* One job of several on one cluster (hs_exec_jobs): its workload on the job's own nodes (a cluster of their own,
 * hs_cluster_sub, devices numbered from 0), its graph, built without symmetry, and where its devices are on the
 * whole cluster: device i of the job is device dev0 + i there. */
typedef struct hs_exec_job {
	const hs_workload *w;
	const hs_build *b;
	int dev0;
} hs_exec_job;

/* Run the jobs together at flow fidelity: one engine, one flow network over `cluster`, one executor per job
 * (sim/exec/jobs.c), so that the jobs' collectives and sends share the links they cross. Every rep and every
 * TP x CP lane runs (o->symmetry is ignored: a representative would keep its replicas' traffic off the shared
 * links). All start at time 0; a job that has run its steps keeps running steps that count nowhere until every
 * job has run its own, at most max_steps in all (HS_EINFEASIBLE past it). out[njobs] gets each job's result, as
 * hs_exec_step gives it, except `events` (the whole run's) and no link timeline. */
int hs_exec_jobs(const hs_cluster *cluster, const hs_exec_job *jobs, int njobs, const hs_simopts *o,
		 hs_profile_cache *cache, int max_steps, hs_result *out, hs_err *err);

#endif
