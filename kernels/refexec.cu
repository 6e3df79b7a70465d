/* refexec: the reference executor. Reads the task graph `hetsim export-graph` wrote for the ranks of this node
 * (docs/graph-format.md) and runs every task on the GPUs, with the kernels the benchmarks time and NCCL, on CUDA
 * streams in dependency order; writes the measured time of every task and of the step as JSON lines.
 *
 *   refexec GRAPH [--warmup 2] [--reps 5] [--op-times] [-o FILE]
 *
 * One process drives the node's GPUs: rank r runs on device `local` of its rank record. Each rank has three
 * streams (compute, comm, p2p) and each task a start and an end event; a task waits for its dependencies'
 * end events (cudaStreamWaitEvent, across devices too) and for its stream's earlier tasks. Tasks are enqueued
 * by a list scheduler over the per-(rank, stream) queues in file order; the members of one collective instance
 * (and both halves of a send) are enqueued together inside ncclGroupStart/End. How ops run:
 *   gemm       cuBLASLt (kernels/gemm.h), "TN", `count` as a strided batch; a task's scale shrinks m;
 *   attn       materialised attention (kernels/ops.h): forward, or backward (dV, dP, softmax backward, dQ, dK);
 *   mem        a kernel moving the op's bytes: layernorm over rows of `hidden` for names starting "ln" or
 *              containing "norm" (not grad_norm), a 3-tensor add for names starting "add", a row softmax for
 *              "softmax", otherwise a 2-tensor elementwise scale (bytes/2 read, bytes/2 written);
 *   optimizer  Adam over bytes/28 parameters (kernels/ops.h);
 *   comm       inside a compute task: nothing when the rank's group has one member (as hetsim); larger
 *              groups (tp, cp, ep > 1) are not supported yet and are refused at load;
 *   coll       NCCL over a communicator of the group's ranks (all must be in the file); a group of one: nothing;
 *   send/recv  ncclSend/ncclRecv over a communicator of all the file's ranks; both halves must be in the file.
 * Data is random (never zero); values are not checked. Records (after the info record):
 *   {"kind": "refexec_task", "task", "rank", "task_kind", "stream", "what", "t_med", "t_min", "t_max", "pred_s"}
 *   {"kind": "refexec_op", "task", "op", "name", "op_kind", "t_med", ...}     with --op-times, first rank only
 *   {"kind": "refexec_step", "t_med", "t_min", "t_max", "reps", "pred_s", ...}
 * A task's time runs from its start (dependencies met, stream free) to its end. */
#include <math.h>
#include <nccl.h>
#include <string.h>

#include "common.h"
#include "gemm.h"
#include "graph_reader.h"
#include "ops.h"
#include "refexec_sched.h"

#define CN(x)                                                                                                      \
	do {                                                                                                       \
		ncclResult_t r_ = (x);                                                                             \
		if (r_ != ncclSuccess) {                                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_));        \
			exit(1);                                                                                   \
		}                                                                                                  \
	} while (0)

static size_t al(size_t b) { return (b + 255) & ~(size_t)255; }

struct gplan {
	int m, n, k, dt, batch;
	hsk_gemm_plan p;
};
struct aplan {
	int bh, s, skv, d, causal, bwd;
	hsk_attn a;
};

struct rank {
	int dev;
	cudaStream_t st[HSG_S_COUNT];
	hsk_gemm_ctx gc;
	char *pool, *combuf, *p2pbuf;
	size_t poolb, comb, p2pb;
	float *gamma;
	struct gplan *gp;
	int ngp;
	struct aplan *ap;
	int nap;
	ncclComm_t node_comm; /* all ranks of the file, for send/recv */
};

static hsg_graph G;
static struct rank *R;
static ncclComm_t *group_comm; /* [ngroups * max members]: member i's communicator, or NULL */
static int *group_local;       /* [ngroups]: 1 when every member is in the file */
static int maxmem;

static int ri(int rank) { return hsg_rank_index(&G, rank); }

static int group_size(int rank_idx, int kind)
{
	int id = G.ranks[rank_idx].groups[kind];
	return id < 0 ? 1 : G.groups[id].n;
}

