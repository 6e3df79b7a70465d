/* hs_model: presets, YAML shapes and parameter counts. The preset table lives in presets.c. */
#include "models/model.h"

#include <math.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "models/mixer.h"

extern const hs_model hs_model_presets[];
extern const size_t hs_model_npresets;

/* ---- presets ---------------------------------------------------------------------------------------- */

const char *const *hs_model_preset_names(void)
{
	/* Built once from the table; 64 is a bound checked below. */
	static const char *names[64];
	if (!names[0]) {
		size_t n = hs_model_npresets < 63 ? hs_model_npresets : 63;
		for (size_t i = 0; i < n; i++)
			names[i] = hs_model_presets[i].name;
		names[n] = NULL;
	}
	return names;
}


/* The nearest preset name, always one (the user asked for a preset; the closest is the useful hint). */
static const char *nearest_preset(const char *name)
{
	const char *best = hs_model_presets[0].name;
	size_t bd = (size_t)-1;
	for (size_t i = 0; i < hs_model_npresets; i++) {
		size_t d = hs_cfg_edit_distance(name, hs_model_presets[i].name);
		if (d < bd) {
			bd = d;
			best = hs_model_presets[i].name;
		}
	}
	return best;
}

/* ---- parameter counts ------------------------------------------------------------------------------- */

int hs_model_layer_is_moe(const hs_model *m, int layer) { return m->experts > 0 && layer >= m->dense_layers; }

static double norm_params(const hs_model *m) { return m->rmsnorm ? m->hidden : 2.0 * m->hidden; }

/* Attention weights (matrices only) and biases of one layer. */
static double attn_matrix(const hs_model *m)
{
	double h = m->hidden, a = m->heads, d = m->head_dim;
	if (m->kv_lora_rank) {
		double q = m->q_lora_rank ? h * m->q_lora_rank + (double)m->q_lora_rank * a * d : h * a * d;
		double kv = h * (m->kv_lora_rank + m->rope_head_dim) +
			    (double)m->kv_lora_rank * a * (d - m->rope_head_dim + m->v_head_dim);
		return q + kv + a * m->v_head_dim * h;
	}
	return h * (a + 2.0 * m->kv_heads) * d + a * d * h;
}

static double attn_other(const hs_model *m)
{
	double p = 0;
	if (m->kv_lora_rank) /* the latent norms of MLA */
		p += (m->q_lora_rank ? (m->rmsnorm ? 1 : 2) * m->q_lora_rank : 0) +
		     (m->rmsnorm ? 1 : 2) * m->kv_lora_rank;
	if (m->bias)
		p += (m->heads + 2.0 * m->kv_heads) * m->head_dim + m->hidden;
	return p;
}

static double mlp_matrix(const hs_model *m, double ffn) { return (m->gated_mlp ? 3.0 : 2.0) * m->hidden * ffn; }

static double mlp_bias(const hs_model *m, double ffn)
{
	return m->bias ? (m->gated_mlp ? 2.0 : 1.0) * ffn + m->hidden : 0;
}

/* The token mixer's params of `layer` (models/mixer.h): attention's, DSA's indexer added to it, or a linear
 * or state-space mixer's in its place; `t` the tensor-parallel degree (the attention's own split is
 * counted by the callers). */
static double mixer_matrix(const hs_model *m, int layer)
{
	double x = hs_mixer_params_matrix(m, layer, 1);
	if (hs_mixer_is_attention(hs_model_layer_mixer(m, layer)))
		return attn_matrix(m) + (isnan(x) ? 0 : x);
	return x;
}

static double mixer_other(const hs_model *m, int layer)
{
	double x = hs_mixer_params_other(m, layer, 1);
	if (hs_mixer_is_attention(hs_model_layer_mixer(m, layer)))
		return attn_other(m) + (isnan(x) ? 0 : x);
	return x;
}

/* Matrix params of a layer with routed experts counted `routed` times (experts or top_k). */
static double layer_matrix(const hs_model *m, int layer, double routed)
{
	double p = mixer_matrix(m, layer);
	if (hs_model_layer_is_moe(m, layer))
		p += (double)m->experts * m->hidden + (routed + m->shared_experts) * mlp_matrix(m, m->expert_ffn);
	else
		p += mlp_matrix(m, m->ffn);
	return p;
}

static double layer_other(const hs_model *m, int layer, double routed)
{
	double p = 2 * norm_params(m) + mixer_other(m, layer);
	if (hs_model_layer_is_moe(m, layer))
		p += (routed + m->shared_experts) * mlp_bias(m, m->expert_ffn);
	else
		p += mlp_bias(m, m->ffn);
	return p;
}

