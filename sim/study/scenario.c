#include "sim/study/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/fabric.h"
#include "config/cfg.h"
#include "models/schedule.h"
#include "sim/base/alloc.h"
#include "sim/base/sizes.h"
#include "sim/coll/coll.h"
#include "sim/fabric/fabric_coll.h"
#include "sim/fabric/fabric_exp.h"

const char *const hs_scenario_keys[] = {"name", "kind", "description", "cluster", "model", "training",
				       "parallelism", "simulation", "variability", "resilience", "diloco", "cost", "jobs",
				       NULL};
static const char *const training_keys[] = {"seq_len", "global_batch", "micro_batch", "precision", "optimizer",
					    "attention", "recipe", "grad_dtype", "fp8_recipe", NULL};
/* In enum hs_fp8_recipe's order. */
static const char *const fp8_recipes[] = {"delayed", "current", NULL};
static const char *const grad_dtypes[] = {"bf16", "fp16", "fp32", NULL};
static const char *const attentions[] = {"flash", "materialized", NULL};
static const char *const par_keys[] = {"tp", "pp", "dp", "cp", "ep", "virtual_stages", "recompute",
				       "sequence_parallel", "schedule", "zero", "dp_bucket", "memory_reserve",
				       "fsdp", "expert_imbalance", "cp_mode", "stage_layers",
				       "dp_microbatches", "order", "embedding_as_layer", "loss_as_layer", "zero3",
				       "offload", "expert_routing", NULL};
static const char *const imbalance_keys[] = {"zipf", "shares", NULL};
static const char *const routing_keys[] = {"skew", "sampling", NULL};
static const char *const routing_samplings[] = {"expected", "multinomial", NULL};
static const char *const cp_modes[] = {"allgather", "ring", NULL};
static const char *const sim_keys[] = {"fidelity", "seed", "symmetry", "collective_algorithm", "layer_collectives",
				       "network", "packet", NULL};
/* simulation.packet (docs/fabric.md, "Training steps at packet fidelity") */
static const char *const packet_keys[] = {"scheme", "protocol", "signal", "pull", "channels", "fabric", "credits",
					  NULL};
static const char *const cost_keys[] = {"gpu_hour", "idle_power", "pue", "currency", NULL};
static const char *const precisions[] = {"bf16", "fp16", "fp8", "fp32", NULL};
static const char *const optimizers[] = {"adam", NULL};
static const char *const recomputes[] = {"none", "selective", "full", NULL};
static const char *const fidelities[] = {"analytical", "flow", "packet", NULL};
/* Gradient bucket overlapped with the last backward pass: 40 MB, between PyTorch DDP's bucket_cap_mb = 25 and
 * Megatron's 40M-parameter buckets (docs/scenario.md, parallelism.dp_bucket). */
#define DEF_DP_BUCKET (40 * HS_MB)
/* Kept free on each device for the CUDA context, cuBLAS/NCCL workspaces and allocator fragmentation: 2 GiB,
 * the order PyTorch runs leave unused on an 80 GB H100 (docs/scenario.md, parallelism.memory_reserve). */
#define DEF_MEMORY_RESERVE (2 * HS_GiB)

const char *const hs_scenario_kinds[HS_KIND_COUNT + 1] = {"training", "fabric", NULL};

const hs_ynode *hs_scenario_node(const hs_scenario *s, const char *dotted)
{
	const hs_ynode *n = s->root ? s->root : hs_yaml_root(s->doc), *last = n;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", dotted);
	char *save = NULL;
	for (char *t = strtok_r(buf, ".", &save); t && n; t = strtok_r(NULL, ".", &save)) {
		n = hs_yaml_get(n, t);
		if (n)
			last = n;
	}
	return last;
}

enum hs_scenario_kind hs_scenario_kind(hs_ydoc *doc)
{
	const hs_ynode *k = hs_yaml_get(hs_yaml_root(doc), "kind");
	for (int i = 0; k && k->kind == HS_Y_SCALAR && i < HS_KIND_COUNT; i++)
		if (strcmp(k->str, hs_scenario_kinds[i]) == 0)
			return (enum hs_scenario_kind)i;
	return HS_KIND_TRAINING;
}

static int load_training(hs_scenario *s, const hs_ynode *root, hs_err *err)
{
	const hs_ynode *t = hs_yaml_get(root, "training");
	if (!t)
		return hs_cfg_err(root, err, "training", "", "missing section (expected {seq_len, global_batch, "
							     "micro_batch, precision, optimizer})");
	if (hs_cfg_known(t, "training", training_keys, "a mapping of training settings", err))
		return -1;
	int64_t v;
	if (hs_cfg_int(t, "training", "seq_len", 1, 1 << 24, s->model.seq_len, 0, &v, err))
		return -1;
	s->train.seq_len = (int)v;
	if (s->train.seq_len <= 0)
		return hs_cfg_err(t, err, "training", "seq_len",
				  "missing, and the model sets no default sequence length (expected a positive integer)");
	if (hs_cfg_int(t, "training", "global_batch", 1, INT64_C(1) << 40, 0, 1, &s->train.global_batch, err))
		return -1;
	if (hs_cfg_int(t, "training", "micro_batch", 1, 1 << 20, 1, 0, &v, err))
		return -1;
	s->train.micro_batch = (int)v;
	int prec, opt;
	if (hs_cfg_enum(t, "training", "precision", precisions, 0, &prec, err) ||
	    hs_cfg_enum(t, "training", "optimizer", optimizers, 0, &opt, err))
		return -1;
	s->train.dtype = prec == 1 ? HS_FP16 : prec == 3 ? HS_FP32 : HS_BF16;
	s->train.fp8_gemms = prec == 2;
	const hs_ynode *fr = hs_yaml_get(t, "fp8_recipe");
	if (fr && !s->train.fp8_gemms)
		return hs_cfg_err(fr, err, "training", "fp8_recipe",
				  "given without precision: fp8 (expected precision: fp8 with fp8_recipe: "
				  "delayed or current, or no fp8_recipe)");
	int fp8r;
	if (hs_cfg_enum(t, "training", "fp8_recipe", fp8_recipes, HS_FP8_DELAYED, &fp8r, err))
		return -1;
	s->train.fp8_recipe = (enum hs_fp8_recipe)fp8r;
	int att;
	if (hs_cfg_enum(t, "training", "attention", attentions, 0, &att, err))
		return -1;
	s->train.materialized_attention = att == 1;
	int rec;
	if (hs_cfg_enum(t, "training", "recipe", hs_recipe_names(), 0, &rec, err))
		return -1;
	s->train.recipe = &hs_recipes[rec];
	int gd;
	if (hs_cfg_enum(t, "training", "grad_dtype", grad_dtypes, -1, &gd, err))
		return -1;
	s->train.grad_dtype = gd == 0 ? HS_BF16 : gd == 1 ? HS_FP16 : gd == 2 ? HS_FP32 : s->train.recipe->grad_dtype;
	if (s->train.dtype == HS_FP32)
		s->train.grad_dtype = HS_FP32; /* fp32 training has nothing narrower to keep */
	return 0;
}

/* parallelism.expert_imbalance: {zipf: S} or {shares: [...]} -> the busiest expert's load factor
 * (hs_model_expert_load_*). */
