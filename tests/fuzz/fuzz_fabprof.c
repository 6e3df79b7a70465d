/* libFuzzer harness: arbitrary bytes as a fabric profile (`hetsim calib import-nccl-tests` output,
 * docs/calibration.md), through the YAML reader and the profile's checks, then the lookups and corrected times
 * a run asks of it for every collective, scope and protocol. Errors are fine; a crash, a leak or a sanitizer
 * report is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "calib/fabric.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hs_err err = {0};
	hs_ydoc *doc = hs_yaml_load_string((const char *)data, size, "fuzz-fabric.yaml", &err);
	if (!doc)
		return 0;
	hs_fabprof *p = hs_fabprof_from_doc(doc, "fuzz-fabric.yaml", &err);
	hs_yaml_free(doc);
	if (!p)
		return 0;
	static const char *const colls[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
					    "nonsense"};
	static const char *const protos[] = {"LL", "LL128", "Simple", "any"};
	volatile double t = 0;
	for (int c = 0; c < 6; c++)
		for (int sc = 0; sc < 2; sc++)
			for (int pr = 0; pr < 4; pr++) {
				const hs_fab_entry *e = hs_fabprof_lookup(p, colls[c], sc, protos[pr]);
				if (e)
					for (double b = 1; b < 1e11; b *= 1000)
						t += hs_fab_entry_time(e, b, 5e-6, 1e11);
			}
	for (size_t i = 0; i < hs_fabprof_nentries(p); i++)
		t += hs_fab_entry_time(hs_fabprof_entry(p, i), 1 << 20, 1e-6, 1e10);
	(void)t;
	(void)hs_fabprof_shape(p);
	(void)hs_fabprof_name(p);
	hs_fabprof_free(p);
	return 0;
}
