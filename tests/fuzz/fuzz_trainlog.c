/* libFuzzer harness: arbitrary text as a training log, in every format and detected, with and without the
 * options that change how steps are timed; and the warm-up statistics of whatever parsed. */
#include <stddef.h>
#include <stdint.h>

#include "calib/trainlog.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const hs_tlog_opts opts[2] = {{0, 0}, {32, 8192}};
	for (int o = 0; o < 2; o++)
		for (int f = HS_TLOG_AUTO; f < HS_TLOG_NFMT; f++) {
			hs_tlog l;
			hs_err err = {0};
			if (hs_tlog_parse((const char *)data, size, "fuzz", (enum hs_tlog_fmt)f, &opts[o], &l, &err))
				continue;
			double m, p;
			size_t used;
			hs_tlog_stats(&l, l.n / 2, &m, &p, &used, &err);
			hs_tlog_free(&l);
		}
	return 0;
}
