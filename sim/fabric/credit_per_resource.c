/* Scheme "per_resource": byte credits per target resource (HBM, atomic engine, response engine). An
 * operation is charged, in whole cells, the bytes it moves through each resource it uses (an atomic: its
 * operand size at the atomic engine; every operation: its response bytes at the response engine), and gets
 * all of them back when the target is done with it. This is the baseline of the published comparison. */
#include "sim/fabric/credit.h"

enum { HBM, ATOMIC, RESP };

static int pools(const hs_credit_cfg *cfg, const char **names, int64_t *cap)
{
	names[HBM] = "hbm_bytes";
	names[ATOMIC] = "atomic_bytes";
	names[RESP] = "resp_bytes";
	cap[HBM] = cfg->hbm;
	cap[ATOMIC] = cfg->atomic_bytes;
	cap[RESP] = cfg->resp;
	return 3;
}

static void demand(const hs_credit_cfg *cfg, const hs_credit_op *op, int64_t *need)
{
	need[HBM] = hs_credit_cells(cfg, op->hbm_bytes);
	need[ATOMIC] = op->atomics ? hs_credit_cells(cfg, op->size ? op->size : 1) : 0;
	need[RESP] = hs_credit_cells(cfg, op->resp_bytes);
}

static void release(const hs_credit_cfg *cfg, const hs_credit_op *op, int stage, const int64_t *held,
		    int64_t *give)
{
	if (stage == HS_STAGE_RESP)
		for (int i = 0; i < 3; i++)
			give[i] = held[i];
}

const hs_credit_scheme hs_credit_per_resource = {
	.name = "per_resource",
	.about = "byte credits per resource (HBM, atomic, response), returned when the target is done",
	.pools = pools,
	.demand = demand,
	.release = release,
};
