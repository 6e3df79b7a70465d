/* Hierarchical and in-switch collectives on the network model.
 *   hierarchical (pipelined over chunks, sim/net/netcoll_pipe.c): all-reduce: ring reduce-scatter inside
 *   every node, ring all-reduce across nodes per local index (1/ppn of the chunk), ring all-gather inside
 *   every node; all-gather: across nodes then inside nodes; reduce-scatter: inside nodes then across;
 *   broadcast and reduce: the chain (ring module).
 *   in-switch: phases, each a set of transfers or of child collectives that run at once; a phase starts when
 *   the previous one has finished everywhere.
 *   in-switch all-reduce (NVLS, SHARP): every device pushes S to its node's scale-up switch, which reduces;
 *   across nodes the S/ppn shares are all-reduced by the fabric's switches (SHARP: up to a top switch and
 *   back) or by a ring per local index; the switch multicasts S back to every device.
 * Groups with unequal devices per node run the ring instead. */
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_pipe.h"

typedef struct pstate {
	int N, ppn, phase, pending, sharp;
	int *byn; /* [N * ppn]: rank index of local index l on node k at [k * ppn + l] */
} pstate;

static int layout(nc_run *r, pstate *s) { return hs_nc_layout(r, &s->N, &s->ppn, &s->byn); }

static void child(nc_run *r, enum hs_coll_op op, int *idx, int cnt, double bytes)
{
	pstate *s = r->st;
	int *dev = hs_xmalloc((size_t)cnt * sizeof *dev);
	for (int i = 0; i < cnt; i++)
		dev[i] = r->rk[idx[i]];
	hs_err err = {0};
	r->outstanding++;
	s->pending++;
	if (hs_net_collective(r->net, op, HS_ALGO_RING, dev, cnt, bytes, hs_netcoll_child_cb, r, 0, &err)) {
		r->outstanding--; /* cannot happen: the devices come from a checked group */
		s->pending--;
	}
	free(dev);
}

static void inter(nc_run *r, enum hs_coll_op op, double bytes)
{
	pstate *s = r->st;
	int *idx = hs_xmalloc((size_t)s->N * sizeof *idx);
	for (int l = 0; l < s->ppn; l++) {
		for (int k = 0; k < s->N; k++)
			idx[k] = s->byn[k * s->ppn + l];
		child(r, op, idx, s->N, bytes);
	}
	free(idx);
}

static void sfree(nc_run *r)
{
	pstate *s = r->st;
	if (s)
		free(s->byn);
	free(s);
}

/* One chunk's stage of the pipelined hierarchical program (netcoll_pipe.c): chunk j is c bytes of each
 * rank's buffer (all-reduce) or of each rank's piece (all-gather, reduce-scatter: sizes of the rings are
 * their whole output or input, as sim/coll/coll.h counts). The rings are the pipeline's (hs_nc_pipe_ring), the
 * inter-node rings of the p local indices sharing the nodes' NICs, each on its GPU's own NIC, as the closed form
 * (sim/coll/coll_hier.c) counts them. */
static void hier_stage(nc_run *r, int k, long j)
{
	nc_pipe *p = r->st;
	int N = p->N, P = p->ppn;
	double c = p->c;
	enum hs_coll_op op = r->op;
	/* all-reduce: RS inside, AR across, AG inside; all-gather: AG across, AG inside; reduce-scatter: RS
	 * inside, RS across */
	int inside = op == HS_COLL_ALL_REDUCE ? k != 1 : op == HS_COLL_ALL_GATHER ? k == 1 : k == 0;
	enum hs_coll_op cop = op == HS_COLL_ALL_REDUCE ? (k == 0 ? HS_COLL_REDUCE_SCATTER
						      : k == 1 ? HS_COLL_ALL_REDUCE
							       : HS_COLL_ALL_GATHER)
			      : op;
	double bytes = op == HS_COLL_ALL_REDUCE ? (k == 1 ? c / P : c) : (inside ? c * r->n : c * N);
	if (inside) {
		if (P > 1)
			for (int q = 0; q < N; q++)
				hs_nc_pipe_ring(r, cop, p->byn + (size_t)q * P, P, bytes, j);
		return;
	}
	if (N < 2)
		return;
	int *idx = hs_xmalloc((size_t)N * sizeof *idx);
	for (int l = 0; l < P; l++) {
		for (int q = 0; q < N; q++)
			idx[q] = p->byn[q * P + l];
		hs_nc_pipe_ring(r, cop, idx, N, bytes, j);
	}
	free(idx);
}

