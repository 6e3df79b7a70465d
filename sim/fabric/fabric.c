/* The packet-level fabric; see fabric.h for the model. Layout of this file: rings (the queues and delay
 * lines everything uses), the operation pool, credits and admission, then the components in the order a
 * request meets them: source egress, forward paths, receive buffer, HBM partitions, atomic engine, response
 * engine, reverse paths, completion. */
#include "sim/fabric/fabric.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/engine/rng.h"

/* ---- rings: FIFO of 32-byte items, power-of-two capacity, grown by doubling (never per event) ---- */

struct item {
	hs_time t;         /* enqueue time, or due time in a delay line */
	uint64_t addr;     /* HBM jobs: byte address */
	uint32_t op;       /* operation index */
	uint32_t len;      /* payload bytes (packet or HBM chunk) */
	uint32_t free_b;   /* HBM jobs: receive-buffer bytes released when served */
	uint32_t pad;
};

struct ring {
	struct item *v;
	uint32_t cap, head, n;
};

static void ring_push(struct ring *r, struct item it)
{
	if (r->n == r->cap) {
		uint32_t nc = r->cap ? r->cap * 2 : 16;
		struct item *nv = hs_xmalloc(sizeof *nv * nc);
		for (uint32_t i = 0; i < r->n; i++)
			nv[i] = r->v[(r->head + i) & (r->cap - 1)];
		free(r->v);
		r->v = nv;
		r->cap = nc;
		r->head = 0;
	}
	r->v[(r->head + r->n) & (r->cap - 1)] = it;
	r->n++;
}

static inline struct item *ring_front(struct ring *r) { return &r->v[r->head]; }

static inline struct item ring_pop(struct ring *r)
{
	struct item it = r->v[r->head];
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
	return it;
}

/* A server: a FIFO ring with one pending completion event while busy. */
struct server {
	struct ring q;
	int busy;
};

/* A delay line: items leave in order at their due times; one pending event for the oldest. */
struct dline {
	struct ring q;
	int armed;
};

struct credit_ret {
	hs_time t;
	int set; /* credit set the credits go back to */
	int64_t give[HS_CREDIT_POOLS];
};

/* ---- operations ---- */

struct op {
	uint64_t addr, tag;
	hs_time t_issue, t_admit;
	hs_credit_op c;
	int64_t held[HS_CREDIT_POOLS]; /* before admission: the demand */
	uint32_t npkt_req, sent_pkts, sent_bytes, disp_pkts;
	uint8_t disp_done; /* every piece of the request has been dispatched to its stage */
	uint32_t hbm_left, resp_pkts_left;
	uint32_t next; /* free list */
	uint16_t src, cls;
	uint8_t kind, record;
};

struct source {
	struct ring egress; /* admitted operations, head being sent */
	int busy;
	uint32_t rr;      /* spray position */
	uint32_t kind_rr; /* next kind to try when the egress frees (admission at transmission) */
};

struct path {
	struct server s; /* packets waiting or serialising */
	struct dline pipe;
	int blocked; /* waiting for receive-buffer space */
};

struct hs_fabric {
	hs_engine *eng;
	hs_fabric_params p;
	const hs_credit_scheme *scheme;
	hs_credit_cfg ccfg;
	hs_rng *rng;

	struct op *ops;
	size_t nops, opcap;
	uint32_t free_op; /* index+1, 0 when none */
	uint64_t inflight;

	/* Credit sets: one shared set, or one per sender (credits.split: per_sender). set_cap is one set's
	 * capacity; cap/avail/min_avail are totals over the sets (what the report shows). */
	int npools, nsets;
	const char *pool_names[HS_CREDIT_POOLS];
	int64_t cap[HS_CREDIT_POOLS], avail[HS_CREDIT_POOLS], min_avail[HS_CREDIT_POOLS];
	int64_t set_cap[HS_CREDIT_POOLS];
	int64_t *set_avail; /* [nsets * HS_CREDIT_POOLS] */
	struct ring *waitq; /* [sources * HS_FOP_KINDS] */
	uint64_t waiting;
	uint32_t wait_rr;
	struct credit_ret *cret; /* ring of credit returns */
	uint32_t cret_cap, cret_head, cret_n;
	int cret_armed;

	struct source *src;
	struct path *fwd, *rev;
	uint32_t resp_rr;
	uint64_t rx_used;
	int *blocked; /* forward paths waiting for buffer space, FIFO */
	int nblocked;

	struct server *hbm;
	struct dline hbm_lat;
	struct server atomic, resp;
	struct ring ingress; /* arrived packets waiting for the dispatcher, in arrival order */
	double atomic_wait;
	uint64_t atomic_served;

	hs_fabric_class_stats *cls;
	hs_fabric_queues qs;
	hs_fabric_done_fn done_fn;
	void *done_ctx;
	hs_fabric_done_fn target_fn; /* an operation's last target stage (HBM or atomic) completed */
	void *target_ctx;
};

