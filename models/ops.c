/* hs_ops: a transformer layer, the embedding, the head and the optimizer as lists of kernels.
 *
 * One walk over the layer in forward order describes every kernel once; each step knows its forward form,
 * its input-gradient form and its weight-gradient form. The phase picks which form is appended, and the
 * backward phases append the walk reversed. Conventions (docs/models.md):
 *   - GEMM forward: m = tokens on the rank (micro_batch x seq_len / cp), n = output features (split by tp
 *     for column-parallel layers), k = input features (split by tp for row-parallel layers).
 *     dgrad: (m, k, n); wgrad: (k, n, m) with the reduction over tokens. Each has the forward's FLOPs.
 *   - Attention: flash attention, causal; backward = 2x forward FLOPs (the kernel's recomputation of the
 *     scores is its own business and belongs to its time model).
 *   - TP: Megatron column (QKV, FC1) then row (proj, FC2) splits. Without sequence parallelism: all-reduce
 *     after each row-parallel GEMM (forward) and after each column-parallel dgrad (backward). With it: the
 *     all-reduce becomes reduce-scatter after the row-parallel GEMM and all-gather before the column-parallel
 *     one, norms / dropout / residual adds work on tokens / tp, and backward re-gathers the layer input for
 *     the weight gradient (Korthikanti et al. 2022, section 4.2.2).
 *   - KV heads: per rank kv_heads / tp, or 1 replicated head when tp > kv_heads (vLLM and TensorRT-LLM do
 *     this; Megatron-core requires kv_heads % tp == 0 instead). MLA down-projections and the MoE router are
 *     replicated on every TP rank.
 *   - CP: each rank holds seq/cp queries (two chunks, load-balanced for the causal mask) and gathers K and V
 *     of the whole sequence (all-gather in forward, reduce-scatter of dK, dV in backward), as Llama 3's
 *     context parallelism does; its attention does 1/cp of the causal work.
 *   - EP: routed experts are split over ep ranks (and each expert over tp); with uniform routing each rank
 *     runs micro_batch x seq x top_k token-expert pairs over experts / ep local experts.
 *   - The recipe (models/recipe.h) sets the memory-bound ops around the GEMMs. Megatron: bf16 residual
 *     stream and norms, bias+dropout+add and bias+activation fused, weight gradients accumulated by the GEMM
 *     into fp32 main grads, bias gradients in the GEMM epilogue, one fused cross-entropy kernel each way.
 *     PyTorch autocast (eager): the residual stream and norms in the parameters' fp32, a cast to bf16 before
 *     every GEMM input, each weight (and bias) cast to bf16 per micro-batch, every elementwise op its own
 *     kernel (SwiGLU's silu, multiply, and the cat of their gradients), the attention output made
 *     contiguous and the q, k, v gradients stacked, weight gradients out of the GEMM in bf16 then cast to
 *     fp32, bias gradients as column sums, norm weight gradients as their own kernel, and the eager
 *     cross-entropy on fp32 logits. Bytes are read + written, per the tensors each kernel touches. */
#include "models/ops.h"

#include <stdlib.h>

#include "models/mixer.h"
#include "models/ops_walk.h"
#include "sim/base/alloc.h"

const char *hs_mem_family_name(enum hs_mem_family f)
{
	static const char *const n[HS_MF_COUNT] = {"copy", "add", "layernorm", "rmsnorm", "softmax", "gelu", "dropout"};
	return (unsigned)f < HS_MF_COUNT ? n[f] : "copy";
}

void hs_oplist_free(hs_oplist *l)
{
	free(l->ops);
	l->ops = NULL;
	l->n = l->cap = 0;
}

void hs_oplist_clear(hs_oplist *l) { l->n = 0; }

static void push(hs_oplist *l, const hs_op *op)
{
	/* a layer's list in a phase is 5 to 26 ops: room for 32 at once (growing from 8 was 1.4% of a sweep
	 * point, bench_sweep) */
	hs_xgrow(&l->ops, &l->cap, l->n + 1 > 32 ? l->n + 1 : 32, sizeof *l->ops);
	l->ops[l->n++] = *op;
}

/* Whether forward-form ops of a step run in this phase (FWD, or RECOMPUTE when the mode re-runs them). */
static int runs_fwd(const struct walk *w, int core)
{
	if (w->ph == HS_PH_FWD)
		return 1;
	if (w->ph != HS_PH_RECOMPUTE)
		return 0;
	return w->c->recompute == HS_RC_FULL || (w->c->recompute == HS_RC_SELECTIVE && core);
}

static hs_op base(const struct walk *w, enum hs_op_kind k, const char *name, enum hs_dtype dt)
{
	hs_op o = {0};
	o.kind = k;
	o.name = name;
	o.dtype = dt;
	o.count = 1;
	o.recompute = w->ph == HS_PH_RECOMPUTE;
	return o;
}

static void gemm_op(struct walk *w, const char *name, enum hs_dtype dt, double m, double n, double k, double count,
		    double cbytes)
{
	hs_op o = base(w, HS_OP_GEMM, name, dt);
	o.m = m;
	o.n = n;
	o.k = k;
	o.count = count;
	o.flops = 2 * m * n * k * count;
	o.bytes = count * ((m * k + k * n) * hs_dtype_bytes(dt) + m * n * cbytes);
	push(&w->tmp, &o);
}

