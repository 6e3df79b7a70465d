/* The flow network model: max-min fair sharing of links among the flows crossing them, the rates from the
 * solver of sim/net/maxmin.h (progressive filling, recomputed incrementally over the flows of dirty links).
 *
 * Everything that starts at one instant is one batch: the first start schedules a recompute event at the
 * current time, which runs after the other events of that instant (engine order is time, then sequence).
 *
 * Events: one pending event for the earliest finish (sim/net/finq.h queues the flows by finish time), and one
 * delivery event per flow at finish + route latency, which calls the flow's callback. A finished flow releases its
 * links at the finish, where the sender hears of it (the `sent` callback, called from the finish event so
 * that what it starts joins that instant's recompute); its last byte arrives one route latency later.
 *
 * Symmetry classes (sim/net/netsym.h): a class set reserves the links of its orbits; a class flow crosses one
 * link per orbit (the orbit's lowest that is not a twin; an orbit of twins only is left out, as twins are),
 * carrying the orbit's per-link load. Nothing else may share a reserved link: the first flow of anything else
 * that would enter one breaks the set (each class flow in flight is cut, its members carried on by the caller)
 * before it enters, so a class never stands for members that would see different loads.
 *
 * A class alone on its links (no other class of its set crosses any of them, the set alone in its group, and none of its own flows is in
 * flight) is timed without the solver: nothing else can enter those links while the set holds them, so the
 * flow keeps, until it finishes or the set breaks, the rate progressive filling gives a flow alone, the least
 * bw / coefficient over its links, computed as the solver computes it (fill: share = res / w with res = bw and
 * w = the coefficient), and its finish is set at its start as the recompute of that instant would set it. It
 * goes on the finish queue, never into the solver. A ring's hops on a fat-tree under dmodk are such classes,
 * each on its own NICs and switch ports; the solver's work on them was more than half of a 32k-GPU step's
 * time. A second flow of the class while one is in flight (an owner that sends twice at once) first moves
 * the one in flight into the solver, and the class is then solved like any other.
 *
 * Any other flow that starts on links no flow crosses is timed alone too, and links it holds remember it
 * (alone_on); the first flow to enter one of them (or a class set to want it) moves it into the solver
 * first. Moving a flow in leaves the solver as it would be had the flow been there from its start: its rate
 * taken (the links' loads and bounds as hs_maxmin_settle leaves them), its remainder and finish as set at its
 * start, so the recompute of that instant brings it up to now as it would have. A pipeline send on its own
 * NICs, or a ring's hops run rank by rank after a break, never reach the solver.
 *
 * Holds (hold, unhold): an owner that times transfers on a route itself (a ring's hop alone on its links,
 * sim/net/netcoll_ring_hops.c) holds the route's links but the twins, free of any flow, set or other hold, and
 * is given the rate a flow alone there has (the route memo's). The first flow to enter a held link releases
 * the hold and calls the owner's broken(ctx, arg) before it enters; the owner starts as flows what it had in
 * flight, which then share the link with it as they would have from their start. A link's `rsv` is -2 - h
 * while hold h has it (a set's group is >= 0, a free link -1): a set does not open on a held link. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/finq.h"
#include "sim/net/maxmin.h"
#include "sim/net/net.h"
#include "sim/net/netsym.h"
#include "sim/net/solo.h"

#define RM_IN 9 /* a route memo's links in its record: a fat-tree route's 4 to 7 and a rail-optimised one's */

typedef struct fcold {
	hs_time lat; /* the route's */
	hs_net_done sent, done;
	void (*cut)(void *ctx, uint64_t arg, double rem); /* a class flow's (sym_start) */
	void *ctx;
	uint64_t arg;
	int next_free;
	int cs, ipos; /* class set and place in its in-flight list; -1 */
	int cls;      /* its class in set cs */
	int iso;      /* timed alone, outside the solver (see the top) */
	const hs_route *r; /* a flow outside any set: its route (the router keeps it for the flow's life) */
	int in;       /* being carried: in the solver or timed alone (not finished, cut or taken) */
} fcold;

/* A class set: its reserved links, each class's links in the solver, its flows in flight. */
typedef struct fset {
	int used, live;     /* open; reserving its links */
	int *links, nlinks; /* every link of the orbits */
	int ncls;
	int *hoff, *hl;     /* class j: solver links hl[hoff[j] .. hoff[j + 1]), ascending */
	double *hc;         /* their coefficients */
	hs_time *lat;       /* [ncls] */
	int *infl, ninfl, capinfl;
	char *iso;          /* [ncls] the class is alone on its links (never in a set opened beside another) */
	int *cinfl;         /* [ncls] its flows in flight */
	int anyiso;         /* some class is: no set may join this one's group (sym_holder) */
	void (*broken)(void *ctx);
	void *bctx;
	int grp;            /* its group while live (sets that share links, sym_open_joint), -1 */
} fset;

