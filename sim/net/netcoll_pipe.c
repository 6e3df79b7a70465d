/* Pipelined phases on the network model: the step-by-step form of sim/coll's hs_coll_pipe. The message is cut
 * into M chunks of HS_COLL_PIPE_CHUNK bytes of the per-rank buffer; every chunk goes through the stages in
 * order (a stage being a set of transfers with dependencies among them, launched by the program's `stage`
 * function: through a switch, rings, double binary trees), and a stage works on up to a window of chunks at
 * once, taken in order. Every transfer is sent on its connection, one at a time (below). So while the NICs
 * carry chunk j, NVLink reduces the chunks after it and gathers the ones before: the phases overlap as
 * NCCL's do, and on an idle network the time is the fill plus the busiest resource's time. The window
 * (NC_PIPE_STEPS, NC_PIPE_BUFF below) hides each chunk's hop latencies behind the others' bytes as NCCL's
 * buffers do. Used by the hierarchical program (netcoll_hier.c) and NVLS / NVLS-tree (netcoll_nvls.c). */
#include <assert.h>
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

/* ---- transfers on connections ----
 * A connection is (stage, source, destination): NCCL's per-peer connection of the group of warps that runs one
 * stage (NVLS-tree's scatter, tree and broadcast groups, src/device/all_reduce.h runTreeSplit) sends its steps
 * one after another, in order, with NCCL_STEPS buffers in flight so that the next step leaves while the last
 * one is still on its way. Here a connection sends one transfer at a time: the next once the last one's last
 * byte has left (on_sent), the ready transfer of the oldest chunk first (then the earliest step). Without
 * this, the window's chunks that entered a stage together shared every link evenly and so advanced in
 * lockstep: their ring steps, each waiting a route latency for its predecessor's data, left the links idle
 * at the same moments (the NICs 2 route latencies per window of chunks, 9.6% of an NIC-bound NVLS-tree's
 * time on 2 x 8 H100, test_net's nvls_and_pipelined_vs_flow), and the pipeline's fill was a whole window
 * of chunks deep instead of one. */

struct nc_pxfer {
	int va, vb;   /* vertices */
	double bytes;
	long j;       /* chunk */
	int conn;
	int ndep;     /* arrivals still awaited */
	int nout;     /* transfers waiting for this one's arrival */
	int out[4];
	uint64_t seq; /* creation order: chunk order within a stage, then step order */
	int next_free;
};

struct nc_pconn {
	int k, va, vb; /* k: 2 stage + sub (the tree of a double binary tree) */
	int cur;   /* the transfer whose bytes are leaving, -1: idle */
	int *heap; /* ready transfers (slots), the lowest seq first */
	int nh, caph;
};

static uint64_t conn_hash(int k, int va, int vb)
{
	uint64_t h = ((uint64_t)(uint32_t)va << 32 | (uint32_t)vb) * 0x9e3779b97f4a7c15ull;
	return (h ^ (h >> 29) ^ (uint64_t)k * 0xbf58476d1ce4e5b9ull) * 0x94d049bb133111ebull;
}

static int conn_of(nc_pipe *p, int k, int va, int vb)
{
	if (2 * (p->ncn + 1) > p->ctab_cap) { /* grow and rehash */
		free(p->ctab);
		p->ctab_cap = p->ctab_cap ? 2 * p->ctab_cap : 64;
		p->ctab = hs_xcalloc((size_t)p->ctab_cap, sizeof *p->ctab);
		for (int i = 0; i < p->ncn; i++) {
			size_t b = conn_hash(p->cn[i].k, p->cn[i].va, p->cn[i].vb) & (size_t)(p->ctab_cap - 1);
			while (p->ctab[b])
				b = (b + 1) & (size_t)(p->ctab_cap - 1);
			p->ctab[b] = i + 1;
		}
	}
	size_t b = conn_hash(k, va, vb) & (size_t)(p->ctab_cap - 1);
	for (; p->ctab[b]; b = (b + 1) & (size_t)(p->ctab_cap - 1)) {
		nc_pconn *c = &p->cn[p->ctab[b] - 1];
		if (c->k == k && c->va == va && c->vb == vb)
			return p->ctab[b] - 1;
	}
	if (p->ncn == p->capcn) {
		p->capcn = p->capcn ? 2 * p->capcn : 32;
		p->cn = hs_xrealloc(p->cn, (size_t)p->capcn * sizeof *p->cn);
	}
	nc_pconn *c = &p->cn[p->ncn];
	memset(c, 0, sizeof *c);
	c->k = k, c->va = va, c->vb = vb, c->cur = -1;
	p->ctab[b] = ++p->ncn;
	return p->ncn - 1;
}