/* A memory-bound kernel of the current phase. */
static void mop(struct walk *w, const char *name, enum hs_mem_family fam, double bytes, double flops)
{
	hs_op o = base(w, HS_OP_MEM, name, w->act);
	o.family = fam;
	o.bytes = bytes;
	o.flops = flops;
	push(&w->tmp, &o);
}

/* Transformer Engine's cast of one tensor of n elements (in `from`-byte elements) to fp8, as its kernels
 * move it (TE transformer_engine/common/transpose/cast_transpose.cu, 1.x linear.py / 2.x quantizers): the
 * fused cast_transpose reads the tensor once and writes it twice in fp8 (one byte each, Micikevicius et al.
 * 2022, "FP8 Formats for Deep Learning"): row-wise for this GEMM and transposed for the other GEMM that
 * reads it, as Hopper's fp8 GEMMs take only the TN layout. Current scaling (Float8CurrentScaling) first
 * reads the tensor once more to find its amax (nvte_compute_amax); delayed scaling takes the scale from the
 * history and records the amax inside the cast. */
static void fp8_cast(struct walk *w, const char *cast, const char *amax, double n, double from)
{
	if (w->c->fp8_recipe == HS_FP8_CURRENT)
		mop(w, amax, HS_MF_COPY, n * from, 0);
	mop(w, cast, HS_MF_COPY, n * (from + 2), 0);
}

/* A GEMM step: names as G(). `bias`: the layer's bias has n x count elements (0: none). With the recipe's
 * weight cast, the k x n x count weights are cast before the forward GEMM; the weight gradient comes out of
 * the GEMM in the activation format and is cast to the gradient's; otherwise (Megatron's gradient
 * accumulation fusion) the GEMM accumulates straight into the fp32 main gradient. Bias gradients: the GEMM
 * epilogue's with fused kernels, a column sum over the tokens (and its cast) in eager mode.
 * A TE layer under fp8: forward casts the m x k input (cast_transpose: the transposed copy is what backward
 * keeps for wgrad) and, unless the recipe caches them for the step (hs_ops_fp8_weight_cast), the weights
 * (with their transpose, for dgrad); the GEMM's output is in the activation format. Backward casts the m x n
 * output gradient (cast_transpose again: row-wise for dgrad, transposed for wgrad; the bias gradient is
 * fused into that cast, TE's cast_transpose_dbias) before dgrad, and both backward GEMMs read fp8. The
 * autocast weight cache does not apply: TE casts the parameters to fp8 itself. */
static void gemm(struct walk *w, const char *const names[14], double m, double n, double k, double count, int core,
		 enum gemm_kind kind, double bias)
{
	int weightless = kind == GK_ACTS, fp8 = kind == GK_TE && w->c->fp8_gemms;
	int gout = w->r->weight_cast && !weightless; /* wgrad out of the GEMM in the activation format */
	int cast = gout && !fp8;
	enum hs_dtype dt = fp8 ? HS_FP8 : w->act;
	double wts = k * n * count;
	if (runs_fwd(w, core)) {
		if (fp8) {
			fp8_cast(w, names[8], names[11], m * k * count, w->adt);
			if (!w->r->fp8_weight_cache)
				fp8_cast(w, names[9], names[12], wts, w->pdt);
		}
		if (cast)
			mop(w, names[3], HS_MF_COPY, wts * (w->pdt + w->adt), 0);
		if (gout && bias > 0) /* TE casts the bias to the activation format too */
			mop(w, names[4], HS_MF_COPY, bias * (w->pdt + w->adt), 0);
		gemm_op(w, names[0], dt, m, n, k, count, w->adt);
	} else if (w->ph == HS_PH_BWD_INPUT) {
		/* appended in forward order, run reversed: [amax], cast, dgrad */
		if (weightless)
			gemm_op(w, names[2], dt, k, n, m, count, w->adt);
		gemm_op(w, names[1], dt, m, k, n, count, w->adt);
		if (fp8) { /* fp8_cast's two kernels, appended reversed */
			mop(w, names[10], HS_MF_COPY, m * n * count * (w->adt + 2), 0);
			if (w->c->fp8_recipe == HS_FP8_CURRENT)
				mop(w, names[13], HS_MF_COPY, m * n * count * w->adt, 0);
		}
	} else if (w->ph == HS_PH_BWD_WEIGHT && !weightless) {
		/* appended last first: backward lists run reversed */
		if (bias > 0 && w->eager) {
			if (gout)
				mop(w, names[7], HS_MF_COPY, bias * (w->adt + w->gdt), 0);
			if (!fp8)
				mop(w, names[6], HS_MF_COPY, m * count * n * w->adt + bias * w->adt, m * count * n);
		}
		if (gout) {
			mop(w, names[5], HS_MF_COPY, wts * (w->adt + w->gdt), 0);
			gemm_op(w, names[2], dt, k, n, m, count, w->adt);
		} else {
			gemm_op(w, names[2], dt, k, n, m, count, w->gdt);
		}
	}
}

