#include "sim/base/json.h"

#include <math.h>

void hs_json_init(hs_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
	j->after_key = 0;
}

static void sep(hs_json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
}

static void open(hs_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = 1;
}

static void close_(hs_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void hs_json_obj(hs_json *j) { open(j, '{'); }
void hs_json_end_obj(hs_json *j) { close_(j, '}'); }
void hs_json_arr(hs_json *j) { open(j, '['); }
void hs_json_end_arr(hs_json *j) { close_(j, ']'); }

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void hs_json_key(hs_json *j, const char *k)
{
	sep(j);
	put_str(j->f, k);
	fputc(':', j->f);
	j->after_key = 1;
}

void hs_json_str(hs_json *j, const char *v)
{
	sep(j);
	if (v)
		put_str(j->f, v);
	else
		fputs("null", j->f);
}

void hs_json_num(hs_json *j, double v)
{
	sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.10g", v);
	else
		fputs("null", j->f);
}

void hs_json_int(hs_json *j, long long v)
{
	sep(j);
	fprintf(j->f, "%lld", v);
}

void hs_json_milli(hs_json *j, long long v)
{
	sep(j);
	long long a = v < 0 ? -v : v;
	fprintf(j->f, "%s%lld.%03lld", v < 0 ? "-" : "", a / 1000, a % 1000);
}

void hs_json_bool(hs_json *j, int v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void hs_json_kstr(hs_json *j, const char *k, const char *v) { hs_json_key(j, k), hs_json_str(j, v); }
void hs_json_knum(hs_json *j, const char *k, double v) { hs_json_key(j, k), hs_json_num(j, v); }
void hs_json_kmilli(hs_json *j, const char *k, long long v) { hs_json_key(j, k), hs_json_milli(j, v); }
void hs_json_kint(hs_json *j, const char *k, long long v) { hs_json_key(j, k), hs_json_int(j, v); }
