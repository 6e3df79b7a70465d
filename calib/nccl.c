/* nccl-tests log reader and alpha-beta fit (see nccl.h). */
#include "calib/nccl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/fit.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"

#define MAXTOK 32

/* Split a line into whitespace-separated tokens (in place). */
static int tokenize(char *s, char **tok)
{
	int n = 0;
	while (*s && n < MAXTOK) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		tok[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = 0;
	}
	return n;
}

static int is_uint(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* #wrong: a count, N/A (older nccl-tests without validation) or -1 (newer ones without validation) */
static int wrong_ok(const char *s) { return is_uint(s) || strcmp(s, "N/A") == 0 || strcmp(s, "-1") == 0; }

static int parse_num(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static const char *const types[] = {"int8",    "uint8",  "int32",  "uint32", "int64",	 "uint64", "half",
				    "float",   "double", "bfloat16", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2",
				    "float16", "float32", "float64", "int", "uint", NULL};
static const char *const redops[] = {"sum", "prod", "min", "max", "avg", "mulsum", "none", NULL};

static int in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (strcmp(s, *l) == 0)
			return 1;
	return 0;
}

/* Launcher prefixes: "[1,0]<stdout>:", "0:", "host:" as leading tokens ending in ':'. Returns the number
 * of leading tokens to skip. */
static int prefix_tokens(char **tok, int n)
{
	int i = 0;
	while (i < n - 1 && tok[i][strlen(tok[i]) - 1] == ':')
		i++;
	return i;
}

static int lerr(hs_err *err, const char *name, int line, const char *what, const char *tok)
{
	return hs_err_set(err, HS_EINPUT, "%s:%d: malformed nccl-tests row: %s%s%s%s", name, line, what,
			  tok ? " ('" : "", tok ? tok : "", tok ? "')" : "");
}

static void detect_collective(const char *text, const char *name, hs_nccl_log *out)
{
	static const struct {
		const char *needle, *coll;
	} pats[] = {{"all_reduce", "all_reduce"},	{"allreduce", "all_reduce"},
		    {"reduce_scatter", "reduce_scatter"}, {"reducescatter", "reduce_scatter"},
		    {"all_gather", "all_gather"},	{"allgather", "all_gather"},
		    {"alltoall", "alltoall"},		{"all_to_all", "alltoall"},
		    {"broadcast", "broadcast"},		{"sendrecv", "sendrecv"},
		    {"reduce_perf", "reduce"},		{"collective: reduce", "reduce"},
		    {"-reduce", "reduce"},		{NULL, NULL}};
	/* the nccl-tests binary's name first ("# Collective test starting: all_gather_perf", a command line), so
	 * that a scenario or host name elsewhere in the text does not decide; then any mention; then the file name */
	static const struct {
		const char *bin, *coll;
	} bins[] = {{"all_reduce_perf", "all_reduce"}, {"all_gather_perf", "all_gather"},
		    {"reduce_scatter_perf", "reduce_scatter"}, {"alltoall_perf", "alltoall"},
		    {"broadcast_perf", "broadcast"}, {"sendrecv_perf", "sendrecv"}, {NULL, NULL}};
	const char *first = NULL;
	for (int i = 0; bins[i].bin; i++) {
		const char *at = strstr(text, bins[i].bin);
		if (at && (!first || at < first)) {
			first = at;
			snprintf(out->collective, sizeof out->collective, "%s", bins[i].coll);
		}
	}
	const char *rp = strstr(text, "reduce_perf");
	if (rp && (!first || rp < first) && (rp == text || rp[-1] != '_'))
		snprintf(out->collective, sizeof out->collective, "reduce");
	for (int pass = 0; pass < 2 && !out->collective[0]; pass++) {
		const char *hay = pass ? name : text;
		for (int i = 0; pats[i].needle; i++)
			if (strstr(hay, pats[i].needle)) {
				snprintf(out->collective, sizeof out->collective, "%s", pats[i].coll);
				break;
			}
	}
	const char *a = strstr(text, "NCCL_ALGO=");
	if (a) {
		a += strlen("NCCL_ALGO=");
		size_t n = strcspn(a, " \t\n,;");
		if (n >= sizeof out->algo)
			n = sizeof out->algo - 1;
		for (size_t i = 0; i < n; i++)
			out->algo[i] = (char)tolower((unsigned char)a[i]);
		out->algo[n] = 0;
	} else {
		snprintf(out->algo, sizeof out->algo, "default");
	}
}

/* One row's tokens t[0..m-1]: size count type [redop] [root] time algbw busbw [#wrong] [time algbw busbw
 * [#wrong]]; has_root from the column header (-1 unknown). 0, or -1 with err set at name:line. */
static int parse_row(char **t, int m, int has_root, const char *name, int line, hs_nccl_row *row, hs_err *err)
{
	hs_nccl_row r = {.line = line};
	if (m < 6)
		return lerr(err, name, line, "too few columns", NULL);
	if (parse_num(t[0], &r.bytes) || !is_uint(t[1]) || parse_num(t[1], &r.count))
		return lerr(err, name, line, "expected a size and an element count", t[1]);
	if (!in_list(t[2], types))
		return lerr(err, name, line, "unknown data type", t[2]);
	int i = 3;
	if (in_list(t[i], redops))
		i++;
	/* the root column: from the header, else an integer token small enough to be a rank (times are
	 * printed with decimals below 10 ms) */
	int root = has_root;
	if (root < 0) {
		double rv;
		root = i < m && (is_uint(t[i]) || (t[i][0] == '-' && is_uint(t[i] + 1))) && !parse_num(t[i], &rv) &&
		       rv < 4096;
	}
	if (root) {
		double rv;
		if (i >= m || parse_num(t[i], &rv) || rv != floor(rv))
			return lerr(err, name, line, "expected a root rank", i < m ? t[i] : NULL);
		i++;
	}
	/* out-of-place: time algbw busbw [#wrong]; then in-place: time algbw busbw [#wrong] */
	double v[3];
	if (m - i < 3)
		return lerr(err, name, line, "expected time, algbw and busbw", NULL);
	for (int q = 0; q < 3; q++)
		if (parse_num(t[i + q], &v[q]) || v[q] < 0)
			return lerr(err, name, line, "expected a non-negative number", t[i + q]);
	r.t = v[0] * 1e-6;
	r.algbw = v[1] * 1e9;
	r.busbw = v[2] * 1e9;
	i += 3;
	int rest = m - i;
	/* rest: 0 | 1 = #wrong | 3 = in-place t a b | 4 = #wrong + in-place | 5 = both #wrong */
	if (rest != 0 && rest != 1 && rest != 3 && rest != 4 && rest != 5)
		return lerr(err, name, line, "unexpected number of columns", t[i]);
	if (rest == 1 || rest == 4 || rest == 5) {
		if (!wrong_ok(t[i]))
			return lerr(err, name, line, "expected #wrong (an integer, -1 or N/A)", t[i]);
		i++;
	}
	if (rest >= 3) {
		double w[3];
		for (int q = 0; q < 3; q++)
			if (parse_num(t[i + q], &w[q]) || w[q] < 0)
				return lerr(err, name, line, "expected a non-negative in-place number", t[i + q]);
		r.t_inplace = w[0] * 1e-6;
		i += 3;
		if (rest == 5) {
			if (!wrong_ok(t[i]))
				return lerr(err, name, line, "expected #wrong (an integer, -1 or N/A)", t[i]);
			i++;
		}
	}
	rest = m - i;
	if (rest != 0)
		return lerr(err, name, line, "unexpected columns", t[i]);
	if (r.bytes > 0 && !(r.t > 0))
		return lerr(err, name, line, "zero time for a non-empty message", NULL);
	*row = r;
	return 0;
}

int hs_nccl_parse(const char *text, size_t len, const char *name, hs_nccl_log *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name);
	char *copy = hs_xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = 0;
	if (strlen(copy) != len) {
		free(copy);
		return hs_err_set(err, HS_EINPUT, "%s: NUL byte in the log (not a text file?)", name);
	}
	detect_collective(copy, name, out);
	int has_root = -1; /* from the column header: -1 unknown */
	int maxrank = -1;
	size_t cap = 0;
	char *save = NULL;
	int line = 0;
	for (char *p = copy; p; p = save) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		save = nl ? nl + 1 : NULL;
		line++;
		char *tok[MAXTOK];
		int n = tokenize(p, tok);
		int s = prefix_tokens(tok, n);
		if (s >= n)
			continue;
		char **t = tok + s;
		int m = n - s;
		if (t[0][0] == '#') {
			/* the column header says whether a root column exists; "Rank N" lines count ranks */
			int hasz = 0, hasr = 0;
			for (int i = 0; i < m; i++) {
				hasz |= strcmp(t[i], "size") == 0;
				hasr |= strcmp(t[i], "root") == 0;
				if (strcmp(t[i], "Rank") == 0 && i + 1 < m && is_uint(t[i + 1]) && atoi(t[i + 1]) > maxrank)
					maxrank = atoi(t[i + 1]);
			}
			if (hasz)
				has_root = hasr;
			continue;
		}
		if (!is_uint(t[0]))
			continue; /* NCCL INFO, banners, "NCCL version ..." */
		/* a row: size count type [redop] [root] time algbw busbw [#wrong] [time algbw busbw [#wrong]] */
		hs_nccl_row r;
		if (parse_row(t, m, has_root, name, line, &r, err)) {
			free(copy);
			hs_nccl_free(out); /* no half-read log */
			return -1;
		}
		if (!out->dtype[0])
			snprintf(out->dtype, sizeof out->dtype, "%s", t[2]);
		hs_xgrow(&out->rows, &cap, out->n + 1, sizeof *out->rows);
		out->rows[out->n++] = r;
	}
	free(copy);
	if (out->n == 0)
		return hs_err_set(err, HS_EINPUT, "%s: no nccl-tests rows found", name);
	if (maxrank >= 0) {
		out->ranks = maxrank + 1;
	} else {
		/* busbw = algbw * f(n): all_reduce 2(n-1)/n, all_gather/reduce_scatter/alltoall (n-1)/n */
		const hs_nccl_row *b = &out->rows[0];
		for (size_t i = 1; i < out->n; i++)
			if (out->rows[i].algbw > b->algbw)
				b = &out->rows[i];
		double f = b->algbw > 0 ? b->busbw / b->algbw : 0;
		double nr = 0;
		if (strcmp(out->collective, "all_reduce") == 0 && f > 0 && f < 2)
			nr = 2 / (2 - f);
		else if ((strcmp(out->collective, "all_gather") == 0 || strcmp(out->collective, "reduce_scatter") == 0 ||
			  strcmp(out->collective, "alltoall") == 0) && f > 0 && f < 1)
			nr = 1 / (1 - f);
		out->ranks = nr > 1 ? (int)lround(nr) : 0;
	}
	return 0;
}