/* Flash attention over b x h heads, s queries against s_kv keys; hkv and dv for the bytes of K and V. */
static void attn(struct walk *w, double b, double h, double s, double skv, double d, double hkv, double dv)
{
	int fwd = runs_fwd(w, 1), bwd = w->ph == HS_PH_BWD_INPUT;
	if (!fwd && !bwd)
		return;
	hs_op o = base(w, HS_OP_ATTN, bwd ? "attn_bwd" : "attn", w->act);
	o.b = b;
	o.h = h;
	o.s = s;
	o.s_kv = skv;
	o.d = d;
	o.causal = 1;
	o.bwd = bwd;
	/* a causal block of s local queries against s_kv keys does half the s x s_kv products (with cp, the
	 * load-balanced split gives every rank the same half) */
	o.flops = 4 * b * h * s * skv * d * 0.5 * (bwd ? 2 : 1);
	if (w->kbound > 0 && w->kbound < skv) {
		/* at most kbound keys per query (sliding window, DSA's top-k; cp is 1 here): a non-causal kernel
		 * over the mean keys per query, hs_mixer_causal_keys / s; every key is still read once */
		o.causal = 0;
		o.s_kv = hs_mixer_causal_keys(s, w->kbound) / s;
		o.flops = 4 * b * h * s * o.s_kv * d * (bwd ? 2 : 1);
	}
	double io = (2 * b * h * s * d + 2 * b * hkv * skv * dv) * w->adt; /* Q, O; K, V */
	o.bytes = bwd ? 2 * io : io;
	push(&w->tmp, &o);
}

/* A memory-bound step; `bwd_weight`: its backward is a weight gradient (embedding) instead of an input
 * gradient. */
static void mem(struct walk *w, const char *const names[2], enum hs_mem_family fam, double fbytes, double bbytes,
		double flops, int core, int bwd_weight)
{
	int fwd = runs_fwd(w, core);
	int bwd = w->ph == (bwd_weight ? HS_PH_BWD_WEIGHT : HS_PH_BWD_INPUT);
	if (!fwd && !bwd)
		return;
	mop(w, fwd ? names[0] : names[1], fam, fwd ? fbytes : bbytes, fwd ? flops : 2 * flops);
}

static void comm_op(struct walk *w, const char *name, enum hs_coll_op coll, enum hs_group g, double bytes)
{
	hs_op o = base(w, HS_OP_COMM, name, w->act);
	o.coll = coll;
	o.group = g;
	o.bytes = bytes;
	push(&w->tmp, &o);
}

/* Megatron's f: identity forward / all-reduce backward; with SP all-gather forward / reduce-scatter
 * backward, plus the re-gather of the input for the weight gradient. `bytes`: the full tokens x hidden. */
static void tp_f(struct walk *w, const char *const names[4], double bytes)
{
	if (w->t <= 1)
		return;
	int sp = w->c->sequence_parallel;
	if (runs_fwd(w, 0) && sp)
		comm_op(w, names[0], HS_COLL_ALL_GATHER, HS_GROUP_TP, bytes);
	if (w->ph == HS_PH_BWD_INPUT) {
		/* appended in forward order, run reversed: grad reduction first, then the re-gather */
		if (sp)
			comm_op(w, names[3], HS_COLL_ALL_GATHER, HS_GROUP_TP, bytes);
		comm_op(w, names[sp ? 2 : 1], sp ? HS_COLL_REDUCE_SCATTER : HS_COLL_ALL_REDUCE, HS_GROUP_TP, bytes);
	}
}
#define F(x) ((const char *const[4]){x "_ag", x "_ar_grad", x "_rs_grad", x "_ag_wgrad"})

/* Megatron's g: all-reduce forward / identity backward; with SP reduce-scatter forward / all-gather
 * backward. */
static void tp_g(struct walk *w, const char *const names[3], double bytes)
{
	if (w->t <= 1)
		return;
	int sp = w->c->sequence_parallel;
	if (runs_fwd(w, 0))
		comm_op(w, names[sp ? 1 : 0], sp ? HS_COLL_REDUCE_SCATTER : HS_COLL_ALL_REDUCE, HS_GROUP_TP, bytes);
	else if (w->ph == HS_PH_BWD_INPUT && sp)
		comm_op(w, names[2], HS_COLL_ALL_GATHER, HS_GROUP_TP, bytes);
}
#define GG(x) ((const char *const[3]){x "_ar", x "_rs", x "_ag_grad"})

/* A collective with a forward and a backward form (EP all-to-all, CP gathers). */
static void comm2(struct walk *w, const char *const names[2], enum hs_coll_op fc, enum hs_coll_op bc,
		  enum hs_group g, double bytes, int core)
{
	if (runs_fwd(w, core))
		comm_op(w, names[0], fc, g, bytes);
	else if (w->ph == HS_PH_BWD_INPUT)
		comm_op(w, names[1], bc, g, bytes);
}

static void walk_init(struct walk *w, const hs_model *m, const hs_layer_cfg *c, enum hs_phase ph)
{
	w->m = m;
	w->c = c;
	w->ph = ph;
	w->t = c->tp > 0 ? c->tp : 1;
	double cp = c->cp > 0 ? c->cp : 1, b = c->micro_batch > 0 ? c->micro_batch : 1;
	double seq = c->seq_len > 0 ? c->seq_len : m->seq_len;
	w->tok = b * seq / cp;
	w->tok_sp = c->sequence_parallel ? w->tok / w->t : w->tok;
	w->h = m->hidden;
	w->act = c->dtype;
	w->adt = hs_dtype_bytes(c->dtype);
	w->r = c->recipe ? c->recipe : hs_recipe_default();
	w->eager = !w->r->fused_elementwise;
	/* fp32 training keeps everything in fp32 whatever the recipe says of mixed precision */
	w->rdt = c->dtype == HS_FP32 ? 4 : hs_dtype_bytes(w->r->resid_dtype);
	w->pdt = c->dtype == HS_FP32 ? 4 : hs_dtype_bytes(w->r->param_dtype);
	w->gdt = c->grad_bytes > 0 ? c->grad_bytes : hs_dtype_bytes(w->r->grad_dtype);
	w->tmp = (hs_oplist){0};
	w->layer = -1;
	w->kbound = 0;
}

