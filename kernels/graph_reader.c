/* Reader of "hsgraph 1" task-graph files (docs/graph-format.md). libc only: see graph_reader.h. */
#include "graph_reader.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hsg_dtype_names[HSG_DTYPE_COUNT] = {"fp8", "bf16", "fp16", "tf32", "fp32"};
const char *const hsg_op_kind_names[HSG_OP_KIND_COUNT] = {"gemm", "attn", "mem", "comm", "optimizer"};
const char *const hsg_coll_names[HSG_COLL_COUNT] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
						     "broadcast",  "reduce",     "sendrecv"};
const char *const hsg_group_names[HSG_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
const char *const hsg_task_kind_names[HSG_T_KIND_COUNT] = {"compute", "coll", "send", "recv"};
const char *const hsg_stream_names[HSG_S_COUNT] = {"compute", "comm", "p2p"};
const char *const hsg_what_names[HSG_W_COUNT] = {"fwd",	      "bwd",	     "bwd_input", "bwd_weight",
						  "optimizer", "grad_reduce", "param_gather", "p2p"};

int hsg_lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

int hsg_rank_index(const hsg_graph *g, int rank)
{
	for (int i = 0; i < g->nranks; i++)
		if (g->ranks[i].rank == rank)
			return i;
	return -1;
}

int hsg_group_index(const hsg_graph *g, int id)
{
	return id >= 0 && id < g->ngroups ? id : -1; /* ids are dense, in file order */
}

void hsg_free(hsg_graph *g)
{
	if (!g)
		return;
	free(g->name);
	free(g->scenario);
	free(g->command);
	free(g->created);
	free(g->device);
	free(g->hetsim_version);
	for (int i = 0; i < g->ngroups; i++)
		free(g->groups[i].ranks);
	free(g->ranks);
	free(g->groups);
	free(g->ops);
	free(g->tasks);
	free(g->deps);
	memset(g, 0, sizeof *g);
}

/* ---- parsing state ---- */

#define MAXTOK 64

struct ps {
	const char *name;
	int line;
	char *err;
	size_t errlen;
	hsg_graph *g;
	size_t capops, captasks, capdeps;
	int capranks, capgroups;
	char *tok[MAXTOK]; /* tokens of the current line */
	int ntok;
	const char *rest;  /* header lines: the text after the first token */
};

static int fail(struct ps *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%d: ", p->name, p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int grow(struct ps *p, void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(*v, c * elem);
	if (!q)
		return fail(p, "out of memory");
	*v = q;
	*cap = c;
	return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno == ERANGE && fabs(v) > 1)
		return -1;
	if (end == s || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* One key=value field of a record. */
struct field {
	const char *key;
	const char *val; /* NULL: absent */
};

/* Split tokens 2.. into the known keys of a record; unknown or repeated keys are errors. */
static int fields(struct ps *p, const char *rec, struct field *f, int nf)
{
	for (int i = 0; i < nf; i++)
		f[i].val = NULL;
	for (int t = 2; t < p->ntok; t++) {
		char *eq = strchr(p->tok[t], '=');
		if (!eq || eq == p->tok[t])
			return fail(p, "%s: '%s' is not KEY=VALUE", rec, p->tok[t]);
		*eq = 0;
		int k = -1;
		for (int i = 0; i < nf; i++)
			if (strcmp(f[i].key, p->tok[t]) == 0)
				k = i;
		if (k < 0) {
			char known[512] = "";
			size_t used = 0;
			for (int i = 0; i < nf && used < sizeof known; i++) {
				int w = snprintf(known + used, sizeof known - used, "%s%s", i ? " " : "", f[i].key);
				if (w < 0)
					break;
				used += (size_t)w;
			}
			return fail(p, "%s: unknown key '%s' (known: %s)", rec, p->tok[t], known);
		}
		if (f[k].val)
			return fail(p, "%s: key '%s' given twice", rec, p->tok[t]);
		f[k].val = eq + 1;
	}
	return 0;
}

static const char *fv(const struct field *f, int nf, const char *key)
{
	for (int i = 0; i < nf; i++)
		if (strcmp(f[i].key, key) == 0)
			return f[i].val;
	return NULL;
}

/* Typed getters: absent -> default (or an error when required). */
static int get_int(struct ps *p, const char *rec, const struct field *f, int nf, const char *key, int required,
		   long lo, long hi, int def, int *out)
{
	const char *v = fv(f, nf, key);
	if (!v) {
		if (required)
			return fail(p, "%s: missing key '%s'", rec, key);
		*out = def;
		return 0;
	}
	long x;
	if (parse_long(v, lo, hi, &x))
		return fail(p, "%s: %s=%s: expected an integer in [%ld, %ld]", rec, key, v, lo, hi);
	*out = (int)x;
	return 0;
}

static int get_num(struct ps *p, const char *rec, const struct field *f, int nf, const char *key, int required,
		   double lo, double def, double *out)
{
	const char *v = fv(f, nf, key);
	if (!v) {
		if (required)
			return fail(p, "%s: missing key '%s'", rec, key);
		*out = def;
		return 0;
	}
	double x;
	if (parse_double(v, &x) || x < lo)
		return fail(p, "%s: %s=%s: expected a finite number >= %g", rec, key, v, lo);
	*out = x;
	return 0;
}

static int get_enum(struct ps *p, const char *rec, const struct field *f, int nf, const char *key, int required,
		    const char *const *names, int n, int def, int *out)
{
	const char *v = fv(f, nf, key);
	if (!v) {
		if (required)
			return fail(p, "%s: missing key '%s'", rec, key);
		*out = def;
		return 0;
	}
	int x = hsg_lookup(names, n, v);
	if (x < 0) {
		char known[256] = "";
		size_t used = 0;
		for (int i = 0; i < n; i++) {
			int w = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
			if (w < 0 || (size_t)w >= sizeof known - used)
				break;
			used += (size_t)w;
		}
		return fail(p, "%s: %s=%s: unknown (expected one of %s)", rec, key, v, known);
	}
	*out = x;
	return 0;
}

/* "a,b,c" -> ints; "-" or "" -> none. */
static int int_list(struct ps *p, const char *rec, const char *key, const char *v, long lo, long hi, int **out,
		    int *n)
{
	*out = NULL;
	*n = 0;
	if (!v || !*v || strcmp(v, "-") == 0)
		return 0;
	size_t cap = 0;
	const char *s = v;
	while (1) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);
		char buf[32];
		long x;
		if (len == 0 || len >= sizeof buf) {
			free(*out);
			*out = NULL;
			return fail(p, "%s: %s=%s: expected a comma-separated list of integers", rec, key, v);
		}
		memcpy(buf, s, len);
		buf[len] = 0;
		if (parse_long(buf, lo, hi, &x)) {
			free(*out);
			*out = NULL;
			return fail(p, "%s: %s: '%s' is not an integer in [%ld, %ld]", rec, key, buf, lo, hi);
		}
		if (grow(p, (void **)out, &cap, (size_t)*n + 1, sizeof **out)) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[(*n)++] = (int)x;
		if (!c)
			break;
		s = c + 1;
	}
	return 0;
}

