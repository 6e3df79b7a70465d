/* Task-graph export for the reference executor (traces/graph_export.h, docs/graph-format.md). */
#include "traces/graph_export.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/base/alloc.h"
#include "sim/base/outfile.h"
#include "sim/base/version.h"

static const char *const op_kind_names[] = {"gemm", "attn", "mem", "comm", "optimizer"};
static const char *const coll_names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
					 "broadcast",  "reduce",     "sendrecv"};
static const char *const group_names[] = {"tp", "cp", "dp", "ep", "pp"};
static const char *const task_kind_names[] = {"compute", "coll", "send", "recv"};
static const char *const stream_names[] = {"compute", "comm", "p2p"};
static const char *const what_names[] = {"fwd",	      "bwd",	     "bwd_input", "bwd_weight",
					 "optimizer", "grad_reduce", "param_gather", "p2p",
					 "offload", "cpu_optimizer"};

static int world_of(const hs_parallel *p) { return p->tp * p->cp * p->dp * p->pp; }

int hs_graph_export_node_ranks(const hs_scenario *s, int node, int **out, int *n, hs_err *err)
{
	int world = world_of(&s->par), ngpu = hs_cluster_ngpus(s->cluster);
	*out = NULL;
	*n = 0;
	if (node < 0 || node >= hs_cluster_nnodes(s->cluster))
		return hs_err_set(err, HS_EINPUT, "--node %d: the cluster has nodes 0..%d", node,
				  hs_cluster_nnodes(s->cluster) - 1);
	int *v = hs_xmalloc((size_t)(ngpu > 0 ? ngpu : 1) * sizeof *v);
	for (int g = 0; g < ngpu && g < world; g++)
		if (hs_cluster_node_of(s->cluster, g) == node)
			v[(*n)++] = g;
	if (*n == 0) {
		free(v);
		return hs_err_set(err, HS_EINPUT, "--node %d: no rank of the job runs on this node", node);
	}
	*out = v;
	return 0;
}

/* Open-addressing map of 64-bit keys to instance ids. */
struct imap {
	uint64_t *k;
	int *v;
	size_t cap, n;
};

