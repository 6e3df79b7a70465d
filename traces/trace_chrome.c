#include "traces/trace_chrome.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/base/json.h"
#include "sim/base/outfile.h"

static const char *const stream_names[HS_S_COUNT] = {"compute", "collectives", "p2p", "to host", "from host"};
static const char *const group_names[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
static const char *const what_names[] = {"fwd",       "bwd",           "bwd_input", "bwd_weight",
					 "optimizer", "grad_reduce", "param_gather", "p2p",
					 "offload", "cpu_optimizer"};

int hs_trace_select(const char *spec, int nreps, unsigned char *keep, hs_err *err)
{
	if (!spec || !*spec || strcmp(spec, "all") == 0) {
		memset(keep, 1, (size_t)nreps);
		return 0;
	}
	memset(keep, 0, (size_t)nreps);
	if (strncmp(spec, "every:", 6) == 0) {
		char *end;
		long k = strtol(spec + 6, &end, 10);
		if (*end || k < 1)
			return hs_err_set(err, HS_EINPUT, "--trace-ranks '%s': expected every:K with K >= 1", spec);
		for (int i = 0; i < nreps; i += (int)k)
			keep[i] = 1;
		return 0;
	}
	const char *p = spec;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			goto bad;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q)
				goto bad;
		}
		if (a < 0 || b < a)
			goto bad;
		if (a >= nreps) /* a rank the step does not simulate: an empty trace would pass for a result */
			return hs_err_set(err, HS_EINPUT,
					  "--trace-ranks '%s': rank %ld is not simulated (the step simulates ranks 0-%d; "
					  "`hetsim run --detail` lists them)",
					  spec, a, nreps - 1);
		for (long i = a; i <= b && i < nreps; i++)
			keep[i] = 1;
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return 0;
bad:
	return hs_err_set(err, HS_EINPUT,
			  "--trace-ranks '%s': expected all, every:K, or a list of ranks and ranges (0,3,8-11)", spec);
}

/* Slice name: what the task does, for the eye; the details go into args. */
static void task_name(const hs_graph *g, const hs_task *t, int vstages, char *buf, size_t n)
{
	switch (t->kind) {
	case HS_T_COMPUTE:
		if (t->what == HS_W_OPTIMIZER)
			snprintf(buf, n, "optimizer");
		else if (vstages > 1)
			snprintf(buf, n, "%s mb%d chunk%d", what_names[t->what], t->mb, t->chunk);
		else
			snprintf(buf, n, "%s mb%d", what_names[t->what], t->mb);
		return;
	case HS_T_COLL:
		snprintf(buf, n, "%s %s (%s)", group_names[t->group], hs_coll_op_name((enum hs_coll_op)t->coll),
			 t->what == HS_W_PARAM_GATHER ? "params" : t->what == HS_W_GRAD_REDUCE ? "grads" : "layer");
		return;
	case HS_T_SEND: {
		int from = g->reps[t->rep].stage, to = g->reps[t->peer].stage;
		snprintf(buf, n, "send %s mb%d -> stage %d", to > from ? "act" : "grad", t->mb, to);
		return;
	}
	case HS_T_HOST:
		snprintf(buf, n, "%s mb%d", what_names[t->what], t->mb);
		return;
	}
	snprintf(buf, n, "task");
}

/* Trace times are integer nanoseconds (written as microseconds with three decimals, hs_json_milli): a slice's
 * end and the next one's start round to the same nanosecond, so slices that meet never overlap in print. */
static long long ns(double s) { return llround(s * 1e9); }

static void flow(hs_json *j, const char *ph, long long id, int pid, int tid, long long ts, int enclosing)
{
	hs_json_obj(j);
	hs_json_kstr(j, "ph", ph);
	hs_json_kstr(j, "name", "dep");
	hs_json_kstr(j, "cat", "flow");
	hs_json_kint(j, "id", id);
	hs_json_kint(j, "pid", pid);
	hs_json_kint(j, "tid", tid);
	hs_json_kmilli(j, "ts", ts);
	if (enclosing)
		hs_json_kstr(j, "bp", "e");
	hs_json_end_obj(j);
}

