/* The preset model shapes, each with where its numbers come from. Parameter counts follow from the shapes
 * (models/model.c); tests/unit/models/test_model.c checks them against the published sizes.
 *
 * Vocabulary: the GPT-3 presets use 50257, the GPT-2 BPE vocabulary the GPT-3 paper trained with and counted
 * its sizes from. The Megatron presets (Narayanan et al. 2021) and the Korthikanti et al. 2022 presets use
 * 51200, the same vocabulary padded by Megatron to a multiple of 128 x tp so that it splits across tensor
 * parallel ranks; both papers count parameters with 51200. */
#include <stddef.h>

#include "models/mixer.h"
#include "models/model.h"

/* Declared here and in model.c only: the table is model.c's business. */
extern const hs_model hs_model_presets[];
extern const size_t hs_model_npresets;

/* GPT style: biases, LayerNorm, learned positions, dropout, 4h MLP; GPT-2/3 and Megatron tie the output
 * projection to the input embedding. */
#define GPT(nm, l, h, a, v, s)                                                                             \
	{ .name = nm, .layers = l, .hidden = h, .heads = a, .kv_heads = a, .head_dim = (h) / (a),             \
	  .ffn = 4 * (h), .vocab = v, .gated_mlp = 0, .tied_embeddings = 1, .seq_len = s, .bias = 1,         \
	  .rmsnorm = 0, .learned_pos = 1, .dropout = 1 }

/* Llama style: no biases, RMSNorm, rotary, no dropout, SwiGLU, untied. */
#define LLAMA(nm, l, h, a, kv, f, v, s)                                                                    \
	{ .name = nm, .layers = l, .hidden = h, .heads = a, .kv_heads = kv, .head_dim = (h) / (a), .ffn = f,  \
	  .vocab = v, .gated_mlp = 1, .tied_embeddings = 0, .seq_len = s, .rmsnorm = 1 }

