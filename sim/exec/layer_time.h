/* hs_op_time, hs_layer_time: how long ops take on a device, and one transformer layer's forward and backward.
 *
 * hs_op_time is the one place an op (models/ops.h) becomes seconds: GEMMs, attention and memory-bound kernels
 * from the device profile (calib/profile.h), collectives inside a layer from the cluster's closed forms
 * (sim/coll/coll.h) over the rank's group. The executor (sim/exec/exec.c) times every compute task with it, and
 * hs_layer_time uses it to time one layer in isolation, so a layer's predicted time is exactly what the step
 * simulation charges for it. */
#ifndef HS_LAYER_TIME_H
#define HS_LAYER_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "calib/profile.h"
#include "models/workload.h"
#include "models/ops.h"
#include "sim/base/err.h"
#include "topology/cluster.h"

/* What timing an op needs: the device and its profile; for collectives the cluster, the algorithm
 * (enum hs_coll_algo) and the rank's group of each kind (grp[k][0..grp_n[k]-1], global device indices); the
 * host's cost of issuing one kernel (the recipe's, models/recipe.h; 0: the host never holds the device back). */
typedef struct hs_op_env {
	const hs_profile *prof;
	const hs_device_type *dev;
	double host_gemm_s, host_kernel_s;
	int mem_factors; /* time memory-bound kernels with the profile's per-family factors (the recipe's
			  * aten_kernels); 0: at the copy curve */
	const hs_cluster *cluster;
	int coll_algo;
	const int *grp[HS_GROUP_COUNT];
	int grp_n[HS_GROUP_COUNT];
	/* optional: the groups summarised once (sim/coll/coll_impl.h), so that timing a collective does not sort the
	 * group's ranks again; NULL entries are summarised per call */
	const struct hs_coll_grp *cgrp[HS_GROUP_COUNT];
	/* optional: kernel times already computed (a model's layers repeat the same shapes), keyed by the op's
	 * shape and the device; NULL: none */
	struct hs_op_memo *memo;
	/* optional: kernels' (not collectives') times kept across steps, keyed by the profile and kkey in place of
	 * the device (sim/exec/range_cache.h, hs_range_cache_kernel_key); NULL: the kernels go in memo */
	struct hs_op_memo *kmemo;
	const void *kkey;
	/* optional: times a collective in place of the closed forms (packet fidelity: sim/exec/comm_packet.c runs
	 * a collective inside one scale-up domain on the packet fabric model); seconds, or a negative number for
	 * "not mine: use the closed form". NULL: the closed forms. */
	double (*coll_time)(void *ctx, int op, const int *ranks, int n, double bytes);
	void *coll_ctx;
} hs_op_env;

/* Set e's host issue costs from the recipe (NULL: the default recipe's). */
void hs_op_env_host(hs_op_env *e, const hs_recipe *r);

typedef struct hs_op_memo hs_op_memo;
hs_op_memo *hs_op_memo_create(void);
void hs_op_memo_free(hs_op_memo *m);

/* Seconds of one op-list entry (its count included) on the device, once it runs: the kernel's in-stream time
 * from the profile plus the profile's in-stream gap per kernel. Memory-bound kernels run at the copy curve
 * slowed by their family's factor (hs_op.family). *is_comm is set to 1 for HS_OP_COMM entries (0 when the
 * group has one member). Attention with s_kv > s (context parallelism) costs s_kv / s times the s x s
 * kernel: its work grows linearly with the keys. */
double hs_op_time(const hs_op_env *e, const hs_op *o, int *is_comm);

/* Where a compute stream's time goes (hetsim run --detail): kernels by kind, and the device idle while the
 * host issues the next kernel. */
enum hs_time_class { HS_TC_GEMM, HS_TC_ATTN, HS_TC_MEM, HS_TC_OPT, HS_TC_HOST, HS_TC_COUNT };
const char *hs_time_class_name(enum hs_time_class c); /* "gemm", "attention", "memory", "optimizer", "host" */

