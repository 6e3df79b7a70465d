/* The executor's private state, shared by its files and by no one else (sim/exec/exec.h is the interface).
 *
 *   exec.c         the core: readiness, streams, rendezvous, the step loop
 *   comm_closed.c  communication tasks timed by the closed forms (sim/coll): one event at now + their time
 *   comm_net.c     communication tasks carried by a network model (sim/net), lane by lane: flow fidelity
 *   inlayer.c      collectives inside compute tasks on the network: segments and lanes (flow fidelity)
 *   result.c       accounting into hs_result: per-step finish times, means, quantiles, busiest links
 *
 * Time inside the executor is hs_time (integer picoseconds, engine time); durations that come out of the
 * closed forms or the op timing (double seconds) become hs_time where they are scheduled, and figures become
 * seconds where they are added into hs_result. */
#ifndef HS_EXEC_IMPL_H
#define HS_EXEC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"
#include "sim/coll/coll_impl.h"
#include "sim/engine/engine.h"
#include "sim/engine/rng.h"
#include "sim/exec/exec.h"
#include "sim/exec/layer_time.h"
#include "sim/net/net.h"

struct ex;

/* Called once per task whose work has ended (from an engine event); the core's readiness takes it from there. */
typedef void (*hs_exec_done)(struct ex *x, uint32_t task);

/* How communication tasks (collectives and sends) take time: one interface, two implementations, chosen by
 * the fidelity (exec.c). The core never asks which one it has. */
typedef struct hs_exec_comm_ops {
	const char *name;
	/* Set up for a run on x's reps (their groups are formed); -1 with err. */
	int (*open)(struct ex *x, hs_err *err);
	/* A step begins: forget what the previous one had in flight. */
	void (*reset)(struct ex *x);
	/* Start task `task`'s traffic now. When it has ended, call done(x, m) for every m of tasks[0..n-1] (the
	 * task itself, or every member of its rendezvous), in that order; `tasks` stays valid until then. */
	void (*start)(struct ex *x, uint32_t task, const uint32_t *tasks, int n, hs_exec_done done);
	/* After the last step: what the implementation measured (the busiest links). */
	void (*collect)(struct ex *x, hs_result *out);
	/* Free what open made; called once whether or not open ran or succeeded. */
	void (*close)(struct ex *x);
} hs_exec_comm_ops;

extern const hs_exec_comm_ops hs_exec_comm_closed, hs_exec_comm_net, hs_exec_comm_packet;

/* One task in the current step. Times are engine times (absolute). */
struct tstate {
	uint32_t waiting;    /* dependencies not yet done */
	uint32_t cause;      /* the dependency that completed last */
	hs_time start, end;
	hs_time arrive;      /* rendezvous: when this member arrived */
	/* A communication task: the seconds its traffic took, set by the communication implementation (the closed
	 * form's seconds before rounding to picoseconds, or the network's end - start), for charging the wait on
	 * a transfer (exec.c: begin). Kept in the implementation's own seconds so the breakdown's sums, whose
	 * rounding residual is printed, stay what they were. */
	double xfer_s;
	uint8_t done, started;
};

/* A compute task whose op range holds collectives that the network carries (flow fidelity) runs as segments:
 * the kernels up to the next such collective (one event), then the collective on the network (beside the next
 * kernel when the op overlaps it), then the next segment (inlayer.c). */
struct seg {
	uint32_t task;
	uint32_t pos, end;  /* ops left: [pos, end) */
	double f;           /* the task's compute factor (slowdowns, noise) */
	int pending;        /* network lanes and the overlapped kernel still running */
	int group;          /* of the collective in flight */
	hs_time comm_start; /* when it started */
	double hide;        /* seconds of the kernel it overlaps (as op timing gave them, for the exposed part) */
	double lag;         /* the host's issue time minus the device's free time (hs_ops_time_from); NAN at the
			     * task's start */
	hs_time arrive;     /* EP rendezvous: when this rep arrived */
	uint32_t comm_op;   /* the op of the collective in flight (hs_simopts.record_inlayer) */
	hs_exec_done done;  /* the task's end */
};