/* The id after the record name: must equal `expect` (dense ids in file order) unless expect < 0. */
static int record_id(struct ps *p, const char *rec, long expect, long *id)
{
	if (p->ntok < 2 || parse_long(p->tok[1], 0, 2147483647L, id))
		return fail(p, "%s: expected an id (a non-negative integer) after '%s'", rec, rec);
	if (expect >= 0 && *id != expect)
		return fail(p, "%s %ld: ids must be dense and in order (expected %ld)", rec, *id, expect);
	return 0;
}

static int rec_rank(struct ps *p)
{
	hsg_graph *g = p->g;
	long id;
	if (record_id(p, "rank", -1, &id))
		return -1;
	if (hsg_rank_index(g, (int)id) >= 0)
		return fail(p, "rank %ld declared twice", id);
	struct field f[] = {{"node", 0},     {"local", 0},    {"stage", 0},  {"tp_index", 0},
			    {"cp_index", 0}, {"dp_index", 0}, {"device", 0}, {"groups", 0}};
	int nf = (int)(sizeof f / sizeof f[0]);
	if (fields(p, "rank", f, nf))
		return -1;
	size_t cap = (size_t)p->capranks;
	if (grow(p, (void **)&g->ranks, &cap, (size_t)g->nranks + 1, sizeof *g->ranks))
		return -1;
	p->capranks = (int)cap;
	hsg_rank *r = &g->ranks[g->nranks];
	memset(r, 0, sizeof *r);
	r->rank = (int)id;
	r->line = p->line;
	const long M = 1L << 30;
	if (get_int(p, "rank", f, nf, "node", 0, 0, M, 0, &r->node) ||
	    get_int(p, "rank", f, nf, "local", 0, 0, M, 0, &r->local) ||
	    get_int(p, "rank", f, nf, "stage", 0, 0, M, 0, &r->stage) ||
	    get_int(p, "rank", f, nf, "tp_index", 0, 0, M, 0, &r->tp_index) ||
	    get_int(p, "rank", f, nf, "cp_index", 0, 0, M, 0, &r->cp_index) ||
	    get_int(p, "rank", f, nf, "dp_index", 0, 0, M, 0, &r->dp_index))
		return -1;
	const char *dev = fv(f, nf, "device");
	if (dev && strlen(dev) >= sizeof r->device)
		return fail(p, "rank: device name too long");
	snprintf(r->device, sizeof r->device, "%s", dev ? dev : "");
	for (int k = 0; k < HSG_GROUP_COUNT; k++)
		r->groups[k] = -1;
	int *gl, ng;
	if (int_list(p, "rank", "groups", fv(f, nf, "groups"), -1, M, &gl, &ng))
		return -1;
	if (ng && ng != HSG_GROUP_COUNT) {
		free(gl);
		return fail(p, "rank: groups= lists %d ids; expected %d (tp,cp,dp,ep,pp; -1 for none)", ng,
			    HSG_GROUP_COUNT);
	}
	for (int k = 0; k < ng; k++)
		r->groups[k] = gl[k];
	free(gl);
	g->nranks++;
	return 0;
}