static double scaled(double v, double s) { return v * s < 1 ? 1 : floor(v * s + 0.5); }

/* Bytes of the compute pool one op needs. */
static size_t op_bytes(const hsg_op *o, double sc, int hidden)
{
	switch (o->kind) {
	case HSG_OP_GEMM: {
		double m = scaled(o->m, sc), b = o->count < 1 ? 1 : floor(o->count + 0.5);
		size_t eb = hsk_dtype_bytes(o->dtype), ob = hsk_gemm_out_bytes(o->dtype);
		return al((size_t)(m * o->k * b) * eb) + al((size_t)(o->k * o->n * b) * eb) + al((size_t)(m * o->n * b) * ob);
	}
	case HSG_OP_ATTN:
		return hsk_attn_bytes((int)scaled(o->b * o->h, sc), (int)o->s, (int)o->skv, (int)o->d, o->bwd);
	case HSG_OP_MEM: return al((size_t)(o->bytes * sc)) + al((size_t)(o->bytes * sc)) + (size_t)hidden * 8;
	case HSG_OP_OPTIMIZER: return al((size_t)(o->bytes * sc / 28.0) * 16) + 1024;
	default: return 0;
	}
}

static hsk_gemm_plan *gemm_plan(struct rank *r, int m, int n, int k, int dt, int batch)
{
	for (int i = 0; i < r->ngp; i++) {
		struct gplan *g = &r->gp[i];
		if (g->m == m && g->n == n && g->k == k && g->dt == dt && g->batch == batch)
			return &g->p;
	}
	r->gp = (struct gplan *)realloc(r->gp, sizeof *r->gp * (size_t)(r->ngp + 1));
	struct gplan *g = &r->gp[r->ngp];
	g->m = m, g->n = n, g->k = k, g->dt = dt, g->batch = batch;
	if (hsk_gemm_plan_make(&r->gc, &g->p, m, n, k, dt, 1, 0, batch))
		exit(1);
	r->ngp++;
	return &g->p;
}

static hsk_attn *attn_plan(struct rank *r, int bh, int s, int skv, int d, int causal, int bwd)
{
	for (int i = 0; i < r->nap; i++) {
		struct aplan *a = &r->ap[i];
		if (a->bh == bh && a->s == s && a->skv == skv && a->d == d && a->causal == causal && a->bwd == bwd)
			return &a->a;
	}
	r->ap = (struct aplan *)realloc(r->ap, sizeof *r->ap * (size_t)(r->nap + 1));
	struct aplan *a = &r->ap[r->nap];
	a->bh = bh, a->s = s, a->skv = skv, a->d = d, a->causal = causal, a->bwd = bwd;
	if (hsk_attn_make(&r->gc, &a->a, bh, s, skv, d, causal, bwd))
		exit(1);
	r->nap++;
	return &a->a;
}

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static void run_op(struct rank *r, const hsg_op *o, double sc, cudaStream_t s)
{
	typedef __nv_bfloat16 bf16;
	switch (o->kind) {
	case HSG_OP_GEMM: {
		int m = (int)scaled(o->m, sc), b = o->count < 1 ? 1 : (int)floor(o->count + 0.5);
		hsk_gemm_plan *p = gemm_plan(r, m, (int)o->n, (int)o->k, o->dtype, b);
		size_t eb = hsk_dtype_bytes(o->dtype);
		char *A = r->pool, *B = A + al((size_t)m * (size_t)o->k * b * eb), *C = B + al((size_t)(o->k * o->n) * b * eb);
		hsk_gemm_run(&r->gc, p, A, B, C, 1.f, s);
		break;
	}
	case HSG_OP_ATTN: {
		int bh = (int)scaled(o->b * o->h, sc);
		hsk_attn *a = attn_plan(r, bh, (int)o->s, (int)o->skv, (int)o->d, o->causal, o->bwd);
		hsk_attn_bufs bf;
		hsk_attn_carve(&bf, r->pool, bh, (int)o->s, (int)o->skv, (int)o->d, o->bwd);
		if (o->bwd)
			hsk_attn_bwd(&r->gc, a, &bf, s);
		else
			hsk_attn_fwd(&r->gc, a, &bf, s);
		break;
	}
	case HSG_OP_MEM: {
		size_t bytes = (size_t)(o->bytes * sc);
		int cols = G.hidden > 0 ? G.hidden : 1024;
		bf16 *x = (bf16 *)r->pool, *y = (bf16 *)(r->pool + al(bytes));
		int norm = (starts_with(o->name, "ln") || strstr(o->name, "norm")) && !starts_with(o->name, "grad_norm");
		if (norm && bytes >= (size_t)cols * 4)
			hsk_layernorm(x, y, r->gamma, NULL, bytes / 4 / cols, cols, s);
		else if (starts_with(o->name, "softmax") && bytes >= (size_t)cols * 4)
			hsk_softmax(x, y, bytes / 4 / cols, cols, 1.f, 0, 1, s);
		else if (starts_with(o->name, "add") && bytes >= 6)
			hsk_add(x, x + al(bytes / 3) / 2, y, bytes / 6, s); /* 16-byte aligned operands */
		else if (bytes >= 4)
			hsk_scale(x, y, bytes / 4, 0.5f, s);
		break;
	}
	case HSG_OP_OPTIMIZER: {
		size_t n = (size_t)(o->bytes * sc / 28.0);
		if (!n)
			break;
		char *c = r->pool;
		float *w = (float *)c, *m = w + n, *v = m + n;
		bf16 *g = (bf16 *)(v + n), *w16 = g + n;
		hsk_adam(w, m, v, g, w16, n, 1e-4f, 10, s);
		break;
	}
	default: break; /* comm: groups of one only (checked at load) */
	}
	CK(cudaGetLastError());
}

