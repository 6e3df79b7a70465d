/* Tree all-reduce on the network model, shaped as NCCL builds it (src/graph/connect.cc, trees.cc).
 *
 * Structure. The group's ranks are grouped by node (nodes in order of first appearance in the rank list,
 * ranks of a node in list order: local index order when the ring order is on). Inside each node the ranks
 * form a chain head -> ... -> tail over the scale-up. Across nodes only each node's head takes part, in a
 * double binary tree over the nodes: tree 0 is NCCL's btree (node 0 the root with one child; a node's parent
 * is found by clearing its lowest set bit b and setting bit 2b, or just clearing it when that is out of
 * range), tree 1 is tree 0 mirrored (node x -> N-1-x) when the node count N is even and shifted by one
 * (x -> x+1 mod N) when odd, so a node is interior in at most one of them. Each tree carries half the bytes.
 * A head's neighbours are its chain successor and the heads of its parent and child nodes (NCCL's TREE
 * pattern: the same rank sends up and receives from below across nodes). With one node the tree is the chain.
 *
 * Channels (hs_net_set_channels): C channels each carry an even share of the bytes over their own pair of
 * trees. With C = 1 the heads are the nodes' first ranks and cross the fabric through the NIC the router
 * picks for them (their own when every device has one, every rail otherwise). With C > 1 channel c crosses
 * on rail c and its chain starts at the device that owns the node's NIC c (rotated: owner, owner+1, ...),
 * as NCCL's search starts each channel's chain next to its NIC, so the channels use every NIC without a
 * detour over the scale-up. Both trees of a channel share its chain, as NCCL's duplicated channels do.
 *
 * Protocol. Every (channel, tree) share is cut into M slices of at most the chunk size (1 MiB when unset).
 * Up (reduce): a rank sends slice j to its parent once slice j has arrived from each child (a leaf or chain
 * tail at once). Down (broadcast): the root starts slice j once it is reduced; every rank forwards slice j
 * to all its children at once after receiving it. Each direction of each rank sends its slices one after
 * the other: the next leaves when the previous one's last byte has left (on_sent; all children's, going
 * down), while that one is still on its way. As NCCL's connections, each has W buffer slots at the receiver
 * (hs_net_set_window, default NCCL_STEPS = 8: NCCL's tree all-reduce runs ProtoSimple<1, 1>, one step per
 * slice, in src/device/all_reduce.h, and a sender waits while it is NCCL_STEPS steps ahead of the
 * receiver's head, src/device/prims_simple.h): slice j may leave once the receiver has consumed slice j - W,
 * that is started passing it on (up: sent its reduced slice j - W to its own parent, or at the root reduced
 * it; down: forwarded it to its children, or at a leaf received it). The slot comes back at once, where
 * NCCL's head update takes a latency; with W = 8 the window is rarely what binds. So a hop costs one
 * transmission per slice once the pipeline is full, as long as W slices cover a transmission and a route
 * latency, and a slow or shared link still holds back everything behind it, W slices deep.
 *
 * Bytes: in each tree every edge carries the tree's share once up and once down, so a rank sends the share
 * times its degree per tree, and the group 2(n-1)S in all, as over any spanning tree. Nodes may hold unequal
 * numbers of ranks (each has its own chain). Only all-reduce runs here (hs_coll_supported), as in NCCL. */
#include <math.h>
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"
#include "sim/base/sizes.h"

#define TREE_CHUNK HS_MiB
#define TREE_WINDOW 8 /* NCCL_STEPS (src/include/device.h): slots per connection */
#define MAXCH 3 /* children: the chain successor and, at a head, up to two child nodes */

typedef struct tnode {
	int parent; /* rank index, -1 at the root */
	int pslot;  /* which of the parent's children this rank is */
	int nch;
	int child[MAXCH];
	long crecv[MAXCH]; /* slices arrived from each child (up) */
	long up_sent, down_recv, down_sent; /* sent: started */
	char up_busy;   /* the last up slice is still leaving */
	char down_busy; /* child transfers of the last down slice still leaving */
} tnode;

typedef struct tstate {
	int T;      /* trees: 2 per channel */
	int C;
	long M;     /* slices per tree */
	long W;     /* receive slots per connection */
	double slice;
	tnode *nd;  /* [T * n]: tree g, rank p at g * n + p */
} tstate;

