/* Direct collectives on the network model: every rank sends to every other rank at once, one transfer per
 * pair (NCCL's all-to-all and send/recv). All-to-all, all-gather and reduce-scatter move S/n per pair;
 * all-reduce is a direct reduce-scatter and then, per rank once its n-1 pieces have arrived, a direct
 * all-gather of its reduced piece; send/recv moves S from the first rank to the second. */
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

typedef struct dstate {
	int *got; /* [n] reduce-scatter pieces received (all-reduce) */
} dstate;

static void scatter(nc_run *r, int i, uint64_t phase)
{
	for (int j = 0; j < r->n; j++)
		if (j != i)
			hs_netcoll_send(r, i, j, r->S / r->n, -1, phase << 62 | (uint64_t)j);
}

static void start(nc_run *r)
{
	if (r->op == HS_COLL_SENDRECV) {
		hs_netcoll_send(r, 0, 1, r->S, -1, 0);
		return;
	}
	dstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	s->got = hs_xcalloc((size_t)r->n, sizeof *s->got);
	for (int i = 0; i < r->n; i++)
		scatter(r, i, 1);
}

static void on_done(nc_run *r, uint64_t tag)
{
	if (r->op != HS_COLL_ALL_REDUCE || tag >> 62 != 1)
		return;
	dstate *s = r->st;
	int j = (int)(tag & 0xffffffffu);
	if (++s->got[j] == r->n - 1)
		scatter(r, j, 2);
}

static void sfree(nc_run *r)
{
	dstate *s = r->st;
	if (s)
		free(s->got);
	free(s);
}

const nc_algo hs_nc_direct = {"direct", start, on_done, sfree, NULL};
