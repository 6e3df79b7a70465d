/* hs_graph: what each simulated rank executes in one training step, as tasks on streams with dependencies.
 *
 * A "rep" (representative) is one simulated rank standing for an equivalence class of real ranks: with
 * symmetry on, the TP/CP ranks and the data-parallel replicas of a pipeline stage behave identically, so one rep
 * per stage is simulated and the rest are accounted for; with symmetry off, each (stage, dp replica) is its own
 * rep and data-parallel collectives rendezvous across them.
 *
 * Tasks of one rep and stream run in the order they appear in the graph. Compute tasks reference shared op
 * lists (the forward of one model chunk is built once and used by every micro-batch) and may carry a scale
 * (a gradient-bucket slice of a backward pass). Dependencies are stored in one compact array. */
#ifndef HS_GRAPH_H
#define HS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "models/ops.h"

enum hs_task_kind {
	HS_T_COMPUTE, /* ops[op_first .. op_first+op_count) x scale on the compute stream */
	HS_T_COLL,    /* collective over `group` of `bytes` on the comm stream */
	HS_T_SEND,    /* point-to-point transfer of `bytes` to rep `peer` (pipeline activations/gradients) */
	HS_T_HOST,    /* host side, on the host stream: HS_W_OFFLOAD copies `bytes` over the device's host link
		       * (either way), HS_W_CPU_OPTIMIZER streams `bytes` through its node's host memory */
};

/* HS_S_HOST carries copies to the host and the CPU optimizer, HS_S_HOST_IN copies back: a PCIe or C2C link
 * is full duplex, with a copy engine each way. */
enum hs_stream { HS_S_COMPUTE, HS_S_COMM, HS_S_P2P, HS_S_HOST, HS_S_HOST_IN, HS_S_COUNT };

enum hs_task_what { HS_W_FWD, HS_W_BWD, HS_W_BWD_INPUT, HS_W_BWD_WEIGHT, HS_W_OPTIMIZER, HS_W_GRAD_REDUCE,
		    HS_W_PARAM_GATHER, HS_W_P2P, HS_W_OFFLOAD, HS_W_CPU_OPTIMIZER };

typedef struct hs_task {
	uint8_t kind;   /* enum hs_task_kind */
	uint8_t stream; /* enum hs_stream */
	uint8_t what;   /* enum hs_task_what, for labels and accounting */
	uint8_t group;  /* enum hs_group for HS_T_COLL */
	uint8_t coll;   /* enum hs_coll_op for HS_T_COLL */
	int32_t rep;
	int32_t peer;   /* HS_T_SEND: receiving rep */
	int32_t mb, chunk;
	uint32_t op_first, op_count;
	double scale;   /* HS_T_COMPUTE: fraction of the op list this task runs */
	double bytes;   /* HS_T_COLL, HS_T_SEND */
	int32_t rendezvous; /* HS_T_COLL: id shared by the member tasks of one collective across reps; -1 none */
	uint32_t dep_first, dep_count;
	uint32_t xgroup; /* HS_T_COLL: 1 + an index into the graph's explicit groups (a traced workload's process
			  * groups, traces/chakra_read.c); 0: the rep's parallelism group `group` */
} hs_task;

typedef struct hs_rep {
	int stage;      /* pipeline stage */
	int dp_index;   /* data-parallel replica (0 when reps stand for all replicas) */
	int multiplicity; /* real ranks this rep stands for */
} hs_rep;

typedef struct hs_graph {
	hs_task *tasks;
	size_t ntasks, captasks;
	uint32_t *deps;
	size_t ndeps, capdeps;
	hs_op *ops;
	size_t nops, capops;
	hs_rep *reps;
	int nreps;
	int nrendezvous;
	/* Explicit groups (none in a built-in workload's graph): group i holds the global devices
	 * xg_ranks[xg_first[i] .. xg_first[i+1]), ascending. */
	uint32_t *xg_first; /* [nxg + 1] */
	int *xg_ranks;
	uint32_t nxg;
} hs_graph;

void hs_graph_free(hs_graph *g);
/* Append a task; returns its index. Dependencies are added with hs_graph_dep right after. */
uint32_t hs_graph_add(hs_graph *g, const hs_task *t);
void hs_graph_dep(hs_graph *g, uint32_t task, uint32_t dep);
/* Copy an op list into the graph's op array; returns the first index. */
uint32_t hs_graph_add_ops(hs_graph *g, const hs_oplist *l);

#endif
