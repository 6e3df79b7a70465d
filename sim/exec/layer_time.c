#include "sim/exec/layer_time.h"

#include "sim/coll/coll_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"

/* Kernel-time memo: open addressing on a hash of the fields that set a kernel's time. The slots hold indices
 * into a dense array of entries, so that the table zeroed when the memo is first used is 1 KB, not the 47 KB of
 * entries it held before (zeroing those was 1.3% of a sweep point's instructions, bench_sweep 2026-12). */
struct memo_ent {
	const void *prof, *dev;
	hs_op key;
	double t;
	uint64_t h;
};

struct hs_op_memo {
	struct memo_ent *e; /* [n] in the order timed */
	size_t n, cap;
	uint32_t *slot;     /* [nslot]: index + 1 into e, 0 empty; under half full */
	size_t nslot;
};

hs_op_memo *hs_op_memo_create(void)
{
	/* the table is made on the first kernel timed: a sweep point whose op ranges all come from the thread's
	 * range cache (range_cache.h) times none (110 of the 244 simulated points of bench_sweep's space) */
	return hs_xcalloc(1, sizeof(hs_op_memo));
}

void hs_op_memo_free(hs_op_memo *m)
{
	if (!m)
		return;
	free(m->e);
	free(m->slot);
	free(m);
}

static int same_kernel(const hs_op *a, const hs_op *b)
{
	return a->kind == b->kind && a->dtype == b->dtype && a->family == b->family && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->count == b->count && a->b == b->b && a->h == b->h && a->s == b->s && a->d == b->d &&
	       a->s_kv == b->s_kv && a->causal == b->causal && a->bwd == b->bwd && a->bytes == b->bytes &&
	       a->coll == b->coll && a->group == b->group;
}

static uint64_t kernel_hash(const void *prof, const void *dev, const hs_op *o)
{
	double f[] = {o->m, o->n, o->k, o->count, o->b, o->h, o->s, o->d, o->s_kv, o->bytes};
	uint64_t h = (uint64_t)(uintptr_t)prof * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)dev;
	h ^= (uint64_t)o->kind << 40 ^ (uint64_t)o->dtype << 48 ^ (uint64_t)o->causal << 56 ^ (uint64_t)o->bwd << 60 ^
	     (uint64_t)o->family << 36;
	for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
		uint64_t x;
		memcpy(&x, &f[i], sizeof x);
		h = (h ^ x) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

static void memo_rehash(hs_op_memo *m, size_t nslot)
{
	free(m->slot);
	m->nslot = nslot;
	m->slot = hs_xcalloc(nslot, sizeof *m->slot);
	for (size_t i = 0; i < m->n; i++) {
		size_t j = m->e[i].h & (nslot - 1);
		while (m->slot[j])
			j = (j + 1) & (nslot - 1);
		m->slot[j] = (uint32_t)i + 1;
	}
}

static double op_time_uncached(const hs_op_env *e, const hs_op *o, int *is_comm);

double hs_op_time(const hs_op_env *e, const hs_op *o, int *is_comm)
{
	/* A collective inside a layer is memoised by its group's summary (the same group object for every layer
	 * of a rep, so a layer's TP all-reduces are timed once per size, not once per layer: the NCCL tuner's
	 * choice was an eighth of a sweep point) and the device slot holds the cluster; kernels by profile and
	 * device. Groups of one rank, and groups not summarised, are timed per call, as are traced fixed
	 * durations (HS_OP_TIMED: nothing to look up). */
	int comm = o->kind == HS_OP_COMM;
	if (!e->memo || o->kind == HS_OP_TIMED || (comm && (e->grp_n[o->group] <= 1 || !e->cgrp[o->group])))
		return op_time_uncached(e, o, is_comm);
	*is_comm = comm;
	const void *kp = comm ? (const void *)e->cgrp[o->group] : (const void *)e->prof;
	const void *kd = comm ? (const void *)e->cluster : (const void *)e->dev;
	hs_op_memo *m = e->memo;
	if (!comm && e->kmemo) { /* kept across steps: the device by its key, which outlives the step's */
		m = e->kmemo;
		kd = e->kkey;
	}
	if (2 * (m->n + 1) > m->nslot)
		memo_rehash(m, m->nslot ? 2 * m->nslot : 256);
	uint64_t h = kernel_hash(kp, kd, o);
	size_t i = h & (m->nslot - 1);
	for (; m->slot[i]; i = (i + 1) & (m->nslot - 1)) {
		const struct memo_ent *en = &m->e[m->slot[i] - 1];
		if (en->h == h && en->prof == kp && en->dev == kd && same_kernel(&en->key, o))
			return en->t;
	}
	int c;
	double t = op_time_uncached(e, o, &c);
	hs_xgrow(&m->e, &m->cap, m->n + 1, sizeof *m->e);
	m->e[m->n] = (struct memo_ent){.prof = kp, .dev = kd, .key = *o, .t = t, .h = h};
	m->slot[i] = (uint32_t)++m->n;
	return t;
}

