#include "calib/refexec_cmp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

static void add(hs_refexec_cmp *c, const char *kind, const char *opkind, const char *label, double pred,
		double meas)
{
	if (!(pred > 0) || !(meas > 0))
		return;
	hs_xgrow(&c->rows, &c->cap, c->n + 1, sizeof *c->rows);
	hs_refexec_row *r = &c->rows[c->n++];
	snprintf(r->kind, sizeof r->kind, "%s", kind);
	snprintf(r->opkind, sizeof r->opkind, "%s", opkind);
	snprintf(r->label, sizeof r->label, "%s", label);
	r->predicted = pred;
	r->measured = meas;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* The family of the kernel kernels/refexec.cu runs for a memory-bound op, from its name (the same rule as
 * there): a layer norm for "ln*" or "*norm*" (not grad_norm), a row softmax for "softmax*", a 3-tensor add for
 * "add*", otherwise a 2-tensor scale, which streams like a copy (NULL: the copy curve). */
static const char *refexec_family(const char *name)
{
	if ((starts(name, "ln") || strstr(name, "norm")) && !starts(name, "grad_norm"))
		return "layernorm";
	if (starts(name, "softmax"))
		return "softmax";
	if (starts(name, "add"))
		return "add";
	return NULL;
}

/* `count` identical GEMMs in one kernel pay the launch once: the rule op timing uses (calib/profile.h). */
static double batched_gemm(const hs_profile *p, double m, double n, double k, double count, int dt)
{
	return hs_profile_gemm_batched_time(p, NULL, m, n, k, count, (enum hs_dtype)dt);
}

/* refexec's attention is materialised (kernels/ops.cu hsk_attn_fwd/bwd): per (batch, head), the forward is
 * S = K Q^T (skv x s x d), a row softmax over the s x skv scores (bf16 read and written) and O = V P (d x s x
 * skv); the backward dV, dP, a softmax backward (P and dP read, dP written) and dQ, dK. Priced with the
 * profile's GEMM curve and softmax factor; the scores' GEMMs have k = d, below most grids' k axis, where the
 * grid's edge value holds. */
static double materialised_attn(const hs_profile *p, const hsg_op *o, double scale)
{
	double bh = o->b * o->h * scale, s = o->s, kv = o->skv > 0 ? o->skv : o->s, d = o->d;
	double scores = bh * s * kv * 2; /* bytes of one bf16 s x skv matrix per (batch, head) */
	if (!o->bwd)
		return batched_gemm(p, kv, s, d, bh, HS_BF16) + hs_profile_mem_op_time(p, NULL, "softmax", 2 * scores) +
		       batched_gemm(p, d, s, kv, bh, HS_BF16);
	return batched_gemm(p, d, kv, s, bh, HS_BF16) + batched_gemm(p, kv, s, d, bh, HS_BF16) +
	       hs_profile_mem_op_time(p, NULL, "softmax", 3 * scores) + batched_gemm(p, d, s, kv, bh, HS_BF16) +
	       batched_gemm(p, d, kv, s, bh, HS_BF16);
}

/* The profile's time of the kernel refexec runs for one op (comm ops inside a compute task: 0). */
static double op_pred(const hs_profile *p, const hsg_op *o, double scale)
{
	switch (o->kind) {
	case HSG_OP_GEMM: return batched_gemm(p, o->m * scale, o->n, o->k, o->count, o->dtype);
	case HSG_OP_ATTN: return materialised_attn(p, o, scale);
	case HSG_OP_MEM: {
		const char *f = refexec_family(o->name);
		return f ? hs_profile_mem_op_time(p, NULL, f, o->bytes * scale) : hs_profile_mem_time(p, NULL, o->bytes * scale);
	}
	case HSG_OP_OPTIMIZER: return hs_profile_mem_time(p, NULL, o->bytes * scale);
	default: return 0;
	}
}

/* A compute task from the profile: its ops back to back on one stream, kernel_gap before each. */
static double task_pred(const hs_profile *p, const hsg_graph *g, const hsg_task *t)
{
	if (t->kind != HSG_T_COMPUTE)
		return t->pred_s > 0 ? t->pred_s : 0;
	double sum = 0, gap = hs_profile_kernel_gap(p);
	for (uint32_t i = 0; i < t->op_count; i++) {
		double x = op_pred(p, &g->ops[t->op_first + i], t->scale);
		if (x > 0)
			sum += x + gap;
	}
	return sum;
}

/* The step from per-task durations: each task starts when its dependencies have ended and its (rank, stream)
 * is free, in file order; the step is the latest end. Collective members are not synchronised with each
 * other here (their pred_s already holds the collective's time). */
static double step_pred(const hsg_graph *g, const double *dur)
{
	double *end = hs_xcalloc(g->ntasks + 1, sizeof *end);
	double *free_at = hs_xcalloc((size_t)(g->nranks > 0 ? g->nranks : 1) * HSG_S_COUNT, sizeof *free_at);
	double step = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hsg_task *t = &g->tasks[i];
		int ri = 0;
		for (int r = 0; r < g->nranks; r++)
			if (g->ranks[r].rank == t->rank)
				ri = r;
		double start = free_at[(size_t)ri * HSG_S_COUNT + (size_t)t->stream];
		for (uint32_t j = 0; j < t->dep_count; j++)
			start = fmax(start, end[g->deps[t->dep_first + j]]);
		end[i] = start + dur[i];
		free_at[(size_t)ri * HSG_S_COUNT + (size_t)t->stream] = end[i];
		step = fmax(step, end[i]);
	}
	free(end);
	free(free_at);
	return step;
}

