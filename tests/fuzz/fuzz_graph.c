/* libFuzzer harness: arbitrary bytes as a task-graph file (docs/graph-format.md) through the reader that
 * kernels/refexec and `hetsim calib compare-refexec` share, then the lookups they make of every rank and group.
 * Errors are fine; a crash, a leak or a sanitizer report is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "kernels/graph_reader.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hsg_graph g;
	char err[256];
	if (hsg_parse((const char *)data, size, "fuzz.graph", &g, err, sizeof err))
		return 0;
	volatile int k = 0;
	for (int r = -1; r < 70; r++)
		k += hsg_rank_index(&g, r) + hsg_group_index(&g, r);
	(void)k;
	hsg_free(&g);
	return 0;
}
