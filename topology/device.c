/* Built-in device types and inline definitions from scenarios.
 *
 * Every figure is the vendor's datasheet figure for dense math (sparsity doubles the marketing numbers; we
 * halve them back). Conventions, checked 2026-11 against the documents named beside each entry:
 *   - FLOP/s: dense tensor-core peak for fp8, bf16, fp16, tf32; fp32 is the non-tensor (CUDA-core / vector)
 *     peak, which is what an fp32 GEMM without TF32 gets. 0 where the format has no hardware path.
 *   - GeForce parts: the fp32-accumulate tensor rate (what training uses), not the fp16-accumulate one.
 *   - Memory capacity: vendors' "GB" for HBM/GDDR capacity are binary (nvidia-smi reports 81920 MiB on an
 *     A100 80GB), so capacities are in GiB. Bandwidth "TB/s" is decimal.
 *   - Scale-up bandwidth: per GPU, per direction (NVLink "900 GB/s" totals both directions -> 450 GB/s).
 *     PCIe-only parts get their PCIe x16 link (Gen4 32 GB/s, Gen5 64 GB/s per direction).
 *   - TDP: maximum board power of the form factor named.
 *   - PCIe: the part's host link, x16 of its generation, per direction after 128b/130b encoding: Gen4
 *     16 GT/s x 16 lanes = 31.5 GB/s, Gen5 32 GT/s = 63 GB/s (datasheets quote 64 / 128 GB/s both ways).
 *     Gen5: H100, H200, B200, GB200 (a compute tray's ConnectX-7 NICs on PCIe Gen5 x16), MI300X; Gen4: A100,
 *     the Ada and GeForce parts. GPUDirect RDMA moves NIC traffic over this link, so a rank's sends through a
 *     faster NIC are bound by it.
 *   - Architecture: the family the datasheet names (Ampere, Hopper, ...); NCCL keys NVLS (Hopper and later)
 *     and its per-channel limits on it. */
#include "topology/device.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/cfg.h"
#include "sim/base/file.h"
#include "sim/base/sizes.h"

#define T 1e12
#define GiB HS_GiB
#define GBs 1e9
#define TBs 1e12

