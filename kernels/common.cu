/* kernels/common.h */
#include "common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <nccl.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

const char *const hsk_dtype_names[5] = {"fp8", "bf16", "fp16", "tf32", "fp32"};

int hsk_dtype_parse(const char *s)
{
	for (int i = 0; i < 5; i++)
		if (strcmp(s, hsk_dtype_names[i]) == 0)
			return i;
	return -1;
}

size_t hsk_dtype_bytes(int dt)
{
	static const size_t b[5] = {1, 2, 2, 4, 4};
	return b[dt];
}

void hsk_out_open(hsk_out *o, const char *path)
{
	memset(o, 0, sizeof *o);
	o->f = (!path || strcmp(path, "-") == 0) ? stdout : fopen(path, "w");
	if (!o->f) {
		fprintf(stderr, "%s: cannot write\n", path);
		exit(2);
	}
}

void hsk_out_close(hsk_out *o)
{
	if (fflush(o->f) != 0 || ferror(o->f)) {
		fprintf(stderr, "error writing output\n");
		exit(1);
	}
	if (o->f != stdout)
		fclose(o->f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void hsk_info(hsk_out *o, const char *tool, int dev, int argc, char **argv, const char *extra_json)
{
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, dev));
	snprintf(o->device, sizeof o->device, "%s", p.name);
	int drv = 0, rt = 0, nccl = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	ncclGetVersion(&nccl);
	char date[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char cmd[4096] = "";
	size_t used = 0;
	for (int i = 0; i < argc && used < sizeof cmd; i++) {
		int w = snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", argv[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	FILE *f = o->f;
	fprintf(f, "{\"kind\": \"info\", \"tool\": ");
	json_str(f, tool);
	fprintf(f, ", \"name\": ");
	json_str(f, p.name);
	fprintf(f, ", \"device\": ");
	json_str(f, p.name);
	fprintf(f, ", \"sms\": %d, \"mem_bytes\": %zu, \"l2_bytes\": %d, \"cc\": \"%d.%d\"", p.multiProcessorCount,
		p.totalGlobalMem, p.l2CacheSize, p.major, p.minor);
	int ngpu = 0;
	cudaGetDeviceCount(&ngpu);
	fprintf(f, ", \"visible_gpus\": %d", ngpu);
	fprintf(f, ", \"driver\": \"%d.%d\", \"cuda\": \"%d.%d\", \"nccl\": \"%d.%d.%d\", \"date\": \"%s\", \"command\": ",
		drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, nccl / 10000, (nccl % 10000) / 100, nccl % 100,
		date);
	json_str(f, cmd);
	if (extra_json && *extra_json)
		fprintf(f, ", %s", extra_json);
	fprintf(f, "}\n");
	fflush(f);
}

void hsk_rec(hsk_out *o, const char *kind, const char *fmt, ...)
{
	fprintf(o->f, "{\"kind\": \"%s\", \"device\": ", kind);
	json_str(o->f, o->device);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
	fprintf(o->f, "}\n");
	fflush(o->f);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double hsk_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

hsk_stats hsk_time(void (*fn)(void *ctx, cudaStream_t s), void *ctx, cudaStream_t s, int warmup, int reps)
{
	for (int i = 0; i < warmup; i++)
		fn(ctx, s);
	CK(cudaStreamSynchronize(s));
	cudaEvent_t *ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * 2 * (size_t)reps);
	for (int i = 0; i < 2 * reps; i++)
		CK(cudaEventCreate(&ev[i]));
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(ev[2 * i], s));
		fn(ctx, s);
		CK(cudaEventRecord(ev[2 * i + 1], s));
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaGetLastError());
	double *t = (double *)malloc(sizeof(double) * (size_t)reps);
	for (int i = 0; i < reps; i++) {
		float ms;
		CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
		t[i] = ms * 1e-3;
	}
	for (int i = 0; i < 2 * reps; i++)
		cudaEventDestroy(ev[i]);
	hsk_stats st;
	st.reps = reps;
	st.med = hsk_median(t, reps);
	st.min = t[0];
	st.max = t[reps - 1];
	free(t);
	free(ev);
	return st;
}

/* counter-based hash -> uniform in (0, 1) */
__device__ __forceinline__ float uhash(unsigned long long i, unsigned seed)
{
	unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 29;
	return ((unsigned)(x >> 40) + 0.5f) * (1.0f / 16777216.0f);
}

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 from_f<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <typename T> __global__ void fill_k(T *p, size_t n, float lo, float hi, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float v = lo + (hi - lo) * uhash(i, seed);
		/* never zero, also after rounding to the storage type: keep |v| >= 1/64 of the range */
		float m = 0.015625f * (hi - lo);
		if (fabsf(v) < m)
			v = v < 0 ? -m : m;
		p[i] = from_f<T>(v);
	}
}

void hsk_fill(void *p, size_t n, int dt, float scale, unsigned seed, cudaStream_t s)
{
	int blocks = 1024, threads = 256;
	switch (dt) {
	case HSK_FP8: fill_k<<<blocks, threads, 0, s>>>((__nv_fp8_e4m3 *)p, n, -scale, scale, seed); break;
	case HSK_BF16: fill_k<<<blocks, threads, 0, s>>>((__nv_bfloat16 *)p, n, -scale, scale, seed); break;
	case HSK_FP16: fill_k<<<blocks, threads, 0, s>>>((__half *)p, n, -scale, scale, seed); break;
	default: fill_k<<<blocks, threads, 0, s>>>((float *)p, n, -scale, scale, seed); break;
	}
	CK(cudaGetLastError());
}

void hsk_fill_f32(float *p, size_t n, float lo, float hi, unsigned seed, cudaStream_t s)
{
	fill_k<<<1024, 256, 0, s>>>(p, n, lo, hi, seed);
	CK(cudaGetLastError());
}

const char *hsk_arg(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

int hsk_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}
