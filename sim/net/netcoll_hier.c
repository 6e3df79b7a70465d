/* Hierarchical and in-switch collectives on the network model: phases, each a set of transfers or of child
 * collectives that run at once; a phase starts when the previous one has finished everywhere.
 *   hierarchical all-reduce: ring reduce-scatter inside every node (S), ring all-reduce across nodes per
 *   local index (S/ppn), ring all-gather inside every node (S); all-gather: across nodes (S/ppn total per
 *   local index) then inside nodes; reduce-scatter: inside nodes then across; broadcast and reduce: the
 *   chain (ring module).
 *   in-switch all-reduce (NVLS, SHARP): every device pushes S to its node's scale-up switch, which reduces;
 *   across nodes the S/ppn shares are all-reduced by the fabric's switches (SHARP: up to a top switch and
 *   back) or by a ring per local index; the switch multicasts S back to every device.
 * Groups with unequal devices per node run the ring instead. */
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

typedef struct pstate {
	int N, ppn, phase, pending, sharp;
	int *byn; /* [N * ppn]: rank index of local index l on node k at [k * ppn + l] */
} pstate;

static int layout(nc_run *r, pstate *s)
{
	const hs_cluster *c = r->net->c;
	int *node = hs_xmalloc((size_t)r->n * sizeof *node);
	/* nodes in order of first appearance */
	int *nid = hs_xmalloc((size_t)r->n * sizeof *nid), *cnt = hs_xcalloc((size_t)r->n, sizeof *cnt);
	s->N = 0;
	for (int i = 0; i < r->n; i++) {
		int nd = hs_cluster_domain_of(c, r->rk[i]), k = 0; /* scale-up domains: an NVL72 rack is one */
		while (k < s->N && nid[k] != nd)
			k++;
		if (k == s->N)
			nid[s->N++] = nd;
		node[i] = k;
		cnt[k]++;
	}
	s->ppn = cnt[0];
	int ok = 1;
	for (int k = 0; k < s->N; k++)
		ok &= cnt[k] == s->ppn;
	if (ok) {
		s->byn = hs_xmalloc((size_t)r->n * sizeof *s->byn);
		memset(cnt, 0, (size_t)r->n * sizeof *cnt);
		for (int i = 0; i < r->n; i++)
			s->byn[node[i] * s->ppn + cnt[node[i]]++] = i;
	}
	free(node);
	free(nid);
	free(cnt);
	return ok;
}

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

static void intra(nc_run *r, enum hs_coll_op op, double bytes)
{
	pstate *s = r->st;
	for (int k = 0; k < s->N; k++)
		child(r, op, s->byn + (size_t)k * s->ppn, s->ppn, bytes);
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

static void hier_phase(nc_run *r)
{
	pstate *s = r->st;
	double S = r->S, P = s->ppn;
	for (; s->pending == 0; s->phase++) {
		int ph = s->phase;
		if (r->op == HS_COLL_ALL_REDUCE) {
			if (ph == 0)
				intra(r, HS_COLL_REDUCE_SCATTER, S);
			else if (ph == 1)
				inter(r, HS_COLL_ALL_REDUCE, S / P);
			else if (ph == 2)
				intra(r, HS_COLL_ALL_GATHER, S);
			else
				return;
		} else if (r->op == HS_COLL_ALL_GATHER) {
			if (ph == 0)
				inter(r, HS_COLL_ALL_GATHER, S / P);
			else if (ph == 1)
				intra(r, HS_COLL_ALL_GATHER, S);
			else
				return;
		} else {
			if (ph == 0)
				intra(r, HS_COLL_REDUCE_SCATTER, S);
			else if (ph == 1)
				inter(r, HS_COLL_REDUCE_SCATTER, S / P);
			else
				return;
		}
	}
}

static void on_done(nc_run *r, uint64_t tag)
{
	(void)tag;
	pstate *s = r->st;
	if (--s->pending == 0)
		hier_phase(r);
}

static void sfree(nc_run *r)
{
	pstate *s = r->st;
	if (s)
		free(s->byn);
	free(s);
}

static void hier_start(nc_run *r)
{
	pstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	if (r->op == HS_COLL_BROADCAST || r->op == HS_COLL_REDUCE || !layout(r, s)) {
		sfree(r);
		r->st = NULL;
		r->alg = &hs_nc_ring;
		r->alg->start(r);
		return;
	}
	hier_phase(r);
}

const nc_algo hs_nc_hier = {"hierarchical", hier_start, on_done, sfree, NULL};

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