struct rep {
	const hs_device_type *dev;
	const hs_profile *prof;
	const void *kkey;    /* its device's key in the thread's kernel memo (hs_range_cache_kernel_key), or NULL */
	int ngroup;          /* node group of its device (memo key) */
	uint32_t *queue[HS_S_COUNT];
	size_t qn[HS_S_COUNT], qcap[HS_S_COUNT], qpos[HS_S_COUNT];
	int busy[HS_S_COUNT];
	hs_time idle_since;  /* compute stream */
	hs_time last_end;    /* end of its last task in the current step */
	int *gpus;           /* the devices it stands for (for slowdowns and throttling) */
	int ngpus;
	int grp_n[HS_GROUP_COUNT];
	int *grp[HS_GROUP_COUNT];
	hs_coll_grp cg[HS_GROUP_COUNT]; /* the groups summarised once (valid where grp_n > 1) */
	hs_rep_result *res;
	/* flow fidelity: the ranks of every lane of each in-layer group ([nlanes x grp_n], lane 0 first) */
	int *lane_rk[HS_GROUP_COUNT];
	int lane_n[HS_GROUP_COUNT];
	int epg;                        /* its in-layer EP rendezvous (index into ex.epg), -1: none */
	struct seg seg;                 /* the compute task running as segments */
};

struct rv {
	int members, arrived;
	uint32_t *tasks;
};

/* The reps whose EP groups are one group (without symmetry each data-parallel replica is a rep): its in-layer
 * all-to-alls start when every member has reached them, once for all. */
struct epgrp {
	int members, arrived, lanes_left;
	int *reps;
};

/* op-range cost memo: (stage, node group, first, count) -> compute seconds, comm seconds by group, flops */
struct memo {
	uint64_t key;
	uint32_t first, count;
	hs_ops_cost c;      /* the range's kernels, host waits and blocking collectives (layer_time.h) */
	int netcomm; /* collectives in the range over groups of more than one rank */
	/* routing.c, once: MoE layers in the range (runs of routed ops, recompute aside) and the compute of its
	 * routed ops (what the busiest rank's load scales) */
	int routed_known, moe_runs;
	double routed_s, routed_flops, routed_cls[HS_TC_COUNT];
	/* with hs_simopts.record_inlayer, once: where each collective of the range sits in it */
	int rec_done;
	hs_ops_rec rec;
};

struct ex {
	const hs_workload *s;
	const hs_simopts *o;
	const hs_build *b;
	/* [nreps] the first rep whose op timing is this rep's (the same device, profile, node group and group
	 * summaries), whose cost of an op range with the same ops (hs_build.ranges) this rep takes; NULL: every
	 * (stage, node group) times its own ranges (collectives inside layers on the network or on the packet
	 * model, where a rep's own ranks time them; in-layer traces, which keep a range's own op indices) */
	int *env_rep;
	double horizon_s;   /* the caller's estimate of the run's length (0: none), for link-utilisation bins */
	const hs_graph *g;
	hs_engine *eng;
	struct tstate *ts;
	struct rep *reps;
	uint32_t *succ, *succ_first; /* CSR successors */
	struct rv *rv;
	struct memo *memo;  /* [nmemo] in the order timed; they move only when the array grows */
	size_t memocap, nmemo;
	uint32_t *mslot;    /* [nslot] open addressing over memo: index + 1, 0 empty; under half full */
	size_t nslot;
	hs_profile_cache *profiles; /* the caller's, or one of our own */
	hs_op_memo *opmemo;         /* kernel times by shape and device, for this step */
	struct hs_range_cache *rcache; /* op-range costs across the caller's steps (range_cache.h); NULL: none */
	int own_profiles;
	hs_rng *rng;        /* per-op noise; NULL without noise */
	const hs_exec_comm_ops *comm; /* how communication tasks take time */
	void *comm_state;   /* the implementation's own */
	/* The network and what runs on it besides communication tasks (set by comm_net.c; NULL and 0 with the
	 * closed forms): the in-layer segments and the busiest-links statistics use it too. */
	hs_net *net;
	int contend;        /* lanes (and replicas) may share fabric links (hs_exec_lanes_contend) */
	int inlayer;        /* collectives inside compute tasks run on the network */
	uint16_t *slice;    /* [ntasks] with inlayer: a sliced task's index among its slices */
	struct epgrp *epg;
	int nepg;
	hs_time step_start;
	int step;           /* the step being run (0-based) */
	double *route_buf;  /* routing.c: [experts] */
	/* routing.c: the loads drawn this step, by key (open addressing, under half full), so that the members of
	 * an EP group and the passes of a micro-batch draw once */
	struct route_memo { uint64_t key; double load; int used; } *route_memo;
	size_t route_cap, route_n;
	int route_step;
	hs_err *err;
	/* Several jobs on one cluster (jobs.c): the engine and the network are the run's, not this executor's, and
	 * device i of the job's own cluster is device dev0 + i of the shared network. */
	int shared_eng;
	hs_net *shared_net; /* NULL: comm_net.c makes its own */
	int dev0;
	size_t ndone;       /* tasks done in the current step */
	/* With it, called from an engine event once every task of the step is done (at the instant of the last
	 * one, after the other events of that instant); without it, a step ends when the engine runs dry. */
	void (*step_end)(struct ex *x);
	void *owner;        /* step_end's context */
	/* hs_simopts.record_inlayer: the step's in-layer collectives so far */
	hs_inl_span *inl;
	size_t ninl, capinl;
	void *packet;       /* comm_packet.c's state at packet fidelity (NULL otherwise) */
};