/* A transfer of chunk j on connection (the current stage, va, vb, sub). */
static int xnew(nc_pipe *p, int va, int vb, double bytes, long j, int sub)
{
	int x = p->xfree;
	if (x >= 0)
		p->xfree = p->x[x].next_free;
	else {
		if (p->nx == p->capx) {
			p->capx = p->capx ? 2 * p->capx : 256;
			p->x = hs_xrealloc(p->x, (size_t)p->capx * sizeof *p->x);
		}
		x = p->nx++;
	}
	nc_pxfer *t = &p->x[x];
	memset(t, 0, sizeof *t);
	t->va = va, t->vb = vb, t->bytes = bytes, t->j = j, t->seq = p->seq++;
	t->conn = conn_of(p, 2 * p->cur + sub, va, vb);
	p->pend[j]++;
	return x;
}

static void xdep(nc_pipe *p, int before, int after)
{
	nc_pxfer *b = &p->x[before];
	assert(b->nout < (int)(sizeof b->out / sizeof *b->out));
	b->out[b->nout++] = after;
	p->x[after].ndep++;
}

static int heap_less(const nc_pipe *p, int a, int b) { return p->x[a].seq < p->x[b].seq; }

static void kick(nc_run *r, int ci)
{
	nc_pipe *p = r->st;
	nc_pconn *c = &p->cn[ci];
	if (c->cur >= 0 || c->nh == 0)
		return;
	int x = c->heap[0];
	c->heap[0] = c->heap[--c->nh];
	for (int i = 0;;) { /* sift down */
		int l = 2 * i + 1, m = i;
		if (l < c->nh && heap_less(p, c->heap[l], c->heap[m]))
			m = l;
		if (l + 1 < c->nh && heap_less(p, c->heap[l + 1], c->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		int t = c->heap[i];
		c->heap[i] = c->heap[m], c->heap[m] = t, i = m;
	}
	c->cur = x;
	nc_pxfer *t = &p->x[x];
	hs_netcoll_send_v(r, t->va, t->vb, t->bytes, -1, (uint64_t)x);
}

static void ready(nc_run *r, int x)
{
	nc_pipe *p = r->st;
	int ci = p->x[x].conn;
	nc_pconn *c = &p->cn[ci];
	if (c->nh == c->caph) {
		c->caph = c->caph ? 2 * c->caph : 16;
		c->heap = hs_xrealloc(c->heap, (size_t)c->caph * sizeof *c->heap);
	}
	int i = c->nh++;
	for (; i > 0 && heap_less(p, x, c->heap[(i - 1) / 2]); i = (i - 1) / 2) /* sift up */
		c->heap[i] = c->heap[(i - 1) / 2];
	c->heap[i] = x;
	kick(r, ci);
}

/* Start those of the n transfers slot[] that wait for nothing. */
static void launch(nc_run *r, const int *slot, int n)
{
	nc_pipe *p = r->st;
	for (int i = 0; i < n; i++)
		if (p->x[slot[i]].ndep == 0)
			ready(r, slot[i]);
}

void hs_nc_pipe_send_v(nc_run *r, int va, int vb, double bytes, long j)
{
	int x = xnew(r->st, va, vb, bytes, j, 0);
	ready(r, x);
}

void hs_nc_pipe_ring(nc_run *r, enum hs_coll_op op, const int *idx, int cnt, double bytes, long j)
{
	nc_pipe *p = r->st;
	if (cnt < 2)
		return;
	int steps = op == HS_COLL_ALL_REDUCE ? 2 * (cnt - 1) : cnt - 1;
	int *slot = hs_xmalloc((size_t)steps * cnt * sizeof *slot);
	for (int s = 0; s < steps; s++) /* step order: the seq a connection sends by */
		for (int i = 0; i < cnt; i++)
			slot[s * cnt + i] = xnew(p, r->rk[idx[i]], r->rk[idx[(i + 1) % cnt]], bytes / cnt, j, 0);
	for (int s = 1; s < steps; s++)
		for (int i = 0; i < cnt; i++)
			xdep(p, slot[(s - 1) * cnt + (i + cnt - 1) % cnt], slot[s * cnt + i]);
	launch(r, slot, steps * cnt);
	free(slot);
}

void hs_nc_pipe_dtree(nc_run *r, const int *idx, int cnt, double bytes, long j)
{
	nc_pipe *p = r->st;
	if (cnt < 2)
		return;
	int *par = hs_xmalloc((size_t)cnt * sizeof *par), *up = hs_xmalloc((size_t)cnt * sizeof *up),
	    *dn = hs_xmalloc((size_t)cnt * sizeof *dn), *slot = hs_xmalloc((size_t)2 * cnt * sizeof *slot);
	for (int t = 0; t < 2; t++) {
		int ns = 0, root = -1;
		for (int x = 0; x < cnt; x++) {
			par[x] = hs_coll_dtree_parent(x, cnt, t);
			if (par[x] < 0)
				root = x;
		}
		for (int x = 0; x < cnt; x++) /* up: towards the root */
			if (par[x] >= 0)
				slot[ns++] = up[x] = xnew(p, r->rk[idx[x]], r->rk[idx[par[x]]], bytes / 2, j, t);
		for (int x = 0; x < cnt; x++) /* down */
			if (par[x] >= 0)
				slot[ns++] = dn[x] = xnew(p, r->rk[idx[par[x]]], r->rk[idx[x]], bytes / 2, j, t);
		for (int x = 0; x < cnt; x++) {
			if (par[x] < 0)
				continue;
			if (par[x] != root)
				xdep(p, up[x], up[par[x]]); /* a parent sends up once every child's piece is in */
			else
				for (int y = 0; y < cnt; y++) /* the root reduced: it sends down to each child */
					if (par[y] == root)
						xdep(p, up[x], dn[y]);
			for (int y = 0; y < cnt; y++) /* down: a child forwards its parent's piece to its children */
				if (par[y] == x)
					xdep(p, dn[x], dn[y]);
		}
		(void)root;
		launch(r, slot, ns);
	}
	free(par), free(up), free(dn), free(slot);
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
				p->cur = k;
				p->stage(r, k, j);
				if (p->pend[j] == 0) {
					p->inflight[k]--;
					p->state[j] = 2 * (k + 1);
				}
				progress = 1;
			}
	}
}