double hs_model_params_layer(const hs_model *m, int layer)
{
	return layer_matrix(m, layer, m->experts) + layer_other(m, layer, m->experts);
}

double hs_model_params_embedding(const hs_model *m)
{
	double p = (double)m->vocab * m->hidden;
	if (m->learned_pos)
		p += (double)m->seq_len * m->hidden;
	if (!m->tied_embeddings)
		p += (double)m->vocab * m->hidden;
	return p;
}

static double params_with(const hs_model *m, int active)
{
	double p = hs_model_params_embedding(m) + norm_params(m); /* + the final norm */
	for (int l = 0; l < m->layers; l++) {
		double r = active ? m->top_k : m->experts;
		p += layer_matrix(m, l, r) + layer_other(m, l, r);
	}
	return p;
}

double hs_model_params(const hs_model *m) { return params_with(m, 0); }
double hs_model_params_active(const hs_model *m) { return params_with(m, 1); }

double hs_model_params_matmul_active(const hs_model *m)
{
	double p = (double)m->vocab * m->hidden; /* output projection */
	for (int l = 0; l < m->layers; l++)
		p += layer_matrix(m, l, m->top_k);
	return p;
}

double hs_model_params_layer_rank(const hs_model *m, int layer, int tp, int ep, double *expert)
{
	double t = tp > 0 ? tp : 1, e = ep > 0 ? ep : 1;
	double h = m->hidden, d = m->head_dim, a = m->heads / t;
	double p = 2 * norm_params(m);
	enum hs_mixer_kind mk = hs_model_layer_mixer(m, layer);
	/* a linear or state-space mixer's params in place of the attention's; DSA's indexer (replicated)
	 * beside them; full and sliding attention have none of their own */
	if (mk != HS_MIX_FULL && mk != HS_MIX_SLIDING)
		p += hs_mixer_params_matrix(m, layer, t) + hs_mixer_params_other(m, layer, t);
	if (!hs_mixer_is_attention(mk)) {
		/* counted above */
	} else if (m->kv_lora_rank) {
		/* down-projections and latent norms replicated; up-projections column-split, output row-split */
		p += (m->q_lora_rank ? h * m->q_lora_rank + (double)m->q_lora_rank * a * d : h * a * d) +
		     h * (m->kv_lora_rank + m->rope_head_dim) +
		     (double)m->kv_lora_rank * a * (d - m->rope_head_dim + m->v_head_dim) + a * m->v_head_dim * h;
		p += attn_other(m) - (m->bias ? (m->heads + 2.0 * m->kv_heads) * m->head_dim + m->hidden : 0);
	} else {
		double kv = m->kv_heads >= t ? m->kv_heads / t : 1; /* replicated when tp > kv_heads */
		p += h * (a + 2 * kv) * d + a * d * h;
		if (m->bias)
			p += (a + 2 * kv) * d + h;
	}
	double ex = 0;
	if (hs_model_layer_is_moe(m, layer)) {
		p += (double)m->experts * h; /* router, replicated */
		p += m->shared_experts * (mlp_matrix(m, m->expert_ffn) / t + mlp_bias(m, m->expert_ffn / t));
		ex = m->experts / e * (mlp_matrix(m, m->expert_ffn) / t + mlp_bias(m, m->expert_ffn / t));
	} else {
		p += mlp_matrix(m, m->ffn) / t + mlp_bias(m, m->ffn / t);
	}
	if (expert)
		*expert = ex;
	return p + ex;
}

/* ---- parallel split checks -------------------------------------------------------------------------- */