/* What several executors share (jobs.c). */
typedef struct hs_exec_share {
	hs_engine *eng;
	hs_net *net;
	int dev0;
} hs_exec_share;

/* exec.c: an executor's life, for runs that drive the steps themselves (jobs.c; hs_exec_step is the plain one).
 * Open sets up everything a step needs (share: NULL for an engine and network of its own); begin_step starts
 * a step at the engine's now; check_step says whether every task of it ran; close frees (also after a failed
 * open). */
int hs_exec_open(struct ex *x, const hs_workload *s, const hs_simopts *o, const hs_build *b,
		 hs_profile_cache *cache, double horizon_s, const hs_exec_share *share, hs_result *out, hs_err *err);
void hs_exec_begin_step(struct ex *x);
int hs_exec_check_step(struct ex *x, hs_err *err);
void hs_exec_close(struct ex *x);

/* comm_net.c: a job's collective or send on the network, its ranks (devices of the job's cluster) moved to
 * the shared network's devices (dev0 + rank); a collective with the algorithm and channels `hetsim coll
 * --fidelity flow` gives the same group (sim/coll/coll_flow.h). */
int hs_exec_net_collective(struct ex *x, enum hs_coll_op op, const int *ranks, int n, double bytes,
			   hs_net_done done, uint64_t arg, hs_err *err);
int hs_exec_net_send(struct ex *x, int src, int dst, double bytes, hs_net_done done, uint64_t arg, hs_err *err);

/* Seconds from the step's start of engine time t, as hs_result and the breakdown take them: the difference of
 * the two instants' seconds, as the executor has always computed it. Converting t - step_start instead (and
 * intervals as hs_time_to_s(b - a)) rounds differently, and the rounding residual of the breakdown's sums
 * (exposed DP communication of 1e-10 s) is printed: byte-identical outputs keep this form. Intervals are
 * differences of two of these. */
static inline double hs_exec_step_s(const struct ex *x, hs_time t)
{
	return hs_time_to_s(t) - hs_time_to_s(x->step_start);
}

/* Flow fidelity keeps the utilisation over time of the busiest links: enough to see where a step's traffic
 * concentrates without a [links x bins] matrix the size of a 16k-GPU fabric. */
#define HS_EXEC_LINK_BINS 100
#define HS_EXEC_LINK_TOP 64

/* exec.c: op timing. What timing an op of rep r needs (its device, profile and groups); and the cost of the op
 * range [first, first + count) of a stage on r's node group, computed once and memoised. */
void hs_exec_rep_env(struct ex *x, struct rep *r, hs_op_env *e);
struct memo *hs_exec_range_cost(struct ex *x, struct rep *r, int stage, uint32_t first, uint32_t count);
/* The same as an index into x->memo, which stays valid as the table grows (a pointer does not). */
uint32_t hs_exec_range_index(struct ex *x, struct rep *r, int stage, uint32_t first, uint32_t count);