struct hs_net_model {
	const hs_topo *t;
	hs_engine *eng;
	hs_maxmin mm;       /* the links, and the flow records (mm.fl) */
	fcold *fc;          /* [mm.nfl], beside mm.fl */
	size_t capfc, active;
	int free_head;
	hs_finq fq;         /* flows by finish time */
	int ev_pending, rc_pending;
	hs_time ev_t;
	hs_event_id ev;
	/* symmetry classes */
	/* [nlk] what a flow's start and end read of each of its links, on one cache line for four links: before, the
	 * reservation, the flow timed alone and the solver's count were three arrays, each a cache miss per link of
	 * every flow (a hashed-ECMP 16k-GPU step starts 35M flows, on 5 links each) */
	struct lnk {
		int rsv;      /* group of class sets reserving the link, -2 - h for hold h, -1 */
		int rcnt;     /* sets of that group reserving it */
		int alone_on; /* the flow timed alone on the link, -1 (twin links: never) */
		int nsolv;    /* flows on it in the solver (mm.lk[l].n, counted here by solver_in and solver_out) */
	} *ln;
	int *gn, ngrp;      /* [ngrp] live sets per group (0: a free group number) */
	int *lcnt;          /* [nlk] scratch for sym_open: classes crossing a link (0 between calls) */
	fset *sets;
	int nsets, capsets;
	/* per route (hs_route.id) a flow outside any set has crossed: the rate it has alone (alone_rate of its
	 * links, computed once: a ring's hop sends the same slice over the same route hundreds of times) */
	struct rmemo {
		const hs_route *r; /* the route it is for (NULL: none yet); another router's route of the same id is
		                    * not it */
		double alone;
		int *ext;          /* the links below when there are more than RM_IN of them, else NULL */
		int nsl;
		int in[RM_IN];     /* its links but the twins, ascending (rm_sl): the ones a flow outside the solver
		                    * holds; kept in the record, one cache line, where they were an allocation of
		                    * their own, a miss of its own at each start and release of a lone flow */
	} *rm;
	size_t caprm;
	/* holds (see the top) */
	struct fhold {
		const hs_route *r;  /* its route, or NULL: */
		const int *links;   /* its links (the owner's) */
		int nlinks;
		void (*broken)(void *ctx, uint64_t arg);
		void *ctx;
		uint64_t arg;
		int next_free; /* -2 while in use */
	} *hd;
	size_t caphd, nhd;
	int hd_free;
};

/* ---- finish queue (sim/net/finq.h) ---- */

static void fh_set(hs_net_model *m, int f) { hs_finq_set(&m->fq, f, m->mm.fl[f].t_fin); }
static void fh_remove(hs_net_model *m, int f) { hs_finq_remove(&m->fq, f); }
static int fh_queued(const hs_net_model *m, int f) { return hs_finq_queued(&m->fq, f); }

/* ---- the solver's flows, counted per link (struct lnk) ---- */

static void solver_count(hs_net_model *m, int id, int d)
{
	hs_maxmin_flow *f = &m->mm.fl[id];
	const hs_maxmin_hop *h = hs_maxmin_hops(f);
	for (int i = 0; i < f->nl; i++)
		m->ln[h[i].l].nsolv += d;
}

/* after hs_maxmin_add or hs_maxmin_add_rated */
static void solver_in(hs_net_model *m, int id) { solver_count(m, id, 1); }

static void solver_out(hs_net_model *m, int id)
{
	solver_count(m, id, -1);
	hs_maxmin_remove(&m->mm, id);
}

/* ---- model ---- */

/* A NIC joined to one GPU and one switch (a NIC per GPU, as on rail-optimised and fat-tree clusters)
 * relays every path that enters it to its other side: no route starts or ends at a NIC, and routes are
 * simple paths. So GPU->NIC and NIC->switch carry the same flows with the same coefficients, as do
 * switch->NIC and NIC->GPU, and where the two have one bandwidth they always have one share: the lower
 * id leaves the link heap first and the other, its flows all frozen, never binds. The higher id is left
 * out of every flow (a quarter of an inter-node flow's links, with the heap work of each tie). */
static void find_twins(hs_net_model *m)
{
	const hs_topo *t = m->t;
	int nv = hs_topo_nvertices(t), nlk = hs_topo_nlinks(t);
	int *nin = hs_xcalloc((size_t)nv, sizeof *nin), *nout = hs_xcalloc((size_t)nv, sizeof *nout);
	int(*in)[2] = hs_xmalloc((size_t)nv * sizeof *in), (*out)[2] = hs_xmalloc((size_t)nv * sizeof *out);
	for (int l = 0; l < nlk; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (nin[L->to] < 2)
			in[L->to][nin[L->to]] = l;
		nin[L->to]++;
		if (nout[L->from] < 2)
			out[L->from][nout[L->from]] = l;
		nout[L->from]++;
	}
	for (int v = 0; v < nv; v++) {
		if (hs_topo_vkind(t, v) != HS_V_NIC || nin[v] != 2 || nout[v] != 2)
			continue;
		int a = hs_topo_link(t, in[v][0])->from, b = hs_topo_link(t, in[v][1])->from;
		if (a == b)
			continue;
		for (int i = 0; i < 2; i++) {
			int li = in[v][i], from = hs_topo_link(t, li)->from;
			/* the way out to the other neighbour */
			int lo = hs_topo_link(t, out[v][0])->to != from ? out[v][0] : out[v][1];
			if (hs_topo_link(t, lo)->to == from || hs_topo_link(t, li)->bw != hs_topo_link(t, lo)->bw)
				continue;
			if (li < lo)
				m->mm.lk[lo].twin = li;
			else
				m->mm.lk[li].twin = lo;
		}
	}
	free(nin), free(nout), free(in), free(out);
}

