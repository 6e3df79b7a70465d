/* NVLS and NVLS-tree all-reduce on the network model, pipelined over chunks (sim/net/netcoll_pipe.c), the
 * step-by-step form of sim/coll/coll_nvls.c and coll_nvls_tree.c. For chunk j (c bytes of every rank's
 * buffer) on a node of p GPUs under scale-up switch X:
 *   reduce:    every GPU sends c to X (the switch's reads of its p slices) and X sends c/p to every GPU (its
 *              reduced slice);
 *   across nodes (NVLS-tree): the c/p of local index l is all-reduced over the nodes in NCCL's double binary
 *              tree (hs_nc_pipe_dtree, the shape of netcoll_tree.c), each GPU on its own NIC;
 *   multicast: every GPU sends c/p to X (its multimem store) and X sends c to every GPU (the p slices).
 * Every transfer through the switch carries 1/e of its bytes, e being NVLS's efficiency on the device
 * (hs_coll_nvls_efficiency): the link time multimem operations take per byte, as the closed form counts it.
 * Groups whose nodes hold different numbers of ranks, or a node without a scale-up switch, run the ring. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_pipe.h"

static void through_switch(nc_run *r, long j, double up, double down)
{
	nc_pipe *p = r->st;
	for (int i = 0; i < r->n; i++) {
		int sw = hs_topo_upswitch(r->net->t, hs_cluster_node_of(r->net->c, r->rk[i]));
		hs_nc_pipe_send_v(r, r->rk[i], sw, up / p->eff, j);
		hs_nc_pipe_send_v(r, sw, r->rk[i], down / p->eff, j);
	}
}

static void nvls_stage(nc_run *r, int k, long j)
{
	nc_pipe *p = r->st;
	double c = p->c, P = p->ppn;
	int last = p->N > 1 ? 2 : 1;
	if (k == 0)
		through_switch(r, j, c, c / P);
	else if (k == last)
		through_switch(r, j, c / P, c);
	else {
		int *idx = hs_xmalloc((size_t)p->N * sizeof *idx);
		for (int l = 0; l < p->ppn; l++) {
			for (int q = 0; q < p->N; q++)
				idx[q] = p->byn[q * p->ppn + l];
			hs_nc_pipe_dtree(r, idx, p->N, c / P, j);
		}
		free(idx);
	}
}

static void nvls_start(nc_run *r)
{
	nc_pipe *p = hs_nc_pipe_new(r, r->S);
	int ok = r->op == HS_COLL_ALL_REDUCE && p->byn && p->ppn > 1;
	p->eff = 1;
	for (int i = 0; ok && i < r->n; i++) {
		ok = hs_topo_upswitch(r->net->t, hs_cluster_node_of(r->net->c, r->rk[i])) >= 0;
		double e = hs_coll_nvls_efficiency(hs_cluster_device(r->net->c, r->rk[i]));
		if (e < p->eff)
			p->eff = e;
	}
	if (!ok) {
		hs_nc_pipe_fallback(r, &hs_nc_ring);
		return;
	}
	hs_nc_pipe_run(r, p->N > 1 ? 3 : 2, nvls_stage);
}

const nc_algo hs_nc_nvls = {"nvls", nvls_start, NULL, NULL, NULL};
