/* hs_mixer: the token mixer a layer runs, for models whose layers differ in kind (hs_model.pattern): full
 * attention, sliding-window attention, linear attention (Gated DeltaNet), Mamba-2 state-space layers and
 * DeepSeek's sparse attention (DSA) with its lightning indexer. Each kind has its own file (mixer_*.c) behind
 * one table (mixer.c) and says, for one layer on one rank: its ops (appended by models/ops.c), its
 * parameters, its stored activations, and the KV cache or recurrent state one sequence keeps.
 * The MLP (dense or MoE) after the mixer is the same for every kind. docs/models.md gives the formulas. */
#ifndef HS_MIXER_H
#define HS_MIXER_H

#include "models/model.h"
#include "models/ops.h"

enum hs_mixer_kind { HS_MIX_FULL, HS_MIX_SLIDING, HS_MIX_LINEAR, HS_MIX_MAMBA2, HS_MIX_DSA, HS_MIX_COUNT };

/* The kind's scenario name ("full", "sliding", "linear", "mamba2", "dsa"); NULL-terminated list of them. */
const char *hs_mixer_name(enum hs_mixer_kind k);
const char *const *hs_mixer_names(void);
/* The mixer of layer `layer` (0-based): pattern[layer % npattern], full without a pattern. */
enum hs_mixer_kind hs_model_layer_mixer(const hs_model *m, int layer);
/* Whether the mixer is softmax attention over (some of) the keys with a KV cache: full, sliding, dsa. The
 * attention parts of models/ops.c and models/memory.c apply to these; the others replace them. */
int hs_mixer_is_attention(enum hs_mixer_kind k);

/* Parameters of the mixer of `layer`, matrices (GEMM weights) and the rest (norms, convolution, gates,
 * biases), whole or as one of `tp` tensor-parallel ranks holds them. Full and sliding: NaN (model.c counts
 * attention itself); dsa: the indexer only (added to the attention's). */
double hs_mixer_params_matrix(const hs_model *m, int layer, double tp);
double hs_mixer_params_other(const hs_model *m, int layer, double tp);
/* Activation bytes per token that one rank stores for backward for a linear or mamba2 mixer (no
 * recomputation); the indexer's for dsa (added to the attention's); 0 for full and sliding. */
double hs_mixer_activations_per_token(const hs_model *m, const hs_layer_cfg *c, int layer);
/* Bytes one sequence of `seq` tokens keeps for decoding, per layer and whole (not split by tp): the K and V
 * cache (full: seq keys; sliding: min(seq, window); dsa: MLA's latent or K/V cache plus the indexer's keys)
 * or the recurrent state (linear: v_heads x d_k x d_v fp32 plus the convolution's last conv-1 inputs;
 * mamba2: heads x head_dim x d_state fp32 plus the convolution's). `dt_bytes`: the cache's element size. */
double hs_mixer_state_bytes(const hs_model *m, int layer, double seq, double dt_bytes);
/* Forward FLOPs per token of the mixer's token-mixing core (not its weight GEMMs), averaged over the
 * positions of a causal sequence of `seq` tokens: what hs_model_flops_per_step adds to 6 x params for it. */
double hs_mixer_core_flops_per_token(const hs_model *m, int layer, double seq);
/* Keys each query attends to summed over a causal sequence of s queries, when at most `bound` keys are
 * kept (the window, DSA's top-k; 0: no bound): s^2/2 when bound >= s, else s bound - bound^2/2 (the
 * continuous form hetsim's causal attention uses, so that a bound >= s is exactly full attention). */
double hs_mixer_causal_keys(double s, double bound);

/* Checks of the mixer keys against the shape and the parallel split: -1 with HS_EINPUT naming the key. */
int hs_mixer_check(const hs_model *m, hs_err *err);
int hs_mixer_check_parallel(const hs_model *m, int tp, int cp, hs_err *err);

#endif
