/* Ring collectives on the network model, step by step. Also the chain (broadcast, reduce).
 *
 * C channels (hs_net_set_channels) run C rings at once, channel c on rail c (C = 1: one ring whose node
 * crossings spread over every rail). Each channel carries a share of the bytes in proportion to its ring's
 * bottleneck bandwidth (or an even share, hs_net_set_split(0)). A ring step's piece (S/n of the channel's
 * share) is cut into k slices of at most the chunk size. Every rank of a channel has one connection to its
 * successor and sends its slices in order, one at a time; slice q (step q / k) can leave once the
 * predecessor's slice q - k has arrived (the data it forwards or reduces into). So a slow link or a shared
 * NIC delays its successor, and through it the whole ring.
 *   all-reduce: 2(n-1) steps; all-gather, reduce-scatter: n-1 steps; pieces of S/n.
 *   broadcast, reduce: a chain of n-1 links from the root, the channel's share cut into slices of the chunk
 *   size (NCCL's 512 KiB when unset); a rank forwards slice j after receiving it. */
#include <math.h>
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/net/netcoll_impl.h"

/* NCCL's broadcast and reduce step: its Simple buffer (DEFAULT_BUFFSIZE 4 MiB, src/init.cc) over NCCL_STEPS = 8
 * (src/include/device.h), one step per chunk (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1,
 * src/include/collectives.h, NCCL 2.23), so a chain forwards 512 KiB pieces per channel: the fill is n - 1 such
 * pieces, where 4 MiB pieces left a 16-rank chain a fifth slower than its closed form at 1 GiB. */
#define CHAIN_CHUNK (512.0 * 1024)

typedef struct rstate {
	int C, chain;
	long Q;        /* slices each sender sends */
	int k;         /* slices per step (ring) */
	double *slice; /* [C] bytes per slice */
	long *sent, *recvd; /* [C * n] */
	char *busy;
} rstate;

#define TAG(c, i) (((uint64_t)(c) << 32) | (uint64_t)(i))

static void try_send(nc_run *r, int c, int i)
{
	rstate *s = r->st;
	size_t x = (size_t)c * r->n + i;
	if (s->busy[x] || s->sent[x] >= s->Q)
		return;
	long q = s->sent[x];
	if (s->chain) {
		if (i == r->n - 1)
			return;
		if (i > 0 && s->recvd[x] < q + 1)
			return;
	} else if (q >= s->k && s->recvd[x] < q - s->k + 1)
		return;
	s->busy[x] = 1;
	s->sent[x]++;
	hs_netcoll_send(r, i, (i + 1) % r->n, s->slice[c], nc_rail(r, c, s->C), TAG(c, i));
}

/* A chain's connection sends its next slice once the previous one's last byte has left (NCCL keeps
 * NCCL_STEPS slices in flight per connection), not once it has arrived: waiting for the arrival put a route
 * latency between slices, a quarter of a 512 KiB slice's time on a 25 GB/s NIC. */
static void on_sent(nc_run *r, uint64_t tag)
{
	rstate *s = r->st;
	if (!s->chain)
		return;
	int c = (int)(tag >> 32), i = (int)(tag & 0xffffffffu);
	s->busy[(size_t)c * r->n + i] = 0;
	try_send(r, c, i);
}

static void on_done(nc_run *r, uint64_t tag)
{
	rstate *s = r->st;
	int c = (int)(tag >> 32), i = (int)(tag & 0xffffffffu), j = (i + 1) % r->n;
	if (!s->chain)
		s->busy[(size_t)c * r->n + i] = 0;
	s->recvd[(size_t)c * r->n + j]++;
	try_send(r, c, i);
	try_send(r, c, j);
}

static void start(nc_run *r)
{
	hs_net *net = r->net;
	rstate *s = hs_xcalloc(1, sizeof *s);
	r->st = s;
	int n = r->n, C = net->channels;
	s->C = C;
	s->chain = r->op == HS_COLL_BROADCAST || r->op == HS_COLL_REDUCE;
	int steps = r->op == HS_COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
	/* channel shares: proportional to each channel ring's (or chain's) bottleneck */
	double *w = hs_xmalloc((size_t)C * sizeof *w), sum = 0;
	for (int c = 0; c < C; c++) {
		double b = 1e300;
		if (net->split && C > 1)
			for (int i = 0; i < (s->chain ? n - 1 : n); i++) {
				double x = hs_netcoll_route_bw(r, i, (i + 1) % n, nc_rail(r, c, C));
				if (x < b)
					b = x;
			}
		w[c] = net->split && C > 1 ? b : 1;
		sum += w[c];
	}
	s->slice = hs_xmalloc((size_t)C * sizeof *s->slice);
	double maxshare = 0;
	for (int c = 0; c < C; c++)
		if (r->S * w[c] / sum > maxshare)
			maxshare = r->S * w[c] / sum;
	if (s->chain) {
		double ch = net->chunk > 0 ? net->chunk : CHAIN_CHUNK;
		s->Q = (long)ceil(maxshare / ch);
		if (s->Q < 1)
			s->Q = 1;
		for (int c = 0; c < C; c++)
			s->slice[c] = r->S * w[c] / sum / s->Q;
	} else {
		s->k = net->chunk > 0 ? (int)ceil(maxshare / n / net->chunk) : 1;
		if (s->k < 1)
			s->k = 1;
		s->Q = (long)steps * s->k;
		for (int c = 0; c < C; c++)
			s->slice[c] = r->S * w[c] / sum / n / s->k;
	}
	free(w);
	s->sent = hs_xcalloc((size_t)C * n, sizeof *s->sent);
	s->recvd = hs_xcalloc((size_t)C * n, sizeof *s->recvd);
	s->busy = hs_xcalloc((size_t)C * n, 1);
	for (int c = 0; c < C; c++)
		for (int i = 0; i < n; i++)
			try_send(r, c, i);
}

static void sfree(nc_run *r)
{
	rstate *s = r->st;
	if (!s)
		return;
	free(s->slice);
	free(s->sent);
	free(s->recvd);
	free(s->busy);
	free(s);
}

const nc_algo hs_nc_ring = {"ring", start, on_done, sfree, on_sent};
