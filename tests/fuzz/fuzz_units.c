/* libFuzzer harness: arbitrary text as a quantity of every kind. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/units.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	for (int u = HS_U_COUNT; u <= HS_U_RATE; u++) {
		double v;
		char why[128];
		hs_units_parse(s, (enum hs_unit)u, &v, why, sizeof why);
	}
	free(s);
	return 0;
}
