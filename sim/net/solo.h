/* Inside sim/net: transfers timed alone on their links, away from the flow model's solver (sim/net/solo.c).
 * Not a public header.
 *
 * A collective whose transfers all start at one instant, on links that carry nothing else while they run
 * (the model holds them for it: net_flow.c's holds), meets only itself: max-min sharing decomposes over the
 * parts of the network that no flow joins, so its transfers finish as they would among the network's other
 * flows. hs_solo_run times them on a solver of their own, over their links only, by the steps the flow model
 * takes (one recompute at the start, one after each instant some finish), so the times are the model's. */
#ifndef HS_SOLO_H
#define HS_SOLO_H

#include "sim/base/time.h"
#include "sim/net/maxmin.h"
#include "topology/route.h"

/* nr transfers of `bytes` (> 0) each, started together at time 0 on routes r[0..nr), the links' bandwidths and
 * twins those of the model's solver g. Each transfer's finish (its last byte leaves) into fin[i]. With stop below
 * HS_TIME_MAX the run ends at `stop`: a transfer finished by then has its finish in fin[i] and rem[i] = 0; one
 * still running has fin[i] = HS_TIME_MAX and its bytes left at `stop` in rem[i] (rem may be NULL without a stop).
 * Returns 0, or -1 where a transfer would never finish (a link without bandwidth). */
int hs_solo_run(const hs_maxmin *g, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin,
		double *rem);

#endif
