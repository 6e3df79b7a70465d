/* hs_refexec_cmp: hetsim's predictions beside the reference executor's measurements (kernels/refexec).
 *
 * Per task: the graph file's pred_s (what `hetsim export-graph` predicted) against refexec's refexec_task
 * t_med, matched by task id; the step: the graph's step_pred_s against refexec_step t_med. With a profile,
 * also:
 *   - per op, refexec_op t_med against the profile's time for the kernel refexec ran for that op (GEMMs by the
 *     GEMM curve, a batch paying the floor once; memory-bound ops by the op family refexec's kernel is, read
 *     from the op's name as kernels/refexec.cu does; materialised attention as its batched GEMMs and softmax;
 *     the optimizer at copy speed), each row tagged with its op kind;
 *   - per task and for the step, the prediction recomputed from the profile: a compute task is the sum of its
 *     ops' times plus kernel_gap per op (as a stream runs them); other tasks keep the graph's pred_s; the step
 *     is the latest finish of a list schedule over the tasks (dependencies, one stream at a time, file order).
 * Rows whose prediction or measurement is not positive (a collective over a group of one) are left out.
 * Library code: it never prints. */
#ifndef HS_REFEXEC_CMP_H
#define HS_REFEXEC_CMP_H

#include <stddef.h>

#include "calib/jsonl.h"
#include "calib/profile.h"
#include "kernels/graph_reader.h"
#include "sim/base/err.h"

typedef struct hs_refexec_row {
	char kind[12];   /* "task", "op", "step"; with a profile also "task-prof", "step-prof" (recomputed) */
	char opkind[12]; /* op rows: "gemm", "mem", "attn", "optimizer"; "" otherwise */
	char label[96];  /* "task 1 rank 0 compute bwd" / "op 17 fc1 gemm (task 0)" / "step" */
	double predicted, measured; /* seconds */
} hs_refexec_row;

typedef struct hs_refexec_cmp {
	hs_refexec_row *rows;
	size_t n, cap;
} hs_refexec_cmp;

/* prof may be NULL (no per-op rows, nothing recomputed). Fails when the measurements name tasks or ops the
 * graph lacks. */
int hs_refexec_compare(const hs_jsonl *meas, const hsg_graph *g, const hs_profile *prof, hs_refexec_cmp *out,
		       hs_err *err);
/* MAPE (percent) over the rows of `kind` (and, when opkind is not NULL, of that op kind); -1 when none. */
double hs_refexec_mape(const hs_refexec_cmp *c, const char *kind, size_t *count);
double hs_refexec_mape_of(const hs_refexec_cmp *c, const char *kind, const char *opkind, size_t *count);
/* Signed error of the totals (percent): (sum predicted - sum measured) / sum measured over the same rows. Per-row
 * errors that cancel show here as a small total beside a large MAPE. NAN when no rows. */
double hs_refexec_total_err(const hs_refexec_cmp *c, const char *kind, const char *opkind);
void hs_refexec_cmp_free(hs_refexec_cmp *c);

#endif