/* peak_flops order: fp8, bf16, fp16, tf32, fp32 (enum hs_dtype) */
static const hs_device_type builtins[] = {
	/* NVIDIA A100 Tensor Core GPU datasheet (2021, nvidia-a100-datasheet-us-nvidia-1758950-r4): BF16/FP16
	 * 312 TFLOPS, TF32 156, FP32 19.5; no FP8. A100 40GB SXM: HBM2 1,555 GB/s, 400 W. NVLink 3:
	 * 600 GB/s total. */
	{"A100-SXM-40GB", {0, 312 * T, 312 * T, 156 * T, 19.5 * T}, 40 * GiB, 1555 * GBs, 300 * GBs, 400, HS_ARCH_AMPERE, 31.5 * GBs,
	 "A100-SXM-40GB"},
	/* Same datasheet: A100 80GB SXM: HBM2e 2,039 GB/s, 400 W. */
	{"A100-SXM-80GB", {0, 312 * T, 312 * T, 156 * T, 19.5 * T}, 80 * GiB, 2039 * GBs, 300 * GBs, 400, HS_ARCH_AMPERE, 31.5 * GBs,
	 "A100-SXM-80GB"},
	/* NVIDIA H100 Tensor Core GPU datasheet (2023, H100 SXM column): FP8 3,958 TFLOPS*, BF16/FP16 1,979*,
	 * TF32 989*, (* with sparsity; dense is half), FP32 67; 80GB HBM3 at 3.35 TB/s; up to 700 W;
	 * NVLink 900 GB/s. */
	{"H100-SXM-80GB", {1979 * T, 989 * T, 989 * T, 494.5 * T, 67 * T}, 80 * GiB, 3350 * GBs, 450 * GBs, 700, HS_ARCH_HOPPER, 63 * GBs,
	 "H100-SXM-80GB"},
	/* Same datasheet, H100 PCIe column (first release): FP8 3,026* , BF16/FP16 1,513*, TF32 756*, FP32 51;
	 * 80GB HBM2e at 2.0 TB/s; 300-350 W; PCIe Gen5 128 GB/s (64 per direction; the optional NVLink bridge
	 * is not assumed). */
	{"H100-PCIe-80GB", {1513 * T, 756 * T, 756 * T, 378 * T, 51 * T}, 80 * GiB, 2000 * GBs, 64 * GBs, 350, HS_ARCH_HOPPER, 63 * GBs,
	 "H100-PCIe-80GB"},
	/* NVIDIA H200 Tensor Core GPU datasheet (2024, H200 SXM column): compute as H100 SXM (FP8 3,958*,
	 * BF16 1,979*, TF32 989*, FP32 67); 141GB HBM3e at 4.8 TB/s; up to 700 W; NVLink 900 GB/s.
	 * Our own H200 reports 143771 MiB and a 700 W limit (../shared/data/h200-microbench.jsonl). */
	{"H200-SXM-141GB", {1979 * T, 989 * T, 989 * T, 494.5 * T, 67 * T}, 141 * GiB, 4800 * GBs, 450 * GBs,
	 700, HS_ARCH_HOPPER, 63 * GBs, "H200-SXM-141GB"},
	/* NVIDIA HGX B200 datasheet (2024, per GPU = 8-GPU totals / 8): FP8 72 PFLOPS*, FP16/BF16 36*, TF32 18*
	 * (*sparse), FP32 600 TFLOPS; 1,440 GB HBM3e, 64 TB/s; NVLink 5 at 1.8 TB/s per GPU; 1,000 W per GPU. */
	{"B200", {4500 * T, 2250 * T, 2250 * T, 1125 * T, 75 * T}, 180 * GiB, 8000 * GBs, 900 * GBs, 1000, HS_ARCH_BLACKWELL, 63 * GBs,
	 "B200"},
	/* NVIDIA GB200 NVL72 datasheet (2024, per GPU = rack totals / 72): FP8 720 PFLOPS*, FP16/BF16 360*,
	 * TF32 180* (*sparse), FP32 5,760 TFLOPS; 13.4 TB HBM3e at 576 TB/s; NVLink 5 at 1.8 TB/s per GPU.
	 * Power: the GB200 superchip (1 Grace + 2 Blackwell) is configurable up to 2,700 W; 1,200 W per GPU is
	 * the commonly quoted GPU share. */
	{"GB200", {5000 * T, 2500 * T, 2500 * T, 1250 * T, 80 * T}, 186 * GiB, 8000 * GBs, 900 * GBs, 1200, HS_ARCH_BLACKWELL, 63 * GBs,
	 "GB200"},
	/* AMD Instinct MI300X data sheet (2023): FP8 2,614.9 TFLOPS (5,229.8 with sparsity), BF16/FP16 1,307.4,
	 * TF32 653.7, FP32 163.4; 192 GB HBM3 at 5.3 TB/s; 750 W; Infinity Fabric 7 links x 128 GB/s
	 * (896 GB/s total, 448 per direction). */
	{"MI300X", {2614.9 * T, 1307.4 * T, 1307.4 * T, 653.7 * T, 163.4 * T}, 192 * GiB, 5300 * GBs,
	 448 * GBs, 750, HS_ARCH_CDNA3, 63 * GBs, "MI300X"},
	/* NVIDIA Ada Lovelace GPU architecture whitepaper v1.0 (2022), GeForce RTX 4090 column: FP8 tensor with
	 * FP32 accumulate 330.3 (660.6*), BF16/FP16 with FP32 accumulate 165.2 (330.4*), TF32 82.6 (165.2*),
	 * FP32 82.6; 24 GB GDDR6X at 1,008 GB/s; 450 W; no NVLink, PCIe Gen4 x16. */
	{"RTX-4090", {330.3 * T, 165.2 * T, 165.2 * T, 82.6 * T, 82.6 * T}, 24 * GiB, 1008 * GBs, 32 * GBs, 450, HS_ARCH_ADA, 31.5 * GBs,
	 "RTX-4090"},
	/* NVIDIA Ampere GA102 GPU architecture whitepaper v2.0 (2021), GeForce RTX 3090 column: BF16/FP16 tensor
	 * with FP32 accumulate 71 (142*), TF32 35.6 (71*), FP32 35.6; no FP8; 24 GB GDDR6X at 936 GB/s; 350 W;
	 * PCIe Gen4 x16 (the optional NVLink bridge, 56.25 GB/s per direction, is not assumed). */
	{"RTX-3090", {0, 71 * T, 71 * T, 35.6 * T, 35.6 * T}, 24 * GiB, 936 * GBs, 32 * GBs, 350, HS_ARCH_AMPERE, 31.5 * GBs, "RTX-3090"},
	/* NVIDIA L40S datasheet (2023): FP8 1,466 TFLOPS*, BF16/FP16 733*, TF32 366* (*sparse), FP32 91.6;
	 * 48 GB GDDR6 at 864 GB/s; 350 W; PCIe Gen4 x16 64 GB/s bidirectional. */
	{"L40S", {733 * T, 366 * T, 366 * T, 183 * T, 91.6 * T}, 48 * GiB, 864 * GBs, 32 * GBs, 350, HS_ARCH_ADA, 31.5 * GBs, "L40S"},
};

