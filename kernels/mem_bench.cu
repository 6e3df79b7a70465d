/* mem_bench: device copy, pinned host<->device copies, elementwise ops, layernorm, RMSnorm and softmax.
 *
 *   mem_bench [--quick] [--warmup 5] [--reps 20] [--device 0] [-o FILE]
 *
 * Records, as calib/fit.c reads them (the shapes of ../shared/data/h200-microbench.jsonl):
 *   {"kind": "hbm_copy", "bytes", "t_med", "t_min", "t_max", "rw_GBps"}   rw counts bytes read plus written
 *   {"kind": "h2d" | "d2h", "bytes", "t_med", "GBps"}                   pinned host memory
 *   {"kind": "elementwise", "op", "tokens", "hidden", "dtype", "t_med", "GBps"}  GBps counts the minimal bytes
 *     moved: add 3 tensors, gelu/dropout/layernorm/rmsnorm/softmax 2 (kernels/ops.h)
 * Data is random and never zero; times are medians of CUDA-event-timed repetitions after warm-up. */
#include <string.h>

#include "common.h"
#include "ops.h"

struct mctx {
	void *a, *b, *c;
	size_t bytes, n, rows;
	int cols, kind;
	float *gamma, *beta;
};

static void copy_d2d(void *x, cudaStream_t s)
{
	struct mctx *c = (struct mctx *)x;
	CK(cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice, s));
}
static void copy_h2d(void *x, cudaStream_t s)
{
	struct mctx *c = (struct mctx *)x;
	CK(cudaMemcpyAsync(c->a, c->c, c->bytes, cudaMemcpyHostToDevice, s));
}
static void copy_d2h(void *x, cudaStream_t s)
{
	struct mctx *c = (struct mctx *)x;
	CK(cudaMemcpyAsync(c->c, c->a, c->bytes, cudaMemcpyDeviceToHost, s));
}

enum { OP_ADD, OP_GELU, OP_LAYERNORM, OP_RMSNORM, OP_SOFTMAX, OP_DROPOUT, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"add", "gelu", "layernorm", "rmsnorm", "softmax", "dropout"};
static const int op_tensors[OP_COUNT] = {3, 2, 2, 2, 2, 2};

static void ew(void *x, cudaStream_t s)
{
	struct mctx *c = (struct mctx *)x;
	__nv_bfloat16 *a = (__nv_bfloat16 *)c->a, *b = (__nv_bfloat16 *)c->b, *o = (__nv_bfloat16 *)c->c;
	switch (c->kind) {
	case OP_ADD: hsk_add(a, b, o, c->n, s); break;
	case OP_GELU: hsk_gelu(a, o, c->n, s); break;
	case OP_LAYERNORM: hsk_layernorm(a, o, c->gamma, c->beta, c->rows, c->cols, s); break;
	case OP_RMSNORM: hsk_rmsnorm(a, o, c->gamma, c->rows, c->cols, s); break;
	case OP_SOFTMAX: hsk_softmax(a, o, c->rows, c->cols, 1.f, 0, 1, s); break;
	case OP_DROPOUT: hsk_dropout(a, o, c->n, 0.1f, 7, s); break;
	}
	CK(cudaGetLastError());
}