void hs_op_env_host(hs_op_env *e, const hs_recipe *r)
{
	if (!r)
		r = hs_recipe_default();
	e->host_gemm_s = r->host_gemm_s;
	e->host_kernel_s = r->host_kernel_s;
	e->mem_factors = r->aten_kernels;
}

static double kernel_time(const hs_op_env *e, const hs_op *o, int *is_comm);

/* A kernel's time in a stream: what it takes once running, plus the gap between it and the one before. */
static double op_time_uncached(const hs_op_env *e, const hs_op *o, int *is_comm)
{
	double t = kernel_time(e, o, is_comm);
	/* a measured duration already holds whatever gap the trace saw */
	return *is_comm || t <= 0 || o->kind == HS_OP_TIMED ? t : t + hs_profile_kernel_gap(e->prof);
}

static double kernel_time(const hs_op_env *e, const hs_op *o, int *is_comm)
{
	*is_comm = 0;
	switch (o->kind) {
	case HS_OP_GEMM:
		/* a batch of `count` GEMMs is one kernel: the launch once (calib/profile.h, the rule compare-refexec
		 * shares) */
		return hs_profile_gemm_batched_time(e->prof, e->dev, o->m, o->n, o->k, o->count, o->dtype);
	case HS_OP_ATTN: {
		/* the profile times s queries against s keys; a block against s_kv keys (context parallelism) does
		 * s_kv / s times that work */
		double t = hs_profile_attn_time(e->prof, e->dev, o->b, o->h, o->s, o->d, o->causal, o->bwd);
		if (o->s_kv > 0 && o->s_kv != o->s && o->s > 0) /* fewer keys: a window, DSA top-k */
			t *= o->s_kv / o->s;
		return t * (o->count > 1 ? o->count : 1);
	}
	case HS_OP_MEM:
		if (o->family != HS_MF_COPY && e->mem_factors)
			return hs_profile_mem_op_time(e->prof, e->dev, hs_mem_family_name(o->family), o->bytes);
		return hs_profile_mem_time(e->prof, e->dev, o->bytes);
	case HS_OP_OPTIMIZER: /* a multi-tensor streaming update: copy speed */
		return hs_profile_mem_time(e->prof, e->dev, o->bytes);
	case HS_OP_TIMED:
		return o->dur_s;
	case HS_OP_COMM:
		*is_comm = 1;
		if (e->grp_n[o->group] <= 1)
			return 0;
		if (e->coll_time) {
			double t = e->coll_time(e->coll_ctx, (int)o->coll, e->grp[o->group], e->grp_n[o->group], o->bytes);
			if (t >= 0)
				return t;
		}
		if (e->cgrp[o->group])
			return hs_coll_grp_time(e->cgrp[o->group], o->coll, (enum hs_coll_algo)e->coll_algo, o->bytes,
						NULL);
		return hs_coll_time(e->cluster, o->coll, (enum hs_coll_algo)e->coll_algo, e->grp[o->group],
				    e->grp_n[o->group], o->bytes);
	}
	return 0;
}

const char *hs_time_class_name(enum hs_time_class c)
{
	static const char *const n[HS_TC_COUNT] = {"gemm", "attention", "memory", "optimizer", "host"};
	return (unsigned)c < HS_TC_COUNT ? n[c] : "?";
}

