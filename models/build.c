/* Strategy -> task graph.
 *
 * For every pipeline stage the schedule (models/schedule.h) gives the order of forward and backward work
 * items; each item becomes a compute task on the stage's compute stream. A forward item sends its output
 * activations to the next model chunk (a SEND task on the p2p stream), and the receiving item depends on that
 * send; backward items send input gradients the other way. Gradient reduction across data parallelism is
 * overlapped with the last micro-batch's backward pass, one bucket at a time, as PyTorch DDP and Megatron do:
 * that backward is split into slices (one per bucket) and each slice's bucket is reduced on the comm stream
 * while the next slice computes. The optimizer step waits for every bucket.
 *
 * Tasks are appended in a topological order: the stages' item lists are walked round-robin, each stage
 * advancing while the items it needs from its neighbours already exist. */
#include "models/build.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "models/mixer.h"
#include "models/schedule.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"

int hs_build_memo_on(void)
{
	const char *e = getenv("HETSIM_BUILD_MEMO");
	return !(e && strcmp(e, "0") == 0);
}

int hs_build_dp_group_size(const hs_parallel *p)
{
	return p->sites > 1 ? p->dp / p->sites : p->dp;
}

int hs_build_rank(const hs_parallel *p, int t, int c, int d, int stage)
{
	/* parallelism.order, innermost first (all zero = never set: Megatron's tp, cp, dp, pp). With DiLoCo sites
	 * the sites are outermost and the order applies inside a site, to its dp / sites replicas. */
	int dps = p->sites > 1 ? p->dp / p->sites : p->dp;
	int site = d / dps;
	int unset = !(p->order[0] | p->order[1] | p->order[2] | p->order[3]);
	if (unset || (p->order[0] == 0 && p->order[1] == 1 && p->order[2] == 2 && p->order[3] == 3))
		/* Megatron's, unrolled (the planner and the executor ask for every rank of every rep) */
		return ((stage * dps + d % dps) * p->cp + c) * p->tp + t + site * p->tp * p->cp * dps * p->pp;
	int idx[4] = {t, c, d % dps, stage}, size[4] = {p->tp, p->cp, dps, p->pp};
	const int *o = p->order;
	int r = 0; /* innermost first: r = ((idx[o3] size[o2] + idx[o2]) size[o1] + idx[o1]) size[o0] + idx[o0] */
	for (int i = 3; i >= 0; i--)
		r = r * size[o[i]] + idx[o[i]];
	return r + site * p->tp * p->cp * dps * p->pp;
}

/* hs_build_rank of the group's member i, for i = 0..n-1, written as rank(0) + i * (rank(1) - rank(0)): every
 * order makes the rank a sum of each coordinate times a stride, plus the site's offset, so that along one
 * coordinate within one site the ranks step by a constant (the planner and the executor ask for every rank of
 * every group of every rep: a call per rank was 3% of a sweep point). */
static void ranks_along(const hs_parallel *p, enum hs_group k, int d, int stage, int n, int *ranks)
{
	int dpg = hs_build_dp_group_size(p), dbase = d / dpg * dpg, e0 = p->ep > 0 ? (d / p->ep) * p->ep : 0;
	for (int i = 0; i < n && i < 2; i++) {
		switch (k) {
		case HS_GROUP_TP: ranks[i] = hs_build_rank(p, i, 0, d, stage); break;
		case HS_GROUP_CP: ranks[i] = hs_build_rank(p, 0, i, d, stage); break;
		case HS_GROUP_DP: ranks[i] = hs_build_rank(p, 0, 0, dbase + i, stage); break;
		case HS_GROUP_EP: ranks[i] = hs_build_rank(p, 0, 0, e0 + i, stage); break;
		case HS_GROUP_PP: ranks[i] = hs_build_rank(p, 0, 0, d, i); break;
		default: break;
		}
	}
	for (int i = 2; i < n; i++)
		ranks[i] = ranks[0] + i * (ranks[1] - ranks[0]);
}

int hs_build_group(const hs_parallel *p, enum hs_group k, int d, int stage, int *ranks)
{
	int sizes[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp, [HS_GROUP_DP] = hs_build_dp_group_size(p),
				     [HS_GROUP_EP] = p->ep, [HS_GROUP_PP] = p->pp};
	if (k < 0 || k >= HS_GROUP_COUNT)
		return 0;
	/* the replicas of a DP group are one site's (its first is a multiple of dp / sites); an EP group's may
	 * cross into the next site where ep does not divide dp / sites: rank by rank there */
	int dps = p->sites > 1 ? p->dp / p->sites : p->dp;
	int e0 = k == HS_GROUP_EP && p->ep > 0 ? (d / p->ep) * p->ep : 0;
	if (k == HS_GROUP_EP && sizes[k] > 0 && (dps <= 0 || e0 / dps != (e0 + p->ep - 1) / dps)) {
		for (int i = 0; i < sizes[k]; i++)
			ranks[i] = hs_build_rank(p, 0, 0, e0 + i, stage);
		return sizes[k];
	}
	ranks_along(p, k, d, stage, sizes[k], ranks);
	return sizes[k];
}

void hs_build_layer_cfg(const hs_workload *s, hs_layer_cfg *out)
{
	const hs_parallel *p = s->par;
	*out = (hs_layer_cfg){.tp = p->tp, .cp = p->cp, .ep = p->ep, .sequence_parallel = p->sequence_parallel,
			      .micro_batch = s->train->micro_batch, .seq_len = s->train->seq_len,
			      .dtype = s->train->dtype, .fp8_gemms = s->train->fp8_gemms,
			      .fp8_recipe = (unsigned char)s->train->fp8_recipe, .recompute = p->recompute,
			      .flash_attention = !s->train->materialized_attention,
			      .expert_load = p->expert_load, .cp_ring = p->cp_ring, .recipe = s->train->recipe,
			      .grad_bytes = s->train->recipe ? hs_dtype_bytes(s->train->grad_dtype) : 0};
}

static void pipe_free(hs_pipe *q, int pp)
{
	if (!q)
		return;
	if (q->own_items) {
		for (int st = 0; q->items && st < pp; st++)
			free(q->items[st]);
		free(q->items);
		free(q->nitems);
	}
	free(q->ol);
	free(q->nslices);
	free(q->bucket_bytes);
	free(q->opt);
	free(q->gather_bytes);
	free(q);
}

void hs_build_free(hs_build *b)
{
	if (!b)
		return;
	pipe_free(b->pipe, b->pp);
	b->pipe = NULL;
	hs_graph_free(&b->graph);
	free(b->ranges);
	b->ranges = NULL;
	b->nranges = b->capranges = 0;
	free(b->stages);
	b->stages = NULL;
	hs_partition_free(&b->part);
}

void hs_partition_free(hs_partition *p)
{
	if (!p)
		return;
	free(p->stage_layers);
	free(p->chunk_layers);
	free(p->dp_mb);
	free(p->stage_mb_s);
	free(p->replica_mb_s);
	memset(p, 0, sizeof *p);
}

/* Parameters one rank holds for transformer layer `l` (TP shards the matrices, EP the routed experts;
 * norms are replicated but small, and are counted in full). */
static double layer_params_rank(const hs_model *m, const hs_parallel *p, int l)
{
	double total = hs_model_params_layer(m, l);
	int moe = m->experts > 0 && l >= m->dense_layers;
	if (!moe)
		return total / p->tp;
	double mats = m->gated_mlp ? 3.0 : 2.0;
	double routed = (double)m->experts * mats * m->hidden * m->expert_ffn;
	return (total - routed) / p->tp + routed / ((double)p->ep * p->tp);
}

struct ctx {
	const hs_workload *s;
	hs_build *b;
	hs_graph *g;
	hs_layer_cfg lc;
	int pp, v, nchunks;    /* chunks per rank, model chunks */
	int sched;             /* enum hs_sched_kind: where the model chunks live (hs_sched_chunk_of) */
	int *cl, *cf;          /* [nchunks] layers of a global chunk and its first layer */
	int dpg;               /* data-parallel group size (dp, or a DiLoCo site's replicas) */
	/* per (stage, chunk): op lists in the graph */
	uint32_t (*fwd)[2], (*bwd)[2], (*bin)[2], (*bwt)[2]; /* [stage*v+chunk] = {first, count} */
	hs_oplist tmp;
	/* What one build reuses (memo: off with HETSIM_BUILD_MEMO=0, to check it changes nothing): every stage's
	 * schedule items for the replicas that run mb_max micro-batches, built at once when the first of them needs
	 * them (ZB-H1 orders all stages in one run) and shared by those reps' walks; and each kind of layer's op
	 * list per phase, generated once and copied for every layer of that kind (hs_ops_layer depends on the
	 * layer only through its mixer kind and whether it is MoE). */
	int memo;
	size_t t0;             /* memo: tmp is the graph's op array, and the list being built starts at t0 */
	hs_sched_item **items; /* [pp] NULL until built */
	size_t *nitems;
	hs_sched_cache *sc;    /* where the items are kept across builds; NULL: none */
	double *cparams;       /* [nchunks] chunk_params of each model chunk, -1 until found */
	/* [mixer kind * 2 + MoE] layer_params_rank of a layer of that kind (it depends on the layer through its
	 * kind alone), -1 until found */
	double kparams[2 * HS_MIX_COUNT];
	unsigned char *lkind;  /* [model layers] the memo's index of each layer, mixer kind * 2 + MoE; LKIND_NONE
				* where the memo has no kind for it */
	int items_kept;        /* items are sc's */
	hs_sched_facts facts;  /* the items' (sc's, or own_peak's where the items are the build's) */
	double *own_peak;
	struct layer_memo *lm;
	/* memo: the fingerprint of the list being built (hs_op_range.fp) and its groups (hs_op_range.groups): the
	 * pieces before fmark folded in */
	uint64_t fp;
	unsigned groups;
	size_t fmark;
};