int hs_nccl_load(const char *path, hs_nccl_log *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	FILE *f = hs_file_open(path, "an nccl-tests log", err);
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0, got;
	char *buf = hs_xmalloc(cap);
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = hs_xrealloc(buf, cap *= 2);
	}
	fclose(f);
	int rc = hs_nccl_parse(buf, n, path, out, err);
	free(buf);
	return rc;
}

void hs_nccl_free(hs_nccl_log *l)
{
	free(l->rows);
	l->rows = NULL;
	l->n = 0;
}

int hs_nccl_fit(const hs_nccl_log *l, double *alpha, double *beta, hs_err *err)
{
	double *x = hs_xmalloc((l->n + 1) * sizeof *x), *y = hs_xmalloc((l->n + 1) * sizeof *y);
	double *w = hs_xmalloc((l->n + 1) * sizeof *w);
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->rows[i].bytes > 0) {
			x[n] = l->rows[i].bytes;
			y[n] = l->rows[i].t;
			w[n++] = 1 / (l->rows[i].t * l->rows[i].t);
		}
	int rc = hs_fit_line(x, y, w, n, alpha, beta, err);
	free(x);
	free(y);
	free(w);
	if (rc)
		return hs_err_prefix(err, "%s: ", l->name), -1;
	/* a negative intercept or slope is not physical: refit with alpha fixed at 0 or the slope through the
	 * smallest time */
	if (*beta <= 0)
		return hs_err_set(err, HS_EINPUT, "%s: time does not grow with size; no bandwidth to fit", l->name);
	if (*alpha < 0)
		*alpha = 0;
	return 0;
}
