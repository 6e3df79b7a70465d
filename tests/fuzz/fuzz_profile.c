/* libFuzzer harness: arbitrary bytes as a device profile (docs/calibration.md), through the YAML reader and
 * the profile's checks, then every query a run makes of it and a derivation to another device, at shapes
 * from tiny to large so the grid's edges and the roofline bound are reached. Errors are fine; a crash, a
 * leak or a sanitizer report is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "calib/profile.h"
#include "topology/device.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hs_err err = {0};
	hs_ydoc *doc = hs_yaml_load_string((const char *)data, size, "fuzz-profile.yaml", &err);
	if (!doc)
		return 0;
	hs_profile *p = hs_profile_from_yaml(hs_yaml_root(doc), &err);
	if (p) {
		const hs_device_type *dev = hs_device_builtin("H200-SXM-141GB");
		static const double sz[] = {1, 64, 4096, 1e5, 3e7};
		volatile double t = 0;
		for (int i = 0; i < 5; i++) {
			double s = sz[i];
			for (int dt = 0; dt < HS_DTYPE_COUNT; dt++)
				t += hs_profile_gemm_time(p, dev, s, s, s, (enum hs_dtype)dt);
			t += hs_profile_gemm_batched_time(p, dev, s, 64, s, 8, HS_BF16);
			t += hs_profile_mem_time(p, dev, s * 1e3);
			t += hs_profile_mem_op_time(p, dev, "softmax", s * 1e3);
			t += hs_profile_attn_time(p, dev, 1, 8, s, 128, 1, i & 1);
		}
		t += hs_profile_launch(p) + hs_profile_kernel_gap(p) + hs_profile_attn_rule(p);
		(void)t;
		hs_profile *d = hs_profile_derive(p, dev, hs_device_builtin("A100-SXM-80GB"), &err);
		hs_profile_free(d);
		hs_profile_free(p);
	}
	hs_yaml_free(doc);
	return 0;
}