static hs_net_model *create(const hs_topo *t, hs_engine *eng, hs_err *err)
{
	(void)err;
	hs_net_model *m = hs_xcalloc(1, sizeof *m);
	m->t = t;
	m->eng = eng;
	int nlk = hs_topo_nlinks(t);
	hs_maxmin_init(&m->mm, nlk);
	for (int l = 0; l < nlk; l++)
		hs_maxmin_set_bw(&m->mm, l, hs_topo_link(t, l)->bw);
	m->free_head = -1;
	hs_finq_init(&m->fq);
	find_twins(m);
	m->ln = hs_xmalloc((size_t)(nlk ? nlk : 1) * sizeof *m->ln);
	for (int l = 0; l < nlk; l++)
		m->ln[l] = (struct lnk){-1, 0, -1, 0};
	m->lcnt = hs_xcalloc((size_t)(nlk ? nlk : 1), sizeof *m->lcnt);
	m->hd_free = -1;
	return m;
}

static void destroy(hs_net_model *m)
{
	if (!m)
		return;
	hs_maxmin_free(&m->mm);
	free(m->fc);
	hs_finq_free(&m->fq);
	for (int i = 0; i < m->nsets; i++) {
		fset *k = &m->sets[i];
		free(k->links), free(k->hoff), free(k->hl), free(k->hc), free(k->lat), free(k->infl);
		free(k->iso), free(k->cinfl);
	}
	free(m->sets);
	free(m->ln), free(m->gn);
	free(m->lcnt);
	for (size_t i = 0; i < m->caprm; i++)
		free(m->rm[i].ext);
	free(m->rm);
	free(m->hd);
	free(m);
}

static void finish_event(hs_engine *eng, void *ctx, uint64_t arg);
static void infl_drop(hs_net_model *m, int id);
static void alone_start(hs_net_model *m, int id, int nl, const int *hl, const double *hc);
static void alone_start_at(hs_net_model *m, int id, double rate);
static const struct rmemo *route_memo(hs_net_model *m, const hs_route *r);
/* A route memo's links but the twins (the record may move: never keep the pointer past a call that can grow
 * m->rm). */
static const int *rm_sl(const struct rmemo *q) { return q->ext ? q->ext : q->in; }
static void alone_release(hs_net_model *m, int id);
static void alone_join(hs_net_model *m, int id);
static void hold_break(hs_net_model *m, int h);

static void schedule_finish(hs_net_model *m)
{
	if (hs_finq_empty(&m->fq) || hs_finq_min_t(&m->fq) == HS_TIME_MAX)
		return;
	hs_time t = hs_finq_min_t(&m->fq);
	if (m->ev_pending && m->ev_t <= t)
		return;
	if (m->ev_pending)
		hs_engine_cancel(m->eng, m->ev);
	m->ev = hs_engine_at(m->eng, t, finish_event, m, 0);
	m->ev_t = t;
	m->ev_pending = 1;
}

/* A recompute: the solver's rounds, and a new finish time for each flow whose rate moved. A flow of a round's
 * set A is first brought up to now at its rate before the round. */
static void recompute(hs_net_model *m)
{
	hs_maxmin_recompute(&m->mm, &m->fq, hs_engine_now(m->eng));
	schedule_finish(m);
}

static void recompute_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	(void)arg;
	hs_net_model *m = ctx;
	m->rc_pending = 0;
	recompute(m);
}

static void want_recompute(hs_net_model *m)
{
	if (!m->rc_pending) {
		m->rc_pending = 1;
		hs_engine_after(m->eng, 0, recompute_event, m, 0);
	}
}

static void deliver(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	hs_net_model *m = ctx;
	fcold *f = &m->fc[arg];
	hs_net_done done = f->done;
	void *c = f->ctx;
	uint64_t a = f->arg;
	f->next_free = m->free_head;
	m->free_head = (int)arg;
	done(c, a);
}

static void finish_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)arg;
	hs_net_model *m = ctx;
	hs_time now = hs_engine_now(eng);
	m->ev_pending = 0;
	while (!hs_finq_empty(&m->fq) && hs_finq_min_t(&m->fq) <= now) {
		int id = hs_finq_pop(&m->fq);
		if (!m->fc[id].iso)
			solver_out(m, id);
		else if (m->fc[id].r)
			alone_release(m, id);
		if (m->fc[id].cs >= 0)
			infl_drop(m, id);
		m->fc[id].in = 0;
		m->active--;
		hs_engine_after(eng, m->fc[id].lat, deliver, m, (uint64_t)id);
		/* may start flows (and move m->mm.fl, m->fc): nothing of this one is held across the call; new flows
		 * are outside the finish queue until the recompute below rates them */
		if (m->fc[id].sent)
			m->fc[id].sent(m->fc[id].ctx, m->fc[id].arg);
	}
	if (m->mm.ndirty)
		recompute(m);
	else
		schedule_finish(m);
}

