/* Allocation with one hook. Out of memory is not a recoverable input error for a simulator: these
 * functions print "hetsim: out of memory" and exit(1). Tests replace the hook (hs_alloc_fail_after) to
 * check that allocation paths are reached without leaking; everything allocates through here. */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stddef.h>

void *hs_xmalloc(size_t n);
void *hs_xcalloc(size_t count, size_t size);
void *hs_xrealloc(void *p, size_t n);
char *hs_xstrdup(const char *s);
/* Grow *arr (of *cap elements of `size` bytes) so that it holds at least `need` elements. */
void hs_xgrow(void *arr_ptr, size_t *cap, size_t need, size_t size);

#endif
