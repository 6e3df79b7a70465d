/* The layout of hs_profile, shared by calib/ only (profile.c reads and writes it, fit.c builds it).
 * Everything else goes through calib/profile.h. */
#ifndef HS_PROFILE_INT_H
#define HS_PROFILE_INT_H

#include "calib/profile.h"

#define HS_PROF_MAXAX 32 /* grid points per GEMM axis */
#define HS_PROF_MAXOPS 16
#define HS_PROF_MAXPARTS 24 /* source.parts entries: gemm, memory, one per memory op, ... */

/* Where a profile's numbers came from (the `source` mapping, docs/calibration.md). A measured profile names
 * the device and date its info records give, the commands that took them and the files; `parts` says which
 * rows fed each part of the fit. A derived one names its base profile; the ratios are hs_profile's. */
typedef struct hs_prof_source {
	char kind[16];      /* "measured" or "derived" */
	char device[64];    /* measured: the device as the info records name it ("NVIDIA H200") */
	char date[48];      /* measured: "2026-11-30", or "2026-11-29, 2026-11-30" */
	char command[256];  /* measured: the measuring programs ("kernels/bin/gemm_bench, ...") */
	char files[1024];   /* measured: the files, separated by "\n" */
	int nparts;
	char part_key[HS_PROF_MAXPARTS][32];
	char part_val[HS_PROF_MAXPARTS][160];
} hs_prof_source;

enum { HS_ATTN_FWD, HS_ATTN_BWD };

/* t = launch + F / (peak_bf16 * emax * s/(s + s_half) * d/(d + d_half)) */
typedef struct hs_attn_fit {
	double emax, s_half, d_half;
	int rule; /* 1: not fitted from flash-attention rows but set by the stated rule (calib/fit.c) */
} hs_attn_fit;

struct hs_profile {
	char name[64];
	char device[64];       /* the device measured (a built-in name, or the name in the file) */
	int derived;           /* 1: curves copied from derived_from, scaled by datasheet ratios */
	char derived_from[64];
	hs_prof_source src;
	char provenance[320];  /* one line built from src (hs_profile_provenance) */
	/* ratios recorded for derived profiles (target / source datasheet); informational */
	double ratio_flops[HS_DTYPE_COUNT], ratio_hbm_bw;
	/* datasheet figures of `device` (used when a query passes dev == NULL) */
	double dev_peak[HS_DTYPE_COUNT], dev_hbm_bw;

	double launch; /* seconds: floor of the smallest memory-bound kernels */
	/* seconds: what one more kernel costs inside a stream of back-to-back kernels (the GPU-side gap between
	 * dependent kernels); optional key `kernel_gap`, `launch` when absent (docs/calibration.md) */
	double kernel_gap;
	int kernel_gap_set; /* 1: read from the file (written back on save) */

	/* GEMM: efficiency (achieved / peak of the GEMM's dtype) on an nm x nn x nk grid, log2-spaced axes */
	double gemm_launch;
	int gemm_dtype;
	int nm, nn, nk;
	double gm[HS_PROF_MAXAX], gn[HS_PROF_MAXAX], gk[HS_PROF_MAXAX];
	double *eff; /* [i*nn*nk + j*nk + l] */
	double dtype_scale[HS_DTYPE_COUNT]; /* efficiency of a dtype relative to gemm_dtype, same shape */

	/* memory: t = (launch^p + (bytes / (bw_frac * hbm_bw))^p)^(1/p) */
	double mem_launch, mem_bw_frac, mem_p;
	int nops;
	char op_name[HS_PROF_MAXOPS][32];
	double op_factor[HS_PROF_MAXOPS]; /* achieved bandwidth of the op relative to a copy, large sizes */

	/* attention (flash, bf16): forward and backward */
	double attn_launch;
	hs_attn_fit attn[2];
};

/* Fill p->provenance from p->src and the ratios (after loading, fitting or deriving). */
void hs_profile_set_provenance(hs_profile *p);
/* Append a `source.parts` entry (key: which part; val: which rows). Beyond HS_PROF_MAXPARTS: dropped. */
void hs_profile_add_part(hs_profile *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A zeroed profile with neutral defaults (dtype scales 1, p = 2). */
hs_profile *hs_profile_new(void);
/* Efficiency of the GEMM grid at (m, n, k): trilinear in log2 space, clamped at the edges. */
double hs_profile_gemm_eff(const hs_profile *p, double m, double n, double k);
/* FLOPs counted for attention: causal forward 2*b*h*s^2*d (= 4bhs^2d/2), non-causal twice that;
 * backward 2.5x forward. */
double hs_profile_attn_flops(double b, double h, double s, double d, int causal, int bwd);

#endif
