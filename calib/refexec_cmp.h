/* hs_refexec_cmp: hetsim's predictions beside the reference executor's measurements (kernels/refexec).
 *
 * Per task: the graph file's pred_s (what `hetsim export-graph` predicted) against refexec's refexec_task
 * t_med, matched by task id; the step: the graph's step_pred_s against refexec_step t_med. With a profile, per
 * op as well: refexec_op t_med against the profile's time for the op (as sim/exec/exec.c charges it: GEMM, attention
 * and memory-bound curves; a compute task's scale shrinks the op). Rows whose prediction or measurement is not
 * positive (a collective over a group of one) are left out. Library code: it never prints. */
#ifndef HS_REFEXEC_CMP_H
#define HS_REFEXEC_CMP_H

#include <stddef.h>

#include "calib/jsonl.h"
#include "calib/profile.h"
#include "kernels/graph_reader.h"
#include "sim/base/err.h"

typedef struct hs_refexec_row {
	char kind[8];    /* "task", "op", "step" */
	char label[96];  /* "task 1 rank 0 compute bwd" / "op 17 fc1 gemm (task 0)" / "step" */
	double predicted, measured; /* seconds */
} hs_refexec_row;

typedef struct hs_refexec_cmp {
	hs_refexec_row *rows;
	size_t n, cap;
} hs_refexec_cmp;

/* prof may be NULL (no per-op rows). Fails when the measurements name tasks or ops the graph lacks. */
int hs_refexec_compare(const hs_jsonl *meas, const hsg_graph *g, const hs_profile *prof, hs_refexec_cmp *out,
		       hs_err *err);
/* MAPE (percent) over the rows of `kind`; -1 when none. */
double hs_refexec_mape(const hs_refexec_cmp *c, const char *kind, size_t *count);
void hs_refexec_cmp_free(hs_refexec_cmp *c);

#endif