/* Each kind of layer's ops in each phase, generated once per build (ctx.memo). */
struct layer_memo {
	hs_oplist l[4][HS_MIX_COUNT][2]; /* [enum hs_phase][enum hs_mixer_kind][MoE] */
	uint64_t fp[4][HS_MIX_COUNT][2]; /* fp_ops of each */
	unsigned groups[4][HS_MIX_COUNT][2]; /* hs_ops_groups of each */
	unsigned char done[4][HS_MIX_COUNT][2];
};

/* The fingerprint h extended by ops[0..n-1]'s bytes (padding included: equal bytes, equal fingerprints). */
static uint64_t fp_ops(uint64_t h, const hs_op *ops, size_t n)
{
	const unsigned char *b = (const unsigned char *)ops;
	for (size_t i = 0; i + 8 <= n * sizeof *ops; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	return h; /* sizeof(hs_op) is a multiple of 8 (it holds doubles) */
}

/* The list's fingerprint with the ops appended since the last fold. */
static void fold(struct ctx *c)
{
	if (!c->memo)
		return;
	c->fp = fp_ops(c->fp, c->tmp.ops + c->fmark, c->tmp.n - c->fmark);
	c->groups |= hs_ops_groups(c->tmp.ops + c->fmark, c->tmp.n - c->fmark);
	c->fmark = c->tmp.n;
}

#define LKIND_NONE 0xff

/* Layer l's ops in phase ph from the memo, generated on first use; NULL where the memo does not apply. The
 * layer's kind is looked up in c->lkind (asking the model for it twice per layer and list was 0.3% of a sweep
 * point). */
static const hs_oplist *layer_memo(struct ctx *c, int l, enum hs_phase ph)
{
	const hs_model *m = c->s->model;
	unsigned km = c->lkind[l], k = km >> 1, moe = km & 1;
	if (!c->memo || km == LKIND_NONE || (unsigned)ph >= 4)
		return NULL;
	if (!c->lm)
		c->lm = hs_xcalloc(1, sizeof *c->lm);
	hs_oplist *e = &c->lm->l[ph][k][moe];
	if (!c->lm->done[ph][k][moe]) {
		hs_ops_layer(m, &c->lc, l, ph, e);
		c->lm->fp[ph][k][moe] = fp_ops(0x84222325cbf29ce4ull ^ e->n, e->ops, e->n);
		c->lm->groups[ph][k][moe] = hs_ops_groups(e->ops, e->n);
		c->lm->done[ph][k][moe] = 1;
	}
	return e;
}

/* Append layer l's ops in phase ph to c->tmp: hs_ops_layer's, copied from the memo where the memo is on. */
static void layer_ops(struct ctx *c, int l, enum hs_phase ph)
{
	const hs_oplist *e = layer_memo(c, l, ph);
	if (!e) {
		hs_ops_layer(c->s->model, &c->lc, l, ph, &c->tmp);
		return;
	}
	hs_oplist *t = &c->tmp;
	if (!e->n) /* e.g. no recompute: nothing generated, and e->ops may be NULL */
		return;
	fold(c); /* what came before this layer, then the layer by its kind's fingerprint */
	hs_xgrow(&t->ops, &t->cap, t->n + e->n, sizeof *t->ops);
	memcpy(t->ops + t->n, e->ops, e->n * sizeof *e->ops);
	t->n += e->n;
	unsigned k = c->lkind[l] >> 1, moe = c->lkind[l] & 1;
	c->fp = (c->fp ^ c->lm->fp[ph][k][moe]) * 0xbf58476d1ce4e5b9ull;
	c->fp ^= c->fp >> 29;
	c->groups |= c->lm->groups[ph][k][moe];
	c->fmark = t->n;
}

/* With the memo: room in the graph for every chunk's four lists at once, so that they are written in place
 * and never moved: the layers' ops exactly, and a bound for the embedding, the head and the fp8 updates. */
static int gchunk_of(const struct ctx *c, int stage, int chunk);

/* shared: [pp * v] the earlier (stage, chunk) whose lists each repeats, -1 for those built (build_oplists); NULL:
 * every model chunk's lists are built. kinds: the lists built (1 << enum hs_si_kind). */
static void reserve_ops(struct ctx *c, const int *shared, unsigned kinds)
{
	if (!c->memo)
		return;
	size_t need = c->g->nops;
	/* the phases of each list's layers: forward; combined backward (recompute, input, weight); input half
	 * (recompute, input); weight half */
	static const enum hs_phase per_layer[] = {HS_PH_FWD,       HS_PH_RECOMPUTE, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT,
						  HS_PH_RECOMPUTE, HS_PH_BWD_INPUT, HS_PH_BWD_WEIGHT};
	static const enum hs_si_kind list_of[] = {HS_SI_FWD,       HS_SI_BWD,       HS_SI_BWD,      HS_SI_BWD,
						  HS_SI_BWD_INPUT, HS_SI_BWD_INPUT, HS_SI_BWD_WEIGHT};
	int n = shared ? c->pp * c->v : c->nchunks;
	/* the ops of a layer over those lists, found once per kind of layer (a layer's ops are its kind's) */
	size_t per_kind[2 * HS_MIX_COUNT];
	unsigned char known[2 * HS_MIX_COUNT] = {0};
	for (int j = 0; j < n; j++) {
		if (shared && shared[j] >= 0)
			continue;
		int gc = shared ? gchunk_of(c, j / c->v, j % c->v) : j;
		for (int i = 0; i < c->cl[gc]; i++) {
			int l = c->cf[gc] + i;
			unsigned k = c->lkind[l];
			if (k == LKIND_NONE)
				return; /* no memo for it (layer_memo) */
			if (!known[k]) {
				per_kind[k] = 0;
				for (size_t q = 0; q < sizeof per_layer / sizeof *per_layer; q++) {
					if (!(kinds & 1u << list_of[q]))
						continue;
					const hs_oplist *e = layer_memo(c, l, per_layer[q]);
					if (!e)
						return;
					per_kind[k] += e->n;
				}
				known[k] = 1;
			}
			need += per_kind[k];
		}
	}
	need += (size_t)c->pp * c->v * 4 * 64; /* embedding, head, fp8: a few ops each (ops.c) */
	hs_xgrow(&c->g->ops, &c->g->capops, need, sizeof *c->g->ops);
}

/* The model chunk that local chunk `chunk` of `stage` runs. */
static int gchunk_of(const struct ctx *c, int stage, int chunk)
{
	return hs_sched_chunk_of(c->sched, c->pp, c->v, stage, chunk);
}

/* Start an op list in c->tmp. With the memo, c->tmp is the graph's op array itself from index t0 on, so that
 * store() has nothing to copy; else a list of its own, copied in by store(). */
static void begin_list(struct ctx *c)
{
	if (c->memo) {
		c->tmp = (hs_oplist){.ops = c->g->ops, .n = c->g->nops, .cap = c->g->capops};
		c->t0 = c->g->nops;
		c->fp = 0xcbf29ce484222325ull;
		c->groups = 0;
		c->fmark = c->t0;
	} else {
		hs_oplist_clear(&c->tmp);
		c->t0 = 0;
	}
}

/* The list being built (c->tmp from t0). */
static hs_oplist built(const struct ctx *c)
{
	return (hs_oplist){.ops = c->tmp.ops + c->t0, .n = c->tmp.n - c->t0};
}

/* `fp8_gemms`: the chunk's fp8 GEMMs (hs_ops_fp8_gemms of its forward), for the backward's scale update. */
static void ops_chunk(struct ctx *c, int stage, int chunk, enum hs_phase ph, int with_recompute, double fp8_gemms)
{
	const hs_model *m = c->s->model;
	int gchunk = gchunk_of(c, stage, chunk);
	begin_list(c);
	int first = gchunk == 0, last = gchunk == c->nchunks - 1;
	if (ph == HS_PH_FWD) {
		if (first)
			hs_ops_embedding(m, &c->lc, ph, &c->tmp);
		for (int i = 0; i < c->cl[gchunk]; i++)
			layer_ops(c, c->cf[gchunk] + i, ph);
		/* the chunk's layers are one fp8_autocast region (hs_ops_fp8_scale_update) */
		hs_oplist so_far = built(c);
		hs_ops_fp8_scale_update(&c->lc, hs_ops_fp8_gemms(&so_far), ph, &c->tmp);
		if (last)
			hs_ops_head(m, &c->lc, ph, &c->tmp);
		return;
	}
	/* backward runs the layers in reverse: head first, embedding last */
	if (last)
		hs_ops_head(m, &c->lc, ph, &c->tmp);
	for (int i = c->cl[gchunk] - 1; i >= 0; i--) {
		if (with_recompute)
			layer_ops(c, c->cf[gchunk] + i, HS_PH_RECOMPUTE);
		layer_ops(c, c->cf[gchunk] + i, ph);
	}
	hs_ops_fp8_scale_update(&c->lc, fp8_gemms, ph, &c->tmp);
	if (first)
		hs_ops_embedding(m, &c->lc, ph, &c->tmp);
}

/* The list just built goes into the graph (dst[idx] = {first, count}). */
static void store(struct ctx *c, uint32_t (*dst)[2], int idx)
{
	if (c->memo) {
		hs_graph *g = c->g;
		fold(c);
		g->ops = c->tmp.ops;
		g->capops = c->tmp.cap;
		g->nops = c->tmp.n;
		dst[idx][0] = (uint32_t)c->t0;
		dst[idx][1] = (uint32_t)(c->tmp.n - c->t0);
		c->tmp = (hs_oplist){0}; /* the graph's again */
		hs_build *b = c->b;
		hs_xgrow(&b->ranges, &b->capranges, b->nranges + 1, sizeof *b->ranges);
		b->ranges[b->nranges++] = (hs_op_range){dst[idx][0], dst[idx][1], dst[idx][0], c->groups, c->fp};
		return;
	}
	dst[idx][0] = hs_graph_add_ops(c->g, &c->tmp);
	dst[idx][1] = (uint32_t)c->tmp.n;
}

static int same_lists(const struct ctx *c, int s, int k, int t, int j);
static void combined_bwd(struct ctx *c, int s, int k, double n8, int idx);

/* Every (stage, chunk)'s four op lists into the graph; `shared`: a (stage, chunk) whose lists repeat an earlier
 * one's (same_lists) takes that one's ranges instead of a copy (the item walk reads them; a task graph keeps
 * each stage's own, which in-layer traces and the network's per-rank timing index), and only the lists of the
 * kinds (1 << enum hs_si_kind) in `kinds` are built: a schedule runs either the combined backward or its two
 * halves. */
static void build_oplists(struct ctx *c, int shared, unsigned kinds)
{
	size_t n = (size_t)c->pp * c->v;
	c->fwd = hs_xcalloc(n, sizeof *c->fwd);
	c->bwd = hs_xcalloc(n, sizeof *c->bwd);
	c->bin = hs_xcalloc(n, sizeof *c->bin);
	c->bwt = hs_xcalloc(n, sizeof *c->bwt);
	int *alias = NULL;
	if (shared) {
		alias = hs_xmalloc(n * sizeof *alias);
		for (size_t idx = 0; idx < n; idx++) {
			alias[idx] = -1;
			for (size_t q = 0; q < idx && alias[idx] < 0; q++)
				if (same_lists(c, (int)idx / c->v, (int)idx % c->v, (int)q / c->v, (int)q % c->v))
					alias[idx] = (int)q;
		}
	}
	if (!shared)
		kinds = 0xf;
	reserve_ops(c, alias, kinds);
	for (int s = 0; s < c->pp; s++)
		for (int k = 0; k < c->v; k++) {
			int idx = s * c->v + k, e = alias ? alias[idx] : -1;
			if (e >= 0) {
				memcpy(c->fwd[idx], c->fwd[e], sizeof *c->fwd);
				memcpy(c->bwd[idx], c->bwd[e], sizeof *c->bwd);
				memcpy(c->bin[idx], c->bin[e], sizeof *c->bin);
				memcpy(c->bwt[idx], c->bwt[e], sizeof *c->bwt);
				continue;
			}
			ops_chunk(c, s, k, HS_PH_FWD, 0, 0);
			hs_oplist fl = built(c);
			double n8 = hs_ops_fp8_gemms(&fl);
			store(c, c->fwd, idx);
			if (kinds & 1u << HS_SI_BWD)
				combined_bwd(c, s, k, n8, idx);
			if (kinds & 1u << HS_SI_BWD_INPUT) {
				ops_chunk(c, s, k, HS_PH_BWD_INPUT, 1, n8);
				store(c, c->bin, idx);
			}
			if (kinds & 1u << HS_SI_BWD_WEIGHT) {
				ops_chunk(c, s, k, HS_PH_BWD_WEIGHT, 0, n8);
				store(c, c->bwt, idx);
			}
		}
	free(alias);
}

/* The combined backward of (stage s, chunk k): recompute, then input and weight gradients layer by layer. */
static void combined_bwd(struct ctx *c, int s, int k, double n8, int idx)
{
	begin_list(c);
	const hs_model *m = c->s->model;
	int gchunk = gchunk_of(c, s, k);
	if (gchunk == c->nchunks - 1) {
		hs_ops_head(m, &c->lc, HS_PH_BWD_INPUT, &c->tmp);
		hs_ops_head(m, &c->lc, HS_PH_BWD_WEIGHT, &c->tmp);
	}
	for (int i = c->cl[gchunk] - 1; i >= 0; i--) {
		int l = c->cf[gchunk] + i;
		layer_ops(c, l, HS_PH_RECOMPUTE);
		layer_ops(c, l, HS_PH_BWD_INPUT);
		layer_ops(c, l, HS_PH_BWD_WEIGHT);
	}
	hs_ops_fp8_scale_update(&c->lc, n8, HS_PH_BWD_INPUT, &c->tmp);
	if (gchunk == 0) {
		hs_ops_embedding(m, &c->lc, HS_PH_BWD_INPUT, &c->tmp);
		hs_ops_embedding(m, &c->lc, HS_PH_BWD_WEIGHT, &c->tmp);
	}
	store(c, c->bwd, idx);
}

/* Do the lists of (stage s, chunk k) and (stage t, chunk j) hold the same ops? They do when both chunks hold
 * the embedding or neither, the head or neither, and the same kinds of layers in the same order: ops_chunk
 * and build_oplists build a chunk's lists from nothing else (with the memo, a layer's ops from its kind). */
static int same_lists(const struct ctx *c, int s, int k, int t, int j)
{
	int a = gchunk_of(c, s, k), b = gchunk_of(c, t, j), last = c->nchunks - 1;
	if ((a == 0) != (b == 0) || (a == last) != (b == last) || c->cl[a] != c->cl[b])
		return 0;
	const hs_model *m = c->s->model;
	for (int i = 0; i < c->cl[a]; i++) {
		int la = c->cf[a] + i, lb = c->cf[b] + i;
		if (hs_model_layer_mixer(m, la) != hs_model_layer_mixer(m, lb) ||
		    (hs_model_layer_is_moe(m, la) != 0) != (hs_model_layer_is_moe(m, lb) != 0))
			return 0;
	}
	return 1;
}

/* With the memo: the lists of each (stage, chunk) that repeat an earlier (stage, chunk)'s take its first op as
 * their canonical one (b->ranges holds each (stage, chunk)'s four lists in order, as build_oplists stored
 * them). */
static void find_aliases(struct ctx *c)
{
	hs_build *b = c->b;
	if (!c->memo || b->nranges != (size_t)c->pp * c->v * 4)
		return;
	for (int s = 0; s < c->pp; s++)
		for (int k = 0; k < c->v; k++) {
			int idx = s * c->v + k, e = -1;
			for (int q = 0; q < idx && e < 0; q++)
				if (same_lists(c, s, k, q / c->v, q % c->v))
					e = q;
			for (int j = 0; e >= 0 && j < 4; j++) {
				hs_op_range *r = &b->ranges[(size_t)idx * 4 + j];
				const hs_op_range *o = &b->ranges[(size_t)e * 4 + j];
				if (r->count == o->count) /* always, by same_lists */
					r->canon = o->canon;
			}
		}
}

const hs_op_range *hs_build_op_range(const hs_build *b, uint32_t first, uint32_t count)
{
	size_t lo = 0, hi = b->nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->ranges[mid].first < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->nranges && b->ranges[lo].first == first; lo++) /* an empty list shares its first */
		if (b->ranges[lo].count == count)
			return &b->ranges[lo];
	return NULL;
}