static void walk_finish(struct walk *w, hs_oplist *out)
{
	int rev = w->ph == HS_PH_BWD_INPUT || w->ph == HS_PH_BWD_WEIGHT;
	for (size_t i = 0; i < w->tmp.n; i++)
		push(out, &w->tmp.ops[rev ? w->tmp.n - 1 - i : i]);
	hs_oplist_free(&w->tmp);
}

/* A norm over n elements of the residual stream's format, its output feeding a GEMM. Forward reads the input
 * and writes the output; backward reads the output's gradient and the input and writes the input's gradient
 * (statistics are per token, negligible); eager PyTorch runs the weight (and bias) gradient as a second
 * kernel over the same two tensors. When the stream is wider than the GEMM format (autocast), the output is
 * cast down before the GEMM and its gradient cast back up. */
static void norm(struct walk *w, const char *const names[5], double n)
{
	enum hs_mem_family fam = w->m->rmsnorm ? HS_MF_RMSNORM : HS_MF_LAYERNORM;
	double fl = (w->m->rmsnorm ? 4 : 5) * n;
	int fwd = runs_fwd(w, 0), bwd = w->ph == HS_PH_BWD_INPUT;
	if (fwd) {
		mop(w, names[0], fam, 2 * n * w->rdt, fl);
	} else if (bwd) { /* appended last first: backward lists run reversed */
		if (w->eager)
			mop(w, names[2], fam, 2 * n * w->rdt, 2 * n);
		mop(w, names[1], fam, 3 * n * w->rdt, 2 * fl);
	}
	if (w->rdt != w->adt && (fwd || bwd))
		mop(w, names[fwd ? 3 : 4], HS_MF_COPY, n * (w->rdt + w->adt), 0);
}

/* Dropout on n activation elements as its own kernel (the input, the output, a byte mask). */
static void dropout(struct walk *w, const char *const names[2], double n, int core)
{
	if (w->m->dropout)
		mem(w, names, HS_MF_DROPOUT, n * (2 * w->adt + 1), n * (2 * w->adt + 1), 2 * n, core, 0);
}

/* The residual add's names: forward, backward (the accumulation of the stream's two gradients), the branch's
 * dropout as its own kernel and its backward, and the cast of the gradient to the branch's format. */
#define AD(x, d) ((const char *const[5]){x, x "_bwd", d, d "_bwd", x "_cast_bwd"})

/* The branch's output (n activation elements, from a GEMM) joins the residual stream: dropout, then the add.
 * Fused (Megatron's bias-dropout-add) forward is one kernel reading the branch and the stream and writing the
 * stream and the mask; eager runs dropout and the add apart, the add promoting the branch to the stream's
 * format. Backward: the dropout's gradient (mask applied) and the accumulation of the stream's gradient from
 * the branch and the skip path; a gradient wider than the branch is cast down for it. */
static void residual(struct walk *w, const char *const names[5], double n)
{
	double mask = w->m->dropout ? 1 : 0;
	if (runs_fwd(w, 0)) {
		if (!w->eager) {
			mop(w, names[0], HS_MF_ADD, n * (w->adt + 2 * w->rdt + mask), 2 * n);
			return;
		}
		dropout(w, names + 2, n, 0);
		mop(w, names[0], HS_MF_ADD, n * (w->adt + 2 * w->rdt), n);
	} else if (w->ph == HS_PH_BWD_INPUT) {
		dropout(w, names + 2, n, 0);
		if (w->rdt != w->adt)
			mop(w, names[4], HS_MF_COPY, n * (w->rdt + w->adt), 0);
		mop(w, names[1], HS_MF_ADD, 3 * n * w->rdt, n);
	}
}

/* The activation's names: the kernel (fused bias+activation, or the eager silu / gelu), its backward, and
 * the eager gated form's multiply, its two backward multiplies and the cat of the gate's and the up
 * projection's gradients. */
#define AC(x) ((const char *const[6]){x, x "_bwd", x "_mul", x "_mul_bwd", x "_mul_bwd2", x "_cat_bwd"})

/* Activation over n = tokens x f outputs. Fused (Megatron) or not gated: one kernel reading the input (2f for
 * a gated MLP) and writing f; backward reads the gradient and the input and writes the input's gradient.
 * Eager gated (SwiGLU as silu(gate) * up after a chunk): silu over f, a multiply reading 2f writing f;
 * backward two multiplies (the gradients of silu's output and of up), silu's backward, and the cat of the
 * gate's and up's gradients into the fused GEMM's output gradient. */
