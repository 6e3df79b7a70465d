/* hs_memory: bytes per rank (see memory.h).
 *
 * Activations follow Korthikanti et al. 2022 section 4, term by term, so that a GPT layer (MHA, 4h GELU MLP,
 * dropout, materialised attention scores) gives their equations exactly:
 *   no parallelism (Eq. 1):          s b h (34 + 5 a s / h)
 *   tensor parallel (Eq. 2):         s b h (10 + 24/t + 5 a s / (h t))
 *   + sequence parallel (Eq. 4):     s b h / t (34 + 5 a s / h)
 *   selective recompute + SP (Eq. 6): 34 s b h / t   (without SP: s b h (10 + 24/t))
 *   full recompute (section 4.3):    2 s b h per layer (the layer input; / t with SP)
 * The terms, per token, for a layer with activation size B bytes (2 in the paper), masks of 1 byte:
 *   norm inputs 2Bh, QKV input Bh, Q and K B(q + kv), V B kv_v, projection input B q_v, attention dropout
 *   mask h, FC1 input Bh, activation input B mult f, FC2 input B f, MLP dropout mask h;
 *   scores: softmax output B a s_kv, with dropout also its mask a s_kv and output B a s_kv.
 * Generalisations: GQA and MLA through the per-rank head sizes; gated MLPs store both FC1 outputs; models
 * without dropout store no masks; flash attention stores no scores (as selective recompute); MoE layers store
 * the permuted tokens (top_k copies), the experts' activation and FC2 inputs for top_k pairs, and the shared
 * experts like a dense MLP; context parallelism divides the tokens by cp, attention keeps all s keys.
 * fp8 (Transformer Engine): the inputs of TE's linear layers (QKV, projection, FC1, FC2, experts, MLA's
 * up-projections) are kept as their fp8 copies (1 byte) instead; flash attention still keeps its bf16
 * output for its own backward beside the projection's fp8 copy of it. */
#include "models/memory.h"

#include "models/mixer.h"

static double dt_bytes(const hs_layer_cfg *c) { return hs_dtype_bytes(c->dtype); }

static const hs_recipe *recipe(const hs_layer_cfg *c) { return c->recipe ? c->recipe : hs_recipe_default(); }

/* Bytes of the residual stream and the norms' inputs: the recipe's, fp32 in fp32 training. */
static double resid_bytes(const hs_layer_cfg *c)
{
	return c->dtype == HS_FP32 ? 4 : hs_dtype_bytes(recipe(c)->resid_dtype);
}

/* Per-token activation bytes of one layer on one rank, without recomputation. `scores`: include the
 * materialised attention scores. */
