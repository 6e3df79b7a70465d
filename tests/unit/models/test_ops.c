#include <check.h>
#include <math.h>
#include <string.h>

#include "models/ops.h"

static hs_layer_cfg cfg(int tp, int cp, int ep, int sp, int mb, int seq)
{
	return (hs_layer_cfg){.tp = tp, .cp = cp, .ep = ep, .sequence_parallel = sp, .micro_batch = mb,
			      .seq_len = seq, .dtype = HS_BF16, .flash_attention = 1};
}

/* GEMM + attention FLOPs (the model FLOPs; memory-bound ops are not counted by convention). */
static double model_flops(const hs_oplist *l)
{
	double f = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->ops[i].kind == HS_OP_GEMM || l->ops[i].kind == HS_OP_ATTN)
			f += l->ops[i].flops;
	return f;
}

static double step_flops(const hs_model *m, const hs_layer_cfg *c)
{
	hs_oplist l = {0};
	static const enum hs_phase ph[] = {HS_PH_FWD, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT};
	for (int p = 0; p < 3; p++) {
		for (int i = 0; i < m->layers; i++)
			hs_ops_layer(m, c, i, ph[p], &l);
		hs_ops_embedding(m, c, ph[p], &l);
		hs_ops_head(m, c, ph[p], &l);
	}
	double f = model_flops(&l);
	hs_oplist_free(&l);
	return f;
}

static const hs_op *find(const hs_oplist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ops[i].name, name) == 0)
			return &l->ops[i];
	return NULL;
}

static int count_kind(const hs_oplist *l, enum hs_op_kind k, enum hs_coll_op coll)
{
	int n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->ops[i].kind == k && (k != HS_OP_COMM || l->ops[i].coll == coll))
			n++;
	return n;
}

/* Golden: the op lists' FLOPs over every layer, fwd + bwd, equal 6 x matmul params x tokens + attention. */
START_TEST(flops_per_step_matches_op_lists)
{
	static const char *names[] = {"gpt3-175b", "gpt-22b", "llama3-8b", "llama2-70b", "mixtral-8x7b",
				      "deepseek-v3", "qwen3-30b-a3b"};
	for (int i = 0; i < 7; i++) {
		hs_model m;
		ck_assert_int_eq(hs_model_preset(names[i], &m), 0);
		hs_layer_cfg c = cfg(1, 1, 1, 0, 2, 2048);
		double ops = step_flops(&m, &c);
		double want = hs_model_flops_per_step(&m, 2 * 2048, 2048, 1);
		ck_assert_msg(fabs(ops / want - 1) < 1e-12, "%s: %.6g vs %.6g", names[i], ops, want);
	}
	/* the textbook form for GPT: 6 P' T + 12 l h s T / 2 (causal), P' = 12 l h^2 + V h */
	hs_model m;
	hs_model_preset("gpt3-175b", &m);
	double l = m.layers, h = m.hidden, T = 4096, s = 2048;
	double want = 6 * (12 * l * h * h + m.vocab * h) * T + 12 * l * h * s * T / 2;
	ck_assert(fabs(hs_model_flops_per_step(&m, T, 2048, 1) / want - 1) < 1e-12);
	ck_assert(fabs(hs_model_flops_per_step(&m, T, 2048, 0) - want - 12 * l * h * s * T / 2) < 1e3);
}
END_TEST

/* TP and CP split the work: per-rank FLOPs x ranks = the whole (no replicated parts in a GPT layer). */
START_TEST(tp_cp_split_work)
{
	hs_model m;
	hs_model_preset("gpt3-175b", &m);
	hs_layer_cfg one = cfg(1, 1, 1, 0, 1, 2048);
	double total = step_flops(&m, &one);
	hs_layer_cfg tp = cfg(8, 1, 1, 1, 1, 2048);
	ck_assert(fabs(8 * step_flops(&m, &tp) / total - 1) < 1e-12);
	hs_layer_cfg cp = cfg(8, 2, 1, 1, 1, 2048);
	ck_assert(fabs(16 * step_flops(&m, &cp) / total - 1) < 1e-12);
	/* EP keeps per-rank work (same tokens, top_k pairs spread over fewer local experts) */
	hs_model_preset("mixtral-8x7b", &m);
	hs_layer_cfg e1 = cfg(1, 1, 1, 0, 1, 4096), e8 = cfg(1, 1, 8, 0, 1, 4096);
	ck_assert(fabs(step_flops(&m, &e8) / step_flops(&m, &e1) - 1) < 1e-12);
}
END_TEST