void hs_fabric_params_default(hs_fabric_params *p)
{
	memset(p, 0, sizeof *p);
	p->sources = 16;
	p->paths = 4;
	p->src_rate = hs_rate_from_Bps(100e9);
	p->path_rate = hs_rate_from_Bps(50e9);
	p->path_latency = 300000; /* 300 ns */
	p->mtu = 256;
	p->header = 16;
	p->partitions = 8;
	p->interleave = 256;
	p->hbm_rate = hs_rate_from_Bps(100e9);
	p->hbm_latency = 100000; /* 100 ns */
	p->atomic_time = 20000;  /* 20 ns */
	p->resp_rate = hs_rate_from_Bps(150e9);
	p->hbm_depth = 16;
	p->atomic_depth = 64;
	p->rxbuf = 256 * 1024;
	p->credit_latency = 300000;
	p->atomic_operand = 8;
	p->seed = 1;
	p->nclasses = 1;
}

static uint32_t npkts(const hs_fabric_params *p, uint32_t payload)
{
	return payload == 0 ? 1 : (payload + p->mtu - 1) / p->mtu;
}

hs_credit_op hs_fabric_describe(const hs_fabric_params *p, int kind, uint32_t size)
{
	hs_credit_op c = {.kind = kind, .size = size};
	switch (kind) {
	case HS_FOP_READ:
		c.req_bytes = p->header;
		c.hbm_bytes = size;
		c.resp_bytes = size + npkts(p, size) * p->header;
		break;
	case HS_FOP_WRITE:
	case HS_FOP_NOTIFY:
		c.req_bytes = size + npkts(p, size) * p->header;
		c.hbm_bytes = size;
		c.resp_bytes = p->header;
		break;
	default: /* atomic */
		c.req_bytes = size + p->header;
		c.atomics = 1;
		c.resp_bytes = size + p->header;
		break;
	}
	return c;
}

static void bug(const char *what)
{
	fprintf(stderr, "hetsim: internal error: fabric: %s\n", what);
	abort();
}

/* ---- credits and admission ---- */

static void egress_try(hs_fabric *f, int s);

static inline int set_of(const hs_fabric *f, int src) { return f->nsets > 1 ? src : 0; }

static int fits(const hs_fabric *f, int src, const int64_t *need)
{
	const int64_t *av = &f->set_avail[set_of(f, src) * HS_CREDIT_POOLS];
	for (int i = 0; i < f->npools; i++)
		if (need[i] > av[i])
			return 0;
	return 1;
}

static void admit(hs_fabric *f, uint32_t oi)
{
	struct op *o = &f->ops[oi];
	int64_t *av = &f->set_avail[set_of(f, o->src) * HS_CREDIT_POOLS];
	for (int i = 0; i < f->npools; i++) {
		av[i] -= o->held[i];
		f->avail[i] -= o->held[i];
		if (av[i] < 0 || f->avail[i] < 0)
			bug("credit pool went negative");
		if (f->avail[i] < f->min_avail[i])
			f->min_avail[i] = f->avail[i];
	}
	hs_time now = hs_engine_now(f->eng);
	o->t_admit = now;
	hs_occ_in(&f->qs.egress[o->src], now);
	ring_push(&f->src[o->src].egress, (struct item){.t = now, .op = oi});
	egress_try(f, o->src);
}

/* May source `src` take credits now? At issue: always. At transmission: only when its egress link has
 * nothing admitted left to send (the op being serialised has sent its last packet), so the next op starts
 * back to back and no op holds credits while it waits for its own sender. */
static inline int src_ready(const hs_fabric *f, int src)
{
	return f->p.admit_at_issue || f->src[src].egress.n == 0;
}

/* Take the head of waiting queue `r` out of the queue and admit it. */
static void admit_head(hs_fabric *f, struct ring *r)
{
	struct item it = ring_pop(r);
	f->waiting--;
	hs_occ_out(&f->qs.admit, hs_engine_now(f->eng), hs_engine_now(f->eng) - it.t);
	admit(f, it.op);
}

/* Admit the head of one of `src`'s kind queues (round robin over kinds from kind_rr) that fits. */
static int admit_from_source(hs_fabric *f, int src)
{
	struct source *sr = &f->src[src];
	for (uint32_t k = 0; k < HS_FOP_KINDS; k++) {
		uint32_t kind = (sr->kind_rr + k) % HS_FOP_KINDS;
		struct ring *r = &f->waitq[(uint32_t)src * HS_FOP_KINDS + kind];
		if (!r->n || !fits(f, src, f->ops[ring_front(r)->op].held))
			continue;
		sr->kind_rr = kind + 1;
		admit_head(f, r);
		return 1;
	}
	return 0;
}