static cudaEvent_t *ev_start, *ev_end;
static cudaEvent_t *op_ev; /* --op-times: [2 * op index within the first rank's compute tasks] */
static size_t *op_ev_first; /* per task: first op event pair, or SIZE_MAX */

/* The CUDA backend's verbs (refexec_sched.h). */
static int with_ops_now;

static void be_wait(void *ctx, size_t ti, size_t dep)
{
	const hsg_task *t = &G.tasks[ti];
	struct rank *r = &R[ri(t->rank)];
	CK(cudaSetDevice(r->dev));
	CK(cudaStreamWaitEvent(r->st[t->stream], ev_end[dep], 0));
}

static void be_record(void *ctx, size_t ti, int end)
{
	const hsg_task *t = &G.tasks[ti];
	struct rank *r = &R[ri(t->rank)];
	CK(cudaSetDevice(r->dev));
	CK(cudaEventRecord(end ? ev_end[ti] : ev_start[ti], r->st[t->stream]));
}

static void be_op(void *ctx, size_t ti, unsigned k)
{
	const hsg_task *t = &G.tasks[ti];
	struct rank *r = &R[ri(t->rank)];
	cudaStream_t s = r->st[t->stream];
	CK(cudaSetDevice(r->dev));
	int timed = with_ops_now && op_ev_first[ti] != SIZE_MAX;
	if (timed)
		CK(cudaEventRecord(op_ev[2 * (op_ev_first[ti] + k)], s));
	run_op(r, &G.ops[t->op_first + k], t->scale, s);
	if (timed)
		CK(cudaEventRecord(op_ev[2 * (op_ev_first[ti] + k) + 1], s));
}

static int member_index(const hsg_group *g, int rank)
{
	for (int i = 0; i < g->n; i++)
		if (g->ranks[i] == rank)
			return i;
	return -1;
}