static int rec_group(struct ps *p)
{
	hsg_graph *g = p->g;
	long id;
	if (record_id(p, "group", g->ngroups, &id))
		return -1;
	struct field f[] = {{"kind", 0}, {"ranks", 0}};
	int nf = 2;
	if (fields(p, "group", f, nf))
		return -1;
	size_t cap = (size_t)p->capgroups;
	if (grow(p, (void **)&g->groups, &cap, (size_t)g->ngroups + 1, sizeof *g->groups))
		return -1;
	p->capgroups = (int)cap;
	hsg_group *q = &g->groups[g->ngroups];
	memset(q, 0, sizeof *q);
	q->id = (int)id;
	q->line = p->line;
	if (get_enum(p, "group", f, nf, "kind", 1, hsg_group_names, HSG_GROUP_COUNT, 0, &q->kind))
		return -1;
	if (!fv(f, nf, "ranks"))
		return fail(p, "group: missing key 'ranks'");
	if (int_list(p, "group", "ranks", fv(f, nf, "ranks"), 0, 1L << 30, &q->ranks, &q->n))
		return -1;
	if (q->n == 0)
		return fail(p, "group: ranks= is empty");
	for (int i = 0; i < q->n; i++)
		for (int j = 0; j < i; j++)
			if (q->ranks[i] == q->ranks[j]) {
				int r = q->ranks[i];
				free(q->ranks);
				q->ranks = NULL;
				return fail(p, "group: rank %d listed twice", r);
			}
	g->ngroups++;
	return 0;
}

