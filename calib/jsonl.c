/* A small JSON-lines reader for flat measurement records (see jsonl.h). */
#include "calib/jsonl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/file.h"

struct lex {
	const char *s, *end, *line_start;
	const char *name;
	int line;
	hs_err *err;
};

static int lerr(struct lex *x, const char *at, const char *what)
{
	return hs_err_set(x->err, HS_EINPUT, "%s:%d:%d: %s", x->name, x->line, (int)(at - x->line_start) + 1, what);
}

static void skip_ws(struct lex *x)
{
	while (x->s < x->end && (*x->s == ' ' || *x->s == '\t' || *x->s == '\r'))
		x->s++;
}

static void put_utf8(char **o, unsigned cp)
{
	char *p = *o;
	if (cp < 0x80)
		*p++ = (char)cp;
	else if (cp < 0x800) {
		*p++ = (char)(0xC0 | (cp >> 6));
		*p++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*p++ = (char)(0xE0 | (cp >> 12));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*p++ = (char)(0x80 | (cp & 0x3F));
	}
	*o = p;
}

/* A JSON string at x->s (the opening quote); returns a malloc'd copy or NULL on error. */
static char *lex_string(struct lex *x)
{
	const char *start = x->s++;
	char *out = hs_xmalloc((size_t)(x->end - x->s) * 3 + 1), *o = out;
	while (x->s < x->end && *x->s != '"') {
		unsigned char c = (unsigned char)*x->s;
		if (c < 0x20) {
			lerr(x, x->s, "control character inside a string");
			goto fail;
		}
		if (c != '\\') {
			*o++ = (char)c;
			x->s++;
			continue;
		}
		if (x->s + 1 >= x->end) {
			lerr(x, x->s, "unterminated escape");
			goto fail;
		}
		char e = x->s[1];
		x->s += 2;
		switch (e) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp = 0;
			for (int i = 0; i < 4; i++) {
				char h = x->s < x->end ? *x->s : 0;
				int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
				if (v < 0) {
					lerr(x, x->s, "bad \\u escape (expected 4 hex digits)");
					goto fail;
				}
				cp = cp * 16 + (unsigned)v;
				x->s++;
			}
			put_utf8(&o, cp);
			break;
		}
		default: lerr(x, x->s - 2, "unknown escape in a string"); goto fail;
		}
	}
	if (x->s >= x->end) {
		lerr(x, start, "unterminated string");
		goto fail;
	}
	x->s++;
	*o = 0;
	return out;
fail:
	free(out);
	return NULL;
}

static int parse_line(struct lex *x, hs_jrec *r)
{
	skip_ws(x);
	if (x->s >= x->end || *x->s != '{')
		return lerr(x, x->s, "expected a JSON object '{' at the start of the line");
	x->s++;
	skip_ws(x);
	size_t cap = 0;
	if (x->s < x->end && *x->s == '}') {
		x->s++;
		goto tail;
	}
	for (;;) {
		skip_ws(x);
		if (x->s >= x->end || *x->s != '"')
			return lerr(x, x->s, "expected a key in double quotes");
		char *key = lex_string(x);
		if (!key)
			return -1;
		skip_ws(x);
		if (x->s >= x->end || *x->s != ':') {
			free(key);
			return lerr(x, x->s, "expected ':' after the key");
		}
		x->s++;
		skip_ws(x);
		hs_jfield f = {key, NULL, 0};
		int keep = 1;
		const char *v = x->s;
		if (v >= x->end) {
			free(key);
			return lerr(x, v, "expected a value");
		}
		if (*v == '"') {
			if (!(f.str = lex_string(x))) {
				free(key);
				return -1;
			}
		} else if (*v == '{' || *v == '[') {
			free(key);
			return lerr(x, v, "nested objects and arrays are not supported (expected a number or a string)");
		} else if (x->end - v >= 4 && strncmp(v, "true", 4) == 0) {
			f.num = 1, x->s += 4;
		} else if (x->end - v >= 5 && strncmp(v, "false", 5) == 0) {
			f.num = 0, x->s += 5;
		} else if (x->end - v >= 4 && strncmp(v, "null", 4) == 0) {
			keep = 0, x->s += 4;
		} else {
			/* JSON numbers only: strtod would also take hex, inf and nan */
			const char *p = v;
			if (*p == '-')
				p++;
			if (p >= x->end || !(*p >= '0' && *p <= '9')) {
				free(key);
				return lerr(x, v, "expected a number, a string, true, false or null");
			}
			char buf[64];
			size_t len = 0;
			while (v + len < x->end && len < sizeof buf - 1 &&
			       strchr("0123456789+-.eE", v[len]))
				len++;
			memcpy(buf, v, len);
			buf[len] = 0;
			char *endp;
			errno = 0;
			f.num = strtod(buf, &endp);
			if (endp != buf + len || errno == ERANGE || !isfinite(f.num)) {
				free(key);
				return lerr(x, v, "malformed number");
			}
			x->s += len;
		}
		if (keep) {
			for (int i = 0; i < r->n; i++)
				if (strcmp(r->f[i].key, key) == 0) {
					free(key);
					free(f.str);
					return lerr(x, v, "duplicate key");
				}
			hs_xgrow(&r->f, &cap, (size_t)r->n + 1, sizeof *r->f);
			r->f[r->n++] = f;
		} else {
			free(key);
		}
		skip_ws(x);
		if (x->s < x->end && *x->s == ',') {
			x->s++;
			continue;
		}
		if (x->s < x->end && *x->s == '}') {
			x->s++;
			break;
		}
		return lerr(x, x->s, "expected ',' or '}'");
	}
tail:
	skip_ws(x);
	if (x->s < x->end)
		return lerr(x, x->s, "unexpected text after the object");
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
			if (memchr(p, 0, (size_t)(le - p))) {
				hs_err_set(err, HS_EINPUT, "%s:%d:1: NUL byte in the line", name, line);
				hs_jsonl_free(j);
				return NULL;
			}
			struct lex x = {p, le, p, name, line, err};
			hs_jrec r = {line, 0, NULL};
			if (parse_line(&x, &r)) {
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
