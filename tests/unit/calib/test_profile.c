/* Profiles: load and query the shipped ones, save and reload, and the fitter: recovery of known parameters
 * from noisy synthetic data, and the H200 GEMM grid's fit and leave-one-out MAPE. */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/fit.h"
#include "calib/profile_int.h"
#include "sim/base/alloc.h"
#include "sim/cli/cmd_calib.h"
#include "tests/unit/helpers.h"

#define H200_MEAS "calib/measurements/h200/h200-microbench-2026-11-29.jsonl"
#define K30 "calib/measurements/h200/kernels-2026-11-30"

START_TEST(load_and_query)
{
	hs_err err;
	hs_err_clear(&err);
	hs_profile *p = hs_profile_load("H200-SXM-141GB", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(hs_profile_name(p), "H200-SXM-141GB");
	ck_assert_int_eq(hs_profile_is_derived(p), 0);
	const hs_device_type *h200 = hs_device_builtin("H200-SXM-141GB");
	/* a measured grid point: 8192^3 bf16 took 1.672 ms back to back (kernels-2026-11-30/gemm.jsonl) */
	double t = hs_profile_gemm_time(p, h200, 8192, 8192, 8192, HS_BF16);
	ck_assert_msg(fabs(t / 1.672e-3 - 1) < 0.05, "gemm 8192^3 %g", t);
	/* far below the grid the launch dominates */
	double tiny = hs_profile_gemm_time(p, h200, 16, 16, 16, HS_BF16);
	ck_assert(tiny >= p->gemm_launch && tiny < 1.05 * p->gemm_launch);
	/* above the grid: efficiency clamps, time keeps growing with the work */
	ck_assert(hs_profile_gemm_time(p, h200, 65536, 16384, 16384, HS_BF16) > 3.5 * 1.288e-2);
	/* in between grid points the time lies between its neighbours */
	double a = hs_profile_gemm_time(p, h200, 4096, 4096, 4096, HS_BF16);
	double m = hs_profile_gemm_time(p, h200, 6144, 4096, 4096, HS_BF16);
	double b = hs_profile_gemm_time(p, h200, 8192, 4096, 4096, HS_BF16);
	ck_assert(a < m && m < b);
	/* memory: a 4 GiB copy moved 8 GiB in 2.01 ms (kernels-2026-11-30/mem.jsonl) */
	double mt = hs_profile_mem_time(p, h200, 8589934592.0);
	ck_assert_msg(fabs(mt / 2.01e-3 - 1) < 0.05, "mem %g", mt);
	/* in-stream floors: no host dispatch (about 23 us for isolated PyTorch calls) is in the profile */
	ck_assert(hs_profile_launch(p) < 1.2e-5 && p->gemm_launch < 1.5e-5);
	ck_assert_double_eq_tol(hs_profile_mem_time(p, h200, 1), hs_profile_launch(p), 1e-9);
	ck_assert(hs_profile_mem_op_time(p, h200, "softmax", 1e9) > hs_profile_mem_op_time(p, h200, "add", 1e9));
	/* attention forward, b=1 h=32 s=8192 d=128 causal: 0.948 ms */
	double at = hs_profile_attn_time(p, h200, 1, 32, 8192, 128, 1, 0);
	ck_assert_msg(fabs(at / 0.948e-3 - 1) < 0.10, "attn %g", at);
	ck_assert(hs_profile_attn_time(p, h200, 1, 32, 8192, 128, 1, 1) > at);
	ck_assert(hs_profile_attn_time(p, h200, 1, 32, 8192, 128, 0, 0) > at);
	/* another device: datasheet ratios, shared curves */
	const hs_device_type *a100 = hs_device_builtin("A100-SXM-40GB");
	double ta = hs_profile_gemm_time(p, a100, 8192, 8192, 8192, HS_BF16);
	ck_assert_double_eq_tol((ta - p->gemm_launch) / (t - p->gemm_launch), 989.0 / 312.0, 1e-6);
	/* fp8 on a part without fp8 runs at its bf16 rate */
	ck_assert_double_eq_tol(hs_profile_gemm_time(p, a100, 4096, 4096, 4096, HS_FP8),
				hs_profile_gemm_time(p, a100, 4096, 4096, 4096, HS_BF16), 1e-12);
	hs_profile_free(p);
}
END_TEST

/* The one launch rule for batched GEMMs (op timing and compare-refexec both call it): launch once, then
 * count x (one GEMM - launch); count 1 is one GEMM. */
START_TEST(batched_gemm_launch_rule)
{
	hs_err err = {0};
	hs_profile *p = hs_profile_load("H200-SXM-141GB", &err);
	ck_assert_ptr_nonnull(p);
	double one = hs_profile_gemm_time(p, NULL, 2048, 2048, 128, HS_BF16);
	double l = hs_profile_gemm_time(p, NULL, 1, 1, 1, HS_BF16);
	ck_assert_double_eq(hs_profile_gemm_batched_time(p, NULL, 2048, 2048, 128, 1, HS_BF16), one);
	ck_assert_double_eq_tol(hs_profile_gemm_batched_time(p, NULL, 2048, 2048, 128, 32, HS_BF16), l + 32 * (one - l),
				1e-15);
	hs_profile_free(p);
}
END_TEST

START_TEST(every_builtin_has_a_profile)
{
	for (const char *const *n = hs_device_names(); *n; n++) {
		hs_err err;
		hs_err_clear(&err);
		const hs_device_type *d = hs_device_builtin(*n);
		hs_profile *p = hs_profile_load(d->profile, &err);
		ck_assert_msg(p != NULL, "%s: %s", *n, err.msg);
		ck_assert_str_eq(hs_profile_device(p), *n);
		ck_assert_int_eq(hs_profile_is_derived(p), strcmp(*n, "H200-SXM-141GB") != 0);
		if (hs_profile_is_derived(p)) {
			ck_assert_str_eq(p->derived_from, "H200-SXM-141GB");
			ck_assert_double_eq_tol(p->ratio_hbm_bw, d->hbm_bw / 4.8e12, 1e-4);
		}
		/* dev == NULL uses the profile's own device figures */
		ck_assert_double_eq_tol(hs_profile_gemm_time(p, NULL, 4096, 4096, 4096, HS_BF16),
					hs_profile_gemm_time(p, d, 4096, 4096, 4096, HS_BF16), 1e-12);
		hs_profile_free(p);
	}
}
END_TEST

START_TEST(load_errors_and_roundtrip)
{
	hs_err err;
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_profile_load("NoSuchGPU", &err));
	ck_assert_msg(strstr(err.msg, "profile 'NoSuchGPU' not found"), "%s", err.msg);
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_profile_load("../etc/passwd", &err)); /* a path: opened as such, fails */
	hs_err_clear(&err);
	const char *bad = "name: x\ndevice: y\ndevice_peak: {bf16: 1e15}\ndevice_memory_bandwidth: 1e12\nlaunch: 1e-5\n"
			  "gemm: {launch: 1e-5, m: [1], n: [1], k: [1], efficiency: [[0.5]]}\n"
			  "memory: {launch: 1e-5, bandwidth_fraction: 0.9, sharpnes: 2}\n";
	hs_ydoc *doc = hs_yaml_load_string(bad, strlen(bad), "p.yaml", &err);
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_null(hs_profile_from_yaml(hs_yaml_root(doc), &err));
	ck_assert_msg(strstr(err.msg, "p.yaml:7:") && strstr(err.msg, "did you mean 'sharpness'"), "%s", err.msg);
	hs_yaml_free(doc);

	hs_err_clear(&err);
	hs_profile *p = hs_profile_load("calib/profiles/H200-SXM-141GB.yaml", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	char path[64];
	hs_test_tmpfile(path, sizeof path, "profile", "");
	ck_assert_int_eq(hs_profile_save(p, path, &err), 0);
	hs_profile *q = hs_profile_load(path, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	const hs_device_type *d = hs_device_builtin("H200-SXM-141GB");
	for (double s = 300; s < 30000; s *= 1.7)
		ck_assert_double_eq_tol(hs_profile_gemm_time(q, d, s, s * 1.3, s / 2, HS_BF16) /
					hs_profile_gemm_time(p, d, s, s * 1.3, s / 2, HS_BF16), 1, 1e-3);
	hs_profile_free(q);
	hs_profile_free(p);
	remove(path);
}
END_TEST

/* Synthetic measurements from known parameters with 3% lognormal noise; the fit must recover them. */
static const double T_L = 8e-6, T_BW = 2.0e12, T_P = 2.0, G_L = 12e-6, A_E = 0.7, A_S = 800, A_D = 40;
static double true_eff(double m, double n, double k) { return 0.8 * m / (m + 512) * n / (n + 512) * k / (k + 256); }

START_TEST(fitter_recovers_synthetic)
{
	const hs_device_type *dev = hs_device_builtin("H100-SXM-80GB");
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 42);
	size_t cap = 1 << 20, len = 0;
	char *text = hs_xmalloc(cap);
#define NOISE (exp(gsl_ran_gaussian(r, 0.03)))
	for (double b = 1 << 20; b <= 4.0 * (1 << 30); b *= 2) {
		double t = T_L * pow(1 + pow(2 * b / T_BW / T_L, T_P), 1 / T_P) * NOISE;
		len += (size_t)snprintf(text + len, cap - len, "{\"kind\": \"hbm_copy\", \"bytes\": %.0f, \"t_med\": %.9g}\n", b, t);
	}
	const double ax[] = {256, 1024, 2048, 4096, 8192, 16384};
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			for (int l = 0; l < 6; l++) {
				double m = ax[i], n = ax[j], k = ax[l];
				double t = (G_L + 2 * m * n * k / (dev->peak_flops[HS_BF16] * true_eff(m, n, k))) * NOISE;
				len += (size_t)snprintf(text + len, cap - len,
							"{\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": %g, \"n\": %g, \"k\": %g, "
							"\"t_med\": %.9g}\n", m, n, k, t);
			}
	for (double s = 1024; s <= 16384; s *= 2)
		for (double d = 64; d <= 128; d *= 2) {
			double f = 2 * 4 * 16 * s * s * d, e = A_E * s / (s + A_S) * d / (d + A_D);
			double tf = (T_L + f / (dev->peak_flops[HS_BF16] * e)) * NOISE;
			double tb = (T_L + 2.5 * f / (dev->peak_flops[HS_BF16] * 0.8 * e)) * NOISE;
			len += (size_t)snprintf(text + len, cap - len,
						"{\"kind\": \"sdpa\", \"b\": 4, \"heads\": 16, \"seq\": %g, \"dim\": %g, "
						"\"causal\": true, \"t_fwd\": %.9g, \"t_fwdbwd\": %.9g}\n", s, d, tf, tf + tb);
		}
	gsl_rng_free(r);
	hs_err err;
	hs_err_clear(&err);
	hs_jsonl *js = hs_jsonl_parse(text, len, "synthetic.jsonl", &err);
	ck_assert_msg(js != NULL, "%s", err.msg);
	hs_fit_report rep = {0};
	const hs_jsonl *sets[1] = {js};
	hs_profile *p = hs_fit_profile(sets, 1, dev, "synthetic", &rep, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	printf("synthetic recovery: launch %.3g us (true %.3g), bw %.4g GB/s (true %.4g), p %.3g (true %.3g), "
	       "gemm launch %.3g us (true %.3g), attn emax %.3g s_half %.4g d_half %.3g (true %.3g %.4g %.3g)\n",
	       p->mem_launch * 1e6, T_L * 1e6, p->mem_bw_frac * dev->hbm_bw / 1e9, T_BW / 1e9, p->mem_p, T_P,
	       p->gemm_launch * 1e6, G_L * 1e6, p->attn[0].emax, p->attn[0].s_half, p->attn[0].d_half, A_E, A_S, A_D);
	ck_assert_double_eq_tol(p->mem_launch / T_L, 1, 0.10);
	ck_assert_double_eq_tol(p->mem_bw_frac * dev->hbm_bw / T_BW, 1, 0.05);
	ck_assert_double_eq_tol(p->mem_p / T_P, 1, 0.35);
	ck_assert_double_eq_tol(p->gemm_launch / G_L, 1, 0.10);
	ck_assert_double_eq_tol(p->attn[0].emax / A_E, 1, 0.15);
	ck_assert_double_eq_tol(p->attn[0].s_half / A_S, 1, 0.35);
	ck_assert_double_eq_tol(p->attn[0].d_half / A_D, 1, 0.35);
	/* efficiency in the compute-bound part of the grid, where the launch does not hide it */
	for (double s = 2048; s <= 16384; s *= 2)
		ck_assert_double_eq_tol(hs_profile_gemm_eff(p, s, s, s) / true_eff(s, s, s), 1, 0.08);
	ck_assert(hs_fit_mape(&rep, "gemm-loo", NULL) < 6);
	hs_fit_report_free(&rep);
	hs_profile_free(p);
	hs_jsonl_free(js);
	free(text);
}
END_TEST

/* The shipped H200 profile is what tools/refit-profiles.sh's fit of both sets writes. */
START_TEST(h200_grid_accuracy)
{
	hs_err err;
	hs_err_clear(&err);
	const char *files[] = {K30 "/gemm.jsonl", K30 "/mem.jsonl", K30 "/refexec-gpt-1gpu.jsonl", H200_MEAS};
	hs_jsonl *js[4];
	for (int i = 0; i < 4; i++) {
		js[i] = hs_jsonl_load(files[i], &err);
		ck_assert_msg(js[i] != NULL, "%s", err.msg);
	}
	hs_fit_report rep = {0};
	hs_profile *p = hs_fit_profile((const hs_jsonl *const *)js, 4, hs_device_builtin("H200-SXM-141GB"),
				       "H200-SXM-141GB", &rep, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	size_t n, nl;
	double fit = hs_fit_mape(&rep, "gemm", &n), loo = hs_fit_mape(&rep, "gemm-loo", &nl);
	printf("H200 GEMM grid: fit MAPE %.2f%% over %zu points, leave-one-out MAPE %.2f%% over %zu points\n", fit, n,
	       loo, nl);
	printf("H200 other parts: other dtypes %.2f%%, memory %.2f%%, elementwise %.2f%%, attention fwd %.2f%%, bwd "
	       "%.2f%%; fp8 scale %.3g, kernel_gap %.3g us\n",
	       hs_fit_mape(&rep, "gemm-other", NULL), hs_fit_mape(&rep, "memory", NULL),
	       hs_fit_mape(&rep, "elementwise", NULL), hs_fit_mape(&rep, "attn-fwd", NULL),
	       hs_fit_mape(&rep, "attn-bwd", NULL), p->dtype_scale[HS_FP8], hs_profile_kernel_gap(p) * 1e6);
	ck_assert_uint_eq(n, 216);
	ck_assert(fit < 5);
	ck_assert(loo < 10);
	ck_assert(hs_fit_mape(&rep, "memory", NULL) < 10);
	ck_assert(hs_fit_mape(&rep, "attn-fwd", NULL) < 15);
	/* fp8 from the measured rows: well below the datasheet's 2x of bf16 */
	ck_assert(p->dtype_scale[HS_FP8] > 0.7 && p->dtype_scale[HS_FP8] < 0.97);
	ck_assert(hs_profile_kernel_gap(p) >= 0 && hs_profile_kernel_gap(p) < 2e-6);
	/* the grid is the back-to-back rows: 1024^3 is about 10.6 us there, 37 us as an isolated PyTorch call */
	ck_assert(hs_profile_gemm_time(p, NULL, 1024, 1024, 1024, HS_BF16) < 1.5e-5);
	/* the shipped profile is what this fit writes */
	hs_profile *shipped = hs_profile_load("H200-SXM-141GB", &err);
	ck_assert_ptr_nonnull(shipped);
	ck_assert_double_eq_tol(hs_profile_gemm_time(shipped, NULL, 3000, 5000, 7000, HS_BF16) /
				hs_profile_gemm_time(p, NULL, 3000, 5000, 7000, HS_BF16), 1, 2e-3);
	ck_assert_double_eq_tol(hs_profile_mem_op_time(shipped, NULL, "rmsnorm", 1e9) /
				hs_profile_mem_op_time(p, NULL, "rmsnorm", 1e9), 1, 2e-3);
	ck_assert_str_eq(hs_profile_provenance(shipped), hs_profile_provenance(p));
	hs_profile_free(shipped);
	hs_fit_report_free(&rep);
	hs_profile_free(p);
	for (int i = 0; i < 4; i++)
		hs_jsonl_free(js[i]);
}
END_TEST

/* Text to JSON lines, parsed; the caller frees. */
static hs_jsonl *parse(const char *text, const char *name)
{
	hs_err err;
	hs_err_clear(&err);
	hs_jsonl *js = hs_jsonl_parse(text, strlen(text), name, &err);
	ck_assert_msg(js != NULL, "%s", err.msg);
	return js;
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	hs_xgrow(buf, cap, *len + 512, 1);
	va_start(ap, fmt);
	*len += (size_t)vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	va_end(ap);
}

/* Synthetic rows of our own kernels: a bf16 grid at efficiency 0.7 after a 10 us floor, fp8 rows at 0.85 of
 * twice that rate (the compute part only), one fp8 row so small its time is the floor; copies; refexec tasks
 * with gaps of 2, 3 and -1 us per op. */
static char *own_rows(void)
{
	char *b = NULL;
	size_t len = 0, cap = 0;
	const hs_device_type *dev = hs_device_builtin("H200-SXM-141GB");
	double pk = dev->peak_flops[HS_BF16], L = 10e-6;
	append(&b, &len, &cap, "{\"kind\": \"info\", \"tool\": \"gemm_bench\", \"library\": \"cuBLASLt\", \"name\": "
			       "\"NVIDIA H200\", \"device\": \"NVIDIA H200\", \"date\": \"2026-12-01T10:00:00Z\", "
			       "\"command\": \"kernels/bin/gemm_bench --grid\"}\n");
	for (double m = 1024; m <= 8192; m *= 2)
		for (double n = 1024; n <= 8192; n *= 2)
			for (double k = 1024; k <= 8192; k *= 2)
				append(&b, &len, &cap, "{\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": %g, \"n\": %g, \"k\": %g, "
						       "\"t_med\": %.9g}\n",
				       m, n, k, L + 2 * m * n * k / (pk * 0.7));
	append(&b, &len, &cap, "{\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64, \"t_med\": %.9g}\n",
	       L + 2 * 64 * 64 * 64 / (pk * 0.7));
	for (double s = 2048; s <= 8192; s *= 2)
		append(&b, &len, &cap, "{\"kind\": \"gemm\", \"dtype\": \"fp8\", \"m\": %g, \"n\": %g, \"k\": %g, "
				       "\"t_med\": %.9g}\n",
		       s, s, s, L + 2 * s * s * s / (2 * pk * 0.7 * 0.85));
	append(&b, &len, &cap, "{\"kind\": \"gemm\", \"dtype\": \"fp8\", \"m\": 64, \"n\": 64, \"k\": 64, \"t_med\": %.9g}\n",
	       1.3 * L);
	append(&b, &len, &cap, "{\"kind\": \"info\", \"tool\": \"mem_bench\", \"name\": \"NVIDIA H200\", "
			       "\"date\": \"2026-12-01T10:01:00Z\", \"command\": \"kernels/bin/mem_bench -o x\"}\n");
	for (double by = 1 << 20; by <= 4.3e9; by *= 4)
		append(&b, &len, &cap, "{\"kind\": \"hbm_copy\", \"bytes\": %g, \"t_med\": %.9g}\n", by,
		       pow(pow(6e-6, 2) + pow(2 * by / 4e12, 2), 0.5));
	append(&b, &len, &cap, "{\"kind\": \"info\", \"tool\": \"refexec\", \"name\": \"NVIDIA H200\", "
			       "\"date\": \"2026-12-01T10:02:00Z\", \"command\": \"kernels/bin/refexec g -o y\"}\n");
	const double gaps[3] = {2e-6, 3e-6, -1e-6};
	for (int t = 0; t < 3; t++) {
		append(&b, &len, &cap, "{\"kind\": \"refexec_task\", \"task\": %d, \"t_med\": %.9g}\n", t,
		       10 * 20e-6 + 10 * gaps[t]);
		for (int o = 0; o < 10; o++)
			append(&b, &len, &cap, "{\"kind\": \"refexec_op\", \"task\": %d, \"op\": %d, \"t_med\": 20e-6}\n", t,
			       t * 10 + o);
	}
	return b;
}

/* The fit rules on rows whose answer is known: fp8's scale from its rows (the launch-bound row left out),
 * the kernel gap as the median of the clamped per-task gaps, the source from the info records. */
START_TEST(fit_rules_from_own_rows)
{
	char *text = own_rows();
	hs_jsonl *js = parse(text, "kernels-2026-12-01/own.jsonl");
	free(text);
	hs_err err;
	hs_err_clear(&err);
	hs_fit_report rep = {0};
	const hs_jsonl *sets[1] = {js};
	hs_profile *p = hs_fit_profile(sets, 1, hs_device_builtin("H200-SXM-141GB"), "own", &rep, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_double_eq_tol(p->dtype_scale[HS_FP8], 0.85, 0.01);
	ck_assert_double_eq_tol(p->gemm_launch, 10e-6, 0.2e-6);
	ck_assert(p->kernel_gap_set);
	ck_assert_double_eq_tol(hs_profile_kernel_gap(p), 2e-6, 1e-9); /* median of 2, 3, 0 us */
	ck_assert_double_eq_tol(p->mem_launch, 6e-6, 0.6e-6);
	ck_assert_str_eq(p->src.kind, "measured");
	ck_assert_str_eq(p->src.device, "NVIDIA H200");
	ck_assert_str_eq(p->src.date, "2026-12-01");
	ck_assert_str_eq(hs_profile_provenance(p), "measured on NVIDIA H200, 2026-12-01 (kernels/bin/gemm_bench, "
						   "kernels/bin/mem_bench, kernels/bin/refexec)");
	/* every part says where it came from */
	const char *k, *v;
	int gemm = 0, gap = 0, fp8 = 0;
	for (int i = 0; hs_profile_part(p, i, &k, &v) == 0; i++) {
		gemm |= strcmp(k, "gemm") == 0 && strstr(v, "back-to-back") != NULL;
		gap |= strcmp(k, "kernel_gap") == 0 && strstr(v, "3 tasks") != NULL;
		fp8 |= strcmp(k, "gemm.dtype_scale.fp8") == 0 && strstr(v, "1 launch-bound left out") != NULL;
	}
	ck_assert(gemm && gap && fp8);
	/* saved and loaded: the source mapping comes back */
	char path[64];
	hs_test_tmpfile(path, sizeof path, "own", ".yaml");
	ck_assert_int_eq(hs_profile_save(p, path, &err), 0);
	hs_profile *q = hs_profile_load(path, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_str_eq(hs_profile_provenance(q), hs_profile_provenance(p));
	ck_assert_str_eq(q->src.files, "kernels-2026-12-01/own.jsonl");
	ck_assert_int_eq(q->src.nparts, p->src.nparts);
	ck_assert_double_eq_tol(hs_profile_kernel_gap(q), 2e-6, 1e-12);
	hs_profile_free(q);
	remove(path);
	hs_fit_report_free(&rep);
	hs_profile_free(p);
	hs_jsonl_free(js);
}
END_TEST

/* With both origins, our kernels' rows set the grid and the copy curve; framework rows (no `tool`) only the
 * ops they have. */
START_TEST(fit_prefers_own_rows_for_gemm_and_copy)
{
	char *own = own_rows();
	hs_jsonl *a = parse(own, "own.jsonl");
	free(own);
	/* framework rows 3x slower with a 25 us floor */
	char *b = NULL;
	size_t len = 0, cap = 0;
	append(&b, &len, &cap, "{\"kind\": \"info\", \"name\": \"NVIDIA H200\", \"torch\": \"2.11\"}\n");
	for (double s = 1024; s <= 8192; s *= 2)
		append(&b, &len, &cap, "{\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": %g, \"n\": %g, \"k\": %g, "
				       "\"t_med\": %.9g}\n",
		       s, s, s, 25e-6 + 3 * 2 * s * s * s / (9.89e14 * 0.7));
	for (double by = 1 << 20; by <= 4.3e9; by *= 4) {
		append(&b, &len, &cap, "{\"kind\": \"hbm_copy\", \"bytes\": %g, \"t_med\": %.9g}\n", by,
		       pow(pow(25e-6, 2) + pow(2 * by / 4e12, 2), 0.5));
		/* an add at 0.8 of the framework's copy bandwidth */
		double t = pow(pow(25e-6, 2) + pow(2 * by / (0.8 * 4e12), 2), 0.5);
		append(&b, &len, &cap, "{\"kind\": \"elementwise\", \"op\": \"add\", \"tokens\": 1, \"hidden\": 1, "
				       "\"GBps\": %.9g, \"t_med\": %.9g}\n",
		       2 * by / t / 1e9, t);
	}
	hs_jsonl *f = parse(b, "h200-microbench-2026-11-29.jsonl");
	free(b);
	hs_err err;
	hs_err_clear(&err);
	const hs_jsonl *sets[2] = {a, f};
	hs_profile *p = hs_fit_profile(sets, 2, hs_device_builtin("H200-SXM-141GB"), "both", NULL, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_double_eq_tol(hs_profile_gemm_eff(p, 4096, 4096, 4096), 0.7, 0.01);
	ck_assert_double_eq_tol(p->mem_launch, 6e-6, 0.6e-6);
	ck_assert_double_eq_tol(hs_profile_mem_op_time(p, NULL, "add", 4e9) / hs_profile_mem_time(p, NULL, 4e9), 1 / 0.8,
				0.03);
	ck_assert_str_eq(p->src.date, "2026-11-29, 2026-12-01"); /* the framework file's date from its name */
	hs_profile_free(p);
	hs_jsonl_free(a);
	hs_jsonl_free(f);
}
END_TEST

/* Attention families apart: materialised rows never become the flash curves (a profile without flash rows
 * says both passes are by rule, and keeps saying so once saved), flash rows from a framework harness fit
 * them, and a record whose implementation is unknown, or one of ours that names none, is refused. */
START_TEST(attention_families_apart)
{
	hs_err err;
	hs_err_clear(&err);
	const hs_device_type *dev = hs_device_builtin("H200-SXM-141GB");
	char *own = own_rows();
	char *b = NULL;
	size_t len = 0, cap = 0;
	append(&b, &len, &cap, "{\"kind\": \"info\", \"tool\": \"attn_bench\", \"name\": \"NVIDIA H200\", "
			       "\"method\": \"batched_gemm_softmax\"}\n");
	for (int s = 1024; s <= 4096; s *= 2)
		append(&b, &len, &cap, "{\"kind\": \"sdpa\", \"b\": 4, \"heads\": 16, \"seq\": %d, \"dim\": 64, "
				       "\"t_fwd\": 1e-3, \"t_fwdbwd\": 3e-3, \"method\": \"batched_gemm_softmax\"}\n", s);
	hs_jsonl *js = parse(own, "kernels/own.jsonl"), *ma = parse(b, "kernels/attn.jsonl");
	const hs_jsonl *sets[2] = {js, ma};
	hs_profile *p = hs_fit_profile(sets, 2, dev, "own", NULL, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_profile_attn_rule(p), 3);
	char path[64];
	hs_test_tmpfile(path, sizeof path, "attn", ".yaml");
	ck_assert_int_eq(hs_profile_save(p, path, &err), 0);
	hs_profile *q = hs_profile_load(path, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_profile_attn_rule(q), 3);
	hs_profile_free(q);
	remove(path);
	hs_profile_free(p);

	/* flash rows of a framework harness (no method: PyTorch's sdpa) at 50% of the bf16 peak */
	char *f = NULL;
	len = cap = 0;
	append(&f, &len, &cap, "{\"kind\": \"info\", \"name\": \"NVIDIA H200\", \"torch\": \"2.11\"}\n");
	for (int s = 512; s <= 8192; s *= 2)
		for (int d = 64; d <= 128; d *= 2) {
			double fl = hs_profile_attn_flops(4, 16, s, d, 1, 0);
			append(&f, &len, &cap, "{\"kind\": \"sdpa\", \"b\": 4, \"heads\": 16, \"seq\": %d, \"dim\": %d, "
					       "\"causal\": true, \"t_fwd\": %.9g, \"t_fwdbwd\": %.9g}\n",
			       s, d, 20e-6 + fl / (9.89e14 * 0.5), 40e-6 + 3.5 * fl / (9.89e14 * 0.5));
		}
	hs_jsonl *fw = parse(f, "h200-microbench-2026-11-29.jsonl");
	sets[1] = fw;
	sets[0] = js;
	p = hs_fit_profile(sets, 2, dev, "both", NULL, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_profile_attn_rule(p), 0);
	hs_profile_free(p);
	hs_jsonl_free(fw);
	free(f);

	/* an unknown implementation; one of our own records that names none */
	static const char *const bad[2] = {"{\"kind\": \"sdpa\", \"b\": 4, \"heads\": 16, \"seq\": 1024, \"dim\": 64, "
					   "\"t_fwd\": 1e-3, \"t_fwdbwd\": 3e-3, \"method\": \"tiled_magic\"}\n",
					   "{\"kind\": \"sdpa\", \"b\": 4, \"heads\": 16, \"seq\": 1024, \"dim\": 64, "
					   "\"t_fwd\": 1e-3, \"t_fwdbwd\": 3e-3}\n"};
	static const char *const want[2] = {"unknown attention method 'tiled_magic'", "names no \"method\""};
	for (int i = 0; i < 2; i++) {
		char *t = NULL;
		len = cap = 0;
		append(&t, &len, &cap, "{\"kind\": \"info\", \"tool\": \"attn_bench\", \"name\": \"NVIDIA H200\"}\n%s",
		       bad[i]);
		hs_jsonl *x = parse(t, "kernels/bad.jsonl");
		const hs_jsonl *two[2] = {js, x};
		hs_err_clear(&err);
		ck_assert_ptr_null(hs_fit_profile(two, 2, dev, "bad", NULL, &err));
		ck_assert_int_eq(err.code, HS_EINPUT);
		ck_assert_msg(strstr(err.msg, want[i]) && strstr(err.msg, "kernels/bad.jsonl:"), "%s", err.msg);
		hs_jsonl_free(x);
		free(t);
	}
	hs_jsonl_free(js);
	hs_jsonl_free(ma);
	free(b);
	free(own);
}
END_TEST

/* The source mapping: a derived profile names its base and ratios; an old file's scalar source still loads. */
START_TEST(source_mapping_and_provenance)
{
	hs_err err;
	hs_err_clear(&err);
	for (const char *const *n = hs_device_names(); *n; n++) {
		hs_profile *p = hs_profile_load(hs_device_builtin(*n)->profile, &err);
		ck_assert_msg(p != NULL, "%s", err.msg);
		const char *pv = hs_profile_provenance(p);
		if (hs_profile_is_derived(p)) {
			char want[128];
			snprintf(want, sizeof want, "derived from %s by datasheet ratios (bf16 x", p->derived_from);
			ck_assert_msg(strncmp(pv, want, strlen(want)) == 0, "%s: %s", *n, pv);
		} else
			ck_assert_msg(strncmp(pv, "measured on NVIDIA H200, 2026-11-29, 2026-11-30 (", 49) == 0, "%s", pv);
		hs_profile_free(p);
	}
	hs_profile *b200 = hs_profile_load("B200", &err);
	ck_assert_str_eq(hs_profile_provenance(b200), "derived from H200-SXM-141GB by datasheet ratios (bf16 x2.28, "
						      "memory x1.67)");
	hs_profile_free(b200);
	/* an old file: scalar source, derived flags at the top */
	const char *old = "name: x\ndevice: H100-SXM-80GB\nderived: true\nderived_from: H200-SXM-141GB\n"
			  "ratios: {peak_bf16: 1, memory_bandwidth: 0.698}\nsource: \"a.jsonl\"\n"
			  "device_peak: {bf16: 1e15}\ndevice_memory_bandwidth: 1e12\nlaunch: 1e-5\n"
			  "gemm: {launch: 1e-5, m: [1], n: [1], k: [1], efficiency: [[0.5]]}\n"
			  "memory: {launch: 1e-5, bandwidth_fraction: 0.9}\n"
			  "attention: {launch: 1e-5, forward: {efficiency: 0.5}, backward: {efficiency: 0.4}}\n";
	hs_ydoc *doc = hs_yaml_load_string(old, strlen(old), "old.yaml", &err);
	hs_profile *p = hs_profile_from_yaml(hs_yaml_root(doc), &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	ck_assert_str_eq(hs_profile_provenance(p), "derived from H200-SXM-141GB by datasheet ratios (bf16 x1, memory x0.698)");
	hs_profile_free(p);
	hs_yaml_free(doc);
	/* a new mapping with a bad kind: a clear error */
	char bad[1024];
	snprintf(bad, sizeof bad, "%s", old);
	memcpy(strstr(bad, "source: \"a.jsonl\""), "source: {kind: x}", 17);
	doc = hs_yaml_load_string(bad, strlen(bad), "bad.yaml", &err);
	ck_assert_ptr_null(hs_profile_from_yaml(hs_yaml_root(doc), &err));
	ck_assert_msg(strstr(err.msg, "bad.yaml:6:") && strstr(err.msg, "source.kind"), "%s", err.msg);
	hs_yaml_free(doc);
}
END_TEST

START_TEST(command_writes_profile)
{
	char out[64];
	hs_test_tmpfile(out, sizeof out, "fit", "");
	char *argv[] = {"calib", "fit", H200_MEAS, "-o", out, "--summary", NULL};
	ck_assert_int_eq(cmd_calib(6, argv), 0);
	hs_err err;
	hs_err_clear(&err);
	hs_profile *p = hs_profile_load(out, &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	hs_profile_free(p);
	char *bad[] = {"calib", "fit", "tests/data/no-such.jsonl", "-o", out, NULL};
	ck_assert_int_eq(cmd_calib(5, bad), 2);
	char *nope[] = {"calib", "frobnicate", NULL};
	ck_assert_int_eq(cmd_calib(2, nope), 2);
	remove(out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("profile");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, load_and_query);
	tcase_add_test(tc, batched_gemm_launch_rule);
	tcase_add_test(tc, every_builtin_has_a_profile);
	tcase_add_test(tc, load_errors_and_roundtrip);
	tcase_add_test(tc, fitter_recovers_synthetic);
	tcase_add_test(tc, h200_grid_accuracy);
	tcase_add_test(tc, fit_rules_from_own_rows);
	tcase_add_test(tc, fit_prefers_own_rows_for_gemm_and_copy);
	tcase_add_test(tc, attention_families_apart);
	tcase_add_test(tc, source_mapping_and_provenance);
	tcase_add_test(tc, command_writes_profile);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