/* Where each collective of an op list sits inside it, for traces (hs_ops_cost.rec; NULL: not recorded): before
 * it, `kern_s` of kernels and host waits (the part a task's compute factor scales) and `comm_s` of exposed
 * collectives (the part it does not); `dur_s` the transfer's own time, beside a kernel it overlaps. */
typedef struct hs_ops_slot {
	uint32_t op; /* index into the list */
	double kern_s, comm_s, dur_s;
} hs_ops_slot;
typedef struct hs_ops_rec {
	hs_ops_slot *v;
	size_t n, cap;
} hs_ops_rec;

/* The cost of an op list on one rank, added to by hs_ops_time. */
typedef struct hs_ops_cost {
	double comp;                 /* compute stream time outside collectives: kernels and host waits */
	double comp2;                /* sum of squared kernel times, for noise */
	double comm[HS_GROUP_COUNT]; /* collectives that block the computation, by group */
	double flops;                /* of the compute ops */
	double cls[HS_TC_COUNT];     /* comp by class: sum(cls) == comp */
	hs_ops_rec *rec;             /* optional: each collective's place in the list, appended to */
} hs_ops_cost;

/* An op list ops[0..n-1] run in order on one rank, added to *c. Two queues: the host issues the kernels one
 * after another (host_gemm_s or host_kernel_s each), the device runs each once it is issued and the previous
 * one is done, so host time shows only where kernels are shorter than their issue (a list of tiny kernels
 * takes about n x the issue cost, a list of long ones the sum of their times). The host is taken to have
 * issued the list's first kernel before the list starts (it runs ahead of the device while earlier work
 * runs). A collective blocks the device for its time (comm[group]); the host issues it like a kernel and
 * goes on issuing what follows meanwhile. A COMM op with `overlap` runs beside the next op: the pair takes
 * the longer of the two, and only the transfer's excess over that op counts as communication. The total time
 * is c->comp + sum(c->comm). The copies of a repeated layer whose runs no longer depend on where the host is
 * (the same lag at their start, or no wait for the host and a host further ahead) are added as that many
 * times one copy's sums: within about 1e-15 of adding every op's terms (tests/unit/exec/test_ops_layers.c). */
void hs_ops_time(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c);
/* What the host takes to issue op o (a kernel or a collective). */
double hs_op_issue_s(const hs_op_env *e, const hs_op *o);
/* The same for a piece of a list: *lag is the host's issue time minus the device's free time at the piece's
 * start (NULL or NAN: a fresh list), and on return at its end, so that pieces timed one by one (the kernels between
 * network-carried collectives, sim/exec/inlayer.c) cost what the whole list costs. */
void hs_ops_time_from(const hs_op_env *e, const hs_op *ops, size_t n, double *lag, hs_ops_cost *c);
/* hs_ops_time, and for each op the one whose time it took: an op equal byte for byte to an earlier op of the
 * list is not looked up again (layer_time.c, struct reuse), and same[i] (room for n) is that op's index (< i,
 * ops[same[i]] equal to ops[i] byte for byte), i where op i was timed itself. A cache of list costs
 * (range_cache.c) keeps the list by that: the ops it timed, and which later ops repeat which. */
void hs_ops_time_same(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c, uint32_t *same);

/* One transformer layer on one rank. */
typedef struct hs_layer_times {
	double fwd_s;           /* forward, TP collectives included */
	double bwd_s;           /* backward: recompute + input gradient + weight gradient */
	double recompute_s;     /* the part of bwd_s that re-runs forward work */
	double fwd_comm_s, bwd_comm_s; /* collectives inside fwd_s / bwd_s */
} hs_layer_times;

/* Time layer `layer` of workload `s` on the device of global rank 0 (its profile loaded by name), with the
 * scenario's split, micro-batch, recompute mode and sequence parallelism, and its TP, CP and EP collectives
 * over rank 0's groups (as the executor forms them). -1 with err when the profile cannot be loaded. */
int hs_layer_time(const hs_workload *s, int layer, hs_layer_times *out, hs_err *err);

#endif
