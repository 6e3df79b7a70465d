/* hs_mixer: the table of token-mixer kinds (models/mixer.h), full and sliding-window attention, and the
 * dispatch every caller goes through. The other kinds live in mixer_linear.c, mixer_mamba2.c, mixer_dsa.c.
 *
 * Sliding-window attention (Beltagy et al. 2020, "Longformer", arXiv 2004.05150, section 3.1; Jiang et al.
 * 2023, "Mistral 7B", arXiv 2310.06825, section 2: window W = 4096, a rolling KV cache of W; Gemma Team 2024,
 * "Gemma 2", arXiv 2408.00118, section 2: local layers of 4096 alternating with global ones): query t attends
 * to keys max(0, t - W + 1) .. t, so a causal sequence of s queries touches s W - W^2/2 keys in hetsim's
 * continuous count (s^2/2 when W >= s, the count full causal attention uses), and the cache keeps
 * min(s, W) keys. Same weights and ops as full attention otherwise. */
#include "models/mixer.h"

#include <math.h>
#include <stddef.h>

#include "models/mixer_impl.h"

double hs_mixer_causal_keys(double s, double bound)
{
	if (bound <= 0 || bound >= s)
		return 0.5 * s * s;
	return s * bound - 0.5 * bound * bound;
}

double hs_mixer_attention_core(const hs_model *m, double seq, double bound)
{
	double dqk = m->head_dim, dv = m->kv_lora_rank ? m->v_head_dim : m->head_dim;
	/* QK^T and PV: 2 d_qk + 2 d_v FLOPs per (query, key) pair and head */
	return 2.0 * m->heads * (dqk + dv) * hs_mixer_causal_keys(seq, bound) / seq;
}

double hs_mixer_kv_cache(const hs_model *m, double keys, double dt)
{
	if (m->kv_lora_rank) /* MLA caches the latent and the shared rotary key (DeepSeek-V2, section 2.1.2) */
		return keys * (m->kv_lora_rank + m->rope_head_dim) * dt;
	return keys * 2.0 * m->kv_heads * m->head_dim * dt;
}

static void full_ops(struct walk *w) { hs_opw_attention(w); }
static double full_state(const hs_model *m, double seq, double dt) { return hs_mixer_kv_cache(m, seq, dt); }
static double full_core(const hs_model *m, double seq) { return hs_mixer_attention_core(m, seq, 0); }

static void sliding_ops(struct walk *w)
{
	w->kbound = w->m->window;
	hs_opw_attention(w);
}
static double sliding_state(const hs_model *m, double seq, double dt)
{
	return hs_mixer_kv_cache(m, seq < m->window ? seq : m->window, dt);
}
static double sliding_core(const hs_model *m, double seq) { return hs_mixer_attention_core(m, seq, m->window); }
static int sliding_check(const hs_model *m, hs_err *err)
{
	if (m->window < 1)
		return hs_err_set(err, HS_EINPUT, "window: missing with a sliding layer (expected the keys per query, "
						  "e.g. 4096)");
	return 0;
}

static const hs_mixer_def full_def = {.name = "full", .attention = 1, .ops = full_ops, .state = full_state,
				      .core = full_core};
static const hs_mixer_def sliding_def = {.name = "sliding", .attention = 1, .ops = sliding_ops,
					 .state = sliding_state, .core = sliding_core, .check = sliding_check};

static const hs_mixer_def *const defs[HS_MIX_COUNT] = {
	[HS_MIX_FULL] = &full_def,
	[HS_MIX_SLIDING] = &sliding_def,
	[HS_MIX_LINEAR] = &hs_mixer_def_linear,
	[HS_MIX_MAMBA2] = &hs_mixer_def_mamba2,
	[HS_MIX_DSA] = &hs_mixer_def_dsa,
};

static const hs_mixer_def *def(enum hs_mixer_kind k) { return (unsigned)k < HS_MIX_COUNT ? defs[k] : defs[0]; }

const char *hs_mixer_name(enum hs_mixer_kind k) { return def(k)->name; }

const char *const *hs_mixer_names(void)
{
	static const char *const names[HS_MIX_COUNT + 1] = {"full", "sliding", "linear", "mamba2", "dsa", NULL};
	return names;
}

enum hs_mixer_kind hs_model_layer_mixer(const hs_model *m, int layer)
{
	if (m->npattern <= 0 || layer < 0)
		return HS_MIX_FULL;
	return (enum hs_mixer_kind)m->pattern[layer % m->npattern];
}

int hs_mixer_is_attention(enum hs_mixer_kind k) { return def(k)->attention; }

/* ops.c's entry: the layer's mixer; the key bound is the mixer's business and is cleared after it */
void hs_mixer_ops(struct walk *w)
{
	def(hs_model_layer_mixer(w->m, w->layer))->ops(w);
	w->kbound = 0;
}

double hs_mixer_params_matrix(const hs_model *m, int layer, double tp)
{
	const hs_mixer_def *d = def(hs_model_layer_mixer(m, layer));
	return d->matrix ? d->matrix(m, tp > 0 ? tp : 1) : NAN;
}

double hs_mixer_params_other(const hs_model *m, int layer, double tp)
{
	const hs_mixer_def *d = def(hs_model_layer_mixer(m, layer));
	return d->other ? d->other(m, tp > 0 ? tp : 1) : d->matrix ? 0 : NAN;
}

double hs_mixer_activations_per_token(const hs_model *m, const hs_layer_cfg *c, int layer)
{
	const hs_mixer_def *d = def(hs_model_layer_mixer(m, layer));
	return d->acts ? d->acts(m, c) : 0;
}

double hs_mixer_state_bytes(const hs_model *m, int layer, double seq, double dt_bytes)
{
	return def(hs_model_layer_mixer(m, layer))->state(m, seq, dt_bytes);
}

double hs_mixer_core_flops_per_token(const hs_model *m, int layer, double seq)
{
	return seq > 0 ? def(hs_model_layer_mixer(m, layer))->core(m, seq) : 0;
}

int hs_mixer_check(const hs_model *m, hs_err *err)
{
	int seen[HS_MIX_COUNT] = {0};
	for (int i = 0; i < m->npattern; i++) {
		const hs_mixer_def *d = def(m->pattern[i]);
		if (!seen[m->pattern[i]]++ && d->check && d->check(m, err))
			return -1;
	}
	return 0;
}

int hs_mixer_check_parallel(const hs_model *m, int tp, int cp, hs_err *err)
{
	int seen[HS_MIX_COUNT] = {0};
	for (int i = 0; i < m->npattern; i++) {
		enum hs_mixer_kind k = (enum hs_mixer_kind)m->pattern[i];
		if (seen[k]++)
			continue;
		/* a window, DSA's selection and the recurrent state all cross the sequence split: the exchanges
		 * context parallelism would need for them are not modelled */
		if (cp > 1 && k != HS_MIX_FULL)
			return hs_err_set(err, HS_EINPUT,
					  "%s: cp (%d) > 1 with %s layers is not modelled (expected cp 1, or a pattern of "
					  "full attention only)",
					  m->name, cp, hs_mixer_name(k));
		if (def(k)->check_tp && def(k)->check_tp(m, tp, err))
			return -1;
	}
	return 0;
}