/* Admit waiting operations round robin across (source, kind) queues, one per queue per round. */
static void serve_waiting(hs_fabric *f)
{
	uint32_t nq = (uint32_t)f->p.sources * HS_FOP_KINDS;
	int progress = 1;
	while (f->waiting && progress) {
		progress = 0;
		for (uint32_t k = 0; k < nq && f->waiting; k++) {
			uint32_t q = (f->wait_rr + k) % nq;
			struct ring *r = &f->waitq[q];
			if (!r->n || !src_ready(f, (int)(q / HS_FOP_KINDS)) ||
			    !fits(f, (int)(q / HS_FOP_KINDS), f->ops[ring_front(r)->op].held))
				continue;
			admit_head(f, r);
			progress = 1;
		}
		f->wait_rr = (f->wait_rr + 1) % nq;
	}
}

static void h_credit(hs_engine *e, void *ctx, uint64_t arg)
{
	hs_fabric *f = ctx;
	struct credit_ret *c = &f->cret[f->cret_head];
	int64_t *av = &f->set_avail[c->set * HS_CREDIT_POOLS];
	for (int i = 0; i < f->npools; i++) {
		av[i] += c->give[i];
		f->avail[i] += c->give[i];
		if (av[i] > f->set_cap[i] || f->avail[i] > f->cap[i])
			bug("credit pool above its capacity");
	}
	f->cret_head = (f->cret_head + 1) & (f->cret_cap - 1);
	f->cret_n--;
	if (f->cret_n)
		hs_engine_at(e, f->cret[f->cret_head].t, h_credit, f, 0);
	else
		f->cret_armed = 0;
	serve_waiting(f);
}

/* Stage `stage` of op completed: return what the scheme gives back (all that is held after the last). */
static void credit_stage(hs_fabric *f, struct op *o, int stage, int last)
{
	if (!f->npools)
		return;
	int64_t give[HS_CREDIT_POOLS] = {0};
	f->scheme->release(&f->ccfg, &o->c, stage, o->held, give);
	int any = 0;
	for (int i = 0; i < f->npools; i++) {
		if (last)
			give[i] = o->held[i];
		if (give[i] < 0 || give[i] > o->held[i])
			bug("scheme returned credits the operation does not hold");
		o->held[i] -= give[i];
		any |= give[i] != 0;
	}
	if (!any)
		return;
	if (f->cret_n == f->cret_cap) {
		uint32_t nc = f->cret_cap ? f->cret_cap * 2 : 64;
		struct credit_ret *nv = hs_xmalloc(sizeof *nv * nc);
		for (uint32_t i = 0; i < f->cret_n; i++)
			nv[i] = f->cret[(f->cret_head + i) & (f->cret_cap - 1)];
		free(f->cret);
		f->cret = nv;
		f->cret_cap = nc;
		f->cret_head = 0;
	}
	struct credit_ret *c = &f->cret[(f->cret_head + f->cret_n) & (f->cret_cap - 1)];
	c->t = hs_engine_now(f->eng) + f->p.credit_latency;
	c->set = set_of(f, o->src);
	memcpy(c->give, give, sizeof give);
	f->cret_n++;
	if (!f->cret_armed) {
		f->cret_armed = 1;
		hs_engine_at(f->eng, c->t, h_credit, f, 0);
	}
}

/* ---- issue ---- */

void hs_fabric_issue(hs_fabric *f, int src, int kind, uint32_t size, uint64_t addr, int cls, int record,
		     uint64_t tag)
{
	assert(src >= 0 && src < f->p.sources && kind >= 0 && kind < HS_FOP_KINDS);
	assert(cls >= 0 && cls < f->p.nclasses);
	uint32_t oi;
	if (f->free_op) {
		oi = f->free_op - 1;
		f->free_op = f->ops[oi].next;
	} else {
		hs_xgrow(&f->ops, &f->opcap, f->nops + 1, sizeof *f->ops);
		oi = (uint32_t)f->nops++;
	}
	struct op *o = &f->ops[oi];
	memset(o, 0, sizeof *o);
	hs_time now = hs_engine_now(f->eng);
	o->addr = addr;
	o->tag = tag;
	o->t_issue = now;
	o->src = (uint16_t)src;
	o->cls = (uint16_t)cls;
	o->kind = (uint8_t)kind;
	o->record = (uint8_t)record;
	o->c = hs_fabric_describe(&f->p, kind, size);
	o->npkt_req = (kind == HS_FOP_WRITE || kind == HS_FOP_NOTIFY) ? npkts(&f->p, size) : 1;
	f->scheme->demand(&f->ccfg, &o->c, o->held);
	for (int i = 0; i < f->npools; i++)
		if (o->held[i] > f->set_cap[i])
			bug("operation larger than a credit pool (validation should have caught it)");
	f->inflight++;
	hs_occ_in(&f->qs.inflight, now);
	hs_fabric_class_stats *cs = &f->cls[cls];
	if (record && cs->first_issue == HS_TIME_MAX)
		cs->first_issue = now;
	struct ring *wq = &f->waitq[(uint32_t)src * HS_FOP_KINDS + (uint32_t)kind];
	if (!wq->n && src_ready(f, src) && fits(f, src, o->held)) {
		admit(f, oi);
		return;
	}
	ring_push(wq, (struct item){.t = now, .op = oi});
	f->waiting++;
	hs_occ_in(&f->qs.admit, now);
}