int hs_refexec_compare(const hs_jsonl *meas, const hsg_graph *g, const hs_profile *prof, hs_refexec_cmp *out,
		       hs_err *err)
{
	memset(out, 0, sizeof *out);
	int steps = 0;
	double *dur = NULL;
	if (prof) {
		dur = hs_xcalloc(g->ntasks + 1, sizeof *dur);
		for (size_t i = 0; i < g->ntasks; i++)
			dur[i] = task_pred(prof, g, &g->tasks[i]);
	}
	for (size_t i = 0; i < meas->n; i++) {
		const hs_jrec *r = &meas->recs[i];
		const char *kind = hs_jrec_str(r, "kind");
		double t, id;
		if (!kind)
			continue;
		int task = strcmp(kind, "refexec_task") == 0, op = strcmp(kind, "refexec_op") == 0,
		    step = strcmp(kind, "refexec_step") == 0;
		if (!task && !op && !step)
			continue;
		if (hs_jrec_num(r, "t_med", &t) || !(t >= 0)) {
			hs_refexec_cmp_free(out);
			free(dur);
			return hs_err_set(err, HS_EINPUT, "%s:%d: %s record needs t_med", meas->name, r->line, kind);
		}
		char label[96];
		if (step) {
			steps++;
			add(out, "step", "", "step", g->step_pred_s, t);
			if (prof)
				add(out, "step-prof", "", "step (from the profile)", step_pred(g, dur), t);
			continue;
		}
		if (hs_jrec_num(r, "task", &id) || id < 0 || id >= (double)g->ntasks || id != floor(id)) {
			hs_refexec_cmp_free(out);
			free(dur);
			return hs_err_set(err, HS_EINPUT, "%s:%d: %s names a task the graph (%zu tasks) does not have",
					  meas->name, r->line, kind, g->ntasks);
		}
		const hsg_task *tk = &g->tasks[(size_t)id];
		if (task) {
			snprintf(label, sizeof label, "task %zu rank %d %s %s", (size_t)id, tk->rank,
				 hsg_task_kind_names[tk->kind], hsg_what_names[tk->what]);
			add(out, "task", "", label, tk->pred_s, t);
			if (prof)
				add(out, "task-prof", "", label, dur[(size_t)id], t);
			continue;
		}
		double oi;
		if (hs_jrec_num(r, "op", &oi) || oi < tk->op_first || oi >= (double)tk->op_first + tk->op_count) {
			hs_refexec_cmp_free(out);
			free(dur);
			return hs_err_set(err, HS_EINPUT, "%s:%d: refexec_op names an op outside task %zu's range", meas->name,
					  r->line, (size_t)id);
		}
		if (!prof)
			continue;
		const hsg_op *o = &g->ops[(size_t)oi];
		snprintf(label, sizeof label, "op %zu %s %s (task %zu)", (size_t)oi, o->name, hsg_op_kind_names[o->kind],
			 (size_t)id);
		add(out, "op", hsg_op_kind_names[o->kind], label, op_pred(prof, o, tk->scale), t);
	}
	free(dur);
	if (!steps && out->n == 0)
		return hs_err_set(err, HS_EINPUT, "%s: no refexec_task, refexec_op or refexec_step record", meas->name);
	return 0;
}

static int match(const hs_refexec_row *r, const char *kind, const char *opkind)
{
	return strcmp(r->kind, kind) == 0 && (!opkind || strcmp(r->opkind, opkind) == 0);
}

double hs_refexec_mape_of(const hs_refexec_cmp *c, const char *kind, const char *opkind, size_t *count)
{
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (match(&c->rows[i], kind, opkind)) {
			s += fabs(c->rows[i].predicted - c->rows[i].measured) / c->rows[i].measured;
			n++;
		}
	if (count)
		*count = n;
	return n ? 100 * s / (double)n : -1;
}

double hs_refexec_mape(const hs_refexec_cmp *c, const char *kind, size_t *count)
{
	return hs_refexec_mape_of(c, kind, NULL, count);
}

double hs_refexec_total_err(const hs_refexec_cmp *c, const char *kind, const char *opkind)
{
	double p = 0, m = 0;
	for (size_t i = 0; i < c->n; i++)
		if (match(&c->rows[i], kind, opkind)) {
			p += c->rows[i].predicted;
			m += c->rows[i].measured;
		}
	return m > 0 ? 100 * (p - m) / m : NAN;
}

void hs_refexec_cmp_free(hs_refexec_cmp *c)
{
	free(c->rows);
	memset(c, 0, sizeof *c);
}
