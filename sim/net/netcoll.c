/* hs_net_collective: checks the group, orders the ring, picks the algorithm, and runs it as transfers on the
 * network model (sim/net/netcoll_impl.h). Ring order, when on (hs_net_set_ring_order), is heterogeneity-aware:
 * devices sorted by node group, then node, then local index, so each node's devices are adjacent (one
 * scale-up hop between them), each node is entered and left once, and a ring crosses from one group (GPU
 * type, NIC speed) to the next only once each way: the slow crossings a ring cannot avoid, and no more. */
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

static void finish(nc_run *r)
{
	hs_net_done d = r->done;
	void *c = r->ctx;
	uint64_t a = r->arg;
	if (r->alg && r->alg->free)
		r->alg->free(r);
	free(r->rk);
	free(r);
	d(c, a);
}

static void sent_cb(void *ctx, uint64_t tag)
{
	nc_run *r = ctx;
	r->alg->on_sent(r, tag);
}

static void arrived_cb(void *ctx, uint64_t tag)
{
	nc_run *r = ctx;
	r->outstanding--;
	r->alg->on_done(r, tag);
	if (r->outstanding == 0)
		finish(r);
}

void hs_netcoll_child_cb(void *ctx, uint64_t tag) { arrived_cb(ctx, tag); }
void hs_netcoll_sent_cb(void *ctx, uint64_t tag) { sent_cb(ctx, tag); }

const hs_route *hs_netcoll_route_v(nc_run *r, int va, int vb, int rail)
{
	hs_err err;
	hs_err_clear(&err); /* not = {0}: this runs once per slice, and the message buffer is 1 KiB */
	if (rail == NC_ALL_RAILS)
		rail = -1;
	else if (rail < 0 && va != vb)
		rail = hs_net_home_rail(r->net, va);
	/* the topology was checked connected when built, so a missing route can only be a send to oneself */
	return va == vb ? NULL : hs_route_get(r->net->router, va, vb, rail, &err);
}

int hs_netcoll_send_route(nc_run *r, const hs_route *rt, double bytes, int sent, uint64_t tag)
{
	r->outstanding++;
	return hs_net_xfer(r->net, rt, rt ? bytes : 0, sent && r->alg->on_sent ? sent_cb : NULL, arrived_cb, r, tag);
}

int hs_netcoll_send_v(nc_run *r, int va, int vb, double bytes, int rail, uint64_t tag)
{
	return hs_netcoll_send_route(r, hs_netcoll_route_v(r, va, vb, rail), bytes, 1, tag);
}

void hs_netcoll_send(nc_run *r, int a, int b, double bytes, int rail, uint64_t tag)
{
	hs_netcoll_send_v(r, r->rk[a], r->rk[b], bytes, rail, tag);
}

double hs_netcoll_route_bw(nc_run *r, int a, int b, int rail)
{
	hs_err err = {0};
	const hs_route *rt = hs_route_get(r->net->router, r->rk[a], r->rk[b], rail == NC_ALL_RAILS ? -1 : rail, &err);
	return rt ? rt->bw : 1e300;
}

static const hs_cluster *sort_c;
static int cmp_dev(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	int ga = hs_cluster_group_of(sort_c, a), gb = hs_cluster_group_of(sort_c, b);
	if (ga != gb)
		return ga - gb;
	int na = hs_cluster_domain_of(sort_c, a), nb = hs_cluster_domain_of(sort_c, b);
	if (na != nb)
		return na - nb;
	return a - b;
}

static void empty_done(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	finish(ctx);
	(void)arg;
}

/* The step-by-step program of each algorithm (one per sim/net/netcoll_*.c), as sim/coll's table holds the
 * closed forms. */
static const nc_algo *const programs[HS_ALGO_COUNT] = {
	[HS_ALGO_RING] = &hs_nc_ring,	  [HS_ALGO_TREE] = &hs_nc_tree,		  [HS_ALGO_HALVING_DOUBLING] = &hs_nc_hd,
	[HS_ALGO_DIRECT] = &hs_nc_direct, [HS_ALGO_HIERARCHICAL] = &hs_nc_hier, [HS_ALGO_INSWITCH] = &hs_nc_inswitch,
	[HS_ALGO_NVLS] = &hs_nc_nvls,	  [HS_ALGO_NVLS_TREE] = &hs_nc_nvls, /* one program: the tree stage where N > 1 */
};

int hs_net_collective(hs_net *n, enum hs_coll_op op, enum hs_coll_algo algo, const int *ranks, int nranks,
		      double bytes, hs_net_done done, void *ctx, uint64_t arg, hs_err *err)
{
	if ((unsigned)op >= HS_COLL_OP_COUNT)
		return hs_err_set(err, HS_EINPUT, "collective operation %d is not known", (int)op);
	if ((unsigned)algo >= HS_ALGO_COUNT)
		return hs_err_set(err, HS_EINPUT, "collective algorithm %d is not known", (int)algo);
	if (!(bytes >= 0))
		return hs_err_set(err, HS_EINPUT, "a collective of %g bytes (expected a size >= 0)", bytes);
	if (!ranks || hs_coll_check(n->c, ranks, nranks, err))
		return ranks ? -1 : hs_err_set(err, HS_EINPUT, "a collective needs a group of ranks");
	if (op == HS_COLL_SENDRECV && nranks != 2)
		return hs_err_set(err, HS_EINPUT, "sendrecv takes 2 ranks (got %d)", nranks);
	nc_run *r = hs_xcalloc(1, sizeof *r);
	r->net = n, r->op = op, r->n = nranks, r->S = bytes, r->done = done, r->ctx = ctx, r->arg = arg;
	r->spread = n->spread, r->nrails = n->nrails;
	memcpy(r->rails, n->rails, sizeof r->rails);
	r->rk = hs_xmalloc((size_t)nranks * sizeof *r->rk);
	memcpy(r->rk, ranks, (size_t)nranks * sizeof *r->rk);
	if (n->ring_order && op != HS_COLL_SENDRECV && op != HS_COLL_BROADCAST && op != HS_COLL_REDUCE) {
		sort_c = n->c;
		qsort(r->rk, (size_t)nranks, sizeof *r->rk, cmp_dev);
	}
	if (nranks == 1 || bytes <= 0) {
		hs_engine_after(n->eng, 0, empty_done, r, 0);
		return 0;
	}
	/* AUTO runs what the analytical choice runs (NCCL's tuner choice), FASTEST the fastest closed form; an
	 * algorithm the operation lacks runs its default */
	algo = hs_coll_resolve_algo(n->c, op, algo, ranks, nranks, bytes);
	r->alg = programs[algo] ? programs[algo] : &hs_nc_ring;
	r->alg->start(r);
	if (r->outstanding == 0) /* nothing to move */
		hs_engine_after(n->eng, 0, empty_done, r, 0);
	return 0;
}
