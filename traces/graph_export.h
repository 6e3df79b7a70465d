/* hs_graph_export: the task graph of one step, for the ranks of one node, as the reference executor runs it
 * (kernels/refexec). Format "hsgraph 1", line-oriented text: docs/graph-format.md; read back by
 * kernels/graph_reader.[ch].
 *
 * The build must be symmetric (one rep per pipeline stage): every real rank of a stage runs its stage's
 * program, so the export copies that program once per selected rank, gives each copy the rank's concrete
 * groups (tp, cp, dp, ep, pp member lists) and pipeline peers, and adds the receiving half of every send
 * (a RECV task on the receiver's p2p stream, which the receiver's dependent task waits for). Member tasks of
 * one collective, and both halves of a send, share an instance id. Tasks are written in the graph's order,
 * so every dependency names an earlier task. */
#ifndef HS_GRAPH_EXPORT_H
#define HS_GRAPH_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/base/err.h"
#include "sim/exec/exec.h"

enum { HS_XT_COMPUTE = 0, HS_XT_COLL = 1, HS_XT_SEND = 2, HS_XT_RECV = 3 }; /* = enum hs_task_kind + recv */

typedef struct hs_xrank {
	int rank, node, local;      /* global rank, its node, its index in the node */
	int stage, tp_index, cp_index, dp_index;
	const char *device;         /* device type name */
	int groups[HS_GROUP_COUNT]; /* group ids */
} hs_xrank;

typedef struct hs_xgroup {
	int kind; /* enum hs_group */
	int *ranks;
	int n;
} hs_xgroup;

typedef struct hs_xtask {
	uint32_t src;  /* the graph task this copies (for a RECV: the SEND it receives) */
	int kind;      /* HS_XT_* */
	int rank;      /* global rank */
	int peer;      /* SEND: receiver, RECV: sender (global ranks); -1 */
	int group;     /* COLL: group id; -1 */
	int inst;      /* COLL, SEND, RECV: instance id; -1 */
	uint32_t dep_first, dep_count;
} hs_xtask;

typedef struct hs_graph_export {
	hs_xrank *ranks;
	int nranks;
	hs_xgroup *groups;
	int ngroups;
	hs_xtask *tasks;
	size_t ntasks;
	uint32_t *deps;
	size_t ndeps;
	int ninst;
	int world; /* tp * cp * dp * pp */
} hs_graph_export;

/* The global ranks of the job on node `node` (ascending). Fails when the node has none. *out is malloc'd. */
int hs_graph_export_node_ranks(const hs_scenario *s, int node, int **out, int *n, hs_err *err);
/* Expand the build's per-stage programs for `ranks` (global, distinct, < world). */
int hs_graph_export_plan(const hs_scenario *s, const hs_build *b, const int *ranks, int nranks,
			 hs_graph_export *out, hs_err *err);
void hs_graph_export_free(hs_graph_export *x);
/* Write format "hsgraph 1". `r` (may be NULL) adds hetsim's predictions (pred_s per task, step_pred_s).
 * `command` is recorded in the header (may be NULL). Returns 0, or -1 on a write error. */
int hs_graph_export_write(FILE *f, const hs_scenario *s, const hs_build *b, const hs_result *r,
			  const hs_graph_export *x, const char *command);
/* The same into `path`, through a temporary file renamed into place. */
int hs_graph_export_file(const char *path, const hs_scenario *s, const hs_build *b, const hs_result *r,
			 const hs_graph_export *x, const char *command, hs_err *err);

#endif