static int load_imbalance(hs_scenario *s, const hs_ynode *p, hs_err *err)
{
	s->par.expert_load = 1;
	const hs_ynode *n = hs_yaml_get(p, "expert_imbalance");
	if (!n)
		return 0;
	const char *path = "parallelism.expert_imbalance";
	if (hs_cfg_known(n, path, imbalance_keys, "{zipf: EXPONENT} or {shares: [..]}", err))
		return -1;
	if (s->model.experts == 0)
		return hs_cfg_err(n, err, "parallelism", "expert_imbalance",
				  "the model has no experts (expected a MoE model)");
	const hs_ynode *z = hs_yaml_get(n, "zipf"), *sh = hs_yaml_get(n, "shares");
	if ((z != NULL) == (sh != NULL))
		return hs_cfg_err(n, err, "parallelism", "expert_imbalance",
				  "give exactly one of zipf and shares (expected {zipf: 1.2} or {shares: [..]})");
	if (z) {
		double e;
		if (hs_cfg_num(n, path, "zipf", HS_U_COUNT, 0, 100, 0, 1, &e, err))
			return -1;
		s->par.expert_load = hs_model_expert_load_zipf(s->model.experts, e);
		return 0;
	}
	if (sh->kind != HS_Y_SEQ || sh->n != (size_t)s->model.experts)
		return hs_cfg_err(sh, err, path, "shares",
				  "expected a list of %d shares, one per expert (found %s%zu)", s->model.experts,
				  sh->kind == HS_Y_SEQ ? "" : "no list, ", sh->kind == HS_Y_SEQ ? sh->n : (size_t)0);
	double *v = hs_xcalloc(sh->n, sizeof *v), sum = 0;
	for (size_t i = 0; i < sh->n; i++) {
		char kp[32];
		snprintf(kp, sizeof kp, "shares.%zu", i);
		if (hs_cfg_node_num(sh->vals[i], path, kp, HS_U_COUNT, 0, 1e12, &v[i], err)) {
			free(v);
			return -1;
		}
		sum += v[i];
	}
	if (!(sum > 0)) {
		free(v);
		return hs_cfg_err(sh, err, path, "shares", "all shares are zero (expected some positive)");
	}
	s->par.expert_load = hs_model_expert_load_shares(v, (int)sh->n);
	free(v);
	return 0;
}

/* parallelism.expert_routing: {skew: S, sampling: multinomial | expected}: expert load drawn per step
 * (models/moe_routing.h). Not with expert_imbalance (one fixed busiest expert instead). */
static int load_routing(hs_scenario *s, const hs_ynode *p, hs_err *err)
{
	s->par.routing = (hs_moe_routing){0, 1};
	const hs_ynode *n = hs_yaml_get(p, "expert_routing");
	if (!n)
		return 0;
	const char *path = "parallelism.expert_routing";
	if (hs_cfg_known(n, path, routing_keys, "{skew: S, sampling: multinomial | expected}", err))
		return -1;
	if (s->model.experts == 0)
		return hs_cfg_err(n, err, "parallelism", "expert_routing", "the model has no experts (expected a MoE model)");
	if (hs_yaml_get(p, "expert_imbalance"))
		return hs_cfg_err(n, err, "parallelism", "expert_routing",
				  "given with expert_imbalance (expected one of them: a load drawn per step, or one "
				  "fixed busiest expert)");
	if (hs_cfg_num(n, path, "skew", HS_U_COUNT, 0, 1e6, 0, 1, &s->par.routing.skew, err) ||
	    hs_cfg_enum(n, path, "sampling", routing_samplings, 1, &s->par.routing.multinomial, err))
		return -1;
	return 0;
}

int hs_scenario_routing_splits(const hs_scenario *s)
{
	/* with ep = dp x cp every replica of a stage is in the one EP group, which draws one routing */
	return s->par.routing.skew > 0 && s->par.ep < s->par.dp * s->par.cp;
}

/* A list of `n` positive integers, or the scalar `auto`. *vals is NULL for auto (and *is_auto set) or when
 * the key is absent. */
static int int_list_or_auto(const hs_ynode *p, const char *key, int n, const char *what, int **vals, int *is_auto,
			    hs_err *err)
{
	*vals = NULL;
	*is_auto = 0;
	const hs_ynode *k = hs_yaml_get(p, key);
	if (!k)
		return 0;
	if (k->kind == HS_Y_SCALAR && strcmp(k->str, "auto") == 0) {
		*is_auto = 1;
		return 0;
	}
	if (k->kind != HS_Y_SEQ || k->n != (size_t)n)
		return hs_cfg_err(k, err, "parallelism", key, "expected auto or a list of %d %s (found %s%zu)", n, what,
				  k->kind == HS_Y_SEQ ? "a list of " : "no list, ", k->kind == HS_Y_SEQ ? k->n : (size_t)0);
	int *v = hs_xcalloc((size_t)n, sizeof *v);
	for (int i = 0; i < n; i++) {
		char kp[48];
		snprintf(kp, sizeof kp, "%s.%d", key, i);
		double x;
		if (hs_cfg_node_num(k->vals[i], "parallelism", kp, HS_U_COUNT, 1, 1e9, &x, err)) {
			free(v);
			return -1;
		}
		if (x != floor(x)) {
			free(v);
			return hs_cfg_err(k->vals[i], err, "parallelism", kp, "%g is not a whole number", x);
		}
		v[i] = (int)x;
	}
	*vals = v;
	return 0;
}

/* One layer count of parallelism.stage_layers at `kp`: a whole number >= lo. */
static int layer_count(const hs_ynode *n, const char *kp, int lo, int *out, hs_err *err)
{
	double x;
	if (hs_cfg_node_num(n, "parallelism", kp, HS_U_COUNT, lo, 1e9, &x, err))
		return -1;
	if (x != floor(x))
		return hs_cfg_err(n, err, "parallelism", kp, "%g is not a whole number", x);
	*out = (int)x;
	return 0;
}

/* The layers of every model chunk (global chunk g = k pp + s: chunk k of stage s, Megatron's interleaving),
 * from parallelism.stage_layers given in one of three shapes:
 *   [n_0, ..., n_{pp-1}]               per stage, each split evenly over its virtual_stages chunks;
 *   [c_0, ..., c_{pp v - 1}]           per virtual stage, in model order (v > 1 only);
 *   [[c_00, ..., c_0(v-1)], ...]       per stage, its chunks' counts in the order the stage runs them.
 * The first and the last chunk may hold no layer (then only the embedding, or only the output layer and loss,
 * as Megatron builds with account_for_*_in_pipeline_split and one layer per virtual stage); others hold one at
 * least. par->chunk_layers [pp v] and par->stage_layers [pp] (their sums per stage) are set. */
static int stage_layer_lists(hs_parallel *par, const hs_ynode *k, hs_err *err)
{
	int pp = par->pp, v = par->vstages, nc = pp * v;
	int nested = k->n == (size_t)pp && k->n > 0 && k->vals[0]->kind == HS_Y_SEQ;
	int per_chunk = !nested && v > 1 && k->n == (size_t)nc;
	if (!nested && !per_chunk && k->n != (size_t)pp) {
		if (v > 1)
			return hs_cfg_err(k, err, "parallelism", "stage_layers",
					  "expected auto, a list of %d layer counts (one per pipeline stage), of %d (one per "
					  "virtual stage) or of %d lists of %d (one count per chunk) (found a list of %zu)",
					  pp, nc, pp, v, k->n);
		return hs_cfg_err(k, err, "parallelism", "stage_layers",
				  "expected auto or a list of %d layer counts, one per pipeline stage (found a list of %zu)",
				  pp, k->n);
	}
	par->chunk_layers = hs_xcalloc((size_t)nc, sizeof *par->chunk_layers);
	par->stage_layers = hs_xcalloc((size_t)pp, sizeof *par->stage_layers);
	char kp[64];
	for (int st = 0; st < pp; st++) {
		const hs_ynode *e = k->vals[per_chunk ? 0 : st];
		if (nested && (e->kind != HS_Y_SEQ || e->n != (size_t)v)) {
			snprintf(kp, sizeof kp, "stage_layers.%d", st);
			return hs_cfg_err(e, err, "parallelism", kp,
					  "expected a list of %d layer counts, one per chunk of stage %d (virtual_stages %d)",
					  v, st, v);
		}
		for (int c = 0; c < v; c++) {
			int g = c * pp + st, n;
			const hs_ynode *x = nested ? e->vals[c] : per_chunk ? k->vals[g] : e;
			if (!nested && !per_chunk) {
				snprintf(kp, sizeof kp, "stage_layers.%d", st);
				if (c == 0 && layer_count(x, kp, 1, &n, err))
					return -1;
				if (c == 0 && n % v)
					return hs_cfg_err(x, err, "parallelism", "stage_layers",
							  "stage %d has %d layers, not divisible by virtual_stages %d "
							  "(expected a multiple, or a list per stage of %d counts, one per "
							  "chunk)",
							  st, n, v, v);
				if (c == 0)
					par->stage_layers[st] = n;
				par->chunk_layers[g] = par->stage_layers[st] / v;
				continue;
			}
			if (nested)
				snprintf(kp, sizeof kp, "stage_layers.%d.%d", st, c);
			else
				snprintf(kp, sizeof kp, "stage_layers.%d", g);
			if (layer_count(x, kp, g == 0 || g == nc - 1 ? 0 : 1, &n, err))
				return -1;
			par->chunk_layers[g] = n;
			par->stage_layers[st] += n;
		}
	}
	return 0;
}

