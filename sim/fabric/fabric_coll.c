/* A ring collective's traffic at one receiver, driven by its dependencies (fabric_coll.h says what is modelled
 * and where each size comes from). Per channel, slice j (step j / m, m slices per step) may be sent when
 *   - it depends on nothing (j < m), or slice j - m has landed here (what the predecessor forwards is what it
 *     received one step earlier, at the same time as we did: symmetry), and
 *   - the window has a free slot: j < W, or the head for slice j - W has landed (the predecessor's window
 *     towards us is ours towards our successor).
 * Slices land in order at the receiver's kernel (it consumes its FIFO in order): `landed` is a prefix. */
#include "sim/fabric/fabric_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/engine/engine.h"

const char *const hs_fcoll_proto_names[] = {"simple", "ll128", NULL};
const char *const hs_fcoll_signal_names[] = {"write", "atomic", NULL};
const char *const hs_fcoll_class_names[] = {"data", "tail", "head", NULL};

/* Sizes (fabric_coll.h cites them). */
#define NCCL_STEPS 8
#define SIMPLE_STEP (4u * 1024 * 1024 / NCCL_STEPS)             /* DEFAULT_BUFFSIZE / NCCL_STEPS */
#define SIMPLE_SLICESTEPS 2                                     /* ALLREDUCE_SLICESTEPS */
#define LL128_LINE 128u                                         /* NCCL_LL128_LINESIZE */
#define LL128_DATA 120u                                         /* NCCL_LL128_DATAELEMS * 8 */
#define LL128_STEP_LINES (120u * 640u * 8u / LL128_LINE)        /* ELEMS_PER_THREAD x MAX_NTHREADS x 8 B / line */
#define FLAG_BYTES 8u                                           /* a uint64_t step counter */

enum { T_DATA, T_TAIL, T_HEAD }; /* tag types */

#define TAG(c, j, t) (((uint64_t)(c) << 40) | ((uint64_t)(j) << 2) | (uint64_t)(t))
#define TAG_C(g) ((int)((g) >> 40))
#define TAG_J(g) ((uint32_t)(((g) >> 2) & 0x3fffffffffull))
#define TAG_T(g) ((int)((g) & 3))

struct chan {
	uint64_t piece;      /* bytes of one step's piece on this channel */
	uint32_t next;       /* next slice to send */
	uint32_t landed;     /* slices landed, in order */
	uint32_t headed;     /* heads landed, in order */
	uint8_t *got;        /* [Q] slice landed (out of order) */
	uint8_t *hgot;       /* [Q] head landed */
	uint8_t finished;    /* every slice landed */
	uint32_t *left;      /* [W] by slot: the slice's data operations not yet acknowledged (Simple push), landed
			      * (LL128) or read (pull) */
};

struct run {
	const hs_fcoll *c;
	hs_fabric *f;
	hs_engine *eng;
	struct chan *ch;
	uint32_t m;          /* slices per step */
	uint32_t Q;          /* slices per channel: steps x m */
	uint32_t W;          /* window, slices */
	uint64_t slice;      /* data bytes per slice (the last of a step may be shorter) */
	uint32_t mtu;        /* bytes per data operation: the fabric's packet payload */
	uint32_t consumed;   /* channels whose every slice has landed (t_end: when the last did) */
	hs_time t_end;
	hs_fcoll_out *out;
};

int hs_fcoll_supported(int op)
{
	return op == HS_FCOLL_ALL_REDUCE || op == HS_FCOLL_ALL_GATHER || op == HS_FCOLL_REDUCE_SCATTER;
}

static uint32_t steps_of(const hs_fcoll *c) { return c->op == HS_FCOLL_ALL_REDUCE ? 2u * (uint32_t)(c->n - 1) : (uint32_t)(c->n - 1); }

static uint64_t chan_piece(const hs_fcoll *c, int ch)
{
	uint64_t piece = (uint64_t)(c->bytes / c->n); /* whole bytes of the step's piece, over the channels */
	uint64_t q = piece / (uint64_t)c->channels, r = piece % (uint64_t)c->channels;
	return q + ((uint64_t)ch < r ? 1 : 0);
}

static uint64_t slice_data(const struct run *r)
{
	return r->c->proto == HS_FCOLL_LL128 ? (uint64_t)LL128_STEP_LINES * LL128_DATA
					     : (uint64_t)SIMPLE_SLICESTEPS * SIMPLE_STEP;
}

/* data bytes of slice j of channel ch */
static uint64_t slice_len(const struct run *r, const struct chan *ch, uint32_t j)
{
	uint32_t q = j % r->m;
	uint64_t a = (uint64_t)q * r->slice, b = a + r->slice;
	if (b > ch->piece)
		b = ch->piece;
	return b > a ? b - a : 0;
}

uint64_t hs_fcoll_closed_bytes(const hs_fcoll *c)
{
	uint64_t per_step = 0;
	for (int ch = 0; ch < c->channels; ch++)
		per_step += chan_piece(c, ch);
	return per_step * steps_of(c);
}