/* Per-rep walk state. */
struct walk {
	hs_sched_item *items;   /* the ctx's (shared: 1) or the walk's own */
	size_t n, pos;
	int shared;
	int stage, rep, dp_index;
	int m;                  /* micro-batches this replica runs */
	/* index of the SEND task produced by (mb, chunk) forward / backward; UINT32_MAX when not yet built */
	uint32_t *fsend, *bsend, *ftask, *btask;
	uint32_t last_compute;
	uint32_t prev_compute;  /* ZeRO-3: the compute task before last_compute */
	uint32_t back1, back2;  /* activation offload: the last compute task and the one before it */
	uint32_t last_grad_copy;/* optimizer offload: the last reduced gradient partition's copy out, NONE if none */
	uint32_t *act_d2h;      /* activation offload: [mb * v + chunk] the copy of its forward's activations out */
	uint32_t next_gather;   /* ZeRO-3: the prefetched all-gather of the next unit, NONE if not issued */
	uint32_t *bucket_colls;
	size_t nbucket_colls, capbc;
	size_t *last_weight;    /* [chunk]: position of the chunk's last BWD or BWD_WEIGHT (its gradients final) */
	size_t *first_fwd;      /* [chunk]: position of the chunk's first forward */
};

#define NONE UINT32_MAX

/* At most this many gradient buckets per chunk: its last backward is sliced into one task per bucket
 * (parallelism.dp_bucket sets their size), so all but the last bucket's reduction can overlap compute. A
 * modelling bound on the task count, not a framework constant: with 16, at most 1/16 of a chunk's gradient
 * reduction is exposed by the slicing itself. Also the stride of the buckets' rendezvous ids. */
#define MAX_BUCKETS 16
#define MAX_GATHER_UNITS HS_BUILD_MAX_GATHER_UNITS

/* layer_params_rank of layer l, found once per build and kind of layer: the chunks' parameters and every stage's optimizer (its
 * fp8 weight cast) ask for each layer (that was 1% of a sweep point's instructions). */
static double layer_params(struct ctx *c, int l)
{
	unsigned k = c->lkind[l];
	if (k == LKIND_NONE)
		return layer_params_rank(c->s->model, c->s->par, l);
	if (c->kparams[k] < 0)
		c->kparams[k] = layer_params_rank(c->s->model, c->s->par, l);
	return c->kparams[k];
}