static int rec_op(struct ps *p)
{
	hsg_graph *g = p->g;
	long id;
	if (record_id(p, "op", (long)g->nops, &id))
		return -1;
	struct field f[] = {{"kind", 0},  {"name", 0},  {"dtype", 0}, {"m", 0},	   {"n", 0},	 {"k", 0},
			    {"count", 0}, {"b", 0},	{"h", 0},     {"s", 0},	   {"skv", 0},	 {"d", 0},
			    {"causal", 0}, {"bwd", 0},	{"flops", 0}, {"bytes", 0}, {"coll", 0}, {"group", 0},
			    {"recompute", 0}};
	int nf = (int)(sizeof f / sizeof f[0]);
	if (fields(p, "op", f, nf))
		return -1;
	if (grow(p, (void **)&g->ops, &p->capops, g->nops + 1, sizeof *g->ops))
		return -1;
	hsg_op *o = &g->ops[g->nops];
	memset(o, 0, sizeof *o);
	o->line = p->line;
	o->coll = o->group = -1;
	if (get_enum(p, "op", f, nf, "kind", 1, hsg_op_kind_names, HSG_OP_KIND_COUNT, 0, &o->kind) ||
	    get_enum(p, "op", f, nf, "dtype", 1, hsg_dtype_names, HSG_DTYPE_COUNT, 0, &o->dtype))
		return -1;
	const char *nm = fv(f, nf, "name");
	if (!nm)
		return fail(p, "op: missing key 'name'");
	if (strlen(nm) >= sizeof o->name)
		return fail(p, "op: name '%s' longer than %zu characters", nm, sizeof o->name - 1);
	snprintf(o->name, sizeof o->name, "%s", nm);
	int gemm = o->kind == HSG_OP_GEMM, attn = o->kind == HSG_OP_ATTN, comm = o->kind == HSG_OP_COMM;
	int membound = o->kind == HSG_OP_MEM || o->kind == HSG_OP_OPTIMIZER;
	if (get_num(p, "op", f, nf, "m", gemm, 0, 0, &o->m) || get_num(p, "op", f, nf, "n", gemm, 0, 0, &o->n) ||
	    get_num(p, "op", f, nf, "k", gemm, 0, 0, &o->k) || get_num(p, "op", f, nf, "count", 0, 0, 1, &o->count) ||
	    get_num(p, "op", f, nf, "b", attn, 0, 0, &o->b) || get_num(p, "op", f, nf, "h", attn, 0, 0, &o->h) ||
	    get_num(p, "op", f, nf, "s", attn, 0, 0, &o->s) || get_num(p, "op", f, nf, "d", attn, 0, 0, &o->d) ||
	    get_num(p, "op", f, nf, "skv", 0, 0, o->s, &o->skv) ||
	    get_int(p, "op", f, nf, "causal", 0, 0, 1, 0, &o->causal) ||
	    get_int(p, "op", f, nf, "bwd", 0, 0, 1, 0, &o->bwd) ||
	    get_num(p, "op", f, nf, "flops", 0, 0, 0, &o->flops) ||
	    get_num(p, "op", f, nf, "bytes", membound || comm, 0, 0, &o->bytes) ||
	    get_enum(p, "op", f, nf, "coll", comm, hsg_coll_names, HSG_COLL_COUNT, -1, &o->coll) ||
	    get_enum(p, "op", f, nf, "group", comm, hsg_group_names, HSG_GROUP_COUNT, -1, &o->group) ||
	    get_int(p, "op", f, nf, "recompute", 0, 0, 1, 0, &o->recompute))
		return -1;
	g->nops++;
	return 0;
}

