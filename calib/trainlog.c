/* Training-log readers (see trainlog.h). One recogniser per format: each looks at one line and says "not
 * mine" (0), "mine, and here is a step" (1), "mine, no step on it" (2: a header, a configuration line, the
 * first of two timestamps), or "mine but broken" (-1). Lines are split at '\n' and at '\r' too, because
 * Lightning's progress bar rewrites itself with carriage returns and a captured log holds every update on
 * one line; line numbers count '\n' only, as an editor shows them. */
#include "calib/trainlog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/file.h"

const char *const hs_tlog_fmt_names[HS_TLOG_NFMT + 1] = {"auto", "megatron", "nemo", "torchtitan", "deepspeed",
							 "csv",  "jsonl",    NULL};
static const char *const fmt_titles[HS_TLOG_NFMT] = {"auto",	  "Megatron-LM", "NeMo/Lightning", "torchtitan",
						     "DeepSpeed", "CSV",	 "JSONL"};

/* Parser state across lines. */
struct st {
	const char *name;
	const hs_tlog_opts *o;
	hs_tlog *out;
	size_t cap;
	int line;
	double samples;              /* deepspeed: samples per step */
	long prev_ts;                /* torchtitan: timestamp of the previous metric line (s), <0 none */
	double prev_frac;
	long prev_step;
	int csv_step, csv_time;      /* csv: column indices */
	double csv_mul;
	int csv_header;
	hs_err *err;
};

static int bad(struct st *s, const char *fmt, const char *what)
{
	return hs_err_set(s->err, HS_EINPUT, "%s:%d: malformed %s line: %s", s->name, s->line, fmt, what);
}

static int push(struct st *s, long step, double t)
{
	hs_tlog *l = s->out;
	if (!(t > 0) || !isfinite(t))
		return hs_err_set(s->err, HS_EINPUT, "%s:%d: step time %g s is not a positive duration", s->name,
				  s->line, t);
	/* a progress bar redrawn for the same step: keep its last value */
	if (l->n && l->step[l->n - 1] == step && step >= 0) {
		l->t[l->n - 1] = t;
		l->line[l->n - 1] = s->line;
		return 1;
	}
	if (l->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		l->t = hs_xrealloc(l->t, s->cap * sizeof *l->t);
		l->step = hs_xrealloc(l->step, s->cap * sizeof *l->step);
		l->line = hs_xrealloc(l->line, s->cap * sizeof *l->line);
	}
	l->t[l->n] = t;
	l->step[l->n] = step >= 0 ? step : (long)l->n + 1;
	l->line[l->n] = s->line;
	l->n++;
	return 1;
}

/* The number after `key` (skipping spaces, ':' and '='), thousands separators allowed ("6,543").
 * 1 found, 0 key absent, -1 key present but no number. */
