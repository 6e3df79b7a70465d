/* libFuzzer harness: arbitrary text as an nccl-tests log (calib/nccl.h), and the alpha-beta fit of what parsed. */
#include <stddef.h>
#include <stdint.h>

#include "calib/nccl.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hs_nccl_log l;
	hs_err err = {0};
	if (hs_nccl_parse((const char *)data, size, "fuzz", &l, &err) == 0) {
		double a, b;
		hs_nccl_fit(&l, &a, &b, &err);
	}
	/* also after a failure: a row that fails after good ones leaves those allocated (calib/nccl.c) */
	hs_nccl_free(&l);
	return 0;
}
