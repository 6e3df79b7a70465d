/* Op-range costs across the steps of one thread (sim/exec/range_cache.h says what the key holds and why). */
#include "sim/exec/range_cache.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll_impl.h"
#include "sim/exec/pipe_prog.h"

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

/* A kept list of n ops, as runs in order: a literal run is its ops themselves (the next `len` of `lit`), a
 * repeating run says that each of its ops equals the op `back` before it in the list. A list of L copies of a
 * layer is then the layer's ops and one run, and a hit compares every op still (a literal run against `lit`, a
 * repeating one against the list's own earlier ops, which the runs before have checked), where copying the
 * whole list into the entry was 3% of a sweep point's instructions (bench_sweep, 2026-12). */
struct run {
	uint32_t at, len;
	uint32_t back; /* 0: literal */
};

struct entry {
	uint64_t hash;
	struct env_key env;
	hs_op *lit;      /* the literal runs' ops, in order */
	struct run *run; /* [nrun] */
	size_t n, nrun;
	hs_ops_cost c;
	int netcomm;
};

/* A communication task's time (hs_range_cache_coll_time). */
struct coll_entry {
	uint64_t hash;
	hs_coll_grp g;
	int op, algo;
	double bytes, s;
};

/* A group's summary (hs_range_cache_grp_init). */
struct grp_entry {
	uint64_t hash, cluster_id;
	int *ranks; /* [n] */
	int n;
	hs_coll_grp g;
};

/* A kernel memo key (hs_range_cache_kernel_key): the device type's bytes and the memory factors. */
struct dev_key {
	hs_device_type dev;
	int mem_factors;
};

struct hs_range_cache {
	struct entry *e;
	size_t n, cap;
	size_t *slot; /* open addressing over e: index + 1, 0 empty */
	size_t nslot;
	size_t ops;   /* ops held (literal ones) */
	size_t hits, misses;
	hs_sched_cache *sched;
	hs_pipe_progs *progs; /* programs of those schedules */
	uint32_t *same; /* [cap_same] scratch: hs_ops_time_same's answer for the list being kept */
	size_t cap_same;
	struct coll_entry *ce; /* [nce] */
	size_t nce, cap_ce;
	uint32_t *cslot;       /* [ncslot] open addressing over ce: index + 1, 0 empty */
	size_t ncslot;
	struct grp_entry *ge; /* [nge] */
	size_t nge, cap_ge;
	uint32_t *gslot;      /* [ngslot] open addressing over ge: index + 1, 0 empty */
	size_t ngslot;
	hs_op_memo *kernels;
	struct dev_key *devs[HS_RANGE_CACHE_DEVS];
	size_t ndevs;
};

static void *make(void) { return hs_xcalloc(1, sizeof(hs_range_cache)); }

static void drop(void *p)
{
	hs_range_cache *rc = p;
	for (size_t i = 0; i < rc->n; i++) {
		free(rc->e[i].lit);
		free(rc->e[i].run);
	}
	free(rc->e);
	free(rc->slot);
	hs_sched_cache_free(rc->sched);
	hs_pipe_progs_free(rc->progs);
	free(rc->same);
	free(rc->ce);
	free(rc->cslot);
	for (size_t i = 0; i < rc->nge; i++)
		free(rc->ge[i].ranks);
	free(rc->ge);
	free(rc->gslot);
	hs_op_memo_free(rc->kernels);
	for (size_t i = 0; i < rc->ndevs; i++)
		free(rc->devs[i]);
	free(rc);
}

hs_op_memo *hs_range_cache_kernels(hs_range_cache *rc)
{
	if (rc && !rc->kernels)
		rc->kernels = hs_op_memo_create();
	return rc ? rc->kernels : NULL;
}

const void *hs_range_cache_kernel_key(hs_range_cache *rc, const hs_device_type *dev, int mem_factors)
{
	if (!rc)
		return NULL;
	for (size_t i = 0; i < rc->ndevs; i++)
		if (rc->devs[i]->mem_factors == mem_factors && memcmp(&rc->devs[i]->dev, dev, sizeof *dev) == 0)
			return rc->devs[i];
	if (rc->ndevs == HS_RANGE_CACHE_DEVS)
		return NULL;
	struct dev_key *k = hs_xcalloc(1, sizeof *k);
	memcpy(&k->dev, dev, sizeof *dev);
	k->mem_factors = mem_factors;
	rc->devs[rc->ndevs++] = k;
	return k;
}

hs_sched_cache *hs_range_cache_sched(hs_range_cache *rc)
{
	if (rc && !rc->sched)
		rc->sched = hs_sched_cache_create();
	return rc ? rc->sched : NULL;
}

