/* hs_profile: how fast a device type really runs, as calibration measured it.
 *
 * A profile holds GEMM efficiency (achieved / peak) over (m, n, k) on a log-spaced grid, interpolated
 * in log space; a memory-bandwidth curve (achieved bytes/s against bytes moved); attention efficiency; and the
 * launch overhead. Profiles are YAML (docs/calibration.md). Shipped ones live in calib/profiles/; a profile
 * "derived" from another scales it by datasheet ratios and says so. All times returned are seconds.
 *
 * Every time below is an in-stream GPU time: what the kernel takes on a stream where the host has already
 * queued it (fitted from back-to-back kernel runs where the measurements have them). No host dispatch cost is
 * in a profile: how long the host takes to issue an op is a property of the training recipe (eager, CUDA
 * graphs, compiled), modelled by the caller. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include "sim/base/dtype.h"
#include "sim/base/err.h"
#include "config/yaml.h"
#include "topology/device.h"

typedef struct hs_profile hs_profile;

/* Load by name (looked up in $HETSIM_PROFILES, then next to the executable's folder in ../share/hetsim/profiles
 * as installed and ../calib/profiles as built, then ./calib/profiles) or by path (contains '/' or ends in .yaml). */
hs_profile *hs_profile_load(const char *name_or_path, hs_err *err);
void hs_profile_free(hs_profile *p);
const char *hs_profile_name(const hs_profile *p);

/* One line saying where the profile's numbers came from: "measured on NVIDIA H200, 2026-11-30 (...)" or
 * "derived from H200-SXM-141GB by datasheet ratios (bf16 x2.28, memory x1.67)". Every result prints it. */
const char *hs_profile_provenance(const hs_profile *p);
/* Entry i of a measured profile's `source.parts` (which rows fed which part of the fit): 0 and key, val; -1
 * past the last. */
int hs_profile_part(const hs_profile *p, int i, const char **key, const char **val);

/* C[m,n] = A[m,k] B[k,n] in `dt` on device `dev`: launch + 2mnk / (peak * efficiency(m,n,k) * dtype_scale),
 * `launch` the in-stream floor of a GEMM kernel. */
double hs_profile_gemm_time(const hs_profile *p, const hs_device_type *dev, double m, double n, double k,
			    enum hs_dtype dt);
/* `count` identical GEMMs in one kernel (a strided or grouped batch: attention scores, local experts): the
 * launch once, then count x the work, launch + count x (t - launch), t the time of one and launch that of a
 * 1x1x1 GEMM (its 2 FLOP are below a picosecond). The one launch rule of op timing (sim/exec/layer_time.c) and
 * `calib compare-refexec` (calib/refexec_cmp.c). count <= 1: one GEMM. */
double hs_profile_gemm_batched_time(const hs_profile *p, const hs_device_type *dev, double m, double n, double k,
				    double count, enum hs_dtype dt);
/* A memory-bound kernel that moves `bytes` (read + write) at copy speed: the in-stream floor joined to
 * bytes / bandwidth (docs/calibration.md). */
double hs_profile_mem_time(const hs_profile *p, const hs_device_type *dev, double bytes);
/* Flash attention over (b, heads, seq, head_dim), causal or not; bwd=0 forward, 1 backward only. */
double hs_profile_attn_time(const hs_profile *p, const hs_device_type *dev, double b, double h, double s,
			    double d, int causal, int bwd);
/* Which passes of the flash-attention curves were set by a stated rule instead of fitted from flash rows
 * (bit 0 forward, bit 1 backward; 0: both measured). A profile fitted from materialised attention alone has
 * both bits: run summaries say so when a workload times flash attention with it (calib/fit.c gives the rule). */
int hs_profile_attn_rule(const hs_profile *p);
double hs_profile_launch(const hs_profile *p);
/* The floor of the smallest memory-bound kernels (seconds, in-stream). */
/* In-stream cost of one more kernel queued behind others (seconds): the GPU-side gap between dependent
 * kernels, fitted from refexec's task and op times; 0 when the file has none (its kernel times are then taken
 * to be in-stream times already). The query functions above do not add it: sim/exec/layer_time.c adds it
 * once per kernel. */
double hs_profile_kernel_gap(const hs_profile *p);

/* Extensions (calib/ issue 5) */
/* A memory-bound op by name ("add", "gelu", "layernorm", "softmax", "dropout", ...): the copy curve slowed by
 * the op's measured factor at large sizes; unknown names run at copy speed. */
double hs_profile_mem_op_time(const hs_profile *p, const hs_device_type *dev, const char *op, double bytes);
int hs_profile_is_derived(const hs_profile *p);
/* The device the curves were measured on (for derived profiles: the source's device). */
const char *hs_profile_device(const hs_profile *p);
/* A profile for `target` derived from `src` (measured on `src_dev`): same efficiency curves, the datasheet
 * ratios recorded, marked derived. */
hs_profile *hs_profile_derive(const hs_profile *src, const hs_device_type *src_dev, const hs_device_type *target,
			      hs_err *err);
/* Write as YAML through a temporary file and rename, so no half-written profile is left behind. */
int hs_profile_save(const hs_profile *p, const char *path, hs_err *err);
/* Parse from a YAML document already loaded (`path` names it in messages). */
hs_profile *hs_profile_from_yaml(const hs_ynode *root, hs_err *err);

#endif
