/* What each token-mixer file (models/mixer_<kind>.c) gives the table in models/mixer.c: one record per kind.
 * Per rank, `t` is the tensor-parallel degree. Internal to models/. */
#ifndef HS_MIXER_IMPL_H
#define HS_MIXER_IMPL_H

#include "models/mixer.h"
#include "models/ops_walk.h"

typedef struct hs_mixer_def {
	const char *name;
	int attention;                                         /* softmax attention with a KV cache */
	void (*ops)(struct walk *w);                           /* append the mixer's kernels */
	double (*matrix)(const hs_model *m, double t);         /* GEMM weights per rank (NULL: attention's) */
	double (*other)(const hs_model *m, double t);          /* other parameters per rank */
	double (*acts)(const hs_model *m, const hs_layer_cfg *c); /* stored bytes per token and rank */
	double (*state)(const hs_model *m, double seq, double dt); /* decode cache or state per sequence */
	double (*core)(const hs_model *m, double seq);         /* forward core FLOPs per token (whole layer) */
	int (*check)(const hs_model *m, hs_err *err);          /* its keys against the shape */
	int (*check_tp)(const hs_model *m, int tp, hs_err *err);
} hs_mixer_def;

extern const hs_mixer_def hs_mixer_def_linear, hs_mixer_def_mamba2, hs_mixer_def_dsa;

/* The attention core's forward FLOPs per token of a causal sequence of `seq` with at most `bound` keys per
 * query (0: all): 2 (d_qk + d_v) heads x the mean keys per query (mixer.c; DSA adds its indexer). */
double hs_mixer_attention_core(const hs_model *m, double seq, double bound);
/* The K and V (or MLA latent) cache of `keys` tokens. */
double hs_mixer_kv_cache(const hs_model *m, double keys, double dt);

#endif