static void activation(struct walk *w, const char *const names[6], double n)
{
	double in = w->m->gated_mlp ? 2 : 1, a = w->adt;
	if (!w->m->gated_mlp || !w->eager) {
		mem(w, names, HS_MF_ACT, (in + 1) * n * a, (2 * in + 1) * n * a, 8 * n, 0, 0);
		return;
	}
	if (runs_fwd(w, 0)) {
		mop(w, names[0], HS_MF_ACT, 2 * n * a, 6 * n);
		mop(w, names[2], HS_MF_ADD, 3 * n * a, n);
	} else if (w->ph == HS_PH_BWD_INPUT) {
		mop(w, names[5], HS_MF_COPY, 4 * n * a, 0);
		mop(w, names[1], HS_MF_ACT, 3 * n * a, 12 * n);
		mop(w, names[3], HS_MF_ADD, 3 * n * a, n);
		mop(w, names[4], HS_MF_ADD, 3 * n * a, n);
	}
}

static void mlp(struct walk *w, const char *const fc1[14], const char *const act[6], const char *const fc2[14],
		double tok, double f, double count)
{
	double mult = w->m->gated_mlp ? 2 : 1, bias = w->m->bias ? 1 : 0;
	gemm(w, fc1, tok, mult * f / w->t, w->h, count, 0, GK_TE, bias * count * mult * f / w->t);
	activation(w, act, tok * count * f / w->t);
	gemm(w, fc2, tok, w->h, f / w->t, count, 0, GK_TE, bias * count * w->h);
}

/* Ring attention (Liu et al. 2023; Megatron's CP): the cp KV blocks circulate around the CP ring; each step
 * sends the current block to the next rank while attending to it (the transfer overlaps the block's kernel),
 * so a rank computes cp blocks of s local queries against s keys (the load-balanced causal split gives each
 * block half the products, the same total as one kernel against all keys) and exposes only what a transfer
 * takes beyond its block's attention. Backward circulates the KV blocks and their gradients (twice the
 * bytes). `block`: the K and V bytes of one block. In forward order: the local block, then (cp - 1) x
 * [send/recv, block]; backward lists are reversed, so each pair is appended as [block, send/recv]. */
static void ring_attention(struct walk *w, double b, double h, double s, double cp, double d, double hkv,
			   double block)
{
	int fwd = runs_fwd(w, 1), bwd = w->ph == HS_PH_BWD_INPUT;
	if (!fwd && !bwd)
		return;
	attn(w, b, h, s, s, d, hkv, d);
	for (int i = 1; i < (int)cp; i++) {
		hs_op o = base(w, HS_OP_COMM, fwd ? "cp_ring_kv" : "cp_ring_dkv", w->act);
		o.coll = HS_COLL_SENDRECV;
		o.group = HS_GROUP_CP;
		o.bytes = fwd ? block : 2 * block;
		o.overlap = 1;
		if (fwd)
			push(&w->tmp, &o);
		attn(w, b, h, s, s, d, hkv, d);
		if (!fwd)
			push(&w->tmp, &o);
	}
}

static void attention(struct walk *w)
{
	const hs_model *m = w->m;
	const hs_layer_cfg *c = w->c;
	double t = w->t, tok = w->tok, h = w->h, hd = m->head_dim;
	double qr = m->heads / t;
	double kvr, dv, rope;
	if (m->kv_lora_rank) {
		kvr = qr;
		dv = m->v_head_dim;
		rope = m->rope_head_dim;
		if (m->q_lora_rank) {
			gemm(w, G("q_down"), tok, m->q_lora_rank, h, 1, 0, GK_TE, 0);
			norm(w, NM("q_norm"), tok * m->q_lora_rank);
			gemm(w, G("q_up"), tok, qr * hd, m->q_lora_rank, 1, 0, GK_TE, 0);
		} else {
			gemm(w, G("q"), tok, qr * hd, h, 1, 0, GK_TE, 0);
		}
		gemm(w, G("kv_down"), tok, m->kv_lora_rank + rope, h, 1, 0, GK_TE, 0);
		norm(w, NM("kv_norm"), tok * m->kv_lora_rank);
		gemm(w, G("kv_up"), tok, qr * (hd - rope + dv), m->kv_lora_rank, 1, 0, GK_TE, 0);
		if (!m->learned_pos && !m->no_pos) /* rotary on the rope part: per query head, one shared key head */
			mem(w, M("rope"), HS_MF_ADD, 2 * tok * (qr + 1) * rope * w->adt,
			    2 * tok * (qr + 1) * rope * w->adt, 3 * tok * (qr + 1) * rope, 0, 0);
	} else {
		kvr = m->kv_heads >= t ? m->kv_heads / t : 1;
		dv = hd;
		gemm(w, G("qkv"), tok, (qr + 2 * kvr) * hd, h, 1, 0, GK_TE, m->bias ? (qr + 2 * kvr) * hd : 0);
		if (!m->learned_pos && !m->no_pos)
			mem(w, M("rope"), HS_MF_ADD, 2 * tok * (qr + kvr) * hd * w->adt,
			    2 * tok * (qr + kvr) * hd * w->adt, 3 * tok * (qr + kvr) * hd, 0, 0);
	}
	double cp = c->cp > 0 ? c->cp : 1, b = c->micro_batch > 0 ? c->micro_batch : 1;
	double s = tok / b, skv = s * cp;
	int ring = cp > 1 && c->cp_ring && c->flash_attention; /* ring attention needs a blockwise kernel */
	if (cp > 1 && !ring)
		comm2(w, (const char *const[2]){"cp_kv_ag", "cp_dkv_rs"}, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER,
		      HS_GROUP_CP, b * skv * kvr * (hd + dv) * w->adt, 1);
	/* eager: q, k, v are views of the QKV output, so their gradients are stacked back into one tensor
	 * (read and written once) before the QKV GEMM's backward */
	if (w->r->qkv_copy && w->ph == HS_PH_BWD_INPUT)
		mop(w, "qkv_stack_bwd", HS_MF_COPY, 2 * tok * (qr * hd + kvr * (hd + dv)) * w->adt, 0);
	if (ring) {
		ring_attention(w, b, qr, s, cp, (hd + dv) / 2, kvr, b * s * kvr * (hd + dv) * w->adt);
	} else if (c->flash_attention) {
		attn(w, b, qr, s, skv, (hd + dv) / 2, kvr, (hd + dv) / 2);
	} else {
		/* materialised scores: batched QK^T, softmax, dropout, PV over every (query, key) pair */
		double n = b * qr * s * skv;
		gemm(w, G("score"), s, skv, hd, b * qr, 1, GK_ACTS, 0);
		mem(w, M("softmax"), HS_MF_SOFTMAX, 2 * n * w->adt, 3 * n * w->adt, 5 * n, 1, 0);
		dropout(w, M("attn_drop"), n, 1);
		gemm(w, G("attn_v"), s, dv, skv, b * qr, 1, GK_ACTS, 0);
	}
	/* eager: the (batch, heads, tokens, head) output is transposed and made contiguous for the projection */
	if (w->r->qkv_copy && runs_fwd(w, 1))
		mop(w, "attn_out_copy", HS_MF_COPY, 2 * tok * qr * dv * w->adt, 0);
	gemm(w, G("proj"), tok, h, qr * dv, 1, 0, GK_TE, m->bias ? h : 0);
}

