/* libFuzzer harness: arbitrary bytes as the Chakra ET files of up to 4 ranks (traces/chakra.h). The first
 * byte gives the ranks (1 + byte % 4); each rank's file then follows as a 2-byte little-endian length and
 * that many bytes (the last rank takes what is left). Whatever reads is freed; nothing may crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include "traces/chakra.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int n = 1 + data[0] % 4;
	const uint8_t *files[4];
	size_t len[4];
	const char *names[4] = {"f.0.et", "f.1.et", "f.2.et", "f.3.et"};
	size_t at = 1;
	for (int r = 0; r < n; r++) {
		size_t l = size - at;
		if (r < n - 1) {
			size_t want = at + 2 <= size ? (size_t)data[at] | (size_t)data[at + 1] << 8 : 0;
			at = at + 2 <= size ? at + 2 : size;
			l = want < size - at ? want : size - at;
		}
		files[r] = data + at;
		len[r] = l;
		at += l;
	}
	hs_graph g;
	hs_chakra_info info;
	hs_err err = {0};
	if (hs_chakra_read_mem(files, len, names, n, 8, &g, &info, &err) == 0)
		hs_graph_free(&g);
	return 0;
}
