/* JSON-lines measurement records (see jsonl.h), parsed line by line with jansson (Debian libjansson-dev):
 * a well-kept parser, so real logs with nested fields read as they are. Each line's object is flattened into
 * the record's fields: nested objects by dotted keys, arrays skipped (no record kind reads one). */
#include "calib/jsonl.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/file.h"

/* Nested objects deeper than this are an error: no measurement record needs them, and the flattened keys
 * stay short. */
enum { MAX_DEPTH = 8 };

struct flat {
	hs_jrec *r;
	int cap;
};

static void add_field(struct flat *fl, const char *key, const char *str, double num)
{
	hs_jrec *r = fl->r;
	if (r->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 8;
		r->f = hs_xrealloc(r->f, (size_t)fl->cap * sizeof *r->f);
	}
	r->f[r->n++] = (hs_jfield){hs_xstrdup(key), str ? hs_xstrdup(str) : NULL, num};
}

/* The fields of object `o` under `prefix` ("" at the top). -1 with a message in `why` when too deep. */
static int flatten(struct flat *fl, const json_t *o, const char *prefix, int depth, char *why, size_t n)
{
	if (depth > MAX_DEPTH) {
		snprintf(why, n, "objects nested deeper than %d levels", MAX_DEPTH);
		return -1;
	}
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		size_t len = strlen(prefix) + strlen(k) + 2;
		char *key = hs_xmalloc(len);
		snprintf(key, len, "%s%s%s", prefix, *prefix ? "." : "", k);
		int rc = 0;
		switch (json_typeof(v)) {
		case JSON_OBJECT: rc = flatten(fl, v, key, depth + 1, why, n); break;
		case JSON_STRING: add_field(fl, key, json_string_value(v), 0); break;
		case JSON_INTEGER:
		case JSON_REAL: add_field(fl, key, NULL, json_number_value(v)); break;
		case JSON_TRUE: add_field(fl, key, NULL, 1); break;
		case JSON_FALSE: add_field(fl, key, NULL, 0); break;
		case JSON_NULL: /* dropped: a field that says nothing */
		case JSON_ARRAY: break; /* no record kind reads one; kept out rather than refused */
		}
		free(key);
		if (rc)
			return -1;
	}
	return 0;
}

static void rec_free(hs_jrec *r)
{
	for (int i = 0; i < r->n; i++) {
		free(r->f[i].key);
		free(r->f[i].str);
	}
	free(r->f);
}

void hs_jsonl_free(hs_jsonl *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		rec_free(&j->recs[i]);
	free(j->recs);
	free(j->name);
	free(j);
}

/* One non-blank line into *r; -1 with err naming file:line:col. */
static int parse_line(const char *p, size_t len, const char *name, int line, hs_jrec *r, hs_err *err)
{
	if (memchr(p, 0, len))
		return hs_err_set(err, HS_EINPUT, "%s:%d:1: NUL byte in the line", name, line);
	json_error_t je;
	/* duplicates are refused: two values for one field would make the record mean whichever came last */
	json_t *o = json_loadb(p, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
	if (!o)
		return hs_err_set(err, HS_EINPUT, "%s:%d:%d: %s", name, line, je.column > 0 ? je.column : 1, je.text);
	int rc = 0;
	if (!json_is_object(o)) {
		rc = hs_err_set(err, HS_EINPUT, "%s:%d:1: expected a JSON object (one record per line)", name, line);
	} else {
		struct flat fl = {r, 0};
		char why[128];
		if (flatten(&fl, o, "", 0, why, sizeof why))
			rc = hs_err_set(err, HS_EINPUT, "%s:%d:1: %s", name, line, why);
	}
	json_decref(o);
	return rc;
}

hs_jsonl *hs_jsonl_parse(const char *text, size_t len, const char *name, hs_err *err)
{
	hs_jsonl *j = hs_xcalloc(1, sizeof *j);
	j->name = hs_xstrdup(name);
	size_t cap = 0;
	const char *p = text, *end = text + len;
	int line = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		line++;
		const char *q = p;
		while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < le) {
			hs_jrec r = {line, 0, NULL};
			if (parse_line(p, (size_t)(le - p), name, line, &r, err)) {
				rec_free(&r);
				hs_jsonl_free(j);
				return NULL;
			}
			hs_xgrow(&j->recs, &cap, j->n + 1, sizeof *j->recs);
			j->recs[j->n++] = r;
		}
		p = nl ? nl + 1 : end;
	}
	return j;
}

hs_jsonl *hs_jsonl_load(const char *path, hs_err *err)
{
	size_t n;
	char *buf = hs_read_file(path, (size_t)1 << 30, "a measurement file", &n, err);
	if (!buf)
		return NULL;
	hs_jsonl *j = hs_jsonl_parse(buf, n, path, err);
	free(buf);
	return j;
}

const char *hs_jrec_str(const hs_jrec *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0)
			return r->f[i].str;
	return NULL;
}

int hs_jrec_num(const hs_jrec *r, const char *key, double *out)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0) {
			if (r->f[i].str)
				return -1;
			*out = r->f[i].num;
			return 0;
		}
	return -1;
}