void hs_opw_gemm(struct walk *w, const char *const names[14], double m, double n, double k, double count,
		 int core, enum gemm_kind kind, double bias)
{
	gemm(w, names, m, n, k, count, core, kind, bias);
}

void hs_opw_mem(struct walk *w, const char *const names[2], enum hs_mem_family fam, double fbytes, double bbytes,
		double flops, int core)
{
	mem(w, names, fam, fbytes, bbytes, flops, core, 0);
}

void hs_opw_norm(struct walk *w, const char *const names[5], double n) { norm(w, names, n); }

void hs_opw_attention(struct walk *w) { attention(w); }

static void moe(struct walk *w)
{
	const hs_model *m = w->m;
	double ep = w->c->ep > 0 ? w->c->ep : 1, tok = w->tok, h = w->h, E = m->experts, k = m->top_k;
	/* With imbalance, every local expert is sized by the busiest expert (capacity-style dispatch pads each
	 * expert to the largest load; the rank holding the busiest expert is the critical one), and so are the
	 * all-to-alls that carry its tokens */
	double load = w->c->expert_load > 1 ? w->c->expert_load : 1;
	gemm(w, G("router"), tok, E, h, 1, 0, GK_PLAIN, 0);
	mem(w, M("router_topk"), HS_MF_SOFTMAX, 2 * tok * E * 4, 2 * tok * E * 4, 10 * tok * E, 0, 0);
	mem(w, M("permute"), HS_MF_COPY, (1 + k) * tok * h * w->adt, (1 + k) * tok * h * w->adt, 0, 0, 0);
	size_t routed = w->tmp.n;
	if (ep > 1)
		comm2(w, (const char *const[2]){"ep_dispatch", "ep_dispatch_bwd"}, HS_COLL_ALL_TO_ALL,
		      HS_COLL_ALL_TO_ALL, HS_GROUP_EP, tok * k * h * w->adt * load, 0);
	double per_expert = tok * k * ep / E * load;
	mlp(w, G("expert_fc1"), AC("expert_act"), G("expert_fc2"), per_expert, m->expert_ffn, E / ep);
	if (ep > 1)
		comm2(w, (const char *const[2]){"ep_combine", "ep_combine_bwd"}, HS_COLL_ALL_TO_ALL,
		      HS_COLL_ALL_TO_ALL, HS_GROUP_EP, tok * k * h * w->adt * load, 0);
	for (size_t i = routed; i < w->tmp.n; i++)
		w->tmp.ops[i].routed = 1;
	mem(w, M("unpermute"), HS_MF_ADD, (1 + k) * tok * h * w->adt, (1 + k) * tok * h * w->adt, 2 * k * tok * h,
	    0, 0);
	if (m->shared_experts)
		mlp(w, G("shared_fc1"), AC("shared_act"), G("shared_fc2"), tok,
		    (double)m->shared_experts * m->expert_ffn, 1);
}

void hs_ops_layer(const hs_model *m, const hs_layer_cfg *c, int layer, enum hs_phase phase, hs_oplist *out)
{
	struct walk w;
	walk_init(&w, m, c, phase);
	if (phase == HS_PH_RECOMPUTE && c->recompute == HS_RC_NONE)
		return;
	w.layer = layer;
	double full = w.tok * w.h * w.adt, spn = w.tok_sp * w.h;
	norm(&w, NM("ln1"), spn);
	tp_f(&w, F("tp_attn_in"), full);
	hs_mixer_ops(&w); /* attention, or the kind the layer pattern names (models/mixer.h) */
	tp_g(&w, GG("tp_attn_out"), full);
	residual(&w, AD("add1", "drop1"), spn);
	norm(&w, NM("ln2"), spn);
	tp_f(&w, F("tp_mlp_in"), full);
	if (hs_model_layer_is_moe(m, layer))
		moe(&w);
	else
		mlp(&w, G("fc1"), AC("act"), G("fc2"), w.tok, m->ffn, 1);
	tp_g(&w, GG("tp_mlp_out"), full);
	residual(&w, AD("add2", "drop2"), spn);
	walk_finish(&w, out);
}