static void infl_drop(hs_net_model *m, int id)
{
	fset *k = &m->sets[m->fc[id].cs];
	int p = m->fc[id].ipos;
	k->cinfl[m->fc[id].cls]--;
	k->infl[p] = k->infl[--k->ninfl];
	if (p < k->ninfl)
		m->fc[k->infl[p]].ipos = p;
	m->fc[id].cs = m->fc[id].ipos = -1;
}

static int new_flow(hs_net_model *m, double bytes, hs_time lat, hs_net_done sent, hs_net_done done, void *ctx,
		    uint64_t arg)
{
	int id;
	if (m->free_head >= 0) {
		id = m->free_head;
		m->free_head = m->fc[id].next_free;
	} else {
		id = hs_maxmin_new_flow(&m->mm);
		hs_xgrow(&m->fc, &m->capfc, m->mm.nfl, sizeof *m->fc);
	}
	assert(!fh_queued(m, id) && "a flow record is reused once it has left the finish queue");
	hs_maxmin_flow *f = &m->mm.fl[id];
	f->rem = bytes;
	f->t_upd = hs_engine_now(m->eng);
	f->t_fin = HS_TIME_MAX;
	m->fc[id] = (fcold){lat, sent, done, NULL, ctx, arg, -1, -1, -1, -1, 0, NULL, 1};
	return id;
}

/* A flow's bytes left now: what sym_break cuts a class flow with, the rate it has had since its last update. */
static double rem_now(const hs_net_model *m, const hs_maxmin_flow *f)
{
	double rem = f->rem - f->rate * (double)(hs_engine_now(m->eng) - f->t_upd);
	return rem < 0 ? 0 : rem;
}

/* Another flow is about to enter a link of group g: its sets stop standing for their members (they share
 * links, so none holds without the others). The owners hear of it first, then each class flow in flight
 * leaves the solver with what its members have left. */
static void sym_break(hs_net_model *m, int g)
{
	int cap = m->gn[g], nb = 0, *bs = hs_xmalloc((size_t)(cap ? cap : 1) * sizeof *bs);
	for (int cs = 0; cs < m->nsets && nb < cap; cs++) {
		fset *k = &m->sets[cs];
		if (!k->used || !k->live || k->grp != g)
			continue;
		bs[nb++] = cs;
		for (int i = 0; i < k->nlinks; i++)
			m->ln[k->links[i]].rsv = -1, m->ln[k->links[i]].rcnt = 0;
		k->live = 0;
		k->grp = -1;
	}
	m->gn[g] = 0;
	for (int b = 0; b < nb; b++) {
		int cs = bs[b];
		m->sets[cs].broken(m->sets[cs].bctx);
		while (m->sets[cs].ninfl) {
			fset *k = &m->sets[cs]; /* a cut starts flows, which may move the sets */
			int id = k->infl[k->ninfl - 1];
			hs_maxmin_flow *f = &m->mm.fl[id];
			double rem = rem_now(m, f);
			if (fh_queued(m, id))
				fh_remove(m, id);
			if (!m->fc[id].iso)
				solver_out(m, id);
			infl_drop(m, id);
			m->fc[id].in = 0;
			m->active--;
			fcold c = m->fc[id];
			m->fc[id].next_free = m->free_head;
			m->free_head = id;
			c.cut(c.ctx, c.arg, rem);
		}
	}
	free(bs);
	want_recompute(m);
}

static int xstart(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		  uint64_t arg)
{
	/* A reserved twin's partner is reserved too (a route through one crosses the other, find_twins), so the
	 * links but the twins tell whether this flow enters a set's links or a hold. A break may start flows, whose
	 * routes may move the memos. */
	const struct rmemo *q = route_memo(m, r);
	for (int i = 0; i < q->nsl; i++) {
		int g = m->ln[rm_sl(q)[i]].rsv;
		if (g == -1)
			continue;
		if (g >= 0)
			sym_break(m, g);
		else
			hold_break(m, -2 - g);
		q = route_memo(m, r);
		i = -1; /* from the first link again: an owner told of a break may hold links this flow crosses
			 * (a ring whose set broke goes on with its hops held) */
	}
	/* alone when no flow crosses its links; a flow timed alone there joins the solver first */
	int alone = 1;
	for (int i = 0; i < q->nsl; i++) {
		int l = rm_sl(q)[i];
		if (m->ln[l].alone_on >= 0)
			alone_join(m, m->ln[l].alone_on);
		alone &= m->ln[l].nsolv == 0;
	}
	int id = new_flow(m, bytes, r->lat, sent, done, ctx, arg);
	m->active++;
	if (alone) {
		q = &m->rm[r->id]; /* alone_join does not reach the memo, nor does new_flow; the same record */
		m->fc[id].r = r;
		for (int i = 0; i < q->nsl; i++)
			m->ln[rm_sl(q)[i]].alone_on = id;
		alone_start_at(m, id, q->alone);
		return id;
	}
	hs_maxmin_add(&m->mm, id, r->nl, r->link, r->coef);
	solver_in(m, id);
	want_recompute(m);
	return id;
}

static void start(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		  uint64_t arg)
{
	xstart(m, r, bytes, sent, done, ctx, arg);
}

