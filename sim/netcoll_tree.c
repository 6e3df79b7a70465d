/* Double binary tree all-reduce on the network model (NCCL's tree). Two binary trees over the ranks, the
 * second the mirror image of the first (position p is rank p in one, n-1-p in the other), each carrying half
 * the bytes in slices of the chunk size (1 MiB when unset). Up: a rank sends slice j to its parent once slice
 * j has arrived from each child. Down: the root starts slice j once it is reduced; every rank forwards slice
 * j to its children once it has it. Each direction of each rank sends one slice at a time. The tree is over
 * the ring-ordered ranks, so neighbours in the tree are mostly on one node; NCCL's intra-node chain is the
 * analytical model's refinement (sim/coll_tree.c). */
#include <math.h>
#include <stdlib.h>

#include "sim/alloc.h"
#include "sim/netcoll_impl.h"

#define TREE_CHUNK 1048576.0

typedef struct tnode {
	long up_sent, crecv[2], down_recv, down_sent;
	char up_busy;
	char down_busy;
} tnode;

typedef struct tstate {
	long M;
	double slice;
	tnode *nd; /* [2 * n] */
} tstate;

static int rank_of(const nc_run *r, int t, int p) { return t ? r->n - 1 - p : p; }
static int nchild(const nc_run *r, int p) { return (2 * p + 1 < r->n) + (2 * p + 2 < r->n); }

#define TAG(t, dir, w, p) ((uint64_t)(t) << 40 | (uint64_t)(dir) << 39 | (uint64_t)(w) << 38 | (uint64_t)(p))

static void try_node(nc_run *r, int t, int p);

static long reduced(const nc_run *r, const tnode *x, int p)
{
	int nc = nchild(r, p);
	long a = nc > 0 ? x->crecv[0] : ((tstate *)r->st)->M;
	if (nc > 1 && x->crecv[1] < a)
		a = x->crecv[1];
	return a;
}

static void try_node(nc_run *r, int t, int p)
{
	tstate *s = r->st;
	tnode *x = &s->nd[(size_t)t * r->n + p];
	long red = reduced(r, x, p);
	if (p > 0 && !x->up_busy && x->up_sent < s->M && red > x->up_sent) {
		x->up_busy = 1;
		x->up_sent++;
		nc_send(r, rank_of(r, t, p), rank_of(r, t, (p - 1) / 2), s->slice, -1, TAG(t, 0, (p - 1) % 2, p));
	}
	long avail = p == 0 ? red : x->down_recv;
	int nc = nchild(r, p);
	if (nc && !x->down_busy && x->down_sent < avail) {
		x->down_busy = (char)nc;
		x->down_sent++;
		for (int w = 0; w < nc; w++)
			nc_send(r, rank_of(r, t, p), rank_of(r, t, 2 * p + 1 + w), s->slice, -1, TAG(t, 1, w, p));
	}
}

static void on_done(nc_run *r, uint64_t tag)
{
	tstate *s = r->st;
	int t = (int)(tag >> 40), dir = (int)(tag >> 39 & 1), w = (int)(tag >> 38 & 1), p = (int)(tag & 0x3fffffffffULL);
	tnode *x = &s->nd[(size_t)t * r->n + p];
	if (dir == 0) {
		int q = (p - 1) / 2;
		x->up_busy = 0;
		s->nd[(size_t)t * r->n + q].crecv[w]++;
		try_node(r, t, p);
		try_node(r, t, q);
	} else {
		int c = 2 * p + 1 + w;
		s->nd[(size_t)t * r->n + c].down_recv++;
		x->down_busy--;
		try_node(r, t, c);
		if (!x->down_busy)
			try_node(r, t, p);
	}
}

static void start(nc_run *r)
{
	tstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	double ch = r->net->chunk > 0 ? r->net->chunk : TREE_CHUNK;
	s->M = (long)ceil(r->S / 2 / ch);
	if (s->M < 1)
		s->M = 1;
	s->slice = r->S / 2 / s->M;
	s->nd = hs_xcalloc((size_t)2 * r->n, sizeof *s->nd);
	for (int t = 0; t < 2; t++)
		for (int p = 0; p < r->n; p++)
			try_node(r, t, p);
}

static void sfree(nc_run *r)
{
	tstate *s = r->st;
	if (s)
		free(s->nd);
	free(s);
}

const nc_algo hs_nc_tree = {"tree", start, on_done, sfree};
