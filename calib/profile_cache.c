#include "calib/profile_cache.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

struct entry {
	char *key;
	hs_profile *p;
};

struct hs_profile_cache {
	struct entry *e;
	size_t n, cap;
	void *aux;
	void (*aux_drop)(void *);
};

hs_profile_cache *hs_profile_cache_create(void) { return hs_xcalloc(1, sizeof(hs_profile_cache)); }

void hs_profile_cache_free(hs_profile_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].key);
		hs_profile_free(c->e[i].p);
	}
	free(c->e);
	if (c->aux)
		c->aux_drop(c->aux);
	free(c);
}

void *hs_profile_cache_aux(hs_profile_cache *c, void *(*make)(void), void (*drop)(void *))
{
	if (!c->aux) {
		c->aux = make();
		c->aux_drop = drop;
	}
	return c->aux;
}

const hs_profile *hs_profile_cache_get(hs_profile_cache *c, const char *name, hs_err *err)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->e[i].key, name) == 0)
			return c->e[i].p;
	hs_profile *p = hs_profile_load(name, err);
	if (!p)
		return NULL;
	hs_xgrow(&c->e, &c->cap, c->n + 1, sizeof *c->e);
	c->e[c->n++] = (struct entry){hs_xstrdup(name), p};
	return p;
}