static int num_after(const char *line, const char *key, double *v)
{
	const char *p = strstr(line, key);
	if (!p)
		return 0;
	p += strlen(key);
	while (*p == ' ' || *p == '\t' || *p == ':' || *p == '=')
		p++;
	char buf[64];
	size_t n = 0;
	for (; *p && n < sizeof buf - 1; p++) {
		if (*p == ',' && isdigit((unsigned char)p[1]) && n && isdigit((unsigned char)buf[n - 1]))
			continue;
		if (!(isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' || *p == 'e' || *p == 'E'))
			break;
		buf[n++] = *p;
	}
	buf[n] = 0;
	char *end;
	errno = 0;
	double x = strtod(buf, &end);
	if (!n || end == buf || *end || errno == ERANGE || !isfinite(x))
		return -1;
	*v = x;
	return 1;
}

/* An integer after `key`, or -1. */
static long int_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ' || *p == ':' || *p == '=')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	long v = strtol(p, NULL, 10);
	return errno ? -1 : v;
}

/* Megatron-LM's training_log: " iteration       10/     100 | ... | elapsed time per iteration (ms): 1234.5 |" */
static int megatron(struct st *s, const char *line)
{
	double ms;
	int r = num_after(line, "elapsed time per iteration (ms)", &ms);
	if (r == 0)
		return 0;
	if (r < 0)
		return bad(s, "Megatron-LM", "no number after 'elapsed time per iteration (ms):'");
	return push(s, int_after(line, "iteration"), ms * 1e-3);
}

/* NeMo / Lightning: "train_step_timing in s=1.02" (progress bar) or "train_step_timing in s: 1.02" (NeMo's
 * MegatronProgressBar); the step from "global_step: N", else from the bar's "| N/M [". */
static int nemo(struct st *s, const char *line)
{
	const char *p = strstr(line, "train_step_timing");
	if (!p)
		return 0;
	const char *q = p + strlen("train_step_timing");
	if (strncmp(q, " in s", 5) == 0)
		q += 5;
	double t;
	if (num_after(q, "", &t) != 1)
		return bad(s, "NeMo/Lightning", "no number after 'train_step_timing'");
	long step = int_after(line, "global_step");
	if (step < 0) {
		const char *bar = strstr(line, "| ");
		while (bar && step < 0) {
			char *e;
			long a = strtol(bar + 2, &e, 10);
			if (e != bar + 2 && *e == '/' && a >= 0)
				step = a;
			bar = strstr(bar + 2, "| ");
		}
	}
	return push(s, step, t);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
static long days_from_civil(long y, long m, long d)
{
	y -= m <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The first "YYYY-MM-DD HH:MM:SS[,.]fff" in the line: whole seconds since 1970 (returned; -1 when there is none)
 * and the fraction apart, so that the difference of two is exact to the millisecond (an absolute time as one
 * double keeps only about 0.2 us). */
static long timestamp(const char *line, double *fracp)
{
	for (const char *p = line; *p; p++) {
		int Y, M, D, h, mi, sec, n = 0;
		if (!isdigit((unsigned char)*p))
			continue;
		if (sscanf(p, "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &Y, &M, &D, &h, &mi, &sec, &n) == 6 && n >= 19 &&
		    M >= 1 && M <= 12 && D >= 1 && D <= 31 && h < 24 && mi < 60 && sec < 61) {
			double frac = 0;
			if (p[n] == ',' || p[n] == '.') {
				double scale = 0.1;
				for (const char *f = p + n + 1; isdigit((unsigned char)*f) && scale > 1e-9; f++, scale /= 10)
					frac += (*f - '0') * scale;
			}
			*fracp = frac;
			return days_from_civil(Y, M, D) * 86400L + h * 3600L + mi * 60L + sec;
		}
	}
	return -1;
}

/* torchtitan's metrics line: "... 2025-01-27 15:51:16,364 - root - INFO - step:  10  loss:  7.8 ... tps: 6,543" */
static int torchtitan(struct st *s, const char *line)
{
	const char *p = strstr(line, "step:");
	if (!p || !(strstr(p, "loss:") || strstr(p, "tps:")))
		return 0;
	long step = int_after(p, "step:");
	if (step < 0)
		return bad(s, "torchtitan", "no step number after 'step:'");
	if (s->o && s->o->tokens_per_step > 0) {
		double tps;
		if ((num_after(p, "tps:", &tps) != 1 && num_after(p, "wps:", &tps) != 1) || !(tps > 0)) /* wps: before v0.1 */
			return bad(s, "torchtitan", "no tokens per second after 'tps:' (tokens_per_step needs it)");
		return push(s, step, s->o->tokens_per_step / tps);
	}
	double frac = 0;
	long ts = timestamp(line, &frac);
	if (ts < 0)
		return bad(s, "torchtitan", "no timestamp (YYYY-MM-DD HH:MM:SS,mmm) to time the step by; give "
					    "tokens_per_step to time it by tps");
	long prev = s->prev_ts;
	double pfrac = s->prev_frac;
	long pstep = s->prev_step;
	s->prev_ts = ts, s->prev_frac = frac, s->prev_step = step;
	if (prev < 0)
		return 2; /* the first metric line starts the clock */
	if (step <= pstep)
		return bad(s, "torchtitan", "step number does not increase");
	return push(s, step, ((double)(ts - prev) + (frac - pfrac)) / (double)(step - pstep));
}

/* DeepSpeed's ThroughputTimer: "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=..., 
 * CurrSamplesPerSec=12.5, ..."; samples per step from the options or the configuration dump. */
static int deepspeed(struct st *s, const char *line)
{
	double v;
	if (!strstr(line, "CurrSamplesPerSec")) {
		const char *p = strstr(line, "train_batch_size");
		if (p && strstr(line, "...")) {
			p += strlen("train_batch_size");
			while (*p == ' ' || *p == '.')
				p++;
			char *e;
			double b = strtod(p, &e);
			if (e != p && b > 0 && isfinite(b)) {
				if (!(s->o && s->o->samples_per_step > 0))
					s->samples = b;
				return 2;
			}
		}
		return 0;
	}
	if (num_after(line, "CurrSamplesPerSec", &v) != 1 || !(v > 0))
		return bad(s, "DeepSpeed", "no positive number after 'CurrSamplesPerSec='");
	if (!(s->samples > 0))
		return hs_err_set(s->err, HS_EINPUT, "%s:%d: DeepSpeed's CurrSamplesPerSec needs the samples per step "
						    "(the entry's samples_per_step, or a 'train_batch_size .... N' line "
						    "of DeepSpeed's configuration before it)", s->name, s->line);
	return push(s, int_after(line, "global_step"), s->samples / v);
}

static const struct {
	const char *key;
	double mul;
} time_keys[] = {{"step_time_s", 1},	{"step_time", 1},	{"seconds", 1},	    {"time_s", 1},
		 {"elapsed_s", 1},	{"time", 1},		{"step_time_ms", 1e-3}, {"time_ms", 1e-3},
		 {"elapsed_ms", 1e-3}, {NULL, 0}};

/* The value of "key": NUMBER in a flat JSON object; 1 found, 0 absent, -1 not a number. */
static int json_num(const char *line, const char *key, double *v)
{
	char pat[48];
	snprintf(pat, sizeof pat, "\"%s\"", key);
	const char *p = strstr(line, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return 0;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	char *e;
	errno = 0;
	double x = strtod(p, &e);
	if (e == p || errno == ERANGE || !isfinite(x))
		return -1;
	*v = x;
	return 1;
}

static int jsonl(struct st *s, const char *line)
{
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '{' || !strstr(p, "\"step\""))
		return 0;
	double step, t = 0;
	int found = 0;
	for (int k = 0; time_keys[k].key && !found; k++) {
		int r = json_num(p, time_keys[k].key, &t);
		if (r < 0)
			return bad(s, "JSONL", "a time key that is not a number");
		if (r) {
			found = 1;
			t *= time_keys[k].mul;
		}
	}
	if (!found)
		return 0;
	if (json_num(p, "step", &step) != 1 || step < 0 || step > 1e15)
		return bad(s, "JSONL", "\"step\" is not a step number");
	return push(s, (long)step, t);
}

/* Split a CSV line into at most `max` trimmed fields (in place). */
static int csv_fields(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line; p && n < max;) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		while (isspace((unsigned char)*p) || *p == '"')
			p++;
		char *e = p + strlen(p);
		while (e > p && (isspace((unsigned char)e[-1]) || e[-1] == '"'))
			*--e = 0;
		f[n++] = p;
		p = c ? c + 1 : NULL;
	}
	return n;
}

static int csv(struct st *s, const char *line)
{
	char buf[4096], *f[64];
	snprintf(buf, sizeof buf, "%s", line);
	if (!strchr(buf, ','))
		return s->csv_header ? bad(s, "CSV", "not comma-separated") : 0;
	int n = csv_fields(buf, f, 64);
	if (!s->csv_header) {
		int st = -1, tm = -1;
		double mul = 1;
		for (int i = 0; i < n; i++)
			if (strcmp(f[i], "step") == 0 || strcmp(f[i], "iteration") == 0)
				st = i;
		for (int k = 0; time_keys[k].key && tm < 0; k++)
			for (int i = 0; i < n; i++)
				if (strcmp(f[i], time_keys[k].key) == 0) {
					tm = i, mul = time_keys[k].mul;
					break;
				}
		if (st < 0 || tm < 0)
			return 0;
		s->csv_step = st, s->csv_time = tm, s->csv_mul = mul, s->csv_header = 1;
		return 2;
	}
	if (n <= s->csv_step || n <= s->csv_time)
		return bad(s, "CSV", "fewer fields than the header");
	char *e;
	errno = 0;
	long step = strtol(f[s->csv_step], &e, 10);
	if (e == f[s->csv_step] || *e || step < 0 || errno)
		return bad(s, "CSV", "the step field is not a step number");
	double t = strtod(f[s->csv_time], &e);
	if (e == f[s->csv_time] || *e || !isfinite(t))
		return bad(s, "CSV", "the time field is not a number");
	return push(s, step, t * s->csv_mul);
}

typedef int (*recog)(struct st *, const char *);
static const recog recognisers[HS_TLOG_NFMT] = {NULL, megatron, nemo, torchtitan, deepspeed, csv, jsonl};

static int one_line(struct st *s, enum hs_tlog_fmt *fmt, const char *line, int *nonblank)
{
	const char *p = line;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#') /* blank, or a comment (nccl-tests' and our examples' headers) */
		return 0;
	int first = !(*nonblank)++;
	if (*fmt != HS_TLOG_AUTO)
		return recognisers[*fmt](s, line);
	for (int k = HS_TLOG_MEGATRON; k < HS_TLOG_NFMT; k++) {
		if (k == HS_TLOG_CSV && !first) /* a CSV log starts with its header */
			continue;
		int r = recognisers[k](s, line);
		if (r) {
			if (r > 0)
				*fmt = (enum hs_tlog_fmt)k;
			return r;
		}
	}
	return 0;
}

int hs_tlog_parse(const char *text, size_t len, const char *name, enum hs_tlog_fmt fmt, const hs_tlog_opts *o,
		  hs_tlog *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name);
	if (memchr(text, 0, len))
		return hs_err_set(err, HS_EINPUT, "%s: NUL byte in the log (not a text file?)", name);
	struct st s = {.name = name, .o = o, .out = out, .prev_ts = -1, .prev_step = -1, .err = err};
	if (o && o->samples_per_step > 0)
		s.samples = o->samples_per_step;
	enum hs_tlog_fmt f = fmt;
	int nonblank = 0;
	char line[4096];
	size_t i = 0;
	s.line = 1;
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n' && text[j] != '\r')
			j++;
		size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1; /* a longer line is cut, not read past */
		memcpy(line, text + i, n);
		line[n] = 0;
		if (one_line(&s, &f, line, &nonblank) < 0) {
			hs_tlog_free(out);
			return -1;
		}
		if (j < len && text[j] == '\n')
			s.line++;
		i = j + 1;
	}
	if (!out->n) {
		const char *want = fmt == HS_TLOG_AUTO ? "Megatron-LM, NeMo/Lightning, torchtitan, DeepSpeed, CSV or JSONL"
						       : fmt_titles[fmt];
		hs_tlog_free(out);
		return hs_err_set(err, HS_EINPUT, "%s:%d: no step times found (expected %s lines%s)", name,
				  s.line > 1 && len && text[len - 1] == '\n' ? s.line - 1 : s.line, want,
				  f == HS_TLOG_TORCHTITAN ? "; torchtitan needs two metric lines" : "");
	}
	out->fmt = f;
	return 0;
}