static void pipe_sent(nc_run *r, uint64_t tag)
{
	nc_pipe *p = r->st;
	int ci = p->x[tag].conn;
	if (p->cn[ci].cur == (int)tag) {
		p->cn[ci].cur = -1;
		kick(r, ci);
	}
}

static void pipe_done(nc_run *r, uint64_t tag)
{
	nc_pipe *p = r->st;
	int x = (int)tag;
	pipe_sent(r, tag); /* a model that reports no departure */
	nc_pxfer *t = &p->x[x];
	long j = t->j;
	for (int i = 0; i < t->nout; i++) {
		int y = p->x[x].out[i];
		if (--p->x[y].ndep == 0)
			ready(r, y); /* may grow p->x: index, not t */
	}
	p->x[x].next_free = p->xfree;
	p->xfree = x;
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
	free(p->x);
	for (int i = 0; i < p->ncn; i++)
		free(p->cn[i].heap);
	free(p->cn);
	free(p->ctab);
	free(p);
}

const nc_algo hs_nc_pipe = {"pipelined", NULL, pipe_done, pipe_free, pipe_sent};

nc_pipe *hs_nc_pipe_new(nc_run *r, double unit_bytes)
{
	nc_pipe *p = hs_xcalloc(1, sizeof *p);
	p->xfree = -1;
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