int hs_model_check_parallel(const hs_model *m, int tp, int pp, int vstages, int cp, int ep, int seq_len,
			    hs_err *err)
{
	int v = vstages > 0 ? vstages : 1;
	if (tp < 1 || pp < 1 || cp < 1 || ep < 1)
		return hs_err_set(err, HS_EINPUT, "parallel degrees must be at least 1 (found tp %d, pp %d, cp %d, ep %d)",
				  tp, pp, cp, ep);
	if (m->heads % tp)
		return hs_err_set(err, HS_EINPUT, "%s: heads (%d) not divisible by tp (%d)", m->name, m->heads, tp);
	if (!m->kv_lora_rank && m->kv_heads % tp && tp % m->kv_heads)
		return hs_err_set(err, HS_EINPUT,
				  "%s: kv_heads (%d) and tp (%d): one must divide the other (expected kv_heads %% tp == 0, "
				  "or tp %% kv_heads == 0 with KV heads replicated)",
				  m->name, m->kv_heads, tp);
	if (m->ffn % tp && (m->experts == 0 || m->dense_layers > 0))
		return hs_err_set(err, HS_EINPUT, "%s: ffn (%d) not divisible by tp (%d)", m->name, m->ffn, tp);
	if (m->experts && m->expert_ffn % tp)
		return hs_err_set(err, HS_EINPUT, "%s: expert_ffn (%d) not divisible by tp (%d)", m->name,
				  m->expert_ffn, tp);
	if (m->layers % (pp * v))
		return hs_err_set(err, HS_EINPUT,
				  "%s: layers (%d) not divisible by pp x virtual stages (%d x %d = %d)", m->name,
				  m->layers, pp, v, pp * v);
	if (cp > 1 && seq_len % (2 * cp))
		return hs_err_set(err, HS_EINPUT,
				  "seq_len (%d) not divisible by 2 x cp (2 x %d = %d): the causal context-parallel split "
				  "gives each rank two chunks",
				  seq_len, cp, 2 * cp);
	if (ep > 1 && m->experts == 0)
		return hs_err_set(err, HS_EINPUT, "%s: ep (%d) > 1 on a dense model (no experts)", m->name, ep);
	if (m->experts && ep > m->experts)
		return hs_err_set(err, HS_EINPUT, "%s: ep (%d) larger than the number of experts (%d)", m->name, ep,
				  m->experts);
	if (m->experts && m->experts % ep)
		return hs_err_set(err, HS_EINPUT, "%s: experts (%d) not divisible by ep (%d)", m->name, m->experts,
				  ep);
	return hs_mixer_check_parallel(m, tp, cp, err);
}

/* ---- YAML ------------------------------------------------------------------------------------------- */

static const char *const shape_keys[] = {
	"preset", "name", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "gated_mlp",
	"tied_embeddings", "seq_len", "experts", "top_k", "shared_experts", "expert_ffn", "dense_layers", "bias",
	"norm", "position", "dropout", "q_lora_rank", "kv_lora_rank", "rope_head_dim", "v_head_dim",
	"layer_pattern", "window", "linear_attention", "mamba", "dsa", NULL};

static const char *const norm_names[] = {"layernorm", "rmsnorm", NULL};
static const char *const pos_names[] = {"learned", "rotary", "none", NULL};

static int read_int(const hs_ynode *n, const char *path, const char *key, int lo, int def, int required, int *out,
		    hs_err *err)
{
	int64_t v;
	if (hs_cfg_int(n, path, key, lo, 1 << 30, def, required, &v, err))
		return -1;
	*out = (int)v;
	return 0;
}

static int check_shape(const hs_ynode *n, const char *path, const hs_model *m, hs_err *err)
{
#define BAD(key, ...) hs_cfg_err(hs_yaml_get(n, key) ? hs_yaml_get(n, key) : n, err, path, key, __VA_ARGS__)
	if (m->heads % m->kv_heads)
		return BAD("kv_heads", "%d does not divide heads (%d) (expected a divisor: 1 for MQA, heads for MHA)",
			   m->kv_heads, m->heads);
	if (m->kv_lora_rank) {
		if (m->rope_head_dim >= m->head_dim)
			return BAD("rope_head_dim", "%d is not smaller than head_dim (%d) (expected the rotary part of "
						    "the query/key head)",
				   m->rope_head_dim, m->head_dim);
		if (m->v_head_dim < 1)
			return BAD("v_head_dim", "missing with kv_lora_rank (expected the value head size)");
	}
	if (m->experts) {
		if (m->top_k < 1 || m->top_k > m->experts)
			return BAD("top_k", "%d is out of range (expected 1 to experts = %d)", m->top_k, m->experts);
		if (m->dense_layers > m->layers)
			return BAD("dense_layers", "%d is more than layers (%d)", m->dense_layers, m->layers);
	} else if (m->top_k || m->shared_experts || m->dense_layers) {
		return BAD(m->top_k ? "top_k" : m->shared_experts ? "shared_experts" : "dense_layers",
			   "set on a dense model (expected experts > 0 with it)");
	}
	if (m->learned_pos && m->seq_len < 1)
		return BAD("seq_len", "must be positive with learned positions");
	return 0;
#undef BAD
}

/* ---- layer pattern and the mixers' keys (models/mixer.h) ---- */