/* Parameters one rank holds for chunk `chunk` of stage `stage`. */
static double chunk_params(struct ctx *c, int stage, int chunk)
{
	const hs_model *m = c->s->model;
	int gchunk = gchunk_of(c, stage, chunk);
	if (c->cparams && c->cparams[gchunk] >= 0) /* a model chunk's, found once: the stages' facts, buckets and
						     * optimizers ask again and again */
		return c->cparams[gchunk];
	double params = 0;
	for (int i = 0; i < c->cl[gchunk]; i++)
		params += layer_params(c, c->cf[gchunk] + i);
	/* the input embedding on the first chunk; the output projection on the last unless it is tied (then
	 * the last stage holds its own copy of the shared matrix, as Megatron does when pp > 1) */
	if (gchunk == 0)
		params += (double)m->vocab * m->hidden / c->s->par->tp;
	if (gchunk == c->nchunks - 1 && (!m->tied_embeddings || c->pp > 1))
		params += (double)m->vocab * m->hidden / c->s->par->tp;
	if (c->cparams)
		c->cparams[gchunk] = params;
	return params;
}

/* Bytes of that chunk's gradients, in the recipe's gradient format (fp32 for both Megatron, which reduces
 * bf16/fp16 training's gradients in fp32 by default, accumulate_allreduce_grads_in_fp32, and PyTorch AMP with
 * fp32 parameters; training.grad_dtype overrides). */
static double chunk_grad_bytes(struct ctx *c, int stage, int chunk)
{
	return chunk_params(c, stage, chunk) * hs_dtype_bytes(c->s->train->grad_dtype);
}

/* ZeRO-3 / FSDP: parameters are sharded over data parallelism and gathered one unit (a group of layers of a
 * model chunk) at a time, before each forward and each backward that needs them, as FSDP does with every
 * transformer block wrapped (reshard after forward) and DeepSpeed ZeRO-3 does with its prefetch. The
 * all-gather of the next unit is issued on the comm stream as soon as the unit before the current one has
 * finished (one ahead: at most two units gathered at once), so it overlaps the current unit's compute.
 * Gradients are reduce-scattered after every backward unit (every micro-batch: the unsharded gradient is not
 * kept), overlapped with the next unit. Weight-gradient items of zero-bubble schedules need no weights.
 *
 * DeepSpeed's buckets (parallelism.zero3): DeepSpeed does not gather a layer group in one call. Its parameter
 * coordinator fetches the next parameters in trace order, at most stage3_prefetch_bucket_size elements ahead,
 * and gathers them coalesced (deepspeed/runtime/zero/partitioned_param_coordinator.py, fetch_sub_module and
 * __all_gather_params, v0.14-v0.16), so each all-gather carries one bucket and each rank sends bucket / dp of
 * it. A unit's gather is then ceil(unit / bucket) all-gathers of equal size, one after the other on the comm
 * stream, each its own task timed by the collective model at that message size and group: how finely the
 * graph is cut into units changes neither the messages nor their count (to one bucket per unit). */
struct z3 {
	int on;           /* zero == 3 and dp > 1 */
	int keep;         /* reshard_after_forward false (FSDP2): each chunk's units are gathered once per step, before
			   * its first forward, and kept across micro-batches; the gradients accumulate unsharded and are
			   * reduce-scattered once, in buckets after the chunk's last backward, as without ZeRO-3 */
	int units;        /* gather units per chunk */
	double bucket;    /* DeepSpeed's prefetch bucket, parameters per all-gather; 0: one all-gather per unit */
	int slots;        /* rendezvous ids per (stage, chunk, micro-batch, what): units x the most buckets a unit has */
	int base;         /* first rendezvous id of ZeRO-3 collectives (symmetry off) */
};

static int z3_gathers(enum hs_si_kind k) { return k != HS_SI_BWD_WEIGHT; }

/* The items that compute weight gradients: the whole backward, or its W half where a schedule splits it. */
static int weight_item(enum hs_si_kind k) { return k == HS_SI_BWD || k == HS_SI_BWD_WEIGHT; }

/* Rendezvous id of a ZeRO-3 collective: (stage, chunk, micro-batch, what, unit); what 0 forward gather, 1
 * backward gather, 2 gradient reduce-scatter. */
static int z3_id(const struct ctx *c, const struct z3 *z, int stage, int chunk, int mb, int what, int unit)
{
	return z->base + (((stage * c->v + chunk) * c->b->part.mb_max + mb) * 3 + what) * z->slots + unit;
}

/* All-gathers of one unit of chunk `chunk` of `stage`: one, or one per prefetch bucket. */
static int z3_buckets(struct ctx *c, const struct z3 *z, int stage, int chunk);

/* Rendezvous ids are per data-parallel group: with DiLoCo sites each site's replicas meet separately. */
static int rv(const struct ctx *c, int dp_index, int id)
{
	int sites = c->s->par->sites > 1 ? c->s->par->sites : 1;
	return id * sites + dp_index / c->dpg;
}

/* The slices of the backward item that finalises a chunk's gradients, one per gradient bucket, and the bytes of
 * the chunk's gradients (*gbytes): each slice's reduction carries gbytes / slices. */
static int bucket_slices(struct ctx *c, int stage, int chunk, double *gbytes)
{
	*gbytes = chunk_grad_bytes(c, stage, chunk);
	int n = (int)ceil(*gbytes / c->s->par->dp_bucket_bytes);
	return n < 1 ? 1 : n > MAX_BUCKETS ? MAX_BUCKETS : n;
}

static int z3_buckets(struct ctx *c, const struct z3 *z, int stage, int chunk)
{
	if (z->bucket <= 0)
		return 1;
	double n = ceil(chunk_params(c, stage, chunk) / z->units / z->bucket);
	return n > 1 ? (int)n : 1;
}

/* The gather of one unit: its all-gathers (one per bucket) in order on the comm stream; returns the last, on
 * which the unit's compute waits. */
static uint32_t z3_gather(struct ctx *c, const struct z3 *z, struct walk *W, hs_sched_item it, int unit, int symmetry)
{
	double params = chunk_params(c, W->stage, it.chunk);
	int nb = z3_buckets(c, z, W->stage, it.chunk);
	uint32_t t = NONE;
	for (int b = 0; b < nb; b++) {
		int slot = unit * (z->slots / z->units) + b;
		hs_task ag = {.kind = HS_T_COLL, .stream = HS_S_COMM, .what = HS_W_PARAM_GATHER, .group = HS_GROUP_DP,
			      .coll = HS_COLL_ALL_GATHER, .rep = W->rep, .peer = -1, .mb = it.mb, .chunk = it.chunk,
			      .bytes = params * hs_dtype_bytes(c->s->train->dtype) / z->units / nb,
			      .rendezvous = symmetry ? -1
						     : rv(c, W->dp_index,
							  z3_id(c, z, W->stage, it.chunk, it.mb,
								it.kind == HS_SI_FWD ? 0 : 1, slot))};
		t = hs_graph_add(c->g, &ag);
		/* resharding: one unit ahead of the compute (the unit before the current one has finished); kept:
		 * as soon as the comm stream is free, as nothing is freed for it. A unit's later buckets follow its
		 * first on the comm stream. */
		if (b == 0 && W->prev_compute != NONE && !z->keep)
			hs_graph_dep(c->g, t, W->prev_compute);
	}
	return t;
}

/* Offload to host memory (parallelism.offload) runs on the host stream, HS_T_HOST tasks timed by the
 * executor at the device's host link (topology/host.h) or, for the CPU optimizer, at the node's host memory. */
static uint32_t host_task(struct ctx *c, struct walk *W, hs_sched_item it, enum hs_task_what what, double bytes,
			  enum hs_stream stream)
{
	hs_task t = {.kind = HS_T_HOST, .stream = (uint8_t)stream, .what = (uint8_t)what, .rep = W->rep, .peer = -1,
		     .mb = it.mb, .chunk = it.chunk, .bytes = bytes, .rendezvous = -1};
	return hs_graph_add(c->g, &t);
}

/* Activation offload moves what a chunk's layers save for backward (hs_memory_layer_activations_at, one
 * micro-batch): Transformer Engine's CPU offloading (transformer_engine/pytorch/cpu_offload.py, 1.x-2.x, used
 * by Megatron-Core's cpu_offloading) copies a layer's saved tensors out on a side stream after its forward and
 * back one layer ahead of its backward; a chunk here is a run of such layers. */
static double chunk_act_bytes(const struct ctx *c, int gchunk)
{
	double a = 0;
	for (int i = 0; i < c->cl[gchunk]; i++)
		a += hs_memory_layer_activations_at(c->s->model, &c->lc, c->cf[gchunk] + i);
	return a;
}

/* The state of one step's build: every rep's walk through its schedule and what the items share. */
struct step {
	struct ctx *c;
	struct walk *w;      /* [nreps] */
	struct z3 z;
	int ndp;             /* reps per stage: 1 with symmetry, dp without */
	int symmetry;
	double act_bytes;    /* activation (and input-gradient) bytes sent between stages */
};

/* Append rep r's next schedule item: its compute task (sliced by gradient bucket or ZeRO-3 unit, with the
 * bucket reductions and parameter gathers those slices carry) and its send to the neighbour stage. Returns 0
 * without adding anything when the item needs a neighbour's task that does not exist yet. */
