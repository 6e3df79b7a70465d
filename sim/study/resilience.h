/* Failures, restarts and checkpoints over a long horizon: Monte Carlo goodput and time-to-train.
 *
 * Components (GPUs, nodes, links) fail as renewal processes (exponential or Weibull times between failures,
 * each component replaced on failure). A failure stops the job: it loses the work since the last committed
 * checkpoint, and resumes after detection + restart + checkpoint load. Checkpoints are taken every `interval`
 * of work: the job stalls while the state is copied (to host memory when asynchronous, else all the way to
 * storage), and the checkpoint commits when the storage write completes; a failure before the commit falls back
 * to the previous one. Storage bandwidth is the lesser of per-node bandwidth x nodes and the aggregate.
 *
 * Young (1974) and Daly (2006) give the interval that maximises goodput when failures are exponential and the
 * checkpoint cost is small against the MTBF; hs_resilience_daly computes it for comparison. */
#ifndef HS_RESILIENCE_H
#define HS_RESILIENCE_H

#include <stdint.h>

#include "config/yaml.h"
#include "sim/base/err.h"

enum hs_fail_dist { HS_FAIL_EXPONENTIAL, HS_FAIL_WEIBULL };

typedef struct hs_resilience {
	int enabled;
	/* failure processes: mean time between failures per component (seconds; 0 = never fails) */
	double mtbf_gpu, mtbf_node, mtbf_link;
	enum hs_fail_dist dist;
	double weibull_shape;      /* k; the scale is set so the mean equals the MTBF */
	double detection, restart; /* seconds */
	/* checkpoints */
	double interval;           /* seconds of work between checkpoints; 0 = none */
	double *sweep;             /* intervals to compare (seconds), from `interval: [..]` or `sweep:` */
	int nsweep;
	int async;                 /* copy to host memory, then write to storage in the background */
	double host_bw_per_gpu;    /* bytes/s, device -> host copy */
	double storage_bw_node;    /* bytes/s per node */
	double storage_bw_total;   /* bytes/s aggregate (0: unlimited) */
	double checkpoint_bytes;   /* whole job's state; 0: computed from the model (weights + optimizer) */
	double horizon;            /* seconds of wall time simulated per trial */
	char horizon_at[96];       /* "file:line:col" of resilience (or its horizon), for the bound's message */
	int trials;
	double target_tokens;      /* optional: tokens to train, for time-to-train */
} hs_resilience;

typedef struct hs_res_job {
	int gpus, nodes, links;    /* component counts */
	double step_s;             /* failure-free step time */
	double tokens_per_step;
	double state_bytes;        /* checkpoint size of the whole job */
	uint64_t seed;
} hs_res_job;

typedef struct hs_res_out {
	double interval;           /* seconds of work between checkpoints */
	double stall;              /* job stall per checkpoint, seconds */
	double commit;             /* time from checkpoint start to commit, seconds */
	double goodput;            /* useful work / wall time, mean over trials */
	double goodput_p10, goodput_p90;
	double failures_per_day;   /* mean over trials */
	double lost_work_frac, down_frac, ckpt_frac; /* shares of wall time */
	double time_to_train_s;    /* target_tokens at the mean goodput (0 without a target) */
} hs_res_out;

/* Parse a scenario's `resilience:` mapping (NULL: disabled). */
int hs_resilience_from_yaml(const hs_ynode *n, hs_resilience *out, hs_err *err);
void hs_resilience_free(hs_resilience *r);
/* Monte Carlo at one checkpoint interval (seconds of work; 0 = no checkpoints). Common random numbers: the same
 * seed gives the same failure times whatever the interval, so intervals compare without sampling noise. */
void hs_resilience_run(const hs_resilience *r, const hs_res_job *job, double interval, hs_res_out *out);
/* System MTBF (seconds) from the component counts and MTBFs. */
double hs_resilience_system_mtbf(const hs_resilience *r, const hs_res_job *job);
/* Young's sqrt(2 delta M) and Daly's higher-order interval (seconds of work), for stall delta and MTBF M. */
double hs_resilience_young(double delta, double mtbf);
double hs_resilience_daly(double delta, double mtbf);

#endif
