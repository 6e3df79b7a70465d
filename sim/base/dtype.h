/* Numeric formats of tensors and GEMMs, with their sizes. Shared by device types, profiles and models. */
#ifndef HS_DTYPE_H
#define HS_DTYPE_H

#include <string.h>

enum hs_dtype { HS_FP8, HS_BF16, HS_FP16, HS_TF32, HS_FP32, HS_DTYPE_COUNT };

static inline double hs_dtype_bytes(enum hs_dtype d)
{
	static const double b[] = {1, 2, 2, 4, 4};
	return b[d];
}

static inline const char *hs_dtype_name(enum hs_dtype d)
{
	static const char *const n[] = {"fp8", "bf16", "fp16", "tf32", "fp32"};
	return n[d];
}

/* NULL-terminated list for hs_cfg_enum. */
static const char *const hs_dtype_names[] = {"fp8", "bf16", "fp16", "tf32", "fp32", NULL};

/* -1 if unknown */
static inline int hs_dtype_parse(const char *s)
{
	for (int i = 0; hs_dtype_names[i]; i++)
		if (strcmp(s, hs_dtype_names[i]) == 0)
			return i;
	return -1;
}

#endif