static int emit_item(struct step *sb, int r)
{
	struct ctx *c = sb->c;
	const hs_parallel *p = c->s->par;
	hs_graph *g = c->g;
	struct walk *W = &sb->w[r];
	const struct z3 *z = &sb->z;
	int v = c->v, ndp = sb->ndp, symmetry = sb->symmetry;
	double act_bytes = sb->act_bytes;
	hs_sched_item it = W->items[W->pos];
	int idx = it.mb * v + it.chunk;
	int gchunk = gchunk_of(c, W->stage, it.chunk);
	int fwd = it.kind == HS_SI_FWD;
	uint32_t need = NONE;
	int have = 1;
	if (fwd && gchunk > 0) {
		int ps, pc;
		hs_sched_place(c->sched, p->pp, v, W->m, it.mb, gchunk - 1, &ps, &pc);
		need = sb->w[ps * ndp + W->dp_index].fsend[it.mb * v + pc];
		have = need != NONE;
	} else if ((it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_INPUT) && gchunk < c->nchunks - 1) {
		int ns, nc;
		hs_sched_place(c->sched, p->pp, v, W->m, it.mb, gchunk + 1, &ns, &nc);
		need = sb->w[ns * ndp + W->dp_index].bsend[it.mb * v + nc];
		have = need != NONE;
	}
	if (!have)
		return 0;
	int sidx = W->stage * v + it.chunk;
	uint32_t(*ol)[2] = fwd ? c->fwd : it.kind == HS_SI_BWD ? c->bwd
				 : it.kind == HS_SI_BWD_INPUT ? c->bin : c->bwt;
	/* the last backward item of a chunk finalises its gradients: slice it by bucket */
	int finalises = 0;
	/* gradients are final after the chunk's last weight-gradient item: its last BWD, or its last
	 * BWD_WEIGHT where the schedule splits the backward */
	if ((!z->on || z->keep) && weight_item(it.kind))
		finalises = W->last_weight[it.chunk] == W->pos && c->dpg > 1;
	int nslices = 1;
	double gbytes = 0;
	if (finalises)
		nslices = bucket_slices(c, W->stage, it.chunk, &gbytes);
	int z3_rs = z->on && !z->keep && weight_item(it.kind);
	/* kept parameters: only the chunk's first forward gathers (by unit), and nothing is prefetched later */
	int gathers = z->on && z3_gathers(it.kind) && (!z->keep || (fwd && W->first_fwd[it.chunk] == W->pos));
	if (z->on && !z->keep) {
		nslices = z->units;
		gbytes = chunk_grad_bytes(c, W->stage, it.chunk);
	} else if (gathers) {
		nslices = z->units;
	}
	/* activation offload, layer by layer as TE does it: the forward is cut into units (a layer each, at most
	 * MAX_GATHER_UNITS per chunk, as ZeRO-3's) and each unit's saved activations go out once it has computed,
	 * overlapping the next; the backward that first reads them (BWD, or BWD_INPUT where it is split) is cut
	 * the same way and each unit's copy back is issued once the compute two units back has ended, so it
	 * overlaps the unit before it, and after the chunk's copies out have left */
	int act_in = p->offload_activations && (it.kind == HS_SI_BWD || it.kind == HS_SI_BWD_INPUT) &&
		     W->act_d2h[idx] != NONE;
	int act_out = p->offload_activations && fwd;
	if ((act_in || act_out) && nslices == 1 && !finalises)
		nslices = z->units;
	double act_slice = act_in || act_out ? chunk_act_bytes(c, gchunk) / nslices : 0;
	uint32_t tk = NONE;
	for (int sl = 0; sl < nslices; sl++) {
		uint32_t gather = NONE;
		if (gathers) {
			gather = W->next_gather != NONE ? W->next_gather
							: z3_gather(c, z, W, it, sl, symmetry);
			W->next_gather = NONE;
		}
		uint32_t h2d = NONE;
		if (act_in) {
			h2d = host_task(c, W, it, HS_W_OFFLOAD, act_slice, HS_S_HOST_IN);
			hs_graph_dep(g, h2d, W->act_d2h[idx]);
			if (W->back2 != NONE)
				hs_graph_dep(g, h2d, W->back2);
		}
		hs_task t = {.kind = HS_T_COMPUTE, .stream = HS_S_COMPUTE,
			     .what = fwd ? HS_W_FWD
				 : it.kind == HS_SI_BWD ? HS_W_BWD
				 : it.kind == HS_SI_BWD_INPUT ? HS_W_BWD_INPUT : HS_W_BWD_WEIGHT,
			     .rep = r, .peer = -1, .mb = it.mb, .chunk = it.chunk,
			     .op_first = ol[sidx][0], .op_count = ol[sidx][1],
			     .scale = 1.0 / nslices, .rendezvous = -1};
		tk = hs_graph_add(g, &t);
		if (sl == 0) {
			if (need != NONE)
				hs_graph_dep(g, tk, need);
			if (!fwd && W->ftask[idx] != NONE)
				hs_graph_dep(g, tk, W->ftask[idx]);
		}
		if (gather != NONE)
			hs_graph_dep(g, tk, gather);
		if (h2d != NONE)
			hs_graph_dep(g, tk, h2d);
		W->back2 = W->back1;
		W->back1 = tk;
		if (act_out) { /* this unit's saved activations leave for the host */
			uint32_t d2h = host_task(c, W, it, HS_W_OFFLOAD, act_slice, HS_S_HOST);
			hs_graph_dep(g, d2h, tk);
			W->act_d2h[idx] = d2h;
		}
		if (z->on && !z->keep) {
			W->prev_compute = W->last_compute;
			W->last_compute = tk;
			/* prefetch the next unit's parameters: the next slice, or the first of
			 * the next item of the schedule */
			hs_sched_item nx = it;
			int nsl = sl + 1, has = 1;
			if (nsl == nslices) {
				has = W->pos + 1 < W->n;
				if (has)
					nx = W->items[W->pos + 1];
				nsl = 0;
			}
			if (has && z3_gathers(nx.kind))
				W->next_gather = z3_gather(c, z, W, nx, nsl, symmetry);
		}
		if (finalises || z3_rs) {
			hs_task cl = {.kind = HS_T_COLL, .stream = HS_S_COMM,
				      .what = HS_W_GRAD_REDUCE, .group = HS_GROUP_DP,
				      .coll = p->zero >= 1 ? HS_COLL_REDUCE_SCATTER
							   : HS_COLL_ALL_REDUCE,
				      .rep = r, .peer = -1, .mb = it.mb, .chunk = it.chunk,
				      .bytes = gbytes / nslices,
				      .rendezvous = symmetry ? -1
					  : rv(c, W->dp_index,
					       z3_rs ? z3_id(c, z, W->stage, it.chunk, it.mb, 2, sl)
						     : (sidx * MAX_BUCKETS + sl))};
			uint32_t ci = hs_graph_add(g, &cl);
			hs_graph_dep(g, ci, tk);
			hs_xgrow(&W->bucket_colls, &W->capbc, W->nbucket_colls + 1, sizeof(uint32_t));
			W->bucket_colls[W->nbucket_colls++] = ci;
			if (p->offload_optimizer) { /* ZeRO-Offload: the reduced partition leaves at once */
				/* a reduce-scatter's total input over the group: this rank's partition */
				uint32_t cp = host_task(c, W, it, HS_W_OFFLOAD, cl.bytes / c->dpg, HS_S_HOST);
				hs_graph_dep(g, cp, ci);
				W->last_grad_copy = cp;
			}
		}
	}
	W->last_compute = tk;
	if (fwd)
		W->ftask[idx] = tk;
	else
		W->btask[idx] = tk;
	/* send activations forward / input gradients backward */
	int sends = fwd ? gchunk < c->nchunks - 1
			: (it.kind != HS_SI_BWD_WEIGHT && gchunk > 0);
	if (sends) {
		int tg = fwd ? gchunk + 1 : gchunk - 1, ts, tc;
		hs_sched_place(c->sched, p->pp, v, W->m, it.mb, tg, &ts, &tc);
		int peer = ts * ndp + W->dp_index;
		hs_task st = {.kind = HS_T_SEND, .stream = HS_S_P2P, .what = HS_W_P2P, .rep = r,
			      .peer = peer, .mb = it.mb, .chunk = it.chunk, .bytes = act_bytes,
			      .rendezvous = -1};
		uint32_t si = hs_graph_add(g, &st);
		hs_graph_dep(g, si, tk);
		if (fwd)
			W->fsend[idx] = si;
		else
			W->bsend[idx] = si;
	}
	W->pos++;
	return 1;
}

/* Rep r (stage r / ndp, replica r % ndp): its schedule's items and the task slots its neighbours look up. */
static int start_walk(struct ctx *c, struct walk *W, int r, int ndp, int symmetry, hs_err *err)
{
	const hs_parallel *p = c->s->par;
	const hs_partition *part = &c->b->part;
	int v = c->v;
	W->stage = r / ndp;
	W->dp_index = r % ndp;
	W->rep = r;
	c->g->reps[r] = (hs_rep){.stage = W->stage, .dp_index = W->dp_index,
				 .multiplicity = p->tp * p->cp * (symmetry ? p->dp : 1)};
	W->m = symmetry ? part->mb_max : part->dp_mb[W->dp_index];
	if (c->memo && W->m == part->mb_max && W->m >= 1) {
		if (!c->items) {
			hs_sched_item *const *kit;
			const size_t *kn;
			int got = c->sc ? hs_sched_cache_get(c->sc, p->schedule, p->pp, W->m, v, &kit, &kn, &c->facts, err)
					: 1;
			if (got < 0)
				return -1;
			if (got == 0) { /* the thread's, kept across builds: read, never freed here */
				c->items = (hs_sched_item **)kit;
				c->nitems = (size_t *)kn;
				c->items_kept = 1;
			}
		}
		if (!c->items) {
			hs_sched_item **it = hs_xcalloc((size_t)p->pp, sizeof *it);
			size_t *n = hs_xcalloc((size_t)p->pp, sizeof *n);
			if (hs_sched_build_stages(p->schedule, p->pp, W->m, v, it, n, err)) {
				free(it);
				free(n);
				return -1;
			}
			c->items = it;
			c->nitems = n;
			c->own_peak = hs_xmalloc((size_t)p->pp * sizeof *c->own_peak);
			hs_sched_facts_of(it, n, p->pp, c->own_peak, &c->facts);
		}
		W->items = c->items[W->stage];
		W->n = c->nitems[W->stage];
		W->shared = 1;
	} else if (hs_sched_build(p->schedule, p->pp, W->stage, W->m, v, &W->items, &W->n, err)) {
		return -1;
	}
	return 0;
}