static int imap_get(struct imap *m, uint64_t key, int *next)
{
	if (2 * (m->n + 1) > m->cap) {
		struct imap o = *m;
		m->cap = o.cap ? 2 * o.cap : 1024;
		m->k = hs_xcalloc(m->cap, sizeof *m->k);
		m->v = hs_xcalloc(m->cap, sizeof *m->v);
		m->n = 0;
		for (size_t i = 0; i < o.cap; i++)
			if (o.k[i]) {
				size_t j = (o.k[i] * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
				while (m->k[j])
					j = (j + 1) & (m->cap - 1);
				m->k[j] = o.k[i];
				m->v[j] = o.v[i];
				m->n++;
			}
		free(o.k);
		free(o.v);
	}
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
	while (m->k[j] && m->k[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->k[j]) {
		m->k[j] = key;
		m->v[j] = (*next)++;
		m->n++;
	}
	return m->v[j];
}

/* key: kind (1 collective, 2 send/recv pair) in the top bits, then a 30-bit id, then the graph task */
static uint64_t ikey(int kind, int id, uint32_t task) { return (uint64_t)kind << 62 | (uint64_t)id << 32 | task; }

static void rank_coords(const hs_parallel *p, int g, int *t, int *c, int *d, int *st)
{
	*t = g % p->tp;
	*c = (g / p->tp) % p->cp;
	*d = (g / (p->tp * p->cp)) % p->dp;
	*st = g / (p->tp * p->cp * p->dp);
}

static int group_id(hs_graph_export *x, int kind, int *m, int n)
{
	for (int i = 0; i < x->ngroups; i++)
		if (x->groups[i].kind == kind && x->groups[i].n == n && memcmp(x->groups[i].ranks, m, (size_t)n * sizeof *m) == 0)
			return i;
	x->groups = hs_xrealloc(x->groups, (size_t)(x->ngroups + 1) * sizeof *x->groups);
	hs_xgroup *q = &x->groups[x->ngroups];
	q->kind = kind;
	q->n = n;
	q->ranks = hs_xmalloc((size_t)n * sizeof *m);
	memcpy(q->ranks, m, (size_t)n * sizeof *m);
	return x->ngroups++;
}

void hs_graph_export_free(hs_graph_export *x)
{
	if (!x)
		return;
	for (int i = 0; i < x->ngroups; i++)
		free(x->groups[i].ranks);
	free(x->groups);
	free(x->ranks);
	free(x->tasks);
	free(x->deps);
	memset(x, 0, sizeof *x);
}

static uint32_t add_task(hs_graph_export *x, size_t *cap, const hs_xtask *t)
{
	hs_xgrow(&x->tasks, cap, x->ntasks + 1, sizeof *x->tasks);
	x->tasks[x->ntasks] = *t;
	return (uint32_t)x->ntasks++;
}

#define NONE UINT32_MAX

int hs_graph_export_plan(const hs_scenario *s, const hs_build *b, const int *ranks, int nranks,
			 hs_graph_export *x, hs_err *err)
{
	memset(x, 0, sizeof *x);
	const hs_parallel *p = &s->par;
	const hs_graph *g = &b->graph;
	x->world = world_of(p);
	if (g->nreps != p->pp || g->nrendezvous)
		return hs_err_set(err, HS_EINTERNAL, "internal error: the export needs the symmetric build (one rep "
						     "per stage); got %d reps for %d stages", g->nreps, p->pp);
	if (nranks <= 0)
		return hs_err_set(err, HS_EINPUT, "no rank to export");
	/* the reference executor runs GPU kernels and NCCL calls: host copies and a CPU optimizer step are not
	 * in its task kinds */
	for (size_t k = 0; k < g->ntasks; k++)
		if (g->tasks[k].kind == HS_T_HOST)
			return hs_err_set(err, HS_EINPUT, "the task graph holds host offload tasks, which the export "
					  "does not carry (expected parallelism.offload off)");
	x->ranks = hs_xcalloc((size_t)nranks, sizeof *x->ranks);
	x->nranks = nranks;
	int maxg = p->tp > p->cp ? p->tp : p->cp;
	maxg = maxg > p->dp ? maxg : p->dp;
	maxg = maxg > p->pp ? maxg : p->pp;
	maxg = maxg > p->ep ? maxg : p->ep;
	int *mem = hs_xmalloc((size_t)maxg * sizeof *mem);
	for (int i = 0; i < nranks; i++) {
		int r = ranks[i];
		if (r < 0 || r >= x->world) {
			free(mem);
			hs_graph_export_free(x);
			if (x->world <= 1)
				return hs_err_set(err, HS_EINPUT, "rank %d: the job has %s", r,
						  x->world == 1 ? "one rank, 0" : "no ranks");
			return hs_err_set(err, HS_EINPUT, "rank %d: the job has ranks 0 to %d", r, x->world - 1);
		}
		for (int j = 0; j < i; j++)
			if (ranks[j] == r) {
				free(mem);
				hs_graph_export_free(x);
				return hs_err_set(err, HS_EINPUT, "rank %d listed twice", r);
			}
		hs_xrank *q = &x->ranks[i];
		q->rank = r;
		q->node = hs_cluster_node_of(s->cluster, r);
		q->local = hs_cluster_local_rank(s->cluster, r);
		q->device = hs_cluster_device(s->cluster, r)->name;
		int t, c, d, st;
		rank_coords(p, r, &t, &c, &d, &st);
		q->stage = st, q->tp_index = t, q->cp_index = c, q->dp_index = d;
		/* concrete groups, as sim/exec/exec.c forms them but from this rank's own coordinates */
		int sizes[HS_GROUP_COUNT] = {p->tp, p->cp, p->dp, p->ep, p->pp};
		for (int k = 0; k < HS_GROUP_COUNT; k++) {
			for (int m = 0; m < sizes[k]; m++)
				switch (k) {
				case HS_GROUP_TP: mem[m] = hs_build_rank(p, m, c, d, st); break;
				case HS_GROUP_CP: mem[m] = hs_build_rank(p, t, m, d, st); break;
				case HS_GROUP_DP: mem[m] = hs_build_rank(p, t, c, m, st); break;
				case HS_GROUP_EP: mem[m] = hs_build_rank(p, t, c, (d / p->ep) * p->ep + m, st); break;
				case HS_GROUP_PP: mem[m] = hs_build_rank(p, t, c, d, m); break;
				}
			q->groups[k] = group_id(x, k, mem, sizes[k]);
		}
	}
	free(mem);

	/* copy[i * ntasks + k]: the copy of graph task k for exported rank i; recv[..]: the RECV of send k */
	size_t nt = g->ntasks;
	uint32_t *copy = hs_xmalloc((nt ? nt : 1) * (size_t)nranks * sizeof *copy);
	uint32_t *recv = hs_xmalloc((nt ? nt : 1) * (size_t)nranks * sizeof *recv);
	for (size_t i = 0; i < nt * (size_t)nranks; i++)
		copy[i] = recv[i] = NONE;
	struct imap im = {0};
	size_t tcap = 0, dcap = 0;
	int rc = 0;
	for (size_t k = 0; k < nt && !rc; k++) {
		const hs_task *t = &g->tasks[k];
		int stage = g->reps[t->rep].stage;
		for (int i = 0; i < nranks && !rc; i++) {
			const hs_xrank *q = &x->ranks[i];
			if (q->stage != stage)
				continue;
			hs_xtask xt = {.src = (uint32_t)k, .kind = t->kind, .rank = q->rank, .peer = -1, .group = -1,
				       .inst = -1, .dep_first = (uint32_t)x->ndeps, .dep_count = t->dep_count};
			if (t->kind == HS_T_COLL) {
				xt.group = q->groups[t->group];
				xt.inst = imap_get(&im, ikey(1, xt.group, (uint32_t)k), &x->ninst);
			} else if (t->kind == HS_T_SEND) {
				xt.peer = hs_build_rank(p, q->tp_index, q->cp_index, q->dp_index, g->reps[t->peer].stage);
				xt.inst = imap_get(&im, ikey(2, q->rank, (uint32_t)k), &x->ninst);
			}
			hs_xgrow(&x->deps, &dcap, x->ndeps + t->dep_count, sizeof *x->deps);
			for (uint32_t j = 0; j < t->dep_count; j++) {
				uint32_t dk = g->deps[t->dep_first + j];
				const hs_task *dt = &g->tasks[dk];
				uint32_t id = dt->rep == t->rep ? copy[(size_t)i * nt + dk]
					      : (dt->kind == HS_T_SEND && dt->peer == t->rep) ? recv[(size_t)i * nt + dk]
					      : NONE;
				if (id == NONE) {
					rc = hs_err_set(err, HS_EINTERNAL, "internal error: task %zu depends on task %u "
									   "of another stage that is not a send to it",
							k, dk);
					break;
				}
				x->deps[x->ndeps++] = id;
			}
			if (!rc)
				copy[(size_t)i * nt + k] = add_task(x, &tcap, &xt);
		}
		if (t->kind != HS_T_SEND || rc)
			continue;
		int pst = g->reps[t->peer].stage;
		for (int i = 0; i < nranks; i++) {
			const hs_xrank *q = &x->ranks[i];
			if (q->stage != pst)
				continue;
			int sender = hs_build_rank(p, q->tp_index, q->cp_index, q->dp_index, stage);
			hs_xtask xt = {.src = (uint32_t)k, .kind = HS_XT_RECV, .rank = q->rank, .peer = sender,
				       .group = -1, .inst = imap_get(&im, ikey(2, sender, (uint32_t)k), &x->ninst),
				       .dep_first = (uint32_t)x->ndeps, .dep_count = 0};
			recv[(size_t)i * nt + k] = add_task(x, &tcap, &xt);
		}
	}
	free(copy);
	free(recv);
	free(im.k);
	free(im.v);
	if (rc)
		hs_graph_export_free(x);
	return rc;
}

/* Names written unquoted must be one token. */
static const char *token(const char *s)
{
	if (!s || !*s)
		return "-";
	for (const char *c = s; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '=' || *c == '\n' || *c == '#')
			return "?";
	return s;
}

static void one_line(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s ", key);
	for (const char *c = v; *c; c++)
		fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
	fputc('\n', f);
}

static void write_op(FILE *f, size_t i, const hs_op *o)
{
	fprintf(f, "op %zu kind=%s name=%s dtype=%s", i, op_kind_names[o->kind], token(o->name),
		hs_dtype_name(o->dtype));
	switch (o->kind) {
	case HS_OP_GEMM:
		fprintf(f, " m=%.17g n=%.17g k=%.17g count=%.17g", o->m, o->n, o->k, o->count);
		break;
	case HS_OP_ATTN:
		fprintf(f, " b=%.17g h=%.17g s=%.17g skv=%.17g d=%.17g causal=%d bwd=%d", o->b, o->h, o->s, o->s_kv,
			o->d, o->causal ? 1 : 0, o->bwd ? 1 : 0);
		break;
	case HS_OP_COMM:
		fprintf(f, " coll=%s group=%s", coll_names[o->coll], group_names[o->group]);
		break;
	default:
		break;
	}
	fprintf(f, " flops=%.17g bytes=%.17g", o->flops, o->bytes);
	if (o->recompute)
		fprintf(f, " recompute=1");
	fputc('\n', f);
}

int hs_graph_export_write(FILE *f, const hs_scenario *s, const hs_build *b, const hs_result *r,
			  const hs_graph_export *x, const char *command)
{
	const hs_graph *g = &b->graph;
	char date[32] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, "hsgraph 1\n# hetsim task graph (docs/graph-format.md): one step of the ranks below\n");
	one_line(f, "name", s->name[0] ? s->name : "-");
	one_line(f, "scenario", s->path ? s->path : "-");
	if (command && *command)
		one_line(f, "command", command);
	one_line(f, "created", date[0] ? date : "-");
	one_line(f, "hetsim_version", HS_VERSION);
	fprintf(f, "device %s\n", token(x->nranks ? x->ranks[0].device : NULL));
	fprintf(f, "dtype %s\nhidden %d\nworld %d\n", hs_dtype_name(s->train.dtype), s->model.hidden, x->world);
	if (r)
		fprintf(f, "step_pred_s %.17g\n", r->step_time_s);
	fprintf(f, "# rank GLOBAL node= local= stage= tp_index= cp_index= dp_index= device= groups=tp,cp,dp,ep,pp\n");
	for (int i = 0; i < x->nranks; i++) {
		const hs_xrank *q = &x->ranks[i];
		fprintf(f, "rank %d node=%d local=%d stage=%d tp_index=%d cp_index=%d dp_index=%d device=%s groups=", q->rank,
			q->node, q->local, q->stage, q->tp_index, q->cp_index, q->dp_index, token(q->device));
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			fprintf(f, "%s%d", k ? "," : "", q->groups[k]);
		fputc('\n', f);
	}
	fprintf(f, "# group ID kind= ranks=\n");
	for (int i = 0; i < x->ngroups; i++) {
		fprintf(f, "group %d kind=%s ranks=", i, group_names[x->groups[i].kind]);
		for (int m = 0; m < x->groups[i].n; m++)
			fprintf(f, "%s%d", m ? "," : "", x->groups[i].ranks[m]);
		fputc('\n', f);
	}
	fprintf(f, "# op ID kind= name= dtype= (shape keys by kind) flops= bytes=\n");
	for (size_t i = 0; i < g->nops; i++)
		write_op(f, i, &g->ops[i]);
	fprintf(f, "# task ID rank= kind= stream= what= mb= chunk= [ops=FIRST+COUNT scale=] [bytes= peer= group= coll= "
		   "inst=] deps= pred_s=\n");
	for (size_t i = 0; i < x->ntasks; i++) {
		const hs_xtask *t = &x->tasks[i];
		const hs_task *st = &g->tasks[t->src];
		int stream = t->kind == HS_XT_RECV ? HS_S_P2P : st->stream;
		fprintf(f, "task %zu rank=%d kind=%s stream=%s what=%s mb=%d chunk=%d", i, t->rank,
			task_kind_names[t->kind], stream_names[stream], what_names[st->what], st->mb, st->chunk);
		if (t->kind == HS_XT_COMPUTE)
			fprintf(f, " ops=%u+%u scale=%.17g", st->op_first, st->op_count, st->scale);
		else
			fprintf(f, " bytes=%.17g", st->bytes);
		if (t->peer >= 0)
			fprintf(f, " peer=%d", t->peer);
		if (t->kind == HS_XT_COLL)
			fprintf(f, " group=%d coll=%s", t->group, coll_names[st->coll]);
		if (t->inst >= 0)
			fprintf(f, " inst=%d", t->inst);
		fprintf(f, " deps=");
		if (!t->dep_count)
			fputc('-', f);
		for (uint32_t j = 0; j < t->dep_count; j++)
			fprintf(f, "%s%u", j ? "," : "", x->deps[t->dep_first + j]);
		if (r && r->spans)
			fprintf(f, " pred_s=%.17g", r->spans[t->src].end - r->spans[t->src].start);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int hs_graph_export_file(const char *path, const hs_scenario *s, const hs_build *b, const hs_result *r,
			 const hs_graph_export *x, const char *command, hs_err *err)
{
	/* through hs_outfile: a failed write says why (a full disk), and no half-written graph is left */
	hs_outfile o;
	if (hs_outfile_open(&o, path, err))
		return -1;
	hs_graph_export_write(o.f, s, b, r, x, command); /* its errors are stdio's sticky flag, which commit checks */
	return hs_outfile_commit(&o, err);
}