static int xpeek(const hs_net_model *m, int id, double *rem, hs_time *fin)
{
	const hs_maxmin_flow *f = &m->mm.fl[id];
	*fin = f->t_fin;
	if (!m->fc[id].in)
		return 0;
	if (f->t_fin <= hs_engine_now(m->eng))
		return -1;
	*rem = rem_now(m, f);
	return 1;
}

static void xtake(hs_net_model *m, int id)
{
	assert(m->fc[id].in && m->fc[id].cs < 0 && "only a plain flow in the solver is taken");
	if (fh_queued(m, id))
		fh_remove(m, id);
	if (!m->fc[id].iso)
		solver_out(m, id);
	else
		alone_release(m, id);
	m->fc[id].in = 0;
	m->active--;
	m->fc[id].next_free = m->free_head;
	m->free_head = id;
	want_recompute(m);
}

/* No other set on s's links, and no flow on them but h[0..nh): each of those crosses its nl solver links, all
 * in s's union (they are its members' routes), and a link's n counts each flow on it once. */
static int sym_fits(const hs_net_model *m, const hs_netsym *s, const int *h, int nh)
{
	long own = 0, on = 0;
	for (int k = 0; k < nh; k++)
		if (!m->fc[h[k]].iso) /* a flow timed alone holds its links in alone_on, not in the solver */
			own += m->mm.fl[h[k]].nl;
	for (int u = 0; u < s->orb_off[s->norb]; u++) {
		int l = s->orb_link[u];
		if (m->ln[l].rsv != -1)
			return 0;
		on += m->ln[l].nsolv;
		if (m->ln[l].alone_on >= 0) {
			int k = 0;
			while (k < nh && h[k] != m->ln[l].alone_on)
				k++;
			if (k == nh)
				return 0;
		}
	}
	return on == own;
}

typedef struct lc {
	int l;
	double c;
} lc;

static int cmp_lc(const void *x, const void *y)
{
	const lc *a = x, *b = y;
	return (a->l > b->l) - (a->l < b->l);
}

/* A set on s in group g (-1: a group of its own): its links must be free, or reserved by g (whose flows on
 * them are g's class flows: anything else would have broken it). */
static int sym_open_in(hs_net_model *m, const hs_netsym *s, int g, void (*broken)(void *ctx), void *ctx)
{
	int nU = s->orb_off[s->norb];
	for (int u = 0; u < nU; u++) {
		int l = s->orb_link[u];
		if (m->ln[l].rsv != -1 ? m->ln[l].rsv != g : m->ln[l].nsolv > 0 || m->ln[l].alone_on >= 0)
			return -1;
	}
	int joint = g >= 0;
	if (g < 0) {
		for (g = 0; g < m->ngrp && m->gn[g]; g++)
			;
		if (g == m->ngrp) {
			m->gn = hs_xrealloc(m->gn, (size_t)(m->ngrp + 1) * sizeof *m->gn);
			m->gn[m->ngrp++] = 0;
		}
	}
	int cs;
	for (cs = 0; cs < m->nsets && m->sets[cs].used; cs++)
		;
	if (cs == m->nsets) {
		if (m->nsets == m->capsets) {
			m->capsets = m->capsets ? 2 * m->capsets : 4;
			m->sets = hs_xrealloc(m->sets, (size_t)m->capsets * sizeof *m->sets);
		}
		memset(&m->sets[m->nsets++], 0, sizeof *m->sets);
	}
	fset *k = &m->sets[cs];
	k->used = k->live = 1;
	k->grp = g;
	m->gn[g]++;
	k->broken = broken;
	k->bctx = ctx;
	k->ninfl = 0;
	k->nlinks = nU;
	k->links = hs_xrealloc(k->links, (size_t)(nU ? nU : 1) * sizeof *k->links);
	memcpy(k->links, s->orb_link, (size_t)nU * sizeof *k->links);
	for (int u = 0; u < nU; u++)
		m->ln[k->links[u]].rsv = g, m->ln[k->links[u]].rcnt++;
	/* each orbit's link in the solver: its lowest that is not a twin (-1: twins only, left out) */
	int *orep = hs_xmalloc((size_t)(s->norb ? s->norb : 1) * sizeof *orep);
	for (int o = 0; o < s->norb; o++) {
		orep[o] = -1;
		for (int u = s->orb_off[o]; u < s->orb_off[o + 1]; u++) {
			int l = s->orb_link[u];
			if (m->mm.lk[l].twin < 0 && (orep[o] < 0 || l < orep[o]))
				orep[o] = l;
		}
	}
	int nc = s->c_off[s->ncls];
	k->ncls = s->ncls;
	k->hoff = hs_xrealloc(k->hoff, ((size_t)s->ncls + 1) * sizeof *k->hoff);
	k->hl = hs_xrealloc(k->hl, (size_t)(nc ? nc : 1) * sizeof *k->hl);
	k->hc = hs_xrealloc(k->hc, (size_t)(nc ? nc : 1) * sizeof *k->hc);
	k->lat = hs_xrealloc(k->lat, (size_t)s->ncls * sizeof *k->lat);
	lc *v = hs_xmalloc((size_t)(nc ? nc : 1) * sizeof *v);
	int w = 0;
	for (int j = 0; j < s->ncls; j++) {
		int n = 0;
		k->hoff[j] = w;
		k->lat[j] = s->c_lat[j];
		for (int q = s->c_off[j]; q < s->c_off[j + 1]; q++)
			if (orep[s->c_orb[q]] >= 0)
				v[n++] = (lc){orep[s->c_orb[q]], s->c_coef[q]};
		qsort(v, (size_t)n, sizeof *v, cmp_lc);
		for (int i = 0; i < n; i++, w++)
			k->hl[w] = v[i].l, k->hc[w] = v[i].c;
	}
	k->hoff[s->ncls] = w;
	free(v);
	free(orep);
	/* the classes alone on their links (lcnt counts the classes crossing each, and is cleared after); none in
	 * a set opened beside another, whose links the other's classes cross too */
	k->iso = hs_xrealloc(k->iso, (size_t)(s->ncls ? s->ncls : 1));
	k->cinfl = hs_xrealloc(k->cinfl, (size_t)(s->ncls ? s->ncls : 1) * sizeof *k->cinfl);
	for (int q = 0; q < w; q++)
		m->lcnt[k->hl[q]]++;
	k->anyiso = 0;
	for (int j = 0; j < s->ncls; j++) {
		k->cinfl[j] = 0;
		k->iso[j] = !joint && k->hoff[j + 1] > k->hoff[j];
		for (int q = k->hoff[j]; q < k->hoff[j + 1]; q++)
			k->iso[j] &= m->lcnt[k->hl[q]] == 1;
		k->anyiso |= k->iso[j];
	}
	for (int q = 0; q < w; q++)
		m->lcnt[k->hl[q]] = 0;
	return cs;
}