void hs_ops_embedding(const hs_model *m, const hs_layer_cfg *c, enum hs_phase phase, hs_oplist *out)
{
	struct walk w;
	walk_init(&w, m, c, phase);
	if (phase == HS_PH_RECOMPUTE)
		return;
	double n = w.tok * w.h, spn = w.tok_sp * w.h, rows = (double)m->vocab / w.t * w.h;
	/* vocab-parallel lookup: each TP rank fills the rows of its vocabulary slice (in the parameters'
	 * format), then the ranks sum. Backward: the output gradient is added into the rows of the table's
	 * gradient (index add, read and written in the gradient's format); eager PyTorch first zero-fills a new
	 * gradient table, Megatron accumulates into its main-grad buffer (cleared by the optimizer step). */
	mem(&w, M("embed"), HS_MF_COPY, 2 * n * w.pdt, n * (w.rdt + 2 * w.gdt), 0, 0, 1);
	if (w.eager && w.ph == HS_PH_BWD_WEIGHT)
		mop(&w, "embed_zero_bwd", HS_MF_COPY, rows * w.gdt, 0);
	tp_g(&w, GG("tp_embed"), n * w.adt);
	/* learned positions: added to the stream; backward sums the gradient over the batch into the table */
	if (m->learned_pos)
		mem(&w, M("pos_embed"), HS_MF_ADD, 3 * spn * w.rdt, spn * (w.rdt + 2 * w.gdt), spn, 0, 1);
	dropout(&w, M("embed_drop"), spn, 0);
	walk_finish(&w, out);
}

void hs_ops_head(const hs_model *m, const hs_layer_cfg *c, enum hs_phase phase, hs_oplist *out)
{
	struct walk w;
	walk_init(&w, m, c, phase);
	if (phase == HS_PH_RECOMPUTE)
		return;
	double vr = m->vocab / w.t, logits = w.tok * vr;
	norm(&w, NM("ln_f"), w.tok_sp * w.h);
	tp_f(&w, F("tp_head_in"), w.tok * w.h * w.adt);
	gemm(&w, G("head"), w.tok, vr, w.h, 1, 0, GK_PLAIN, 0);
	/* a tied output layer in eager PyTorch: the embedding's and the head's gradients of the shared table
	 * are summed (AccumulateGrad); Megatron's GEMMs accumulate both into the one main-grad buffer */
	if (m->tied_embeddings && w.eager && w.ph == HS_PH_BWD_WEIGHT)
		mop(&w, "tied_grad_acc", HS_MF_ADD, 3 * vr * w.h * w.gdt, vr * w.h);
	if (w.r->ce == HS_CE_FUSED) {
		/* vocab-parallel cross entropy, fused: read the logits, keep exp in fp32 for backward; three small
		 * TP all-reduces (max, sum of exp, target logit) of one fp32 per token */
		mem(&w, M("ce"), HS_MF_SOFTMAX, logits * (w.adt + 8), logits * (4 + w.adt), 5 * logits, 0, 0);
	} else if (runs_fwd(&w, 0)) {
		/* F.cross_entropy(logits.float()): the cast, log_softmax (fp32 in and out, kept for backward),
		 * nll_loss's gather of one logit per token */
		mop(&w, "ce_cast", HS_MF_COPY, logits * (w.adt + 4), 0);
		mop(&w, "ce_log_softmax", HS_MF_SOFTMAX, logits * 8, 4 * logits);
		mop(&w, "ce_nll", HS_MF_COPY, w.tok * 8, w.tok);
	} else if (w.ph == HS_PH_BWD_INPUT) {
		/* reversed: the cast of the gradient back, log_softmax's backward (reads the gradient and the
		 * saved output, writes the input's gradient), nll_loss's backward (a zero-filled fp32 gradient and
		 * one scattered value per token) */
		mop(&w, "ce_cast_bwd", HS_MF_COPY, logits * (4 + w.adt), 0);
		mop(&w, "ce_log_softmax_bwd", HS_MF_SOFTMAX, logits * 12, 3 * logits);
		mop(&w, "ce_nll_bwd", HS_MF_COPY, logits * 4 + w.tok * 8, 0);
	}
	if (w.t > 1 && runs_fwd(&w, 0))
		comm_op(&w, "ce_ar", HS_COLL_ALL_REDUCE, HS_GROUP_TP, 3 * w.tok * 4);
	walk_finish(&w, out);
}