static double per_token(const hs_model *m, const hs_layer_cfg *c, int layer, int scores, double skv)
{
	double B = dt_bytes(c), R = resid_bytes(c), t = c->tp > 0 ? c->tp : 1, h = m->hidden, hd = m->head_dim;
	/* a Transformer Engine linear layer under fp8 keeps its input for wgrad as the fp8 (one byte, e4m3)
	 * transposed copy its cast wrote, not the bf16 tensor (TE linear.py: saved_inputmat_t; 2.x: the
	 * quantized input's column-wise data); B where the GEMMs stay in the activation format */
	double F = c->fp8_gemms ? hs_dtype_bytes(HS_FP8) : B;
	const hs_recipe *r = recipe(c);
	double rep = c->sequence_parallel ? t : 1; /* the parts outside TP regions are split only with SP */
	double qr = m->heads / t, kvr, dv;
	double x = 0;
	int att = hs_mixer_is_attention(hs_model_layer_mixer(m, layer)); /* else a linear or SSM mixer's terms */
	x += hs_mixer_activations_per_token(m, c, layer); /* models/mixer.h (DSA: its indexer's) */
	if (m->kv_lora_rank) {
		kvr = qr;
		dv = m->v_head_dim;
		x += F * (m->q_lora_rank + m->kv_lora_rank); /* latent inputs of the up-projections (replicated) */
	} else {
		kvr = m->kv_heads >= t ? m->kv_heads / t : 1;
		dv = hd;
	}
	double mask = m->dropout ? 1 : 0;
	x += (2 * R * h + F * h + mask * h + F * h + mask * h) / rep; /* norms, QKV in, masks, FC1 in */
	if (att) {
		x += B * (qr + kvr) * hd + B * kvr * dv + F * qr * dv; /* Q, K, V, projection input */
		if (F != B && c->flash_attention) /* flash attention's backward reads its output O in bf16 besides */
			x += B * qr * dv;
		if (r->qkv_copy && !scores) /* eager: the attention's own output, beside its contiguous copy */
			x += B * qr * dv;
	} else if (m->kv_lora_rank) {
		x -= F * (m->q_lora_rank + m->kv_lora_rank); /* no MLA latents in this layer */
	}
	/* gated MLP: fused, the activation reads the FC1 output and writes the FC2 input; eager, silu's output
	 * is kept for the multiply as well */
	double mult = m->gated_mlp ? (r->fused_elementwise ? 2 : 3) : 1;
	if (hs_model_layer_is_moe(m, layer)) {
		double k = m->top_k, f = m->expert_ffn;
		double load = c->expert_load > 1 ? c->expert_load : 1; /* padded to the busiest expert */
		x += F * k * h * load;                   /* permuted tokens: the experts' FC1 inputs */
		x += k * (B * mult * f + F * f) / t * load; /* activation and FC2 inputs of top_k pairs */
		x += m->shared_experts * f * (B * mult + F) / t;
		x += 4.0 * m->experts;                    /* router probabilities, fp32 */
	} else {
		x += (B * mult * m->ffn + F * m->ffn) / t; /* activation input, FC2 input */
	}
	if (scores && att) /* materialised: the whole s x s_kv matrix, whatever a window masks */
		x += qr * skv * (B + (m->dropout ? 1 + B : 0));
	return x;
}

double hs_memory_layer_activations_at(const hs_model *m, const hs_layer_cfg *c, int layer)
{
	double t = c->tp > 0 ? c->tp : 1, cp = c->cp > 0 ? c->cp : 1, b = c->micro_batch > 0 ? c->micro_batch : 1;
	double seq = c->seq_len > 0 ? c->seq_len : m->seq_len;
	double tok = b * seq / cp;
	if (c->recompute == HS_RC_FULL)
		return tok * dt_bytes(c) * m->hidden / (c->sequence_parallel ? t : 1);
	int scores = !c->flash_attention && c->recompute == HS_RC_NONE;
	return tok * per_token(m, c, layer, scores, seq);
}

double hs_memory_layer_activations(const hs_model *m, const hs_layer_cfg *c)
{
	return hs_memory_layer_activations_at(m, c, m->layers - 1);
}

