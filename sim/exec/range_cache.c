/* Op-range costs across the steps of one thread (sim/exec/range_cache.h says what the key holds and why). */
#include "sim/exec/range_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_impl.h"

/* What hs_ops_time reads besides the ops. Built in zeroed memory and filled by memcpy, so that two equal
 * environments compare equal bytewise (padding included); the groups the range does not use stay zero. */
struct env_key {
	const hs_profile *prof;
	hs_device_type dev;
	double host_gemm_s, host_kernel_s;
	int mem_factors, coll_algo;
	int grp_n[HS_GROUP_COUNT];
	hs_coll_grp cg[HS_GROUP_COUNT];
};

struct entry {
	uint64_t hash;
	struct env_key env;
	hs_op *ops;
	size_t n;
	hs_ops_cost c;
	int netcomm;
};

struct hs_range_cache {
	struct entry *e;
	size_t n, cap;
	size_t *slot; /* open addressing over e: index + 1, 0 empty */
	size_t nslot;
	size_t ops;   /* ops held */
	size_t hits, misses;
	hs_sched_cache *sched;
};

static void *make(void) { return hs_xcalloc(1, sizeof(hs_range_cache)); }

static void drop(void *p)
{
	hs_range_cache *rc = p;
	for (size_t i = 0; i < rc->n; i++)
		free(rc->e[i].ops);
	free(rc->e);
	free(rc->slot);
	hs_sched_cache_free(rc->sched);
	free(rc);
}

hs_sched_cache *hs_range_cache_sched(hs_range_cache *rc)
{
	if (rc && !rc->sched)
		rc->sched = hs_sched_cache_create();
	return rc ? rc->sched : NULL;
}

hs_range_cache *hs_range_cache_of(hs_profile_cache *pc)
{
	return pc ? hs_profile_cache_aux(pc, make, drop) : NULL;
}

void hs_range_cache_stats(const hs_range_cache *rc, size_t *hits, size_t *misses)
{
	*hits = rc ? rc->hits : 0;
	*misses = rc ? rc->misses : 0;
}

static uint64_t mix(uint64_t h, const void *p, size_t bytes)
{
	const unsigned char *b = p;
	size_t i = 0;
	for (; i + 8 <= bytes; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	for (; i < bytes; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void time_range(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c, int *netcomm)
{
	hs_ops_time(e, ops, n, c);
	*netcomm = 0;
	for (size_t q = 0; q < n; q++)
		*netcomm += ops[q].kind == HS_OP_COMM && e->grp_n[ops[q].group] > 1;
}

/* The key of e for ops[0..n-1]; 0 when the environment times a collective in a way the key does not hold. */
static int env_key(const hs_op_env *e, const hs_op *ops, size_t n, struct env_key *k)
{
	if (e->coll_time)
		return 0;
	memset(k, 0, sizeof *k);
	k->prof = e->prof;
	memcpy(&k->dev, e->dev, sizeof k->dev);
	k->host_gemm_s = e->host_gemm_s;
	k->host_kernel_s = e->host_kernel_s;
	k->mem_factors = e->mem_factors;
	k->coll_algo = e->coll_algo;
	unsigned used = 0;
	for (size_t q = 0; q < n; q++)
		if (ops[q].kind == HS_OP_COMM && (unsigned)ops[q].group < HS_GROUP_COUNT)
			used |= 1u << ops[q].group;
	for (int g = 0; g < HS_GROUP_COUNT; g++) {
		if (!(used & (1u << g)))
			continue;
		k->grp_n[g] = e->grp_n[g];
		if (e->grp_n[g] > 1) {
			if (!e->cgrp[g]) /* timed from the ranks themselves (hs_coll_time): not keyed here */
				return 0;
			memcpy(&k->cg[g], e->cgrp[g], sizeof k->cg[g]);
		}
	}
	return 1;
}

static void rehash(hs_range_cache *rc, size_t nslot)
{
	free(rc->slot);
	rc->nslot = nslot;
	rc->slot = hs_xcalloc(nslot, sizeof *rc->slot);
	for (size_t i = 0; i < rc->n; i++) {
		size_t j = (size_t)rc->e[i].hash & (nslot - 1);
		while (rc->slot[j])
			j = (j + 1) & (nslot - 1);
		rc->slot[j] = i + 1;
	}
}

int hs_range_cache_cost(hs_range_cache *rc, const hs_op_env *e, const hs_op *ops, size_t n, const uint64_t *fp,
			hs_ops_cost *c, int *netcomm)
{
	struct env_key k;
	if (!rc || !fp || n == 0 || !env_key(e, ops, n, &k)) {
		time_range(e, ops, n, c, netcomm);
		return 0;
	}
	uint64_t h = mix(*fp ^ (uint64_t)n, &k, sizeof k);
	if (rc->nslot) {
		for (size_t j = (size_t)h & (rc->nslot - 1); rc->slot[j]; j = (j + 1) & (rc->nslot - 1)) {
			const struct entry *en = &rc->e[rc->slot[j] - 1];
			if (en->hash == h && en->n == n && memcmp(&en->env, &k, sizeof k) == 0 &&
			    memcmp(en->ops, ops, n * sizeof *ops) == 0) {
				*c = en->c;
				*netcomm = en->netcomm;
				rc->hits++;
				return 1;
			}
		}
	}
	rc->misses++;
	time_range(e, ops, n, c, netcomm);
	if (rc->ops + n > HS_RANGE_CACHE_OPS)
		return 0; /* full: timed, not kept */
	if (2 * (rc->n + 1) > rc->nslot)
		rehash(rc, rc->nslot ? 2 * rc->nslot : 64);
	hs_xgrow(&rc->e, &rc->cap, rc->n + 1, sizeof *rc->e);
	struct entry *en = &rc->e[rc->n];
	en->hash = h;
	memcpy(&en->env, &k, sizeof k); /* bytewise, padding too: the next lookup compares bytes */
	en->ops = hs_xmalloc(n * sizeof *ops);
	memcpy(en->ops, ops, n * sizeof *ops);
	en->n = n;
	en->c = *c;
	en->c.rec = NULL;
	en->netcomm = *netcomm;
	size_t j = (size_t)h & (rc->nslot - 1);
	while (rc->slot[j])
		j = (j + 1) & (rc->nslot - 1);
	rc->slot[j] = ++rc->n;
	rc->ops += n;
	return 0;
}
