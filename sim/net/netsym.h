/* Inside sim/net: symmetry classes of transfers (issue 22 item 1). Not a public header.
 *
 * A collective's M transfers ("members", each on a route) and a permutation perm of them that the collective
 * respects (a ring rotated by p ranks: every rank runs the same program, so member i and member perm[i] start
 * together with the same bytes). hs_netsym_find looks for a permutation sigma of the links the members cross
 * (their union U) such that sigma maps member i's route onto member perm[i]'s, link for link, with equal
 * bandwidth and coefficient, and equal route latency. Such a pair (perm, sigma) is an automorphism of the
 * max-min problem restricted to U; while no other flow crosses U, the max-min allocation (unique) is invariant
 * under it, so the members of one orbit of perm (a class) have one rate and finish together, and the links of
 * one orbit of sigma carry one load. The flow model then carries a class as one flow of the members' rate on
 * one link per link orbit, with the coefficient that puts the orbit's per-link load on it: the same
 * allocation, at the cost of the number of classes instead of members.
 *
 * sigma is found, not assumed: each route's links are put in a canonical order (hops from the source, then
 * bandwidth, coefficient and id), position h of member i is mapped to position h of member perm[i], and the
 * map is checked to be a bijection of U that keeps bandwidths, coefficients and latencies. Any mismatch (a slow
 * link, a route the hash sent elsewhere, an explicit graph's odd link) refuses the permutation and the caller
 * tries a coarser one or keeps every transfer: a class is never formed on a guess. */
#ifndef HS_NETSYM_H
#define HS_NETSYM_H

#include "sim/base/time.h"
#include "topology/route.h"
#include "topology/topo.h"

typedef struct hs_netsym {
	int M;                /* members */
	int ncls;             /* classes: the orbits of perm */
	int *cls_of;          /* [M] */
	int *mult;            /* [ncls] members per class */
	int *rep;             /* [ncls] lowest member of the class */
	int norb;             /* link orbits: the orbits of sigma on U */
	int *orb_off;         /* [norb + 1] */
	int *orb_link;        /* [|U|]: orbit o's links are orb_link[orb_off[o] .. orb_off[o + 1]) */
	/* class j crosses orbits c_orb[c_off[j] .. c_off[j + 1]), putting c_coef times one member's rate on each
	 * link of the orbit: mult[j] x (the member's coefficient on the orbit's links) / |orbit| */
	int *c_off, *c_orb;
	double *c_coef;
	hs_time *c_lat;       /* [ncls] route latency of the class's members */
} hs_netsym;

/* Scratch sized by the topology's links, kept by the caller across calls (a stamp instead of clearing). */
typedef struct hs_netsym_scratch {
	int nlk;
	int *orb;             /* [nlk]: a link's place in U during a check, then its orbit */
	unsigned *stamp;      /* [nlk] */
	unsigned cur;
} hs_netsym_scratch;

void hs_netsym_scratch_init(hs_netsym_scratch *s, int nlk);
void hs_netsym_scratch_free(hs_netsym_scratch *s);

/* 0 and *out filled when sigma exists for perm (members i and perm[i] routed by routes[i], routes[perm[i]]);
 * -1 otherwise (nothing allocated). perm must be a permutation of 0..M-1. */
int hs_netsym_find(const hs_topo *t, const hs_route *const *routes, const int *perm, int M, hs_netsym_scratch *sc,
		   hs_netsym *out);
/* The same for a group of permutations perms[0..G) that the collective respects together (an all-to-all is
 * invariant under every permutation of its ranks; a fabric bears only some): a sigma is found and checked for
 * each generator, and the classes are the orbits of the members, and the link orbits those of the links, under
 * all of them at once (union-find). The max-min allocation is invariant under each generator, hence under the
 * group they generate, so a class's members still have one rate and an orbit's links one load. With passed
 * NULL, -1 when any generator has no sigma; with passed[G], a generator without one is left out (passed[g] 0)
 * and -1 only when none has one: the routes' canonical orders are built once for every candidate. */
int hs_netsym_find_group(const hs_topo *t, const hs_route *const *routes, const int *const *perms, int G, int M,
			 hs_netsym_scratch *sc, int *passed, hs_netsym *out);
void hs_netsym_free(hs_netsym *s);

/* A hash of what sigma must keep of a route (its length, latency, and bandwidths and coefficients by
 * position): members whose hashes differ are never in one orbit, so a caller finds candidate periods cheaply
 * before hs_netsym_find checks one. */
uint64_t hs_netsym_route_hash(const hs_topo *t, const hs_route *r);

#endif