/* ---- source egress: serialise the packets of admitted operations, spray them over the paths ---- */

static void fwd_try(hs_fabric *f, int p);

static int spray(hs_fabric *f, uint32_t *rr)
{
	if (f->p.spray_random)
		return (int)hs_rng_uint(f->rng, (uint64_t)f->p.paths);
	int p = (int)(*rr % (uint32_t)f->p.paths);
	(*rr)++;
	return p;
}

static uint32_t next_req_len(const hs_fabric *f, const struct op *o)
{
	if (o->kind == HS_FOP_READ)
		return 0;
	if (o->kind == HS_FOP_ATOMIC)
		return o->c.size;
	uint32_t left = o->c.size - o->sent_bytes;
	return left < f->p.mtu ? left : f->p.mtu;
}

static void h_egress(hs_engine *e, void *ctx, uint64_t s)
{
	hs_fabric *f = ctx;
	struct source *sr = &f->src[s];
	uint32_t oi = ring_front(&sr->egress)->op;
	struct op *o = &f->ops[oi];
	uint32_t len = next_req_len(f, o);
	hs_time now = hs_engine_now(e);
	struct item pk = {.t = now, .op = oi, .len = len, .addr = o->sent_bytes};
	o->sent_bytes += len;
	o->sent_pkts++;
	if (o->sent_pkts == o->npkt_req) {
		struct item it = ring_pop(&sr->egress);
		hs_occ_out(&f->qs.egress[s], now, now - it.t);
	}
	int p = spray(f, &sr->rr);
	hs_occ_in(&f->qs.fwd[p], now);
	ring_push(&f->fwd[p].s.q, pk);
	fwd_try(f, p);
	sr->busy = 0;
	/* at transmission: the link is free, take the next op's credits now (admit starts its egress) */
	if (!f->p.admit_at_issue && !sr->egress.n && f->waiting && admit_from_source(f, (int)s))
		return;
	egress_try(f, (int)s);
}

static void egress_try(hs_fabric *f, int s)
{
	struct source *sr = &f->src[s];
	if (sr->busy || !sr->egress.n)
		return;
	const struct op *o = &f->ops[ring_front(&sr->egress)->op];
	uint32_t wire = next_req_len(f, o) + f->p.header;
	sr->busy = 1;
	hs_engine_after(f->eng, hs_time_for(wire, f->p.src_rate), h_egress, f, (uint64_t)s);
}

/* ---- forward paths and the receive buffer ---- */

static void rx_arrive(hs_fabric *f, struct item pk);
static void h_fwd_pipe(hs_engine *e, void *ctx, uint64_t p);

/* A path's head packet is on the wire: it leaves the path's queue (occ) and enters its delay line, whose
 * handler `arrive` fires at the packet's arrival. Forward and reverse paths share this and path_arrived. */
static void path_sent(hs_fabric *f, struct path *pa, hs_occ *occ, hs_handler arrive, uint64_t p)
{
	struct item pk = ring_pop(&pa->s.q);
	hs_time now = hs_engine_now(f->eng);
	hs_occ_out(occ, now, now - pk.t);
	pk.t = now + f->p.path_latency;
	ring_push(&pa->pipe.q, pk);
	if (!pa->pipe.armed) {
		pa->pipe.armed = 1;
		hs_engine_at(f->eng, pk.t, arrive, f, p);
	}
	pa->s.busy = 0;
}

/* The delay line's front packet arrives; the line re-arms for the next one. */
static struct item path_arrived(hs_fabric *f, struct path *pa, hs_handler arrive, uint64_t p)
{
	struct dline *d = &pa->pipe;
	struct item pk = ring_pop(&d->q);
	if (d->q.n)
		hs_engine_at(f->eng, ring_front(&d->q)->t, arrive, f, p);
	else
		d->armed = 0;
	return pk;
}

static void h_fwd_tx(hs_engine *e, void *ctx, uint64_t p)
{
	hs_fabric *f = ctx;
	path_sent(f, &f->fwd[p], &f->qs.fwd[p], h_fwd_pipe, p);
	fwd_try(f, (int)p);
}

static void h_fwd_pipe(hs_engine *e, void *ctx, uint64_t p)
{
	hs_fabric *f = ctx;
	rx_arrive(f, path_arrived(f, &f->fwd[p], h_fwd_pipe, p));
}