/* Megatron's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
 * (megatron/core/transformer/transformer_config.py; the split in transformer_block.py,
 * get_num_layers_to_build): the embedding and the loss each count as one layer, the total is split evenly over
 * the pp x virtual_stages chunks, and the first chunk (the embedding's) and the last (the loss's) build one
 * transformer layer fewer. Megatron asserts that the total divides; so does this. */
static int megatron_split(hs_parallel *par, int L, const hs_ynode *at, const char *key, hs_err *err)
{
	int pp = par->pp, v = par->vstages, nc = pp * v, e = par->embedding_as_layer, l = par->loss_as_layer;
	int total = L + e + l;
	if (total % nc)
		return hs_cfg_err(at, err, "parallelism", key,
				  "%d layers + %d (embedding) + %d (loss) = %d do not split over pp x virtual_stages = %d "
				  "x %d chunks (expected a multiple of %d, as Megatron asserts)",
				  L, e, l, total, pp, v, nc);
	int per = total / nc; /* >= 1, so no chunk goes below 0 */
	par->chunk_layers = hs_xcalloc((size_t)nc, sizeof *par->chunk_layers);
	par->stage_layers = hs_xcalloc((size_t)pp, sizeof *par->stage_layers);
	for (int g = 0; g < nc; g++) {
		par->chunk_layers[g] = per - (g == 0 ? e : 0) - (g == nc - 1 ? l : 0);
		par->stage_layers[g % pp] += par->chunk_layers[g];
	}
	return 0;
}

/* parallelism.stage_layers: layers per pipeline stage (or per model chunk), given or auto (checked here; auto
 * is resolved by hs_partition_resolve, which times the layers on each stage's devices); and
 * embedding_as_layer / loss_as_layer, Megatron's uneven split. */
