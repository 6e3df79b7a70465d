/* kernels/gemm.h */
#include "gemm.h"

#include <string.h>

#define CKL(x)                                                                                                     \
	do {                                                                                                       \
		cublasStatus_t s_ = (x);                                                                           \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                 \
			fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_);         \
			exit(1);                                                                                   \
		}                                                                                                  \
	} while (0)

void hsk_gemm_init(hsk_gemm_ctx *c)
{
	CKL(cublasLtCreate(&c->lt));
	c->ws_bytes = 32u << 20;
	CK(cudaMalloc(&c->workspace, c->ws_bytes));
}

void hsk_gemm_fini(hsk_gemm_ctx *c)
{
	cudaFree(c->workspace);
	cublasLtDestroy(c->lt);
}

static cudaDataType_t in_type(int dt)
{
	switch (dt) {
	case HSK_FP8: return CUDA_R_8F_E4M3;
	case HSK_BF16: return CUDA_R_16BF;
	case HSK_FP16: return CUDA_R_16F;
	default: return CUDA_R_32F;
	}
}

static cudaDataType_t out_type(int dt) { return dt == HSK_FP8 ? CUDA_R_16BF : in_type(dt); }

size_t hsk_gemm_out_bytes(int dt) { return dt == HSK_FP8 ? 2 : hsk_dtype_bytes(dt); }

static void batch_layout(cublasLtMatrixLayout_t l, int batch, long long stride)
{
	if (batch <= 1)
		return;
	CKL(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
	CKL(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
}

int hsk_gemm_plan_make(hsk_gemm_ctx *c, hsk_gemm_plan *p, int m, int n, int k, int dt, int transa, int transb,
		       int batch)
{
	memset(p, 0, sizeof *p);
	p->m = m, p->n = n, p->k = k, p->dt = dt, p->transa = transa, p->transb = transb;
	p->batch = batch < 1 ? 1 : batch;
	p->stride_a = (long long)m * k;
	p->stride_b = (long long)k * n;
	p->stride_c = (long long)m * n;
	cublasComputeType_t ct = dt == HSK_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	CKL(cublasLtMatmulDescCreate(&p->desc, ct, CUDA_R_32F));
	cublasOperation_t oa = transa ? CUBLAS_OP_T : CUBLAS_OP_N, ob = transb ? CUBLAS_OP_T : CUBLAS_OP_N;
	CKL(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &oa, sizeof oa));
	CKL(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &ob, sizeof ob));
	/* stored shapes (rows x cols, column-major) */
	CKL(cublasLtMatrixLayoutCreate(&p->la, in_type(dt), transa ? k : m, transa ? m : k, transa ? k : m));
	CKL(cublasLtMatrixLayoutCreate(&p->lb, in_type(dt), transb ? n : k, transb ? k : n, transb ? n : k));
	CKL(cublasLtMatrixLayoutCreate(&p->lc, out_type(dt), m, n, m));
	batch_layout(p->la, p->batch, p->stride_a);
	batch_layout(p->lb, p->batch, p->stride_b);
	batch_layout(p->lc, p->batch, p->stride_c);
	cublasLtMatmulPreference_t pref;
	CKL(cublasLtMatmulPreferenceCreate(&pref));
	CKL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &c->ws_bytes,
						 sizeof c->ws_bytes));
	cublasLtMatmulHeuristicResult_t res;
	int found = 0;
	cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(c->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &res,
							   &found);
	cublasLtMatmulPreferenceDestroy(pref);
	if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
		fprintf(stderr, "cuBLASLt: no algorithm for %s m=%d n=%d k=%d trans=%d%d batch=%d (status %d)\n",
			hsk_dtype_names[dt], m, n, k, transa, transb, p->batch, (int)st);
		hsk_gemm_plan_free(p);
		return -1;
	}
	p->algo = res.algo;
	p->ok = 1;
	return 0;
}

void hsk_gemm_plan_free(hsk_gemm_plan *p)
{
	if (p->lc)
		cublasLtMatrixLayoutDestroy(p->lc);
	if (p->lb)
		cublasLtMatrixLayoutDestroy(p->lb);
	if (p->la)
		cublasLtMatrixLayoutDestroy(p->la);
	if (p->desc)
		cublasLtMatmulDescDestroy(p->desc);
	memset(p, 0, sizeof *p);
}

void hsk_gemm_run(hsk_gemm_ctx *c, const hsk_gemm_plan *p, const void *A, const void *B, void *D, float alpha,
		  cudaStream_t s)
{
	float beta = 0;
	CKL(cublasLtMatmul(c->lt, p->desc, &alpha, A, p->la, B, p->lb, &beta, D, p->lc, D, p->lc, &p->algo,
			   c->workspace, c->ws_bytes, s));
}
