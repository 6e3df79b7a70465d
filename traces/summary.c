#include "traces/summary.h"

#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "models/schedule.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/study/cost.h"
#include "sim/base/json.h"
#include "sim/base/sizes.h"

static const char *const group_names[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
static const char *const rc_names[] = {"none", "selective", "full"};

static double exposed_total(const hs_rep_result *r)
{
	double t = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		t += r->exposed_s[k];
	return t;
}

/* Bytes per GPU in host memory (offload), the most of any stage; 0 without offload. */
static double host_bytes(const hs_sim *sim)
{
	double h = 0;
	for (int st = 0; st < sim->b.pp; st++)
		if (sim->b.stages[st].mem.host > h)
			h = sim->b.stages[st].mem.host;
	return h;
}

static void fmt_bytes(char *buf, size_t n, double b)
{
	snprintf(buf, n, "%.1f GiB", b / HS_GiB);
}

static void text_resilience(FILE *f, const hs_sim *sim)
{
	const hs_resilience *rs = &sim->s->res;
	const double H = 3600;
	fprintf(f, "\nfailures and checkpoints (%d trials of %.1f days, seed %llu):\n", rs->trials, rs->horizon / 86400,
		(unsigned long long)sim->s->sim.seed);
	fprintf(f, "  system MTBF %.2f h; checkpoint of %.1f GiB stalls the job %.1f s and commits after %.1f s\n",
		sim->sys_mtbf / H, sim->job.state_bytes / HS_GiB, sim->nres ? sim->res[0].stall : 0,
		sim->nres ? sim->res[0].commit : 0);
	fprintf(f, "  optimal interval: Young %.1f min, Daly %.1f min\n", sim->young / 60, sim->daly / 60);
	fprintf(f, "  %12s %9s %9s %9s %10s %9s %9s %9s %12s\n", "interval_min", "goodput", "p10", "p90", "fails/day",
		"lost", "down", "ckpt", "train_days");
	for (int i = 0; i < sim->nres; i++) {
		const hs_res_out *o = &sim->res[i];
		fprintf(f, "  %12.1f %8.2f%% %8.2f%% %8.2f%% %10.2f %8.2f%% %8.2f%% %8.2f%% %12.2f%s\n", o->interval / 60,
			100 * o->goodput, 100 * o->goodput_p10, 100 * o->goodput_p90, o->failures_per_day,
			100 * o->lost_work_frac, 100 * o->down_frac, 100 * o->ckpt_frac, o->time_to_train_s / 86400,
			i == sim->nres - 1 && sim->nres > 1 ? "  (Daly)" : "");
	}
}

/* Heterogeneous placement (docs/heterogeneity.md): uneven or balanced splits, and the busiest stage. */
static void int_list(FILE *f, const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (n > 24 && i == 12) {
			fprintf(f, " ...");
			i = n - 12;
		}
		fprintf(f, "%s%d", i ? " " : "", v[i]);
	}
}

/* The stage whose ranks are busiest (compute + exposed communication): it sets the pipeline's pace. */
static int busiest_rep(const hs_result *r)
{
	int w = 0;
	for (int i = 0; i < r->nreps; i++)
		if (r->reps[i].compute_s + exposed_total(&r->reps[i]) >
		    r->reps[w].compute_s + exposed_total(&r->reps[w]))
			w = i;
	return w;
}

static void hetero_text(FILE *f, const hs_sim *sim)
{
	const hs_partition *pt = &sim->b.part;
	const hs_parallel *p = &sim->s->par;
	int uneven = 0;
	for (int i = 0; i < pt->pp; i++)
		uneven |= pt->stage_layers[i] != pt->stage_layers[0];
	if (pt->pp > 1 && (uneven || pt->stages_auto)) {
		fprintf(f, "stage layers  ");
		int_list(f, pt->stage_layers, pt->pp);
		fprintf(f, "%s\n", pt->stages_auto ? " (auto: balanced by device speed and memory)" : "");
	}
	if (pt->uneven_dp || pt->dp_auto) {
		fprintf(f, "replica load  ");
		int_list(f, pt->dp_mb, pt->dp);
		fprintf(f, " micro-batches%s\n", pt->dp_auto ? " (auto: by replica speed)" : "");
	}
	if (p->sites > 1)
		fprintf(f, "sites         %d (DiLoCo): data-parallel groups of %d replicas, one per site\n", p->sites,
			hs_build_dp_group_size(p));
	if (pt->pp > 1 && sim->r.nreps > 0) {
		const hs_rep_result *q = &sim->r.reps[busiest_rep(&sim->r)];
		fprintf(f, "bottleneck    stage %d (%s, %d layers): busiest, compute + exposed comm %.4f s\n", q->stage,
			q->device, pt->stage_layers[q->stage], q->compute_s + exposed_total(q));
	}
}

