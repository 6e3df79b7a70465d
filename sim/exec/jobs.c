/* Several jobs on one cluster (sim/exec/exec.h, hs_exec_jobs): one executor per job, all on one engine and one
 * flow network over the whole cluster, so that every job's collectives and sends are flows on the same links
 * and share them max-min fairly. Each job's graph, device map and accounting are its own (an executor each, as
 * hs_exec_step runs one); only the clock and the links are common.
 *
 * Steps: every job starts its first step at time 0. A job's step ends when its last task is done (the count
 * of done tasks, not an empty engine, which the other jobs keep busy), and its next step starts at once. The
 * run goes on until every job has run the steps it asks for (1 unless variability says more); a job that is
 * done before the others keeps running steps, and they count: a job's figures are the means over every step
 * it finished before the run stopped, so that the step of a short job is its mean over the long job's phases
 * (compute, then its gradient all-reduce), as on a cluster where every job runs for hours, and not its first
 * step, which may fall entirely within a quiet phase of the others. The step a job is in when the last job
 * finishes is left out: it runs to its end, so that the network is left empty, but its figures are restored
 * to those of the steps finished before. */
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
	int want;                /* steps it asks for */
	int ran;                 /* steps finished */
	size_t cap;              /* of out->step_times */
	hs_rep_result *snap;     /* [nreps]: out->reps as the last finished step left them */
	struct run *run;
};

struct run {
	struct job *j;
	int n;
	int left;       /* jobs that have not yet run the steps they ask for */
	int max_steps;  /* a bound on the steps one job runs */
	int stopping;   /* no step starts any more; those in flight drain */
	int capped;     /* a job reached max_steps with others still running theirs */
	int capped_job;
};

static void job_step_end(struct ex *x)
{
	struct job *j = x->owner;
	struct run *r = j->run;
	if (r->stopping)
		return; /* draining: what ends now counts nowhere */
	hs_xgrow(&j->out->step_times, &j->cap, (size_t)j->ran + 1, sizeof *j->out->step_times);
	hs_exec_account_step(x, j->ran, j->out);
	memcpy(j->snap, j->out->reps, (size_t)x->g->nreps * sizeof *j->snap);
	if (++j->ran == j->want)
		r->left--;
	/* Every job has its steps (or one ran too many): start no more. The steps in flight run to their end,
	 * counting nowhere, so that every collective on the network finishes and frees what it holds (stopping
	 * the engine would strand them); that is at most one more step per job. */
	if (r->left == 0) {
		r->stopping = 1;
		return;
	}
	if (j->ran >= r->max_steps) {
		r->capped_job = (int)(j - r->j);
		r->capped = r->stopping = 1;
		return;
	}
	x->step = j->ran; /* routing.c keys its draws by the step */
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
		j->want = j->out->steps;
		j->cap = (size_t)j->out->steps;
		j->snap = hs_xcalloc((size_t)j->x.g->nreps, sizeof *j->snap);
	}
	for (int i = 0; i < njobs; i++) {
		r.j[i].x.step = 0;
		hs_exec_begin_step(&r.j[i].x);
	}
	hs_engine_run(eng, HS_TIME_MAX);
	if (r.capped) {
		hs_err_set(err, HS_EINFEASIBLE, "job %d ran %d steps while another was still running its own (expected "
			   "jobs whose step times differ by less than a factor of %d)", r.capped_job, max_steps, max_steps);
		goto out;
	}
	for (int i = 0; i < njobs; i++) {
		struct job *j = &r.j[i];
		if (j->ran < j->want) {
			if (!hs_exec_check_step(&j->x, err))
				hs_err_set(err, HS_EINTERNAL, "internal error: job %d stopped after %d of %d steps", i,
					   j->ran, j->want);
			goto out;
		}
		/* the figures of the steps it finished, not of the one in flight when the run stopped */
		memcpy(j->out->reps, j->snap, (size_t)j->x.g->nreps * sizeof *j->snap);
		j->out->steps = j->ran;
		hs_exec_aggregate(&j->x, j->b, j->out);
		free(j->out->spans); /* the timeline of the step in flight: no one's */
		j->out->spans = NULL;
		j->out->events = hs_engine_executed(eng); /* one engine for all: the run's events */
	}
	rc = 0;
out:
	for (int i = 0; i < opened; i++) {
		hs_exec_close(&r.j[i].x);
		free(r.j[i].snap);
	}
	if (rc)
		for (int i = 0; i < njobs; i++)
			hs_result_free(&out[i]);
	hs_net_free(net);
	hs_engine_destroy(eng);
	free(r.j);
	return rc;
}