static int sym_open(hs_net_model *m, const hs_netsym *s, void (*broken)(void *ctx), void *ctx)
{
	return sym_open_in(m, s, -1, broken, ctx);
}

static int sym_open_joint(hs_net_model *m, const hs_netsym *s, int with, void (*broken)(void *ctx), void *ctx)
{
	if (with < 0 || with >= m->nsets || !m->sets[with].used || !m->sets[with].live)
		return -1;
	return sym_open_in(m, s, m->sets[with].grp, broken, ctx);
}

/* The live set whose group holds the links of s that are taken, where that is one group and the links it
 * does not hold carry no flow; -1 otherwise. */
static int sym_holder(const hs_net_model *m, const hs_netsym *s)
{
	int g = -1;
	for (int u = 0; u < s->orb_off[s->norb]; u++) {
		int l = s->orb_link[u];
		if (m->ln[l].rsv < -1)
			return -1; /* held (a hold is no set to join) */
		if (m->ln[l].rsv < 0 ? m->ln[l].nsolv > 0 || m->ln[l].alone_on >= 0 : g >= 0 && m->ln[l].rsv != g)
			return -1;
		if (m->ln[l].rsv >= 0)
			g = m->ln[l].rsv;
	}
	/* a group whose classes are timed alone takes no other set: its classes would no longer be alone */
	int holder = -1;
	for (int cs = 0; g >= 0 && cs < m->nsets; cs++)
		if (m->sets[cs].used && m->sets[cs].live && m->sets[cs].grp == g) {
			if (m->sets[cs].anyiso)
				return -1;
			if (holder < 0)
				holder = cs;
		}
	return holder;
}

/* A flow alone on links hl (its set's reservation keeps everything else off them): the rate progressive
 * filling gives it (fill: the link of least share res / w pops first, res = bw and w = the coefficient, the
 * rate that share held above 1e-15 of the link), and the finish the recompute of this instant would set. */
static double alone_rate(const hs_net_model *m, int nl, const int *hl, const double *hc)
{
	double x = INFINITY, bw = 0;
	for (int i = 0; i < nl; i++) {
		const hs_maxmin_link *l = &m->mm.lk[hl[i]];
		if (l->twin >= 0 || hc[i] <= 1e-12) /* not in the solver's flow (hs_maxmin_add); out of the filling */
			continue;
		double y = (l->bw > 0 ? l->bw : 0) / hc[i];
		if (y < x)
			x = y, bw = l->bw;
	}
	return x > 1e-15 * bw ? x : 1e-15 * bw;
}

static const struct rmemo *route_memo(hs_net_model *m, const hs_route *r)
{
	size_t i = (size_t)r->id;
	if (i >= m->caprm) {
		size_t cap = m->caprm;
		hs_xgrow(&m->rm, &m->caprm, i + 1, sizeof *m->rm);
		memset(m->rm + cap, 0, (m->caprm - cap) * sizeof *m->rm);
	}
	struct rmemo *q = &m->rm[i];
	if (q->r != r) {
		q->r = r;
		q->alone = alone_rate(m, r->nl, r->link, r->coef);
		free(q->ext);
		q->ext = r->nl > RM_IN ? hs_xmalloc((size_t)r->nl * sizeof *q->ext) : NULL;
		int *sl = q->ext ? q->ext : q->in;
		q->nsl = 0;
		for (int k = 0; k < r->nl; k++)
			if (m->mm.lk[r->link[k]].twin < 0)
				sl[q->nsl++] = r->link[k];
	}
	return q;
}