static void text_diloco(FILE *f, const hs_sim *sim)
{
	const hs_diloco_out o = sim->diloco;
	fprintf(f, "\nDiLoCo across %d sites (outer sync every %d inner steps):\n", o.sites, o.inner_steps);
	fprintf(f, "  inner step        %9.4f s  (data-parallel sync inside a site)\n", o.inner_s);
	fprintf(f, "  outer sync        %9.4f s  (%.2f GB of deltas: WAN all-reduce %.4f s at %.1f Gb/s, %.1f ms; "
		   "site all-gather %.4f s)\n",
		o.outer_s, o.outer_bytes / 1e9, o.outer_wan_s, o.wan_bw * 8 / 1e9, o.wan_lat * 1e3, o.outer_site_s);
	fprintf(f, "  effective step    %9.4f s  (inner + outer / %d)\n", o.effective_s, o.inner_steps);
	if (o.simulated_s > 0)
		fprintf(f, "  simulated steps   %9.4f s  (mean of %d simulated steps with the outer sync after every %d)\n",
			o.simulated_s, sim->r.steps, o.inner_steps);
	fprintf(f, "  synchronous DP    %9.4f s  at least (inner step + fp32 gradient all-reduce over the WAN, %.4f s)\n",
		o.inner_s + o.sync_wan_s, o.sync_wan_s);
}

/* Bytes one real rank of each simulated rank sends in the step, by group kind (out[rep * HS_GROUP_COUNT + k],
 * malloc'd, one pass over the tasks: a traced workload has a rep per rank, 1,024 x 10,000 tasks): each collective (its own tasks
 * and those inside compute tasks, TP/CP/EP) at nccl-tests' bus-bandwidth accounting over its group's size (an
 * all-reduce of S bytes over n ranks sends 2(n-1)/n x S per rank, an all-gather or reduce-scatter (n-1)/n x
 * S, sim/coll/coll.c), pipeline sends at their size. What the algorithm puts on each link differs (trees,
 * NVLS); this is the per-rank volume the bandwidth figures of every tool are quoted against. */
static double *comm_sent(const hs_sim *sim)
{
	int nreps = sim->r.nreps > sim->b.graph.nreps ? sim->r.nreps : sim->b.graph.nreps;
	double *all = hs_xcalloc((size_t)(nreps > 0 ? nreps : 1) * HS_GROUP_COUNT, sizeof *all);
	const hs_parallel *p = &sim->s->par;
	const hs_graph *g = &sim->b.graph;
	const int n[HS_GROUP_COUNT] = {[HS_GROUP_TP] = p->tp, [HS_GROUP_CP] = p->cp,
				       [HS_GROUP_DP] = hs_build_dp_group_size(p), [HS_GROUP_EP] = p->ep,
				       [HS_GROUP_PP] = 2};
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		double *out = all + (size_t)t->rep * HS_GROUP_COUNT;
		if (t->kind == HS_T_SEND) {
			out[HS_GROUP_PP] += t->bytes;
		} else if (t->kind == HS_T_COLL) {
			/* a traced workload's collective is over its own process group, not the flat layout's */
			int gn = t->xgroup ? (int)(g->xg_first[t->xgroup] - g->xg_first[t->xgroup - 1])
					   : t->group < HS_GROUP_COUNT ? n[t->group] : 0;
			if (t->group < HS_GROUP_COUNT && gn > 1)
				out[t->group] += t->bytes * hs_coll_busbw_factor((enum hs_coll_op)t->coll, gn);
		} else if (t->kind == HS_T_COMPUTE) {
			for (uint32_t q = t->op_first; q < t->op_first + t->op_count; q++) {
				const hs_op *o = &g->ops[q];
				if (o->kind == HS_OP_COMM && o->group < HS_GROUP_COUNT && n[o->group] > 1)
					out[o->group] += t->scale * o->bytes * hs_coll_busbw_factor(o->coll, n[o->group]);
			}
		}
	}
	return all;
}

