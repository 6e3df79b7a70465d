/* Inside sim/net: a one-phase direct collective without symmetry classes timed alone on its links
 * (sim/net/netcoll_solo.c). Not a public header. */
#ifndef HS_NETCOLL_SOLO_H
#define HS_NETCOLL_SOLO_H

#include "sim/net/netcoll_impl.h"

typedef struct hs_solo_run hs_solo_run;

/* Direct collective r (all-to-all, all-gather or reduce-scatter: its n(n-1) pairs start now with S/n bytes
 * each and nothing waits on any of them but the end), its pairs' routes those of memo entry e (member order,
 * netcoll_direct.c). Where the model holds every link of theirs, the run is timed by e's timeline for these
 * bytes (computed once, hs_net_solo) and *out is its state: the collective's one arrival counted in
 * r->outstanding; returns 1. Returns 0 where refused (nothing taken, nothing started). */
int hs_solo_start(nc_run *r, hs_symmemo *e, hs_solo_run **out);
/* Frees a run's state (once the collective has ended: nothing of it is in flight). */
void hs_solo_free(hs_solo_run *s);

#endif
