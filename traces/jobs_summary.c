#include "traces/jobs_summary.h"

#include <string.h>

#include "sim/base/json.h"
#include "sim/base/sizes.h"

/* The critical rank's communication that blocked its compute stream, all kinds together. */
static double exposed(const hs_result *r)
{
	const hs_rep_result *c = &r->reps[r->critical_rep];
	double t = 0;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		t += c->exposed_s[k];
	return t;
}

static void text_cluster(FILE *f, const hs_cluster *c)
{
	fprintf(f, "cluster       %d GPUs:", hs_cluster_ngpus(c));
	for (int i = 0; i < hs_cluster_ngroups(c); i++) {
		const hs_node_group *g = hs_cluster_group(c, i);
		fprintf(f, "%s %d x %d %s", i ? "," : "", g->nodes, g->gpus_per_node, g->gpu.name);
	}
	const hs_fabric_spec *fs = hs_cluster_fabric(c);
	fprintf(f, "; fabric %s", fs->kind);
	if (fs->oversubscription > 1)
		fprintf(f, ", oversubscribed %g:1", fs->oversubscription);
	fprintf(f, "\n");
}

static void write_text(FILE *f, const hs_jobs *J)
{
	fprintf(f, "scenario      %s\n", J->name);
	text_cluster(f, J->cluster);
	fprintf(f, "jobs          %d, together at flow fidelity on one network (every replica and lane simulated)\n",
		J->njobs);
	for (int i = 0; i < J->njobs; i++) {
		const hs_job *j = &J->jobs[i];
		const hs_scenario *s = j->s;
		const hs_parallel *p = &s->par;
		fprintf(f, "\njob %-9s nodes %d-%d (%d GPUs, devices %d-%d), %s, global batch %lld\n", j->name,
			j->node0, j->node0 + j->nnodes - 1, j->ndev, j->dev0, j->dev0 + j->ndev - 1, s->model.name,
			(long long)s->train.global_batch);
		fprintf(f, "  parallelism   TP %d  PP %d  DP %d", p->tp, p->pp, p->dp);
		if (p->cp > 1)
			fprintf(f, "  CP %d", p->cp);
		if (p->ep > 1)
			fprintf(f, "  EP %d", p->ep);
		fprintf(f, ", %d micro-batches of %d\n", p->micro_batches, s->train.micro_batch);
		fprintf(f, "  %-14s %12s %12s\n", "", "alone", "together");
		fprintf(f, "  %-14s %10.6f s %10.6f s   slowdown %.6f (mean over the steps)\n", "step time", j->alone.step_time_s,
			j->together.step_time_s, j->slowdown);
		const hs_result *t = &j->together;
		fprintf(f, "  %-14s %12d %12d", "steps", j->alone.steps, t->steps);
		if (t->steps > 1)
			fprintf(f, "   together: min %.6f s, P50 %.6f s, max %.6f s", t->step_min_s, t->step_p50_s,
				t->step_max_s);
		fprintf(f, "\n");
		fprintf(f, "  %-14s %12.0f %12.0f\n", "tokens/s", j->alone.tokens_per_s, j->together.tokens_per_s);
		fprintf(f, "  %-14s %11.2f%% %11.2f%%\n", "MFU", 100 * j->alone.mfu, 100 * j->together.mfu);
		fprintf(f, "  %-14s %10.6f s %10.6f s   (critical rank)\n", "exposed comm", exposed(&j->alone),
			exposed(&j->together));
		const hs_rep_result *mp = &j->together.reps[j->together.mem_peak_rep];
		fprintf(f, "  %-14s %.1f GiB per GPU of %.1f GiB usable\n", "memory peak", mp->mem_bytes / HS_GiB,
			mp->mem_capacity / HS_GiB);
	}
	fprintf(f, "\nsimulated %llu events together\n", (unsigned long long)J->events);
}

static void json_run(hs_json *j, const char *key, const hs_result *r)
{
	hs_json_key(j, key);
	hs_json_obj(j);
	hs_json_knum(j, "step_time_s", r->step_time_s);
	hs_json_kint(j, "steps", r->steps);
	hs_json_knum(j, "step_time_min_s", r->step_min_s);
	hs_json_knum(j, "step_time_p50_s", r->step_p50_s);
	hs_json_knum(j, "step_time_p99_s", r->step_p99_s);
	hs_json_knum(j, "step_time_max_s", r->step_max_s);
	hs_json_knum(j, "tokens_per_s", r->tokens_per_s);
	hs_json_knum(j, "mfu", r->mfu);
	hs_json_knum(j, "exposed_comm_s", exposed(r));
	hs_json_knum(j, "memory_peak_bytes", r->mem_peak_bytes);
	hs_json_end_obj(j);
}

static void write_json(FILE *f, const hs_jobs *J)
{
	hs_json j;
	hs_json_init(&j, f);
	hs_json_obj(&j);
	hs_json_kstr(&j, "scenario", J->name);
	hs_json_kstr(&j, "fidelity", "flow");
	hs_json_kint(&j, "gpus", hs_cluster_ngpus(J->cluster));
	hs_json_key(&j, "jobs");
	hs_json_arr(&j);
	for (int i = 0; i < J->njobs; i++) {
		const hs_job *jb = &J->jobs[i];
		const hs_parallel *p = &jb->s->par;
		hs_json_obj(&j);
		hs_json_kstr(&j, "name", jb->name);
		hs_json_kstr(&j, "nodes", jb->nodes);
		hs_json_kint(&j, "first_node", jb->node0);
		hs_json_kint(&j, "node_count", jb->nnodes);
		hs_json_kint(&j, "first_device", jb->dev0);
		hs_json_kint(&j, "gpus", jb->ndev);
		hs_json_kstr(&j, "model", jb->s->model.name);
		hs_json_key(&j, "parallelism");
		hs_json_obj(&j);
		hs_json_kint(&j, "tp", p->tp);
		hs_json_kint(&j, "pp", p->pp);
		hs_json_kint(&j, "dp", p->dp);
		hs_json_kint(&j, "cp", p->cp);
		hs_json_kint(&j, "ep", p->ep);
		hs_json_kint(&j, "micro_batches", p->micro_batches);
		hs_json_end_obj(&j);
		json_run(&j, "alone", &jb->alone);
		json_run(&j, "together", &jb->together);
		hs_json_knum(&j, "slowdown", jb->slowdown);
		hs_json_end_obj(&j);
	}
	hs_json_end_arr(&j);
	hs_json_kint(&j, "events", (long long)J->events);
	hs_json_end_obj(&j);
}

static const hs_jobs_format formats[] = {
	{"text", write_text},
	{"json", write_json},
	{NULL, NULL},
};

const hs_jobs_format *hs_jobs_format_find(const char *name)
{
	for (const hs_jobs_format *f = formats; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}