hs_pipe_progs *hs_range_cache_progs(hs_range_cache *rc)
{
	if (rc && !rc->progs)
		rc->progs = hs_pipe_progs_create();
	return rc ? rc->progs : NULL;
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

/* ops[0..n-1] timed; same: NULL, or room for n to receive hs_ops_time_same's answer. */
static void time_range(const hs_op_env *e, const hs_op *ops, size_t n, hs_ops_cost *c, int *netcomm,
		       uint32_t *same)
{
	if (same)
		hs_ops_time_same(e, ops, n, c, same);
	else
		hs_ops_time(e, ops, n, c);
	*netcomm = 0;
	for (size_t q = 0; q < n; q++)
		*netcomm += ops[q].kind == HS_OP_COMM && e->grp_n[ops[q].group] > 1;
}

/* The key of e for a list whose collectives run over `used` (hs_ops_groups; the caller's, as scanning the
 * ops for them on every lookup was 0.8% of a sweep point); 0 when the environment times a collective in a way
 * the key does not hold. */
static int env_key(const hs_op_env *e, unsigned used, struct env_key *k)
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

/* A hash of k from h: its fields before the groups, and the groups the list uses (the others are zero), so
 * that a lookup does not hash 2 KB of mostly zeros (that was 0.8% of a sweep point). */
static uint64_t key_hash(const struct env_key *k, uint64_t h)
{
	h = mix(h, k, offsetof(struct env_key, cg));
	for (int g = 0; g < HS_GROUP_COUNT; g++)
		if (k->grp_n[g] > 1)
			h = mix(h, &k->cg[g], sizeof k->cg[g]);
	return h;
}

/* Is ops[0..en->n-1] the list entry en keeps? */
static int same_ops(const struct entry *en, const hs_op *ops)
{
	const hs_op *lit = en->lit;
	for (size_t k = 0; k < en->nrun; k++) {
		const struct run *r = &en->run[k];
		const hs_op *a = ops + r->at;
		if (memcmp(a, r->back ? a - r->back : lit, r->len * sizeof *a) != 0)
			return 0;
		if (!r->back)
			lit += r->len;
	}
	return 1;
}

/* Entry en keeps ops[0..n-1], by same[] (hs_ops_time_same: same[i] <= i, and ops[i] equals ops[same[i]]).
 * Returns the literal ops held. */
static size_t keep_ops(struct entry *en, const hs_op *ops, size_t n, const uint32_t *same)
{
	size_t nrun = 0, nlit = 0;
	for (size_t i = 0; i < n; nrun++) {
		size_t back = i - same[i], j = i + 1;
		while (j < n && j - same[j] == back)
			j++;
		nlit += back ? 0 : j - i;
		i = j;
	}
	en->n = n;
	en->nrun = nrun;
	en->run = hs_xmalloc(nrun * sizeof *en->run);
	en->lit = hs_xmalloc((nlit ? nlit : 1) * sizeof *en->lit);
	hs_op *lit = en->lit;
	nrun = 0;
	for (size_t i = 0; i < n;) {
		size_t back = i - same[i], j = i + 1;
		while (j < n && j - same[j] == back)
			j++;
		en->run[nrun++] = (struct run){(uint32_t)i, (uint32_t)(j - i), (uint32_t)back};
		if (!back) {
			memcpy(lit, ops + i, (j - i) * sizeof *ops);
			lit += j - i;
		}
		i = j;
	}
	return nlit;
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
			unsigned groups, hs_ops_cost *c, int *netcomm)
{
	struct env_key k;
	if (!rc || !fp || n == 0 || n > UINT32_MAX || !env_key(e, groups, &k)) {
		time_range(e, ops, n, c, netcomm, NULL);
		return 0;
	}
	uint64_t h = key_hash(&k, *fp ^ (uint64_t)n);
	if (rc->nslot) {
		for (size_t j = (size_t)h & (rc->nslot - 1); rc->slot[j]; j = (j + 1) & (rc->nslot - 1)) {
			const struct entry *en = &rc->e[rc->slot[j] - 1];
			if (en->hash == h && en->n == n && memcmp(&en->env, &k, sizeof k) == 0 && same_ops(en, ops)) {
				*c = en->c;
				*netcomm = en->netcomm;
				rc->hits++;
				return 1;
			}
		}
	}
	rc->misses++;
	hs_xgrow(&rc->same, &rc->cap_same, n, sizeof *rc->same);
	time_range(e, ops, n, c, netcomm, rc->same);
	if (rc->ops + n > HS_RANGE_CACHE_OPS)
		return 0; /* full: timed, not kept */
	if (2 * (rc->n + 1) > rc->nslot)
		rehash(rc, rc->nslot ? 2 * rc->nslot : 64);
	hs_xgrow(&rc->e, &rc->cap, rc->n + 1, sizeof *rc->e);
	struct entry *en = &rc->e[rc->n];
	en->hash = h;
	memcpy(&en->env, &k, sizeof k); /* bytewise, padding too: the next lookup compares bytes */
	rc->ops += keep_ops(en, ops, n, rc->same);
	en->c = *c;
	en->c.rec = NULL;
	en->netcomm = *netcomm;
	size_t j = (size_t)h & (rc->nslot - 1);
	while (rc->slot[j])
		j = (j + 1) & (rc->nslot - 1);
	rc->slot[j] = ++rc->n;
	return 0;
}

static void coll_rehash(hs_range_cache *rc, size_t nslot)
{
	free(rc->cslot);
	rc->ncslot = nslot;
	rc->cslot = hs_xcalloc(nslot, sizeof *rc->cslot);
	for (size_t i = 0; i < rc->nce; i++) {
		size_t j = (size_t)rc->ce[i].hash & (nslot - 1);
		while (rc->cslot[j])
			j = (j + 1) & (nslot - 1);
		rc->cslot[j] = (uint32_t)i + 1;
	}
}

double hs_range_cache_coll_time(hs_range_cache *rc, const hs_coll_grp *g, int op, int algo, double bytes)
{
	if (!rc || g->fab)
		return hs_coll_grp_time(g, (enum hs_coll_op)op, (enum hs_coll_algo)algo, bytes, NULL);
	uint64_t w[3] = {(uint64_t)(unsigned)op, (uint64_t)(unsigned)algo, 0};
	memcpy(&w[2], &bytes, sizeof bytes);
	uint64_t h = mix(mix(0x51ed27ull, w, sizeof w), g, sizeof *g);
	if (rc->ncslot)
		for (size_t j = (size_t)h & (rc->ncslot - 1); rc->cslot[j]; j = (j + 1) & (rc->ncslot - 1)) {
			const struct coll_entry *en = &rc->ce[rc->cslot[j] - 1];
			if (en->hash == h && en->op == op && en->algo == algo && en->bytes == bytes &&
			    memcmp(&en->g, g, sizeof *g) == 0)
				return en->s;
		}
	double s = hs_coll_grp_time(g, (enum hs_coll_op)op, (enum hs_coll_algo)algo, bytes, NULL);
	if (rc->nce >= HS_RANGE_CACHE_COLL)
		return s; /* full: timed, not kept */
	if (2 * (rc->nce + 1) > rc->ncslot)
		coll_rehash(rc, rc->ncslot ? 2 * rc->ncslot : 256);
	hs_xgrow(&rc->ce, &rc->cap_ce, rc->nce + 1, sizeof *rc->ce);
	struct coll_entry *en = &rc->ce[rc->nce];
	memset(en, 0, sizeof *en);
	en->hash = h;
	memcpy(&en->g, g, sizeof *g); /* bytewise: the next lookup compares bytes */
	en->op = op;
	en->algo = algo;
	en->bytes = bytes;
	en->s = s;
	size_t j = (size_t)h & (rc->ncslot - 1);
	while (rc->cslot[j])
		j = (j + 1) & (rc->ncslot - 1);
	rc->cslot[j] = (uint32_t)++rc->nce;
	return s;
}

static void grp_rehash(hs_range_cache *rc, size_t nslot)
{
	free(rc->gslot);
	rc->ngslot = nslot;
	rc->gslot = hs_xcalloc(nslot, sizeof *rc->gslot);
	for (size_t i = 0; i < rc->nge; i++) {
		size_t j = (size_t)rc->ge[i].hash & (nslot - 1);
		while (rc->gslot[j])
			j = (j + 1) & (nslot - 1);
		rc->gslot[j] = (uint32_t)i + 1;
	}
}

int hs_range_cache_grp_init(hs_range_cache *rc, uint64_t cluster_id, hs_coll_grp *g, const hs_cluster *c,
			    const int *ranks, int n, hs_err *err)
{
	if (!rc || !cluster_id || n <= 0)
		return hs_coll_grp_init(g, c, ranks, n, err);
	uint64_t h = mix(mix(0x6a09e667ull, &cluster_id, sizeof cluster_id), ranks, (size_t)n * sizeof *ranks);
	if (rc->ngslot)
		for (size_t j = (size_t)h & (rc->ngslot - 1); rc->gslot[j]; j = (j + 1) & (rc->ngslot - 1)) {
			const struct grp_entry *en = &rc->ge[rc->gslot[j] - 1];
			if (en->hash == h && en->cluster_id == cluster_id && en->n == n &&
			    memcmp(en->ranks, ranks, (size_t)n * sizeof *ranks) == 0) {
				memcpy(g, &en->g, sizeof *g); /* bytewise, padding too: callers compare summaries' bytes */
				return 0;
			}
		}
	if (hs_coll_grp_init(g, c, ranks, n, err))
		return -1; /* not kept: the next call fails the same way */
	if (rc->nge >= HS_RANGE_CACHE_GRP)
		return 0; /* full: summarised, not kept */
	if (2 * (rc->nge + 1) > rc->ngslot)
		grp_rehash(rc, rc->ngslot ? 2 * rc->ngslot : 64);
	hs_xgrow(&rc->ge, &rc->cap_ge, rc->nge + 1, sizeof *rc->ge);
	struct grp_entry *en = &rc->ge[rc->nge];
	en->hash = h;
	en->cluster_id = cluster_id;
	en->n = n;
	en->ranks = hs_xmalloc((size_t)n * sizeof *ranks);
	memcpy(en->ranks, ranks, (size_t)n * sizeof *ranks);
	memcpy(&en->g, g, sizeof *g);
	size_t j = (size_t)h & (rc->ngslot - 1);
	while (rc->gslot[j])
		j = (j + 1) & (rc->ngslot - 1);
	rc->gslot[j] = (uint32_t)++rc->nge;
	return 0;
}
