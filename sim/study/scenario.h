/* hs_scenario: a training scenario loaded from YAML and checked: the cluster, the model, the training
 * settings, the parallel strategy and the simulation options. Every key is documented in docs/scenario.md.
 * `--set a.b=v` overrides are applied to the YAML tree before anything is read, so they get the same checks.
 * The document stays alive with the scenario so that later checks (memory, divisibility) can point at the
 * line of the key that caused them. */
#ifndef HS_SCENARIO_H
#define HS_SCENARIO_H

#include <stdint.h>

#include "config/variability.h"
#include "config/yaml.h"
#include "models/model.h"
#include "models/ops.h"
#include "sim/base/err.h"
#include "sim/study/diloco.h"
#include "sim/base/strlist.h"
#include "sim/study/resilience.h"
#include "topology/cluster.h"

enum hs_fidelity { HS_FID_ANALYTICAL, HS_FID_FLOW, HS_FID_PACKET };

typedef struct hs_training {
	int seq_len;
	int64_t global_batch;  /* sequences per step */
	int micro_batch;       /* sequences per micro-batch */
	enum hs_dtype dtype;   /* activations and weights (bf16 or fp16; fp32 for full precision) */
	int fp8_gemms;         /* precision: fp8 => GEMMs in fp8, activations bf16 */
	int materialized_attention; /* attention: materialized (scores in memory, Megatron 2022); 0: flash */
} hs_training;

enum hs_dim { HS_DIM_TP, HS_DIM_CP, HS_DIM_DP, HS_DIM_PP };

typedef struct hs_parallel {
	int tp, pp, dp, cp, ep;
	int vstages;           /* model chunks per pipeline rank (interleaved schedule) */
	int recompute;         /* HS_RC_* */
	int sequence_parallel;
	int schedule;          /* enum hs_sched_kind */
	int zero;              /* 0..3 */
	int micro_batches;     /* derived: global_batch / (dp * micro_batch) */
	double dp_bucket_bytes;/* gradient bucket size for overlapped DP reduction */
	double memory_reserve; /* bytes kept free on each device (framework, fragmentation) */
	int order[4];          /* rank layout, innermost first: HS_DIM_* (Megatron: tp, cp, dp, pp) */
	double expert_load;    /* busiest expert's tokens / uniform share (1: uniform; from expert_imbalance) */
	int cp_ring;           /* cp_mode: ring (1) or allgather (0) */
	/* Heterogeneous placement (docs/heterogeneity.md). Owned by the scenario. */
	int *stage_layers;     /* [pp] transformer layers per pipeline stage (all its chunks); NULL: uniform */
	int stage_layers_auto; /* stage_layers: auto (hs_build_partition balances them) */
	int *dp_mb;            /* [dp] micro-batches per data-parallel replica; NULL: micro_batches each */
	int dp_mb_auto;        /* dp_microbatches: auto (proportional to replica speed) */
	int sites;             /* DiLoCo sites (1 without diloco): replicas are numbered site-major and the
				* data-parallel group of a replica is its site's replicas */
} hs_parallel;

typedef struct hs_simopts {
	enum hs_fidelity fidelity;
	uint64_t seed;
	int steps;
	int symmetry;          /* simulate one representative per equivalence class */
	int coll_algo;         /* enum hs_coll_algo for every collective (HS_ALGO_AUTO: as NCCL's tuner picks) */
	int layer_net;         /* layer_collectives: network (TP/CP/EP collectives inside a layer as flows; flow
				* fidelity only) */
	double horizon_hint_s; /* internal: expected run length, to size the flow model's utilisation bins */
} hs_simopts;

/* `cost:` (docs/scenario.md): prices and the power model behind sim/study/cost.h. */
#define HS_COST_MAX_PRICES 16
typedef struct hs_costopts {
	double gpu_hour;        /* flat price per GPU-hour; NAN when not given */
	int nprices;            /* per device type prices (cost: {gpu_hour: {H100-SXM-80GB: 2.5}}) */
	char price_dev[HS_COST_MAX_PRICES][64];
	double price[HS_COST_MAX_PRICES];
	double idle_power;      /* fraction of TDP drawn while not computing (default 0: power = TDP x utilisation) */
	double pue;             /* facility overhead multiplying energy (default 1) */
	char currency[16];      /* for display only (default "$") */
} hs_costopts;

typedef struct hs_scenario {
	hs_ydoc *doc;
	const char *path;
	char name[128];
	hs_cluster *cluster;
	hs_model model;
	hs_training train;
	hs_parallel par;
	hs_simopts sim;
	hs_variability var;
	hs_resilience res;
	hs_diloco diloco;
	hs_costopts cost;
} hs_scenario;

/* Load, apply overrides, check. Returns NULL with err (HS_EINPUT, or HS_EINFEASIBLE for a strategy that
 * cannot run on this cluster). */
hs_scenario *hs_scenario_load(const char *path, const struct hs_strlist *sets, hs_err *err);
/* The same from a parsed document, which the scenario takes over (freed with it, also on failure). */
hs_scenario *hs_scenario_from_doc(hs_ydoc *doc, const char *path, hs_err *err);
void hs_scenario_free(hs_scenario *s);
/* Position of a key for later messages ("parallelism.tp"); the root when absent. */
const hs_ynode *hs_scenario_node(const hs_scenario *s, const char *dotted);

/* Is this document a fabric experiment (`kind: fabric`) rather than a training scenario? */
int hs_scenario_is_fabric(hs_ydoc *doc);

#endif