static void alone_start(hs_net_model *m, int id, int nl, const int *hl, const double *hc)
{
	alone_start_at(m, id, alone_rate(m, nl, hl, hc));
}

static void alone_start_at(hs_net_model *m, int id, double rate)
{
	hs_maxmin_flow *f = &m->mm.fl[id];
	hs_time now = hs_engine_now(m->eng);
	m->fc[id].iso = 1;
	f->rate = rate;
	f->t_upd = now;
	hs_time d = hs_time_for(f->rem, f->rate);
	f->t_fin = d > HS_TIME_MAX - now ? HS_TIME_MAX : now + d;
	fh_set(m, id);
	schedule_finish(m);
}

/* A flow timed alone joins the solver on links hl, as if it had been there from its start (its remainder,
 * last update and finish stay as its start set them; hs_maxmin_add_rated). */
static void alone_to_solver(hs_net_model *m, int id, int nl, const int *hl, const double *hc)
{
	m->fc[id].iso = 0;
	hs_maxmin_add_rated(&m->mm, id, nl, hl, hc, m->mm.fl[id].rate);
	solver_in(m, id);
}

/* A flow outside any set, timed alone, gives its links back (at its finish), or joins the solver. */
static void alone_release(hs_net_model *m, int id)
{
	const hs_route *r = m->fc[id].r;
	if ((size_t)r->id < m->caprm && m->rm[r->id].r == r) { /* its links but the twins, which it never holds */
		const struct rmemo *q = &m->rm[r->id];
		for (int i = 0; i < q->nsl; i++)
			if (m->ln[rm_sl(q)[i]].alone_on == id)
				m->ln[rm_sl(q)[i]].alone_on = -1;
		return;
	}
	for (int i = 0; i < r->nl; i++)
		if (m->ln[r->link[i]].alone_on == id)
			m->ln[r->link[i]].alone_on = -1;
}

static void alone_join(hs_net_model *m, int id)
{
	const hs_route *r = m->fc[id].r;
	alone_release(m, id);
	alone_to_solver(m, id, r->nl, r->link, r->coef);
}

static int sym_start(hs_net_model *m, int cs, int cls, double bytes, hs_net_done sent, hs_net_done done,
		     void (*cut)(void *ctx, uint64_t arg, double rem), void *ctx, uint64_t arg)
{
	fset *k = &m->sets[cs];
	/* the owner stops starting class flows when it hears its set is broken */
	assert(k->used && k->live && cls >= 0 && cls < k->ncls);
	int id = new_flow(m, bytes, k->lat[cls], sent, done, ctx, arg);
	k = &m->sets[cs];
	m->fc[id].cut = cut;
	m->fc[id].cs = cs;
	if (k->ninfl == k->capinfl) {
		k->capinfl = k->capinfl ? 2 * k->capinfl : 4;
		k->infl = hs_xrealloc(k->infl, (size_t)k->capinfl * sizeof *k->infl);
	}
	m->fc[id].ipos = k->ninfl;
	m->fc[id].cls = cls;
	k->infl[k->ninfl++] = id;
	m->active++;
	int nl = k->hoff[cls + 1] - k->hoff[cls];
	const int *hl = k->hl + k->hoff[cls];
	const double *hc = k->hc + k->hoff[cls];
	if (k->iso[cls] && k->cinfl[cls] == 0) {
		k->cinfl[cls]++;
		alone_start(m, id, nl, hl, hc);
		return 1;
	}
	if (k->iso[cls]) { /* a second flow of the class: the one in flight joins the solver first */
		k->iso[cls] = 0;
		for (int i = 0; i < k->ninfl; i++) {
			int o = k->infl[i];
			if (m->fc[o].iso && m->fc[o].cls == cls)
				alone_to_solver(m, o, nl, hl, hc);
		}
	}
	k->cinfl[cls]++;
	hs_maxmin_add(&m->mm, id, nl, hl, hc);
	solver_in(m, id);
	want_recompute(m);
	return 0;
}

static void sym_close(hs_net_model *m, int cs)
{
	fset *k = &m->sets[cs];
	assert(k->used && k->ninfl == 0 && "a class set closes with none of its flows in flight");
	if (k->live) {
		for (int i = 0; i < k->nlinks; i++)
			if (--m->ln[k->links[i]].rcnt == 0)
				m->ln[k->links[i]].rsv = -1;
		m->gn[k->grp]--;
	}
	k->used = k->live = 0;
	k->grp = -1;
}

static size_t active(const hs_net_model *m) { return m->active; }

static double sym_alone_rate(hs_net_model *m, int cs, int cls)
{
	const fset *k = &m->sets[cs];
	if (!k->live || !k->iso[cls] || k->cinfl[cls])
		return 0;
	return alone_rate(m, k->hoff[cls + 1] - k->hoff[cls], k->hl + k->hoff[cls], k->hc + k->hoff[cls]);
}

/* ---- holds (see the top) ---- */

/* Whether link l may be held: no flow, set or hold on it (a twin carries no flow of its own: its partner tells). */
static int holdable(const hs_net_model *m, int l)
{
	const struct lnk *k = &m->ln[l];
	return m->mm.lk[l].twin >= 0 || (k->rsv == -1 && k->nsolv == 0 && k->alone_on < 0);
}

