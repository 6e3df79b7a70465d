/* hs_tlog: per-step times read from a training run's log, for `hetsim validate` (issue 17).
 *
 * The formats are what the frameworks print to their console, as they print it (tests/data/trainlogs/ has
 * one public-format example of each, with its source):
 *   megatron    Megatron-LM:   "iteration   10/ 100 | ... | elapsed time per iteration (ms): 1234.5 | ..."
 *   nemo        NeMo / Lightning: "train_step_timing in s=1.23" (progress bar) or "train_step_timing in s: 1.23"
 *   torchtitan  "step: 10  loss: ...  tps: 6,543 ...": a step's time is the time between two metric lines'
 *               timestamps over the steps between them, or, given tokens_per_step (per GPU), tokens / tps
 *   deepspeed   "global_step=10, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=12.5": a step is
 *               samples_per_step / CurrSamplesPerSec, samples_per_step from the options or from the log's
 *               configuration dump ("train_batch_size ...... 32")
 *   csv         a header with a step column and a time column (step_time_s, seconds, time_s, time, or *_ms in ms)
 *   jsonl       one object a line with "step" and one of the same time keys
 * HS_TLOG_AUTO picks the format from the first line that one of them recognises. Lines that no format
 * recognises (launcher output, warnings, progress) are skipped; a recognised line that does not parse, or a
 * log with no recognised line, is bad input with "file:line: what". */
#ifndef HS_TRAINLOG_H
#define HS_TRAINLOG_H

#include <stddef.h>

#include "sim/base/err.h"

enum hs_tlog_fmt { HS_TLOG_AUTO, HS_TLOG_MEGATRON, HS_TLOG_NEMO, HS_TLOG_TORCHTITAN, HS_TLOG_DEEPSPEED,
		   HS_TLOG_CSV, HS_TLOG_JSONL, HS_TLOG_NFMT };
extern const char *const hs_tlog_fmt_names[HS_TLOG_NFMT + 1]; /* "auto", "megatron", ..., NULL */

typedef struct hs_tlog_opts {
	double samples_per_step; /* deepspeed: samples per optimizer step; 0: from the log */
	double tokens_per_step;  /* torchtitan: tokens per step per GPU; 0: from the timestamps */
} hs_tlog_opts;

typedef struct hs_tlog {
	char name[256];
	enum hs_tlog_fmt fmt; /* the one used (never AUTO after a parse) */
	size_t n;
	double *t;  /* [n] seconds per step, in log order */
	long *step; /* [n] the step number the log gives, else the ordinal from 1 */
	int *line;  /* [n] */
} hs_tlog;

int hs_tlog_parse(const char *text, size_t len, const char *name, enum hs_tlog_fmt fmt, const hs_tlog_opts *o,
		  hs_tlog *out, hs_err *err);
int hs_tlog_load(const char *path, enum hs_tlog_fmt fmt, const hs_tlog_opts *o, hs_tlog *out, hs_err *err);
void hs_tlog_free(hs_tlog *l);
/* Median and P90 of the steps after the first `skip` (quantiles by linear interpolation between order
 * statistics, as numpy's default); -1 with err when nothing is left. */
int hs_tlog_stats(const hs_tlog *l, size_t skip, double *median, double *p90, size_t *used, hs_err *err);
/* The q-quantile (0..1) of n values (sorts a copy), as hs_tlog_stats computes it. */
double hs_tlog_quantile(const double *v, size_t n, double q);

#endif
