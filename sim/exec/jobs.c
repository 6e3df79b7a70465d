/* Several jobs on one cluster (sim/exec/exec.h, hs_exec_jobs): one executor per job, all on one engine and one
 * flow network over the whole cluster, so that every job's collectives and sends are flows on the same links
 * and share them max-min fairly. Each job's graph, device map and accounting are its own (an executor each, as
 * hs_exec_step runs one); only the clock and the links are common.
 *
 * Steps: every job starts its first step at time 0. A job's step ends when its last task is done (the count
 * of done tasks, not an empty engine, which the other jobs keep busy), and its next step starts at once. A job
 * that has run its measured steps goes on running steps in the background, whose figures go nowhere, until
 * every job has run its own: the measured steps of a long job overlap the short ones' traffic as they would on
 * a cluster where every job runs for hours, not one step of each started together and then silence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/exec/exec_impl.h"
#include "sim/exec/plan.h"
#include "sim/net/net.h"

struct run;

struct job {
	struct ex x;
	const hs_build *b;
	hs_result *out;
	int ran;                 /* steps ended, measured and background */
	hs_rep_result *scratch;  /* [nreps]: where background steps account */
	struct run *run;
};

struct run {
	struct job *j;
	int n;
	int left;       /* jobs still running measured steps */
	int max_steps;  /* a bound on the steps one job runs (measured and background) */
	int capped;     /* a job reached max_steps with others still measuring */
	int capped_job;
};

static void job_step_end(struct ex *x)
{
	struct job *j = x->owner;
	struct run *r = j->run;
	if (j->ran < j->out->steps) {
		hs_exec_account_step(x, j->ran, j->out);
		if (j->ran + 1 == j->out->steps) {
			/* the measured steps are over: the timeline and the means are this step's, and what the job
			 * does from now on loads the links but counts nowhere */
			hs_exec_aggregate(x, j->b, j->out);
			for (int i = 0; i < x->g->nreps; i++)
				x->reps[i].res = &j->scratch[i];
			r->left--;
		}
	}
	j->ran++;
	if (r->left == 0) {
		hs_engine_stop(x->eng); /* every job has its figures: what is in flight matters to no one */
		return;
	}
	if (j->ran >= r->max_steps) {
		if (!r->capped)
			r->capped_job = (int)(j - r->j);
		r->capped = 1;
		hs_engine_stop(x->eng);
		return;
	}
	hs_exec_begin_step(x);
}

int hs_exec_jobs(const hs_cluster *cluster, const hs_exec_job *jobs, int njobs, const hs_simopts *o,
		 hs_profile_cache *cache, int max_steps, hs_result *out, hs_err *err)
{
	/* every rep of every job simulated, every lane on the network: one representative standing for its
	 * replicas (or lanes) would leave their traffic off the links the other jobs use */
	hs_simopts so = *o;
	so.symmetry = 0;
	so.progress = NULL;
	memset(out, 0, (size_t)njobs * sizeof *out);
	for (int i = 0; i < njobs; i++)
		if (hs_plan_symmetric(jobs[i].w, &jobs[i].b->graph) && jobs[i].w->par->dp > 1)
			return hs_err_set(err, HS_EINTERNAL, "internal error: job %d's graph was built with symmetry: "
							     "its replicas' traffic would not reach the shared network", i);
	struct run r = {.n = njobs, .left = njobs, .max_steps = max_steps};
	r.j = hs_xcalloc((size_t)njobs, sizeof *r.j);
	hs_engine *eng = hs_engine_create();
	hs_net *net = hs_net_create(cluster, "flow", eng, err);
	int opened = 0, rc = -1;
	if (!net)
		goto out;
	for (; opened < njobs; opened++) {
		struct job *j = &r.j[opened];
		hs_exec_share sh = {.eng = eng, .net = net, .dev0 = jobs[opened].dev0};
		j->b = jobs[opened].b;
		j->out = &out[opened];
		j->run = &r;
		if (hs_exec_open(&j->x, jobs[opened].w, &so, j->b, cache, 0, &sh, j->out, err)) {
			opened++; /* closed below with the others */
			goto out;
		}
		j->x.step_end = job_step_end;
		j->x.owner = j;
		j->scratch = hs_xcalloc((size_t)j->x.g->nreps, sizeof *j->scratch);
	}
	for (int i = 0; i < njobs; i++)
		hs_exec_begin_step(&r.j[i].x);
	hs_engine_run(eng, HS_TIME_MAX);
	if (r.capped) {
		hs_err_set(err, HS_EINFEASIBLE, "job %d ran %d steps while another was still running its own (expected "
			   "jobs whose step times differ by less than a factor of %d)", r.capped_job, max_steps, max_steps);
		goto out;
	}
	for (int i = 0; i < njobs; i++)
		if (r.j[i].ran < out[i].steps) {
			if (!hs_exec_check_step(&r.j[i].x, err))
				hs_err_set(err, HS_EINTERNAL, "internal error: job %d stopped after %d of %d steps", i,
					   r.j[i].ran, out[i].steps);
			goto out;
		}
	for (int i = 0; i < njobs; i++)
		out[i].events = hs_engine_executed(eng); /* one engine for all: the run's events */
	rc = 0;
out:
	for (int i = 0; i < opened; i++) {
		hs_exec_close(&r.j[i].x);
		free(r.j[i].scratch);
	}
	if (rc)
		for (int i = 0; i < njobs; i++)
			hs_result_free(&out[i]);
	hs_net_free(net);
	hs_engine_destroy(eng);
	free(r.j);
	return rc;
}