void hs_memory_rank(const hs_model *m, const hs_mem_cfg *c, hs_mem *out)
{
	const hs_layer_cfg *lc = &c->layer;
	double t = lc->tp > 0 ? lc->tp : 1, ep = lc->ep > 0 ? lc->ep : 1, cp = lc->cp > 0 ? lc->cp : 1;
	double dp = c->dp > 0 ? c->dp : 1, h = m->hidden, V = m->vocab;
	double b = lc->micro_batch > 0 ? lc->micro_batch : 1, seq = lc->seq_len > 0 ? lc->seq_len : m->seq_len;
	double tok = b * seq / cp, rep = lc->sequence_parallel ? t : 1;
	/* parameters held: dense ones shard (ZeRO) over dp x cp, routed experts over (dp x cp) / ep */
	double dense = 0, expert = 0, act = 0, act_max = 0;
	/* a layer's terms depend on the layer only through its mixer and whether it is MoE (model.c, mixer.c):
	 * found once per run of layers of one kind, and added layer by layer as before (the same sums) */
	int kind = -1;
	double ld = 0, le = 0, la = 0, lf = 0;
	for (int l = c->first_layer; l < c->first_layer + c->layers_on_rank && l < m->layers; l++) {
		int k = (int)hs_model_layer_mixer(m, l) * 2 + (hs_model_layer_is_moe(m, l) != 0);
		if (k != kind) {
			ld = hs_model_params_layer_rank(m, l, (int)t, (int)ep, &le) - le;
			la = hs_memory_layer_activations_at(m, lc, l);
			hs_layer_cfg none = *lc;
			none.recompute = HS_RC_NONE;
			lf = hs_memory_layer_activations_at(m, &none, l);
			kind = k;
		}
		dense += ld;
		expert += le;
		act += la;
		if (lf > act_max)
			act_max = lf;
	}
	double layer_params = dense + expert; /* the transformer layers alone (ZeRO-3 gathers them by unit) */
	if (c->first_stage)
		dense += V * h / t + (m->learned_pos ? seq * h : 0);
	if (c->last_stage) {
		dense += m->rmsnorm ? h : 2 * h;
		if (!m->tied_embeddings || !c->first_stage)
			dense += V * h / t;
	}
	double nd = dp * cp, nde = nd / ep > 1 ? nd / ep : 1;
	const hs_recipe *rc = recipe(lc);
	double wb = lc->dtype == HS_FP32 ? 4 : hs_dtype_bytes(rc->param_dtype);
	double gb = lc->grad_bytes > 0 ? lc->grad_bytes : hs_dtype_bytes(rc->grad_dtype), ob = rc->optimizer_state_bytes;
	if (lc->dtype == HS_FP32)
		gb = 4;
	int z = c->zero_stage;
	out->weights = wb * (z >= 3 ? dense / nd + expert / nde : dense + expert);
	out->grads = gb * (z >= 2 ? dense / nd + expert / nde : dense + expert);
	out->optimizer = ob * (z >= 1 ? dense / nd + expert / nde : dense + expert);
	/* FSDP2 with reshard_after_forward false and gradient sync on the last micro-batch only (as PyTorch's
	 * pipelining runs it, torch/distributed/pipelining/stage.py): beside the shards, the whole unsharded
	 * copy in the gathering dtype (MixedPrecisionPolicy.param_dtype: the training dtype) from the first
	 * forward to the end of the step, and the unsharded gradients accumulated across micro-batches (in
	 * reduce_dtype: the gradient format) until the one reduce-scatter */
	int keep = z >= 3 && c->fsdp_keep;
	if (keep) {
		out->weights += dt_bytes(lc) * (dense + expert);
		out->grads = gb * (dense + expert);
	}
	/* autocast's weight cache: every GEMM weight of the rank in the GEMM format, from the forward until its
	 * backward (the embedding lookup reads the fp32 table; a tied head casts it). Under fp8 the layers are
	 * TE's, which cast their weights themselves (below): only the output layer is cached. */
	double mats = layer_params; /* norms and biases are a rounding error here */
	if (rc->weight_cast && lc->dtype != HS_FP32)
		out->weights += dt_bytes(lc) * ((lc->fp8_gemms ? 0 : mats) + (c->last_stage ? V * h / t : 0));
	/* fp8: TE keeps each layer weight's fp8 copy and its fp8 transpose (1 byte each) as module buffers
	 * across steps (1.x weight_fp8 / weight_t_fp8), and per GEMM five tensors' scaling meta (3 forward,
	 * 2 backward: FP8FwdTensors, FP8BwdTensors), each a scale and an inverse (or amax, current scaling)
	 * of 4 bytes, and with delayed scaling an amax history of fp8_amax_history fp32 values */
	if (lc->fp8_gemms) {
		out->weights += 2 * hs_dtype_bytes(HS_FP8) * mats;
		double hist = lc->fp8_recipe == HS_FP8_DELAYED ? rc->fp8_amax_history : 0, gemms = 0;
		hs_oplist fwd = {0};
		for (int l = c->first_layer; l < c->first_layer + c->layers_on_rank && l < m->layers; l++) {
			hs_oplist_clear(&fwd);
			hs_ops_layer(m, lc, l, HS_PH_FWD, &fwd);
			gemms += hs_ops_fp8_gemms(&fwd);
		}
		hs_oplist_free(&fwd);
		out->weights += gemms * 5 * (4 * hist + 8);
	}

	/* activations: the in-flight micro-batches (chunks) of this rank's layers */
	double inflight = c->in_flight > 0 ? c->in_flight : 1, v = c->vstages > 1 ? c->vstages : 1;
	if (c->in_flight_layers > 0 && c->layers_on_rank > 0) /* uneven chunks: the held ones' layers */
		out->activations = act / c->layers_on_rank * c->in_flight_layers;
	else
		out->activations = act / v * inflight;
	if (c->first_stage && m->dropout) /* embedding dropout mask */
		out->activations += tok * h / rep * inflight;
	if (lc->recompute == HS_RC_FULL) /* the layer being recomputed in backward */
		out->activations += act_max;
	/* the output layer, its norm and the cross entropy of one micro-batch: fused (Korthikanti's
	 * 4 s b h / t (1 + v / h): the norm's input and the fp32 softmax); eager, log_softmax's backward holds
	 * three fp32 tensors of the logits' size, and the final norm keeps its input and its cast output */
	double R = resid_bytes(lc);
	if (rc->ce == HS_CE_FUSED)
		out->logits = c->last_stage ? 4 * tok * (h / rep + V / t) : 0;
	else
		out->logits = c->last_stage ? tok * ((R + dt_bytes(lc)) * h / rep + rc->ce_bytes_per_logit * V / t) : 0;
	out->comm_buffers = c->comm_buffer_bytes;
	if (z >= 3 && !keep && c->z3_live_params > 0) {
		/* DeepSpeed releases gathered parameters before fetching more once max_live_parameters are resident
		 * (partitioned_param_coordinator.py: __n_available_params against __max_n_available_params), so at
		 * most that many, in the gathering dtype, whatever the graph's units; never more than the rank's
		 * own parameters gathered */
		double held = dense + expert, live = c->z3_live_params < held ? c->z3_live_params : held;
		out->comm_buffers += dt_bytes(lc) * live;
	} else if (z >= 3 && !keep && c->layers_on_rank > 0) { /* ZeRO-3 gathers a unit ahead: two unsharded units */
		double gl = c->gather_layers > 0 ? c->gather_layers : 1;
		if (gl > c->layers_on_rank)
			gl = c->layers_on_rank;
		out->comm_buffers += 2 * wb * layer_params * gl / c->layers_on_rank;
	}
	/* offload: ZeRO-Offload keeps the optimizer states (fp32 master, Adam's moments) and an fp32 copy of the
	 * gradient partition in host memory (Ren et al. 2021, section 4.1: 16 bytes per parameter on the CPU
	 * besides the device's fp16 parameters and gradients); the device's gradients are counted as without
	 * offload (DeepSpeed still reduces them there). Activation offload keeps on the device the layer being
	 * computed and the one in transfer (TE's double buffering, transformer_engine/pytorch/cpu_offload.py), one
	 * micro-batch each, and the rest in host memory. */
	out->host = 0;
	if (c->offload_optimizer) {
		out->host += out->optimizer + 4 * (z >= 1 ? dense / nd + expert / nde : dense + expert);
		out->optimizer = 0;
	}
	if (c->offload_activations && c->layers_on_rank > 0) {
		double keep_act = 2 * act / c->layers_on_rank + (lc->recompute == HS_RC_FULL ? act_max : 0);
		if (keep_act < out->activations) {
			out->host += out->activations - keep_act;
			out->activations = keep_act;
		}
	}
	/* gradients freed by zero_grad are allocated as backward frees the activations: the peak is the larger of
	 * the activations at the start of backward and the gradients at its end */
	double live = out->activations + out->logits;
	if (rc->persistent_grads || z >= 2)
		live += out->grads;
	else if (out->grads > live)
		live = out->grads;
	out->total = out->weights + out->optimizer + live + out->comm_buffers;
}