/* The passes of hs_profile_attn_rule's bits. */
static const char *attn_rule_passes(int bits)
{
	return bits == 3 ? "forward and backward" : bits == 1 ? "forward" : "backward";
}

static void write_text(FILE *f, const hs_sim *sim, int detail)
{
	const hs_scenario *s = sim->s;
	const hs_build *b = &sim->b;
	const hs_result *r = &sim->r;
	const hs_parallel *p = &s->par;
	fprintf(f, "scenario      %s\n", s->name);
	fprintf(f, "cluster       %d GPUs:", hs_cluster_ngpus(s->cluster));
	for (int i = 0; i < hs_cluster_ngroups(s->cluster); i++) {
		const hs_node_group *g = hs_cluster_group(s->cluster, i);
		fprintf(f, "%s %d x %d %s", i ? "," : "", g->nodes, g->gpus_per_node, g->gpu.name);
	}
	fprintf(f, "\n");
	for (int i = 0; i < sim->ndev; i++) {
		fprintf(f, "  profile     %s: %s\n", sim->dev[i].profile, sim->dev[i].source);
		if (sim->dev[i].attn_rule)
			fprintf(f, "  attention   %s has no flash-attention measurements (%s): flash attention timed "
				   "by the FlashAttention-2 rule (calib/fit.c, docs/calibration.md)\n",
				sim->dev[i].profile, attn_rule_passes(sim->dev[i].attn_rule));
	}
	fprintf(f, "model         %s, %.2f B parameters, seq %d, global batch %lld\n", s->model.name,
		hs_model_params(&s->model) / 1e9, s->train.seq_len, (long long)s->train.global_batch);
	fprintf(f, "recipe        %s: %s GEMMs, %s gradients\n", s->train.recipe->name,
		s->train.fp8_gemms ? "fp8" : hs_dtype_name(s->train.dtype), hs_dtype_name(s->train.grad_dtype));
	fprintf(f, "parallelism   TP %d  PP %d  DP %d", p->tp, p->pp, p->dp);
	if (p->cp > 1)
		fprintf(f, "  CP %d", p->cp);
	if (p->ep > 1)
		fprintf(f, "  EP %d", p->ep);
	fprintf(f, "  %s%s, %d micro-batches of %d, recompute %s%s%s\n", hs_sched_names[p->schedule],
		p->vstages > 1 ? " (virtual stages)" : "", p->micro_batches, s->train.micro_batch,
		rc_names[p->recompute], p->sequence_parallel ? ", sequence parallel" : "",
		p->zero ? (p->zero == 1 ? ", ZeRO-1" : p->zero == 2 ? ", ZeRO-2" : ", ZeRO-3") : "");
	hetero_text(f, sim);
	fprintf(f, "\n");
	if (r->steps > 1)
		fprintf(f, "step time     %.4f s mean of %d steps (P50 %.4f, P99 %.4f, min %.4f, max %.4f)\n",
			r->step_time_s, r->steps, r->step_p50_s, r->step_p99_s, r->step_min_s, r->step_max_s);
	else
		fprintf(f, "step time     %.4f s\n", r->step_time_s);
	fprintf(f, "tokens/s      %.0f\n", r->tokens_per_s);
	fprintf(f, "MFU / HFU     %.1f%% / %.1f%%\n", 100 * r->mfu, 100 * r->hfu);
	char m1[32], m2[32];
	const hs_rep_result *mp = &r->reps[r->mem_peak_rep];
	fmt_bytes(m1, sizeof m1, mp->mem_bytes);
	fmt_bytes(m2, sizeof m2, mp->mem_capacity);
	fprintf(f, "memory peak   %s per GPU of %s usable (stage %d, %s)\n", m1, m2, mp->stage, mp->device);
	double host = host_bytes(sim);
	if (host > 0) { /* offload only, so other outputs stay as they were */
		fmt_bytes(m1, sizeof m1, host);
		fprintf(f, "host memory   %s per GPU offloaded (the most of any stage)\n", m1);
	}
	const hs_cost cost = sim->cost;
	fprintf(f, "GPU-hours     %.4f per step; utilisation %.1f%%, %.1f kW, %.0f kJ per step, %.3g kWh per M tokens\n",
		cost.gpu_hours_per_step, 100 * cost.utilisation, cost.power_w / 1e3, cost.energy_j_per_step / 1e3,
		cost.kwh_per_mtok);
	if (isfinite(cost.cost_per_step))
		fprintf(f, "cost          %s%.4f per step, %s%.2f per M tokens, %s%.2f per hour\n", cost.currency,
			cost.cost_per_step, cost.currency, cost.cost_per_mtok, cost.currency, cost.cost_per_hour);
	const hs_rep_result *c = &r->reps[r->critical_rep];
	double st = r->step_time_s > 0 ? r->step_time_s : 1;
	fprintf(f, "\nbreakdown of the critical rank (stage %d):\n", c->stage);
	fprintf(f, "  compute           %9.4f s  %5.1f%%\n", c->compute_s, 100 * c->compute_s / st);
	double ex = exposed_total(c);
	fprintf(f, "  exposed comm      %9.4f s  %5.1f%%  (", ex, 100 * ex / st);
	int any = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		if (c->exposed_s[k] > 0) {
			fprintf(f, "%s%s %.4f", any ? ", " : "", group_names[k], c->exposed_s[k]);
			any = 1;
		}
	fprintf(f, "%s)\n", any ? "" : "none");
	fprintf(f, "  pipeline bubble   %9.4f s  %5.1f%%\n", c->bubble_s, 100 * c->bubble_s / st);
	if (c->offload_s > 0) /* printed only with parallelism.offload, so other outputs stay as they were */
		fprintf(f, "  host offload      %9.4f s  %5.1f%%\n", c->offload_s, 100 * c->offload_s / st);
	double wmax = 0;
	int wrep = 0;
	for (int i = 0; i < r->nreps; i++)
		if (r->reps[i].straggler_wait_s > wmax)
			wmax = r->reps[i].straggler_wait_s, wrep = i;
	if (wmax > 0)
		fprintf(f, "  straggler wait    %9.4f s at most (stage %d, replica %d), part of exposed dp comm\n", wmax,
			r->reps[wrep].stage, r->reps[wrep].dp_index);
	if (detail) {
		fprintf(f, "\nper simulated rank (one per %s):\n", r->nreps == p->pp ? "stage" : "stage and replica");
		fprintf(f, "  %5s %4s %-16s %10s %10s %10s %10s %10s %10s %9s\n", "stage", "dp", "device", "finish_s",
			"compute_s", "exposed_s", "bubble_s", "strag_s", "TFLOP", "mem_GiB");
		for (int i = 0; i < r->nreps; i++) {
			const hs_rep_result *q = &r->reps[i];
			fprintf(f, "  %5d %4d %-16s %10.4f %10.4f %10.4f %10.4f %10.4f %10.2f %9.1f\n", q->stage,
				q->dp_index, q->device, q->finish_s, q->compute_s, exposed_total(q), q->bubble_s,
				q->straggler_wait_s, q->flops / 1e12, q->mem_bytes / HS_GiB);
		}
		fprintf(f, "\ntime by kind of work per simulated rank (s; host: the GPU waiting for the host to issue "
			   "kernels):\n  %5s %4s", "stage", "dp");
		for (int k = 0; k < HS_TC_COUNT; k++)
			fprintf(f, " %10s", hs_time_class_name((enum hs_time_class)k));
		fprintf(f, " %10s %10s\n", "comm", "bubble");
		for (int i = 0; i < r->nreps; i++) {
			const hs_rep_result *q = &r->reps[i];
			fprintf(f, "  %5d %4d", q->stage, q->dp_index);
			for (int k = 0; k < HS_TC_COUNT; k++)
				fprintf(f, " %10.4f", q->class_s[k]);
			fprintf(f, " %10.4f %10.4f\n", exposed_total(q), q->bubble_s);
		}
		fprintf(f, "\ncommunication sent per GPU (GB; nccl-tests' bus accounting over each group):\n  %5s %4s",
			"stage", "dp");
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			fprintf(f, " %10s", group_names[k]);
		fprintf(f, "\n");
		double *sent = comm_sent(sim);
		for (int i = 0; i < r->nreps; i++) {
			const double *by = sent + (size_t)i * HS_GROUP_COUNT;
			fprintf(f, "  %5d %4d", r->reps[i].stage, r->reps[i].dp_index);
			for (int k = 0; k < HS_GROUP_COUNT; k++)
				fprintf(f, " %10.3f", by[k] / 1e9);
			fprintf(f, "\n");
		}
		free(sent);
		const hs_link_util *lu = &r->links;
		if (lu->nlinks > 0 && lu->bytes) {
			/* flow fidelity: the links are in decreasing order of bytes carried (sim/exec/result.c) */
			int top = lu->nlinks < 8 ? lu->nlinks : 8;
			fprintf(f, "\nbusiest links (of the %d that carried the most bytes; all in HDF5 /links):\n  %-36s %10s %8s %10s\n",
				lu->nlinks, "link", "GB", "busy", "GB/s");
			for (int l = 0; l < top; l++)
				fprintf(f, "  %-36s %10.3f %7.1f%% %10.1f\n", lu->names[l], lu->bytes[l] / 1e9,
					100 * lu->mean_util[l], lu->capacity_Bps[l] / 1e9);
		}
		fprintf(f, "\nmemory per stage (GiB per GPU):\n  %5s %8s %8s %8s %11s %8s %8s\n", "stage", "weights",
			"grads", "optim", "activations", "logits", "total");
		for (int i = 0; i < b->pp; i++) {
			const hs_mem *m = &b->stages[i].mem;
			double G = HS_GiB;
			fprintf(f, "  %5d %8.2f %8.2f %8.2f %11.2f %8.2f %8.2f\n", i, m->weights / G, m->grads / G,
				m->optimizer / G, m->activations / G, m->logits / G, m->total / G);
		}
	}
	if (s->res.enabled)
		text_resilience(f, sim);
	if (s->diloco.enabled)
		text_diloco(f, sim);
	fprintf(f, "\nsimulated %llu events (%llu tasks)\n", (unsigned long long)r->events,
		(unsigned long long)r->tasks);
}