static enum hs_time_class op_class(const hs_op *o)
{
	switch (o->kind) {
	case HS_OP_GEMM: return HS_TC_GEMM;
	case HS_OP_ATTN: return HS_TC_ATTN;
	case HS_OP_OPTIMIZER: return HS_TC_OPT;
	default: return HS_TC_MEM;
	}
}

/* The two queues of hs_ops_time are carried as one number, the lag: the instant the host has issued the last
 * op minus the instant the device is free (negative: the host runs ahead). Issuing op o adds its issue cost;
 * where the lag is then positive the device waits for the host (that wait is host time, and the lag becomes
 * 0); running it for t takes t off. Only the difference of the two queues matters, and as one small number it
 * is exact where the two instants were large ones, and it makes a layer's run a function of the lag it starts
 * with alone (ops_time extrapolates repeated layers by it). */
double hs_op_issue_s(const hs_op_env *e, const hs_op *o)
{
	return o->kind == HS_OP_GEMM ? e->host_gemm_s : e->host_kernel_s;
}

static void add_kernel(hs_ops_cost *c, const hs_op *o, double t)
{
	c->comp += t;
	c->comp2 += t * t;
	c->cls[op_class(o)] += t;
	c->flops += o->flops;
}

/* Issue an op of issue cost `issue` at lag *lag: the device's wait for the host, if any, added to c as host
 * time. 1 where it waited. */
static inline int issue_op(double *lag, double issue, hs_ops_cost *c)
{
	double l = *lag + issue;
	if (l > 0) {
		c->cls[HS_TC_HOST] += l;
		c->comp += l;
		*lag = 0;
		return 1;
	}
	*lag = l;
	return 0;
}

/* Op o of time t run at lag *lag, into c: a kernel, or a collective (is_comm), beside the next kernel `next` of
 * time t2 where it overlaps one (NULL: none; that kernel is issued with it). 1 where the device waited for the
 * host; *busy: the time the device took, after the issue. */
static inline int run_op(const hs_op_env *e, const hs_op *o, double t, int is_comm, const hs_op *next, double t2,
			 double *lag, hs_ops_cost *c, double *busy)
{
	double issue = hs_op_issue_s(e, o);
	*busy = t;
	if (is_comm && next) { /* the transfer hides behind the next kernel */
		add_kernel(c, next, t2);
		c->comm[o->group] += t > t2 ? t - t2 : 0;
		*busy = t > t2 ? t : t2;
	} else if (is_comm) {
		c->comm[o->group] += t;
	}
	/* a host that is behind holds a collective back too */
	int waited = issue_op(lag, issue, c);
	*lag -= *busy;
	if (!is_comm)
		add_kernel(c, o, t);
	return waited;
}

/* The ops of a list already timed, so that a (stage, chunk) list, which is L copies of its layers' ops, looks
 * each op up once rather than L times (the memo's hash and compare were 7% of a sweep point, bench_sweep
 * 2026-12). hs_op_time is a function of e, which the list shares, and of the op: an op equal byte for byte to
 * an earlier one of the list takes that one's time and collective flag. The earlier one is looked for at the
 * distance of the last match (a layer's length, in a list of layers), a layer's worth of ops at once, else at
 * the nearest op of the same name (a name is a static string: equal ops have equal name pointers), within the
 * last REUSE_WINDOW ops, whose times a ring keeps. A collective that a packet model may time (e->coll_time,
 * which need not be a function of the op alone) is always timed. */
#define REUSE_WINDOW 64 /* a power of two, above the longest layer's list (a dense layer's backward: 26) */

struct reuse {
	const hs_op *ops;
	size_t n;
	size_t d;        /* distance of the last match; 0: none yet */
	size_t run_end;  /* ops before it (from the last match on) equal the ops d before them */
	size_t op_by_op; /* until then a failed block compare has the ops compared one by one */
	int fresh_comm;  /* collectives are timed every time (e->coll_time) */
	uint32_t *same;  /* optional: [n] the op each took its time from (itself where timed) */
	double t[REUSE_WINDOW];
	int comm[REUSE_WINDOW];
};

