/* Pipelined phases on the network model: the step-by-step form of sim/coll's hs_coll_pipe. The message is cut
 * into M chunks of HS_COLL_PIPE_CHUNK bytes of the per-rank buffer; every chunk goes through the stages in
 * order (a stage being a set of transfers or child collectives that run at once, launched by the program's
 * `stage` function), and a stage works on up to a window of chunks at once, taken in order. So while the
 * NICs carry chunk j, NVLink reduces the chunks after it and gathers the ones before: the phases overlap as
 * NCCL's do, and on an idle network the time is the fill plus the busiest resource's time. The window
 * (NC_PIPE_STEPS, NC_PIPE_BUFF below) hides each chunk's hop latencies behind the others' bytes as NCCL's
 * buffers do. Used by the hierarchical program (netcoll_hier.c) and NVLS /
 * NVLS-tree (netcoll_nvls.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_pipe.h"

/* Chunks a stage may hold at once: NCCL_STEPS = 8 steps in flight per connection (src/include/device.h), or as
 * many chunks as NCCL's buffer per connection holds (DEFAULT_BUFFSIZE 4 MiB, src/init.cc) of what one GPU moves
 * across nodes per chunk (c / ppn), when that is more: NCCL keeps its 4 MiB in flight per connection whatever
 * the piece size, and with 1 MiB chunks over 8 GPUs a GPU's 128 KiB per chunk leaves 8 chunks short of the
 * NICs' bandwidth-delay product (2 x 400 Gb/s NICs' 50 GB/s x about 25 us per round trip). */
#define NC_PIPE_STEPS 8
#define NC_PIPE_BUFF (4.0 * 1048576)

int hs_nc_layout(nc_run *r, int *N_out, int *ppn_out, int **byn_out)
{
	const hs_cluster *c = r->net->c;
	int *node = hs_xmalloc((size_t)r->n * sizeof *node);
	/* nodes in order of first appearance */
	int *nid = hs_xmalloc((size_t)r->n * sizeof *nid), *cnt = hs_xcalloc((size_t)r->n, sizeof *cnt);
	int N = 0;
	for (int i = 0; i < r->n; i++) {
		int nd = hs_cluster_domain_of(c, r->rk[i]), k = 0; /* scale-up domains: an NVL72 rack is one */
		while (k < N && nid[k] != nd)
			k++;
		if (k == N)
			nid[N++] = nd;
		node[i] = k;
		cnt[k]++;
	}
	int ppn = cnt[0], ok = 1;
	for (int k = 0; k < N; k++)
		ok &= cnt[k] == ppn;
	*byn_out = NULL;
	if (ok) {
		int *byn = hs_xmalloc((size_t)r->n * sizeof *byn);
		memset(cnt, 0, (size_t)r->n * sizeof *cnt);
		for (int i = 0; i < r->n; i++)
			byn[node[i] * ppn + cnt[node[i]]++] = i;
		*byn_out = byn;
	}
	*N_out = N;
	*ppn_out = ppn;
	free(node);
	free(nid);
	free(cnt);
	return ok;
}

void hs_nc_pipe_child(nc_run *r, enum hs_coll_op op, enum hs_coll_algo algo, const int *idx, int cnt, double bytes,
		      long j, int one_channel)
{
	nc_pipe *p = r->st;
	int *dev = hs_xmalloc((size_t)cnt * sizeof *dev);
	for (int i = 0; i < cnt; i++)
		dev[i] = r->rk[idx[i]];
	hs_err err = {0};
	hs_net *net = r->net;
	int ch = net->channels, sp = net->spread;
	if (one_channel) /* a child of one local index per node crosses on that GPU's own NIC */
		net->channels = 1, net->spread = 0;
	r->outstanding++;
	p->pend[j]++;
	if (hs_net_collective(net, op, algo, dev, cnt, bytes, hs_netcoll_child_cb, r, (uint64_t)j, &err)) {
		r->outstanding--; /* cannot happen: the devices come from a checked group */
		p->pend[j]--;
	}
	net->channels = ch, net->spread = sp;
	free(dev);
}

void hs_nc_pipe_send_v(nc_run *r, int va, int vb, double bytes, long j)
{
	nc_pipe *p = r->st;
	p->pend[j]++;
	hs_netcoll_send_v(r, va, vb, bytes, -1, (uint64_t)j);
}

/* Start what can start: stage k takes its next chunk once that chunk has left stage k - 1 and fewer than the
 * window's chunks are in stage k. A stage that launches nothing ends at once. */
static void pump(nc_run *r)
{
	nc_pipe *p = r->st;
	for (int progress = 1; progress;) {
		progress = 0;
		for (int k = 0; k < p->nst; k++)
			while (p->inflight[k] < p->window && p->nxt[k] < p->M && p->state[p->nxt[k]] == 2 * k) {
				long j = p->nxt[k]++;
				p->state[j] = 2 * k + 1;
				p->inflight[k]++;
				p->stage(r, k, j);
				if (p->pend[j] == 0) {
					p->inflight[k]--;
					p->state[j] = 2 * (k + 1);
				}
				progress = 1;
			}
	}
}

static void pipe_done(nc_run *r, uint64_t tag)
{
	nc_pipe *p = r->st;
	long j = (long)tag;
	if (--p->pend[j] > 0)
		return;
	int k = p->state[j] / 2;
	p->inflight[k]--;
	p->state[j] = 2 * (k + 1);
	pump(r);
}

static void pipe_free(nc_run *r)
{
	nc_pipe *p = r->st;
	if (!p)
		return;
	free(p->byn);
	free(p->state);
	free(p->pend);
	free(p);
}

const nc_algo hs_nc_pipe = {"pipelined", NULL, pipe_done, pipe_free, NULL};

nc_pipe *hs_nc_pipe_new(nc_run *r, double unit_bytes)
{
	nc_pipe *p = hs_xcalloc(1, sizeof *p);
	r->st = p;
	if (!hs_nc_layout(r, &p->N, &p->ppn, &p->byn))
		return p;
	p->M = (long)ceil(unit_bytes / HS_COLL_PIPE_CHUNK);
	if (p->M < 1)
		p->M = 1;
	p->c = unit_bytes / (double)p->M;
	double w = ceil(NC_PIPE_BUFF * p->ppn / p->c);
	p->window = w > NC_PIPE_STEPS ? (int)w : NC_PIPE_STEPS;
	p->state = hs_xcalloc((size_t)p->M, sizeof *p->state);
	p->pend = hs_xcalloc((size_t)p->M, sizeof *p->pend);
	return p;
}

void hs_nc_pipe_run(nc_run *r, int nstages, void (*stage)(nc_run *r, int k, long j))
{
	nc_pipe *p = r->st;
	p->nst = nstages;
	p->stage = stage;
	r->alg = &hs_nc_pipe;
	pump(r);
}

void hs_nc_pipe_fallback(nc_run *r, const nc_algo *a)
{
	pipe_free(r);
	r->st = NULL;
	r->alg = a;
	a->start(r);
}
