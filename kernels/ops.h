/* Memory-bound kernels and attention, shared by mem_bench, attn_bench and refexec.
 *
 * Tensors are bf16 (activations) unless named otherwise; arithmetic is fp32. Element counts are size_t.
 * The bytes each kernel moves, as benchmarks report them (minimal traffic, as ../shared/data's PyTorch
 * measurements count it): add 3 tensors, gelu/dropout/scale 2, layernorm/rmsnorm 2, softmax 2, Adam 28 B
 * per parameter (bf16 grad in, fp32 master, m, v in and out, bf16 weight out).
 *
 * Attention is materialised: S = Q K^T (strided-batched cuBLASLt GEMM over b*h), a causal softmax kernel,
 * O = P V; backward recomputes nothing (P is kept) and runs dV = P^T dO, dP = dO V^T, the softmax backward
 * and dQ = dS K, dK = dS^T Q. It is not a FlashAttention kernel: it does the full s x s_kv work even when
 * causal, and moves the score matrix through HBM. Outputs say method "batched_gemm_softmax". */
#ifndef HSK_OPS_H
#define HSK_OPS_H

#include <cuda_bf16.h>

#include "common.h"
#include "gemm.h"

void hsk_add(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *c, size_t n, cudaStream_t s);
void hsk_gelu(const __nv_bfloat16 *x, __nv_bfloat16 *y, size_t n, cudaStream_t s);
void hsk_dropout(const __nv_bfloat16 *x, __nv_bfloat16 *y, size_t n, float p, unsigned seed, cudaStream_t s);
void hsk_scale(const __nv_bfloat16 *x, __nv_bfloat16 *y, size_t n, float a, cudaStream_t s);
/* Row-wise over rows x cols (gamma, beta: fp32 [cols]; beta may be NULL). */
void hsk_layernorm(const __nv_bfloat16 *x, __nv_bfloat16 *y, const float *gamma, const float *beta, size_t rows,
		   int cols, cudaStream_t s);
void hsk_rmsnorm(const __nv_bfloat16 *x, __nv_bfloat16 *y, const float *gamma, size_t rows, int cols,
		 cudaStream_t s);
/* Row softmax of x (rows x cols) * scale into y (may alias x). causal: row r of a block of `qrows` rows keeps
 * columns <= (r % qrows) + (cols - qrows). */
void hsk_softmax(const __nv_bfloat16 *x, __nv_bfloat16 *y, size_t rows, int cols, float scale, int causal, int qrows,
		 cudaStream_t s);
/* dS = P * (dP - rowsum(P * dP)) * scale, in place over dP. */
void hsk_softmax_bwd(const __nv_bfloat16 *p, __nv_bfloat16 *dp, size_t rows, int cols, float scale, cudaStream_t s);
/* Adam on n fp32 parameters with bf16 gradients; also writes the bf16 weight copy. */
void hsk_adam(float *w, float *m, float *v, const __nv_bfloat16 *g, __nv_bfloat16 *w16, size_t n, float lr,
	      int step, cudaStream_t s);

/* Attention over bh = b*heads independent heads of s queries, skv keys, head size d, bf16. */
typedef struct hsk_attn {
	int bh, s, skv, d, causal;
	hsk_gemm_plan qk, pv;             /* forward */
	hsk_gemm_plan dv, dp, dq, dk;     /* backward */
	int has_bwd;
} hsk_attn;

typedef struct hsk_attn_bufs {
	__nv_bfloat16 *q, *k, *v, *o, *p; /* p: bh x s x skv scores / probabilities */
	__nv_bfloat16 *dout, *dq, *dk, *dv, *dp;
} hsk_attn_bufs;

int hsk_attn_make(hsk_gemm_ctx *c, hsk_attn *a, int bh, int s, int skv, int d, int causal, int with_bwd);
void hsk_attn_free(hsk_attn *a);
/* Device bytes hsk_attn_bufs needs (forward only, or with backward). */
size_t hsk_attn_bytes(int bh, int s, int skv, int d, int with_bwd);
/* Carve buffers out of `base` (hsk_attn_bytes of it). */
void hsk_attn_carve(hsk_attn_bufs *b, void *base, int bh, int s, int skv, int d, int with_bwd);
void hsk_attn_fwd(hsk_gemm_ctx *c, const hsk_attn *a, const hsk_attn_bufs *b, cudaStream_t s);
void hsk_attn_bwd(hsk_gemm_ctx *c, const hsk_attn *a, const hsk_attn_bufs *b, cudaStream_t s);

#endif
