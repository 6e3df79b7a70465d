/* hs_profile_cache: profiles loaded once and shared by the simulations that use them. Not thread-safe: a
 * sweep gives each worker thread its own (no global state, so no locks). Profiles stay until the cache is
 * freed. */
#ifndef HS_PROFILE_CACHE_H
#define HS_PROFILE_CACHE_H

#include "calib/profile.h"

typedef struct hs_profile_cache hs_profile_cache;

hs_profile_cache *hs_profile_cache_create(void);
void hs_profile_cache_free(hs_profile_cache *c);
/* The profile by name or path (as hs_profile_load), loaded on first use. */
const hs_profile *hs_profile_cache_get(hs_profile_cache *c, const char *name, hs_err *err);
/* One object a higher layer keeps per thread beside the profiles, which lives as long as they do (the
 * executor's op-range costs across a sweep's points, sim/exec/range_cache.c): made by make() on first use,
 * freed by drop() with the cache. Every call passes the same make and drop. */
void *hs_profile_cache_aux(hs_profile_cache *c, void *(*make)(void), void (*drop)(void *));

#endif
