/* hs_profile: how fast a device type really runs, as calibration measured it.
 *
 * A profile holds GEMM efficiency (achieved / peak) over (m, n, k) on a log-spaced grid, interpolated
 * in log space; a memory-bandwidth curve (achieved bytes/s against bytes moved); attention efficiency; and the
 * launch overhead. Profiles are YAML (docs/calibration.md). Shipped ones live in calib/profiles/; a profile
 * "derived" from another scales it by datasheet ratios and says so. All times returned are seconds. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include "sim/dtype.h"
#include "sim/err.h"
#include "topology/device.h"

typedef struct hs_profile hs_profile;

/* Load by name (looked up in $HETSIM_PROFILES, then calib/profiles next to the executable's ../, then
 * ./calib/profiles) or by path (contains '/' or ends in .yaml). */
hs_profile *hs_profile_load(const char *name_or_path, hs_err *err);
void hs_profile_free(hs_profile *p);
const char *hs_profile_name(const hs_profile *p);

/* C[m,n] = A[m,k] B[k,n] in `dt` on device `dev`: launch + 2mnk / (peak * efficiency(m,n,k)). */
double hs_profile_gemm_time(const hs_profile *p, const hs_device_type *dev, double m, double n, double k,
			    enum hs_dtype dt);
/* A memory-bound kernel that moves `bytes` (read + write): launch + bytes / bw(bytes). */
double hs_profile_mem_time(const hs_profile *p, const hs_device_type *dev, double bytes);
/* Flash attention over (b, heads, seq, head_dim), causal or not; bwd=0 forward, 1 backward only. */
double hs_profile_attn_time(const hs_profile *p, const hs_device_type *dev, double b, double h, double s,
			    double d, int causal, int bwd);
double hs_profile_launch(const hs_profile *p);

#endif