const hs_model hs_model_presets[] = {
	/* GPT-3: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (n_layers, d_model,
	 * n_heads, d_head; context 2048). The table prints d_model 5140 for 13B; 40 heads x 128 = 5120 is the
	 * shape (5140 does not divide by 40 heads of 128). */
	GPT("gpt3-1.3b", 24, 2048, 16, 50257, 2048),
	GPT("gpt3-2.7b", 32, 2560, 32, 50257, 2048),
	GPT("gpt3-6.7b", 32, 4096, 32, 50257, 2048),
	GPT("gpt3-13b", 40, 5120, 40, 50257, 2048),
	GPT("gpt3-175b", 96, 12288, 96, 50257, 2048),
	/* Megatron GPT: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
	 * Using Megatron-LM", Table 1 (attention heads, hidden size, layers; vocab 51200, seq 2048). */
	GPT("megatron-1.7b", 24, 2304, 24, 51200, 2048),
	GPT("megatron-3.6b", 30, 3072, 32, 51200, 2048),
	GPT("megatron-7.5b", 36, 4096, 32, 51200, 2048),
	GPT("megatron-18b", 40, 6144, 48, 51200, 2048),
	GPT("megatron-39b", 48, 8192, 64, 51200, 2048),
	GPT("megatron-76b", 60, 10240, 80, 51200, 2048),
	GPT("megatron-145b", 80, 12288, 96, 51200, 2048),
	GPT("megatron-310b", 96, 16384, 128, 51200, 2048),
	GPT("megatron-530b", 105, 20480, 128, 51200, 2048),
	GPT("megatron-1t", 128, 25600, 160, 51200, 2048),
	/* Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Table 3
	 * (shared/data/published/korthikanti-2022.yaml): vocab 51200, seq 2048, ffn 4h. */
	GPT("gpt-22b", 48, 6144, 64, 51200, 2048),
	GPT("gpt-175b", 96, 12288, 96, 51200, 2048),
	GPT("gpt-530b", 105, 20480, 128, 51200, 2048),
	GPT("gpt-1t", 128, 25600, 160, 51200, 2048),
	/* Llama 2: Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models", Table 1 and the
	 * released config.json files (hidden, intermediate_size, heads, kv heads; context 4096, vocab 32000). */
	LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
	LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
	LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
	/* Llama 3 / 3.1: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3 (layers, model dim, FFN dim,
	 * heads, KV heads 8, vocab 128000 -> 128256 in the released configs); pre-training sequence 8192. */
	LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
	LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
	LLAMA("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, 8192),
	LLAMA("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192), /* alias of llama3.1-405b */
	/* Mixtral: Jiang et al. 2024, "Mixtral of Experts", Table 1 (dim 4096, 32 layers, head_dim 128, 32 heads,
	 * 8 KV heads, hidden_dim 14336, 8 experts, top 2, vocab 32000, context 32768); 8x22B from its released
	 * config.json (56 layers, 6144, 48 heads, 8 KV heads, 16384, vocab 32768, context 65536). */
	{ .name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128,
	  .ffn = 14336, .vocab = 32000, .gated_mlp = 1, .seq_len = 32768, .rmsnorm = 1, .experts = 8,
	  .top_k = 2, .expert_ffn = 14336 },
	{ .name = "mixtral-8x22b", .layers = 56, .hidden = 6144, .heads = 48, .kv_heads = 8, .head_dim = 128,
	  .ffn = 16384, .vocab = 32768, .gated_mlp = 1, .seq_len = 65536, .rmsnorm = 1, .experts = 8,
	  .top_k = 2, .expert_ffn = 16384 },
	/* DeepSeek-V3: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", section 4.2 and the released config:
	 * 61 layers, hidden 7168, the first 3 dense (ffn 18432), then 1 shared + 256 routed experts of 2048,
	 * top 8; MLA with 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk head 128 nope + 64 rope, v head 128;
	 * vocab 129280; pre-training sequence 4096. The multi-token-prediction module (14B) is not counted, as
	 * the report's 671B total and 37B activated do not count it. */
	{ .name = "deepseek-v3", .layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128, .head_dim = 192,
	  .ffn = 18432, .vocab = 129280, .gated_mlp = 1, .seq_len = 4096, .rmsnorm = 1, .experts = 256,
	  .top_k = 8, .shared_experts = 1, .expert_ffn = 2048, .dense_layers = 3, .q_lora_rank = 1536,
	  .kv_lora_rank = 512, .rope_head_dim = 64, .v_head_dim = 128 },
	/* Qwen3 MoE: Qwen team 2025, "Qwen3 Technical Report", Table 2, and the released config.json files:
	 * 30B-A3B: 48 layers, hidden 2048, 32 Q / 4 KV heads of 128, 128 experts of 768, top 8;
	 * 235B-A22B: 94 layers, hidden 4096, 64 Q / 4 KV heads of 128, 128 experts of 1536, top 8;
	 * vocab 151936, no shared experts, untied; pre-training stage-1 sequence 4096. QK-norm weights
	 * (2 x 128 per layer) are not modelled. */
	{ .name = "qwen3-30b-a3b", .layers = 48, .hidden = 2048, .heads = 32, .kv_heads = 4, .head_dim = 128,
	  .ffn = 6144, .vocab = 151936, .gated_mlp = 1, .seq_len = 4096, .rmsnorm = 1, .experts = 128,
	  .top_k = 8, .expert_ffn = 768 },
	/* Qwen3-Next-80B-A3B: Qwen team 2025, the released config.json (Qwen/Qwen3-Next-80B-A3B-Instruct):
	 * 48 layers of hidden 2048, full_attention_interval 4 (layer_types: three linear_attention, then one
	 * full_attention), full attention 16 Q / 2 KV heads of 256, Gated DeltaNet with linear_num_key_heads 16,
	 * linear_num_value_heads 32, linear_key_head_dim 128, linear_value_head_dim 128, linear_conv_kernel_dim
	 * 4; every layer MoE (decoder_sparse_step 1) with num_experts 512, num_experts_per_tok 10, one shared
	 * expert (shared_expert_intermediate_size 512), moe_intermediate_size 512; vocab 151936, untied. Not
	 * modelled: the full attention's output gate (attn_output_gate: q_proj emits a sigmoid gate per head,
	 * 8.4M parameters per full layer), the shared expert's scalar gate, QK-norms, partial rotary, and the
	 * multi-token-prediction layer. seq_len 4096 as Qwen3's stage-1 pre-training (the release does not say
	 * Qwen3-Next's). */
	{ .name = "qwen3-next-80b-a3b", .layers = 48, .hidden = 2048, .heads = 16, .kv_heads = 2, .head_dim = 256,
	  .ffn = 5120, .vocab = 151936, .gated_mlp = 1, .seq_len = 4096, .rmsnorm = 1, .experts = 512,
	  .top_k = 10, .shared_experts = 1, .expert_ffn = 512,
	  .pattern = {HS_MIX_LINEAR, HS_MIX_LINEAR, HS_MIX_LINEAR, HS_MIX_FULL}, .npattern = 4,
	  .lin_k_heads = 16, .lin_v_heads = 32, .lin_k_dim = 128, .lin_v_dim = 128, .lin_conv = 4 },
	/* Gemma 2 9B: Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical Size", arXiv
	 * 2408.00118, Table 1 (d_model 3584, 42 layers, 16 heads of 256, 8 KV heads, feedforward 14336 x 2
	 * (GeGLU), vocab 256128 -> 256000 in the release, sliding window 4096, context 8192) and section 2: local
	 * sliding-window and global attention alternate, the first layer local (transformers' Gemma2: is_sliding
	 * = not layer_idx % 2); tied embeddings. The post-norms (two more RMSNorms per layer) and the logit
	 * soft-capping are not modelled. */
	{ .name = "gemma2-9b", .layers = 42, .hidden = 3584, .heads = 16, .kv_heads = 8, .head_dim = 256,
	  .ffn = 14336, .vocab = 256000, .gated_mlp = 1, .tied_embeddings = 1, .seq_len = 8192, .rmsnorm = 1,
	  .pattern = {HS_MIX_SLIDING, HS_MIX_FULL}, .npattern = 2, .window = 4096 },
	/* DeepSeek-V3.2-Exp: DeepSeek-AI 2025, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek
	 * Sparse Attention" and its released config: DeepSeek-V3.1-Terminus's shape (deepseek-v3 above) with
	 * DSA in every layer: index_n_heads 64, index_head_dim 128, index_topk 2048. */
	{ .name = "deepseek-v3.2-exp", .layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128,
	  .head_dim = 192, .ffn = 18432, .vocab = 129280, .gated_mlp = 1, .seq_len = 4096, .rmsnorm = 1,
	  .experts = 256, .top_k = 8, .shared_experts = 1, .expert_ffn = 2048, .dense_layers = 3,
	  .q_lora_rank = 1536, .kv_lora_rank = 512, .rope_head_dim = 64, .v_head_dim = 128,
	  .pattern = {HS_MIX_DSA}, .npattern = 1, .dsa_topk = 2048, .dsa_heads = 64, .dsa_dim = 128 },
	{ .name = "qwen3-235b-a22b", .layers = 94, .hidden = 4096, .heads = 64, .kv_heads = 4, .head_dim = 128,
	  .ffn = 12288, .vocab = 151936, .gated_mlp = 1, .seq_len = 4096, .rmsnorm = 1, .experts = 128,
	  .top_k = 8, .expert_ffn = 1536 },
};

const size_t hs_model_npresets = sizeof hs_model_presets / sizeof hs_model_presets[0];
