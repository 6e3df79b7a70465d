/* kernels/ops.h */
#include "ops.h"

#include <math.h>

typedef __nv_bfloat16 bf16;

static int grid_for(size_t n, int per_thread)
{
	size_t b = (n / per_thread + 255) / 256;
	if (b < 1)
		b = 1;
	if (b > 65535u * 8)
		b = 65535u * 8;
	return (int)b;
}

/* ---- elementwise, 8 bf16 per thread per step through 16-byte loads ---- */

struct v8 {
	uint4 u;
};

__device__ __forceinline__ void unpack(uint4 u, float f[8])
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
	for (int i = 0; i < 4; i++) {
		float2 t = __bfloat1622float2(h[i]);
		f[2 * i] = t.x;
		f[2 * i + 1] = t.y;
	}
}

__device__ __forceinline__ uint4 pack(const float f[8])
{
	uint4 u;
	__nv_bfloat162 *h = (__nv_bfloat162 *)&u;
	for (int i = 0; i < 4; i++)
		h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
	return u;
}

__device__ __forceinline__ float gelu_f(float x)
{
	return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float hash01(size_t i, unsigned seed)
{
	unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (unsigned)(x >> 40) * (1.0f / 16777216.0f);
}

enum { EW_ADD, EW_GELU, EW_DROPOUT, EW_SCALE };

template <int OP>
__global__ void ew_k(const bf16 *a, const bf16 *b, bf16 *c, size_t n, float prm, unsigned seed)
{
	size_t nv = n / 8;
	const uint4 *A = (const uint4 *)a, *B = (const uint4 *)b;
	uint4 *C = (uint4 *)c;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nv; i += (size_t)gridDim.x * blockDim.x) {
		float x[8], y[8];
		unpack(A[i], x);
		if (OP == EW_ADD)
			unpack(B[i], y);
		for (int j = 0; j < 8; j++) {
			if (OP == EW_ADD)
				x[j] += y[j];
			else if (OP == EW_GELU)
				x[j] = gelu_f(x[j]);
			else if (OP == EW_DROPOUT)
				x[j] = hash01(i * 8 + j, seed) < prm ? 0.f : x[j] / (1.f - prm);
			else
				x[j] *= prm;
		}
		C[i] = pack(x);
	}
	/* tail */
	for (size_t i = nv * 8 + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float x = __bfloat162float(a[i]);
		if (OP == EW_ADD)
			x += __bfloat162float(b[i]);
		else if (OP == EW_GELU)
			x = gelu_f(x);
		else if (OP == EW_DROPOUT)
			x = hash01(i, seed) < prm ? 0.f : x / (1.f - prm);
		else
			x *= prm;
		c[i] = __float2bfloat16(x);
	}
}

/* The vector path needs 16-byte alignment; cudaMalloc gives 256 and callers carve at 256-byte offsets. */
void hsk_add(const bf16 *a, const bf16 *b, bf16 *c, size_t n, cudaStream_t s)
{
	ew_k<EW_ADD><<<grid_for(n, 8), 256, 0, s>>>(a, b, c, n, 0, 0);
}
void hsk_gelu(const bf16 *x, bf16 *y, size_t n, cudaStream_t s)
{
	ew_k<EW_GELU><<<grid_for(n, 8), 256, 0, s>>>(x, NULL, y, n, 0, 0);
}
void hsk_dropout(const bf16 *x, bf16 *y, size_t n, float p, unsigned seed, cudaStream_t s)
{
	ew_k<EW_DROPOUT><<<grid_for(n, 8), 256, 0, s>>>(x, NULL, y, n, p, seed);
}
void hsk_scale(const bf16 *x, bf16 *y, size_t n, float a, cudaStream_t s)
{
	ew_k<EW_SCALE><<<grid_for(n, 8), 256, 0, s>>>(x, NULL, y, n, a, 0);
}

/* ---- row kernels: one block per row ---- */

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}
__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* block-wide reduction of v (sum or max); every thread gets the result */
template <int MAX> __device__ float block_reduce(float v)
{
	__shared__ float sh[32];
	__shared__ float res;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	v = MAX ? warp_max(v) : warp_sum(v);
	if (lane == 0)
		sh[w] = v;
	__syncthreads();
	if (w == 0) {
		float x = lane < (int)(blockDim.x >> 5) ? sh[lane] : (MAX ? -INFINITY : 0.f);
		x = MAX ? warp_max(x) : warp_sum(x);
		if (lane == 0)
			res = x;
	}
	__syncthreads();
	float r = res;
	__syncthreads();
	return r;
}

