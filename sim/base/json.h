/* A small streaming JSON writer: objects, arrays, keys and scalars with commas placed for you, strings
 * escaped, non-finite numbers written as null (JSON has no NaN). Used by every --json output. */
#ifndef HS_JSON_H
#define HS_JSON_H

#include <stdio.h>

typedef struct hs_json {
	FILE *f;
	int depth;
	int first[64]; /* no element written yet at this depth */
	int after_key;
} hs_json;

void hs_json_init(hs_json *j, FILE *f);
void hs_json_obj(hs_json *j);   /* { */
void hs_json_end_obj(hs_json *j);
void hs_json_arr(hs_json *j);   /* [ */
void hs_json_end_arr(hs_json *j);
void hs_json_key(hs_json *j, const char *k);
void hs_json_str(hs_json *j, const char *v);
void hs_json_num(hs_json *j, double v);
void hs_json_int(hs_json *j, long long v);
void hs_json_bool(hs_json *j, int v);
/* v / 1000 with exactly three decimals, from an integer: a time in nanoseconds written in microseconds loses
 * nothing to rounding (trace timestamps: slices that meet never overlap in print). */
void hs_json_milli(hs_json *j, long long v);
/* key + value shorthands */
void hs_json_kstr(hs_json *j, const char *k, const char *v);
void hs_json_knum(hs_json *j, const char *k, double v);
void hs_json_kint(hs_json *j, const char *k, long long v);
void hs_json_kmilli(hs_json *j, const char *k, long long v);

#endif