static int load_stage_layers(hs_scenario *s, const hs_ynode *p, hs_err *err)
{
	hs_parallel *par = &s->par;
	const hs_ynode *k = hs_yaml_get(p, "stage_layers");
	if (hs_cfg_bool(p, "parallelism", "embedding_as_layer", 0, &par->embedding_as_layer, err) ||
	    hs_cfg_bool(p, "parallelism", "loss_as_layer", 0, &par->loss_as_layer, err))
		return -1;
	int L = s->model.layers;
	const char *flag = par->embedding_as_layer ? "embedding_as_layer" : "loss_as_layer";
	if (par->embedding_as_layer || par->loss_as_layer) {
		if (k)
			return hs_cfg_err(hs_yaml_get(p, flag), err, "parallelism", flag,
					  "Megatron's split and parallelism.stage_layers both place the layers (expected "
					  "one of them)");
		return megatron_split(par, L, hs_yaml_get(p, flag), flag, err);
	}
	if (!k)
		return 0;
	if (k->kind == HS_Y_SCALAR && strcmp(k->str, "auto") == 0) {
		par->stage_layers_auto = 1;
		if (par->vstages > 1)
			return hs_cfg_err(k, err, "parallelism", "stage_layers",
					  "auto balances one model chunk per stage (expected virtual_stages 1, found %d)",
					  par->vstages);
		if (L < par->pp)
			return hs_cfg_err(k, err, "parallelism", "stage_layers",
					  "%d layers cannot fill %d pipeline stages (expected at least one layer each)", L,
					  par->pp);
		return 0;
	}
	if (k->kind != HS_Y_SEQ)
		return hs_cfg_err(k, err, "parallelism", "stage_layers",
				  "expected auto or a list of %d layer counts, one per pipeline stage", par->pp);
	if (stage_layer_lists(par, k, err))
		return -1;
	long sum = 0;
	for (int i = 0; i < par->pp; i++)
		sum += par->stage_layers[i];
	if (sum != L) {
		char list[256] = "";
		size_t o = 0;
		for (int i = 0; i < par->pp && o < sizeof list - 16; i++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%d", i ? " + " : "", par->stage_layers[i]);
		return hs_cfg_err(k, err, "parallelism", "stage_layers",
				  "%s = %ld layers, but %s has %d (expected the stages to sum to the model's layers)", list,
				  sum, s->model.name, L);
	}
	return 0;
}

/* parallelism.dp_microbatches: micro-batches per data-parallel replica, given or auto. They sum to
 * global_batch / micro_batch. */
static int load_dp_microbatches(hs_scenario *s, const hs_ynode *p, int64_t total, hs_err *err)
{
	hs_parallel *par = &s->par;
	if (int_list_or_auto(p, "dp_microbatches", par->dp, "micro-batch counts, one per data-parallel replica",
			     &par->dp_mb, &par->dp_mb_auto, err))
		return -1;
	const hs_ynode *k = hs_yaml_get(p, "dp_microbatches");
	if (!k)
		return 0;
	if (total < par->dp)
		return hs_cfg_err(k, err, "parallelism", "dp_microbatches",
				  "%lld micro-batches cannot feed %d replicas (expected global_batch / micro_batch >= dp)",
				  (long long)total, par->dp);
	if (par->zero >= 3)
		return hs_cfg_err(k, err, "parallelism", "dp_microbatches",
				  "ZeRO-3 / FSDP gathers parameters per micro-batch in lockstep across replicas (expected "
				  "zero < 3 with uneven data-parallel load)");
	if (par->schedule == HS_SCHED_INTERLEAVED || par->schedule == HS_SCHED_DUALPIPE)
		return hs_cfg_err(k, err, "parallelism", "dp_microbatches",
				  "the interleaved and dualpipe schedules constrain every replica's micro-batches (expected "
				  "1f1b, gpipe, zb-h1 or zb-v with uneven data-parallel load)");
	if (par->dp_mb_auto)
		return 0;
	int64_t sum = 0;
	for (int i = 0; i < par->dp; i++)
		sum += par->dp_mb[i];
	if (sum != total)
		return hs_cfg_err(k, err, "parallelism", "dp_microbatches",
				  "the replicas' micro-batches sum to %lld, but global_batch / micro_batch = %lld / %d = "
				  "%lld (expected them to sum to it)",
				  (long long)sum, (long long)s->train.global_batch, s->train.micro_batch,
				  (long long)total);
	return 0;
}

/* DiLoCo sites: equal shares of the devices, by default one per node group. Replicas are numbered site-major
 * (models/build.c), so a site holds dp / sites whole replicas. */
static int load_sites(hs_scenario *s, hs_err *err)
{
	hs_parallel *par = &s->par;
	par->sites = 1;
	if (!s->diloco.enabled)
		return 0;
	const hs_ynode *dn = hs_scenario_node(s, "diloco");
	int ng = hs_cluster_ngroups(s->cluster), n = hs_cluster_ngpus(s->cluster);
	int S = s->diloco.sites;
	if (S == 0) {
		S = ng;
		for (int g = 1; g < ng; g++) {
			const hs_node_group *a = hs_cluster_group(s->cluster, 0), *b = hs_cluster_group(s->cluster, g);
			if (a->nodes * a->gpus_per_node != b->nodes * b->gpus_per_node)
				return hs_cfg_err(dn, err, "diloco", "",
						  "the sites are the node groups, which must hold equal numbers of GPUs "
						  "(found %s %d, %s %d; expected equal groups or diloco.sites)",
						  a->name, a->nodes * a->gpus_per_node, b->name, b->nodes * b->gpus_per_node);
		}
		if (S < 2)
			return hs_cfg_err(dn, err, "diloco", "",
					  "the cluster has one node group, so one site (expected several groups, or "
					  "diloco.sites)");
	}
	if (n % S || par->dp % S)
		return hs_cfg_err(dn, err, "diloco", "sites",
				  "%d sites do not divide the %d data-parallel replicas of %d GPUs (expected dp %% sites "
				  "== 0)",
				  S, par->dp, n);
	int dps = par->dp / S;
	if (par->ep > 1 && dps % par->ep)
		return hs_cfg_err(dn, err, "diloco", "sites",
				  "ep = %d does not divide the %d replicas of a site (expected expert groups inside a site)",
				  par->ep, dps);
	par->sites = S;
	return 0;
}

/* parallelism.order: how ranks are laid out on devices, innermost dimension first. Megatron's default puts TP
 * innermost (inside a node's NVLink domain), then CP, then DP, then PP. */
static int load_order(hs_scenario *s, const hs_ynode *p, hs_err *err)
{
	static const char *const dims[] = {"tp", "cp", "dp", "pp", NULL};
	for (int i = 0; i < 4; i++)
		s->par.order[i] = i;
	const hs_ynode *o = hs_yaml_get(p, "order");
	if (!o)
		return 0;
	if (o->kind != HS_Y_SEQ || o->n != 4)
		return hs_cfg_err(o, err, "parallelism", "order",
				  "expected a list of the four dimensions, innermost first, such as [tp, cp, dp, pp]");
	int seen = 0;
	for (size_t i = 0; i < 4; i++) {
		const hs_ynode *v = o->vals[i];
		int k = -1;
		for (int d = 0; v->kind == HS_Y_SCALAR && dims[d]; d++)
			if (strcmp(v->str, dims[d]) == 0)
				k = d;
		if (k < 0 || (seen & (1 << k)))
			return hs_cfg_err(v, err, "parallelism", "order",
					  "'%s' is not a dimension or repeats one (expected each of tp, cp, dp, pp once)",
					  v->kind == HS_Y_SCALAR ? v->str : "?");
		seen |= 1 << k;
		s->par.order[i] = k;
	}
	return 0;
}

/* DeepSpeed's defaults (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig, v0.14-v0.16): prefetch_bucket_size
 * (stage3_prefetch_bucket_size) 5e7 parameter elements, "fetched ahead of use"; max_live_parameters
 * (stage3_max_live_parameters) 1e9, "the maximum number of parameters resident per GPU before releasing". */
#define DEF_Z3_PREFETCH_BUCKET 5e7
#define DEF_Z3_MAX_LIVE 1e9
/* More parameter all-gathers per rank and step than this is a bucket too small for the model to simulate in
 * bounded work (4M tasks of one kind on one rep), refused at the key rather than built. */
#define MAX_Z3_GATHERS 4194304.0

/* parallelism.zero3: {prefetch_bucket, max_live_parameters}: ZeRO-3 as DeepSpeed runs it (parameters gathered
 * per prefetch bucket, at most max_live_parameters resident). Implies zero: 3; FSDP is another framework's
 * ZeRO-3 and its keys do not mix with these. */
static int load_zero3(hs_scenario *s, const hs_ynode *p, int64_t zero, hs_err *err)
{
	const hs_ynode *zn = hs_yaml_get(p, "zero3");
	if (!zn)
		return 0;
	static const char *const keys[] = {"prefetch_bucket", "max_live_parameters", NULL};
	if (hs_cfg_known(zn, "parallelism.zero3", keys, "a mapping {prefetch_bucket: 50M, max_live_parameters: 1G} "
			 "(parameter counts, DeepSpeed's stage3_prefetch_bucket_size and stage3_max_live_parameters)", err))
		return -1;
	if (hs_yaml_get(p, "fsdp"))
		return hs_cfg_err(zn, err, "parallelism", "zero3",
				  "zero3 is DeepSpeed's ZeRO-3 and fsdp is PyTorch's (expected one of them)");
	if (hs_yaml_get(p, "zero") && zero != 3)
		return hs_cfg_err(zn, err, "parallelism", "zero3",
				  "zero3 settings are ZeRO stage 3, but zero: %lld is given (expected zero: 3 or no zero "
				  "key)", (long long)zero);
	if (hs_cfg_num(zn, "parallelism.zero3", "prefetch_bucket", HS_U_COUNT, 1, 1e15, DEF_Z3_PREFETCH_BUCKET, 0,
		       &s->par.z3_prefetch_bucket, err) ||
	    hs_cfg_num(zn, "parallelism.zero3", "max_live_parameters", HS_U_COUNT, 1, 1e18, DEF_Z3_MAX_LIVE, 0,
		       &s->par.z3_max_live, err))
		return -1;
	s->par.zero = 3;
	/* the gathers a rank issues per step, about: forward and backward, every micro-batch, its stage's
	 * parameters in buckets (the build issues at least this many) */
	double stage = hs_model_params(&s->model) / ((double)s->par.tp * s->par.pp);
	double m = (double)s->train.global_batch / ((double)s->par.dp * s->train.micro_batch);
	double n = 2 * (m > 1 ? m : 1) * ceil(stage / s->par.z3_prefetch_bucket);
	if (n > MAX_Z3_GATHERS)
		return hs_cfg_err(hs_yaml_get(zn, "prefetch_bucket") ? hs_yaml_get(zn, "prefetch_bucket") : zn, err,
				  "parallelism.zero3", "prefetch_bucket",
				  "%.4g parameters per bucket make %.3g all-gathers per rank and step, more than hetsim "
				  "simulates (expected a bucket of at least %.3g parameters)",
				  s->par.z3_prefetch_bucket, n, 2 * (m > 1 ? m : 1) * stage / MAX_Z3_GATHERS);
	return 0;
}

/* parallelism.offload: {optimizer: cpu | none, activations: cpu | none}. Each needs every node group's host
 * link (cluster.groups[i].host), and the CPU optimizer its host memory bandwidth: a group without them is bad
 * input, named at the offload key. */
static int load_offload(hs_scenario *s, const hs_ynode *p, hs_err *err)
{
	const hs_ynode *on = hs_yaml_get(p, "offload");
	if (!on)
		return 0;
	static const char *const keys[] = {"optimizer", "activations", NULL};
	static const char *const where[] = {"none", "cpu", NULL};
	if (hs_cfg_known(on, "parallelism.offload", keys, "a mapping {optimizer: cpu, activations: cpu}", err) ||
	    hs_cfg_enum(on, "parallelism.offload", "optimizer", where, 0, &s->par.offload_optimizer, err) ||
	    hs_cfg_enum(on, "parallelism.offload", "activations", where, 0, &s->par.offload_activations, err))
		return -1;
	if (s->par.offload_optimizer && s->par.zero < 1)
		return hs_cfg_err(hs_yaml_get(on, "optimizer"), err, "parallelism.offload", "optimizer",
				  "optimizer offload is ZeRO-Offload, which runs on ZeRO's partitions (expected "
				  "parallelism.zero 1, 2 or 3)");
	for (int k = 0; k < 2; k++) {
		const char *key = keys[k];
		if (!(k ? s->par.offload_activations : s->par.offload_optimizer))
			continue;
		for (int g = 0; g < hs_cluster_ngroups(s->cluster); g++) {
			const hs_node_group *ng = hs_cluster_group(s->cluster, g);
			if (!ng->host.described)
				return hs_cfg_err(hs_yaml_get(on, key), err, "parallelism.offload", key,
						  "node group '%s' describes no host link (expected cluster.groups.%d.host: "
						  "{link: pcie, generation: 5, lanes: 16} or {link: c2c})", ng->name, g);
			if (k == 0 && ng->host.mem_bw <= 0)
				return hs_cfg_err(hs_yaml_get(on, key), err, "parallelism.offload", key,
						  "node group '%s' declares no host memory bandwidth for the CPU optimizer "
						  "step (expected cluster.groups.%d.host.memory_bandwidth, at %s)", ng->name, g,
						  ng->host.at);
		}
	}
	return 0;
}

static int load_parallel(hs_scenario *s, const hs_ynode *root, hs_err *err)
{
	const hs_ynode *p = hs_yaml_get(root, "parallelism");
	static const hs_ynode empty = {.kind = HS_Y_MAP, .file = "", .line = 0, .col = 0};
	if (!p)
		p = &empty;
	if (hs_cfg_known(p, "parallelism", par_keys, "a mapping of parallel sizes and options", err))
		return -1;
	int64_t tp, pp, dp, cp, ep, vs, zero;
	if (hs_cfg_int(p, "parallelism", "tp", 1, 1 << 20, 1, 0, &tp, err) ||
	    hs_cfg_int(p, "parallelism", "pp", 1, 1 << 20, 1, 0, &pp, err) ||
	    hs_cfg_int(p, "parallelism", "cp", 1, 1 << 20, 1, 0, &cp, err) ||
	    hs_cfg_int(p, "parallelism", "ep", 1, 1 << 20, 1, 0, &ep, err) ||
	    hs_cfg_int(p, "parallelism", "dp", 0, 1 << 24, 0, 0, &dp, err) ||
	    hs_cfg_int(p, "parallelism", "virtual_stages", 1, 1024, 1, 0, &vs, err) ||
	    hs_cfg_int(p, "parallelism", "zero", 0, 3, 0, 0, &zero, err))
		return -1;
	int ngpus = hs_cluster_ngpus(s->cluster);
	const hs_ynode *ndp = hs_yaml_get(p, "dp");
	if (dp == 0) { /* not given: whatever the cluster leaves */
		int64_t inner = tp * pp * cp;
		if (ngpus % inner)
			return hs_cfg_err(p, err, "parallelism", "",
					  "tp x pp x cp = %lld does not divide the cluster's %d GPUs (expected a "
					  "product that divides it, or an explicit dp)",
					  (long long)inner, ngpus);
		dp = ngpus / inner;
	}
	if (tp * pp * cp * dp != ngpus)
		return hs_cfg_err(ndp ? ndp : p, err, "parallelism", ndp ? "dp" : "",
				  "tp x cp x dp x pp = %lld x %lld x %lld x %lld = %lld, but the cluster has %d GPUs "
				  "(expected the product to equal the GPU count)",
				  (long long)tp, (long long)cp, (long long)dp, (long long)pp,
				  (long long)(tp * pp * cp * dp), ngpus);
	s->par.tp = (int)tp, s->par.pp = (int)pp, s->par.dp = (int)dp, s->par.cp = (int)cp;
	s->par.ep = (int)ep, s->par.vstages = (int)vs, s->par.zero = (int)zero;
	/* fsdp: true | false | {reshard_after_forward: bool} (PyTorch FSDP2's fully_shard option; true, its
	 * default, is hetsim's ZeRO-3) */
	int fsdp = 0;
	const hs_ynode *fn = hs_yaml_get(p, "fsdp");
	if (fn && fn->kind == HS_Y_MAP) {
		static const char *const fsdp_keys[] = {"reshard_after_forward", NULL};
		int reshard;
		if (hs_cfg_known(fn, "parallelism.fsdp", fsdp_keys, "true, false or {reshard_after_forward: bool}",
				 err) ||
		    hs_cfg_bool(fn, "parallelism.fsdp", "reshard_after_forward", 1, &reshard, err))
			return -1;
		fsdp = 1;
		s->par.fsdp_keep = !reshard;
	} else if (hs_cfg_bool(p, "parallelism", "fsdp", 0, &fsdp, err)) {
		return -1;
	}
	if (fsdp) { /* FSDP (full sharding) is ZeRO-3 */
		if (hs_yaml_get(p, "zero") && zero != 3)
			return hs_cfg_err(hs_yaml_get(p, "fsdp"), err, "parallelism", "fsdp",
					  "fsdp: true is ZeRO stage 3, but zero: %lld is given (expected zero: 3 or no "
					  "zero key)",
					  (long long)zero);
		s->par.zero = 3;
	}
	if (load_zero3(s, p, zero, err) || load_offload(s, p, err))
		return -1;
	if (ep > 1 && (dp * cp) % ep)
		return hs_cfg_err(hs_yaml_get(p, "ep"), err, "parallelism", "ep",
				  "ep = %lld does not divide dp x cp = %lld (expected experts sharded across "
				  "data-parallel ranks)",
				  (long long)ep, (long long)(dp * cp));
	if (hs_cfg_enum(p, "parallelism", "recompute", recomputes, 0, &s->par.recompute, err) ||
	    hs_cfg_bool(p, "parallelism", "sequence_parallel", 0, &s->par.sequence_parallel, err))
		return -1;
	const char *sched;
	if (hs_cfg_str(p, "parallelism", "schedule", vs > 1 ? "interleaved" : "1f1b", 0, &sched, err))
		return -1;
	s->par.schedule = hs_sched_parse(sched);
	if (s->par.schedule < 0) {
		const char *sug = hs_cfg_suggest(sched, hs_sched_names);
		char expected[128];
		return hs_cfg_err(hs_yaml_get(p, "schedule"), err, "parallelism", "schedule",
				  "'%s' is not a known schedule%s%s%s (expected %s)", sched, sug ? " (did you mean '" : "",
				  sug ? sug : "", sug ? "'?)" : "", hs_sched_expected(expected, sizeof expected));
	}
	if (s->par.schedule == HS_SCHED_INTERLEAVED && vs < 2)
		return hs_cfg_err(hs_yaml_get(p, "schedule"), err, "parallelism", "schedule",
				  "interleaved needs virtual_stages >= 2 (expected parallelism.virtual_stages)");
	/* ZB-V and DualPipe run two chunks per rank by construction: virtual_stages is theirs, 2 */
	int fixed = s->par.schedule != HS_SCHED_INTERLEAVED ? hs_sched_chunks(s->par.schedule, 1) : 0;
	if (s->par.schedule != HS_SCHED_INTERLEAVED && vs > 1 && vs != fixed)
		return hs_cfg_err(hs_yaml_get(p, "virtual_stages"), err, "parallelism", "virtual_stages",
				  "virtual stages need schedule: interleaved (found %s%s)", sched,
				  fixed > 1 ? ", which runs 2 chunks per rank" : "");
	if (fixed > 1)
		s->par.vstages = fixed;
	if (hs_cfg_num(p, "parallelism", "dp_bucket", HS_U_BYTES, 1, 1e15, DEF_DP_BUCKET, 0, &s->par.dp_bucket_bytes,
		       err) ||
	    hs_cfg_num(p, "parallelism", "memory_reserve", HS_U_BYTES, 0, 1e15, DEF_MEMORY_RESERVE, 0,
		       &s->par.memory_reserve, err))
		return -1;

	if (load_imbalance(s, p, err) || load_routing(s, p, err))
		return -1;
	int cpm;
	if (hs_cfg_enum(p, "parallelism", "cp_mode", cp_modes, 0, &cpm, err))
		return -1;
	s->par.cp_ring = cpm == 1;

	if (s->par.vstages > 1 && s->par.schedule != HS_SCHED_INTERLEAVED) {
		/* the V and the two copies place chunks differently from Megatron's g = k pp + s, which the lists and
		 * Megatron's split below are written in */
		static const char *const placing[] = {"stage_layers", "embedding_as_layer", "loss_as_layer", NULL};
		for (int i = 0; placing[i]; i++)
			if (hs_yaml_get(p, placing[i]))
				return hs_cfg_err(hs_yaml_get(p, placing[i]), err, "parallelism", placing[i],
						  "%s places layers for 1F1B-like and interleaved schedules only (found "
						  "schedule %s; expected the uniform split)", placing[i], sched);
	}
	if (load_stage_layers(s, p, err))
		return -1;
	/* Divisibility of the model by the strategy (exit 2, as issue 4 asks for these). With stage_layers the
	 * layers need not divide evenly: load_stage_layers checked them. */
	hs_err e2 = {0};
	int uneven = s->par.stage_layers || s->par.stage_layers_auto;
	/* the layers divide into the schedule's model chunks (DualPipe: pp of them, each held twice) */
	int nmodel = hs_sched_model_chunks(s->par.schedule, s->par.pp, s->par.vstages);
	if (hs_model_check_parallel(&s->model, s->par.tp, uneven ? 1 : s->par.pp,
				    uneven ? 1 : nmodel / s->par.pp, s->par.cp, s->par.ep, s->train.seq_len, &e2))
		return hs_cfg_err(p, err, "parallelism", "", "%s", e2.msg);
	int64_t per_step = (int64_t)s->par.dp * s->train.micro_batch;
	if (hs_yaml_get(p, "dp_microbatches")) {
		if (s->train.global_batch % s->train.micro_batch)
			return hs_cfg_err(hs_scenario_node(s, "training.global_batch"), err, "training", "global_batch",
					  "%lld is not divisible by micro_batch %d (expected a multiple)",
					  (long long)s->train.global_batch, s->train.micro_batch);
		int64_t total = s->train.global_batch / s->train.micro_batch;
		if (load_dp_microbatches(s, p, total, err))
			return -1;
		/* uneven load: micro_batches is the most any replica runs (hs_partition_resolve resolves auto) */
		int64_t mx = (total + s->par.dp - 1) / s->par.dp;
		for (int i = 0; s->par.dp_mb && i < s->par.dp; i++)
			if (s->par.dp_mb[i] > mx)
				mx = s->par.dp_mb[i];
		s->par.micro_batches = (int)(mx < 2000000 ? mx : 2000000);
	} else if (s->train.global_batch % per_step) {
		return hs_cfg_err(hs_scenario_node(s, "training.global_batch"), err, "training", "global_batch",
				  "%lld is not divisible by dp x micro_batch = %d x %d = %lld (expected a multiple)",
				  (long long)s->train.global_batch, s->par.dp, s->train.micro_batch,
				  (long long)per_step);
	}
	int64_t m = s->par.micro_batches ? s->par.micro_batches : s->train.global_batch / per_step;
	if (m > 1000000)
		return hs_cfg_err(hs_scenario_node(s, "training.global_batch"), err, "training", "global_batch",
				  "%lld micro-batches per step is more than hetsim simulates (expected at most 1e6)",
				  (long long)m);
	s->par.micro_batches = (int)m;
	if (load_order(s, p, err))
		return -1;
	char why[160];
	if (hs_sched_infeasible(s->par.schedule, s->par.pp, (int)m, why, sizeof why))
		return hs_cfg_err(hs_scenario_node(s, "parallelism.schedule"), err, "parallelism", "schedule", "%s",
				  why);
	if (s->par.sequence_parallel && s->par.tp == 1)
		s->par.sequence_parallel = 0; /* nothing to shard: SP with TP 1 is the plain layout */
	return load_sites(s, err);
}

/* The receiver of group g's scale-up domain before `simulation.packet.fabric` overrides it: the fabric model's
 * defaults (docs/fabric.md) where the cluster says nothing, and the cluster's figures where it does. The
 * scale-up bandwidth is read as the payload rate the flow model moves, so the wire carries the headers on top
 * (rate x (mtu + header) / mtu): the two fidelities then differ by queueing, credits and the protocol's
 * flags, not by a change of unit. Four paths: an HGX H100 board's four NVSwitch chips (a GPU's 18 NVLinks
 * spread 5/4/4/5 over them, NVIDIA HGX H100 datasheet). The path latency is the GPU-to-GPU latency the
 * topology gives the scale-up (topology/topo.c: half on each side of the switch). The HBM partitions share
 * the device's memory bandwidth. The response engine injects at the link's rate, and the receive buffer
 * covers twice the bytes a full-rate sender has in flight over one path latency and the HBM latency. */
static void packet_defaults(const hs_node_group *g, hs_fabric_params *p, int wire_from_mtu)
{
	double wire = (double)(p->mtu + p->header) / p->mtu;
	double link = g->scaleup_bw * wire; /* bytes/s on the wire */
	if (wire_from_mtu) {
		p->src_rate = hs_rate_from_Bps(link);
		p->path_rate = hs_rate_from_Bps(link / p->paths);
		return;
	}
	p->paths = 4;
	p->src_rate = hs_rate_from_Bps(link);
	p->path_rate = hs_rate_from_Bps(link / p->paths);
	p->path_latency = hs_time_from_s(g->scaleup_lat);
	p->credit_latency = p->path_latency;
	if (g->gpu.hbm_bw > 0)
		p->hbm_rate = hs_rate_from_Bps(g->gpu.hbm_bw / p->partitions);
	p->resp_rate = hs_rate_from_Bps(link);
	double inflight = 2 * link * (g->scaleup_lat + hs_time_to_s(p->hbm_latency));
	uint64_t rx = 256 * 1024;
	while (rx < inflight && rx < (1ull << 30))
		rx *= 2;
	p->rxbuf = (uint32_t)rx;
}

/* `simulation.packet`: per node group, the receiver model packet fidelity runs the group's in-domain
 * collectives on (sim/exec/comm_packet.c). Read whatever the fidelity, so that its keys are always checked;
 * at packet fidelity every group's scale-up must be a switch (the fabric model is one receiver behind a
 * switch: a mesh, bridge or PCIe tree is not what it represents). */
static int load_packet(hs_scenario *s, const hs_ynode *sim, int packet, hs_err *err)
{
	const hs_ynode *n = hs_yaml_get(sim, "packet");
	const char *path = "simulation.packet";
	static const hs_ynode empty = {.kind = HS_Y_MAP, .file = "", .line = 0, .col = 0};
	if (n && hs_cfg_known(n, path, packet_keys, "a mapping of packet-fidelity options", err))
		return -1;
	if (!n)
		n = &empty;
	const char *scheme;
	int proto, signal, pull;
	int64_t ch;
	if (hs_cfg_str(n, path, "scheme", "per_resource", 0, &scheme, err) ||
	    hs_cfg_enum(n, path, "protocol", hs_fcoll_proto_names, HS_FCOLL_SIMPLE, &proto, err) ||
	    hs_cfg_enum(n, path, "signal", hs_fcoll_signal_names, HS_FCOLL_SIG_WRITE, &signal, err) ||
	    hs_cfg_bool(n, path, "pull", 0, &pull, err) ||
	    hs_cfg_int(n, path, "channels", 1, 64, 8, 0, &ch, err))
		return -1;
	const hs_credit_scheme *cs = hs_credit_find(scheme);
	if (!cs) {
		const char *names[16];
		int k = 0;
		for (; hs_credit_schemes[k] && k < 15; k++)
			names[k] = hs_credit_schemes[k]->name;
		names[k] = NULL;
		const char *sug = hs_cfg_suggest(scheme, names);
		return hs_cfg_err(hs_yaml_get(n, "scheme"), err, path, "scheme",
				  "unknown credit scheme '%s'%s%s%s (expected none, byte, per_resource or vector)", scheme,
				  sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	}
	if (pull && proto != HS_FCOLL_SIMPLE)
		return hs_cfg_err(hs_yaml_get(n, "pull"), err, path, "pull",
				  "P2P reads are NCCL's Simple protocol only (expected protocol: simple, or pull: false)");
	int ng = hs_cluster_ngroups(s->cluster);
	hs_fcoll_cfg *cfg = hs_xcalloc((size_t)ng, sizeof *cfg);
	s->packet = cfg;
	s->sim.packet = cfg;
	s->sim.npacket = ng;
	const hs_ynode *fab = hs_yaml_get(n, "fabric");
	for (int g = 0; g < ng; g++) {
		const hs_node_group *grp = hs_cluster_group(s->cluster, g);
		hs_fcoll_cfg *c = &cfg[g];
		hs_fabric_params_default(&c->p);
		packet_defaults(grp, &c->p, 0);
		if (hs_fabric_parse_params(fab, "simulation.packet.fabric", &c->p, err) ||
		    hs_fabric_parse_credits(hs_yaml_get(n, "credits"), "simulation.packet.credits", &c->credits, err))
			return -1;
		/* a changed mtu or header changes the wire rate, unless the rates were given */
		if (fab && !hs_yaml_get(fab, "source_bandwidth") && !hs_yaml_get(fab, "path_bandwidth"))
			packet_defaults(grp, &c->p, 1);
		c->p.sources = 2;
		c->scheme = cs;
		c->proto = proto;
		c->signal = signal;
		c->pull = pull;
		c->channels = (int)ch;
		if (packet && grp->scaleup_props->layout != HS_UP_SWITCH)
			return hs_cfg_err(hs_yaml_get(sim, "fidelity"), err, "simulation", "fidelity",
					  "'packet' models a switched scale-up domain, one receiver behind the switch; node "
					  "group '%s' has scale-up kind '%s' (expected a group of kind nvswitch, nvl72 or "
					  "nvl36x2, or fidelity: flow)",
					  grp->name, grp->scaleup_kind);
		/* every operation a collective issues must fit the pools it needs (all or nothing) */
		char why[200];
		if (hs_fcoll_check_fit(&c->p, cs, &c->credits, why, sizeof why)) {
			const hs_ynode *at = hs_yaml_get(n, "credits");
			return hs_cfg_err(at ? at : n, err, path, "credits", "%s (expected pools of at least one packet)",
					  why);
		}
	}
	return 0;
}

static int load_sim(hs_scenario *s, const hs_ynode *root, hs_err *err)
{
	const hs_ynode *n = hs_yaml_get(root, "simulation");
	static const hs_ynode empty = {.kind = HS_Y_MAP, .file = "", .line = 0, .col = 0};
	if (!n)
		n = &empty;
	if (hs_cfg_known(n, "simulation", sim_keys, "a mapping of simulation options", err))
		return -1;
	int fid;
	int64_t seed;
	if (hs_cfg_enum(n, "simulation", "fidelity", fidelities, 0, &fid, err) ||
	    hs_cfg_int(n, "simulation", "seed", 0, INT64_MAX, 1, 0, &seed, err) ||
	    hs_cfg_bool(n, "simulation", "symmetry", 1, &s->sim.symmetry, err))
		return -1;
	const char *algo;
	if (hs_cfg_str(n, "simulation", "collective_algorithm", "auto", 0, &algo, err))
		return -1;
	s->wl.coll_algo = hs_coll_algo_parse(algo);
	if (s->wl.coll_algo < 0)
		return hs_cfg_err(hs_yaml_get(n, "collective_algorithm"), err, "simulation", "collective_algorithm",
				  "'%s' is not an algorithm (expected auto, ring, tree, halving_doubling, direct, "
				  "hierarchical or inswitch)",
				  algo);
	s->sim.fidelity = (enum hs_fidelity)fid;
	s->sim.seed = (uint64_t)seed;
	s->sim.steps = 1;
	if (load_packet(s, n, fid == HS_FID_PACKET, err))
		return -1;
	/* the network model at flow fidelity: flow, or ns3 (sim/net/net_ns3.h; `hetsim coll` reads the key itself) */
	static const char *const nets[] = {"flow", "ns3", NULL};
	int net;
	if (hs_cfg_enum(n, "simulation", "network", nets, 0, &net, err))
		return -1;
	/* ns3 carries a flow-fidelity step's transfers (sim/exec/comm_net.c); the other fidelities have no
	 * network to put on it, and several jobs share one flow network (sim/exec/jobs.c) */
	if (net == 1 && fid != HS_FID_FLOW)
		return hs_cfg_err(hs_yaml_get(n, "network"), err, "simulation", "network",
				  "'ns3' carries the transfers of flow fidelity (expected simulation.fidelity: flow with "
				  "network: ns3, or network: flow)");
	s->sim.network = net == 1 ? "ns3" : NULL;
	/* collectives inside a layer: on the network at flow fidelity unless asked otherwise; the analytical
	 * fidelity has no network to put them on */
	static const char *const lc[] = {"network", "closed_form", NULL};
	int l;
	if (hs_cfg_enum(n, "simulation", "layer_collectives", lc, fid == HS_FID_FLOW ? 0 : 1, &l, err))
		return -1;
	if (l == 0 && fid != HS_FID_FLOW)
		return hs_cfg_err(hs_yaml_get(n, "layer_collectives"), err, "simulation", "layer_collectives",
				  "'network' needs fidelity: flow (the analytical fidelity times every collective "
				  "with its closed form; expected closed_form, or fidelity: flow)");
	s->sim.layer_net = l == 0;
	if (s->sim.layer_net && s->par.routing.skew > 0) /* the segments' collectives are not rescaled */
		return hs_cfg_err(hs_yaml_get(n, "layer_collectives"), err, "simulation", "layer_collectives",
				  "'network' with parallelism.expert_routing is not modelled (expected closed_form)");
	return 0;
}

/* `cost: {gpu_hour: 2.5 | {DEVICE: price, ...}, idle_power: 0.0, pue: 1.0, currency: $}` */
static int load_cost(hs_scenario *s, const hs_ynode *root, hs_err *err)
{
	hs_costopts *c = &s->cost;
	c->gpu_hour = NAN;
	c->idle_power = 0;
	c->pue = 1;
	snprintf(c->currency, sizeof c->currency, "$");
	const hs_ynode *n = hs_yaml_get(root, "cost");
	if (!n)
		return 0;
	if (hs_cfg_known(n, "cost", cost_keys, "a mapping {gpu_hour, idle_power, pue, currency}", err))
		return -1;
	const char *cur;
	if (hs_cfg_num(n, "cost", "idle_power", HS_U_COUNT, 0, 1, 0, 0, &c->idle_power, err) ||
	    hs_cfg_num(n, "cost", "pue", HS_U_COUNT, 1, 10, 1, 0, &c->pue, err) ||
	    hs_cfg_str(n, "cost", "currency", "$", 0, &cur, err))
		return -1;
	snprintf(c->currency, sizeof c->currency, "%s", cur);
	const hs_ynode *g = hs_yaml_get(n, "gpu_hour");
	if (g && g->kind == HS_Y_MAP) {
		if (g->n > HS_COST_MAX_PRICES)
			return hs_cfg_err(g, err, "cost", "gpu_hour", "%zu prices (expected at most %d device types)",
					  g->n, HS_COST_MAX_PRICES);
		for (size_t i = 0; i < g->n; i++) {
			const char *dev = g->keys[i]->str;
			char path[96];
			snprintf(path, sizeof path, "cost.gpu_hour");
			/* a price for a type the cluster does not have would be ignored without a word (a typo) */
			char types[256] = "";
			int known = 0;
			for (int k = 0; s->cluster && k < hs_cluster_ngroups(s->cluster); k++) {
				const char *nm = hs_cluster_group(s->cluster, k)->gpu.name;
				known |= strcmp(nm, dev) == 0;
				if (!strstr(types, nm) && strlen(types) + strlen(nm) + 3 < sizeof types)
					snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", *types ? ", " : "", nm);
			}
			if (s->cluster && !known)
				return hs_cfg_err(g->keys[i], err, path, dev,
						  "not a device type of this cluster (expected one of: %s)", types);
			if (hs_cfg_node_num(g->vals[i], path, dev, HS_U_COUNT, 0, 1e9, &c->price[i], err))
				return -1;
			snprintf(c->price_dev[i], sizeof c->price_dev[i], "%s", dev);
			c->nprices++;
		}
	} else if (hs_cfg_num(n, "cost", "gpu_hour", HS_U_COUNT, 0, 1e9, NAN, 0, &c->gpu_hour, err)) {
		return -1;
	}
	return 0;
}

hs_scenario *hs_scenario_load(const char *path, const struct hs_strlist *sets, hs_err *err)
{
	hs_ydoc *doc = hs_yaml_load_file_set(path, sets ? sets->v : NULL, sets ? sets->n : 0, err);
	return doc ? hs_scenario_from_doc(doc, path, err) : NULL;
}

/* The head's name: `name`, else the file's */
static int head_name(const hs_ynode *root, const char *path, char *name, size_t n, hs_err *err)
{
	const char *nm;
	if (hs_cfg_str(root, "", "name", NULL, 0, &nm, err))
		return -1;
	if (!nm) { /* the file's name stands for the scenario's */
		const char *b = strrchr(path, '/');
		nm = b ? b + 1 : path;
	}
	snprintf(name, n, "%s", nm);
	return 0;
}

static const hs_ynode *head_cluster(const hs_ynode *root, hs_err *err)
{
	const hs_ynode *c = hs_yaml_get(root, "cluster");
	if (!c)
		hs_cfg_err(root, err, "cluster", "", "missing section (expected {groups: [...], fabric: {...}})");
	return c;
}

int hs_scenario_head(const hs_ynode *root, const char *path, char *name, size_t n, hs_cluster **cluster,
		     hs_err *err)
{
	*cluster = NULL;
	if (head_name(root, path, name, n, err))
		return -1;
	const hs_ynode *c = head_cluster(root, err);
	if (!c)
		return -1;
	*cluster = hs_cluster_from_yaml(c, "cluster", err);
	return *cluster ? 0 : -1;
}

hs_cluster *hs_scenario_cluster(const hs_ynode *root, hs_err *err)
{
	const hs_ynode *c = head_cluster(root, err);
	hs_cluster *cl = c ? hs_cluster_from_yaml(c, "cluster", err) : NULL;
	if (cl && hs_fabprof_attach(cl, err)) {
		hs_cluster_free(cl);
		cl = NULL;
	}
	return cl;
}

/* The workload view of a loaded scenario: what models/ and the executor read. */
static void wire_workload(hs_scenario *s)
{
	s->wl.cluster = s->cluster;
	s->wl.model = &s->model;
	s->wl.train = &s->train;
	s->wl.par = &s->par;
	s->wl.var = &s->var;
}

static hs_scenario *from_doc(hs_ydoc *doc, const char *path, hs_cluster *shared, hs_err *err);

hs_scenario *hs_scenario_from_doc(hs_ydoc *doc, const char *path, hs_err *err)
{
	return from_doc(doc, path, NULL, err);
}

hs_scenario *hs_scenario_from_doc_on(hs_ydoc *doc, const char *path, hs_cluster *cluster, hs_err *err)
{
	return from_doc(doc, path, cluster, err);
}

/* shared: the cluster built before (hs_scenario_cluster), borrowed; NULL: build it */
static hs_scenario *from_doc(hs_ydoc *doc, const char *path, hs_cluster *shared, hs_err *err)
{
	hs_scenario *s = hs_xcalloc(1, sizeof *s);
	s->path = path;
	s->doc = doc;
	const hs_ynode *root = hs_yaml_root(s->doc);
	if (hs_yaml_get(root, "jobs")) {
		/* several jobs are several scenarios sharing one cluster: sim/study/jobs.h loads them */
		hs_cfg_err(hs_yaml_get(root, "jobs"), err, "", "jobs", "a scenario with several jobs runs with `hetsim "
			   "run` only (expected a scenario without jobs: for this command)");
		goto fail;
	}
	if (hs_cfg_known(root, "", hs_scenario_keys, "a scenario mapping with cluster, model, training, parallelism", err))
		goto fail;
	int kind;
	if (hs_cfg_enum(root, "", "kind", hs_scenario_kinds, 0, &kind, err))
		goto fail;
	if (kind != 0) {
		hs_cfg_err(hs_yaml_get(root, "kind"), err, "", "kind", "a fabric experiment is not a training "
								  "scenario (run it with `hetsim run`)");
		goto fail;
	}
	if (shared) {
		/* the checks of the head in its order; the cluster's own passed when it was built */
		if (head_name(root, path, s->name, sizeof s->name, err) || !head_cluster(root, err))
			goto fail;
		s->cluster = shared;
		s->borrowed_cluster = 1;
	} else if (hs_scenario_head(root, path, s->name, sizeof s->name, &s->cluster, err) ||
		   hs_fabprof_attach(s->cluster, err)) {
		goto fail;
	}
	const hs_ynode *m = hs_yaml_get(root, "model");
	if (!m) {
		hs_cfg_err(root, err, "model", "", "missing (expected a preset name or a shape)");
		goto fail;
	}
	if (hs_model_from_yaml(m, "model", &s->model, err))
		goto fail;
	if (load_training(s, root, err) ||
	    hs_diloco_from_yaml(hs_yaml_get(root, "diloco"), &s->diloco, err) || load_parallel(s, root, err) ||
	    load_sim(s, root, err) ||
	    hs_variability_from_yaml(hs_yaml_get(root, "variability"), hs_cluster_ngpus(s->cluster), &s->var, err) ||
	    hs_resilience_from_yaml(hs_yaml_get(root, "resilience"), &s->res, err) ||
	    load_cost(s, root, err))
		goto fail;
	if (s->sim.fidelity != HS_FID_FLOW && hs_coll_closed_form_check(s->cluster, (enum hs_coll_algo)s->wl.coll_algo, err))
		goto fail;
	if (hs_variability_active(&s->var) || hs_scenario_routing_splits(s))
		s->sim.symmetry = 0; /* replicas differ (speeds, or their EP groups' routing): simulate each */
	wire_workload(s);
	return s;
fail:
	hs_scenario_free(s);
	return NULL;
}

hs_scenario *hs_scenario_job(hs_ydoc *doc, const char *path, const hs_ynode *job, const char *name,
			     hs_cluster *cluster, hs_err *err)
{
	hs_scenario *s = hs_xcalloc(1, sizeof *s);
	s->path = path;
	s->doc = doc;
	s->root = job;
	s->borrowed_doc = 1;
	s->cluster = cluster;
	snprintf(s->name, sizeof s->name, "%s", name);
	if (hs_fabprof_attach(s->cluster, err))
		goto fail;
	const hs_ynode *m = hs_yaml_get(job, "model");
	if (!m) {
		hs_cfg_err(job, err, "model", "", "missing (expected a preset name or a shape)");
		goto fail;
	}
	/* the sections a job does not have are read as absent: their defaults, with nothing enabled */
	if (hs_model_from_yaml(m, "model", &s->model, err) || load_training(s, job, err) ||
	    hs_diloco_from_yaml(NULL, &s->diloco, err) || load_parallel(s, job, err) ||
	    load_sim(s, hs_yaml_root(doc), err) ||
	    hs_variability_from_yaml(NULL, hs_cluster_ngpus(s->cluster), &s->var, err) ||
	    hs_resilience_from_yaml(NULL, &s->res, err) || load_cost(s, job, err))
		goto fail;
	wire_workload(s);
	return s;
fail:
	hs_scenario_free(s);
	return NULL;
}

void hs_scenario_free(hs_scenario *s)
{
	if (!s)
		return;
	if (!s->borrowed_cluster)
		hs_cluster_free(s->cluster);
	free(s->par.stage_layers);
	free(s->par.chunk_layers);
	free(s->par.dp_mb);
	hs_variability_free(&s->var);
	hs_resilience_free(&s->res);
	free(s->packet);
	if (!s->borrowed_doc)
		hs_yaml_free(s->doc);
	free(s);
}