template <int RMS>
__global__ void norm_k(const bf16 *x, bf16 *y, const float *gamma, const float *beta, int cols)
{
	const bf16 *row = x + blockIdx.x * (size_t)cols;
	bf16 *out = y + blockIdx.x * (size_t)cols;
	float s = 0, ss = 0;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		float v = __bfloat162float(row[i]);
		s += v;
		ss += v * v;
	}
	s = block_reduce<0>(s);
	ss = block_reduce<0>(ss);
	float mean = RMS ? 0.f : s / cols;
	float var = RMS ? ss / cols : fmaxf(ss / cols - mean * mean, 0.f);
	float inv = rsqrtf(var + 1e-5f);
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		float v = (__bfloat162float(row[i]) - mean) * inv * gamma[i];
		if (!RMS && beta)
			v += beta[i];
		out[i] = __float2bfloat16(v);
	}
}

static int row_threads(int cols)
{
	int t = 128;
	while (t < 1024 && t * 8 < cols)
		t *= 2;
	return t;
}

void hsk_layernorm(const bf16 *x, bf16 *y, const float *gamma, const float *beta, size_t rows, int cols,
		   cudaStream_t s)
{
	norm_k<0><<<(unsigned)rows, row_threads(cols), 0, s>>>(x, y, gamma, beta, cols);
}

void hsk_rmsnorm(const bf16 *x, bf16 *y, const float *gamma, size_t rows, int cols, cudaStream_t s)
{
	norm_k<1><<<(unsigned)rows, row_threads(cols), 0, s>>>(x, y, gamma, NULL, cols);
}

__global__ void softmax_k(const bf16 *x, bf16 *y, int cols, float scale, int causal, int qrows)
{
	const bf16 *row = x + blockIdx.x * (size_t)cols;
	bf16 *out = y + blockIdx.x * (size_t)cols;
	int last = causal ? (int)(blockIdx.x % qrows) + (cols - qrows) : cols - 1; /* last kept column */
	float m = -INFINITY;
	for (int i = threadIdx.x; i <= last; i += blockDim.x)
		m = fmaxf(m, __bfloat162float(row[i]) * scale);
	m = block_reduce<1>(m);
	float sum = 0;
	for (int i = threadIdx.x; i <= last; i += blockDim.x)
		sum += __expf(__bfloat162float(row[i]) * scale - m);
	sum = block_reduce<0>(sum);
	float inv = 1.f / sum;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		out[i] = __float2bfloat16(i <= last ? __expf(__bfloat162float(row[i]) * scale - m) * inv : 0.f);
}

void hsk_softmax(const bf16 *x, bf16 *y, size_t rows, int cols, float scale, int causal, int qrows, cudaStream_t s)
{
	softmax_k<<<(unsigned)rows, row_threads(cols), 0, s>>>(x, y, cols, scale, causal, qrows > 0 ? qrows : 1);
}

__global__ void softmax_bwd_k(const bf16 *p, bf16 *dp, int cols, float scale)
{
	const bf16 *P = p + blockIdx.x * (size_t)cols;
	bf16 *D = dp + blockIdx.x * (size_t)cols;
	float s = 0;
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		s += __bfloat162float(P[i]) * __bfloat162float(D[i]);
	s = block_reduce<0>(s);
	for (int i = threadIdx.x; i < cols; i += blockDim.x)
		D[i] = __float2bfloat16(__bfloat162float(P[i]) * (__bfloat162float(D[i]) - s) * scale);
}

void hsk_softmax_bwd(const bf16 *p, bf16 *dp, size_t rows, int cols, float scale, cudaStream_t s)
{
	softmax_bwd_k<<<(unsigned)rows, row_threads(cols), 0, s>>>(p, dp, cols, scale);
}

__global__ void adam_k(float *w, float *m, float *v, const bf16 *g, bf16 *w16, size_t n, float lr, float bc1,
		       float bc2)
{
	const float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float gr = __bfloat162float(g[i]);
		float mi = b1 * m[i] + (1 - b1) * gr;
		float vi = b2 * v[i] + (1 - b2) * gr * gr;
		float wi = w[i];
		wi -= lr * ((mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * wi);
		m[i] = mi;
		v[i] = vi;
		w[i] = wi;
		w16[i] = __float2bfloat16(wi);
	}
}

void hsk_adam(float *w, float *m, float *v, const bf16 *g, bf16 *w16, size_t n, float lr, int step, cudaStream_t s)
{
	float bc1 = 1.f - powf(0.9f, (float)step), bc2 = 1.f - powf(0.95f, (float)step);
	adam_k<<<grid_for(n, 4), 256, 0, s>>>(w, m, v, g, w16, n, lr, bc1, bc2);
}

/* ---- attention ---- */

static size_t al(size_t b) { return (b + 255) & ~(size_t)255; }

size_t hsk_attn_bytes(int bh, int s, int skv, int d, int with_bwd)
{
	size_t q = al((size_t)bh * s * d * 2), kv = al((size_t)bh * skv * d * 2), p = al((size_t)bh * s * skv * 2);
	size_t t = 2 * q + 2 * kv + p; /* q, o; k, v; p */
	if (with_bwd)
		t += 2 * q + 2 * kv + p; /* dout, dq; dk, dv; dp */
	return t;
}

