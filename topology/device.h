/* hs_device_type: what a GPU model is on paper. Datasheet figures (dense peak FLOP/s per format, HBM
 * capacity and bandwidth, scale-up bandwidth, TDP), each cited in device.c. A scenario names a built-in type or
 * defines one inline (hs_device_from_yaml). How fast it actually runs comes from its profile (calib/profile.h). */
#ifndef HS_DEVICE_H
#define HS_DEVICE_H

#include "config/yaml.h"
#include "sim/base/dtype.h"
#include "sim/base/err.h"

/* The GPU architecture, where NCCL's behaviour depends on it (NVLS needs Hopper or later; its tuner keeps
 * per-architecture channel limits). UNKNOWN: a custom type that does not say; treated as the oldest. */
enum hs_arch {
	HS_ARCH_UNKNOWN,
	HS_ARCH_VOLTA,
	HS_ARCH_TURING,
	HS_ARCH_AMPERE,
	HS_ARCH_ADA,
	HS_ARCH_HOPPER,
	HS_ARCH_BLACKWELL,
	HS_ARCH_CDNA3,
	HS_ARCH_COUNT
};

typedef struct hs_device_type {
	char name[64];
	double peak_flops[HS_DTYPE_COUNT]; /* dense (no sparsity) FLOP/s; 0 where the format is unsupported */
	double hbm_bytes;                  /* memory capacity, bytes */
	double hbm_bw;                     /* memory bandwidth, bytes/s */
	double scaleup_bw;                 /* scale-up (NVLink/xGMI/PCIe) bandwidth per direction, bytes/s */
	double tdp_w;                      /* board power, W */
	enum hs_arch arch;                 /* architecture (datasheet); HS_ARCH_UNKNOWN when not given */
	double pcie_bw;                    /* host PCIe link (to host memory and the NICs), bytes/s per direction;
					    * 0: not given (the scale-up's pcie_bandwidth default applies) */
	char profile[64];                  /* profile name to load (calib/profiles/<profile>.yaml) */
} hs_device_type;

/* "ampere", "hopper", ... ("unknown" for HS_ARCH_UNKNOWN). */
const char *hs_arch_name(enum hs_arch a);
/* NVIDIA Hopper or later (sm_90+): NVLink SHARP through third-generation NVSwitch and later. */
int hs_arch_has_nvls(enum hs_arch a);

/* Built-in type by name (exact, e.g. "H100-SXM-80GB"); NULL if unknown. */
const hs_device_type *hs_device_builtin(const char *name);
/* NULL-terminated list of built-in names (for suggestions and `hetsim help devices`). */
const char *const *hs_device_names(void);
/* A device from a scenario node: a scalar names a built-in type; a mapping defines one
 * ({name, base?, peak_bf16, peak_fp8, peak_fp16, peak_tf32, peak_fp32, memory, memory_bandwidth,
 *   scaleup_bandwidth, pcie_bandwidth, tdp, arch, profile}); with `base:` the mapping overrides a built-in type's fields. */
int hs_device_from_yaml(const hs_ynode *n, const char *path, hs_device_type *out, hs_err *err);

#endif
