/* hs_fit: device profiles from measurements, with GSL.
 *
 * hs_fit_profile reads measurement records (calib/jsonl.h; kinds gemm, hbm_copy, elementwise, sdpa,
 * refexec_task and refexec_op, as
 * kernels/ and ../shared/data/h200-microbench.jsonl write them) and fits each part of an hs_profile with a
 * physical form of few parameters (docs/calibration.md): the GEMM launch floor and efficiency grid, the
 * memory curve, the attention curves. It returns the residual of every point it used, so the command can
 * print the fit quality. Library code: it never prints. */
#ifndef HS_FIT_H
#define HS_FIT_H

#include <stddef.h>

#include "calib/jsonl.h"
#include "calib/profile.h"
#include "sim/base/err.h"
#include "topology/device.h"

typedef struct hs_fit_resid {
	char kind[16];   /* gemm, gemm-loo, gemm-other, memory, elementwise, attn-fwd, attn-bwd, refexec-task */
	char label[96];  /* the point: "bf16 m=256 n=256 k=256" */
	double measured; /* seconds */
	double predicted;
	int outlier;     /* excluded from the fit as an outlier (still listed) */
} hs_fit_resid;

typedef struct hs_fit_report {
	hs_fit_resid *r;
	size_t n, cap;
} hs_fit_report;

/* Fit a profile named `name` for device `dev` (the device measured) from `nsets` record sets (at most 32).
 * Which rows feed which part (docs/calibration.md): rows of our own kernels (their info record names a
 * `tool`) before framework calls for the GEMM grid, its floor and the copy curve; framework rows before ours
 * for the memory ops' factors; flash sdpa rows only for attention; refexec rows for the kernel gap. The
 * profile's `source` records the files, the info records' device, dates and programs, and per part its rows.
 * rep may be NULL. */
hs_profile *hs_fit_profile(const hs_jsonl *const *sets, int nsets, const hs_device_type *dev, const char *name,
			   hs_fit_report *rep, hs_err *err);
/* Mean absolute percentage error of the report's rows of `kind` (outliers excluded); -1 when none. */
double hs_fit_mape(const hs_fit_report *rep, const char *kind, size_t *count);
void hs_fit_report_free(hs_fit_report *rep);

/* Tools shared with the fabric fitter. */
/* Median of v[0..n-1] (sorts v). */
double hs_fit_median(double *v, size_t n);
/* Nonlinear least squares (GSL trust region, finite-difference Jacobian): minimise sum r_i(x)^2 over the
 * np parameters x (in/out), nobs residuals from f. Returns 0, or -1 with err set when it does not converge. */
int hs_fit_nlinear(int np, double *x, int nobs, int (*f)(const double *x, double *r, void *ctx), void *ctx,
		   hs_err *err);
/* Weighted linear least squares y = a + b x with weights w (1/sigma^2); returns 0 and a, b. */
int hs_fit_line(const double *x, const double *y, const double *w, size_t n, double *a, double *b, hs_err *err);

#endif