void hsk_attn_carve(hsk_attn_bufs *b, void *base, int bh, int s, int skv, int d, int with_bwd)
{
	char *c = (char *)base;
	size_t q = al((size_t)bh * s * d * 2), kv = al((size_t)bh * skv * d * 2), p = al((size_t)bh * s * skv * 2);
	memset(b, 0, sizeof *b);
	b->q = (bf16 *)c, c += q;
	b->o = (bf16 *)c, c += q;
	b->k = (bf16 *)c, c += kv;
	b->v = (bf16 *)c, c += kv;
	b->p = (bf16 *)c, c += p;
	if (with_bwd) {
		b->dout = (bf16 *)c, c += q;
		b->dq = (bf16 *)c, c += q;
		b->dk = (bf16 *)c, c += kv;
		b->dv = (bf16 *)c, c += kv;
		b->dp = (bf16 *)c, c += p;
	}
}

/* Row-major [rows, cols] tensors seen column-major by cuBLASLt (see the derivations in docs: kernels/README.md):
 *   S[s,skv]  = Q K^T   -> D(skv x s)  = K^T(op T of d x skv) * Q(d x s):      TN, m=skv, n=s,   k=d
 *   O[s,d]    = P V     -> D(d x s)    = V(d x skv) * P(skv x s):              NN, m=d,   n=s,   k=skv
 *   dV[skv,d] = P^T dO  -> D(d x skv)  = dO(d x s) * P^T(op T of skv x s):     NT, m=d,   n=skv, k=s
 *   dP[s,skv] = dO V^T  -> D(skv x s)  = V^T(op T of d x skv) * dO(d x s):     TN, m=skv, n=s,   k=d
 *   dQ[s,d]   = dS K    -> D(d x s)    = K(d x skv) * dS(skv x s):             NN, m=d,   n=s,   k=skv
 *   dK[skv,d] = dS^T Q  -> D(d x skv)  = Q(d x s) * dS^T(op T of skv x s):     NT, m=d,   n=skv, k=s */
int hsk_attn_make(hsk_gemm_ctx *c, hsk_attn *a, int bh, int s, int skv, int d, int causal, int with_bwd)
{
	memset(a, 0, sizeof *a);
	a->bh = bh, a->s = s, a->skv = skv, a->d = d, a->causal = causal, a->has_bwd = with_bwd;
	if (hsk_gemm_plan_make(c, &a->qk, skv, s, d, HSK_BF16, 1, 0, bh) ||
	    hsk_gemm_plan_make(c, &a->pv, d, s, skv, HSK_BF16, 0, 0, bh))
		return -1;
	if (with_bwd && (hsk_gemm_plan_make(c, &a->dv, d, skv, s, HSK_BF16, 0, 1, bh) ||
			 hsk_gemm_plan_make(c, &a->dp, skv, s, d, HSK_BF16, 1, 0, bh) ||
			 hsk_gemm_plan_make(c, &a->dq, d, s, skv, HSK_BF16, 0, 0, bh) ||
			 hsk_gemm_plan_make(c, &a->dk, d, skv, s, HSK_BF16, 0, 1, bh)))
		return -1;
	return 0;
}

void hsk_attn_free(hsk_attn *a)
{
	hsk_gemm_plan *p[] = {&a->qk, &a->pv, &a->dv, &a->dp, &a->dq, &a->dk};
	for (int i = 0; i < 6; i++)
		if (p[i]->ok)
			hsk_gemm_plan_free(p[i]);
}

void hsk_attn_fwd(hsk_gemm_ctx *c, const hsk_attn *a, const hsk_attn_bufs *b, cudaStream_t s)
{
	float scale = 1.f / sqrtf((float)a->d);
	hsk_gemm_run(c, &a->qk, b->k, b->q, b->p, 1.f, s);
	hsk_softmax(b->p, b->p, (size_t)a->bh * a->s, a->skv, scale, a->causal, a->s, s);
	hsk_gemm_run(c, &a->pv, b->v, b->p, b->o, 1.f, s);
}

void hsk_attn_bwd(hsk_gemm_ctx *c, const hsk_attn *a, const hsk_attn_bufs *b, cudaStream_t s)
{
	float scale = 1.f / sqrtf((float)a->d);
	hsk_gemm_run(c, &a->dv, b->dout, b->p, b->dv, 1.f, s);
	hsk_gemm_run(c, &a->dp, b->v, b->dout, b->dp, 1.f, s);
	hsk_softmax_bwd(b->p, b->dp, (size_t)a->bh * a->s, a->skv, scale, s);
	hsk_gemm_run(c, &a->dq, b->k, b->dp, b->dq, 1.f, s);
	hsk_gemm_run(c, &a->dk, b->q, b->dp, b->dk, 1.f, s);
}
