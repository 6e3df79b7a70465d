#include "calib/refexec_cmp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

static void add(hs_refexec_cmp *c, const char *kind, const char *label, double pred, double meas)
{
	if (!(pred > 0) || !(meas > 0))
		return;
	hs_xgrow(&c->rows, &c->cap, c->n + 1, sizeof *c->rows);
	hs_refexec_row *r = &c->rows[c->n++];
	snprintf(r->kind, sizeof r->kind, "%s", kind);
	snprintf(r->label, sizeof r->label, "%s", label);
	r->predicted = pred;
	r->measured = meas;
}

/* The profile's time of one op, as sim/exec/exec.c charges it (comm ops: not here). */
static double op_pred(const hs_profile *p, const hsg_op *o, double scale)
{
	switch (o->kind) {
	case HSG_OP_GEMM:
		return hs_profile_gemm_time(p, NULL, o->m * scale, o->n, o->k, (enum hs_dtype)o->dtype) *
		       (o->count > 0 ? o->count : 1);
	case HSG_OP_ATTN: return hs_profile_attn_time(p, NULL, o->b * scale, o->h, o->s, o->d, o->causal, o->bwd);
	case HSG_OP_MEM:
	case HSG_OP_OPTIMIZER: return hs_profile_mem_time(p, NULL, o->bytes * scale);
	default: return 0;
	}
}

int hs_refexec_compare(const hs_jsonl *meas, const hsg_graph *g, const hs_profile *prof, hs_refexec_cmp *out,
		       hs_err *err)
{
	memset(out, 0, sizeof *out);
	int steps = 0;
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
			return hs_err_set(err, HS_EINPUT, "%s:%d: %s record needs t_med", meas->name, r->line, kind);
		}
		char label[96];
		if (step) {
			steps++;
			add(out, "step", "step", g->step_pred_s, t);
			continue;
		}
		if (hs_jrec_num(r, "task", &id) || id < 0 || id >= (double)g->ntasks || id != floor(id)) {
			hs_refexec_cmp_free(out);
			return hs_err_set(err, HS_EINPUT, "%s:%d: %s names a task the graph (%zu tasks) does not have",
					  meas->name, r->line, kind, g->ntasks);
		}
		const hsg_task *tk = &g->tasks[(size_t)id];
		if (task) {
			snprintf(label, sizeof label, "task %zu rank %d %s %s", (size_t)id, tk->rank,
				 hsg_task_kind_names[tk->kind], hsg_what_names[tk->what]);
			add(out, "task", label, tk->pred_s, t);
			continue;
		}
		double oi;
		if (hs_jrec_num(r, "op", &oi) || oi < tk->op_first || oi >= (double)tk->op_first + tk->op_count) {
			hs_refexec_cmp_free(out);
			return hs_err_set(err, HS_EINPUT, "%s:%d: refexec_op names an op outside task %zu's range", meas->name,
					  r->line, (size_t)id);
		}
		if (!prof)
			continue;
		const hsg_op *o = &g->ops[(size_t)oi];
		snprintf(label, sizeof label, "op %zu %s %s (task %zu)", (size_t)oi, o->name, hsg_op_kind_names[o->kind],
			 (size_t)id);
		add(out, "op", label, op_pred(prof, o, tk->scale), t);
	}
	if (!steps && out->n == 0)
		return hs_err_set(err, HS_EINPUT, "%s: no refexec_task, refexec_op or refexec_step record", meas->name);
	return 0;
}

double hs_refexec_mape(const hs_refexec_cmp *c, const char *kind, size_t *count)
{
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->rows[i].kind, kind) == 0) {
			s += fabs(c->rows[i].predicted - c->rows[i].measured) / c->rows[i].measured;
			n++;
		}
	if (count)
		*count = n;
	return n ? 100 * s / n : -1;
}

void hs_refexec_cmp_free(hs_refexec_cmp *c)
{
	free(c->rows);
	memset(c, 0, sizeof *c);
}
