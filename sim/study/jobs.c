/* Several jobs on one cluster: load `jobs:`, place each job on its nodes, plan it, run it alone and all
 * together (sim/study/jobs.h says what and why). */
#include "sim/study/jobs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/exec/plan.h"

static const char *const top_keys[] = {"name", "kind", "description", "cluster", "simulation", "jobs", NULL};
static const char *const job_keys[] = {"name", "nodes", "model", "training", "parallelism", NULL};

int hs_jobs_in(hs_ydoc *doc)
{
	return doc && hs_yaml_get(hs_yaml_root(doc), "jobs") != NULL;
}

/* A job's own scenario reports keys from its entry ("training.global_batch"); with several jobs the reader
 * needs to know which entry: "file:L:C: training.x: ..." becomes "file:L:C: jobs[i].training.x: ...". */
static void job_key_path(hs_err *err, int i)
{
	char *m = err->msg, *p = m;
	/* find ":<digits>:<digits>: " (the position), then the key path starts */
	for (; (p = strchr(p, ':')) != NULL; p++) {
		char *q = p + 1;
		if (!isdigit((unsigned char)*q))
			continue;
		while (isdigit((unsigned char)*q))
			q++;
		if (*q != ':' || !isdigit((unsigned char)q[1]))
			continue;
		q++;
		while (isdigit((unsigned char)*q))
			q++;
		if (q[0] != ':' || q[1] != ' ')
			continue;
		char rest[sizeof err->msg];
		snprintf(rest, sizeof rest, "%s", q + 2);
		snprintf(q + 2, sizeof err->msg - (size_t)(q + 2 - m), "jobs[%d].%s", i, rest);
		return;
	}
}

/* A non-negative integer that is the whole of [s, e): 0 when it is. */
static int parse_index(const char *s, const char *e, int *out)
{
	if (s == e || e - s > 9)
		return -1;
	int v = 0;
	for (const char *c = s; c < e; c++) {
		if (!isdigit((unsigned char)*c))
			return -1;
		v = v * 10 + (*c - '0');
	}
	*out = v;
	return 0;
}

/* `nodes:` -> [node0, node0 + nnodes) of the cluster. "A-B" or "A": the cluster's nodes, numbered from 0 over
 * its groups in order (inclusive); "GROUP": every node of that group; "GROUP:A-B", "GROUP:A": the group's
 * nodes, numbered from 0 within it. */
static int parse_nodes(const hs_ynode *n, const char *path, const hs_cluster *c, hs_job *j, hs_err *err)
{
	static const char *expect = "a node range such as 0-15, a group name, or GROUP:0-3";
	if (n->kind != HS_Y_SCALAR || !n->str || !*n->str)
		return hs_cfg_err(n, err, path, "nodes", "expected %s", expect);
	snprintf(j->nodes, sizeof j->nodes, "%s", n->str);
	const char *s = n->str, *colon = strchr(s, ':'), *range = s;
	int base = 0, limit = hs_cluster_nnodes(c), g = -1;
	char gname[64] = "";
	if (colon || !isdigit((unsigned char)*s)) {
		size_t len = colon ? (size_t)(colon - s) : strlen(s);
		snprintf(gname, sizeof gname, "%.*s", (int)(len < 63 ? len : 63), s);
		for (int i = 0; i < hs_cluster_ngroups(c); i++)
			if (strcmp(hs_cluster_group(c, i)->name, gname) == 0)
				g = i;
		if (g < 0) {
			char names[256] = "";
			for (int i = 0; i < hs_cluster_ngroups(c); i++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
					 hs_cluster_group(c, i)->name);
			return hs_cfg_err(n, err, path, "nodes", "'%s' names no node group of the cluster (expected %s; "
					  "groups: %s)", gname, expect, names);
		}
		base = hs_cluster_first_node(c, g);
		limit = hs_cluster_group(c, g)->nodes;
		if (!colon) {
			j->node0 = base;
			j->nnodes = limit;
			return 0;
		}
		range = colon + 1;
	}
	const char *dash = strchr(range, '-'), *end = range + strlen(range);
	int a, b;
	if (parse_index(range, dash ? dash : end, &a) || (dash ? parse_index(dash + 1, end, &b) : (b = a, 0)))
		return hs_cfg_err(n, err, path, "nodes", "'%s' is not a node range (expected %s)", n->str, expect);
	if (a > b)
		return hs_cfg_err(n, err, path, "nodes", "'%s' ends before it starts (expected first-last, first <= "
				  "last)", n->str);
	if (b >= limit) {
		if (g >= 0)
			return hs_cfg_err(n, err, path, "nodes", "nodes %d-%d are outside group '%s', which has %d nodes "
					  "(expected nodes within 0-%d)", a, b, gname, limit, limit - 1);
		return hs_cfg_err(n, err, path, "nodes", "nodes %d-%d are outside the cluster, which has %d nodes "
				  "(expected nodes within 0-%d)", a, b, limit, limit - 1);
	}
	j->node0 = base + a;
	j->nnodes = b - a + 1;
	return 0;
}

