/* Pipelined phases on the network model (sim/net/netcoll_pipe.c): a program cuts the message into chunks and
 * names, per stage, what one chunk's stage moves (transfers through a switch, rings, double binary trees);
 * the engine runs the chunks through the stages with NCCL's window of chunks in flight per stage, every
 * transfer on a connection (stage, source, destination) that sends one transfer at a time, in chunk order.
 * Not a public header. */
#ifndef HS_NETCOLL_PIPE_H
#define HS_NETCOLL_PIPE_H

#include "sim/net/netcoll_impl.h"

#define NC_PIPE_STAGES 4

typedef struct nc_pxfer nc_pxfer;
typedef struct nc_pconn nc_pconn;

typedef struct nc_pipe {
	int N, ppn;
	int *byn;  /* [N * ppn]: rank index of local index l on node k at [k * ppn + l]; NULL: unequal nodes */
	long M;    /* chunks */
	double c;  /* bytes of the per-rank unit per chunk */
	double eff; /* program data (NVLS efficiency) */
	int nst;
	int window; /* chunks a stage may hold at once */
	void (*stage)(nc_run *r, int k, long j);
	int *state; /* [M] 2k: waiting for stage k; 2k + 1: in stage k */
	int *pend;  /* [M] transfers outstanding in the chunk's stage */
	int inflight[NC_PIPE_STAGES];
	long nxt[NC_PIPE_STAGES];
	int cur; /* the stage whose chunk is being launched */
	/* transfers (slots, reused) and connections (a hash of (stage, source, destination)) */
	nc_pxfer *x;
	int nx, capx, xfree;
	uint64_t seq;
	nc_pconn *cn;
	int ncn, capcn;
	int *ctab; /* [ctab_cap] connection index + 1, 0: empty */
	int ctab_cap;
} nc_pipe;

/* Nodes in order of first appearance: N, ranks per node and the by-node table (0 and *byn NULL when nodes hold
 * different numbers of ranks). */
int hs_nc_layout(nc_run *r, int *N, int *ppn, int **byn);
/* r->st = a new pipeline of chunks of `unit_bytes` / M (layout filled; byn NULL: the caller falls back). */
nc_pipe *hs_nc_pipe_new(nc_run *r, double unit_bytes);
/* Run `nstages` stages; from here on r->alg is the engine's. */
void hs_nc_pipe_run(nc_run *r, int nstages, void (*stage)(nc_run *r, int k, long j));
/* Free the pipeline and start program `a` instead. */
void hs_nc_pipe_fallback(nc_run *r, const nc_algo *a);
/* Inside a stage, all counted against chunk j:
 * a transfer between vertices (a switch, for in-switch reduction), free to start; */
void hs_nc_pipe_send_v(nc_run *r, int va, int vb, double bytes, long j);
/* a ring over ranks idx[0..cnt-1] (indices into r->rk, in ring order), op all-reduce, reduce-scatter or
 * all-gather of `bytes` as sim/coll/coll.h counts them: pieces of bytes / cnt, rank i's step s after its
 * predecessor's step s - 1 has arrived; */
void hs_nc_pipe_ring(nc_run *r, enum hs_coll_op op, const int *idx, int cnt, double bytes, long j);
/* an all-reduce of `bytes` over idx[0..cnt-1] in NCCL's double binary tree (hs_coll_dtree_parent), half the
 * bytes in each tree: up, a rank sends once each child's piece has arrived; down, once its parent's has. */
void hs_nc_pipe_dtree(nc_run *r, const int *idx, int cnt, double bytes, long j);

#endif
