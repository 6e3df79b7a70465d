/* Linear attention: Gated DeltaNet (Yang, Kautz, Hatamizadeh 2024, "Gated Delta Networks: Improving Mamba2
 * with Delta Rule", arXiv 2412.06464), as Qwen3-Next's Qwen3NextGatedDeltaNet runs it (transformers
 * models/qwen3_next, on flash-linear-attention's chunk_gated_delta_rule).
 *
 * Shapes: Hk key heads of d_k, Hv value heads of d_v (Hv a multiple of Hk; queries and keys are shared by
 * Hv / Hk value heads), K = Hk d_k, V = Hv d_v. Per layer:
 *   in_proj_qkvz  hidden -> 2K + 2V (q, k, v, and the output gate z)      GEMM, column-parallel
 *   in_proj_ba    hidden -> 2 Hv (beta, the delta rule's step; a, the decay)  GEMM, column-parallel
 *   conv1d        depthwise causal, width `conv`, over q, k, v (2K + V channels), then SiLU
 *   the chunked gated delta rule over chunks of C tokens (fla's BT = 64)
 *   gated RMSNorm over each value head (weight d_v) times SiLU(z), then out_proj V -> hidden (row-parallel)
 * Tensor parallelism splits the heads (Hk and Hv divisible by tp), like Megatron's attention.
 *
 * The chunked form (Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule over Sequence
 * Length", arXiv 2406.06484, section 3.2, the WY representation; the gate only scales rows and columns,
 * arXiv 2412.06464 section 3.3). Per value head and chunk of C tokens, with state S (d_k x d_v):
 *   A = tril(diag(beta) K K^T)            2 C^2 d_k      and Q K^T (intra-chunk scores)  2 C^2 d_k
 *   T = (I + A)^-1 (forward substitution) C^3 / 3
 *   W = T diag(beta) K                    2 C^2 d_k      U = T diag(beta) V              2 C^2 d_v
 *   U' = U - W S                          2 C d_k d_v    O = Q S + (Q K^T o M) U'        2 C d_k d_v + 2 C^2 d_v
 *   S <- decay S + K^T U'                 2 C d_k d_v
 * so per token and value head: 6 d_k d_v + C (6 d_k + 4 d_v) + C^2 / 3 FLOPs forward. The kernels compute
 * the masked halves of the C x C blocks too, so they are counted. Each product is one batched GEMM here,
 * timed by the profile's GEMM curve at its shape (fla fuses them: this charges their operands' traffic
 * once per product, an upper bound); backward is twice forward, the input-gradient rule of every
 * activation-activation product in hetsim. The recurrent state one sequence keeps is Hv d_k d_v fp32 plus
 * the convolution's last conv - 1 inputs. */
#include <math.h>

#include "models/mixer_impl.h"

struct gdn {
	double hk, hv, dk, dv, K, V, conv, C;
};

static struct gdn dims(const hs_model *m, double t)
{
	struct gdn g = {.hk = m->lin_k_heads / t, .hv = m->lin_v_heads / t, .dk = m->lin_k_dim,
			.dv = m->lin_v_dim, .conv = m->lin_conv, .C = m->lin_chunk};
	g.K = g.hk * g.dk;
	g.V = g.hv * g.dv;
	return g;
}