void hs_ops_optimizer(const hs_layer_cfg *c, double params, hs_oplist *out)
{
	const hs_recipe *r = c && c->recipe ? c->recipe : hs_recipe_default();
	double gb = c && c->grad_bytes > 0 ? c->grad_bytes : hs_dtype_bytes(r->grad_dtype);
	/* the gradient norm for clipping reads every gradient once; the update moves the recipe's bytes per
	 * parameter (about 12 FLOPs each); a persistent gradient buffer is cleared for the next step */
	if (r->grad_clip) {
		hs_op g = {.kind = HS_OP_MEM, .name = "grad_norm", .dtype = HS_FP32, .count = 1, .bytes = gb * params,
			   .flops = 2 * params};
		push(out, &g);
	}
	double ob = r->optimizer_bytes + (gb - hs_dtype_bytes(r->grad_dtype)); /* a wider or narrower gradient read */
	hs_op a = {.kind = HS_OP_OPTIMIZER, .name = "adam", .dtype = HS_FP32, .count = 1, .bytes = ob * params,
		   .flops = 12 * params};
	push(out, &a);
	if (r->zero_grad_bytes > 0) {
		hs_op z = {.kind = HS_OP_MEM, .name = "zero_grad", .dtype = HS_FP32, .count = 1,
			   .bytes = r->zero_grad_bytes / hs_dtype_bytes(r->grad_dtype) * gb * params};
		push(out, &z);
	}
}

unsigned hs_ops_groups(const hs_op *ops, size_t n)
{
	unsigned used = 0;
	for (size_t q = 0; q < n; q++)
		if (ops[q].kind == HS_OP_COMM && (unsigned)ops[q].group < HS_GROUP_COUNT)
			used |= 1u << ops[q].group;
	return used;
}

double hs_ops_fp8_gemms(const hs_oplist *fwd)
{
	double n = 0;
	for (size_t i = 0; i < fwd->n; i++)
		if (fwd->ops[i].kind == HS_OP_GEMM && fwd->ops[i].dtype == HS_FP8 && !fwd->ops[i].recompute)
			n += fwd->ops[i].count;
	return n;
}

/* TE keeps per GEMM three forward fp8 tensors' meta (input, weight, output: FP8FwdTensors) and two backward
 * (output gradient, input gradient: FP8BwdTensors), each an amax history of amax_history_len fp32 values, a
 * scale and its inverse (fp32). At the exit of each fp8_autocast region, and after the region's backward,
 * TE reduces the new amaxes and runs one multi-tensor kernel over them all (1.x
 * fused_amax_and_scale_update_after_reduction): it reads and writes every history (rolled by one) and every
 * scale and inverse scale. Megatron-core opens one region per transformer block with delayed scaling, so the
 * update runs once per pipeline chunk, per micro-batch and pass. The amax all-reduce over the amax reduction
 * group (a few bytes per tensor) is left out. */
void hs_ops_fp8_scale_update(const hs_layer_cfg *c, double gemms, enum hs_phase phase, hs_oplist *out)
{
	if (!c->fp8_gemms || c->fp8_recipe != HS_FP8_DELAYED || gemms <= 0 ||
	    (phase != HS_PH_FWD && phase != HS_PH_BWD_INPUT))
		return;
	const hs_recipe *r = c->recipe ? c->recipe : hs_recipe_default();
	double slots = gemms * (phase == HS_PH_FWD ? 3 : 2);
	hs_op o = {.kind = HS_OP_MEM, .name = phase == HS_PH_FWD ? "fp8_scale_update" : "fp8_scale_update_bwd",
		   .dtype = HS_FP32, .family = HS_MF_COPY, .count = 1,
		   .bytes = slots * 2 * (4.0 * r->fp8_amax_history + 8)};
	push(out, &o);
}

/* The weights' cast_transpose (read in the parameters' format, fp8 copy and fp8 transpose written, as
 * fp8_cast above), after the optimizer has updated them: the same work TE does on the step's first
 * micro-batch. Current scaling reads the weights once more for their amax. */
void hs_ops_fp8_weight_cast(const hs_layer_cfg *c, double weights, hs_oplist *out)
{
	const hs_recipe *r = c->recipe ? c->recipe : hs_recipe_default();
	if (!c->fp8_gemms || !r->fp8_weight_cache || weights <= 0)
		return;
	double pb = c->dtype == HS_FP32 ? 4 : hs_dtype_bytes(r->param_dtype);
	if (c->fp8_recipe == HS_FP8_CURRENT) {
		hs_op a = {.kind = HS_OP_MEM, .name = "fp8_weight_amax", .dtype = HS_FP32, .family = HS_MF_COPY,
			   .count = 1, .bytes = weights * pb};
		push(out, &a);
	}
	hs_op o = {.kind = HS_OP_MEM, .name = "fp8_weight_cast", .dtype = HS_FP8, .family = HS_MF_COPY,
		   .count = 1, .bytes = weights * (pb + 2)};
	push(out, &o);
}

double hs_model_flops_per_step(const hs_model *m, double tokens, int seq_len, int causal)
{
	double dqk = m->head_dim, dv = m->kv_lora_rank ? m->v_head_dim : m->head_dim;
	/* per layer and token, forward: QK^T 2 s H dqk + PV 2 s H dv; backward twice that */
	if (!m->npattern) {
		double attn = 3.0 * 2 * seq_len * m->heads * (dqk + dv) * (causal ? 0.5 : 1) * m->layers * tokens;
		return 6 * hs_model_params_matmul_active(m) * tokens + attn;
	}
	/* mixed layers: each layer's core FLOPs (models/mixer.h; causal, as the training ops are) */
	double core = 0;
	for (int l = 0; l < m->layers; l++)
		core += hs_mixer_core_flops_per_token(m, l, seq_len);
	return 6 * hs_model_params_matmul_active(m) * tokens + 3.0 * core * tokens;
}