/* Start serialising the head packet if the receive buffer can take it; otherwise wait in line for space. */
static void fwd_try(hs_fabric *f, int p)
{
	struct path *pa = &f->fwd[p];
	if (pa->s.busy || pa->blocked || !pa->s.q.n)
		return;
	uint32_t wire = ring_front(&pa->s.q)->len + f->p.header;
	if (f->rx_used + wire > f->p.rxbuf) {
		pa->blocked = 1;
		f->blocked[f->nblocked++] = p;
		return;
	}
	f->rx_used += wire;
	hs_occ_add(&f->qs.rxbuf, hs_engine_now(f->eng), wire);
	pa->s.busy = 1;
	hs_engine_after(f->eng, hs_time_for(wire, f->p.path_rate), h_fwd_tx, f, (uint64_t)p);
}

static void rx_release(hs_fabric *f, uint32_t bytes)
{
	if (!bytes)
		return;
	if (bytes > f->rx_used)
		bug("receive buffer released more than it held");
	f->rx_used -= bytes;
	hs_occ_add(&f->qs.rxbuf, hs_engine_now(f->eng), -(double)bytes);
	/* Wake blocked paths in the order they blocked; a path that still does not fit blocks again. */
	int n = f->nblocked, tmp[64], *list = n <= 64 ? tmp : hs_xmalloc(sizeof(int) * (size_t)n);
	memcpy(list, f->blocked, sizeof(int) * (size_t)n);
	f->nblocked = 0;
	for (int i = 0; i < n; i++) {
		f->fwd[list[i]].blocked = 0;
		fwd_try(f, list[i]);
	}
	if (list != tmp)
		free(list);
}

/* ---- HBM partitions ---- */

static int part_of(const hs_fabric *f, uint64_t addr)
{
	return (int)((addr / f->p.interleave) % (uint64_t)f->p.partitions);
}


static void resp_enqueue(hs_fabric *f, uint32_t oi);
static void dispatch(hs_fabric *f);
static void h_hbm(hs_engine *e, void *ctx, uint64_t part);

static void hbm_try(hs_fabric *f, int part)
{
	struct server *s = &f->hbm[part];
	if (s->busy || !s->q.n)
		return;
	s->busy = 1;
	hs_engine_after(f->eng, hs_time_for(ring_front(&s->q)->len, f->p.hbm_rate), h_hbm, f, (uint64_t)part);
}

static void hbm_job(hs_fabric *f, uint32_t oi, uint64_t addr, uint32_t len, uint32_t free_b)
{
	int part = part_of(f, addr);
	hs_time now = hs_engine_now(f->eng);
	f->ops[oi].hbm_left++;
	ring_push(&f->hbm[part].q, (struct item){.t = now, .addr = addr, .op = oi, .len = len, .free_b = free_b});
	hs_occ_in(&f->qs.hbm[part], now);
	hbm_try(f, part);
}

static void h_hbm_lat(hs_engine *e, void *ctx, uint64_t arg);

static void h_hbm(hs_engine *e, void *ctx, uint64_t part)
{
	hs_fabric *f = ctx;
	struct server *s = &f->hbm[part];
	struct item j = ring_pop(&s->q);
	hs_time now = hs_engine_now(e);
	hs_occ_out(&f->qs.hbm[part], now, now - j.t);
	s->busy = 0;
	rx_release(f, j.free_b);
	struct op *o = &f->ops[j.op];
	o->hbm_left--;
	if (!o->hbm_left && o->disp_done) {
		struct item it = {.t = now + f->p.hbm_latency, .op = j.op};
		ring_push(&f->hbm_lat.q, it);
		if (!f->hbm_lat.armed) {
			f->hbm_lat.armed = 1;
			hs_engine_at(e, it.t, h_hbm_lat, f, 0);
		}
	}
	hbm_try(f, (int)part);
	dispatch(f);
}

/* HBM stage done: the access latency has passed after the last chunk was served. */
static void h_hbm_lat(hs_engine *e, void *ctx, uint64_t arg)
{
	hs_fabric *f = ctx;
	struct item it = ring_pop(&f->hbm_lat.q);
	if (f->hbm_lat.q.n)
		hs_engine_at(e, ring_front(&f->hbm_lat.q)->t, h_hbm_lat, f, 0);
	else
		f->hbm_lat.armed = 0;
	struct op *o = &f->ops[it.op];
	if (o->kind == HS_FOP_READ)
		rx_release(f, o->c.req_bytes);
	credit_stage(f, o, HS_STAGE_HBM, 0);
	if (f->target_fn)
		f->target_fn(f->target_ctx, o->src, o->cls, o->tag);
	resp_enqueue(f, it.op);
}

/* ---- atomic engine ---- */

static void h_atomic(hs_engine *e, void *ctx, uint64_t arg);

