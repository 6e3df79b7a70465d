/* Inside sim/net: a ring without symmetry classes whose hops alone on their links are timed by the ring
 * (sim/net/netcoll_ring_hops.c). Not a public header. */
#ifndef HS_NETCOLL_RING_HOPS_H
#define HS_NETCOLL_RING_HOPS_H

#include "sim/net/netcoll_impl.h"

/* Ring r (netcoll_ring.c's, not a chain) with C channels, k slices per step and Q slices per rank; ord [C * n]
 * channel c's rank i as a device, slice [C] bytes per slice, rt [C * n] hop i's route. Returns 1 when some
 * hop could be held: the run goes on as this ring (r->alg, r->st), which owns ord, slice and rt; 0 when none
 * could, or the model has no holds (nothing taken, nothing started). */
int hs_ring_hops_start(nc_run *r, int C, int k, long Q, int *ord, double *slice, const hs_route **rt);
/* The same for a ring that has run since t0 (< now) with nothing of it seen yet but by itself (a ring whose
 * classes timed themselves, netcoll_ring.c `ana`, whose set another flow broke now): only where every hop can
 * be held; the timeline is set from t0 and the flow that broke the set, entering, breaks the hops it enters. */
int hs_ring_hops_resume(nc_run *r, int C, int k, long Q, int *ord, double *slice, const hs_route **rt, hs_time t0);

#endif