static void ops(struct walk *w)
{
	struct gdn g = dims(w->m, w->t);
	double tok = w->tok, h = w->h, a = w->adt, cd = 2 * g.K + g.V, nc = tok / g.C;
	hs_opw_gemm(w, G("gdn_in_qkvz"), tok, 2 * g.K + 2 * g.V, h, 1, 0, GK_TE, 0);
	hs_opw_gemm(w, G("gdn_in_ba"), tok, 2 * g.hv, h, 1, 0, GK_TE, 0);
	/* causal depthwise convolution with SiLU fused (causal_conv1d): reads the channels and the taps,
	 * writes the channels; backward reads the gradient and the input, writes both gradients */
	hs_opw_mem(w, M("gdn_conv"), HS_MF_ACT, 2 * tok * cd * a, 3 * tok * cd * a, (2 * g.conv + 4) * tok * cd, 0);
	/* beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias): per token and value head, fp32 out */
	hs_opw_mem(w, M("gdn_gates"), HS_MF_ACT, tok * g.hv * (2 * a + 8), tok * g.hv * (2 * a + 16), 12 * tok * g.hv, 0);
	/* the chunked delta rule, one batched GEMM per product (see the header) */
	hs_opw_gemm(w, G("gdn_qk_kk"), g.C, g.C, g.dk, 2 * g.hv * nc, 0, GK_ACTS, 0);
	hs_opw_mem(w, M("gdn_wy_inverse"), HS_MF_COPY, 8 * tok * g.hv * g.C, 12 * tok * g.hv * g.C,
		   tok * g.hv * g.C * g.C / 3, 0);
	hs_opw_gemm(w, G("gdn_wy_w"), g.C, g.dk, g.C, g.hv * nc, 0, GK_ACTS, 0);
	hs_opw_gemm(w, G("gdn_wy_u_out"), g.C, g.dv, g.C, 2 * g.hv * nc, 0, GK_ACTS, 0);
	hs_opw_gemm(w, G("gdn_state"), g.C, g.dv, g.dk, 3 * g.hv * nc, 0, GK_ACTS, 0);
	/* gated RMSNorm per value head, times SiLU(z) */
	hs_opw_norm(w, NM("gdn_norm"), tok * g.V);
	hs_opw_mem(w, M("gdn_gate_z"), HS_MF_ACT, 3 * tok * g.V * a, 5 * tok * g.V * a, 6 * tok * g.V, 0);
	hs_opw_gemm(w, G("gdn_out"), tok, h, g.V, 1, 0, GK_TE, 0);
}

static double matrix(const hs_model *m, double t)
{
	struct gdn g = dims(m, t);
	return m->hidden * (2 * g.K + 2 * g.V + 2 * g.hv) + g.V * m->hidden;
}

/* the convolution's taps, A_log and dt_bias per value head, the gated norm's weight (shared by the heads) */
static double other(const hs_model *m, double t)
{
	struct gdn g = dims(m, t);
	return (2 * g.K + g.V) * g.conv + 2 * g.hv + g.dv;
}

/* Stored for backward per token: the convolution's input and output (q, k, v), z, a and b, the fp32 gates,
 * fla's saved A (C per value head, fp32), the norm's input, and the out_proj input (fp8 under TE's fp8). The
 * layer's input is counted with the norms by models/memory.c. */
static double acts(const hs_model *m, const hs_layer_cfg *c)
{
	struct gdn g = dims(m, c->tp > 0 ? c->tp : 1);
	double B = hs_dtype_bytes(c->dtype), F = c->fp8_gemms ? 1 : B;
	return B * (2 * (2 * g.K + g.V) + g.V + 2 * g.hv) + 8 * g.hv + 4 * g.C * g.hv + B * g.V + F * g.V;
}

static double state(const hs_model *m, double seq, double dt)
{
	(void)seq;
	struct gdn g = dims(m, 1);
	return 4.0 * g.hv * g.dk * g.dv + (g.conv - 1) * (2 * g.K + g.V) * dt;
}

static double core(const hs_model *m, double seq)
{
	(void)seq;
	struct gdn g = dims(m, 1);
	return g.hv * (6 * g.dk * g.dv + g.C * (6 * g.dk + 4 * g.dv) + g.C * g.C / 3) + 2 * g.conv * (2 * g.K + g.V);
}

static int check(const hs_model *m, hs_err *err)
{
	if (m->lin_k_heads < 1 || m->lin_v_heads < 1 || m->lin_k_dim < 1 || m->lin_v_dim < 1)
		return hs_err_set(err, HS_EINPUT, "linear_attention: k_heads, v_heads, k_head_dim and v_head_dim are "
						  "needed with a linear layer (expected positive sizes)");
	if (m->lin_v_heads % m->lin_k_heads)
		return hs_err_set(err, HS_EINPUT, "linear_attention.v_heads: %d is not a multiple of k_heads (%d)",
				  m->lin_v_heads, m->lin_k_heads);
	return 0;
}

static int check_tp(const hs_model *m, int tp, hs_err *err)
{
	if (m->lin_k_heads % tp || m->lin_v_heads % tp)
		return hs_err_set(err, HS_EINPUT,
				  "%s: linear_attention heads (k %d, v %d) not divisible by tp (%d)", m->name,
				  m->lin_k_heads, m->lin_v_heads, tp);
	return 0;
}

const hs_mixer_def hs_mixer_def_linear = {.name = "linear", .ops = ops, .matrix = matrix, .other = other,
					  .acts = acts, .state = state, .core = core, .check = check,
					  .check_tp = check_tp};