/* The top level: no section that belongs to a job, nothing a job cannot have, flow fidelity. */
static int check_top(const hs_ynode *root, hs_err *err)
{
	static const char *const per_job[] = {"model", "training", "parallelism", NULL};
	static const char *const single[] = {"variability", "resilience", "diloco", "cost", NULL};
	for (int i = 0; per_job[i]; i++)
		if (hs_yaml_get(root, per_job[i]))
			return hs_cfg_err(hs_yaml_get(root, per_job[i]), err, "", per_job[i], "with jobs:, each job has "
					  "its own %s (expected it inside each entry of jobs:)", per_job[i]);
	for (int i = 0; single[i]; i++)
		if (hs_yaml_get(root, single[i]))
			return hs_cfg_err(hs_yaml_get(root, single[i]), err, "", single[i], "is not simulated for "
					  "several jobs (expected a scenario of one job for %s)", single[i]);
	if (hs_cfg_known(root, "", top_keys, "a scenario with cluster, simulation and jobs", err))
		return -1;
	const hs_ynode *sim = hs_yaml_get(root, "simulation");
	const hs_ynode *fid = sim ? hs_yaml_get(sim, "fidelity") : NULL;
	if (!fid || fid->kind != HS_Y_SCALAR || strcmp(fid->str, "flow") != 0)
		/* analytical times every collective with its closed form, alone: there are no links to share, and
		 * each job's step would be its step alone */
		return hs_cfg_err(fid ? fid : hs_yaml_get(root, "jobs"), err, "simulation", "fidelity",
				  "several jobs share the cluster's links only at flow fidelity; %s%s%s gives each job's "
				  "step as if it ran alone (expected simulation.fidelity: flow)",
				  fid ? "'" : "the default, analytical,", fid && fid->str ? fid->str : "", fid ? "'" : "");
	/* the jobs share one flow network (sim/exec/jobs.c); ns-3 holds one simulator per process */
	const hs_ynode *net = hs_yaml_get(sim, "network");
	if (net && (net->kind != HS_Y_SCALAR || strcmp(net->str, "flow") != 0))
		return hs_cfg_err(net, err, "simulation", "network",
				  "several jobs share one flow network (expected network: flow, or no network key)");
	return 0;
}

/* Each entry of `jobs:`: its keys, name and placement; placements inside the cluster and disjoint. */
static int load_jobs(hs_jobs *J, const hs_ynode *list, hs_err *err)
{
	if (list->kind != HS_Y_SEQ || list->n == 0)
		return hs_cfg_err(list, err, "", "jobs", "expected a non-empty list of jobs, each {name, nodes, model, "
				  "training, parallelism}");
	if (list->n > HS_JOBS_MAX)
		return hs_cfg_err(list, err, "", "jobs", "%zu jobs (expected at most %d)", list->n, HS_JOBS_MAX);
	J->jobs = hs_xcalloc(list->n, sizeof *J->jobs);
	J->njobs = (int)list->n;
	char path[64];
	for (int i = 0; i < J->njobs; i++) {
		const hs_ynode *e = list->vals[i];
		hs_job *j = &J->jobs[i];
		snprintf(path, sizeof path, "jobs[%d]", i);
		if (e->kind != HS_Y_MAP)
			return hs_cfg_err(e, err, path, "", "expected a mapping {name, nodes, model, training, parallelism}");
		if (hs_cfg_known(e, path, job_keys, "a job {name, nodes, model, training, parallelism}", err))
			return -1;
		const char *name;
		if (hs_cfg_str(e, path, "name", NULL, 1, &name, err))
			return -1;
		snprintf(j->name, sizeof j->name, "%s", name);
		for (int k = 0; k < i; k++)
			if (strcmp(J->jobs[k].name, j->name) == 0)
				return hs_cfg_err(hs_yaml_get(e, "name"), err, path, "name", "'%s' is already the name of "
						  "jobs[%d] (expected unique names)", j->name, k);
		const hs_ynode *nn = hs_yaml_get(e, "nodes");
		if (!nn)
			return hs_cfg_err(e, err, path, "nodes", "missing: job '%s' has no placement (expected %s)",
					  j->name, "the nodes it runs on, such as nodes: 0-15");
		if (parse_nodes(nn, path, J->cluster, j, err))
			return -1;
		for (int k = 0; k < i; k++) {
			const hs_job *o = &J->jobs[k];
			int a = j->node0 > o->node0 ? j->node0 : o->node0;
			int b = j->node0 + j->nnodes < o->node0 + o->nnodes ? j->node0 + j->nnodes : o->node0 + o->nnodes;
			if (a < b)
				return hs_cfg_err(nn, err, path, "nodes", "nodes %d-%d of job '%s' overlap job '%s' (nodes "
						  "%d-%d) at node%s %d%s%.0d (expected disjoint node ranges)", j->node0,
						  j->node0 + j->nnodes - 1, j->name, o->name, o->node0,
						  o->node0 + o->nnodes - 1, b - a > 1 ? "s" : "", a, b - a > 1 ? "-" : "",
						  b - a > 1 ? b - 1 : 0);
		}
	}
	return 0;
}