/* Addresses: each channel's FIFO slots are a region of the receiver's memory (slot after slot), its flags
 * another; `off` is the byte offset in the slot. */
static void issue(struct run *r, int src, int kind, uint64_t len, int cls, uint64_t tag, uint64_t off)
{
	uint64_t addr = ((uint64_t)TAG_C(tag) << 32) +
			(cls == HS_FCOLL_CLS_DATA ? (uint64_t)(TAG_J(tag) % r->W) * r->slice * 2 + off
						  : ((uint64_t)1 << 31) + (uint64_t)cls * 64);
	r->out->ops++;
	r->out->bytes[kind] += len;
	hs_fabric_issue(r->f, src, kind, (uint32_t)len, addr, cls, 1, tag);
}

/* A slice's data as the GPU moves it: stores of at most one packet each (every thread's store is its own
 * transaction on the link), so each is its own operation with its own credits and response. */
static void issue_data(struct run *r, int src, int kind, int c, uint32_t j, uint64_t wire)
{
	uint32_t mtu = r->mtu;
	uint32_t k = (uint32_t)((wire + mtu - 1) / mtu);
	r->ch[c].left[j % r->W] = k;
	for (uint64_t a = 0; a < wire; a += mtu)
		issue(r, src, kind, wire - a < mtu ? wire - a : mtu, HS_FCOLL_CLS_DATA, TAG(c, j, T_DATA), a);
}

static int sig_kind(const struct run *r) { return r->c->signal == HS_FCOLL_SIG_ATOMIC ? HS_FOP_ATOMIC : HS_FOP_NOTIFY; }

/* The wire bytes of a slice of `d` data bytes under the protocol. */
static uint64_t wire_of(const struct run *r, uint64_t d)
{
	if (r->c->proto == HS_FCOLL_LL128)
		return (d + LL128_DATA - 1) / LL128_DATA * LL128_LINE;
	return d;
}

static void try_send(struct run *r, int c)
{
	struct chan *ch = &r->ch[c];
	while (ch->next < r->Q) {
		uint32_t j = ch->next;
		if (j >= r->m && ch->landed < j - r->m + 1)
			return;
		if (j >= r->W && ch->headed < j - r->W + 1)
			return;
		ch->next++;
		uint64_t d = slice_len(r, ch, j);
		if (!d) { /* an empty slice (a piece smaller than the slices): lands at once */
			ch->got[j] = 1;
			continue;
		}
		r->out->data_bytes += d;
		if (r->c->pull) { /* the predecessor's tail: "slice j is ready in my buffer" */
			issue(r, 0, sig_kind(r), FLAG_BYTES, HS_FCOLL_CLS_TAIL, TAG(c, j, T_TAIL), 0);
			continue;
		}
		issue_data(r, 0, HS_FOP_WRITE, c, j, wire_of(r, d));
	}
}

/* Slices landed in order: consume them (our successor consumed our slice j at the same time, and its head
 * comes to us) and send what became possible; again while empty slices land at once. */
static void advance(struct run *r, int c)
{
	struct chan *ch = &r->ch[c];
	for (;;) {
		while (ch->landed < r->Q && ch->got[ch->landed]) {
			uint32_t j = ch->landed++;
			if (slice_len(r, ch, j))
				issue(r, 1, sig_kind(r), FLAG_BYTES, HS_FCOLL_CLS_HEAD, TAG(c, j, T_HEAD), 0);
			else
				ch->hgot[j] = 1;
		}
		while (ch->headed < r->Q && ch->hgot[ch->headed])
			ch->headed++;
		if (!ch->finished && ch->landed == r->Q) {
			ch->finished = 1;
			if (++r->consumed == (uint32_t)r->c->channels)
				r->t_end = hs_engine_now(r->eng);
		}
		uint32_t before = ch->next;
		try_send(r, c);
		if (ch->next == before || ch->landed == r->Q || !ch->got[ch->landed])
			return;
	}
}

static void land(struct run *r, int c, uint32_t j)
{
	r->ch[c].got[j] = 1;
	advance(r, c);
}

/* At the receiver: data or a flag is in its memory. */
static void on_target(void *ctx, int src, int cls, uint64_t tag)
{
	struct run *r = ctx;
	int c = TAG_C(tag), t = TAG_T(tag);
	uint32_t j = TAG_J(tag);
	if (t == T_HEAD) {
		r->ch[c].hgot[j] = 1;
		advance(r, c);
	} else if (t == T_TAIL && !r->c->pull) {
		land(r, c, j);
	} else if (t == T_TAIL && r->c->pull) {
		/* the predecessor's data is ready: by symmetry our successor reads ours now */
		issue_data(r, 1, HS_FOP_READ, c, j, slice_len(r, &r->ch[c], j));
	} else if (t == T_DATA && r->c->proto == HS_FCOLL_LL128 && !r->c->pull) {
		if (--r->ch[c].left[j % r->W] == 0)
			land(r, c, j); /* the lines carry their flags: the slice is there with its last line */
	}
	(void)src, (void)cls;
}

