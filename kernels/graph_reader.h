/* hsg: reader of the task-graph files `hetsim export-graph` writes (docs/graph-format.md, format "hsgraph 1").
 *
 * Plain C11 with libc only, so that kernels/refexec (built by nvcc, without hetsim's libraries) and hetsim's
 * own tests read the very same code. The graph is held in flat arrays: ranks, groups, ops, tasks, and one
 * array of dependencies that tasks index. Task ids are dense and in file order, and every dependency names an
 * earlier task, so file order is a topological order.
 *
 * The enum values below equal hetsim's (models/graph.h, models/ops.h, sim/base/dtype.h); tests/unit/traces/test_graph_io.c
 * checks that they stay equal. */
#ifndef HSG_GRAPH_READER_H
#define HSG_GRAPH_READER_H

#include <stddef.h>
#include <stdint.h>

#define HSG_FORMAT_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

enum hsg_dtype { HSG_FP8, HSG_BF16, HSG_FP16, HSG_TF32, HSG_FP32, HSG_DTYPE_COUNT };
enum hsg_op_kind { HSG_OP_GEMM, HSG_OP_ATTN, HSG_OP_MEM, HSG_OP_COMM, HSG_OP_OPTIMIZER, HSG_OP_KIND_COUNT };
enum hsg_coll { HSG_ALL_REDUCE, HSG_ALL_GATHER, HSG_REDUCE_SCATTER, HSG_ALL_TO_ALL, HSG_BROADCAST, HSG_REDUCE,
		HSG_SENDRECV, HSG_COLL_COUNT };
enum hsg_group_kind { HSG_GROUP_TP, HSG_GROUP_CP, HSG_GROUP_DP, HSG_GROUP_EP, HSG_GROUP_PP, HSG_GROUP_COUNT };
/* compute, coll and send are hetsim's task kinds; recv is the receiving half of a send, added by the export */
enum hsg_task_kind { HSG_T_COMPUTE, HSG_T_COLL, HSG_T_SEND, HSG_T_RECV, HSG_T_KIND_COUNT };
enum hsg_stream { HSG_S_COMPUTE, HSG_S_COMM, HSG_S_P2P, HSG_S_COUNT };
enum hsg_what { HSG_W_FWD, HSG_W_BWD, HSG_W_BWD_INPUT, HSG_W_BWD_WEIGHT, HSG_W_OPTIMIZER, HSG_W_GRAD_REDUCE,
		HSG_W_PARAM_GATHER, HSG_W_P2P, HSG_W_COUNT };

/* Names as they appear in the file, indexed by the enums above. */
extern const char *const hsg_dtype_names[HSG_DTYPE_COUNT];
extern const char *const hsg_op_kind_names[HSG_OP_KIND_COUNT];
extern const char *const hsg_coll_names[HSG_COLL_COUNT];
extern const char *const hsg_group_names[HSG_GROUP_COUNT];
extern const char *const hsg_task_kind_names[HSG_T_KIND_COUNT];
extern const char *const hsg_stream_names[HSG_S_COUNT];
extern const char *const hsg_what_names[HSG_W_COUNT];

typedef struct hsg_rank {
	int rank;        /* global rank */
	int node, local; /* node index, device index inside the node */
	int stage, tp_index, cp_index, dp_index;
	char device[64]; /* device type */
	int groups[HSG_GROUP_COUNT]; /* group id of each kind */
	int line;
} hsg_rank;

typedef struct hsg_group {
	int id;
	int kind; /* enum hsg_group_kind */
	int *ranks; /* global ranks, in the group's order */
	int n;
	int line;
} hsg_group;

typedef struct hsg_op {
	int kind;  /* enum hsg_op_kind */
	char name[32];
	int dtype; /* enum hsg_dtype */
	double m, n, k;      /* gemm */
	double count;        /* identical kernels (gemm batches); 1 when absent */
	double b, h, s, skv, d; /* attn */
	int causal, bwd;     /* attn */
	double flops, bytes;
	int coll, group;     /* comm: enum hsg_coll, enum hsg_group_kind (resolved per rank through its groups) */
	int recompute;
	int line;
} hsg_op;

typedef struct hsg_task {
	int rank;          /* global rank */
	int kind;          /* enum hsg_task_kind */
	int stream;        /* enum hsg_stream */
	int what;          /* enum hsg_what */
	int mb, chunk;
	uint32_t op_first, op_count; /* compute */
	double scale;      /* compute: fraction of the op list */
	double bytes;      /* coll, send, recv */
	int peer;          /* send: receiving rank; recv: sending rank; -1 otherwise */
	int group;         /* coll: group id; -1 otherwise */
	int coll;          /* coll: enum hsg_coll; -1 otherwise */
	int inst;          /* coll, send, recv: instance shared by the member tasks (both halves of a send); -1 */
	uint32_t dep_first, dep_count;
	double pred_s;     /* hetsim's predicted duration, seconds; -1 when not given */
	int line;
} hsg_task;

typedef struct hsg_graph {
	int version;
	char *name, *scenario, *command, *created, *device, *hetsim_version;
	int dtype;          /* training precision, enum hsg_dtype; -1 when absent */
	int hidden;         /* model width (memory-bound ops of a norm run over rows of this width); 0 absent */
	int world;          /* ranks in the whole job; 0 absent */
	double step_pred_s; /* hetsim's predicted step time; -1 absent */
	hsg_rank *ranks;
	int nranks;
	hsg_group *groups;
	int ngroups;
	hsg_op *ops;
	size_t nops;
	hsg_task *tasks;
	size_t ntasks;
	uint32_t *deps;
	size_t ndeps;
	int ninst;          /* 1 + the largest instance id */
} hsg_graph;

/* Parse a file / a text. Returns 0, or -1 with "NAME:LINE: what is wrong" in err (errlen bytes). On failure
 * the graph is left empty (nothing to free). */
int hsg_read_file(const char *path, hsg_graph *g, char *err, size_t errlen);
int hsg_parse(const char *text, size_t len, const char *name, hsg_graph *g, char *err, size_t errlen);
void hsg_free(hsg_graph *g);

/* Lookups: index into g->ranks / g->groups, or -1. */
int hsg_rank_index(const hsg_graph *g, int rank);
int hsg_group_index(const hsg_graph *g, int id);
/* Name -> enum value in a table of n names; -1 when unknown. */
int hsg_lookup(const char *const *names, int n, const char *s);

#ifdef __cplusplus
}
#endif

#endif
