/* hs_jsonl: JSON-lines measurement files, one flat object per line (numbers, strings, true/false/null).
 *
 * Kernels and benchmarks write one record per line; calibration reads them back here. Blank lines are skipped.
 * Anything else that is not a flat object (an array, a nested object, trailing text, a bad escape) is an
 * error naming the file, line and column. Booleans read as numbers 1 and 0; null fields are dropped. */
#ifndef HS_JSONL_H
#define HS_JSONL_H

#include <stddef.h>

#include "sim/base/err.h"

typedef struct hs_jfield {
	char *key;
	char *str;  /* string value, or NULL for a number */
	double num; /* number value (booleans: 1, 0) */
} hs_jfield;

typedef struct hs_jrec {
	int line; /* 1-based line in the file */
	int n;
	hs_jfield *f;
} hs_jrec;

typedef struct hs_jsonl {
	char *name; /* file name for messages */
	size_t n;
	hs_jrec *recs;
} hs_jsonl;

hs_jsonl *hs_jsonl_load(const char *path, hs_err *err);
/* Parse text; `name` stands for the file in messages. */
hs_jsonl *hs_jsonl_parse(const char *text, size_t len, const char *name, hs_err *err);
void hs_jsonl_free(hs_jsonl *j);

/* Field access: NULL / -1 when the key is absent or of the other type. */
const char *hs_jrec_str(const hs_jrec *r, const char *key);
int hs_jrec_num(const hs_jrec *r, const char *key, double *out);

#endif