static void atomic_try(hs_fabric *f)
{
	struct server *s = &f->atomic;
	if (s->busy || !s->q.n)
		return;
	s->busy = 1;
	f->atomic_wait += (double)(hs_engine_now(f->eng) - ring_front(&s->q)->t);
	f->atomic_served++;
	hs_engine_after(f->eng, f->p.atomic_time, h_atomic, f, 0);
}

static void h_atomic(hs_engine *e, void *ctx, uint64_t arg)
{
	hs_fabric *f = ctx;
	struct item it = ring_pop(&f->atomic.q);
	hs_time now = hs_engine_now(e);
	hs_occ_out(&f->qs.atomic, now, now - it.t);
	f->atomic.busy = 0;
	struct op *o = &f->ops[it.op];
	rx_release(f, o->c.req_bytes);
	credit_stage(f, o, HS_STAGE_ATOMIC, 0);
	if (f->target_fn)
		f->target_fn(f->target_ctx, o->src, o->cls, o->tag);
	resp_enqueue(f, it.op);
	atomic_try(f);
	dispatch(f);
}

/* ---- arrival at the target: the in-order dispatcher ----
 *
 * Arrived packets are dispatched in arrival order to the queue of their stage: a write or notify packet's
 * data to its HBM partition, a read's chunks to theirs, an atomic to the atomic engine. Those queues are
 * bounded (hbm_depth jobs per partition, atomic_depth atomics); when the head packet's queue is full the
 * dispatcher waits, and everything behind it waits too (head-of-line blocking), still holding its
 * receive-buffer bytes. Keeping stage queues from filling is what admission is for. */

static void dispatch(hs_fabric *f)
{
	hs_time now = hs_engine_now(f->eng);
	while (f->ingress.n) {
		struct item *pk = ring_front(&f->ingress);
		struct op *o = &f->ops[pk->op];
		uint32_t oi = pk->op;
		if (o->kind == HS_FOP_WRITE || o->kind == HS_FOP_NOTIFY) {
			/* pk->addr holds the payload offset; the data goes to HBM as it arrives */
			uint64_t a = o->addr + pk->addr;
			if (f->hbm[part_of(f, a)].q.n >= f->p.hbm_depth)
				return;
			hbm_job(f, oi, a, pk->len, pk->len + f->p.header);
			if (++o->disp_pkts == o->npkt_req)
				o->disp_done = 1;
		} else if (o->kind == HS_FOP_READ) {
			/* pk->addr is the read's dispatch cursor: chunks end at an interleave boundary or the MTU */
			uint64_t end = o->addr + o->c.size;
			while (o->addr + pk->addr < end) {
				uint64_t a = o->addr + pk->addr;
				uint64_t lim = (a / f->p.interleave + 1) * f->p.interleave;
				if (lim > end)
					lim = end;
				if (lim - a > f->p.mtu)
					lim = a + f->p.mtu;
				if (f->hbm[part_of(f, a)].q.n >= f->p.hbm_depth)
					return;
				pk->addr += lim - a;
				if (o->addr + pk->addr >= end)
					o->disp_done = 1;
				hbm_job(f, oi, a, (uint32_t)(lim - a), 0);
			}
		} else {
			if (f->atomic.q.n >= f->p.atomic_depth)
				return;
			o->disp_done = 1;
			ring_push(&f->atomic.q, (struct item){.t = now, .op = oi});
			hs_occ_in(&f->qs.atomic, now);
			atomic_try(f);
		}
		struct item done = ring_pop(&f->ingress);
		hs_occ_out(&f->qs.ingress, now, now - done.t);
	}
}

static void rx_arrive(hs_fabric *f, struct item pk)
{
	hs_time now = hs_engine_now(f->eng);
	pk.t = now;
	ring_push(&f->ingress, pk);
	hs_occ_in(&f->qs.ingress, now);
	dispatch(f);
}

/* ---- response engine and reverse paths ---- */

static void h_resp(hs_engine *e, void *ctx, uint64_t arg);
static void rev_try(hs_fabric *f, int p);

static void resp_try(hs_fabric *f)
{
	struct server *s = &f->resp;
	if (s->busy || !s->q.n)
		return;
	s->busy = 1;
	const struct op *o = &f->ops[ring_front(&s->q)->op];
	hs_engine_after(f->eng, hs_time_for(o->c.resp_bytes, f->p.resp_rate), h_resp, f, 0);
}

static void resp_enqueue(hs_fabric *f, uint32_t oi)
{
	hs_time now = hs_engine_now(f->eng);
	ring_push(&f->resp.q, (struct item){.t = now, .op = oi});
	hs_occ_in(&f->qs.resp, now);
	resp_try(f);
}

