/* Pipelined phases on the network model (sim/net/netcoll_pipe.c): a program cuts the message into chunks and
 * names, per stage, what one chunk's stage launches; the engine runs the chunks through the stages with
 * NCCL's window of chunks in flight per stage. Not a public header. */
#ifndef HS_NETCOLL_PIPE_H
#define HS_NETCOLL_PIPE_H

#include "sim/net/netcoll_impl.h"

#define NC_PIPE_STAGES 4

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
	int *pend;  /* [M] transfers and children outstanding in the chunk's stage */
	int inflight[NC_PIPE_STAGES];
	long nxt[NC_PIPE_STAGES];
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
/* Inside a stage: a transfer between vertices, or a child collective over ranks idx[0..cnt-1] (one_channel:
 * on one channel, each rank on its own NIC), both counted against chunk j. */
void hs_nc_pipe_send_v(nc_run *r, int va, int vb, double bytes, long j);
void hs_nc_pipe_child(nc_run *r, enum hs_coll_op op, enum hs_coll_algo algo, const int *idx, int cnt, double bytes,
		      long j, int one_channel);

#endif
