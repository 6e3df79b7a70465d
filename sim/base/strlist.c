#include "sim/base/strlist.h"

#include <stdlib.h>

#include "sim/base/alloc.h"

void hs_strlist_push(struct hs_strlist *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = hs_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
	}
	l->v[l->n++] = s;
}

void hs_strlist_free(struct hs_strlist *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
