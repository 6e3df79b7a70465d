/* hs_strlist: a growable list of borrowed strings (`--set` overrides, positional arguments). The list owns
 * its array, not the strings, unless its user says otherwise (a sweep's fixed overrides are duplicated). */
#ifndef HS_STRLIST_H
#define HS_STRLIST_H

struct hs_strlist {
	const char **v;
	int n, cap;
};

/* Append s (not copied). Dies on allocation failure, as every hs_x* allocation does (sim/base/alloc.h). */
void hs_strlist_push(struct hs_strlist *l, const char *s);
void hs_strlist_free(struct hs_strlist *l);

#endif