/* At a sender: its operation completed (response received). */
static void on_done(void *ctx, int src, int cls, uint64_t tag)
{
	struct run *r = ctx;
	int c = TAG_C(tag), t = TAG_T(tag);
	uint32_t j = TAG_J(tag);
	if (t != T_DATA)
		return;
	if (r->c->proto == HS_FCOLL_LL128 && !r->c->pull)
		return;
	if (--r->ch[c].left[j % r->W])
		return;
	if (r->c->pull) /* the reads' data arrived at the puller: by symmetry, ours arrived here */
		land(r, c, j);
	else /* every store is acknowledged: the fence passes and the tail is stored */
		issue(r, 0, sig_kind(r), FLAG_BYTES, HS_FCOLL_CLS_TAIL, TAG(c, j, T_TAIL), 0);
	(void)src, (void)cls;
}

void hs_fcoll_run(const hs_fabric_params *pin, const hs_credit_scheme *s, const hs_credit_cfg *cfg, const hs_fcoll *c,
		  hs_fcoll_out *out, hs_fabric_class_stats *stats)
{
	memset(out, 0, sizeof *out);
	hs_fabric_params p = *pin;
	p.sources = 2;
	p.nclasses = HS_FCOLL_NCLS;
	hs_engine *eng = hs_engine_create();
	struct run r = {.c = c, .eng = eng, .out = out};
	r.f = hs_fabric_create(eng, &p, s, cfg);
	hs_fabric_on_done(r.f, on_done, &r);
	hs_fabric_on_target(r.f, on_target, &r);
	r.slice = slice_data(&r);
	r.mtu = p.mtu;
	r.W = c->proto == HS_FCOLL_LL128 ? NCCL_STEPS : NCCL_STEPS / SIMPLE_SLICESTEPS;
	uint64_t maxpiece = chan_piece(c, 0);
	r.m = (uint32_t)((maxpiece + r.slice - 1) / r.slice);
	if (!r.m)
		r.m = 1;
	r.Q = steps_of(c) * r.m;
	r.ch = hs_xcalloc((size_t)c->channels, sizeof *r.ch);
	for (int k = 0; k < c->channels; k++) {
		r.ch[k].piece = chan_piece(c, k);
		r.ch[k].got = hs_xcalloc(r.Q, 1);
		r.ch[k].hgot = hs_xcalloc(r.Q, 1);
		r.ch[k].left = hs_xcalloc(r.W, sizeof *r.ch[k].left);
	}
	for (int k = 0; k < c->channels; k++)
		advance(&r, k);
	hs_engine_run(eng, HS_TIME_MAX);
	if (r.consumed != (uint32_t)c->channels || hs_fabric_inflight(r.f)) {
		fprintf(stderr, "hetsim: internal error: fabric collective stopped with %u of %d channels done\n",
			r.consumed, c->channels);
		abort();
	}
	out->time = r.t_end;
	out->events = hs_engine_executed(eng);
	if (stats)
		for (int k = 0; k < HS_FCOLL_NCLS; k++) {
			const hs_fabric_class_stats *cs = hs_fabric_class(r.f, k);
			hs_hist_merge(&stats[k].lat, &cs->lat);
			hs_hist_merge(&stats[k].stall, &cs->stall);
			stats[k].ops += cs->ops;
			stats[k].bytes += cs->bytes;
		}
	for (int k = 0; k < c->channels; k++) {
		free(r.ch[k].got);
		free(r.ch[k].hgot);
		free(r.ch[k].left);
	}
	free(r.ch);
	hs_fabric_destroy(r.f);
	hs_engine_destroy(eng);
}

int hs_fcoll_check_fit(const hs_fabric_params *p, const hs_credit_scheme *s, const hs_credit_cfg *cfg, char *why,
		       size_t n)
{
	hs_credit_cfg cc = *cfg;
	hs_credit_defaults(&cc, p->rxbuf, p->atomic_depth);
	const char *pn[HS_CREDIT_POOLS];
	int64_t cap[HS_CREDIT_POOLS];
	int np = s->pools(&cc, pn, cap);
	static const int kinds[] = {HS_FOP_WRITE, HS_FOP_READ, HS_FOP_NOTIFY, HS_FOP_ATOMIC};
	uint32_t sizes[] = {p->mtu, p->mtu, FLAG_BYTES, FLAG_BYTES};
	for (int k = 0; k < 4; k++) {
		hs_credit_op op = hs_fabric_describe(p, kinds[k], sizes[k]);
		int64_t need[HS_CREDIT_POOLS] = {0};
		s->demand(&cc, &op, need);
		for (int i = 0; i < np; i++) {
			int64_t have = hs_credit_share(&cc, cap[i], 2);
			if (need[i] > have) {
				snprintf(why, n, "the %s pool of scheme %s holds %lld but one %s of %u B needs %lld", pn[i],
					 s->name, (long long)have, hs_fabric_op_names[kinds[k]], sizes[k], (long long)need[i]);
				return -1;
			}
		}
	}
	return 0;
}