/* The communication of one instance: every member's call inside one ncclGroupStart/End. */
static void be_inst(void *ctx, const size_t *mem, int n)
{
	int active = 0;
	for (int i = 0; i < n; i++) {
		const hsg_task *t = &G.tasks[mem[i]];
		active |= t->kind != HSG_T_COLL || G.groups[t->group].n > 1;
	}
	if (active) {
		CN(ncclGroupStart());
		for (int i = 0; i < n; i++) {
			const hsg_task *t = &G.tasks[mem[i]];
			struct rank *r = &R[ri(t->rank)];
			cudaStream_t s = r->st[t->stream];
			CK(cudaSetDevice(r->dev));
			size_t count = (size_t)(t->bytes / 4) > 0 ? (size_t)(t->bytes / 4) : 1;
			if (t->kind == HSG_T_SEND) {
				CN(ncclSend(r->p2pbuf, count, ncclFloat, ri(t->peer), r->node_comm, s));
				continue;
			}
			if (t->kind == HSG_T_RECV) {
				CN(ncclRecv(r->p2pbuf, count, ncclFloat, ri(t->peer), r->node_comm, s));
				continue;
			}
			const hsg_group *g = &G.groups[t->group];
			int me = member_index(g, t->rank), gn = g->n;
			ncclComm_t c = group_comm[(size_t)t->group * maxmem + me];
			float *b = (float *)r->combuf;
			size_t per = count / gn ? count / gn : 1;
			switch (t->coll) {
			case HSG_ALL_REDUCE: CN(ncclAllReduce(b, b, count, ncclFloat, ncclSum, c, s)); break;
			case HSG_ALL_GATHER: CN(ncclAllGather(b + per * me, b, per, ncclFloat, c, s)); break;
			case HSG_REDUCE_SCATTER: CN(ncclReduceScatter(b, b + per * me, per, ncclFloat, ncclSum, c, s)); break;
			case HSG_BROADCAST: CN(ncclBroadcast(b, b, count, ncclFloat, 0, c, s)); break;
			case HSG_REDUCE: CN(ncclReduce(b, b, count, ncclFloat, ncclSum, 0, c, s)); break;
			default: /* all_to_all, sendrecv: what a rank sends in all, split evenly over the group */
				for (int p = 0; p < gn; p++) {
					CN(ncclSend(b + per * p, per, ncclFloat, p, c, s));
					CN(ncclRecv(b + per * (gn + p), per, ncclFloat, p, c, s));
				}
				break;
			}
		}
		CN(ncclGroupEnd());
	}
}

static hsr_sched SCH;

