/* hs_cost: what one training step costs in GPU time, energy and money (issue 7, part 5).
 *
 * GPU-hours per step: GPUs x step time / 3600 s.
 * Utilisation of a rank: the fraction of the step its compute stream runs kernels, u = compute_s / step_time
 *   (the breakdown's `compute`; exposed communication and pipeline bubble count as idle, and so does the tail
 *   after a rank's last task while the step waits for the slowest one).
 * Power of a rank: TDP x (idle + (1 - idle) x u), where idle = `cost.idle_power` (default 0, which is the plain
 *   "TDP x utilisation" model: a lower bound, since a GPU waiting on the network still draws power; measured
 *   idle-to-TDP ratios are a scenario input, not a constant here). Energy per step = sum over ranks of power x
 *   step time, x `cost.pue`.
 * Money: price per GPU-hour (`cost.gpu_hour`, flat or per device type) x GPU-hours; NAN where a device has no
 *   price. Per million tokens: cost per step / (global batch x sequence length) x 1e6.
 * Ranks stand for `multiplicity` real ranks each (symmetry), so sums weight by it. */
#ifndef HS_COST_H
#define HS_COST_H

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"

typedef struct hs_cost {
	double gpu_hours_per_step;
	double utilisation;         /* GPU-weighted mean of u */
	double power_w;             /* cluster mean power during the step (PUE included) */
	double energy_j_per_step;
	double energy_j_per_token;
	double kwh_per_mtok;        /* kWh per million tokens */
	double tokens_per_step;
	double cost_per_step;       /* NAN without prices */
	double cost_per_mtok;       /* per million tokens; NAN without prices */
	double cost_per_hour;       /* cluster price per hour; NAN without prices */
	const char *currency;
} hs_cost;

void hs_cost_compute(const hs_scenario *s, const hs_build *b, const hs_result *r, hs_cost *out);

#endif