static void hier_start(nc_run *r)
{
	double unit = r->op == HS_COLL_ALL_REDUCE ? r->S : r->S / r->n;
	nc_pipe *p = hs_nc_pipe_new(r, unit);
	if (r->op == HS_COLL_BROADCAST || r->op == HS_COLL_REDUCE || !p->byn) {
		hs_nc_pipe_fallback(r, &hs_nc_ring);
		return;
	}
	hs_nc_pipe_run(r, r->op == HS_COLL_ALL_REDUCE ? 3 : 2, hier_stage);
}

const nc_algo hs_nc_hier = {"hierarchical", hier_start, NULL, NULL, NULL};

/* ---- in-switch ---- */

static void push(nc_run *r, int up, double bytes)
{
	pstate *s = r->st;
	for (int i = 0; i < r->n; i++) {
		int sw = hs_topo_upswitch(r->net->t, hs_cluster_node_of(r->net->c, r->rk[i]));
		s->pending++;
		if (up)
			hs_netcoll_send_v(r, r->rk[i], sw, bytes, -1, 0);
		else
			hs_netcoll_send_v(r, sw, r->rk[i], bytes, -1, 0);
	}
}

static void sharp(nc_run *r, int up, double bytes)
{
	pstate *s = r->st;
	int top = hs_topo_top_switch(r->net->t);
	for (int i = 0; i < r->n; i++) {
		s->pending++;
		if (up)
			hs_netcoll_send_v(r, r->rk[i], top, bytes, -1, 0);
		else
			hs_netcoll_send_v(r, top, r->rk[i], bytes, -1, 0);
	}
}

static void ins_phase(nc_run *r)
{
	pstate *s = r->st;
	double S = r->S, P = s->ppn;
	for (; s->pending == 0; s->phase++) {
		switch (s->phase) {
		case 0: if (s->ppn > 1) push(r, 1, S); break;
		case 1:
			if (s->N > 1 && s->sharp)
				sharp(r, 1, S / P);
			else if (s->N > 1)
				inter(r, HS_COLL_ALL_REDUCE, S / P);
			break;
		case 2: if (s->N > 1 && s->sharp) sharp(r, 0, S / P); break;
		case 3: if (s->ppn > 1) push(r, 0, S); break;
		default: return;
		}
	}
}

static void ins_done(nc_run *r, uint64_t tag)
{
	(void)tag;
	pstate *s = r->st;
	if (--s->pending == 0)
		ins_phase(r);
}

static void ins_start(nc_run *r)
{
	pstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	int ok = r->op == HS_COLL_ALL_REDUCE && layout(r, s);
	if (ok && s->ppn > 1)
		for (int i = 0; i < r->n && ok; i++)
			ok = hs_topo_upswitch(r->net->t, hs_cluster_node_of(r->net->c, r->rk[i])) >= 0;
	s->sharp = hs_cluster_fabric(r->net->c)->reduce && hs_topo_top_switch(r->net->t) >= 0;
	if (!ok) {
		sfree(r);
		r->st = NULL;
		r->alg = &hs_nc_ring;
		r->alg->start(r);
		return;
	}
	ins_phase(r);
}

const nc_algo hs_nc_inswitch = {"inswitch", ins_start, ins_done, sfree, NULL};
