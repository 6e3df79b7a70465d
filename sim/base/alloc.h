/* Allocation with one hook. Out of memory is not a recoverable input error for a simulator: these
 * functions print "hetsim: out of memory" and exit(1). Everything allocates through here, so a test can make
 * the N-th allocation fail (hs_alloc_fail_after, or HETSIM_FAIL_ALLOC=N in the environment) and check that
 * every such run ends with that message and exit 1, never a crash. */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stddef.h>

void *hs_xmalloc(size_t n);
void *hs_xcalloc(size_t count, size_t size);
void *hs_xrealloc(void *p, size_t n);
char *hs_xstrdup(const char *s);
/* Grow *arr (of *cap elements of `size` bytes) so that it holds at least `need` elements. The test is inline:
 * most calls (a graph's task and dependency appends, in a sweep millions per second) find room already, and
 * the call alone was 4% of a sweep point's instructions (bench_sweep). */
void hs_xgrow_to(void *arr_ptr, size_t *cap, size_t need, size_t size);
static inline void hs_xgrow(void *arr_ptr, size_t *cap, size_t need, size_t size)
{
	if (need > *cap)
		hs_xgrow_to(arr_ptr, cap, need, size);
}
/* Make the n-th allocation from now fail (0: none); counts every hs_x* call. */
void hs_alloc_fail_after(unsigned long long n);

#endif