START_TEST(gemm_shapes)
{
	hs_model m;
	hs_model_preset("llama3-8b", &m);
	hs_layer_cfg c = cfg(1, 1, 1, 0, 2, 8192);
	hs_oplist l = {0};
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	const hs_op *q = find(&l, "qkv");
	ck_assert(q && q->m == 16384 && q->n == (32 + 16) * 128 && q->k == 4096);
	const hs_op *f1 = find(&l, "fc1");
	ck_assert(f1 && f1->n == 2 * 14336 && f1->k == 4096);
	const hs_op *f2 = find(&l, "fc2");
	ck_assert(f2 && f2->n == 4096 && f2->k == 14336);
	const hs_op *a = find(&l, "attn");
	ck_assert(a && a->b == 2 && a->h == 32 && a->s == 8192 && a->s_kv == 8192 && a->d == 128 && a->causal);
	ck_assert(a->flops == 4.0 * 2 * 32 * 8192 * 8192 * 128 / 2);
	ck_assert(find(&l, "rope") && !find(&l, "drop1") && !find(&l, "tp_attn_out_ar"));
	hs_oplist_clear(&l);
	/* tp 16 > 8 KV heads: one KV head per rank, replicated */
	c.tp = 16;
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	q = find(&l, "qkv");
	ck_assert(q->n == (2 + 2) * 128);
	ck_assert(find(&l, "proj")->k == 2 * 128);
	ck_assert(find(&l, "fc2")->k == 14336 / 16);
	hs_oplist_clear(&l);
	/* backward: dgrad (m, k, n) then wgrad (k, n, m), same FLOPs */
	c.tp = 1;
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	const hs_op *d = find(&l, "qkv_dgrad");
	ck_assert(d && d->m == 16384 && d->n == 4096 && d->k == 6144);
	ck_assert(l.ops[l.n - 1].kind == HS_OP_MEM && strcmp(l.ops[l.n - 1].name, "ln1_bwd") == 0); /* reversed */
	const hs_op *ab = find(&l, "attn_bwd");
	ck_assert(ab && ab->bwd && ab->flops == 2 * 4.0 * 2 * 32 * 8192 * 8192 * 128 / 2);
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_WEIGHT, &l);
	const hs_op *w = find(&l, "qkv_wgrad");
	ck_assert(w && w->m == 4096 && w->n == 6144 && w->k == 16384);
	ck_assert_int_eq(count_kind(&l, HS_OP_GEMM, 0), 4); /* qkv, proj, fc1, fc2 */
	ck_assert(!find(&l, "attn_bwd"));
	hs_oplist_free(&l);
}
END_TEST

