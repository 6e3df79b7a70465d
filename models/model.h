/* hs_model: the shape of a transformer (dense or MoE), from a preset, a preset with overrides, or a full
 * shape in YAML, and what follows from the shape alone: parameter counts. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "config/yaml.h"
#include "sim/base/err.h"

#define HS_MODEL_MAX_PATTERN 16

typedef struct hs_model {
	char name[64];
	int layers;
	int hidden;
	int heads;
	int kv_heads;        /* == heads: MHA; 1: MQA; otherwise GQA */
	int head_dim;        /* usually hidden / heads */
	int ffn;             /* dense MLP inner size */
	int vocab;
	int gated_mlp;       /* SwiGLU-style: three FFN matrices instead of two */
	int tied_embeddings; /* output projection shares the input embedding */
	int seq_len;         /* default sequence length of the preset (training.seq_len overrides) */
	/* MoE; experts == 0 means dense */
	int experts;         /* routed experts per MoE layer */
	int top_k;           /* routed experts per token */
	int shared_experts;  /* always-active experts per MoE layer */
	int expert_ffn;      /* inner size of one expert */
	int dense_layers;    /* leading layers that stay dense (DeepSeek-V3: 3) */
	/* Added by the models layer (compatible: zero means the modern default for a preset's family; see
	 * docs/models.md). A full YAML shape defaults these from gated_mlp: GPT style when not gated. */
	int bias;            /* linear layers carry biases (GPT); 0: none (Llama) */
	int rmsnorm;         /* RMSNorm (weight only); 0: LayerNorm (weight and bias) */
	int learned_pos;     /* learned absolute position embedding (seq_len x hidden); 0: rotary */
	int no_pos;          /* position: none (no position encoding, NoPE): neither a table nor rotary */
	int dropout;         /* dropout after attention probabilities, projection and MLP (GPT, Korthikanti) */
	/* Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank == 0 means ordinary MHA/GQA/MQA.
	 * With MLA, head_dim is the query/key head size (nope + rope) and v_head_dim the value head size. */
	int q_lora_rank;     /* 0: queries projected directly from hidden */
	int kv_lora_rank;
	int rope_head_dim;   /* the rotary part of head_dim */
	int v_head_dim;
	/* Layer pattern (models/mixer.h, docs/models.md): the token mixer of layer l is pattern[l % npattern]
	 * (enum hs_mixer_kind); npattern 0: every layer full attention. The pattern divides the layers. */
	unsigned char pattern[HS_MODEL_MAX_PATTERN];
	int npattern;
	int window;          /* sliding: keys per query (Mistral 7B, Gemma 2: 4096) */
	int lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_conv, lin_chunk; /* linear: Gated DeltaNet */
	int ssm_state, ssm_expand, ssm_head_dim, ssm_groups, ssm_conv, ssm_chunk; /* mamba2: Mamba-2 (SSD) */
	int dsa_topk, dsa_heads, dsa_dim; /* dsa: DeepSeek sparse attention's top-k and lightning indexer */
} hs_model;

/* Fill *out from a preset name ("gpt3-175b", "llama3-8b", ...); -1 if unknown. */
int hs_model_preset(const char *name, hs_model *out);
const char *const *hs_model_preset_names(void); /* NULL-terminated */
/* A scenario's `model:` node: a preset name, {preset: name, overrides...}, or a full shape. Checks that the
 * shape is consistent (head_dim * heads, kv_heads divides heads, positive sizes). */
int hs_model_from_yaml(const hs_ynode *n, const char *path, hs_model *out, hs_err *err);

/* Parameter counts (exact, from the shapes). */
double hs_model_params(const hs_model *m);           /* everything */
double hs_model_params_layer(const hs_model *m, int layer); /* one transformer layer (norms included) */
double hs_model_params_embedding(const hs_model *m); /* input embedding (+ output projection if untied) */
double hs_model_params_active(const hs_model *m);    /* per token: routed experts counted top_k times */
/* Parameters that are GEMM weights doing work per token: the weight matrices of every layer (routed experts
 * counted top_k times, router included) and the output projection (counted even when tied); no norms, no
 * biases, no embedding lookup or position table. 6 x this x tokens is the dense part of the model FLOPs. */
double hs_model_params_matmul_active(const hs_model *m);
/* Parameters of one layer held by one rank: attention and dense MLP split by tp (KV heads replicated when
 * tp > kv_heads; MLA down-projections, router and norms replicated), routed experts split over ep and then tp
 * (expert tensor parallelism = tp). `expert` != NULL receives the routed-expert part (sharded by ZeRO over the
 * expert-data-parallel group, which is smaller). */
double hs_model_params_layer_rank(const hs_model *m, int layer, int tp, int ep, double *expert);
/* Layers that are MoE: experts > 0 and layer >= dense_layers. */
int hs_model_layer_is_moe(const hs_model *m, int layer);

/* Expert load imbalance: the factor by which the busiest expert's tokens exceed the uniform share,
 * E x max_i share_i (1 for uniform routing). Zipf with exponent s: share_i = i^-s / sum_j j^-s over the E
 * experts, so the factor is E / H(E, s) (H the generalised harmonic number); given shares: E x max / sum
 * (shares[0..n-1], n == experts, each >= 0, sum > 0). */
double hs_model_expert_load_zipf(int experts, double s);
double hs_model_expert_load_shares(const double *shares, int n);

/* Whether the model splits as asked; -1 with HS_EINPUT and a message naming the numbers (no file:line prefix;
 * the caller adds it): heads % tp, kv_heads vs tp (kv_heads % tp == 0, or tp % kv_heads == 0 and the KV heads
 * are replicated), ffn and expert_ffn % tp, layers % (pp * vstages), seq_len % cp (and % 2cp for the
 * load-balanced causal split), ep <= experts and experts % ep, ep > 1 on a dense model. Pass 1 for an unused
 * degree; vstages 0 counts as 1. */
int hs_model_check_parallel(const hs_model *m, int tp, int pp, int vstages, int cp, int ep, int seq_len,
			    hs_err *err);

#endif