/* exec.c: the accounting both ways of timing a step share. A compute task's kernels and host waits, scaled by f
 * (its share of the op range, slowdowns, noise), and its FLOPs scaled by `share`, into res; returns the compute
 * time. And the idle time `gap` (seconds) before a compute-stream task of rep r, charged to what kept it
 * waiting: `cause`, the dependency that completed last (UINT32_MAX: none), as exec.c's begin() says. */
/* Keep where collective `op` of compute task `task` ran (hs_simopts.record_inlayer). */
void hs_exec_inl_push(struct ex *x, uint32_t task, uint32_t op, double start_s, double end_s);
double hs_exec_add_compute(hs_rep_result *res, const hs_task *t, const hs_ops_cost *c, double f, double share);
void hs_exec_charge_wait(struct ex *x, struct rep *r, uint32_t cause, double gap);
/* The same by the cause's kind (enum hs_task_kind, -1: none), its group (a collective) and its seconds (a send). */
void hs_exec_charge(struct rep *r, int kind, int group, double xfer_s, double gap);

/* comm_closed.c: seconds communication task `task` takes by the closed forms on an idle network (what the
 * closed-form implementation schedules; its state must be open). */
double hs_exec_comm_closed_time(struct ex *x, uint32_t task);
/* The same for a task that is in no graph (pipe_step.c's, as the build would make it). */
double hs_exec_comm_closed_task(struct ex *x, const hs_task *t);

/* closed_step.c: the step timed in closed form, task by task in graph order, without the event queue. Returns
 * NULL when the pattern holds (the step is timed and accounted, x->ts filled), else why the event run is
 * needed (nothing accounted). Its own header comment says what the pattern is. */
const char *hs_exec_closed_step(struct ex *x, hs_result *out);
/* Why the step's durations are not all fixed before it starts (communication on a network model, collectives
 * meeting across replicas, slowdowns, noise, drawn MoE routing, more than one step), or NULL: the pattern both
 * closed forms need, as far as it does not depend on the graph's tasks. */
const char *hs_exec_closed_pattern(const struct ex *x, const hs_result *out);
/* pipe_step.c: the same from a build of schedule items (x->b->pipe), without a graph; NULL when timed, else why
 * not (then what is accounted is partial: the caller drops it). */
const char *hs_exec_pipe_step(struct ex *x, hs_result *out);

/* comm_net.c: whether the TP x CP lanes (and replicas) may share fabric links. */
int hs_exec_lanes_contend(const hs_workload *s, const hs_simopts *o);

/* comm_packet.c: seconds of collective `op` over ranks[0..n-1] of `bytes` on the packet fabric model, when
 * the group is inside one switched scale-up domain and the model runs the collective (memoised per domain
 * class, op, ranks and size); -1 otherwise (the caller uses the closed form). ctx: the executor. */
double hs_exec_packet_coll_time(void *ctx, int op, const int *ranks, int n, double bytes);

/* inlayer.c */
void hs_exec_inlayer_setup(struct ex *x);
void hs_exec_inlayer_reset(struct ex *x);
void hs_exec_inlayer_free(struct ex *x);
/* Run compute task `task` of rep `rep` as segments over ops [first, first + count) with compute factor f;
 * done(x, task) when its last segment has ended. */
void hs_exec_seg_start(struct ex *x, int rep, uint32_t task, uint32_t first, uint32_t count, double f,
		       hs_exec_done done);

/* routing.c: the load factor of compute task ti (models/moe_routing.h): the mean over its MoE layers of the
 * busiest EP rank's load drawn for (step, EP group, stage, chunk, micro-batch, layer); 1 without
 * parallelism.expert_routing. Forward and backward of a micro-batch draw the same. m: the task's range. */
double hs_exec_routing_load(struct ex *x, int rep, uint32_t ti, struct memo *m);

/* result.c */
void hs_exec_account_step(struct ex *x, int step, hs_result *out);
void hs_exec_collect_links(struct ex *x, hs_result *out);
void hs_exec_aggregate(struct ex *x, const hs_build *b, hs_result *out);

#endif
