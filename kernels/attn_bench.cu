/* attn_bench: causal attention forward and forward+backward, bf16, as batched cuBLASLt GEMMs and a softmax
 * kernel (kernels/ops.h: the score matrix is materialised; not a FlashAttention kernel). Every record says so
 * in "method".
 *
 *   attn_bench [--shapes B,H,S,D;...] [--noncausal] [--warmup 3] [--reps 10] [--device 0] [-o FILE]
 *
 * Default shapes: those of ../shared/data/h200-microbench.jsonl's sdpa rows. Records:
 *   {"kind": "sdpa", "b", "heads", "seq", "dim", "causal", "t_fwd", "t_fwdbwd", "tflops_fwd", "tflops_fwdbwd",
 *    "method": "batched_gemm_softmax"}
 * with FLOPs counted as calib/ does (causal forward 2*b*h*s^2*d, backward 2.5x forward), so tflops compare
 * with flash attention's; this method does the full s x s work, so expect about half of flash's rate. */
#include <math.h>
#include <string.h>

#include "common.h"
#include "ops.h"

struct actx {
	hsk_gemm_ctx *c;
	hsk_attn *a;
	hsk_attn_bufs *b;
};

static void fwd(void *x, cudaStream_t s)
{
	struct actx *c = (struct actx *)x;
	hsk_attn_fwd(c->c, c->a, c->b, s);
}

static void fwdbwd(void *x, cudaStream_t s)
{
	struct actx *c = (struct actx *)x;
	hsk_attn_fwd(c->c, c->a, c->b, s);
	hsk_attn_bwd(c->c, c->a, c->b, s);
}

int main(int argc, char **argv)
{
	if (hsk_flag(argc, argv, "-h") || hsk_flag(argc, argv, "--help")) {
		printf("usage: attn_bench [--shapes B,H,S,D;...] [--noncausal] [--warmup 3] [--reps 10] [--device 0] "
		       "[-o FILE]\n");
		return 0;
	}
	const char *shapes = hsk_arg(argc, argv, "--shapes");
	if (!shapes)
		shapes = "4,16,1024,64;4,16,2048,64;4,16,4096,64;2,32,2048,128;2,32,4096,128;1,32,8192,128;"
			 "1,64,8192,128;8,12,2048,64;1,40,16384,128;4,32,2048,128";
	int dev = hsk_arg(argc, argv, "--device") ? atoi(hsk_arg(argc, argv, "--device")) : 0;
	int warmup = hsk_arg(argc, argv, "--warmup") ? atoi(hsk_arg(argc, argv, "--warmup")) : 3;
	int reps = hsk_arg(argc, argv, "--reps") ? atoi(hsk_arg(argc, argv, "--reps")) : 10;
	int causal = !hsk_flag(argc, argv, "--noncausal");
	if (reps < 1 || warmup < 0) {
		fprintf(stderr, "attn_bench: --reps must be >= 1 and --warmup >= 0\n");
		return 2;
	}
	CK(cudaSetDevice(dev));
	hsk_out o;
	hsk_out_open(&o, hsk_arg(argc, argv, "-o"));
	hsk_info(&o, "attn_bench", dev, argc, argv, "\"method\": \"batched_gemm_softmax\"");
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	hsk_gemm_ctx gc;
	hsk_gemm_init(&gc);
	char *copy = strdup(shapes);
	for (char *save = NULL, *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		int b, h, sq, d;
		if (sscanf(t, "%d,%d,%d,%d", &b, &h, &sq, &d) != 4 || b <= 0 || h <= 0 || sq <= 0 || d <= 0) {
			fprintf(stderr, "attn_bench: --shapes: '%s' is not B,H,S,D\n", t);
			return 2;
		}
		size_t need = hsk_attn_bytes(b * h, sq, sq, d, 1);
		size_t freeb, total;
		CK(cudaMemGetInfo(&freeb, &total));
		if (need > freeb * 0.9) {
			hsk_rec(&o, "sdpa_skipped", ", \"b\": %d, \"heads\": %d, \"seq\": %d, \"dim\": %d, \"why\": \"needs %zu "
						    "bytes\"",
				b, h, sq, d, need);
			continue;
		}
		void *base;
		CK(cudaMalloc(&base, need));
		hsk_attn a;
		hsk_attn_bufs bf;
		hsk_attn_carve(&bf, base, b * h, sq, sq, d, 1);
		if (hsk_attn_make(&gc, &a, b * h, sq, sq, d, causal, 1)) {
			cudaFree(base);
			continue;
		}
		size_t nq = (size_t)b * h * sq * d;
		hsk_fill(bf.q, nq, HSK_BF16, 1.f, 11, s);
		hsk_fill(bf.k, nq, HSK_BF16, 1.f, 12, s);
		hsk_fill(bf.v, nq, HSK_BF16, 1.f, 13, s);
		hsk_fill(bf.dout, nq, HSK_BF16, 1.f, 14, s);
		struct actx c = {&gc, &a, &bf};
		hsk_stats f = hsk_time(fwd, &c, s, warmup, reps);
		hsk_stats fb = hsk_time(fwdbwd, &c, s, warmup, reps);
		double ff = 4.0 * b * h * (double)sq * sq * d / (causal ? 2 : 1);
		hsk_rec(&o, "sdpa",
			", \"b\": %d, \"heads\": %d, \"seq\": %d, \"dim\": %d, \"causal\": %s, \"t_fwd\": %.9g, "
			"\"t_fwdbwd\": %.9g, \"tflops_fwd\": %.6g, \"tflops_fwdbwd\": %.6g, \"t_fwd_min\": %.9g, "
			"\"t_fwdbwd_min\": %.9g, \"reps\": %d, \"method\": \"batched_gemm_softmax\"",
			b, h, sq, d, causal ? "true" : "false", f.med, fb.med, ff / f.med / 1e12, 3.5 * ff / fb.med / 1e12, f.min,
			fb.min, reps);
		hsk_attn_free(&a);
		CK(cudaFree(base));
	}
	free(copy);
	hsk_gemm_fini(&gc);
	cudaStreamDestroy(s);
	hsk_out_close(&o);
	return 0;
}