static const char *const lin_keys[] = {"k_heads", "v_heads", "k_head_dim", "v_head_dim", "conv", "chunk", NULL};
static const char *const ssm_keys[] = {"d_state", "expand", "head_dim", "groups", "conv", "chunk", NULL};
static const char *const dsa_keys[] = {"top_k", "index_heads", "index_head_dim", NULL};

/* One sub-mapping of int keys: keys[i] read into *dst[i] (absent: kept). */
static int read_sub(const hs_ynode *n, const char *path, const char *key, const char *const *keys, int *const *dst,
		    const char *what, hs_err *err)
{
	const hs_ynode *s = hs_yaml_get(n, key);
	if (!s)
		return 0;
	char sp[160];
	snprintf(sp, sizeof sp, "%s.%s", path, key);
	if (hs_cfg_known(s, sp, keys, what, err))
		return -1;
	for (int i = 0; keys[i]; i++)
		if (read_int(s, sp, keys[i], 1, *dst[i], 0, dst[i], err))
			return -1;
	return 0;
}

static int read_pattern(const hs_ynode *n, const char *path, hs_model *m, hs_err *err)
{
	const hs_ynode *p = hs_yaml_get(n, "layer_pattern");
	if (p) {
		const char *const *names = hs_mixer_names();
		if (p->kind != HS_Y_SEQ || p->n == 0)
			return hs_cfg_err(p, err, path, "layer_pattern",
					  "%s (expected a non-empty list of layer kinds: full, sliding, linear, mamba2, dsa)",
					  p->kind == HS_Y_SEQ ? "empty" : "not a list");
		if (p->n > HS_MODEL_MAX_PATTERN)
			return hs_cfg_err(p, err, path, "layer_pattern", "%zu kinds (expected at most %d: the pattern "
					  "repeats over the layers)", p->n, HS_MODEL_MAX_PATTERN);
		for (size_t i = 0; i < p->n; i++) {
			const hs_ynode *it = p->vals[i];
			char key[48];
			snprintf(key, sizeof key, "layer_pattern[%zu]", i);
			int k = -1;
			for (int j = 0; it->kind == HS_Y_SCALAR && names[j]; j++)
				if (strcmp(it->str, names[j]) == 0)
					k = j;
			if (k < 0) {
				const char *near = it->kind == HS_Y_SCALAR ? hs_cfg_suggest(it->str, names) : NULL;
				return hs_cfg_err(it, err, path, key, "'%s' is not a layer kind (expected one of full, "
					"sliding, linear, mamba2, dsa%s%s%s)", it->kind == HS_Y_SCALAR ? it->str : "?",
					near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			}
			m->pattern[i] = (unsigned char)k;
		}
		m->npattern = (int)p->n;
	}
	if (read_int(n, path, "window", 1, m->window, 0, &m->window, err) ||
	    read_sub(n, path, "linear_attention", lin_keys,
		     (int *const[]){&m->lin_k_heads, &m->lin_v_heads, &m->lin_k_dim, &m->lin_v_dim, &m->lin_conv,
				    &m->lin_chunk},
		     "a mapping of k_heads, v_heads, k_head_dim, v_head_dim, conv, chunk", err) ||
	    read_sub(n, path, "mamba", ssm_keys,
		     (int *const[]){&m->ssm_state, &m->ssm_expand, &m->ssm_head_dim, &m->ssm_groups, &m->ssm_conv,
				    &m->ssm_chunk},
		     "a mapping of d_state, expand, head_dim, groups, conv, chunk", err) ||
	    read_sub(n, path, "dsa", dsa_keys, (int *const[]){&m->dsa_topk, &m->dsa_heads, &m->dsa_dim},
		     "a mapping of top_k, index_heads, index_head_dim", err))
		return -1;
	if (m->npattern && m->layers % m->npattern)
		return hs_cfg_err(p ? p : n, err, path, "layer_pattern",
				  "%d kinds do not divide layers (%d) (expected a pattern that repeats a whole number of "
				  "times)", m->npattern, m->layers);
	if (hs_mixer_check(m, err)) {
		char msg[sizeof err->msg];
		snprintf(msg, sizeof msg, "%s", err->msg);
		hs_err_clear(err); /* the same error, now with its position */
		return hs_cfg_err(p ? p : n, err, path, "layer_pattern", "%s", msg);
	}
	return 0;
}

/* Read the shape keys of mapping n over *m (keys absent keep m's values). `full`: no preset underneath. */
static int read_shape(const hs_ynode *n, const char *path, int full, hs_model *m, hs_err *err)
{
	int req = full;
	/* the task graph and the op lists grow with the layers: a bound far above any real model (the largest
	 * published ones have under 200) keeps a typo from asking for gigabytes (issue 18, finding 6) */
	enum { MAX_LAYERS = 10000 };
	if (read_int(n, path, "layers", 1, m->layers, req, &m->layers, err))
		return -1;
	if (m->layers > MAX_LAYERS)
		return hs_cfg_err(hs_yaml_get(n, "layers"), err, path, "layers",
				  "%d is above hetsim's limit of %d layers (the graph grows with them; the largest "
				  "published models have under 200)",
				  m->layers, MAX_LAYERS);
	if (read_int(n, path, "hidden", 1, m->hidden, req, &m->hidden, err) ||
	    read_int(n, path, "heads", 1, m->heads, req, &m->heads, err) ||
	    read_int(n, path, "vocab", 1, m->vocab, req, &m->vocab, err) ||
	    hs_cfg_bool(n, path, "gated_mlp", m->gated_mlp, &m->gated_mlp, err))
		return -1;
	if (full) {
		/* family defaults from gated_mlp: GPT style when not gated, Llama style when gated */
		m->bias = m->dropout = m->learned_pos = !m->gated_mlp;
		m->rmsnorm = m->gated_mlp;
		m->tied_embeddings = !m->gated_mlp;
		m->kv_heads = m->heads;
		m->ffn = 4 * m->hidden;
		m->seq_len = 2048;
		if (!hs_yaml_get(n, "head_dim") && m->hidden % m->heads)
			return hs_cfg_err(hs_yaml_get(n, "heads"), err, path, "heads",
					  "%d does not divide hidden (%d) (expected a divisor, or give head_dim)", m->heads,
					  m->hidden);
		m->head_dim = m->hidden / m->heads;
	} else if (hs_yaml_get(n, "hidden") || hs_yaml_get(n, "heads")) {
		/* a preset whose hidden or heads changes keeps hidden = heads x head_dim unless head_dim is given */
		if (!hs_yaml_get(n, "head_dim")) {
			if (m->hidden % m->heads)
				return hs_cfg_err(hs_yaml_get(n, "heads") ? hs_yaml_get(n, "heads") : n, err, path,
						  "heads", "%d does not divide hidden (%d) (expected a divisor, or give head_dim)",
						  m->heads, m->hidden);
			m->head_dim = m->hidden / m->heads;
		}
		if (!hs_yaml_get(n, "kv_heads") && m->kv_heads > m->heads)
			m->kv_heads = m->heads;
	}
	int norm = m->rmsnorm, pos = m->no_pos ? 2 : !m->learned_pos;
	if (read_int(n, path, "kv_heads", 1, m->kv_heads, 0, &m->kv_heads, err) ||
	    read_int(n, path, "head_dim", 1, m->head_dim, 0, &m->head_dim, err) ||
	    read_int(n, path, "ffn", 1, m->ffn, 0, &m->ffn, err) ||
	    read_int(n, path, "seq_len", 1, m->seq_len, 0, &m->seq_len, err) ||
	    hs_cfg_bool(n, path, "tied_embeddings", m->tied_embeddings, &m->tied_embeddings, err) ||
	    read_int(n, path, "experts", 0, m->experts, 0, &m->experts, err) ||
	    read_int(n, path, "top_k", 0, m->top_k, 0, &m->top_k, err) ||
	    read_int(n, path, "shared_experts", 0, m->shared_experts, 0, &m->shared_experts, err) ||
	    read_int(n, path, "expert_ffn", 1, m->expert_ffn, 0, &m->expert_ffn, err) ||
	    read_int(n, path, "dense_layers", 0, m->dense_layers, 0, &m->dense_layers, err) ||
	    hs_cfg_bool(n, path, "bias", m->bias, &m->bias, err) ||
	    hs_cfg_bool(n, path, "dropout", m->dropout, &m->dropout, err) ||
	    hs_cfg_enum(n, path, "norm", norm_names, norm, &norm, err) ||
	    hs_cfg_enum(n, path, "position", pos_names, pos, &pos, err) ||
	    read_int(n, path, "q_lora_rank", 0, m->q_lora_rank, 0, &m->q_lora_rank, err) ||
	    read_int(n, path, "kv_lora_rank", 0, m->kv_lora_rank, 0, &m->kv_lora_rank, err) ||
	    read_int(n, path, "rope_head_dim", 0, m->rope_head_dim, 0, &m->rope_head_dim, err) ||
	    read_int(n, path, "v_head_dim", 0, m->v_head_dim, 0, &m->v_head_dim, err))
		return -1;
	m->rmsnorm = norm;
	m->learned_pos = pos == 0;
	m->no_pos = pos == 2;
	if (m->experts && !m->expert_ffn)
		m->expert_ffn = m->ffn;
	if (m->experts && hs_yaml_get(n, "experts") && !hs_yaml_get(n, "top_k") && !m->top_k)
		return hs_cfg_err(hs_yaml_get(n, "experts"), err, path, "top_k",
				  "missing with experts (expected the routed experts per token)");
	if (m->kv_lora_rank)
		m->kv_heads = m->heads;
	const char *name;
	if (hs_cfg_str(n, path, "name", NULL, 0, &name, err))
		return -1;
	if (name)
		snprintf(m->name, sizeof m->name, "%s", name);
	else if (full)
		snprintf(m->name, sizeof m->name, "custom");
	if (read_pattern(n, path, m, err))
		return -1;
	return check_shape(n, path, m, err);
}

static int from_preset(const hs_ynode *n, const char *path, const char *key, const char *name, hs_model *out,
		       hs_err *err)
{
	if (hs_model_preset(name, out) == 0)
		return 0;
	return hs_cfg_err(n, err, path, key, "'%s' is not a known model preset (did you mean '%s'?)", name,
			  nearest_preset(name));
}

/* The mixers' defaults, where a shape leaves them unset: fla's chunk of 64 and a convolution of 4 (Qwen3-Next's
 * linear_conv_kernel_dim); mamba_ssm Mamba2's d_state 128, expand 2, headdim 64, ngroups 1, d_conv 4,
 * chunk_size 256; DeepSeek-V3.2-Exp's index_topk 2048, index_n_heads 64, index_head_dim 128. */
static void mixer_defaults(hs_model *m)
{
	static const struct { size_t off; int v; } d[] = {
		{offsetof(hs_model, lin_conv), 4},     {offsetof(hs_model, lin_chunk), 64},
		{offsetof(hs_model, ssm_state), 128},  {offsetof(hs_model, ssm_expand), 2},
		{offsetof(hs_model, ssm_head_dim), 64}, {offsetof(hs_model, ssm_groups), 1},
		{offsetof(hs_model, ssm_conv), 4},     {offsetof(hs_model, ssm_chunk), 256},
		{offsetof(hs_model, dsa_topk), 2048},  {offsetof(hs_model, dsa_heads), 64},
		{offsetof(hs_model, dsa_dim), 128},
	};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		int *f = (int *)((char *)m + d[i].off);
		if (*f == 0)
			*f = d[i].v;
	}
}