static int same_ops(const hs_op *a, const hs_op *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

/* The earlier op of the list equal to op i, or i. */
static size_t reuse_find(struct reuse *r, size_t i)
{
	const hs_op *o = &r->ops[i];
	if (r->fresh_comm && o->kind == HS_OP_COMM)
		return i;
	if (i < r->run_end)
		return i - r->d;
	if (r->d && r->d <= i) {
		/* the next layer's worth at once (one compare of d ops costs about what two of one op do) */
		size_t len = i >= r->op_by_op ? (r->d < r->n - i ? r->d : r->n - i) : 1;
		if (same_ops(o, o - r->d, len)) {
			r->run_end = i + len;
			return i - r->d;
		}
		if (len > 1)
			r->op_by_op = i + r->d;
	}
	size_t far = i < REUSE_WINDOW ? i : REUSE_WINDOW - 1;
	for (size_t d = 1; d <= far; d++)
		if ((o - d)->name == o->name && same_ops(o, o - d, 1)) {
			r->d = d;
			r->run_end = i + 1;
			return i - d;
		}
	return i;
}

/* hs_op_time of op i of the list. Small, so that the common case (op i inside a run of repeated ops) costs a
 * few instructions inline; the rest is reuse_find's and hs_op_time's. */
static inline double reuse_time(struct reuse *r, const hs_op_env *e, size_t i, int *is_comm)
{
	size_t j = i < r->run_end && !r->fresh_comm ? i - r->d : reuse_find(r, i);
	double t;
	if (j < i) {
		t = r->t[j & (REUSE_WINDOW - 1)];
		*is_comm = r->comm[j & (REUSE_WINDOW - 1)];
	} else {
		t = hs_op_time(e, &r->ops[i], is_comm);
	}
	r->t[i & (REUSE_WINDOW - 1)] = t;
	r->comm[i & (REUSE_WINDOW - 1)] = *is_comm;
	if (r->same)
		r->same[i] = (uint32_t)j;
	return t;
}

/* Does the loop below take op x as the partner of the overlapping collective before it (so that x cannot start
 * a window of its own)? */
static int partner(const hs_op_env *e, const hs_op *ops, size_t x)
{
	const hs_op *o = &ops[x - 1];
	return x > 0 && o->kind == HS_OP_COMM && o->overlap && e->grp_n[o->group] > 1 && ops[x].kind != HS_OP_COMM;
}

/* A window of ops[from, to) run as ops_time's loop runs it, from lag `lag`, the ops' times taken from the
 * reuse ring: what it adds (into t, from zero), and each step of the lag in order (an issue cost added, then a
 * time taken off), so that copies of it that never wait move the lag by the same float operations. */
struct window {
	hs_ops_cost t;
	double step[2 * REUSE_WINDOW][2];
	size_t nstep;
	double time[REUSE_WINDOW]; /* the ops' times and collective flags, in window order */
	int comm[REUSE_WINDOW];
};

static void run_window(const hs_op_env *e, const hs_op *ops, size_t from, size_t to, const struct reuse *r,
		       double lag, struct window *w)
{
	memset(&w->t, 0, sizeof w->t);
	w->nstep = 0;
	for (size_t y = from; y < to; y++) {
		w->time[y - from] = r->t[y & (REUSE_WINDOW - 1)];
		w->comm[y - from] = r->comm[y & (REUSE_WINDOW - 1)];
	}
	for (size_t y = from; y < to; y++) {
		const hs_op *o = &ops[y], *next = NULL;
		double t = w->time[y - from], t2 = 0, busy;
		int is_comm = w->comm[y - from];
		if (o->kind == HS_OP_COMM && (!is_comm || e->grp_n[o->group] <= 1))
			continue;
		if (is_comm && o->overlap && y + 1 < to && ops[y + 1].kind != HS_OP_COMM) {
			next = &ops[++y];
			t2 = w->time[y - from];
		}
		run_op(e, o, t, is_comm, next, t2, &lag, &w->t, &busy);
		w->step[w->nstep][0] = hs_op_issue_s(e, o);
		w->step[w->nstep++][1] = busy;
	}
}

/* ops[0..n-1] timed from lag *lag (NULL or NAN: a fresh list) into c, op by op (run_op), each op's time looked up
 * once per list (struct reuse). A list of L copies of a layer runs each copy from the lag the copy before left:
 * where two consecutive copies start at the same lag, or the earlier ran without the device waiting for the host
 * and the later starts lower (the host further ahead: a lower lag stays lower op by op, so it never waits either,
 * and what a copy adds no longer depends on its lag), every copy after adds what the earlier added, and is taken
 * as that many times its sums, the lag carried on by the same steps (about 1e-15 of adding every op's terms).
 * A list that records its collectives (c->rec), or whose collectives a packet model times, runs op by op. */
static void ops_time(const hs_op_env *e, const hs_op *ops, size_t n, double *lag, hs_ops_cost *c, uint32_t *same)
{
	/* a fresh list: its first op was issued while earlier work ran */
	double q = lag && !isnan(*lag) ? *lag : n ? -hs_op_issue_s(e, &ops[0]) : 0;
	double comp0 = c->comp, comm0 = 0; /* for c->rec: what this call adds before each collective */
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		comm0 += c->comm[k];
	struct reuse r = {.ops = ops, .n = n, .fresh_comm = e->coll_time != NULL, .same = same};
	int layers = !c->rec && !r.fresh_comm;
	double lags[REUSE_WINDOW]; /* the lag before each of the last REUSE_WINDOW ops */
	size_t waited = SIZE_MAX;  /* the last op where the device waited for the host */
	size_t fresh = 0;          /* ops from here on were run one by one (lags[] holds theirs) */
	for (size_t i = 0; i < n; i++) {
		const hs_op *o = &ops[i];
		size_t d = r.d;
		int is_comm;
		double t = reuse_time(&r, e, i, &is_comm);
		lags[i & (REUSE_WINDOW - 1)] = q;
		if (layers && d && d == r.d && i >= fresh + d && r.run_end >= i + d && i + d <= n && !partner(e, ops, i - d) &&
		    (q == lags[(i - d) & (REUSE_WINDOW - 1)] ||
		     ((waited == SIZE_MAX || waited < i - d) && q <= lags[(i - d) & (REUSE_WINDOW - 1)]))) {
			/* op i starts a copy of ops[i - d, i): the copies from here on, as many as repeat */
			size_t m = 1;
			while (i + (m + 1) * d <= n && memcmp(ops + i + m * d, ops + i, d * sizeof *ops) == 0)
				m++;
			if (partner(e, ops, i + m * d))
				m--;
			if (m) {
				struct window w;
				double l0 = lags[(i - d) & (REUSE_WINDOW - 1)];
				run_window(e, ops, i - d, i, &r, l0, &w);
				double k = (double)m;
				c->comp += w.t.comp * k;
				c->comp2 += w.t.comp2 * k;
				c->flops += w.t.flops * k;
				for (int g = 0; g < HS_GROUP_COUNT; g++)
					c->comm[g] += w.t.comm[g] * k;
				for (int g = 0; g < HS_TC_COUNT; g++)
					c->cls[g] += w.t.cls[g] * k;
				size_t end = i + m * d;
				if (q != l0) { /* no waits: the lag moves by the same steps, copy after copy */
					for (size_t x = 0; x < m; x++)
						for (size_t y = 0; y < w.nstep; y++)
							q = (q + w.step[y][0]) - w.step[y][1];
				} else {
					waited = end - 1; /* the copies wait where the first did */
				}
				/* the ring of times as if each op had been run, and the repeats */
				for (size_t y = end - (m * d < REUSE_WINDOW ? m * d : REUSE_WINDOW); y < end; y++) {
					r.t[y & (REUSE_WINDOW - 1)] = w.time[(y - i) % d];
					r.comm[y & (REUSE_WINDOW - 1)] = w.comm[(y - i) % d];
				}
				for (size_t y = i; same && y < end; y++)
					same[y] = (uint32_t)(y - d);
				if (r.run_end < end)
					r.run_end = end;
				fresh = end;
				i = end - 1;
				continue;
			}
		}
		if (o->kind == HS_OP_COMM && (!is_comm || e->grp_n[o->group] <= 1))
			continue; /* a collective over a group of one */
		const hs_op *next = NULL;
		double t2 = 0, busy;
		int op_comm = is_comm;
		if (is_comm) {
			/* a collective: the host issues it and goes on issuing what follows while the device waits */
			if (c->rec) {
				/* it starts once the host has issued it and the device is free, as run_op runs it */
				double held = q + hs_op_issue_s(e, o), comm = -comm0;
				for (int k = 0; k < HS_GROUP_COUNT; k++)
					comm += c->comm[k];
				hs_xgrow(&c->rec->v, &c->rec->cap, c->rec->n + 1, sizeof *c->rec->v);
				c->rec->v[c->rec->n++] =
					(hs_ops_slot){(uint32_t)i, c->comp - comp0 + (held > 0 ? held : 0), comm, t};
			}
			if (o->overlap && i + 1 < n && ops[i + 1].kind != HS_OP_COMM) { /* issued with it */
				t2 = reuse_time(&r, e, ++i, &is_comm);
				lags[i & (REUSE_WINDOW - 1)] = q;
				next = &ops[i];
			}
		}
		if (run_op(e, o, t, op_comm, next, t2, &q, c, &busy))
			waited = i;
	}
	if (lag)
		*lag = q;
}

void hs_ops_time_from(const hs_op_env *e, const hs_op *ops, size_t n, double *lag, hs_ops_cost *c)
{
	ops_time(e, ops, n, lag, c, NULL);
}

void hs_ops_time_same(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c, uint32_t *same)
{
	ops_time(e, ops, n, NULL, c, same);
}

void hs_ops_time(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c)
{
	hs_ops_time_from(e, ops, n, NULL, c);
}

static void sum(const hs_op_env *e, const hs_oplist *l, double *total, double *comm_total)
{
	hs_ops_cost c = {0};
	hs_ops_time(e, l->ops, l->n, &c);
	*total += c.comp;
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		*total += c.comm[k];
		*comm_total += c.comm[k];
	}
}

