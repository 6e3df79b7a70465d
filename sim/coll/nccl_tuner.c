/* NCCL's tuner constants by release band (sim/coll/nccl_tuner.h). Each row is copied as numbers from
 * src/graph/tuning.cc at the release tags named; bands join releases whose numbers are identical.
 * 2.18.1 still had 2.17's tree hops (28 us Simple); the 2.18 band is 2.18.3-2.18.6. NVLS arrived in 2.17
 * (one node, a 40 us base latency) and NVLS-tree in 2.18. */
#include "sim/coll/nccl_tuner.h"

#include <stddef.h>


/* clang-format off */
static const hs_nccl_tuner bands[] = {
	{212, 213, "2.12-2.13",
	 {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}},
	 {{{.52, 1.25, 28}, {.47, 1.9, 3.4}}, {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 28}, {2.7, 4.0, 28}}},
	 {0, 0}, 0, 0, 0, 0, 0, 1, 0},
	{214, 217, "2.14-2.17",
	 {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}},
	 {{{.52, 1.25, 28}, {.47, 1.9, 3.4}}, {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}}},
	 {40, 0}, 0, 0, 0, 0, 0, 1, 0},
	{218, 218, "2.18",
	 {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
	 {{{.6, 1.25, 4}, {.6, 1.9, 3.4}}, {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}}},
	 {23, 18}, 19, 0, 1, 1, 1, 0, 0},
	{219, 222, "2.19-2.22",
	 {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
	 {{{.6, 1.25, 28}, {.6, 1.9, 3.4}}, {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}}},
	 {23, 18}, 14, 0, 1, 1, 1, 0, 0},
	{223, 228, "2.23-2.28",
	 {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
	 {{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}}, {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}}},
	 {25, 18}, 14, 1, 1, 1, 1, 0, 1},
	{229, 229, "2.29",
	 {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
	 {{{.6, 1.25, 4.0}, {.6, 1.9, 3.4}}, {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}}, {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}}},
	 {25, 18}, 20.9, 1, 1, 1, 1, 0, 1},
};
/* clang-format on */

const hs_nccl_tuner *hs_nccl_tuner_for(int ver)
{
	size_t nb = sizeof bands / sizeof *bands;
	if (ver == 0 || ver > bands[nb - 1].last)
		return &bands[nb - 1];
	for (size_t i = 0; i < nb; i++)
		if (ver >= bands[i].first && ver <= bands[i].last)
			return &bands[i];
	return NULL;
}
