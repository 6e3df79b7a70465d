/* Scheme "vector": each operation is admitted against a vector of target-resource demands in each
 * resource's own unit: HBM bytes, atomic executions, response bytes. Each component comes back as soon as
 * its stage completes (HBM when its partition accesses finish, atomic when the engine executed it,
 * response when the response is injected), so a slow stage holds only its own credits. The atomic pool is
 * counted in executions, so it bounds the time of atomic work queued at the target, not its bytes. */
#include "sim/fabric/credit.h"

enum { HBM, ATOMIC, RESP };

static int pools(const hs_credit_cfg *cfg, const char **names, int64_t *cap)
{
	names[HBM] = "hbm_bytes";
	names[ATOMIC] = "atomics";
	names[RESP] = "resp_bytes";
	cap[HBM] = cfg->hbm;
	cap[ATOMIC] = cfg->atomic;
	cap[RESP] = cfg->resp;
	return 3;
}

static void demand(const hs_credit_cfg *cfg, const hs_credit_op *op, int64_t *need)
{
	need[HBM] = hs_credit_cells(cfg, op->hbm_bytes);
	need[ATOMIC] = op->atomics;
	need[RESP] = hs_credit_cells(cfg, op->resp_bytes);
}

static void release(const hs_credit_cfg *cfg, const hs_credit_op *op, int stage, const int64_t *held,
		    int64_t *give)
{
	if (stage == HS_STAGE_HBM)
		give[HBM] = held[HBM];
	else if (stage == HS_STAGE_ATOMIC)
		give[ATOMIC] = held[ATOMIC];
	else if (stage == HS_STAGE_RESP)
		give[RESP] = held[RESP];
}

const hs_credit_scheme hs_credit_vector = {
	.name = "vector",
	.about = "vector credits (HBM bytes, atomics, response bytes), each returned when its stage completes",
	.pools = pools,
	.demand = demand,
	.release = release,
};