/* What rep W's walk keeps as it makes tasks (emit_item): set up only where the step is built as tasks. */
static void walk_arrays(struct ctx *c, struct walk *W)
{
	int v = c->v;
	size_t nmc = (size_t)W->m * v;
	W->fsend = hs_xmalloc(nmc * sizeof(uint32_t));
	W->bsend = hs_xmalloc(nmc * sizeof(uint32_t));
	W->ftask = hs_xmalloc(nmc * sizeof(uint32_t));
	W->btask = hs_xmalloc(nmc * sizeof(uint32_t));
	for (size_t i = 0; i < nmc; i++)
		W->fsend[i] = W->bsend[i] = W->ftask[i] = W->btask[i] = NONE;
	W->last_compute = W->prev_compute = W->next_gather = W->back1 = W->back2 = W->last_grad_copy = NONE;
	W->act_d2h = hs_xmalloc(nmc * sizeof(uint32_t));
	for (size_t i = 0; i < nmc; i++)
		W->act_d2h[i] = NONE;
	/* which item is a chunk's first forward and last weight-gradient item, found once: asking at every item
	 * made the build quadratic in the micro-batches (40% of `hetsim validate` on the Korthikanti manifest) */
	W->first_fwd = hs_xcalloc((size_t)v, sizeof *W->first_fwd);
	for (size_t q = W->n; q-- > 0;)
		if (W->items[q].kind == HS_SI_FWD)
			W->first_fwd[W->items[q].chunk] = q;
	W->last_weight = hs_xcalloc((size_t)v, sizeof *W->last_weight);
	for (size_t q = 0; q < W->n; q++)
		if (weight_item(W->items[q].kind))
			W->last_weight[W->items[q].chunk] = q;
}

/* The stage whose gradients this stage's are summed with before the optimizer: the other end of the pipeline
 * for tied embeddings, the mirror stage pp-1-s under DualPipe (both copies of the same chunks). */
static int pair_of(const struct ctx *c, int stage)
{
	if (c->sched == HS_SCHED_DUALPIPE)
		return c->pp - 1 - stage;
	return stage == 0 ? c->pp - 1 : 0;
}

/* Bytes of host memory one parameter's CPU Adam step streams: DeepSpeed's CPU Adam (csrc/includes/cpu_adam.h,
 * Step_AVX, v0.9-v0.16) reads the fp32 parameter, gradient, exp_avg and exp_avg_sq (16 B), writes the
 * parameter and both moments back (12 B) and, with the half-precision copy ZeRO-Offload uses, writes the
 * parameter in the training dtype for the device (added at the call). Memory-bound on any server CPU: Adam
 * is a few FLOPs per 30 bytes (Ren et al. 2021, "ZeRO-Offload", section 4.1: the CPU optimizer is limited by
 * memory bandwidth once vectorised). */
#define CPU_ADAM_BYTES 28.0

/* ZeRO-Offload (Ren et al. 2021, USENIX ATC, section 4; DeepSpeed stage_1_and_2.py and stage3.py with
 * offload_optimizer: cpu): each reduced gradient partition is copied to host memory as soon as its bucket is
 * reduced, overlapping the rest of the backward pass on its own stream; the CPU runs Adam on the rank's
 * partition once every gradient is there; the updated parameters, in the training dtype, are copied back
 * before the step ends (the optional one-step delayed update is not modelled). Returns the copy back, on
 * which the device's remaining optimizer work (an fp8 weight cast) and ZeRO 1-2's parameter all-gather wait. */
static uint32_t offload_optimizer(struct step *sb, int r, double shard, const uint32_t *emb)
{
	struct ctx *c = sb->c;
	hs_graph *g = c->g;
	struct walk *W = &sb->w[r];
	hs_sched_item it = {.kind = HS_SI_BWD, .mb = 0, .chunk = 0};
	double gb = hs_dtype_bytes(c->s->train->grad_dtype), db = hs_dtype_bytes(c->s->train->dtype);
	/* each reduced bucket's partition was copied out when it was reduced (emit_item); with nothing reduced (one
	 * replica) the whole partition goes after the backward */
	uint32_t last = W->last_grad_copy;
	if (last == NONE) {
		last = host_task(c, W, it, HS_W_OFFLOAD, shard * gb, HS_S_HOST);
		if (W->last_compute != NONE)
			hs_graph_dep(g, last, W->last_compute);
	}
	uint32_t cpu = host_task(c, W, it, HS_W_CPU_OPTIMIZER, shard * (CPU_ADAM_BYTES + db), HS_S_HOST);
	hs_graph_dep(g, cpu, last);
	if (W->last_compute != NONE)
		hs_graph_dep(g, cpu, W->last_compute);
	if (emb && emb[r] != NONE) {
		int other = pair_of(c, W->stage) * sb->ndp + W->dp_index;
		hs_graph_dep(g, cpu, emb[r]);
		hs_graph_dep(g, cpu, emb[other]);
	}
	uint32_t back = host_task(c, W, it, HS_W_OFFLOAD, shard * db, HS_S_HOST_IN);
	hs_graph_dep(g, back, cpu);
	return back;
}

/* Stage st's parameters and memory (rep r walks it), which need the schedule's items and the partition but no
 * task: found before the walk, so that a point that does not fit is refused before its graph is built. */
static void stage_info(struct step *sb, int r, int m, int maxchunk)
{
	struct ctx *c = sb->c;
	const hs_workload *s = c->s;
	const hs_parallel *p = s->par;
	hs_build *out = c->b;
	const hs_partition *part = &out->part;
	const struct z3 z = sb->z;
	int v = c->v;
	struct walk *W = &sb->w[r];
	int st = W->stage;
	double params = 0;
	for (int k = 0; k < v; k++)
		params += chunk_params(c, st, k);
	hs_stage_info *si = &out->stages[st];
	si->params = params;
	si->grad_bytes = params * hs_dtype_bytes(s->train->grad_dtype);
	si->layers = part->stage_layers[st];
	/* the peak of the items this rep walked when they are the stage's at m micro-batches, else rebuilt */
	int walked = c->memo && W->m == m;
	si->in_flight = W->shared ? (int)c->facts.peak[st] /* found with the items */
		      : walked	  ? (int)hs_sched_peak(W->items, W->n, NULL)
				  : hs_sched_in_flight(p->schedule, p->pp, st, m, v);
	/* chunks of different sizes (an uneven interleaved split): weigh the held ones by their layers */
	double in_layers = 0;
	int uneven = 0;
	for (int k = 0; k < v; k++)
		uneven |= c->cl[gchunk_of(c, st, k)] != c->cl[gchunk_of(c, st, 0)];
	if (uneven) {
		double *w = hs_xmalloc((size_t)v * sizeof *w);
		for (int k = 0; k < v; k++)
			w[k] = c->cl[gchunk_of(c, st, k)];
		in_layers = walked ? hs_sched_peak(W->items, W->n, w)
				   : hs_sched_in_flight_weighted(p->schedule, p->pp, st, m, v, w);
		free(w);
	}
	hs_mem_cfg mc = {.layer = c->lc, .pp = p->pp, .dp = c->dpg, .zero_stage = p->zero, .fsdp_keep = p->fsdp_keep,
			 .layers_on_rank = si->layers, .first_stage = st == 0, .last_stage = st == p->pp - 1,
			 .in_flight = si->in_flight, .comm_buffer_bytes = 0, .vstages = v,
			 .first_layer = c->cf[gchunk_of(c, st, 0)], .gather_layers = (maxchunk + z.units - 1) / z.units,
			 .z3_live_params = p->z3_prefetch_bucket <= 0 ? 0
					   : p->z3_max_live > p->z3_prefetch_bucket ? p->z3_max_live
					   : p->z3_prefetch_bucket,
			 .in_flight_layers = in_layers, .offload_optimizer = p->offload_optimizer,
			 .offload_activations = p->offload_activations};
	hs_memory_rank(s->model, &mc, &si->mem);
}

/* Stage st's optimizer ops into the graph (ol = {first, count}): the update of its parameters (or of its ZeRO
 * shard) on the device unless the optimizer is offloaded, and the fp8 weight cast. */