int hs_tlog_load(const char *path, enum hs_tlog_fmt fmt, const hs_tlog_opts *o, hs_tlog *out, hs_err *err)
{
	size_t len;
	char *text = hs_read_file(path, (size_t)1 << 30, "training log", &len, err);
	if (!text) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	int r = hs_tlog_parse(text, len, path, fmt, o, out, err);
	free(text);
	return r;
}

void hs_tlog_free(hs_tlog *l)
{
	free(l->t);
	free(l->step);
	free(l->line);
	l->t = NULL, l->step = NULL, l->line = NULL;
	l->n = 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double hs_tlog_quantile(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double *c = hs_xmalloc(n * sizeof *c);
	memcpy(c, v, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_d);
	double h = q * (double)(n - 1);
	size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
	double r = c[lo] + (h - (double)lo) * (c[hi] - c[lo]);
	free(c);
	return r;
}

int hs_tlog_stats(const hs_tlog *l, size_t skip, double *median, double *p90, size_t *used, hs_err *err)
{
	if (skip >= l->n)
		return hs_err_set(err, HS_EINPUT, "%s: %zu steps in the log and %zu skipped as warm-up: none left",
				  l->name, l->n, skip);
	*used = l->n - skip;
	*median = hs_tlog_quantile(l->t + skip, *used, 0.5);
	*p90 = hs_tlog_quantile(l->t + skip, *used, 0.9);
	return 0;
}