#define NBUILTIN (sizeof builtins / sizeof builtins[0])

static const char *const builtin_names[] = {
	"A100-SXM-40GB", "A100-SXM-80GB", "H100-SXM-80GB", "H100-PCIe-80GB", "H200-SXM-141GB", "B200",
	"GB200",	 "MI300X",	  "RTX-4090",	   "RTX-3090",	     "L40S",	       NULL,
};

_Static_assert(sizeof builtin_names / sizeof builtin_names[0] == NBUILTIN + 1, "names match the table");

const hs_device_type *hs_device_builtin(const char *name)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

const char *const *hs_device_names(void) { return builtin_names; }

static const char *const arch_names[HS_ARCH_COUNT + 1] = {"unknown", "volta",  "turing",    "ampere", "ada",
							  "hopper",  "blackwell", "cdna3",  NULL};

const char *hs_arch_name(enum hs_arch a) { return (unsigned)a < HS_ARCH_COUNT ? arch_names[a] : "?"; }

int hs_arch_has_nvls(enum hs_arch a) { return a == HS_ARCH_HOPPER || a == HS_ARCH_BLACKWELL; }

static int builtin_or_error(const hs_ynode *n, const char *path, const char *key, const char *name,
			    const hs_device_type **out, hs_err *err)
{
	*out = hs_device_builtin(name);
	if (*out)
		return 0;
	/* A family name ("H100", "a100") stands for the types it begins: suggest those, before the nearest by
	 * edit distance (which for a short name is a different family: "H100" is 2 edits from "B200"). */
	char fam[512] = "";
	size_t flen = 0, wl = strlen(name);
	int nfam = 0;
	for (int i = 0; wl >= 2 && builtin_names[i]; i++)
		if (strncasecmp(builtin_names[i], name, wl) == 0 && flen < sizeof fam) {
			flen += (size_t)snprintf(fam + flen, sizeof fam - flen, "%s'%s'", nfam ? ", " : "",
						 builtin_names[i]);
			nfam++;
		}
	if (nfam == 1)
		return hs_cfg_err(n, err, path, key, "unknown device type '%s' (did you mean %s?)", name, fam);
	if (nfam > 1)
		return hs_cfg_err(n, err, path, key, "unknown device type '%s' (did you mean one of %s?)", name, fam);
	const char *s = hs_cfg_suggest(name, builtin_names);
	char list[512] = "";
	size_t len = 0;
	for (int i = 0; builtin_names[i]; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", builtin_names[i]);
	if (s)
		return hs_cfg_err(n, err, path, key, "unknown device type '%s' (did you mean '%s'?)", name, s);
	return hs_cfg_err(n, err, path, key, "unknown device type '%s' (expected one of: %s, or a mapping; "
					     "`hetsim list gpus` shows their figures)", name, list);
}

int hs_device_from_yaml(const hs_ynode *n, const char *path, hs_device_type *out, hs_err *err)
{
	if (!n)
		return hs_err_set(err, HS_EINPUT, "%s: missing device type", path ? path : "");
	if (n->kind == HS_Y_SCALAR) {
		const hs_device_type *b;
		if (builtin_or_error(n, path, "", n->str, &b, err))
			return -1;
		*out = *b;
		return 0;
	}
	static const char *const known[] = {"name",	 "base",   "peak_fp8",		"peak_bf16",
					    "peak_fp16", "peak_tf32", "peak_fp32",	"memory",
					    "memory_bandwidth", "scaleup_bandwidth", "pcie_bandwidth", "tdp", "arch", "profile", NULL};
	if (hs_cfg_known(n, path, known, "a device type name or a mapping that defines one", err))
		return -1;
	hs_device_type d;
	memset(&d, 0, sizeof d);
	const char *base = NULL, *name = NULL, *profile = NULL;
	if (hs_cfg_str(n, path, "base", NULL, 0, &base, err))
		return -1;
	if (base) {
		const hs_device_type *b;
		if (builtin_or_error(hs_yaml_get(n, "base"), path, "base", base, &b, err))
			return -1;
		d = *b;
	}
	if (hs_cfg_str(n, path, "name", NULL, !base, &name, err))
		return -1;
	if (name) {
		if (strlen(name) >= sizeof d.name)
			return hs_cfg_err(hs_yaml_get(n, "name"), err, path, "name", "'%s' is too long (at most %zu "
					  "characters)", name, sizeof d.name - 1);
		snprintf(d.name, sizeof d.name, "%s", name);
	}
	/* A new type without a base must give its memory, bandwidth and bf16 rate; the rest may stay 0
	 * (unsupported format, unknown scale-up or power). Values given must be positive. */
	static const char *const peak_key[HS_DTYPE_COUNT] = {"peak_fp8", "peak_bf16", "peak_fp16", "peak_tf32",
							     "peak_fp32"};
	const double tiny = 1e-300;
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		if (hs_cfg_num(n, path, peak_key[t], HS_U_FLOPS, tiny, 1e300, d.peak_flops[t],
			       !base && t == HS_BF16, &d.peak_flops[t], err))
			return -1;
	/* fp16 follows bf16 on every part we know when only bf16 is given */
	if (!base && !hs_yaml_get(n, "peak_fp16"))
		d.peak_flops[HS_FP16] = d.peak_flops[HS_BF16];
	if (hs_cfg_num(n, path, "memory", HS_U_BYTES, tiny, 1e300, d.hbm_bytes, !base, &d.hbm_bytes, err) ||
	    hs_cfg_num(n, path, "memory_bandwidth", HS_U_BW, tiny, 1e300, d.hbm_bw, !base, &d.hbm_bw, err) ||
	    hs_cfg_num(n, path, "scaleup_bandwidth", HS_U_BW, tiny, 1e300, d.scaleup_bw, 0, &d.scaleup_bw, err) ||
	    hs_cfg_num(n, path, "pcie_bandwidth", HS_U_BW, tiny, 1e300, d.pcie_bw, 0, &d.pcie_bw, err) ||
	    hs_cfg_num(n, path, "tdp", HS_U_POWER, tiny, 1e300, d.tdp_w, 0, &d.tdp_w, err))
		return -1;
	int arch;
	if (hs_cfg_enum(n, path, "arch", arch_names, (int)d.arch, &arch, err))
		return -1;
	d.arch = (enum hs_arch)arch;
	if (hs_cfg_str(n, path, "profile", NULL, 0, &profile, err))
		return -1;
	if (profile) {
		if (strlen(profile) >= sizeof d.profile)
			return hs_cfg_err(hs_yaml_get(n, "profile"), err, path, "profile",
					  "'%s' is too long (at most %zu characters)", profile, sizeof d.profile - 1);
		snprintf(d.profile, sizeof d.profile, "%s", profile);
		/* a path (calib/profile.c's rule: a '/' or a .yaml name) is checked here, where the key's position is
		 * known; a name is looked up when the profile is loaded */
		size_t pl = strlen(profile);
		hs_err fe = {0};
		if ((strchr(profile, '/') || (pl > 5 && strcmp(profile + pl - 5, ".yaml") == 0)) &&
		    hs_file_check(profile, "a device profile", &fe))
			return hs_cfg_err(hs_yaml_get(n, "profile"), err, path, "profile", "%s", fe.msg);
	} else if (!base) {
		/* an inline type with no profile borrows the measured one; its datasheet ratios scale it */
		snprintf(d.profile, sizeof d.profile, "%s", "H200-SXM-141GB");
	}
	for (size_t i = 0; i < n->n; i++)
		n->vals[i]->used = 1;
	*out = d;
	return 0;
}
