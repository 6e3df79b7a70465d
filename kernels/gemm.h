/* GEMMs through cuBLASLt, shared by gemm_bench, attn_bench and refexec.
 *
 * A plan is one (m, n, k, dtype, transposes, batch) with its layouts and the algorithm cuBLASLt's heuristic
 * ranks first for a 32 MiB workspace. Storage is column-major as cuBLAS sees it: D[m,n] = op(A) op(B), with
 * A stored k x m when transposed (lda = k) and m x k otherwise, B stored k x n untransposed (ldb = k) or
 * n x k transposed. The benchmark's C[m,n] = A[m,k] B[k,n] runs as "TN" (transa = 1, transb = 0), the layout
 * cuBLASLt requires for fp8 (e4m3 inputs, bf16 output); other dtypes write their own type, fp32 for tf32.
 * Accumulation is fp32 for every dtype; tf32 uses CUBLAS_COMPUTE_32F_FAST_TF32. */
#ifndef HSK_GEMM_H
#define HSK_GEMM_H

#include <cublasLt.h>

#include "common.h"

typedef struct hsk_gemm_plan {
	int m, n, k, dt, transa, transb, batch;
	long long stride_a, stride_b, stride_c; /* elements between batches */
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	int ok;
} hsk_gemm_plan;

typedef struct hsk_gemm_ctx {
	cublasLtHandle_t lt;
	void *workspace;
	size_t ws_bytes;
} hsk_gemm_ctx;

void hsk_gemm_init(hsk_gemm_ctx *c);
void hsk_gemm_fini(hsk_gemm_ctx *c);
/* Returns 0, or -1 when cuBLASLt has no algorithm for it (message printed). Strides 0: packed. */
int hsk_gemm_plan_make(hsk_gemm_ctx *c, hsk_gemm_plan *p, int m, int n, int k, int dt, int transa, int transb,
		       int batch);
void hsk_gemm_plan_free(hsk_gemm_plan *p);
/* D = alpha op(A) op(B); D has the output type of the plan's dtype (bf16 for fp8). */
void hsk_gemm_run(hsk_gemm_ctx *c, const hsk_gemm_plan *p, const void *A, const void *B, void *D, float alpha,
		  cudaStream_t s);
size_t hsk_gemm_out_bytes(int dt); /* bytes per element of D */

#endif
