/* Scheme "byte": one pool of byte credits (sized like the receive buffer). An operation is charged the
 * payload bytes it moves (whole cells; an atomic or a notify costs at least one cell), and gets them back
 * when the target is done with it (its response is injected). This protects link buffers and streaming
 * traffic but prices a small operation by bytes, not by the atomic or response work it causes. */
#include "sim/fabric/credit.h"

static int pools(const hs_credit_cfg *cfg, const char **names, int64_t *cap)
{
	names[0] = "bytes";
	cap[0] = cfg->bytes;
	return 1;
}

static void demand(const hs_credit_cfg *cfg, const hs_credit_op *op, int64_t *need)
{
	need[0] = hs_credit_cells(cfg, op->size ? op->size : 1);
}

static void release(const hs_credit_cfg *cfg, const hs_credit_op *op, int stage, const int64_t *held,
		    int64_t *give)
{
	if (stage == HS_STAGE_RESP)
		give[0] = held[0];
}

const hs_credit_scheme hs_credit_byte = {
	.name = "byte",
	.about = "one byte-credit pool, returned when the target is done",
	.pools = pools,
	.demand = demand,
	.release = release,
};
