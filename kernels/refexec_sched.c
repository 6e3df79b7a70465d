/* The reference executor's scheduling core (see refexec_sched.h). Moved out of refexec.cu unchanged in
 * behaviour, so that a CPU backend can run it. */
#include "refexec_sched.h"

#include <stdio.h>
#include <stdlib.h>

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p) {
		fprintf(stderr, "refexec: out of memory\n");
		exit(1);
	}
	return p;
}

int hsr_sched_init(hsr_sched *s, const hsg_graph *g, const char *file, char *msg, size_t msglen)
{
	s->g = g;
	s->inst_first = xcalloc((size_t)g->ninst + 2, sizeof(size_t));
	s->inst_tasks = xcalloc(g->ntasks + 1, sizeof(size_t));
	for (size_t i = 0; i < g->ntasks; i++)
		if (g->tasks[i].inst >= 0)
			s->inst_first[g->tasks[i].inst + 1]++;
	for (int i = 0; i < g->ninst; i++)
		s->inst_first[i + 1] += s->inst_first[i];
	size_t *fill = xcalloc((size_t)g->ninst + 1, sizeof(size_t));
	for (size_t i = 0; i < g->ntasks; i++)
		if (g->tasks[i].inst >= 0) {
			int in = g->tasks[i].inst;
			s->inst_tasks[s->inst_first[in] + fill[in]++] = i;
		}
	free(fill);
	for (int in = 0; in < g->ninst; in++) {
		size_t n = s->inst_first[in + 1] - s->inst_first[in];
		const hsg_task *t0 = n ? &g->tasks[s->inst_tasks[s->inst_first[in]]] : NULL;
		if (t0 && (t0->kind == HSG_T_SEND || t0->kind == HSG_T_RECV) && n != 2) {
			snprintf(msg, msglen, "%s:%d: send/recv instance %d has %zu halves in the file (needs both)", file,
				 t0->line, in, n);
			hsr_sched_free(s);
			return -1;
		}
	}
	return 0;
}

void hsr_sched_free(hsr_sched *s)
{
	free(s->inst_first);
	free(s->inst_tasks);
	s->inst_first = s->inst_tasks = NULL;
}

static void waits(const hsg_graph *g, const hsr_backend *b, size_t ti)
{
	const hsg_task *t = &g->tasks[ti];
	for (uint32_t j = 0; j < t->dep_count; j++)
		b->wait(b->ctx, ti, g->deps[t->dep_first + j]);
}

static void issue_compute(const hsg_graph *g, const hsr_backend *b, size_t ti)
{
	waits(g, b, ti);
	b->record(b->ctx, ti, 0);
	for (uint32_t k = 0; k < g->tasks[ti].op_count; k++)
		b->op(b->ctx, ti, k);
	b->record(b->ctx, ti, 1);
}

static void issue_inst(const hsg_graph *g, const hsr_backend *b, const size_t *mem, int n)
{
	for (int i = 0; i < n; i++) {
		waits(g, b, mem[i]);
		b->record(b->ctx, mem[i], 0);
	}
	b->inst(b->ctx, mem, n);
	for (int i = 0; i < n; i++)
		b->record(b->ctx, mem[i], 1);
}

int hsr_run_step(const hsr_sched *s, const hsr_backend *b, char *msg, size_t msglen)
{
	const hsg_graph *g = s->g;
	size_t nq = (size_t)g->nranks * HSG_S_COUNT;
	size_t *qpos = xcalloc(nq, sizeof *qpos);
	size_t **queue = xcalloc(nq, sizeof *queue);
	size_t *qn = xcalloc(nq, sizeof *qn);
	for (size_t i = 0; i < g->ntasks; i++) {
		size_t q = (size_t)hsg_rank_index(g, g->tasks[i].rank) * HSG_S_COUNT + g->tasks[i].stream;
		size_t *nqp = realloc(queue[q], sizeof(size_t) * (qn[q] + 1));
		if (!nqp) {
			fprintf(stderr, "refexec: out of memory\n");
			exit(1);
		}
		queue[q] = nqp;
		queue[q][qn[q]++] = i;
	}
	char *issued = xcalloc(g->ntasks, 1);
	size_t done = 0;
	int rc = 0;
	while (done < g->ntasks) {
		int progress = 0;
		for (size_t q = 0; q < nq; q++) {
			if (qpos[q] >= qn[q])
				continue;
			size_t ti = queue[q][qpos[q]];
			const hsg_task *t = &g->tasks[ti];
			int ready = 1;
			for (uint32_t j = 0; j < t->dep_count && ready; j++)
				ready = issued[g->deps[t->dep_first + j]];
			if (!ready)
				continue;
			if (t->kind == HSG_T_COMPUTE) {
				issue_compute(g, b, ti);
				issued[ti] = 1;
				qpos[q]++;
				done++;
				progress = 1;
				continue;
			}
			/* every member must be at the head of its queue with its dependencies issued */
			size_t a = s->inst_first[t->inst], e = s->inst_first[t->inst + 1];
			for (size_t m = a; m < e && ready; m++) {
				const hsg_task *u = &g->tasks[s->inst_tasks[m]];
				size_t uq = (size_t)hsg_rank_index(g, u->rank) * HSG_S_COUNT + u->stream;
				ready = qpos[uq] < qn[uq] && queue[uq][qpos[uq]] == s->inst_tasks[m];
				for (uint32_t j = 0; j < u->dep_count && ready; j++)
					ready = issued[g->deps[u->dep_first + j]];
			}
			if (!ready)
				continue;
			issue_inst(g, b, s->inst_tasks + a, (int)(e - a));
			for (size_t m = a; m < e; m++) {
				const hsg_task *u = &g->tasks[s->inst_tasks[m]];
				issued[s->inst_tasks[m]] = 1;
				qpos[(size_t)hsg_rank_index(g, u->rank) * HSG_S_COUNT + u->stream]++;
				done++;
			}
			progress = 1;
		}
		if (!progress) {
			snprintf(msg, msglen, "the graph cannot be scheduled (a cycle through stream order and collective "
					      "instances); %zu of %zu tasks enqueued", done, g->ntasks);
			rc = -1;
			break;
		}
	}
	for (size_t q = 0; q < nq; q++)
		free(queue[q]);
	free(queue);
	free(qn);
	free(qpos);
	free(issued);
	return rc;
}
