/* libFuzzer harness: arbitrary bytes as a calibration record file (JSON Lines, docs/calibration.md) through
 * the reader, then `calib fit`'s record readers and fits (GEMM grid, memory curves, attention families,
 * kernel gap) for an H200, alone and beside a framework file, as `hetsim calib fit` runs them. Errors are
 * fine; a crash, a leak or a sanitizer report is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calib/fit.h"
#include "calib/jsonl.h"
#include "topology/device.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hs_err err = {0};
	hs_jsonl *js = hs_jsonl_parse((const char *)data, size, "kernels-2026-12-01/fuzz.jsonl", &err);
	if (!js)
		return 0;
	const hs_device_type *dev = hs_device_builtin("H200-SXM-141GB");
	static const char fw[] = "{\"kind\": \"info\", \"name\": \"NVIDIA H200\", \"torch\": \"2.11\"}\n"
				 "{\"kind\": \"hbm_copy\", \"bytes\": 1e6, \"t_med\": 2e-5}\n";
	hs_jsonl *other = hs_jsonl_parse(fw, strlen(fw), "h200-microbench-2026-11-29.jsonl", &err);
	for (int n = 1; n <= 2; n++) {
		const hs_jsonl *sets[2] = {js, other};
		hs_fit_report rep = {0};
		hs_err_clear(&err);
		hs_profile *p = hs_fit_profile(sets, n, dev, "fuzz", &rep, &err);
		hs_profile_free(p);
		hs_fit_report_free(&rep);
	}
	hs_jsonl_free(other);
	hs_jsonl_free(js);
	return 0;
}