/* Job i as a scenario on its own nodes, planned without symmetry. */
static int plan_job(hs_jobs *J, int i, const hs_ynode *entry, hs_err *err)
{
	hs_job *j = &J->jobs[i];
	char path[64];
	snprintf(path, sizeof path, "jobs[%d]", i);
	hs_err e = {0};
	hs_cluster *sub = hs_cluster_sub(J->cluster, j->node0, j->nnodes, &e);
	if (!sub)
		return hs_cfg_err(hs_yaml_get(entry, "nodes"), err, path, "nodes", "%s", e.msg);
	j->dev0 = 0;
	for (int g = 0; g < hs_cluster_ngroups(J->cluster); g++) {
		const hs_node_group *ng = hs_cluster_group(J->cluster, g);
		int first = hs_cluster_first_node(J->cluster, g);
		for (int n = first; n < first + ng->nodes && n < j->node0; n++)
			j->dev0 += ng->gpus_per_node;
	}
	j->ndev = hs_cluster_ngpus(sub);
	j->s = hs_scenario_job(J->doc, J->path, entry, j->name, sub, err);
	if (!j->s) {
		job_key_path(err, i);
		return -1;
	}
	/* symmetry off: a representative standing for its replicas would keep their traffic off the links the
	 * other jobs share (sim/exec/exec.h, hs_exec_jobs) */
	if (hs_plan_step(&j->s->wl, 0, &j->b, err)) {
		hs_err_prefix(err, "%s: job '%s' (nodes %d-%d, devices %d-%d, numbered from 0 in what follows): ",
			      J->path, j->name, j->node0, j->node0 + j->nnodes - 1, j->dev0, j->dev0 + j->ndev - 1);
		return -1;
	}
	return 0;
}

int hs_jobs_load(hs_ydoc *doc, const char *path, hs_jobs *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	out->doc = doc;
	out->path = path;
	const hs_ynode *root = hs_yaml_root(doc);
	if (check_top(root, err) || hs_scenario_head(root, path, out->name, sizeof out->name, &out->cluster, err))
		goto fail;
	const hs_ynode *list = hs_yaml_get(root, "jobs");
	if (load_jobs(out, list, err))
		goto fail;
	for (int i = 0; i < out->njobs; i++)
		if (plan_job(out, i, list->vals[i], err))
			goto fail;
	out->sim = out->jobs[0].s->sim;
	out->sim.symmetry = 0;
	return 0;
fail:
	hs_jobs_free(out);
	return -1;
}

int hs_jobs_simulate(hs_jobs *J, hs_profile_cache *cache, hs_err *err)
{
	hs_exec_job *ej = hs_xcalloc((size_t)J->njobs, sizeof *ej);
	for (int i = 0; i < J->njobs; i++)
		ej[i] = (hs_exec_job){.w = &J->jobs[i].s->wl, .b = &J->jobs[i].b, .dev0 = J->jobs[i].dev0};
	hs_profile_cache *own = cache ? NULL : hs_profile_cache_create();
	hs_profile_cache *pc = cache ? cache : own;
	int bad = 0;
	/* alone: the same network, the same nodes, every other node idle */
	for (int i = 0; i < J->njobs && !bad; i++)
		bad = hs_exec_jobs(J->cluster, &ej[i], 1, &J->sim, pc, HS_JOBS_MAX_STEPS, &J->jobs[i].alone, err);
	hs_result *res = hs_xcalloc((size_t)J->njobs, sizeof *res);
	if (!bad)
		bad = hs_exec_jobs(J->cluster, ej, J->njobs, &J->sim, pc, HS_JOBS_MAX_STEPS, res, err);
	if (own)
		hs_profile_cache_free(own);
	free(ej);
	if (bad) {
		free(res);
		hs_err_prefix(err, "%s: ", J->path);
		return -1;
	}
	for (int i = 0; i < J->njobs; i++) {
		hs_job *j = &J->jobs[i];
		j->together = res[i];
		j->slowdown = j->alone.step_time_s > 0 ? j->together.step_time_s / j->alone.step_time_s : 1;
	}
	J->events = res[0].events;
	free(res);
	return 0;
}

int hs_jobs_run(hs_ydoc *doc, const char *path, hs_profile_cache *cache, hs_jobs *out, hs_err *err)
{
	if (hs_jobs_load(doc, path, out, err))
		return -1;
	if (hs_jobs_simulate(out, cache, err)) {
		hs_jobs_free(out);
		return -1;
	}
	return 0;
}

void hs_jobs_free(hs_jobs *J)
{
	if (!J)
		return;
	for (int i = 0; J->jobs && i < J->njobs; i++) {
		hs_job *j = &J->jobs[i];
		hs_result_free(&j->alone);
		hs_result_free(&j->together);
		hs_build_free(&j->b);
		hs_scenario_free(j->s);
	}
	free(J->jobs);
	hs_cluster_free(J->cluster);
	hs_yaml_free(J->doc);
	memset(J, 0, sizeof *J);
}