START_TEST(tensor_and_sequence_parallel_comm)
{
	hs_model m;
	hs_model_preset("gpt-22b", &m);
	hs_layer_cfg c = cfg(8, 1, 1, 0, 4, 2048);
	double full = 4 * 2048.0 * 6144 * 2;
	hs_oplist l = {0};
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_ALL_REDUCE), 2);
	ck_assert(find(&l, "tp_attn_out_ar")->bytes == full && find(&l, "tp_attn_out_ar")->group == HS_GROUP_TP);
	ck_assert(find(&l, "ln1")->bytes == 2 * 4 * 2048.0 * 6144 * 2); /* replicated: all tokens */
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_ALL_REDUCE), 2);
	ck_assert(find(&l, "tp_attn_in_ar_grad"));
	hs_oplist_clear(&l);
	/* SP: all-reduce -> reduce-scatter + all-gather; norms on tokens / tp */
	c.sequence_parallel = 1;
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_ALL_REDUCE), 0);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_ALL_GATHER), 2);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_REDUCE_SCATTER), 2);
	ck_assert(find(&l, "ln1")->bytes == 2 * 4 * 2048.0 * 6144 * 2 / 8);
	/* Megatron's fused bias-dropout-add: the branch and the stream read, the stream and the mask written */
	ck_assert(!find(&l, "drop1") && find(&l, "add1")->bytes == 4 * 2048.0 * 6144 * 7 / 8);
	/* order: ln1, ag, qkv */
	ck_assert_str_eq(l.ops[0].name, "ln1");
	ck_assert_str_eq(l.ops[1].name, "tp_attn_in_ag");
	ck_assert_str_eq(l.ops[2].name, "qkv");
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_ALL_GATHER), 4); /* grads of RS + input re-gathers */
	ck_assert_int_eq(count_kind(&l, HS_OP_COMM, HS_COLL_REDUCE_SCATTER), 2);
	hs_oplist_free(&l);
}
END_TEST

START_TEST(recompute_modes)
{
	hs_model m;
	hs_model_preset("gpt-22b", &m);
	hs_layer_cfg c = cfg(8, 1, 1, 1, 4, 2048);
	hs_oplist fwd = {0}, rc = {0};
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &fwd);
	hs_ops_layer(&m, &c, 0, HS_PH_RECOMPUTE, &rc);
	ck_assert_int_eq(rc.n, 0);
	c.recompute = HS_RC_SELECTIVE;
	hs_ops_layer(&m, &c, 0, HS_PH_RECOMPUTE, &rc);
	ck_assert_int_eq(rc.n, 1);
	ck_assert(rc.ops[0].kind == HS_OP_ATTN && rc.ops[0].recompute && !rc.ops[0].bwd);
	ck_assert(rc.ops[0].flops == find(&fwd, "attn")->flops);
	hs_oplist_clear(&rc);
	/* materialised attention: the core is QK^T, softmax, dropout, PV (Korthikanti's selective part) */
	c.flash_attention = 0;
	hs_ops_layer(&m, &c, 0, HS_PH_RECOMPUTE, &rc);
	ck_assert_int_eq(rc.n, 4);
	ck_assert_str_eq(rc.ops[0].name, "score");
	ck_assert_str_eq(rc.ops[3].name, "attn_v");
	hs_oplist_clear(&rc);
	c.flash_attention = 1;
	c.recompute = HS_RC_FULL;
	hs_ops_layer(&m, &c, 0, HS_PH_RECOMPUTE, &rc);
	ck_assert_int_eq(rc.n, fwd.n);
	for (size_t i = 0; i < rc.n; i++) {
		ck_assert(rc.ops[i].recompute && !fwd.ops[i].recompute);
		ck_assert_str_eq(rc.ops[i].name, fwd.ops[i].name);
		ck_assert(rc.ops[i].flops == fwd.ops[i].flops);
	}
	hs_oplist_free(&fwd);
	hs_oplist_free(&rc);
}
END_TEST

