/* hs_model: the shape of a transformer (dense or MoE), from a preset, a preset with overrides, or a full
 * shape in YAML, and what follows from the shape alone: parameter counts. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "config/yaml.h"
#include "sim/err.h"

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

#endif