static void optimizer_ops(struct ctx *c, int st, uint32_t ol[2])
{
	const hs_parallel *p = c->s->par;
	double params = c->b->stages[st].params;
	double shard = p->zero >= 1 ? params / c->dpg : params;
	hs_oplist_clear(&c->tmp);
	if (!p->offload_optimizer)
		hs_ops_optimizer(&c->lc, shard, &c->tmp);
	/* fp8 weights cached for the step: cast once, after the update (the unsharded layer weights, which the
	 * first micro-batch of the next step would cast; norms and biases are a rounding error) */
	double layer_w = 0;
	for (int k = 0; k < c->v; k++) {
		int gc = gchunk_of(c, st, k);
		for (int i = 0; i < c->cl[gc]; i++)
			layer_w += layer_params(c, c->cf[gc] + i);
	}
	hs_ops_fp8_weight_cast(&c->lc, layer_w, &c->tmp);
	ol[0] = hs_graph_add_ops(c->g, &c->tmp);
	ol[1] = (uint32_t)c->tmp.n;
	if (c->memo && c->tmp.n) {
		/* a range of its own, so that the thread's range cache keeps its cost across steps (a stage's update
		 * repeats from point to point; timing it afresh each time was 2% of a sweep point) */
		hs_build *b = c->b;
		hs_xgrow(&b->ranges, &b->capranges, b->nranges + 1, sizeof *b->ranges);
		b->ranges[b->nranges++] = (hs_op_range){ol[0], ol[1], ol[0], hs_ops_groups(c->tmp.ops, c->tmp.n),
							fp_ops(0x6c62272e07bb0142ull ^ c->tmp.n, c->tmp.ops, c->tmp.n)};
	}
}

/* Close rep r's step: the optimizer after its last compute and every gradient bucket, then (ZeRO 1-2) the
 * all-gather of the updated parameters (the facts of its stage were found before the walk: stage_info). */
static void finish_rep(struct step *sb, int r, int grad_ids, const uint32_t *emb)
{
	struct ctx *c = sb->c;
	const hs_workload *s = c->s;
	const hs_parallel *p = s->par;
	hs_graph *g = c->g;
	hs_build *out = c->b;
	int symmetry = sb->symmetry;
	struct walk *W = &sb->w[r];
	int st = W->stage;
	double params = out->stages[st].params; /* stage_info's, before the walk */
	double shard = p->zero >= 1 ? params / c->dpg : params;
	uint32_t ol[2];
	optimizer_ops(c, st, ol);
	hs_task t = {.kind = HS_T_COMPUTE, .stream = HS_S_COMPUTE, .what = HS_W_OPTIMIZER, .rep = r,
		     .peer = -1, .op_first = ol[0], .op_count = ol[1], .scale = 1.0, .rendezvous = -1};
	uint32_t after = p->offload_optimizer ? offload_optimizer(sb, r, shard, emb) : NONE;
	uint32_t ot = hs_graph_add(g, &t);
	if (after != NONE) /* the updated parameters are back on the device */
		hs_graph_dep(g, ot, after);
	if (W->last_compute != NONE)
		hs_graph_dep(g, ot, W->last_compute);
	for (size_t q = 0; q < W->nbucket_colls; q++)
		hs_graph_dep(g, ot, W->bucket_colls[q]);
	if (emb && emb[r] != NONE) { /* the tied embedding's (DualPipe: both copies') gradients are summed first */
		int other = pair_of(c, st) * sb->ndp + W->dp_index;
		hs_graph_dep(g, ot, emb[r]);
		hs_graph_dep(g, ot, emb[other]);
	}
	if (p->zero >= 1 && p->zero < 3 && c->dpg > 1) {
		hs_task ag = {.kind = HS_T_COLL, .stream = HS_S_COMM, .what = HS_W_PARAM_GATHER,
			      .group = HS_GROUP_DP, .coll = HS_COLL_ALL_GATHER, .rep = r, .peer = -1,
			      .bytes = params * hs_dtype_bytes(s->train->dtype),
			      .rendezvous = symmetry ? -1 : rv(c, W->dp_index, grad_ids + st)};
		uint32_t ai = hs_graph_add(g, &ag);
		hs_graph_dep(g, ai, ot);
	}
}

/* Tied embeddings over a pipeline (pp > 1): the first stage's input embedding and the last stage's output
 * layer are copies of one matrix, so their gradients are summed before the optimizer: Megatron's embedding
 * group, the first and the last pipeline rank of each (TP, CP, DP) position, all-reduces the word embeddings'
 * main_grad after the data-parallel reduction (megatron/core/distributed/finalize_model_grads.py,
 * _allreduce_word_embedding_grads, after finish_grad_sync). An all-reduce of two ranks moves each rank's buffer
 * to the other once (a ring of two: reduce-scatter and all-gather of half each), so it is a send each way
 * between the two reps, after each one's last compute and gradient reduction. Returns [nreps] sends (NONE for
 * the other stages), or NULL when there is nothing to sum. */
static uint32_t *tied_embedding_sync(struct step *sb)
{
	struct ctx *c = sb->c;
	const hs_parallel *p = c->s->par;
	const hs_model *m = c->s->model;
	int dual = c->sched == HS_SCHED_DUALPIPE;
	if (!dual && (!m->tied_embeddings || p->pp < 2))
		return NULL;
	hs_graph *g = c->g;
	uint32_t *emb = hs_xmalloc((size_t)g->nreps * sizeof *emb);
	double bytes = (double)m->vocab * m->hidden / p->tp * hs_dtype_bytes(c->s->train->grad_dtype);
	for (int r = 0; r < g->nreps; r++) {
		struct walk *W = &sb->w[r];
		emb[r] = NONE;
		if (!dual && W->stage != 0 && W->stage != p->pp - 1)
			continue;
		if (dual) {
			/* DualPipe: ranks s and pp-1-s hold the same two model chunks (one as chunk 0, the other as
			 * chunk 1), so each copy's gradient is the sum of both; the embedding and the output layer are
			 * both on ranks 0 and pp-1, so a tied matrix needs nothing more. After ZeRO's reduce-scatter
			 * each rank sums only its shard. */
			bytes = 0;
			for (int k = 0; k < c->v; k++)
				bytes += chunk_grad_bytes(c, W->stage, k);
			if (p->zero >= 1)
				bytes /= c->dpg;
		}
		int peer = pair_of(c, W->stage) * sb->ndp + W->dp_index;
		hs_task st = {.kind = HS_T_SEND, .stream = HS_S_P2P, .what = HS_W_P2P, .rep = r, .peer = peer,
			      .mb = 0, .chunk = 0, .bytes = bytes, .rendezvous = -1};
		emb[r] = hs_graph_add(g, &st);
		if (W->last_compute != NONE)
			hs_graph_dep(g, emb[r], W->last_compute);
		for (size_t q = 0; q < W->nbucket_colls; q++)
			hs_graph_dep(g, emb[r], W->bucket_colls[q]);
	}
	return emb;
}

int hs_build_step(const hs_workload *s, hs_partition *part, int symmetry, hs_build *out, hs_err *err)
{
	return hs_build_step_checked(s, part, symmetry, NULL, out, err);
}

/* Can the step be given as schedule items (hs_pipe)? Where emit_item and finish_rep would add only what
 * pipe_step.c walks: compute items sliced by bucket, their reductions, sends, the optimizer and ZeRO 1-2's
 * gather. The memo must be on (the items are the shared ones, and the reuse switch stays a check of it). */
static int pipe_applies(const struct ctx *c, const struct step *sb)
{
	const hs_parallel *p = c->s->par;
	if (!c->memo || !sb->symmetry || !c->items || sb->z.on || p->zero >= 3 || p->offload_optimizer ||
	    p->offload_activations || c->sched == HS_SCHED_DUALPIPE)
		return 0;
	if (c->s->model->tied_embeddings && p->pp > 1) /* tied_embedding_sync's sends */
		return 0;
	for (int r = 0; r < c->g->nreps; r++)
		if (!sb->w[r].shared)
			return 0;
	return 1;
}

/* The step as items: the schedules move from the ctx into out->pipe, and each (stage, chunk)'s op lists, its
 * buckets and each stage's optimizer go in once. */
static void fill_pipe(struct ctx *c, struct step *sb)
{
	const hs_parallel *p = c->s->par;
	hs_build *out = c->b;
	int pp = c->pp, v = c->v;
	hs_pipe *q = hs_xcalloc(1, sizeof *q);
	*q = (hs_pipe){.v = v, .nchunks = c->nchunks, .sched = c->sched, .m = out->part.mb_max, .items = c->items,
		       .nitems = c->nitems, .own_items = !c->items_kept, .act_bytes = sb->act_bytes,
		       .grad_coll = p->zero >= 1 ? HS_COLL_REDUCE_SCATTER : HS_COLL_ALL_REDUCE, .reduce = c->dpg > 1};
	c->items = NULL;
	c->nitems = NULL;
	build_oplists(c, 1, c->facts.kinds);
	size_t n = (size_t)pp * v;
	q->ol = hs_xmalloc(n * sizeof *q->ol);
	q->nslices = hs_xmalloc(n * sizeof *q->nslices);
	q->bucket_bytes = hs_xmalloc(n * sizeof *q->bucket_bytes);
	for (size_t i = 0; i < n; i++) {
		memcpy(q->ol[i][HS_SI_FWD], c->fwd[i], sizeof *c->fwd);
		memcpy(q->ol[i][HS_SI_BWD], c->bwd[i], sizeof *c->bwd);
		memcpy(q->ol[i][HS_SI_BWD_INPUT], c->bin[i], sizeof *c->bin);
		memcpy(q->ol[i][HS_SI_BWD_WEIGHT], c->bwt[i], sizeof *c->bwt);
		double gbytes = 0;
		q->nslices[i] = q->reduce ? bucket_slices(c, (int)i / v, (int)i % v, &gbytes) : 1;
		q->bucket_bytes[i] = gbytes / q->nslices[i]; /* emit_item's expression */
	}
	q->opt = hs_xmalloc((size_t)pp * sizeof *q->opt);
	q->gather_bytes = hs_xcalloc((size_t)pp, sizeof *q->gather_bytes);
	for (int st = 0; st < pp; st++) {
		optimizer_ops(c, st, q->opt[st]);
		if (p->zero >= 1 && p->zero < 3 && c->dpg > 1)
			q->gather_bytes[st] = out->stages[st].params * hs_dtype_bytes(c->s->train->dtype);
	}
	out->pipe = q;
}