#define TAG(g, n, p, dir, w) (((uint64_t)(g) * (uint64_t)(n) + (uint64_t)(p)) << 3 | (uint64_t)(dir) << 2 | (uint64_t)(w))

static void link_child(tstate *s, int n, int g, int parent, int ch)
{
	tnode *pp = &s->nd[(size_t)g * n + parent], *cc = &s->nd[(size_t)g * n + ch];
	cc->parent = parent;
	cc->pslot = pp->nch;
	pp->child[pp->nch++] = ch;
}

/* The chain of channel c on a node starts at the device that owns NIC c there (when it is in the group). */
static int chain_start(const nc_run *r, const int *mem, int cnt, int c, int C)
{
	if (C == 1)
		return 0;
	const hs_topo *t = r->net->t;
	int dom = hs_cluster_domain_of(r->net->c, r->rk[mem[0]]);
	if (hs_topo_has_nics(t) && hs_topo_domain_nnics(t, dom) > 0) {
		int own = hs_topo_nic_owner(t, hs_topo_domain_nic(t, dom, nc_rail(r, c, C) % hs_topo_domain_nnics(t, dom)));
		for (int i = 0; i < cnt; i++)
			if (r->rk[mem[i]] == own)
				return i;
	}
	return (int)((long)c * cnt / C) % cnt;
}

static void build(nc_run *r, tstate *s)
{
	int n = r->n;
	/* nodes in order of first appearance; mem lists each node's rank indices, node k at off[k].. */
	int *nodeof = hs_xmalloc((size_t)n * sizeof *nodeof), *nid = hs_xmalloc((size_t)n * sizeof *nid);
	int *off = hs_xcalloc((size_t)n + 1, sizeof *off), *mem = hs_xmalloc((size_t)n * sizeof *mem);
	int N = 0;
	for (int i = 0; i < n; i++) {
		int nd = hs_cluster_domain_of(r->net->c, r->rk[i]), k = 0; /* scale-up domains */
		while (k < N && nid[k] != nd)
			k++;
		if (k == N)
			nid[N++] = nd;
		nodeof[i] = k;
		off[k + 1]++;
	}
	for (int k = 0; k < N; k++)
		off[k + 1] += off[k];
	int *fill = hs_xcalloc((size_t)N, sizeof *fill);
	for (int i = 0; i < n; i++)
		mem[off[nodeof[i]] + fill[nodeof[i]]++] = i;
	int *head = hs_xmalloc((size_t)N * sizeof *head);
	for (int g = 0; g < s->T; g++)
		for (int p = 0; p < n; p++)
			s->nd[(size_t)g * n + p].parent = -1;
	for (int c = 0; c < s->C; c++) {
		for (int k = 0; k < N; k++) {
			int cnt = off[k + 1] - off[k], h = chain_start(r, mem + off[k], cnt, c, s->C);
			head[k] = mem[off[k] + h];
			for (int i = 1; i < cnt; i++)
				for (int t = 0; t < 2; t++)
					link_child(s, n, 2 * c + t, mem[off[k] + (h + i - 1) % cnt], mem[off[k] + (h + i) % cnt]);
		}
		for (int t = 0; t < 2; t++)
			for (int k = 0; k < N; k++) {
				int u = hs_coll_dtree_parent(k, N, t);
				if (u >= 0)
					link_child(s, n, 2 * c + t, head[u], head[k]);
			}
	}
	free(nodeof);
	free(nid);
	free(off);
	free(mem);
	free(fill);
	free(head);
}

/* Slices reduced at x: arrived from every child (a leaf or chain tail has all of its own). */
static long reduced(const tstate *s, const tnode *x)
{
	long red = s->M;
	for (int w = 0; w < x->nch; w++)
		if (x->crecv[w] < red)
			red = x->crecv[w];
	return red;
}

/* Slices x has consumed from its children (their up connections' slots it has freed) and from its parent. */
static long consumed_up(const tstate *s, const tnode *x) { return x->parent < 0 ? reduced(s, x) : x->up_sent; }
static long consumed_down(const tnode *x) { return x->nch ? x->down_sent : x->down_recv; }

static void try_down(nc_run *r, int g, int p);