static int rec_task(struct ps *p)
{
	hsg_graph *g = p->g;
	long id;
	if (record_id(p, "task", (long)g->ntasks, &id))
		return -1;
	struct field f[] = {{"rank", 0},  {"kind", 0}, {"stream", 0}, {"what", 0}, {"mb", 0},	  {"chunk", 0},
			    {"ops", 0},	  {"scale", 0}, {"bytes", 0},  {"peer", 0}, {"group", 0}, {"coll", 0},
			    {"inst", 0},  {"deps", 0}, {"pred_s", 0}};
	int nf = (int)(sizeof f / sizeof f[0]);
	if (fields(p, "task", f, nf))
		return -1;
	if (grow(p, (void **)&g->tasks, &p->captasks, g->ntasks + 1, sizeof *g->tasks))
		return -1;
	hsg_task *t = &g->tasks[g->ntasks];
	memset(t, 0, sizeof *t);
	t->line = p->line;
	const long M = 1L << 30;
	static const int def_stream[HSG_T_KIND_COUNT] = {HSG_S_COMPUTE, HSG_S_COMM, HSG_S_P2P, HSG_S_P2P};
	static const int def_what[HSG_T_KIND_COUNT] = {HSG_W_FWD, HSG_W_GRAD_REDUCE, HSG_W_P2P, HSG_W_P2P};
	if (get_int(p, "task", f, nf, "rank", 1, 0, M, 0, &t->rank) ||
	    get_enum(p, "task", f, nf, "kind", 1, hsg_task_kind_names, HSG_T_KIND_COUNT, 0, &t->kind))
		return -1;
	int compute = t->kind == HSG_T_COMPUTE, coll = t->kind == HSG_T_COLL, p2p = !compute && !coll;
	if (get_enum(p, "task", f, nf, "stream", 0, hsg_stream_names, HSG_S_COUNT, def_stream[t->kind], &t->stream) ||
	    get_enum(p, "task", f, nf, "what", 0, hsg_what_names, HSG_W_COUNT, def_what[t->kind], &t->what) ||
	    get_int(p, "task", f, nf, "mb", 0, -1, M, 0, &t->mb) ||
	    get_int(p, "task", f, nf, "chunk", 0, -1, M, 0, &t->chunk) ||
	    get_num(p, "task", f, nf, "scale", 0, 0, compute ? 1 : 0, &t->scale) ||
	    get_num(p, "task", f, nf, "bytes", !compute, 0, 0, &t->bytes) ||
	    get_int(p, "task", f, nf, "peer", p2p, -1, M, -1, &t->peer) ||
	    get_int(p, "task", f, nf, "group", coll, -1, M, -1, &t->group) ||
	    get_enum(p, "task", f, nf, "coll", coll, hsg_coll_names, HSG_COLL_COUNT, -1, &t->coll) ||
	    get_int(p, "task", f, nf, "inst", !compute, -1, M, -1, &t->inst) ||
	    get_num(p, "task", f, nf, "pred_s", 0, -1, -1, &t->pred_s))
		return -1;
	if (p2p && t->peer < 0)
		return fail(p, "task: a %s needs peer >= 0", hsg_task_kind_names[t->kind]);
	if (!compute && t->inst < 0)
		return fail(p, "task: a %s needs inst >= 0", hsg_task_kind_names[t->kind]);
	if (coll && t->group < 0)
		return fail(p, "task: a coll needs group >= 0");
	if (t->inst >= g->ninst)
		g->ninst = t->inst + 1;
	const char *ops = fv(f, nf, "ops");
	if (compute && !ops)
		return fail(p, "task: a compute task needs ops=FIRST+COUNT");
	if (ops && strcmp(ops, "-") != 0) {
		const char *plus = strchr(ops, '+');
		char a[32];
		long first, count;
		size_t la = plus ? (size_t)(plus - ops) : 0;
		if (!plus || la == 0 || la >= sizeof a)
			return fail(p, "task: ops=%s: expected FIRST+COUNT", ops);
		memcpy(a, ops, la);
		a[la] = 0;
		if (parse_long(a, 0, 0xffffffffL, &first) || parse_long(plus + 1, 0, 0xffffffffL, &count))
			return fail(p, "task: ops=%s: expected FIRST+COUNT (non-negative integers)", ops);
		t->op_first = (uint32_t)first;
		t->op_count = (uint32_t)count;
	}
	int *dl, nd;
	if (int_list(p, "task", "deps", fv(f, nf, "deps"), 0, M, &dl, &nd))
		return -1;
	for (int i = 0; i < nd; i++)
		if (dl[i] >= (long)id) {
			int d = dl[i];
			free(dl);
			return fail(p, "task %ld: dependency %d is not an earlier task (tasks must be in a topological "
				       "order)",
				    id, d);
		}
	if (grow(p, (void **)&g->deps, &p->capdeps, g->ndeps + (size_t)nd, sizeof *g->deps)) {
		free(dl);
		return -1;
	}
	t->dep_first = (uint32_t)g->ndeps;
	t->dep_count = (uint32_t)nd;
	for (int i = 0; i < nd; i++)
		g->deps[g->ndeps++] = (uint32_t)dl[i];
	free(dl);
	g->ntasks++;
	return 0;
}

