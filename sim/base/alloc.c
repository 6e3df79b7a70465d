#include "sim/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "hetsim: out of memory (asked for %zu bytes)\n", n);
	exit(1);
}

void *hs_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *hs_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom(count * size);
	return p;
}

void *hs_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *hs_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = hs_xmalloc(n);
	memcpy(d, s, n);
	return d;
}

void hs_xgrow(void *arr_ptr, size_t *cap, size_t need, size_t size)
{
	void **arr = arr_ptr;
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 8;
	while (c < need)
		c *= 2;
	*arr = hs_xrealloc(*arr, c * size);
	*cap = c;
}
