#include "sim/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "hetsim: out of memory (asked for %zu bytes)\n", n);
	exit(1);
}

/* Fault injection (SQLite's approach): the N-th allocation through here fails as if malloc had returned
 * NULL. Set by hs_alloc_fail_after, or for a whole process by HETSIM_FAIL_ALLOC=N (read at the first
 * allocation), so tests/integration/alloc_fail.sh can walk N over a run and check that every run ends in
 * exit 1 with the message above or succeeds, never a signal. 0: never. */
static unsigned long long alloc_count, fail_at;
static int fail_read;

void hs_alloc_fail_after(unsigned long long n)
{
	fail_read = 1;
	fail_at = n;
	alloc_count = 0;
}

static int injected(void)
{
	if (!fail_read) {
		const char *e = getenv("HETSIM_FAIL_ALLOC");
		fail_read = 1;
		fail_at = e ? strtoull(e, NULL, 10) : 0;
	}
	return fail_at && ++alloc_count == fail_at;
}

void *hs_xmalloc(size_t n)
{
	void *p = injected() ? NULL : malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *hs_xcalloc(size_t count, size_t size)
{
	void *p = injected() ? NULL : calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom(count * size);
	return p;
}

void *hs_xrealloc(void *p, size_t n)
{
	void *q = injected() ? NULL : realloc(p, n ? n : 1);
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

void hs_xgrow_to(void *arr_ptr, size_t *cap, size_t need, size_t size)
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
