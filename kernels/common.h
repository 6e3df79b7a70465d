/* Shared by the kernels/ programs: error checks, the environment record every output starts with, JSON-lines
 * output, CUDA-event timing with medians, and random (never zero) device data.
 *
 * Output convention: one JSON object per line. The first line of every output is {"kind": "info", ...}
 * carrying the device, driver, CUDA runtime and NCCL versions, the date and the exact command; every later
 * record repeats "device" so that lines can be concatenated across files. Times are seconds. */
#ifndef HSK_COMMON_H
#define HSK_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                                      \
	do {                                                                                                       \
		cudaError_t e_ = (x);                                                                              \
		if (e_ != cudaSuccess) {                                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
			exit(1);                                                                                   \
		}                                                                                                  \
	} while (0)

enum hsk_dtype { HSK_FP8, HSK_BF16, HSK_FP16, HSK_TF32, HSK_FP32 }; /* = hsg_dtype, hs_dtype */
extern const char *const hsk_dtype_names[5];
int hsk_dtype_parse(const char *s);
size_t hsk_dtype_bytes(int dt); /* storage size of A/B elements */

/* Output: JSON lines to `f`. hsk_info_begin writes the info record for `tool` on device `dev`. */
typedef struct hsk_out {
	FILE *f;
	char device[256];
} hsk_out;
void hsk_out_open(hsk_out *o, const char *path); /* NULL or "-": stdout */
void hsk_out_close(hsk_out *o);
void hsk_info(hsk_out *o, const char *tool, int dev, int argc, char **argv, const char *extra_json);
/* A record: kind, then a printf-formatted tail of ", \"key\": value" pairs (starting with ", "). */
void hsk_rec(hsk_out *o, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Timing: run fn(ctx) `warmup` times, then `reps` times between CUDA events on `stream`; fills median, min,
 * max of the reps in seconds. */
typedef struct hsk_stats {
	double med, min, max;
	int reps;
} hsk_stats;
hsk_stats hsk_time(void (*fn)(void *ctx, cudaStream_t s), void *ctx, cudaStream_t s, int warmup, int reps);
double hsk_median(double *v, int n); /* sorts v */

/* Fill `n` elements of type dt at p with uniform values in [-scale, scale], never exactly zero. */
void hsk_fill(void *p, size_t n, int dt, float scale, unsigned seed, cudaStream_t s);
void hsk_fill_f32(float *p, size_t n, float lo, float hi, unsigned seed, cudaStream_t s);

/* Simple argv helpers: value of --name (or NULL), presence of a flag. */
const char *hsk_arg(int argc, char **argv, const char *name);
int hsk_flag(int argc, char **argv, const char *name);

#endif