static int build(const hs_workload *s, hs_partition *part, int symmetry, hs_build_check check, int as_items,
		 hs_sched_cache *sc, hs_build *out, hs_err *err);

int hs_build_step_checked(const hs_workload *s, hs_partition *part, int symmetry, hs_build_check check,
			  hs_build *out, hs_err *err)
{
	return build(s, part, symmetry, check, 0, NULL, out, err);
}

int hs_build_step_items(const hs_workload *s, hs_partition *part, int symmetry, hs_build_check check,
			hs_sched_cache *sc, hs_build *out, hs_err *err)
{
	return build(s, part, symmetry, check, 1, sc, out, err);
}

static int build(const hs_workload *s, hs_partition *part, int symmetry, hs_build_check check, int as_items,
		 hs_sched_cache *sc, hs_build *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	const hs_parallel *p = s->par;
	struct ctx c = {.s = s, .b = out, .g = &out->graph, .pp = p->pp, .sched = p->schedule, .memo = hs_build_memo_on(),
			.sc = sc};
	c.v = hs_sched_chunks(p->schedule, p->vstages);
	c.nchunks = hs_sched_model_chunks(p->schedule, p->pp, p->vstages);
	c.dpg = hs_build_dp_group_size(p);
	out->part = *part;
	memset(part, 0, sizeof *part);
	part = &out->part;
	if (part->uneven_dp)
		symmetry = 0; /* replicas run different work: simulate each */
	/* model chunk g (hs_sched_chunk_of: g = k pp + st for chunk k of stage st under Megatron's interleaving)
	 * holds chunk_layers[g] layers, the model's
	 * layers in order */
	c.cl = hs_xcalloc((size_t)c.nchunks, sizeof *c.cl);
	c.cparams = hs_xmalloc((size_t)c.nchunks * sizeof *c.cparams);
	for (int gc = 0; gc < c.nchunks; gc++)
		c.cparams[gc] = -1;
	c.cf = hs_xcalloc((size_t)c.nchunks + 1, sizeof *c.cf);
	for (int gc = 0; gc < c.nchunks; gc++) {
		c.cl[gc] = part->chunk_layers[gc];
		c.cf[gc + 1] = c.cf[gc] + c.cl[gc];
	}
	for (size_t k = 0; k < sizeof c.kparams / sizeof *c.kparams; k++)
		c.kparams[k] = -1;
	c.lkind = hs_xmalloc((size_t)(c.cf[c.nchunks] > 0 ? c.cf[c.nchunks] : 1));
	for (int l = 0; l < c.cf[c.nchunks]; l++) {
		unsigned k = (unsigned)hs_model_layer_mixer(s->model, l), moe = hs_model_layer_is_moe(s->model, l) != 0;
		c.lkind[l] = k < HS_MIX_COUNT ? (unsigned char)(k * 2 + moe) : LKIND_NONE;
	}
	hs_build_layer_cfg(s, &c.lc);
	out->pp = p->pp;
	out->stages = hs_xcalloc((size_t)p->pp, sizeof *out->stages);
	double tokens = (double)s->train->global_batch * s->train->seq_len;
	out->model_flops = hs_model_flops_per_step(s->model, tokens, s->train->seq_len, 1);
	hs_graph *g = c.g;
	int ndp = symmetry ? 1 : p->dp;
	g->nreps = p->pp * ndp;
	g->reps = hs_xcalloc((size_t)g->nreps, sizeof *g->reps);
	int m = part->mb_max, v = c.v;
	struct walk *w = hs_xcalloc((size_t)g->nreps, sizeof *w);
	int rc = 0;
	for (int r = 0; r < g->nreps; r++)
		if (start_walk(&c, &w[r], r, ndp, symmetry, err)) {
			rc = -1;
			goto out;
		}
	/* gather units: one layer each up to MAX_GATHER_UNITS layers per chunk (the smallest chunk sets the count) */
	int minchunk = 0, maxchunk = 0; /* over chunks with layers: an embedding-only chunk gathers no layer */
	for (int gc = 0; gc < c.nchunks; gc++) {
		if (c.cl[gc] > 0 && (minchunk == 0 || c.cl[gc] < minchunk))
			minchunk = c.cl[gc];
		maxchunk = c.cl[gc] > maxchunk ? c.cl[gc] : maxchunk;
	}
	struct z3 z = {.on = p->zero >= 3 && c.dpg > 1, .keep = p->fsdp_keep, .units = minchunk < MAX_GATHER_UNITS ? minchunk : MAX_GATHER_UNITS,
		       .bucket = p->z3_prefetch_bucket, .base = p->pp * v * MAX_BUCKETS + p->pp};
	if (z.units < 1)
		z.units = 1;
	int nbmax = 1;
	for (int st = 0; z.on && st < p->pp; st++)
		for (int k = 0; k < v; k++) {
			int nb = z3_buckets(&c, &z, st, k);
			nbmax = nb > nbmax ? nb : nbmax;
		}
	z.slots = z.units * nbmax;

	/* Activation bytes between stages: micro_batch x seq/cp x hidden, divided by tp under sequence
	 * parallelism (Megatron scatters them across the TP group). */
	double act_bytes = (double)s->train->micro_batch * s->train->seq_len / p->cp * s->model->hidden *
			   hs_dtype_bytes(s->train->dtype) / (p->sequence_parallel ? p->tp : 1);
	struct step sb = {.c = &c, .w = w, .z = z, .ndp = ndp, .symmetry = symmetry, .act_bytes = act_bytes};
	/* Rendezvous ids for DP collectives across replicas: (stage, chunk, bucket slice) -> id; the parameter
	 * all-gather of stage s takes pp * v * MAX_BUCKETS + s. With symmetry a collective has one member: no id. */
	int grad_ids = p->pp * v * MAX_BUCKETS;
	int pipe = as_items && pipe_applies(&c, &sb);
	if (c.memo && !pipe) {
		/* room for the usual tasks at once (a compute task and a send per item, the bucket slices and their
		 * reductions, the optimizer and its gather), so the walk does not copy the graph as it grows; it
		 * still grows past this where an item carries more (ZeRO-3 units, offload copies) */
		size_t items = 0;
		for (int r = 0; r < g->nreps; r++)
			items += w[r].n;
		size_t tasks = 2 * items + (size_t)g->nreps * (2 * (size_t)v * MAX_BUCKETS + 4);
		hs_xgrow(&g->tasks, &g->captasks, tasks, sizeof *g->tasks);
		hs_xgrow(&g->deps, &g->capdeps, 2 * tasks, sizeof *g->deps);
	}
	if (!symmetry)
		g->nrendezvous = (z.on ? z3_id(&c, &z, p->pp, 0, 0, 0, 0) : grad_ids + p->pp) * (p->sites > 1 ? p->sites : 1);
	/* the stages' memory first: a point that does not fit (most of those a layout sweep refuses) costs no op
	 * lists and no graph (building them for points refused after was a third of bench_sweep's pass over its
	 * space) */
	for (int r = 0; r < g->nreps; r++)
		stage_info(&sb, r, m, maxchunk);
	if (check && check(s, out, err)) {
		rc = -1;
		goto out;
	}
	if (pipe) {
		fill_pipe(&c, &sb);
		goto out;
	}
	for (int r = 0; r < g->nreps; r++)
		walk_arrays(&c, &w[r]);
	build_oplists(&c, 0, 0xf);
	find_aliases(&c);
	int progress = 1;
	while (progress) {
		progress = 0;
		for (int r = 0; r < g->nreps; r++)
			while (w[r].pos < w[r].n && emit_item(&sb, r))
				progress = 1;
	}
	for (int r = 0; r < g->nreps; r++)
		if (w[r].pos < w[r].n) {
			rc = hs_err_set(err, HS_EINTERNAL, "internal error: pipeline schedule deadlocks at stage %d "
							   "item %zu",
					w[r].stage, w[r].pos);
			goto out;
		}
	uint32_t *emb = tied_embedding_sync(&sb);
	for (int r = 0; r < g->nreps; r++)
		finish_rep(&sb, r, grad_ids, emb);
	free(emb);
out:
	for (int r = 0; r < g->nreps; r++) {
		if (!w[r].shared)
			free(w[r].items);
		free(w[r].fsend);
		free(w[r].bsend);
		free(w[r].ftask);
		free(w[r].btask);
		free(w[r].bucket_colls);
		free(w[r].last_weight);
		free(w[r].first_fwd);
		free(w[r].act_d2h);
	}
	free(w);
	free(c.fwd);
	free(c.bwd);
	free(c.bin);
	free(c.bwt);
	free(c.cl);
	free(c.cparams);
	free(c.lkind);
	free(c.cf);
	free(c.own_peak);
	if (c.items && !c.items_kept) {
		for (int st = 0; st < p->pp; st++)
			free(c.items[st]);
		free(c.items);
		free(c.nitems);
	}
	for (int ph = 0; c.lm && ph < 4; ph++)
		for (int k = 0; k < HS_MIX_COUNT; k++)
			for (int moe = 0; moe < 2; moe++)
				hs_oplist_free(&c.lm->l[ph][k][moe]);
	free(c.lm);
	hs_oplist_free(&c.tmp);
	if (rc)
		hs_build_free(out);
	return rc;
}