static void run_step(int with_ops)
{
	static const hsr_backend be = {NULL, be_wait, be_record, be_op, be_inst};
	char msg[512];
	with_ops_now = with_ops;
	if (hsr_run_step(&SCH, &be, msg, sizeof msg)) {
		fprintf(stderr, "refexec: %s\n", msg);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || hsk_flag(argc, argv, "-h") || hsk_flag(argc, argv, "--help")) {
		printf("usage: refexec GRAPH [--warmup 2] [--reps 5] [--op-times] [-o FILE]\n");
		return argc < 2 ? 2 : 0;
	}
	int warmup = hsk_arg(argc, argv, "--warmup") ? atoi(hsk_arg(argc, argv, "--warmup")) : 2;
	int reps = hsk_arg(argc, argv, "--reps") ? atoi(hsk_arg(argc, argv, "--reps")) : 5;
	int op_times = hsk_flag(argc, argv, "--op-times");
	if (reps < 1 || warmup < 0) {
		fprintf(stderr, "refexec: --reps must be >= 1 and --warmup >= 0\n");
		return 2;
	}
	char msg[1024];
	if (hsg_read_file(argv[1], &G, msg, sizeof msg)) {
		fprintf(stderr, "refexec: %s\n", msg);
		return 2;
	}
	int visible = 0;
	CK(cudaGetDeviceCount(&visible));
	/* what this build can run */
	for (int i = 0; i < G.nranks; i++)
		if (G.ranks[i].local >= visible) {
			fprintf(stderr, "refexec: rank %d wants device %d; %d visible\n", G.ranks[i].rank, G.ranks[i].local,
				visible);
			return 2;
		}
	group_local = (int *)calloc((size_t)G.ngroups + 1, sizeof(int));
	maxmem = 1;
	for (int g = 0; g < G.ngroups; g++) {
		group_local[g] = 1;
		for (int m = 0; m < G.groups[g].n; m++)
			group_local[g] &= ri(G.groups[g].ranks[m]) >= 0;
		if (G.groups[g].n > maxmem)
			maxmem = G.groups[g].n;
	}
	int has_p2p = 0;
	for (size_t i = 0; i < G.ntasks; i++) {
		const hsg_task *t = &G.tasks[i];
		int rix = ri(t->rank);
		if (t->kind == HSG_T_COMPUTE)
			for (uint32_t k = 0; k < t->op_count; k++) {
				const hsg_op *o = &G.ops[t->op_first + k];
				if (o->kind == HSG_OP_COMM && group_size(rix, o->group) > 1) {
					fprintf(stderr, "refexec: %s:%d: task %zu runs op %u (%s, a %s collective over a group of "
							"%d): collectives inside compute tasks (tp, cp, ep > 1) are not supported yet\n",
						argv[1], t->line, i, t->op_first + k, o->name, hsg_group_names[o->group],
						group_size(rix, o->group));
					return 2;
				}
			}
		if (t->kind == HSG_T_COLL && !group_local[t->group] && G.groups[t->group].n > 1) {
			fprintf(stderr, "refexec: %s:%d: task %zu: group %d has ranks outside this file (one process per "
					"node: run the whole group on one node)\n", argv[1], t->line, i, t->group);
			return 2;
		}
		if (t->kind == HSG_T_SEND || t->kind == HSG_T_RECV) {
			has_p2p = 1;
			if (ri(t->peer) < 0) {
				fprintf(stderr, "refexec: %s:%d: task %zu: peer rank %d is not in this file\n", argv[1], t->line,
					i, t->peer);
				return 2;
			}
		}
	}
	/* instances */
	if (hsr_sched_init(&SCH, &G, argv[1], msg, sizeof msg)) {
		fprintf(stderr, "refexec: %s\n", msg);
		return 2;
	}
	/* ranks: device, streams, buffers */
	R = (struct rank *)calloc((size_t)G.nranks, sizeof *R);
	for (int i = 0; i < G.nranks; i++) {
		struct rank *r = &R[i];
		r->dev = G.ranks[i].local;
		for (size_t t = 0; t < G.ntasks; t++) {
			const hsg_task *k = &G.tasks[t];
			if (ri(k->rank) != i)
				continue;
			if (k->kind == HSG_T_COMPUTE)
				for (uint32_t j = 0; j < k->op_count; j++) {
					size_t b = op_bytes(&G.ops[k->op_first + j], k->scale, G.hidden > 0 ? G.hidden : 1024);
					r->poolb = b > r->poolb ? b : r->poolb;
				}
			else if (k->kind == HSG_T_COLL)
				r->comb = (size_t)(2 * k->bytes) + 1024 > r->comb ? (size_t)(2 * k->bytes) + 1024 : r->comb;
			else
				r->p2pb = (size_t)k->bytes + 1024 > r->p2pb ? (size_t)k->bytes + 1024 : r->p2pb;
		}
		CK(cudaSetDevice(r->dev));
		for (int s = 0; s < HSG_S_COUNT; s++)
			CK(cudaStreamCreateWithFlags(&r->st[s], cudaStreamNonBlocking));
		hsk_gemm_init(&r->gc);
		size_t total = al(r->poolb + 256) + al(r->comb + 256) + al(r->p2pb + 256);
		char *base;
		CK(cudaMalloc((void **)&base, total));
		r->pool = base;
		r->combuf = base + al(r->poolb + 256);
		r->p2pbuf = r->combuf + al(r->comb + 256);
		hsk_fill(base, total / 2, HSK_BF16, 1.f, 100 + i, r->st[0]);
		int h = G.hidden > 0 ? G.hidden : 1024;
		CK(cudaMalloc((void **)&r->gamma, sizeof(float) * (size_t)h));
		hsk_fill_f32(r->gamma, (size_t)h, 0.5f, 1.5f, 7, r->st[0]);
	}
	/* communicators */
	group_comm = (ncclComm_t *)calloc((size_t)G.ngroups * maxmem + 1, sizeof(ncclComm_t));
	for (int g = 0; g < G.ngroups; g++) {
		const hsg_group *q = &G.groups[g];
		if (!group_local[g] || q->n < 2)
			continue;
		int *devs = (int *)malloc(sizeof(int) * (size_t)q->n);
		for (int m = 0; m < q->n; m++)
			devs[m] = R[ri(q->ranks[m])].dev;
		CN(ncclCommInitAll(group_comm + (size_t)g * maxmem, q->n, devs));
		free(devs);
	}
	if (has_p2p) {
		int *devs = (int *)malloc(sizeof(int) * (size_t)G.nranks);
		ncclComm_t *cs = (ncclComm_t *)malloc(sizeof(ncclComm_t) * (size_t)G.nranks);
		for (int i = 0; i < G.nranks; i++)
			devs[i] = R[i].dev;
		CN(ncclCommInitAll(cs, G.nranks, devs));
		for (int i = 0; i < G.nranks; i++)
			R[i].node_comm = cs[i];
		free(devs);
		free(cs);
	}
	/* events */
	ev_start = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * (G.ntasks + 1));
	ev_end = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * (G.ntasks + 1));
	for (size_t i = 0; i < G.ntasks; i++) {
		CK(cudaSetDevice(R[ri(G.tasks[i].rank)].dev));
		CK(cudaEventCreate(&ev_start[i]));
		CK(cudaEventCreate(&ev_end[i]));
	}
	op_ev_first = (size_t *)malloc(sizeof(size_t) * (G.ntasks + 1));
	size_t nop_ev = 0;
	for (size_t i = 0; i < G.ntasks; i++) {
		op_ev_first[i] = SIZE_MAX;
		if (op_times && G.tasks[i].kind == HSG_T_COMPUTE && ri(G.tasks[i].rank) == 0) {
			op_ev_first[i] = nop_ev;
			nop_ev += G.tasks[i].op_count;
		}
	}
	if (nop_ev) {
		CK(cudaSetDevice(R[0].dev));
		op_ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * 2 * nop_ev);
		for (size_t i = 0; i < 2 * nop_ev; i++)
			CK(cudaEventCreate(&op_ev[i]));
	}
	cudaEvent_t *s0 = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * (size_t)G.nranks);
	cudaEvent_t *s1 = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * (size_t)G.nranks);
	for (int i = 0; i < G.nranks; i++) {
		CK(cudaSetDevice(R[i].dev));
		CK(cudaEventCreate(&s0[i]));
		CK(cudaEventCreate(&s1[i]));
		CK(cudaDeviceSynchronize());
	}

	hsk_out o;
	hsk_out_open(&o, hsk_arg(argc, argv, "-o"));
	char extra[2048];
	snprintf(extra, sizeof extra,
		 "\"graph\": \"%s\", \"scenario\": \"%s\", \"graph_name\": \"%s\", \"ranks\": %d, \"tasks\": %zu, "
		 "\"attention_method\": \"batched_gemm_softmax\"",
		 argv[1], G.scenario ? G.scenario : "", G.name ? G.name : "", G.nranks, G.ntasks);
	for (char *c = extra; *c; c++)
		if (*c == '\\')
			*c = '/';
	CK(cudaSetDevice(R[0].dev));
	hsk_info(&o, "refexec", R[0].dev, argc, argv, extra);

	double *tt = (double *)malloc(sizeof(double) * G.ntasks * (size_t)reps + 1);
	double *st = (double *)malloc(sizeof(double) * (size_t)reps);
	double *tmp = (double *)malloc(sizeof(double) * (size_t)reps + 8);
	for (int rep = -warmup; rep < reps; rep++) {
		for (int i = 0; i < G.nranks; i++) {
			CK(cudaSetDevice(R[i].dev));
			CK(cudaEventRecord(s0[i], R[i].st[HSG_S_COMPUTE]));
			for (int s = 1; s < HSG_S_COUNT; s++)
				CK(cudaStreamWaitEvent(R[i].st[s], s0[i], 0));
		}
		run_step(0);
		for (int i = 0; i < G.nranks; i++) {
			CK(cudaSetDevice(R[i].dev));
			cudaEvent_t join[HSG_S_COUNT];
			for (int s = 1; s < HSG_S_COUNT; s++) {
				CK(cudaEventCreateWithFlags(&join[s], cudaEventDisableTiming));
				CK(cudaEventRecord(join[s], R[i].st[s]));
				CK(cudaStreamWaitEvent(R[i].st[HSG_S_COMPUTE], join[s], 0));
			}
			CK(cudaEventRecord(s1[i], R[i].st[HSG_S_COMPUTE]));
			for (int s = 1; s < HSG_S_COUNT; s++)
				CK(cudaEventDestroy(join[s]));
		}
		double worst = 0;
		for (int i = 0; i < G.nranks; i++) {
			CK(cudaSetDevice(R[i].dev));
			CK(cudaEventSynchronize(s1[i]));
			float ms;
			CK(cudaEventElapsedTime(&ms, s0[i], s1[i]));
			worst = ms > worst ? ms : worst;
		}
		CK(cudaGetLastError());
		if (rep < 0)
			continue;
		st[rep] = worst * 1e-3;
		for (size_t t = 0; t < G.ntasks; t++) {
			float ms;
			CK(cudaEventElapsedTime(&ms, ev_start[t], ev_end[t]));
			tt[t * reps + rep] = ms * 1e-3;
		}
	}
	for (size_t t = 0; t < G.ntasks; t++) {
		const hsg_task *k = &G.tasks[t];
		memcpy(tmp, tt + t * reps, sizeof(double) * (size_t)reps);
		double med = hsk_median(tmp, reps);
		hsk_rec(&o, "refexec_task",
			", \"task\": %zu, \"rank\": %d, \"task_kind\": \"%s\", \"stream\": \"%s\", \"what\": \"%s\", \"mb\": %d, "
			"\"chunk\": %d, \"t_med\": %.9g, \"t_min\": %.9g, \"t_max\": %.9g, \"pred_s\": %.9g, \"reps\": %d",
			t, k->rank, hsg_task_kind_names[k->kind], hsg_stream_names[k->stream], hsg_what_names[k->what], k->mb,
			k->chunk, med, tmp[0], tmp[reps - 1], k->pred_s, reps);
	}
	if (nop_ev) {
		/* instrumented steps: events around every op of the first rank's compute tasks */
		int oreps = reps < 3 ? reps : 3;
		double *ot = (double *)malloc(sizeof(double) * nop_ev * (size_t)oreps);
		for (int rep = 0; rep < oreps; rep++) {
			run_step(1);
			for (int i = 0; i < G.nranks; i++) {
				CK(cudaSetDevice(R[i].dev));
				CK(cudaDeviceSynchronize());
			}
			for (size_t e = 0; e < nop_ev; e++) {
				float ms;
				CK(cudaEventElapsedTime(&ms, op_ev[2 * e], op_ev[2 * e + 1]));
				ot[e * oreps + rep] = ms * 1e-3;
			}
		}
		for (size_t t = 0; t < G.ntasks; t++) {
			if (op_ev_first[t] == SIZE_MAX)
				continue;
			const hsg_task *k = &G.tasks[t];
			for (uint32_t j = 0; j < k->op_count; j++) {
				size_t e = op_ev_first[t] + j;
				const hsg_op *op = &G.ops[k->op_first + j];
				memcpy(tmp, ot + e * oreps, sizeof(double) * (size_t)oreps);
				double med = hsk_median(tmp, oreps);
				hsk_rec(&o, "refexec_op",
					", \"task\": %zu, \"op\": %u, \"name\": \"%s\", \"op_kind\": \"%s\", \"dtype\": \"%s\", "
					"\"scale\": %.6g, \"t_med\": %.9g, \"t_min\": %.9g, \"reps\": %d",
					t, k->op_first + j, op->name, hsg_op_kind_names[op->kind], hsg_dtype_names[op->dtype], k->scale,
					med, tmp[0], oreps);
			}
		}
		free(ot);
	}
	memcpy(tmp, st, sizeof(double) * (size_t)reps);
	double med = hsk_median(tmp, reps);
	hsk_rec(&o, "refexec_step",
		", \"t_med\": %.9g, \"t_min\": %.9g, \"t_max\": %.9g, \"reps\": %d, \"warmup\": %d, \"pred_s\": %.9g, "
		"\"ranks\": %d, \"tasks\": %zu",
		med, tmp[0], tmp[reps - 1], reps, warmup, G.step_pred_s, G.nranks, G.ntasks);
	hsk_out_close(&o);
	fprintf(stderr, "refexec: step %.6f s (median of %d), hetsim predicted %.6f s\n", med, reps, G.step_pred_s);
	free(tt);
	free(st);
	free(tmp);
	return 0;
}