static void write_json(FILE *f, const hs_sim *sim, int detail)
{
	const hs_scenario *s = sim->s;
	const hs_build *b = &sim->b;
	const hs_result *r = &sim->r;
	hs_json j;
	hs_json_init(&j, f);
	const hs_rep_result *c = &r->reps[r->critical_rep];
	hs_json_obj(&j);
	hs_json_kstr(&j, "scenario", s->name);
	hs_json_kstr(&j, "recipe", s->train.recipe->name);
	hs_json_kstr(&j, "grad_dtype", hs_dtype_name(s->train.grad_dtype));
	hs_json_knum(&j, "step_time_s", r->step_time_s);
	hs_json_kint(&j, "steps", r->steps);
	hs_json_knum(&j, "step_time_p50_s", r->step_p50_s);
	hs_json_knum(&j, "step_time_p99_s", r->step_p99_s);
	hs_json_knum(&j, "mfu", r->mfu);
	hs_json_knum(&j, "hfu", r->hfu);
	hs_json_knum(&j, "tokens_per_s", r->tokens_per_s);
	hs_json_knum(&j, "memory_peak_bytes", r->mem_peak_bytes);
	if (host_bytes(sim) > 0)
		hs_json_knum(&j, "host_memory_bytes", host_bytes(sim));
	hs_json_knum(&j, "model_flops", r->model_flops);
	hs_json_knum(&j, "hardware_flops", r->hw_flops);
	hs_json_key(&j, "devices");
	hs_json_arr(&j);
	for (int i = 0; i < sim->ndev; i++) {
		hs_json_obj(&j);
		hs_json_kstr(&j, "name", sim->dev[i].name);
		hs_json_kint(&j, "count", sim->dev[i].count);
		hs_json_kstr(&j, "profile", sim->dev[i].profile);
		hs_json_kstr(&j, "profile_source", sim->dev[i].source);
		if (sim->dev[i].attn_rule)
			hs_json_kstr(&j, "attention_by_rule", attn_rule_passes(sim->dev[i].attn_rule));
		hs_json_end_obj(&j);
	}
	hs_json_end_arr(&j);
	const hs_cost cost = sim->cost;
	hs_json_key(&j, "cost");
	hs_json_obj(&j);
	hs_json_knum(&j, "gpu_hours_per_step", cost.gpu_hours_per_step);
	hs_json_knum(&j, "utilisation", cost.utilisation);
	hs_json_knum(&j, "power_w", cost.power_w);
	hs_json_knum(&j, "energy_j_per_step", cost.energy_j_per_step);
	hs_json_knum(&j, "kwh_per_mtok", cost.kwh_per_mtok);
	hs_json_knum(&j, "tokens_per_step", cost.tokens_per_step);
	hs_json_knum(&j, "cost_per_step", cost.cost_per_step); /* null without prices */
	hs_json_knum(&j, "cost_per_mtok", cost.cost_per_mtok);
	hs_json_knum(&j, "cost_per_hour", cost.cost_per_hour);
	hs_json_kstr(&j, "currency", cost.currency);
	hs_json_end_obj(&j);
	hs_json_key(&j, "breakdown");
	hs_json_obj(&j);
	hs_json_kint(&j, "critical_stage", c->stage);
	hs_json_knum(&j, "compute_s", c->compute_s);
	hs_json_knum(&j, "exposed_comm_s", exposed_total(c));
	hs_json_key(&j, "exposed_comm_by_kind_s");
	hs_json_obj(&j);
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		hs_json_knum(&j, group_names[k], c->exposed_s[k]);
	hs_json_end_obj(&j);
	hs_json_knum(&j, "bubble_s", c->bubble_s);
	if (c->offload_s > 0)
		hs_json_knum(&j, "offload_s", c->offload_s);
	hs_json_key(&j, "compute_by_kind_s");
	hs_json_obj(&j);
	for (int k = 0; k < HS_TC_COUNT; k++)
		hs_json_knum(&j, hs_time_class_name((enum hs_time_class)k), c->class_s[k]);
	hs_json_end_obj(&j);
	/* the step's communication volume over every real rank, by kind (comm_sent: per rank) */
	double tot[HS_GROUP_COUNT] = {0};
	double *sent = comm_sent(sim);
	for (int i = 0; i < r->nreps; i++) {
		const double *by = sent + (size_t)i * HS_GROUP_COUNT;
		int mult = i < b->graph.nreps ? b->graph.reps[i].multiplicity : 1;
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			tot[k] += mult * by[k];
	}
	hs_json_key(&j, "comm_sent_bytes_by_kind");
	hs_json_obj(&j);
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		hs_json_knum(&j, group_names[k], tot[k]);
	hs_json_end_obj(&j);
	hs_json_end_obj(&j);
	hs_json_key(&j, "parallelism");
	hs_json_obj(&j);
	hs_json_kint(&j, "tp", s->par.tp);
	hs_json_kint(&j, "pp", s->par.pp);
	hs_json_kint(&j, "dp", s->par.dp);
	hs_json_kint(&j, "cp", s->par.cp);
	hs_json_kint(&j, "ep", s->par.ep);
	hs_json_kint(&j, "micro_batches", s->par.micro_batches);
	hs_json_kstr(&j, "schedule", hs_sched_names[s->par.schedule]);
	hs_json_kstr(&j, "recompute", rc_names[s->par.recompute]);
	hs_json_key(&j, "stage_layers");
	hs_json_arr(&j);
	for (int i = 0; i < b->part.pp; i++)
		hs_json_int(&j, b->part.stage_layers[i]);
	hs_json_end_arr(&j);
	hs_json_key(&j, "dp_microbatches");
	hs_json_arr(&j);
	for (int i = 0; i < b->part.dp; i++)
		hs_json_int(&j, b->part.dp_mb[i]);
	hs_json_end_arr(&j);
	hs_json_end_obj(&j);
	if (b->part.pp > 1 && r->nreps > 0)
		hs_json_kint(&j, "bottleneck_stage", r->reps[busiest_rep(r)].stage);
	if (s->diloco.enabled) {
		const hs_diloco_out o = sim->diloco;
		hs_json_key(&j, "diloco");
		hs_json_obj(&j);
		hs_json_kint(&j, "sites", o.sites);
		hs_json_kint(&j, "inner_steps", o.inner_steps);
		hs_json_knum(&j, "inner_step_s", o.inner_s);
		hs_json_knum(&j, "outer_sync_s", o.outer_s);
		hs_json_knum(&j, "outer_wan_s", o.outer_wan_s);
		hs_json_knum(&j, "outer_site_s", o.outer_site_s);
		hs_json_knum(&j, "outer_bytes", o.outer_bytes);
		hs_json_knum(&j, "effective_step_s", o.effective_s);
		hs_json_knum(&j, "sync_dp_wan_s", o.sync_wan_s);
		hs_json_end_obj(&j);
	}
	if (detail) {
		hs_json_key(&j, "ranks");
		hs_json_arr(&j);
		for (int i = 0; i < r->nreps; i++) {
			const hs_rep_result *q = &r->reps[i];
			hs_json_obj(&j);
			hs_json_kint(&j, "stage", q->stage);
			hs_json_kint(&j, "dp_index", q->dp_index);
			hs_json_kstr(&j, "device", q->device);
			hs_json_knum(&j, "finish_s", q->finish_s);
			hs_json_knum(&j, "compute_s", q->compute_s);
			hs_json_knum(&j, "exposed_comm_s", exposed_total(q));
			hs_json_knum(&j, "bubble_s", q->bubble_s);
			hs_json_key(&j, "compute_by_kind_s");
			hs_json_obj(&j);
			for (int k = 0; k < HS_TC_COUNT; k++)
				hs_json_knum(&j, hs_time_class_name((enum hs_time_class)k), q->class_s[k]);
			hs_json_end_obj(&j);
			hs_json_knum(&j, "straggler_wait_s", q->straggler_wait_s);
			hs_json_knum(&j, "memory_bytes", q->mem_bytes);
			const double *by = sent + (size_t)i * HS_GROUP_COUNT;
			hs_json_key(&j, "comm_sent_bytes");
			hs_json_obj(&j);
			for (int k = 0; k < HS_GROUP_COUNT; k++)
				hs_json_knum(&j, group_names[k], by[k]);
			hs_json_end_obj(&j);
			hs_json_end_obj(&j);
		}
		hs_json_end_arr(&j);
		if (r->links.nlinks > 0 && r->links.bytes) {
			hs_json_key(&j, "links");
			hs_json_arr(&j);
			for (int l = 0; l < r->links.nlinks; l++) {
				hs_json_obj(&j);
				hs_json_kstr(&j, "name", r->links.names[l]);
				hs_json_knum(&j, "carried_bytes", r->links.bytes[l]);
				hs_json_knum(&j, "mean_busy", r->links.mean_util[l]);
				hs_json_knum(&j, "capacity_Bps", r->links.capacity_Bps[l]);
				hs_json_end_obj(&j);
			}
			hs_json_end_arr(&j);
		}
		(void)b;
	}
	if (s->res.enabled) {
		hs_json_key(&j, "resilience");
		hs_json_obj(&j);
		hs_json_knum(&j, "system_mtbf_s", sim->sys_mtbf);
		hs_json_knum(&j, "young_interval_s", sim->young);
		hs_json_knum(&j, "daly_interval_s", sim->daly);
		hs_json_key(&j, "intervals");
		hs_json_arr(&j);
		for (int i = 0; i < sim->nres; i++) {
			const hs_res_out *o = &sim->res[i];
			hs_json_obj(&j);
			hs_json_knum(&j, "interval_s", o->interval);
			hs_json_knum(&j, "goodput", o->goodput);
			hs_json_knum(&j, "goodput_p10", o->goodput_p10);
			hs_json_knum(&j, "goodput_p90", o->goodput_p90);
			hs_json_knum(&j, "failures_per_day", o->failures_per_day);
			hs_json_knum(&j, "checkpoint_stall_s", o->stall);
			hs_json_knum(&j, "time_to_train_s", o->time_to_train_s);
			hs_json_end_obj(&j);
		}
		hs_json_end_arr(&j);
		hs_json_end_obj(&j);
	}
	hs_json_kint(&j, "events", (long long)r->events);
	hs_json_end_obj(&j);
	free(sent);
}

static const hs_summary_format formats[] = {
	{"text", write_text},
	{"json", write_json},
	{NULL, NULL},
};

const hs_summary_format *hs_summary_format_find(const char *name)
{
	for (const hs_summary_format *f = formats; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}