static void try_up(nc_run *r, int g, int p)
{
	tstate *s = r->st;
	int n = r->n;
	tnode *x = &s->nd[(size_t)g * n + p];
	if (x->parent < 0 || x->up_busy || x->up_sent >= s->M || reduced(s, x) <= x->up_sent ||
	    x->up_sent >= consumed_up(s, &s->nd[(size_t)g * n + x->parent]) + s->W)
		return;
	x->up_busy = 1;
	x->up_sent++;
	hs_netcoll_send(r, p, x->parent, s->slice, nc_rail(r, g / 2, s->C), TAG(g, n, p, 0, x->pslot));
	/* one more slot free at this rank for each child */
	for (int w = 0; w < x->nch; w++)
		try_up(r, g, x->child[w]);
}

static void try_down(nc_run *r, int g, int p)
{
	tstate *s = r->st;
	int n = r->n;
	tnode *x = &s->nd[(size_t)g * n + p];
	if (!x->nch || x->down_busy || x->down_sent >= s->M ||
	    x->down_sent >= (x->parent < 0 ? reduced(s, x) : x->down_recv))
		return;
	for (int w = 0; w < x->nch; w++)
		if (x->down_sent >= consumed_down(&s->nd[(size_t)g * n + x->child[w]]) + s->W)
			return;
	x->down_busy = (char)x->nch;
	x->down_sent++;
	for (int w = 0; w < x->nch; w++)
		hs_netcoll_send(r, p, x->child[w], s->slice, nc_rail(r, g / 2, s->C), TAG(g, n, p, 1, w));
	if (x->parent >= 0) /* a slot free here for the parent */
		try_down(r, g, x->parent);
}

static void on_sent(nc_run *r, uint64_t tag)
{
	tstate *s = r->st;
	int n = r->n, dir = (int)(tag >> 2 & 1);
	uint64_t gp = tag >> 3;
	int g = (int)(gp / (uint64_t)n), p = (int)(gp % (uint64_t)n);
	tnode *x = &s->nd[(size_t)g * n + p];
	if (dir == 0) {
		x->up_busy = 0;
		try_up(r, g, p);
	} else if (!--x->down_busy)
		try_down(r, g, p);
}

static void on_done(nc_run *r, uint64_t tag)
{
	tstate *s = r->st;
	int n = r->n, dir = (int)(tag >> 2 & 1), w = (int)(tag & 3);
	uint64_t gp = tag >> 3;
	int g = (int)(gp / (uint64_t)n), p = (int)(gp % (uint64_t)n);
	tnode *x = &s->nd[(size_t)g * n + p];
	if (dir == 0) {
		int q = x->parent;
		tnode *y = &s->nd[(size_t)g * n + q];
		y->crecv[w]++;
		try_up(r, g, q);
		if (y->parent < 0) { /* the root reduced one more slice: it goes down, and frees a slot per child */
			try_down(r, g, q);
			for (int v = 0; v < y->nch; v++)
				try_up(r, g, y->child[v]);
		}
	} else {
		int c = x->child[w];
		tnode *y = &s->nd[(size_t)g * n + c];
		y->down_recv++;
		try_down(r, g, c);
		if (!y->nch) /* a leaf consumes on arrival */
			try_down(r, g, p);
	}
}

static void start(nc_run *r)
{
	tstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	s->C = r->net->channels > 0 ? r->net->channels : 1;
	s->T = 2 * s->C;
	double share = r->S / s->T, ch = r->net->chunk > 0 ? r->net->chunk : TREE_CHUNK;
	s->M = (long)ceil(share / ch);
	if (s->M < 1)
		s->M = 1;
	s->slice = share / s->M;
	s->W = r->net->window > 0 ? r->net->window : TREE_WINDOW;
	s->nd = hs_xcalloc((size_t)s->T * r->n, sizeof *s->nd);
	build(r, s);
	for (int g = 0; g < s->T; g++)
		for (int p = 0; p < r->n; p++) {
			try_up(r, g, p);
			try_down(r, g, p);
		}
}

static void sfree(nc_run *r)
{
	tstate *s = r->st;
	if (s)
		free(s->nd);
	free(s);
}

const nc_algo hs_nc_tree = {"tree", start, on_done, sfree, on_sent};