static int header(struct ps *p, const char *key)
{
	hsg_graph *g = p->g;
	static const char *const strs[] = {"name", "scenario", "command", "created", "device", "hetsim_version"};
	char **dst[] = {&g->name, &g->scenario, &g->command, &g->created, &g->device, &g->hetsim_version};
	for (int i = 0; i < 6; i++)
		if (strcmp(key, strs[i]) == 0) {
			if (*dst[i])
				return fail(p, "header '%s' given twice", key);
			if (!*p->rest)
				return fail(p, "header '%s' needs a value", key);
			size_t n = strlen(p->rest);
			*dst[i] = malloc(n + 1);
			if (!*dst[i])
				return fail(p, "out of memory");
			memcpy(*dst[i], p->rest, n + 1);
			return 0;
		}
	if (p->ntok != 2)
		return fail(p, "header '%s' takes one value", key);
	const char *v = p->tok[1];
	long x;
	if (strcmp(key, "dtype") == 0) {
		g->dtype = hsg_lookup(hsg_dtype_names, HSG_DTYPE_COUNT, v);
		if (g->dtype < 0)
			return fail(p, "dtype %s: unknown (expected fp8, bf16, fp16, tf32 or fp32)", v);
	} else if (strcmp(key, "hidden") == 0 || strcmp(key, "world") == 0) {
		if (parse_long(v, 1, 1L << 30, &x))
			return fail(p, "%s %s: expected a positive integer", key, v);
		*(key[0] == 'h' ? &g->hidden : &g->world) = (int)x;
	} else if (strcmp(key, "step_pred_s") == 0) {
		if (parse_double(v, &g->step_pred_s) || g->step_pred_s < 0)
			return fail(p, "step_pred_s %s: expected a non-negative number", v);
	} else {
		return fail(p, "unknown record '%s' (expected a header key, rank, group, op or task)", key);
	}
	return 0;
}

/* Cross-references, checked once everything is read so records may come in any order. */
static int check(struct ps *p)
{
	hsg_graph *g = p->g;
	for (int i = 0; i < g->nranks; i++)
		for (int k = 0; k < HSG_GROUP_COUNT; k++) {
			int id = g->ranks[i].groups[k];
			p->line = g->ranks[i].line;
			if (id < 0)
				continue;
			if (hsg_group_index(g, id) < 0)
				return fail(p, "rank %d: group %d is not declared", g->ranks[i].rank, id);
			const hsg_group *q = &g->groups[id];
			if (q->kind != k)
				return fail(p, "rank %d: group %d is a %s group, listed as its %s group", g->ranks[i].rank,
					    id, hsg_group_names[q->kind], hsg_group_names[k]);
			int in = 0;
			for (int j = 0; j < q->n; j++)
				in |= q->ranks[j] == g->ranks[i].rank;
			if (!in)
				return fail(p, "rank %d: not a member of its %s group %d", g->ranks[i].rank,
					    hsg_group_names[k], id);
		}
	for (size_t i = 0; i < g->ntasks; i++) {
		const hsg_task *t = &g->tasks[i];
		p->line = t->line;
		if (hsg_rank_index(g, t->rank) < 0)
			return fail(p, "task %zu: rank %d is not declared", i, t->rank);
		if ((uint64_t)t->op_first + t->op_count > g->nops)
			return fail(p, "task %zu: ops %u+%u run past the %zu ops declared", i, t->op_first, t->op_count,
				    g->nops);
		if (t->kind == HSG_T_COLL) {
			if (hsg_group_index(g, t->group) < 0)
				return fail(p, "task %zu: group %d is not declared", i, t->group);
			int in = 0;
			const hsg_group *q = &g->groups[t->group];
			for (int j = 0; j < q->n; j++)
				in |= q->ranks[j] == t->rank;
			if (!in)
				return fail(p, "task %zu: rank %d is not a member of group %d", i, t->rank, t->group);
		}
		if ((t->kind == HSG_T_SEND || t->kind == HSG_T_RECV) && t->peer == t->rank)
			return fail(p, "task %zu: a %s to itself", i, hsg_task_kind_names[t->kind]);
	}
	return 0;
}

