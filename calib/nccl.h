/* hs_nccl: nccl-tests output logs (all_reduce_perf and friends) read into rows, and an alpha-beta fit.
 *
 * Real logs carry more than the table: NCCL INFO lines, launcher prefixes ("[1,0]<stdout>:" from mpirun
 * --tag-output, "0: " from srun -l, "host: "), headers, summaries, and older layouts (no `root` column,
 * no in-place half, "N/A" in #wrong). A line whose first field (after any prefix) is a byte count is a row and
 * must parse completely; otherwise the log is rejected with "file:line: what". Everything else is skipped.
 * Time is the out-of-place time (the in-place one is kept too). */
#ifndef HS_NCCL_H
#define HS_NCCL_H

#include <stddef.h>

#include "sim/base/err.h"

typedef struct hs_nccl_row {
	double bytes, count;
	double t;                     /* out-of-place time, seconds */
	double algbw, busbw;          /* bytes/s, as printed */
	double t_inplace;             /* seconds; 0 when the log has no in-place half */
	int line;
} hs_nccl_row;

typedef struct hs_nccl_log {
	char name[256];       /* file name */
	char collective[32];  /* all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv; "" unknown */
	char algo[32];        /* NCCL_ALGO if the log names it, else "default" */
	char dtype[16];
	int ranks;            /* from "Rank" lines, else from busbw/algbw, else 0 */
	size_t n;
	hs_nccl_row *rows;
} hs_nccl_log;

int hs_nccl_parse(const char *text, size_t len, const char *name, hs_nccl_log *out, hs_err *err);
int hs_nccl_load(const char *path, hs_nccl_log *out, hs_err *err);
void hs_nccl_free(hs_nccl_log *l);
/* t = alpha + beta * bytes over the rows with bytes > 0, least squares on relative error (weights 1/t^2). */
int hs_nccl_fit(const hs_nccl_log *l, double *alpha, double *beta, hs_err *err);

#endif