START_TEST(moe_and_cp)
{
	hs_model m;
	hs_model_preset("mixtral-8x7b", &m);
	hs_layer_cfg c = cfg(2, 1, 4, 1, 1, 4096);
	hs_oplist l = {0};
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	const hs_op *d = find(&l, "ep_dispatch"), *cb = find(&l, "ep_combine");
	ck_assert(d && cb && d->coll == HS_COLL_ALL_TO_ALL && d->group == HS_GROUP_EP);
	ck_assert(d->bytes == 4096.0 * 2 * 4096 * 2);
	const hs_op *e = find(&l, "expert_fc1");
	/* 4096 tokens x top 2 x ep 4 over 8 experts = 4096 per expert; 2 local experts */
	ck_assert(e->m == 4096 && e->count == 2 && e->n == 2 * 14336 / 2 && e->k == 4096);
	ck_assert(find(&l, "router")->n == 8);
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	ck_assert(find(&l, "ep_dispatch_bwd") && find(&l, "ep_combine_bwd"));
	hs_oplist_clear(&l);
	/* DeepSeek-V3: dense first layers, shared expert, MLA */
	hs_model_preset("deepseek-v3", &m);
	c = cfg(1, 1, 1, 0, 1, 4096);
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	ck_assert(find(&l, "fc1") && !find(&l, "router") && find(&l, "kv_up"));
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 3, HS_PH_FWD, &l);
	ck_assert(find(&l, "router") && find(&l, "shared_fc1")->n == 2 * 2048);
	ck_assert(find(&l, "attn")->d == (192 + 128) / 2.0);
	hs_oplist_clear(&l);
	/* CP: local queries against the whole sequence's keys, KV gathered over the CP group */
	hs_model_preset("llama3-8b", &m);
	c = cfg(1, 4, 1, 0, 1, 8192);
	hs_ops_layer(&m, &c, 0, HS_PH_FWD, &l);
	const hs_op *a = find(&l, "attn"), *g = find(&l, "cp_kv_ag");
	ck_assert(a->s == 2048 && a->s_kv == 8192);
	ck_assert(g && g->group == HS_GROUP_CP && g->coll == HS_COLL_ALL_GATHER && g->bytes == 8192.0 * 8 * 256 * 2);
	ck_assert(find(&l, "qkv")->m == 2048);
	hs_oplist_clear(&l);
	hs_ops_layer(&m, &c, 0, HS_PH_BWD_INPUT, &l);
	ck_assert(find(&l, "cp_dkv_rs")->coll == HS_COLL_REDUCE_SCATTER);
	hs_oplist_free(&l);
}
END_TEST

START_TEST(embedding_head_optimizer)
{
	hs_model m;
	hs_model_preset("gpt3-175b", &m);
	hs_layer_cfg c = cfg(8, 1, 1, 1, 1, 2048);
	hs_oplist l = {0};
	hs_ops_head(&m, &c, HS_PH_FWD, &l);
	const hs_op *h = find(&l, "head");
	ck_assert(h->m == 2048 && h->n == 50257.0 / 8 && h->k == 12288);
	ck_assert(find(&l, "ce") && find(&l, "ce_ar") && find(&l, "tp_head_in_ag"));
	hs_oplist_clear(&l);
	hs_ops_head(&m, &c, HS_PH_BWD_WEIGHT, &l);
	ck_assert(l.n == 1 && strcmp(l.ops[0].name, "head_wgrad") == 0);
	hs_oplist_clear(&l);
	hs_ops_embedding(&m, &c, HS_PH_FWD, &l);
	ck_assert(find(&l, "embed") && find(&l, "tp_embed_rs") && find(&l, "pos_embed"));
	ck_assert_double_eq(model_flops(&l), 0);
	hs_oplist_clear(&l);
	hs_ops_embedding(&m, &c, HS_PH_BWD_WEIGHT, &l);
	ck_assert(find(&l, "embed_bwd"));
	hs_oplist_clear(&l);
	hs_ops_optimizer(&c, 1e9, &l);
	/* Megatron: read the fp32 main grad and master, m, v; write master, m, v and the bf16 copy: 30 bytes */
	const hs_op *o = find(&l, "adam");
	ck_assert(o && o->kind == HS_OP_OPTIMIZER && o->bytes == 30e9);
	ck_assert(find(&l, "grad_norm")->bytes == 4e9 && find(&l, "zero_grad")->bytes == 4e9);
	hs_oplist_free(&l);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, flops_per_step_matches_op_lists);
	tcase_add_test(tc, tp_cp_split_work);
	tcase_add_test(tc, gemm_shapes);
	tcase_add_test(tc, tensor_and_sequence_parallel_comm);
	tcase_add_test(tc, recompute_modes);
	tcase_add_test(tc, moe_and_cp);
	tcase_add_test(tc, embedding_head_optimizer);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
