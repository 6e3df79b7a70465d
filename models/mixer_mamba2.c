/* State-space layers: Mamba-2 (Dao and Gu 2024, "Transformers are SSMs: Generalized Models and Efficient
 * Algorithms Through Structured State Space Duality", arXiv 2405.21060), as mamba_ssm's Mamba2 module runs
 * it (mamba_ssm/modules/mamba2.py, ssd_combined.py; defaults d_state 128, expand 2, headdim 64, ngroups 1,
 * d_conv 4, chunk_size 256).
 *
 * Shapes: d_inner = expand x hidden, H = d_inner / P heads of P = head_dim, G groups sharing B and C of
 * N = d_state. Per layer:
 *   in_proj   hidden -> 2 d_inner + 2 G N + H (z, x, B, C, dt)        GEMM, column-parallel
 *   conv1d    depthwise causal, width `conv`, over x, B, C (d_inner + 2 G N channels), then SiLU
 *   the SSD scan over chunks of Q tokens
 *   y + D x, gated RMSNorm (weight d_inner) times SiLU(z), out_proj d_inner -> hidden (row-parallel)
 * Tensor parallelism splits the heads (H divisible by tp) and the groups (G / tp, or all G on every rank
 * when tp > G, as B and C are then replicated; Megatron's MambaMixer requires ngroups % tp == 0).
 *
 * The SSD algorithm (arXiv 2405.21060, section 6, Listing 1: the chunked "block decomposition"), per chunk of
 * Q tokens:
 *   intra-chunk  C B^T per group                 2 Q^2 N        (L o C B^T) X per head     2 Q^2 P
 *   chunk states B^T X per head (decayed)         2 Q N P
 *   state passing across chunks (a scan)          N P per chunk and head
 *   outputs from states C h per head              2 Q N P
 * so per token: H (2 Q P + 4 N P) + 2 Q N G FLOPs forward (section 6: O(T N^2) with P, Q ~ N), each product
 * one batched GEMM timed by the profile's GEMM curve at its shape, backward twice forward. The state one
 * sequence keeps is H P N fp32 plus the convolution's last conv - 1 inputs. */
#include "models/mixer_impl.h"

struct ssd {
	double din, H, P, N, G, conv, Q;
};

static struct ssd dims(const hs_model *m, double t)
{
	struct ssd d = {.din = (double)m->ssm_expand * m->hidden / t, .P = m->ssm_head_dim, .N = m->ssm_state,
			.conv = m->ssm_conv, .Q = m->ssm_chunk};
	d.H = d.din / d.P;
	d.G = m->ssm_groups >= t ? m->ssm_groups / t : m->ssm_groups;
	return d;
}

static void ops(struct walk *w)
{
	struct ssd d = dims(w->m, w->t);
	double tok = w->tok, h = w->h, a = w->adt, cd = d.din + 2 * d.G * d.N, nc = tok / d.Q;
	hs_opw_gemm(w, G("ssm_in"), tok, 2 * d.din + 2 * d.G * d.N + d.H, h, 1, 0, GK_TE, 0);
	hs_opw_mem(w, M("ssm_conv"), HS_MF_ACT, 2 * tok * cd * a, 3 * tok * cd * a, (2 * d.conv + 4) * tok * cd, 0);
	/* dt = softplus(dt + dt_bias), dA = dt A and its cumulative sum in each chunk: fp32 per head */
	hs_opw_mem(w, M("ssm_dt"), HS_MF_ACT, tok * d.H * (a + 12), tok * d.H * (a + 20), 10 * tok * d.H, 0);
	hs_opw_gemm(w, G("ssd_cb"), d.Q, d.Q, d.N, d.G * nc, 0, GK_ACTS, 0);
	hs_opw_gemm(w, G("ssd_intra"), d.Q, d.P, d.Q, d.H * nc, 0, GK_ACTS, 0);
	hs_opw_gemm(w, G("ssd_states"), d.N, d.P, d.Q, d.H * nc, 0, GK_ACTS, 0);
	/* the scan of the chunk states: read and write H N P fp32 per chunk */
	hs_opw_mem(w, M("ssd_state_pass"), HS_MF_COPY, 8 * nc * d.H * d.N * d.P, 16 * nc * d.H * d.N * d.P,
		   2 * nc * d.H * d.N * d.P, 0);
	hs_opw_gemm(w, G("ssd_out"), d.Q, d.P, d.N, d.H * nc, 0, GK_ACTS, 0);
	hs_opw_norm(w, NM("ssm_norm"), tok * d.din);
	hs_opw_mem(w, M("ssm_gate_z"), HS_MF_ACT, 4 * tok * d.din * a, 6 * tok * d.din * a, 8 * tok * d.din, 0);
	hs_opw_gemm(w, G("ssm_out"), tok, h, d.din, 1, 0, GK_TE, 0);
}

