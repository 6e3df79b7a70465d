/* Memory per rank: weights, gradients, optimizer states (sharded by ZeRO stage), activations (Korthikanti et
 * al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Eq. 1-6, for each recompute mode and
 * with sequence parallelism), the schedule's in-flight micro-batches, communication buffers and logits. */
#ifndef HS_MEMORY_H
#define HS_MEMORY_H

#include "models/model.h"
#include "models/ops.h"

typedef struct hs_mem_cfg {
	hs_layer_cfg layer;   /* tp, cp, ep, sp, micro_batch, seq_len, dtype, recompute */
	int pp, dp;
	int zero_stage;       /* 0 none, 1 optimizer states, 2 + gradients, 3 + weights (FSDP) */
	int fsdp_keep;        /* zero 3 without resharding after forward (FSDP2 reshard_after_forward: false): the
			       * gathered parameters and the unsharded gradients are held for the whole step */
	int layers_on_rank;   /* transformer layers this rank holds */
	int first_stage, last_stage; /* holds embedding / output head */
	int in_flight;        /* micro-batches whose activations are live at peak (1F1B: pp - stage); with
			       * vstages > 1, (micro-batch, chunk) pairs as hs_sched_in_flight counts them */
	double comm_buffer_bytes;
	/* Added by the models layer (zero keeps the old meaning): */
	int first_layer;      /* this rank's layers are [first_layer, first_layer + layers_on_rank) (MoE models
			       * whose first layers are dense need it) */
	int vstages;          /* model chunks per rank (interleaving); 0 or 1: none */
	int gather_layers;    /* ZeRO-3: layers gathered at once (0: 1); two such units are unsharded at a time */
	double z3_live_params;/* ZeRO-3 as DeepSpeed runs it: gathered parameters resident at once on a rank (its
			       * max_live_parameters, at least one prefetch bucket); 0: the two units above */
	int offload_optimizer;   /* ZeRO-Offload: optimizer states and fp32 gradient partitions in host memory */
	int offload_activations; /* saved activations in host memory, two layers' worth kept on the device */
	double in_flight_layers; /* the layers' activations held at peak when a rank's chunks differ in size (sum
				  * over held (micro-batch, chunk) of its layers); 0: in_flight x layers / vstages */
} hs_mem_cfg;

typedef struct hs_mem {
	double weights, grads, optimizer, activations, logits, comm_buffers;
	double total;
	double host;          /* bytes this rank keeps in host memory (offload); not part of total */
} hs_mem;

/* Bytes per parameter: bf16 weights 2, grads 2 (fp32 accumulation 4 when dtype is fp32), Adam 12 (fp32 master,
 * m, v); divided by dp for the sharded parts. */
void hs_memory_rank(const hs_model *m, const hs_mem_cfg *c, hs_mem *out);
/* Activation bytes of one layer for one micro-batch (Korthikanti Eq. 2-6), for the model's typical (last)
 * layer; _at for a given layer (dense or MoE). */
double hs_memory_layer_activations(const hs_model *m, const hs_layer_cfg *c);
double hs_memory_layer_activations_at(const hs_model *m, const hs_layer_cfg *c, int layer);

#endif
