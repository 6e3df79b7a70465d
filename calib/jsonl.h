/* hs_jsonl: JSON-lines measurement files, one JSON object per line, parsed with jansson.
 *
 * Kernels and benchmarks write one record per line; calibration reads them back here. Blank lines are skipped.
 * A line that is not one JSON object (malformed JSON, trailing text, an array, a duplicate key) is an error
 * naming the file, line and column. Each object is flattened into fields: a nested object's members by dotted
 * keys ({"env": {"cuda": "13.0"}} gives "env.cuda"), arrays skipped, null fields dropped; booleans read as
 * numbers 1 and 0. Unknown fields are kept and ignored by the readers. */
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