int hsg_parse(const char *text, size_t len, const char *name, hsg_graph *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->dtype = -1;
	g->step_pred_s = -1;
	struct ps p = {.name = name ? name : "(graph)", .err = err, .errlen = errlen, .g = g};
	if (errlen)
		err[0] = 0;
	char *buf = malloc(len + 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", p.name);
		return -1;
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	const char *nul = memchr(buf, 0, len);
	if (nul) {
		p.line = 1;
		for (const char *c = buf; c < nul; c++)
			p.line += *c == '\n';
		fail(&p, "NUL byte: not a text file");
		free(buf);
		return -1;
	}
	int rc = 0, seen_magic = 0;
	char *s = buf;
	for (p.line = 1; s && *s && !rc; p.line++) {
		char *nl = strchr(s, '\n');
		if (nl)
			*nl = 0;
		char *line = s;
		s = nl ? nl + 1 : NULL;
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		/* the rest of the line after the first token, for string headers */
		char *r = line;
		while (*r && *r != ' ' && *r != '\t')
			r++;
		char *rest = r;
		while (*rest == ' ' || *rest == '\t')
			rest++;
		p.rest = rest;
		/* string headers keep their spaces: handle them before tokenising */
		char first[32];
		size_t fl = (size_t)(r - line);
		if (fl >= sizeof first) {
			rc = fail(&p, "unknown record '%.*s...'", 16, line);
			break;
		}
		memcpy(first, line, fl);
		first[fl] = 0;
		if (!seen_magic) {
			long v;
			if (strcmp(first, "hsgraph") != 0) {
				rc = fail(&p, "not a hetsim graph file: the first line must be 'hsgraph %d'",
					  HSG_FORMAT_VERSION);
				break;
			}
			if (parse_long(rest, 0, 1000000, &v) || v != HSG_FORMAT_VERSION) {
				rc = fail(&p, "format version '%s' is not supported (this reader reads version %d)", rest,
					  HSG_FORMAT_VERSION);
				break;
			}
			g->version = (int)v;
			seen_magic = 1;
			continue;
		}
		if (!strcmp(first, "name") || !strcmp(first, "scenario") || !strcmp(first, "command") ||
		    !strcmp(first, "created") || !strcmp(first, "device") || !strcmp(first, "hetsim_version")) {
			p.ntok = 1;
			rc = header(&p, first);
			continue;
		}
		p.ntok = 0;
		char *q = line;
		while (*q) {
			while (*q == ' ' || *q == '\t')
				*q++ = 0;
			if (!*q)
				break;
			if (p.ntok == MAXTOK) {
				rc = fail(&p, "more than %d fields", MAXTOK);
				break;
			}
			p.tok[p.ntok++] = q;
			while (*q && *q != ' ' && *q != '\t')
				q++;
		}
		if (rc)
			break;
		if (!strcmp(first, "rank"))
			rc = rec_rank(&p);
		else if (!strcmp(first, "group"))
			rc = rec_group(&p);
		else if (!strcmp(first, "op"))
			rc = rec_op(&p);
		else if (!strcmp(first, "task"))
			rc = rec_task(&p);
		else if (!strcmp(first, "hsgraph"))
			rc = fail(&p, "'hsgraph' given twice");
		else
			rc = header(&p, first);
	}
	if (!rc && !seen_magic) {
		p.line = 1;
		rc = fail(&p, "empty: not a hetsim graph file (expected 'hsgraph %d')", HSG_FORMAT_VERSION);
	}
	if (!rc && g->nranks == 0) {
		p.line--;
		rc = fail(&p, "no rank declared");
	}
	if (!rc)
		rc = check(&p);
	free(buf);
	if (rc)
		hsg_free(g);
	return rc;
}

int hsg_read_file(const char *path, hsg_graph *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	while (text) {
		size_t r = fread(text + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *t = realloc(text, cap * 2);
		if (!t) {
			free(text);
			text = NULL;
			break;
		}
		text = t;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (!text || bad) {
		free(text);
		snprintf(err, errlen, "%s: %s", path, bad ? "read error" : "out of memory");
		return -1;
	}
	int rc = hsg_parse(text, n, path, g, err, errlen);
	free(text);
	return rc;
}