int hs_model_preset(const char *name, hs_model *out)
{
	for (size_t i = 0; i < hs_model_npresets; i++)
		if (strcmp(hs_model_presets[i].name, name) == 0) {
			*out = hs_model_presets[i];
			mixer_defaults(out);
			return 0;
		}
	return -1;
}

int hs_model_from_yaml(const hs_ynode *n, const char *path, hs_model *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	mixer_defaults(out);
	if (!n)
		return hs_err_set(err, HS_EINPUT, "%s: missing (expected a preset name or a shape)", path);
	if (n->kind == HS_Y_SCALAR)
		return from_preset(n, path, "", n->str, out, err);
	if (hs_cfg_known(n, path, shape_keys, "a preset name or a mapping with layers, hidden, heads, ...", err))
		return -1;
	const hs_ynode *p = hs_yaml_get(n, "preset");
	if (p) {
		if (p->kind != HS_Y_SCALAR)
			return hs_cfg_err(p, err, path, "preset", "expected a preset name");
		if (from_preset(p, path, "preset", p->str, out, err))
			return -1;
		return read_shape(n, path, 0, out, err);
	}
	return read_shape(n, path, 1, out, err);
}

double hs_model_expert_load_zipf(int experts, double s)
{
	if (experts <= 0)
		return 1;
	double h = 0;
	for (int i = 1; i <= experts; i++)
		h += pow(i, -s);
	return experts / h;
}

double hs_model_expert_load_shares(const double *shares, int n)
{
	double sum = 0, mx = 0;
	for (int i = 0; i < n; i++) {
		sum += shares[i];
		if (shares[i] > mx)
			mx = shares[i];
	}
	return sum > 0 ? n * mx / sum : 1;
}
