/* gemm_bench: cuBLASLt GEMM times over a shape grid and over given shapes, in bf16, fp16, fp8, tf32, fp32.
 *
 *   gemm_bench [--dtype bf16,fp16,...] [--grid] [--shapes M,N,K;M,N,K...] [--max-mnk 4398046511104]
 *              [--warmup 5] [--reps 25] [--device 0] [-o FILE]
 *
 * C[m,n] = A[m,k] B[k,n], fp32 accumulation, "TN" storage (kernels/gemm.h); random data in [-1, 1], never
 * zero; medians of CUDA-event-timed repetitions after warm-up. --grid is the H200 measurement set
 * (../shared/data/README.md): every m, n, k in {256, 1024, 2048, 4096, 8192, 16384} with m*n*k <= 2^42.
 * Without --grid or --shapes it runs the grid. Records: {"kind": "gemm", "dtype", "m", "n", "k", "t_med",
 * "t_min", "t_max", "tflops", "set", "reps"}, as calib/fit.c reads them. */
#include <string.h>

#include "common.h"
#include "gemm.h"

struct run {
	hsk_gemm_ctx *c;
	hsk_gemm_plan *p;
	void *a, *b, *d;
};

static void launch(void *ctx, cudaStream_t s)
{
	struct run *r = (struct run *)ctx;
	hsk_gemm_run(r->c, r->p, r->a, r->b, r->d, 1.f, s);
}

static void one(hsk_out *o, hsk_gemm_ctx *c, int dt, int m, int n, int k, const char *set, int warmup, int reps,
		void *bufa, void *bufb, void *bufd, cudaStream_t s)
{
	hsk_gemm_plan p;
	if (hsk_gemm_plan_make(c, &p, m, n, k, dt, 1, 0, 1)) {
		hsk_rec(o, "gemm_skipped", ", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"why\": \"no cuBLASLt "
					   "algorithm\"",
			hsk_dtype_names[dt], m, n, k);
		return;
	}
	hsk_fill(bufa, (size_t)m * k, dt, 1.f, 1, s);
	hsk_fill(bufb, (size_t)k * n, dt, 1.f, 2, s);
	/* big shapes: fewer repetitions, at least 5 (about 0.3 s per shape at most) */
	double flops = 2.0 * m * n * k;
	int r = reps;
	while (r > 5 && flops * r > 2e14)
		r--;
	struct run ctx = {c, &p, bufa, bufb, bufd};
	hsk_stats st = hsk_time(launch, &ctx, s, warmup, r);
	hsk_rec(o, "gemm",
		", \"dtype\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"t_med\": %.9g, \"t_min\": %.9g, \"t_max\": %.9g, "
		"\"tflops\": %.6g, \"set\": \"%s\", \"reps\": %d, \"layout\": \"TN\", \"accumulate\": \"fp32\"",
		hsk_dtype_names[dt], m, n, k, st.med, st.min, st.max, flops / st.med / 1e12, set, st.reps);
	hsk_gemm_plan_free(&p);
}

int main(int argc, char **argv)
{
	if (hsk_flag(argc, argv, "-h") || hsk_flag(argc, argv, "--help")) {
		printf("usage: gemm_bench [--dtype bf16,fp16,fp8,tf32,fp32] [--grid] [--shapes M,N,K;...] "
		       "[--max-mnk X] [--warmup 5] [--reps 25] [--device 0] [-o FILE]\n");
		return 0;
	}
	const char *dts = hsk_arg(argc, argv, "--dtype"), *shapes = hsk_arg(argc, argv, "--shapes");
	const char *out = hsk_arg(argc, argv, "-o");
	int grid = hsk_flag(argc, argv, "--grid") || !shapes;
	int dev = hsk_arg(argc, argv, "--device") ? atoi(hsk_arg(argc, argv, "--device")) : 0;
	int warmup = hsk_arg(argc, argv, "--warmup") ? atoi(hsk_arg(argc, argv, "--warmup")) : 5;
	int reps = hsk_arg(argc, argv, "--reps") ? atoi(hsk_arg(argc, argv, "--reps")) : 25;
	double maxmnk = hsk_arg(argc, argv, "--max-mnk") ? atof(hsk_arg(argc, argv, "--max-mnk")) : 4398046511104.0;
	if (reps < 1 || warmup < 0) {
		fprintf(stderr, "gemm_bench: --reps must be >= 1 and --warmup >= 0\n");
		return 2;
	}
	int dtl[5], ndt = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", dts ? dts : "bf16");
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int d = hsk_dtype_parse(t);
		if (d < 0 || ndt == 5) {
			fprintf(stderr, "gemm_bench: --dtype %s: expected fp8, bf16, fp16, tf32, fp32\n", t);
			return 2;
		}
		dtl[ndt++] = d;
	}
	/* shapes */
	int (*sh)[3] = NULL;
	int nsh = 0, cap = 0;
	if (shapes) {
		char *copy = strdup(shapes);
		for (char *save = NULL, *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
			int m, n, k;
			if (sscanf(t, "%d,%d,%d", &m, &n, &k) != 3 || m <= 0 || n <= 0 || k <= 0) {
				fprintf(stderr, "gemm_bench: --shapes: '%s' is not M,N,K\n", t);
				return 2;
			}
			if (nsh == cap)
				sh = (int(*)[3])realloc(sh, sizeof *sh * (size_t)(cap = cap ? 2 * cap : 16));
			sh[nsh][0] = m, sh[nsh][1] = n, sh[nsh][2] = k;
			nsh++;
		}
		free(copy);
	}
	int ngiven = nsh;
	if (grid) {
		static const int ax[] = {256, 1024, 2048, 4096, 8192, 16384};
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 6; j++)
				for (int l = 0; l < 6; l++) {
					if ((double)ax[i] * ax[j] * ax[l] > maxmnk)
						continue;
					if (nsh == cap)
						sh = (int(*)[3])realloc(sh, sizeof *sh * (size_t)(cap = cap ? 2 * cap : 256));
					sh[nsh][0] = ax[i], sh[nsh][1] = ax[j], sh[nsh][2] = ax[l];
					nsh++;
				}
	}
	CK(cudaSetDevice(dev));
	hsk_out o;
	hsk_out_open(&o, out);
	hsk_info(&o, "gemm_bench", dev, argc, argv, "\"library\": \"cuBLASLt\"");
	size_t maxa = 0, maxb = 0, maxd = 0;
	for (int i = 0; i < nsh; i++) {
		size_t a = (size_t)sh[i][0] * sh[i][2] * 4, b = (size_t)sh[i][2] * sh[i][1] * 4, d = (size_t)sh[i][0] * sh[i][1] * 4;
		maxa = a > maxa ? a : maxa, maxb = b > maxb ? b : maxb, maxd = d > maxd ? d : maxd;
	}
	void *A, *B, *D;
	CK(cudaMalloc(&A, maxa + 256));
	CK(cudaMalloc(&B, maxb + 256));
	CK(cudaMalloc(&D, maxd + 256));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	hsk_gemm_ctx c;
	hsk_gemm_init(&c);
	for (int t = 0; t < ndt; t++)
		for (int i = 0; i < nsh; i++)
			one(&o, &c, dtl[t], sh[i][0], sh[i][1], sh[i][2], i < ngiven ? "given" : "grid", warmup, reps, A, B, D,
			    s);
	hsk_gemm_fini(&c);
	cudaFree(A);
	cudaFree(B);
	cudaFree(D);
	cudaStreamDestroy(s);
	free(sh);
	hsk_out_close(&o);
	return 0;
}