int hs_layer_time(const hs_workload *s, int layer, hs_layer_times *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	const hs_device_type *dev = hs_cluster_device(s->cluster, 0);
	hs_profile *prof = hs_profile_load(dev->profile, err);
	if (!prof)
		return -1;
	hs_op_env e = {.prof = prof, .dev = dev, .cluster = s->cluster, .coll_algo = s->coll_algo};
	hs_op_env_host(&e, s->train->recipe);
	int *grp[HS_GROUP_COUNT];
	int sizes[HS_GROUP_COUNT] = {s->par->tp, s->par->cp, s->par->dp, s->par->ep, s->par->pp};
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		grp[k] = hs_xmalloc((size_t)sizes[k] * sizeof(int));
		e.grp_n[k] = hs_build_group(s->par, (enum hs_group)k, 0, 0, grp[k]);
		e.grp[k] = grp[k];
	}
	hs_layer_cfg lc;
	hs_build_layer_cfg(s, &lc);
	hs_oplist l = {0};
	hs_ops_layer(s->model, &lc, layer, HS_PH_FWD, &l);
	sum(&e, &l, &out->fwd_s, &out->fwd_comm_s);
	hs_oplist_clear(&l);
	hs_ops_layer(s->model, &lc, layer, HS_PH_RECOMPUTE, &l);
	double rc_comm = 0;
	sum(&e, &l, &out->recompute_s, &rc_comm);
	hs_oplist_clear(&l);
	hs_ops_layer(s->model, &lc, layer, HS_PH_BWD_INPUT, &l);
	hs_ops_layer(s->model, &lc, layer, HS_PH_BWD_WEIGHT, &l);
	sum(&e, &l, &out->bwd_s, &out->bwd_comm_s);
	out->bwd_s += out->recompute_s;
	out->bwd_comm_s += rc_comm;
	hs_oplist_free(&l);
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		free(grp[k]);
	hs_profile_free(prof);
	return 0;
}
