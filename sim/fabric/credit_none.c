/* Scheme "none": no credits. Only the links' hop-by-hop backpressure at the receive buffer limits what is
 * in flight, so a slow stage at the target fills the buffer and blocks every path (head-of-line blocking). */
#include "sim/fabric/credit.h"

static int pools(const hs_credit_cfg *cfg, const char **names, int64_t *cap) { return 0; }
static void demand(const hs_credit_cfg *cfg, const hs_credit_op *op, int64_t *need) {}
static void release(const hs_credit_cfg *cfg, const hs_credit_op *op, int stage, const int64_t *held,
		    int64_t *give)
{
}

const hs_credit_scheme hs_credit_none = {
	.name = "none",
	.about = "no admission control; link backpressure only",
	.pools = pools,
	.demand = demand,
	.release = release,
};
