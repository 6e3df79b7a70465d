/* The analytical network model: a transfer takes its route's latency plus bytes over the route's
 * bottleneck bandwidth (the slowest link, counting the share of bytes a split route puts on it), whatever
 * else is in flight: it is sent after the bytes' time and arrives one route latency later. One engine event
 * per transfer, two when the caller asks to hear when it was sent; records come from a free list.
 *
 * The executor's analytical fidelity does not run on this model: it times each collective whole by the closed
 * forms (sim/exec/comm_closed.c over sim/coll), with the algorithm's structure and route-aware bandwidths, where
 * this model times each transfer of a collective run step by step (sim/net/netcoll*.c). The two differ, so this
 * stays a network model: tests/unit/net/test_net.c runs its transfer and collective checks on it beside the
 * flow model, as the contention-free reference. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/net.h"

typedef struct arec {
	hs_net_done sent, done;
	void *ctx;
	uint64_t arg;
	int next_free;
} arec;

struct hs_net_model {
	hs_engine *eng;
	arec *r;
	size_t n, cap, active;
	int free_head;
};

static hs_net_model *create(const hs_topo *t, hs_engine *eng, hs_err *err)
{
	(void)t;
	(void)err;
	hs_net_model *m = hs_xcalloc(1, sizeof *m);
	m->eng = eng;
	m->free_head = -1;
	return m;
}

static void destroy(hs_net_model *m)
{
	if (!m)
		return;
	free(m->r);
	free(m);
}

static void arrive(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	hs_net_model *m = ctx;
	arec a = m->r[arg];
	m->r[arg].next_free = m->free_head;
	m->free_head = (int)arg;
	m->active--;
	a.done(a.ctx, a.arg);
}

static void sent_ev(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	hs_net_model *m = ctx;
	m->r[arg].sent(m->r[arg].ctx, m->r[arg].arg);
}

static void start(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		  uint64_t arg)
{
	int id;
	if (m->free_head >= 0) {
		id = m->free_head;
		m->free_head = m->r[id].next_free;
	} else {
		hs_xgrow(&m->r, &m->cap, m->n + 1, sizeof *m->r);
		id = (int)m->n++;
	}
	m->r[id] = (arec){sent, done, ctx, arg, -1};
	m->active++;
	hs_time tx = hs_time_for(bytes, r->bw);
	if (sent) /* scheduled first, so it runs first when the latency is 0 */
		hs_engine_after(m->eng, tx, sent_ev, m, (uint64_t)id);
	hs_engine_after(m->eng, r->lat + tx, arrive, m, (uint64_t)id);
}

static size_t active(const hs_net_model *m) { return m->active; }

/* no classes: without contention every transfer is timed alone, in constant time */
const hs_net_ops hs_net_analytical = {"analytical", create, destroy, start, active, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