static int hold(hs_net_model *m, const hs_route *r, const int *links, int nlinks, double *rate,
		void (*broken)(void *ctx, uint64_t arg), void *ctx, uint64_t arg)
{
	const struct rmemo *q = r ? route_memo(m, r) : NULL;
	const int *ls = q ? rm_sl(q) : links;
	int nl = q ? q->nsl : nlinks;
	for (int i = 0; i < nl; i++)
		if (!holdable(m, ls[i]))
			return -1;
	int h = m->hd_free;
	if (h >= 0)
		m->hd_free = m->hd[h].next_free;
	else {
		hs_xgrow(&m->hd, &m->caphd, m->nhd + 1, sizeof *m->hd);
		h = (int)m->nhd++;
	}
	m->hd[h] = (struct fhold){r, q ? NULL : links, nlinks, broken, ctx, arg, -2};
	for (int i = 0; i < nl; i++)
		if (m->mm.lk[ls[i]].twin < 0)
			m->ln[ls[i]].rsv = -2 - h;
	if (rate)
		*rate = q ? q->alone : 0;
	return h;
}

static void unhold(hs_net_model *m, int h)
{
	assert(h >= 0 && (size_t)h < m->nhd && m->hd[h].next_free == -2 && "a hold is released once");
	const struct fhold *o = &m->hd[h];
	const struct rmemo *q = o->r ? route_memo(m, o->r) : NULL; /* made when the hold was taken: none moves */
	const int *ls = q ? rm_sl(q) : o->links;
	int nl = q ? q->nsl : o->nlinks;
	for (int i = 0; i < nl; i++)
		if (m->ln[ls[i]].rsv == -2 - h)
			m->ln[ls[i]].rsv = -1;
	m->hd[h].next_free = m->hd_free;
	m->hd_free = h;
}

static int solo(hs_net_model *m, const hs_route *const *r, int nr, double bytes, hs_time stop, hs_time *fin,
		double *rem)
{
	return hs_solo_run(&m->mm, r, nr, bytes, stop, fin, rem);
}

/* The max-min rates of n flows on routes r[0..n) with nothing else on their links, as the solver's fill rates
 * them: each link's res = bw and w its flows' coefficients; the link of least (share res / w, id) pops and
 * freezes its flows at its share (above 1e-15 of its bw), whose use comes off their other links still in the
 * filling (w > 1e-12). Twins are left out, as the solver's flows leave them. n is a ring's bundle (a few
 * flows on a few links): the links are found by a scan. */
static void fill_alone(hs_net_model *m, const hs_route *const *r, int n, double *rate)
{
	struct fl_link {
		int l;
		double res, w;
		char out;
	};
	size_t need = 0;
	for (int i = 0; i < n; i++)
		need += (size_t)r[i]->nl;
	struct fl_link *L = hs_xmalloc((need ? need : 1) * sizeof *L);
	int nl = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < r[i]->nl; k++) {
			int l = r[i]->link[k], j = 0;
			if (m->mm.lk[l].twin >= 0)
				continue;
			while (j < nl && L[j].l != l)
				j++;
			if (j == nl)
				L[nl++] = (struct fl_link){l, m->mm.lk[l].bw, 0, 0};
			L[j].w += r[i]->coef[k];
		}
	for (int i = 0; i < n; i++)
		rate[i] = -1;
	for (;;) {
		int b = -1;
		double x = 0;
		for (int j = 0; j < nl; j++) {
			if (L[j].out || L[j].w <= 1e-12)
				continue;
			double y = (L[j].res > 0 ? L[j].res : 0) / L[j].w;
			if (b < 0 || y < x || (y == x && L[j].l < L[b].l))
				b = j, x = y;
		}
		if (b < 0)
			break;
		L[b].out = 1;
		double bw = m->mm.lk[L[b].l].bw;
		for (int i = 0; i < n; i++) {
			if (rate[i] >= 0)
				continue;
			int on = 0;
			for (int k = 0; k < r[i]->nl && !on; k++)
				on = r[i]->link[k] == L[b].l;
			if (!on)
				continue;
			rate[i] = x > 1e-15 * bw ? x : 1e-15 * bw;
			for (int k = 0; k < r[i]->nl; k++)
				for (int j = 0; j < nl; j++)
					if (L[j].l == r[i]->link[k] && j != b && !L[j].out && L[j].w > 1e-12) {
						L[j].res -= x * r[i]->coef[k];
						L[j].w -= r[i]->coef[k];
					}
		}
	}
	for (int i = 0; i < n; i++) /* on no link of the filling (every coefficient 0): as a flow alone there */
		if (rate[i] < 0)
			rate[i] = alone_rate(m, r[i]->nl, r[i]->link, r[i]->coef);
	free(L);
}

static void hold_break(hs_net_model *m, int h)
{
	struct fhold o = m->hd[h];
	unhold(m, h);
	o.broken(o.ctx, o.arg);
}

const hs_net_ops hs_net_flow = {"flow",	     create,	 destroy, start,    active,	    sym_open,
				sym_start,   sym_close,	 sym_alone_rate, xstart, xpeek, xtake, sym_fits,
				sym_open_joint, sym_holder, hold, unhold, solo, fill_alone};