static void h_resp(hs_engine *e, void *ctx, uint64_t arg)
{
	hs_fabric *f = ctx;
	struct item it = ring_pop(&f->resp.q);
	hs_time now = hs_engine_now(e);
	hs_occ_out(&f->qs.resp, now, now - it.t);
	f->resp.busy = 0;
	struct op *o = &f->ops[it.op];
	credit_stage(f, o, HS_STAGE_RESP, 1);
	uint32_t data = o->kind == HS_FOP_READ || o->kind == HS_FOP_ATOMIC ? o->c.size : 0;
	uint32_t n = npkts(&f->p, data);
	o->resp_pkts_left = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len = data - i * f->p.mtu < f->p.mtu ? data - i * f->p.mtu : f->p.mtu;
		int p = spray(f, &f->resp_rr);
		ring_push(&f->rev[p].s.q, (struct item){.t = now, .op = it.op, .len = len});
		hs_occ_in(&f->qs.rev[p], now);
		rev_try(f, p);
	}
	resp_try(f);
}

static void h_rev_pipe(hs_engine *e, void *ctx, uint64_t p);

static void h_rev_tx(hs_engine *e, void *ctx, uint64_t p)
{
	hs_fabric *f = ctx;
	path_sent(f, &f->rev[p], &f->qs.rev[p], h_rev_pipe, p);
	rev_try(f, (int)p);
}

static void rev_try(hs_fabric *f, int p)
{
	struct path *pa = &f->rev[p];
	if (pa->s.busy || !pa->s.q.n)
		return;
	pa->s.busy = 1;
	uint32_t wire = ring_front(&pa->s.q)->len + f->p.header;
	hs_engine_after(f->eng, hs_time_for(wire, f->p.path_rate), h_rev_tx, f, (uint64_t)p);
}

static void complete(hs_fabric *f, uint32_t oi);

static void h_rev_pipe(hs_engine *e, void *ctx, uint64_t p)
{
	hs_fabric *f = ctx;
	struct item pk = path_arrived(f, &f->rev[p], h_rev_pipe, p);
	struct op *o = &f->ops[pk.op];
	if (--o->resp_pkts_left == 0)
		complete(f, pk.op);
}

/* ---- completion ---- */

static void complete(hs_fabric *f, uint32_t oi)
{
	struct op *o = &f->ops[oi];
	hs_time now = hs_engine_now(f->eng);
	if (o->record) {
		hs_fabric_class_stats *cs = &f->cls[o->cls];
		hs_hist_add(&cs->lat, now - o->t_issue);
		hs_hist_add(&cs->stall, o->t_admit - o->t_issue);
		cs->ops++;
		cs->bytes += o->c.size;
		cs->last_done = now;
	}
	hs_occ_out(&f->qs.inflight, now, now - o->t_issue);
	f->inflight--;
	int src = o->src, cls = o->cls;
	uint64_t tag = o->tag;
	o->next = f->free_op;
	f->free_op = oi + 1;
	if (f->done_fn)
		f->done_fn(f->done_ctx, src, cls, tag);
}

/* ---- life cycle and accessors ---- */

hs_fabric *hs_fabric_create(hs_engine *eng, const hs_fabric_params *p, const hs_credit_scheme *s,
			    const hs_credit_cfg *cfg)
{
	hs_fabric *f = hs_xcalloc(1, sizeof *f);
	f->eng = eng;
	f->p = *p;
	if (f->p.nclasses < 1)
		f->p.nclasses = 1;
	f->scheme = s;
	f->ccfg = *cfg;
	hs_credit_defaults(&f->ccfg, p->rxbuf, p->atomic_depth);
	f->rng = hs_rng_create(p->seed, 7);
	f->npools = s->pools(&f->ccfg, f->pool_names, f->cap);
	f->nsets = f->ccfg.per_sender ? p->sources : 1;
	f->set_avail = hs_xcalloc((size_t)f->nsets * HS_CREDIT_POOLS, sizeof *f->set_avail);
	for (int i = 0; i < f->npools; i++) {
		f->set_cap[i] = hs_credit_share(&f->ccfg, f->cap[i], p->sources);
		f->cap[i] = f->set_cap[i] * f->nsets;
		f->avail[i] = f->min_avail[i] = f->cap[i];
		for (int k = 0; k < f->nsets; k++)
			f->set_avail[k * HS_CREDIT_POOLS + i] = f->set_cap[i];
	}
	f->waitq = hs_xcalloc((size_t)p->sources * HS_FOP_KINDS, sizeof *f->waitq);
	f->src = hs_xcalloc((size_t)p->sources, sizeof *f->src);
	f->fwd = hs_xcalloc((size_t)p->paths, sizeof *f->fwd);
	f->rev = hs_xcalloc((size_t)p->paths, sizeof *f->rev);
	f->blocked = hs_xcalloc((size_t)p->paths, sizeof *f->blocked);
	f->hbm = hs_xcalloc((size_t)p->partitions, sizeof *f->hbm);
	f->cls = hs_xcalloc((size_t)f->p.nclasses, sizeof *f->cls);
	for (int i = 0; i < f->p.nclasses; i++) {
		hs_hist_init(&f->cls[i].lat);
		hs_hist_init(&f->cls[i].stall);
		f->cls[i].first_issue = HS_TIME_MAX;
	}
	hs_time now = hs_engine_now(eng);
	hs_fabric_queues *q = &f->qs;
	q->hbm = hs_xcalloc((size_t)p->partitions, sizeof *q->hbm);
	q->fwd = hs_xcalloc((size_t)p->paths, sizeof *q->fwd);
	q->rev = hs_xcalloc((size_t)p->paths, sizeof *q->rev);
	q->egress = hs_xcalloc((size_t)p->sources, sizeof *q->egress);
	hs_occ_init(&q->rxbuf, now, 0);
	hs_occ_init(&q->atomic, now, 0);
	hs_occ_init(&q->ingress, now, 0);
	hs_occ_init(&q->resp, now, 0);
	hs_occ_init(&q->admit, now, 0);
	hs_occ_init(&q->inflight, now, 0);
	for (int i = 0; i < p->partitions; i++)
		hs_occ_init(&q->hbm[i], now, 0);
	for (int i = 0; i < p->paths; i++) {
		hs_occ_init(&q->fwd[i], now, 0);
		hs_occ_init(&q->rev[i], now, 0);
	}
	for (int i = 0; i < p->sources; i++)
		hs_occ_init(&q->egress[i], now, 0);
	return f;
}