static void meta(hs_json *j, const char *name, int pid, int tid, const char *key, const char *sval, long long ival)
{
	hs_json_obj(j);
	hs_json_kstr(j, "ph", "M");
	hs_json_kstr(j, "name", name);
	hs_json_kint(j, "pid", pid);
	if (tid >= 0)
		hs_json_kint(j, "tid", tid);
	hs_json_key(j, "args");
	hs_json_obj(j);
	if (sval)
		hs_json_kstr(j, key, sval);
	else
		hs_json_kint(j, key, ival);
	hs_json_end_obj(j);
	hs_json_end_obj(j);
}

int hs_trace_chrome_write(const char *path, const hs_scenario *s, const hs_build *b, const hs_result *r,
			  hs_trace_opts *o, hs_err *err)
{
	const hs_graph *g = &b->graph;
	int nreps = g->nreps;
	unsigned char *keep = hs_xmalloc((size_t)nreps + 1);
	o->note[0] = 0;
	if (hs_trace_select(o->ranks, nreps, keep, err)) {
		free(keep);
		return -1;
	}
	size_t *per = hs_xcalloc((size_t)nreps + 1, sizeof *per), total = 0;
	for (size_t i = 0; i < g->ntasks; i++)
		per[g->tasks[i].rep]++;
	for (int i = 0; i < nreps; i++)
		total += keep[i] ? per[i] : 0;
	size_t cap = o->max_events ? o->max_events : HS_TRACE_MAX_EVENTS;
	if (total > cap) {
		/* keep every k-th chosen rep, the smallest k that fits */
		int chosen = 0;
		for (int i = 0; i < nreps; i++)
			chosen += keep[i];
		int k = 2;
		for (;; k++) {
			size_t t = 0;
			int c = 0;
			for (int i = 0; i < nreps; i++)
				if (keep[i] && c++ % k == 0)
					t += per[i];
			if (t <= cap || k >= chosen)
				break;
		}
		int c = 0;
		for (int i = 0; i < nreps; i++)
			if (keep[i] && c++ % k)
				keep[i] = 0;
		snprintf(o->note, sizeof o->note,
			 "trace: %zu tasks exceed the limit of %zu slices: kept every %d-th of the %d chosen ranks "
			 "(--trace-ranks and --trace-limit choose)", total, cap, k, chosen);
	}
	o->kept_reps = 0;
	for (int i = 0; i < nreps; i++)
		o->kept_reps += keep[i];
	free(per);

	hs_outfile of;
	if (hs_outfile_open(&of, path, err)) {
		free(keep);
		return -1;
	}
	hs_json j;
	hs_json_init(&j, of.f);
	hs_json_obj(&j);
	hs_json_kstr(&j, "displayTimeUnit", "ns");
	hs_json_key(&j, "otherData");
	hs_json_obj(&j);
	hs_json_kstr(&j, "generator", "hetsim");
	hs_json_kstr(&j, "scenario", s->name);
	hs_json_knum(&j, "step_time_s", r->step_time_s);
	hs_json_knum(&j, "mfu", r->mfu);
	hs_json_kint(&j, "simulated_ranks", nreps);
	hs_json_kint(&j, "traced_ranks", o->kept_reps);
	if (o->note[0])
		hs_json_kstr(&j, "note", o->note);
	hs_json_end_obj(&j);
	hs_json_key(&j, "traceEvents");
	hs_json_arr(&j);

	/* tracks: the host streams only where offload put tasks on them */
	int nstreams = HS_S_HOST;
	for (size_t i = 0; i < g->ntasks && nstreams < HS_S_COUNT; i++)
		if (g->tasks[i].kind == HS_T_HOST)
			nstreams = HS_S_COUNT;
	/* a track of the collectives inside compute tasks (TP, CP, EP in a layer) for the reps that have any */
	unsigned char *has_inl = hs_xcalloc((size_t)nreps + 1, 1);
	for (size_t k = 0; k < r->ninl; k++)
		has_inl[g->tasks[r->inl[k].task].rep] = 1;
	const int inl_tid = HS_S_COUNT + 1;
	for (int i = 0; i < nreps; i++) {
		if (!keep[i])
			continue;
		if (has_inl[i]) {
			meta(&j, "thread_name", i + 1, inl_tid, "name", "collectives in layers", 0);
			meta(&j, "thread_sort_index", i + 1, inl_tid, "sort_index", NULL, 1); /* beside compute */
		}
		const hs_rep *rp = &g->reps[i];
		char name[160];
		snprintf(name, sizeof name, "stage %d dp %d: %s (x%d ranks)", rp->stage, rp->dp_index,
			 r->reps[i].device, rp->multiplicity);
		meta(&j, "process_name", i + 1, -1, "name", name, 0);
		meta(&j, "process_sort_index", i + 1, -1, "sort_index", NULL, i);
		for (int st = 0; st < nstreams; st++) {
			meta(&j, "thread_name", i + 1, st + 1, "name", stream_names[st], 0);
			meta(&j, "thread_sort_index", i + 1, st + 1, "sort_index", NULL, st);
		}
	}

	/* slices */
	o->slices = o->flows = o->counters = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		if (!keep[t->rep])
			continue;
		char name[128];
		task_name(g, t, s->par.vstages, name, sizeof name);
		const hs_span *sp = &r->spans[i];
		hs_json_obj(&j);
		hs_json_kstr(&j, "ph", "X");
		hs_json_kstr(&j, "name", name);
		hs_json_kstr(&j, "cat", t->kind == HS_T_COMPUTE ? "compute" : t->kind == HS_T_COLL ? "comm"
						: t->kind == HS_T_HOST ? "host" : "p2p");
		hs_json_kint(&j, "pid", t->rep + 1);
		hs_json_kint(&j, "tid", t->stream + 1);
		hs_json_kmilli(&j, "ts", ns(sp->start));
		hs_json_kmilli(&j, "dur", ns(sp->end) - ns(sp->start));
		hs_json_key(&j, "args");
		hs_json_obj(&j);
		hs_json_kint(&j, "task", (long long)i);
		hs_json_kstr(&j, "what", what_names[t->what]);
		if (t->kind == HS_T_COMPUTE) {
			if (t->what != HS_W_OPTIMIZER) {
				hs_json_kint(&j, "mb", t->mb);
				hs_json_kint(&j, "chunk", t->chunk);
				if (b->stages && s->par.vstages > 0)
					hs_json_kint(&j, "layers", b->stages[g->reps[t->rep].stage].layers / s->par.vstages);
			}
			hs_json_kint(&j, "ops", t->op_count);
			if (t->op_count)
				hs_json_kstr(&j, "first_op", g->ops[t->op_first].name);
			if (t->scale != 1.0)
				hs_json_knum(&j, "scale", t->scale);
		} else {
			hs_json_knum(&j, "bytes", t->bytes);
			if (t->kind == HS_T_COLL) {
				hs_json_kstr(&j, "group", group_names[t->group]);
				hs_json_kstr(&j, "collective", hs_coll_op_name((enum hs_coll_op)t->coll));
				if (t->rendezvous >= 0)
					hs_json_kint(&j, "rendezvous", t->rendezvous);
			} else {
				hs_json_kint(&j, "peer_rank", t->peer);
				hs_json_kint(&j, "mb", t->mb);
			}
		}
		hs_json_end_obj(&j);
		hs_json_end_obj(&j);
		o->slices++;
	}

	/* the collectives inside compute tasks, on their own track: one slice each (its start as the executor
	 * placed it; never before the previous one's end, so the track reads in order) */
	long long *track_end = hs_xcalloc((size_t)nreps + 1, sizeof *track_end);
	for (size_t k = 0; k < r->ninl; k++) {
		const hs_inl_span *sp = &r->inl[k];
		const hs_task *t = &g->tasks[sp->task];
		if (!keep[t->rep])
			continue;
		const hs_op *op = &g->ops[sp->op];
		long long a = ns(sp->start), e = ns(sp->end);
		if (a < track_end[t->rep])
			a = track_end[t->rep];
		if (e < a)
			e = a;
		track_end[t->rep] = e;
		char name[96];
		snprintf(name, sizeof name, "%s %s", group_names[op->group], hs_coll_op_name(op->coll));
		hs_json_obj(&j);
		hs_json_kstr(&j, "ph", "X");
		hs_json_kstr(&j, "name", name);
		hs_json_kstr(&j, "cat", "comm");
		hs_json_kint(&j, "pid", t->rep + 1);
		hs_json_kint(&j, "tid", inl_tid);
		hs_json_kmilli(&j, "ts", a);
		hs_json_kmilli(&j, "dur", e - a);
		hs_json_key(&j, "args");
		hs_json_obj(&j);
		hs_json_kint(&j, "task", (long long)sp->task);
		hs_json_kstr(&j, "op", op->name);
		hs_json_kstr(&j, "group", group_names[op->group]);
		hs_json_kstr(&j, "collective", hs_coll_op_name(op->coll));
		hs_json_knum(&j, "bytes", op->bytes);
		hs_json_kint(&j, "mb", t->mb);
		hs_json_end_obj(&j);
		hs_json_end_obj(&j);
		o->slices++;
	}
	free(track_end);
	free(has_inl);

	/* flows: a send to each task of the receiving rank that depends on it */
	long long fid = 1;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		for (uint32_t d = 0; d < t->dep_count; d++) {
			uint32_t di = g->deps[t->dep_first + d];
			const hs_task *src = &g->tasks[di];
			if (src->kind != HS_T_SEND || src->peer != t->rep || !keep[src->rep] || !keep[t->rep])
				continue;
			flow(&j, "s", fid, src->rep + 1, src->stream + 1, ns(r->spans[di].start), 0);
			flow(&j, "f", fid, t->rep + 1, t->stream + 1, ns(r->spans[i].start), 1);
			fid++;
			o->flows++;
		}
	}
	/* flows: the members of each collective rendezvous, chained in rank order */
	if (g->nrendezvous > 0) {
		uint32_t *last = hs_xmalloc((size_t)g->nrendezvous * sizeof *last);
		int *count = hs_xcalloc((size_t)g->nrendezvous, sizeof *count);
		for (size_t i = 0; i < g->ntasks; i++) {
			const hs_task *t = &g->tasks[i];
			if (t->kind == HS_T_COLL && t->rendezvous >= 0 && t->rendezvous < g->nrendezvous && keep[t->rep])
				count[t->rendezvous]++, last[t->rendezvous] = (uint32_t)i;
		}
		int *seen = hs_xcalloc((size_t)g->nrendezvous, sizeof *seen);
		for (size_t i = 0; i < g->ntasks; i++) {
			const hs_task *t = &g->tasks[i];
			if (t->kind != HS_T_COLL || t->rendezvous < 0 || t->rendezvous >= g->nrendezvous || !keep[t->rep])
				continue;
			int v = t->rendezvous;
			if (count[v] < 2)
				continue;
			const char *ph = seen[v] == 0 ? "s" : (uint32_t)i == last[v] ? "f" : "t";
			flow(&j, ph, fid + v, t->rep + 1, t->stream + 1, ns(r->spans[i].start), ph[0] != 's');
			if (ph[0] == 'f')
				o->flows++;
			seen[v]++;
		}
		free(last);
		free(count);
		free(seen);
	}
	/* link utilisation (flow fidelity: the busiest links, sim/exec/result.c) as counter tracks of one
	 * process after the ranks: a counter per link, one value per time bin, the busy fraction and the
	 * bytes per second it stands for */
	const hs_link_util *lu = &r->links;
	if (lu->nlinks > 0 && lu->nbins > 0 && lu->util) {
		int pid = nreps + 1;
		meta(&j, "process_name", pid, -1, "name", "links (busy fraction per time bin)", 0);
		meta(&j, "process_sort_index", pid, -1, "sort_index", NULL, nreps);
		for (int l = 0; l < lu->nlinks; l++) {
			char name[160];
			snprintf(name, sizeof name, "link %s", lu->names[l]);
			for (int k = 0; k <= lu->nbins; k++) {
				/* the last bin's value again at its end, so the track closes at the run's end */
				double u = lu->util[(size_t)l * lu->nbins + (k < lu->nbins ? k : lu->nbins - 1)];
				hs_json_obj(&j);
				hs_json_kstr(&j, "ph", "C");
				hs_json_kstr(&j, "name", name);
				hs_json_kint(&j, "pid", pid);
				hs_json_kmilli(&j, "ts", ns(k * lu->bin_s));
				hs_json_key(&j, "args");
				hs_json_obj(&j);
				hs_json_knum(&j, "busy", u);
				hs_json_knum(&j, "GBps", u * lu->capacity_Bps[l] / 1e9);
				hs_json_end_obj(&j);
				hs_json_end_obj(&j);
			}
			o->counters++;
		}
	}
	hs_json_end_arr(&j);
	hs_json_end_obj(&j);
	free(keep);
	return hs_outfile_commit(&of, err);
}