static double matrix(const hs_model *m, double t)
{
	struct ssd d = dims(m, t);
	return m->hidden * (2 * d.din + 2 * d.G * d.N + d.H) + d.din * m->hidden;
}

/* the convolution's taps and bias, A_log, D and dt_bias per head, the gated norm's weight */
static double other(const hs_model *m, double t)
{
	struct ssd d = dims(m, t);
	return (d.din + 2 * d.G * d.N) * (d.conv + 1) + 3 * d.H + d.din;
}

/* Stored for backward per token: the convolution's input and output (x, B, C), z, dt and the chunk's
 * cumulative decay (fp32), the norm's input and the out_proj input; the chunk states (H N P fp32 per chunk,
 * ssd_combined's saved states) per token. The layer's input is counted by models/memory.c. */
static double acts(const hs_model *m, const hs_layer_cfg *c)
{
	struct ssd d = dims(m, c->tp > 0 ? c->tp : 1);
	double B = hs_dtype_bytes(c->dtype), F = c->fp8_gemms ? 1 : B, cd = d.din + 2 * d.G * d.N;
	return B * (2 * cd + d.din + d.H) + 8 * d.H + B * d.din + F * d.din + 4 * d.H * d.N * d.P / d.Q;
}

static double state(const hs_model *m, double seq, double dt)
{
	(void)seq;
	struct ssd d = dims(m, 1);
	return 4.0 * d.H * d.P * d.N + (d.conv - 1) * (d.din + 2 * d.G * d.N) * dt;
}

static double core(const hs_model *m, double seq)
{
	(void)seq;
	struct ssd d = dims(m, 1);
	return d.H * (2 * d.Q * d.P + 4 * d.N * d.P) + 2 * d.Q * d.N * d.G + 2 * d.conv * (d.din + 2 * d.G * d.N);
}

static int check(const hs_model *m, hs_err *err)
{
	if ((long)m->ssm_expand * m->hidden % m->ssm_head_dim)
		return hs_err_set(err, HS_EINPUT, "mamba.head_dim: %d does not divide expand x hidden (%d x %d)",
				  m->ssm_head_dim, m->ssm_expand, m->hidden);
	if ((long)m->ssm_expand * m->hidden / m->ssm_head_dim % m->ssm_groups)
		return hs_err_set(err, HS_EINPUT, "mamba.groups: %d does not divide the heads (%ld)", m->ssm_groups,
				  (long)m->ssm_expand * m->hidden / m->ssm_head_dim);
	return 0;
}

static int check_tp(const hs_model *m, int tp, hs_err *err)
{
	long heads = (long)m->ssm_expand * m->hidden / m->ssm_head_dim;
	if (heads % tp)
		return hs_err_set(err, HS_EINPUT, "%s: mamba heads (%ld = expand x hidden / head_dim) not divisible by "
						  "tp (%d)", m->name, heads, tp);
	if (m->ssm_groups >= tp && m->ssm_groups % tp)
		return hs_err_set(err, HS_EINPUT, "%s: mamba.groups (%d) not divisible by tp (%d)", m->name,
				  m->ssm_groups, tp);
	return 0;
}

const hs_mixer_def hs_mixer_def_mamba2 = {.name = "mamba2", .ops = ops, .matrix = matrix, .other = other,
					  .acts = acts, .state = state, .core = core, .check = check,
					  .check_tp = check_tp};