void hs_fabric_destroy(hs_fabric *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->p.sources * HS_FOP_KINDS; i++)
		free(f->waitq[i].v);
	for (int i = 0; i < f->p.sources; i++)
		free(f->src[i].egress.v);
	for (int i = 0; i < f->p.paths; i++) {
		free(f->fwd[i].s.q.v);
		free(f->fwd[i].pipe.q.v);
		free(f->rev[i].s.q.v);
		free(f->rev[i].pipe.q.v);
	}
	for (int i = 0; i < f->p.partitions; i++)
		free(f->hbm[i].q.v);
	free(f->hbm_lat.q.v);
	free(f->atomic.q.v);
	free(f->resp.q.v);
	free(f->ingress.v);
	free(f->cret);
	free(f->set_avail);
	free(f->waitq);
	free(f->src);
	free(f->fwd);
	free(f->rev);
	free(f->blocked);
	free(f->hbm);
	free(f->cls);
	free(f->qs.hbm);
	free(f->qs.fwd);
	free(f->qs.rev);
	free(f->qs.egress);
	free(f->ops);
	hs_rng_destroy(f->rng);
	free(f);
}

void hs_fabric_on_done(hs_fabric *f, hs_fabric_done_fn fn, void *ctx)
{
	f->done_fn = fn;
	f->done_ctx = ctx;
}

void hs_fabric_on_target(hs_fabric *f, hs_fabric_done_fn fn, void *ctx)
{
	f->target_fn = fn;
	f->target_ctx = ctx;
}

const hs_fabric_class_stats *hs_fabric_class(const hs_fabric *f, int cls) { return &f->cls[cls]; }
const hs_fabric_queues *hs_fabric_queues_of(const hs_fabric *f) { return &f->qs; }

void hs_fabric_close(hs_fabric *f)
{
	hs_time now = hs_engine_now(f->eng);
	hs_fabric_queues *q = &f->qs;
	hs_occ_close(&q->rxbuf, now);
	hs_occ_close(&q->atomic, now);
	hs_occ_close(&q->ingress, now);
	hs_occ_close(&q->resp, now);
	hs_occ_close(&q->admit, now);
	hs_occ_close(&q->inflight, now);
	for (int i = 0; i < f->p.partitions; i++)
		hs_occ_close(&q->hbm[i], now);
	for (int i = 0; i < f->p.paths; i++) {
		hs_occ_close(&q->fwd[i], now);
		hs_occ_close(&q->rev[i], now);
	}
	for (int i = 0; i < f->p.sources; i++)
		hs_occ_close(&q->egress[i], now);
}

int hs_fabric_pools(const hs_fabric *f, const char **names, const int64_t **cap, const int64_t **avail,
		    const int64_t **min_avail)
{
	for (int i = 0; i < f->npools; i++)
		names[i] = f->pool_names[i];
	*cap = f->cap;
	*avail = f->avail;
	*min_avail = f->min_avail;
	return f->npools;
}

uint64_t hs_fabric_inflight(const hs_fabric *f) { return f->inflight; }
uint64_t hs_fabric_credit_returns_pending(const hs_fabric *f) { return f->cret_n; }

void hs_fabric_atomic_wait(const hs_fabric *f, double *wait_sum, uint64_t *served)
{
	*wait_sum = f->atomic_wait;
	*served = f->atomic_served;
}