int main(int argc, char **argv)
{
	if (hsk_flag(argc, argv, "-h") || hsk_flag(argc, argv, "--help")) {
		printf("usage: mem_bench [--quick] [--warmup 5] [--reps 20] [--device 0] [-o FILE]\n");
		return 0;
	}
	int dev = hsk_arg(argc, argv, "--device") ? atoi(hsk_arg(argc, argv, "--device")) : 0;
	int warmup = hsk_arg(argc, argv, "--warmup") ? atoi(hsk_arg(argc, argv, "--warmup")) : 5;
	int reps = hsk_arg(argc, argv, "--reps") ? atoi(hsk_arg(argc, argv, "--reps")) : 20;
	int quick = hsk_flag(argc, argv, "--quick");
	if (reps < 1 || warmup < 0) {
		fprintf(stderr, "mem_bench: --reps must be >= 1 and --warmup >= 0\n");
		return 2;
	}
	CK(cudaSetDevice(dev));
	hsk_out o;
	hsk_out_open(&o, hsk_arg(argc, argv, "-o"));
	hsk_info(&o, "mem_bench", dev, argc, argv, NULL);
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	size_t maxb = quick ? (256u << 20) : (4ull << 30);
	void *a, *b, *c, *host;
	CK(cudaMalloc(&a, maxb));
	CK(cudaMalloc(&b, maxb));
	hsk_fill(a, maxb / 2, HSK_BF16, 1.f, 3, s);
	struct mctx m;
	memset(&m, 0, sizeof m);
	m.a = a, m.b = b;
	/* device copy: 1 MiB .. 4 GiB by 4x */
	for (size_t by = 1u << 20; by <= maxb; by *= 4) {
		m.bytes = by;
		hsk_stats st = hsk_time(copy_d2d, &m, s, warmup, reps);
		hsk_rec(&o, "hbm_copy", ", \"bytes\": %zu, \"t_med\": %.9g, \"t_min\": %.9g, \"t_max\": %.9g, \"rw_GBps\": %.6g, "
					"\"reps\": %d",
			by, st.med, st.min, st.max, 2.0 * by / st.med / 1e9, st.reps);
	}
	/* pinned host <-> device: 1 MiB, 16 MiB, 256 MiB, 1 GiB */
	size_t hmax = quick ? (256u << 20) : (1u << 30);
	CK(cudaMallocHost(&host, hmax));
	memset(host, 0x3c, hmax); /* non-zero bytes */
	m.c = host;
	for (size_t by = 1u << 20; by <= hmax; by *= 16) {
		m.bytes = by;
		int r = by >= (256u << 20) ? (reps < 5 ? reps : 5) : reps;
		hsk_stats st = hsk_time(copy_h2d, &m, s, 2, r);
		hsk_rec(&o, "h2d", ", \"bytes\": %zu, \"t_med\": %.9g, \"t_min\": %.9g, \"GBps\": %.6g, \"pinned\": true, \"reps\": %d", by,
			st.med, st.min, by / st.med / 1e9, st.reps);
		st = hsk_time(copy_d2h, &m, s, 2, r);
		hsk_rec(&o, "d2h", ", \"bytes\": %zu, \"t_med\": %.9g, \"t_min\": %.9g, \"GBps\": %.6g, \"pinned\": true, \"reps\": %d", by,
			st.med, st.min, by / st.med / 1e9, st.reps);
		if (by == hmax)
			break;
	}
	CK(cudaFreeHost(host));
	/* elementwise and row ops on (tokens, hidden) bf16 tensors */
	static const int shapes[][2] = {{8192, 1024}, {8192, 4096}, {16384, 8192}};
	CK(cudaMalloc(&c, (size_t)16384 * 8192 * 2));
	float *gamma, *beta;
	CK(cudaMalloc((void **)&gamma, 65536 * sizeof(float)));
	CK(cudaMalloc((void **)&beta, 65536 * sizeof(float)));
	hsk_fill_f32(gamma, 65536, 0.5f, 1.5f, 5, s);
	hsk_fill_f32(beta, 65536, -0.5f, 0.5f, 6, s);
	hsk_fill(b, (size_t)16384 * 8192, HSK_BF16, 1.f, 4, s);
	m.c = c, m.gamma = gamma, m.beta = beta;
	for (int i = 0; i < 3; i++) {
		if (quick && i == 2)
			break;
		for (int k = 0; k < OP_COUNT; k++) {
			m.rows = (size_t)shapes[i][0];
			m.cols = shapes[i][1];
			m.n = m.rows * m.cols;
			m.kind = k;
			hsk_stats st = hsk_time(ew, &m, s, warmup, reps);
			double moved = (double)op_tensors[k] * m.n * 2;
			hsk_rec(&o, "elementwise", ", \"op\": \"%s\", \"tokens\": %d, \"hidden\": %d, \"dtype\": \"bf16\", \"t_med\": %.9g, "
						   "\"t_min\": %.9g, \"GBps\": %.6g, \"bytes\": %.0f, \"reps\": %d",
				op_names[k], shapes[i][0], shapes[i][1], st.med, st.min, moved / st.med / 1e9, moved, st.reps);
		}
	}
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	cudaFree(gamma);
	cudaFree(beta);
	cudaStreamDestroy(s);
	hsk_out_close(&o);
	return 0;
}
