/* DeepSeek Sparse Attention (DeepSeek-AI 2025, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with
 * DeepSeek Sparse Attention", section 2.1, and the released inference code's Indexer; config: index_n_heads
 * 64, index_head_dim 128, index_topk 2048): a lightning indexer scores every preceding token for each query,
 *   I(t, s) = sum_j w(t, j) ReLU(q_I(t, j) . k_I(s))        (H_I index heads of d_I, eq. 1)
 * and the layer's attention (MLA in DeepSeek-V3.2; whatever attention the model has here) runs over the
 * top-k tokens only. Indexer weights: q_I from the query latent (q_lora_rank; hidden without one) to
 * H_I d_I, k_I from hidden to d_I with a LayerNorm, the head weights w from hidden to H_I; replicated on every
 * tensor-parallel rank (each rank selects for its own heads' attention).
 *
 * Per causal sequence of s tokens the indexer's scores are H_I d_I s^2 FLOPs (2 d_I per (query, key, index
 * head), s^2 / 2 pairs): one batched GEMM of s queries against the s / 2 keys a causal query sees on
 * average, the ReLU and head-weighted sum in its epilogue; the top-k then reads the fp32 scores once. The
 * attention core runs over min(t, k) keys per query (hs_mixer_causal_keys with bound k: the sliding window's
 * count). Backward: the indexer is trained by its own KL loss towards the attention's distribution
 * (section 2.1.1), which this counts as the usual backward of its GEMMs; the selection has no gradient.
 * Cache per sequence: the attention's (MLA latent) plus the indexer's keys (d_I per token). */
#include "models/mixer_impl.h"

static double q_in(const hs_model *m) { return m->q_lora_rank ? m->q_lora_rank : m->hidden; }

static void ops(struct walk *w)
{
	const hs_model *m = w->m;
	double tok = w->tok, h = w->h, HI = m->dsa_heads, dI = m->dsa_dim;
	double b = w->c->micro_batch > 0 ? w->c->micro_batch : 1, s = tok / b; /* cp is 1 with dsa */
	hs_opw_gemm(w, G("dsa_idx_q"), tok, HI * dI, q_in(m), 1, 0, GK_PLAIN, 0);
	hs_opw_gemm(w, G("dsa_idx_k"), tok, dI, h, 1, 0, GK_PLAIN, 0);
	hs_opw_norm(w, NM("dsa_idx_k_norm"), tok * dI);
	hs_opw_gemm(w, G("dsa_idx_w"), tok, HI, h, 1, 0, GK_PLAIN, 0);
	hs_opw_gemm(w, G("dsa_idx_score"), s, s / 2, dI, b * HI, 0, GK_ACTS, 0);
	/* top-k over each query's fp32 scores (read once; the indices written) */
	hs_opw_mem(w, M("dsa_topk"), HS_MF_SOFTMAX, 4 * b * s * s / 2 + 4 * tok * m->dsa_topk,
		   8 * b * s * s / 2, 2 * HI * b * s * s / 2, 0);
	w->kbound = m->dsa_topk;
	hs_opw_attention(w);
}

static double matrix(const hs_model *m, double t)
{
	(void)t;
	return q_in(m) * (double)m->dsa_heads * m->dsa_dim + (double)m->hidden * (m->dsa_dim + m->dsa_heads);
}

static double other(const hs_model *m, double t)
{
	(void)t;
	return (m->rmsnorm ? 1 : 2) * (double)m->dsa_dim;
}

/* the indexer's q, k and head weights for its backward, and the selected indices (int32) */
static double acts(const hs_model *m, const hs_layer_cfg *c)
{
	double B = hs_dtype_bytes(c->dtype);
	return B * ((double)m->dsa_heads * m->dsa_dim + m->dsa_dim + m->dsa_heads) + 4.0 * m->dsa_topk;
}

static double state(const hs_model *m, double seq, double dt)
{
	return hs_mixer_kv_cache(m, seq, dt) + seq * m->dsa_dim * dt;
}

static double core(const hs_model *m, double seq)
{
	return hs_mixer_attention_core(m, seq, m->dsa_topk) +
	       2.0 * m->dsa_heads * m->dsa_dim * hs_mixer_causal_keys(seq, 0) / seq;
}

static int check(const hs_model *m, hs_err *err)
{
	if (m->dsa_topk < 1 || m->dsa_heads < 1 || m->dsa_dim < 1)
		return hs_err_set(err, HS_EINPUT, "dsa: top_k, index_heads and index_head_dim must be positive");
	return 0;
}

const hs_mixer_def hs_mixer_def_dsa = {.name = "dsa", .attention = 1, .ops = ops, .matrix = matrix,
				       .other = other, .acts = acts, .state = state, .core = core, .check = check};
