/* Inside sim/net: a run of consecutive ring hops, each alone on its links, timed by its closed form
 * (sim/net/ring_run.c). Not a public header. */
#ifndef HS_RING_RUN_H
#define HS_RING_RUN_H

#include "sim/base/time.h"

typedef struct hs_ring_run hs_ring_run;

/* Hops 0..m-1 of a ring with k slices per step and Q slices per rank, hop j's slice taking d[j] from its start
 * to its arrival, every hop free from t0. A chain is fed by input arrivals (hs_ring_run_input: its first hop's
 * predecessor's slices, in order); a cycle (a whole channel) is fed by its own last hop. */
hs_ring_run *hs_ring_run_create(int m, int k, long Q, const hs_time *d, hs_time t0, int cyclic);
void hs_ring_run_free(hs_ring_run *r);

/* The next input arrival (a chain's; the predecessor's slice number hs_ring_run_nin). */
void hs_ring_run_input(hs_ring_run *r, hs_time a);
long hs_ring_run_nin(const hs_ring_run *r);
/* The input arrivals so far, [nin] (a cycle's: its outputs). */
const hs_time *hs_ring_run_inputs(const hs_ring_run *r);

/* Outputs (the last hop's arrivals) that the inputs so far determine, and how many were taken. */
long hs_ring_run_ready(const hs_ring_run *r);
long hs_ring_run_nout(const hs_ring_run *r);
/* The next output (nout < ready). */
hs_time hs_ring_run_next(hs_ring_run *r);

/* Slices the inputs so far determine over all hops; of hop j. */
long hs_ring_run_set(const hs_ring_run *r);
long hs_ring_run_set_at(const hs_ring_run *r, int j);

/* The latest arrival of any hop's last slice, once every output is taken. */
hs_time hs_ring_run_last(const hs_ring_run *r);

#endif
