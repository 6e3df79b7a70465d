#include "config/cfg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_cfg_err(const hs_ynode *n, hs_err *err, const char *path, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const char *sep = (path && *path && key && *key) ? "." : "";
	return hs_err_set(err, HS_EINPUT, "%s:%d:%d: %s%s%s: %s", n ? n->file : "?", n ? n->line : 0,
			  n ? n->col : 0, path ? path : "", sep, key ? key : "", msg);
}

size_t hs_cfg_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

const char *hs_cfg_suggest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	size_t bd = 99, len = strlen(word);
	size_t limit = len / 3 > 2 ? len / 3 : 2;
	for (; *cands; cands++) {
		size_t d = hs_cfg_edit_distance(word, *cands);
		if (d < bd) {
			bd = d;
			best = *cands;
		}
	}
	return bd <= limit ? best : NULL;
}

static const char *kind_word(const hs_ynode *n)
{
	return n->kind == HS_Y_MAP ? "a mapping" : n->kind == HS_Y_SEQ ? "a list" : hs_yaml_is_null(n) ? "null" : "a scalar";
}

int hs_cfg_known(const hs_ynode *map, const char *path, const char *const *known, const char *what, hs_err *err)
{
	if (!map || map->kind != HS_Y_MAP)
		return hs_cfg_err(map, err, path, "", "found %s (expected %s)", map ? kind_word(map) : "nothing",
				  what);
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->str;
		int ok = 0;
		for (const char *const *c = known; *c && !ok; c++)
			ok = strcmp(*c, k) == 0;
		if (ok)
			continue;
		const char *s = hs_cfg_suggest(k, known);
		char list[512] = "";
		size_t len = 0;
		for (const char *const *c = known; *c && len < sizeof list - 40; c++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", c == known ? "" : ", ", *c);
		if (s)
			return hs_cfg_err(map->keys[i], err, path, k, "unknown key (did you mean '%s'?)", s);
		return hs_cfg_err(map->keys[i], err, path, k, "unknown key (expected one of: %s)", list);
	}
	return 0;
}

static const hs_ynode *scalar_at(const hs_ynode *map, const char *path, const char *key, int required,
				 hs_err *err, int *missing)
{
	const hs_ynode *n = hs_yaml_get(map, key);
	*missing = 0;
	if (!n) {
		*missing = 1;
		if (required)
			hs_cfg_err(map, err, path, key, "missing required key");
		return NULL;
	}
	/* One rule for explicit nulls (`pp: ~`, `nodes:`): an error naming the key, never the default in
	 * disguise; a key is left out to take its default. No key documented in docs/scenario.md takes null. */
	if (hs_yaml_is_null(n)) {
		hs_cfg_err(n, err, path, key, "null (expected a value; leave the key out for its default)");
		return NULL;
	}
	if (n->kind != HS_Y_SCALAR) {
		hs_cfg_err(n, err, path, key, "found %s (expected a single value)", kind_word(n));
		return NULL;
	}
	return n;
}

/* Values that parse and are in range but lie orders of magnitude outside any real system: most often a unit
 * left out ('bandwidth: 400' is 400 B/s). They run, with one warning on stderr per position (docs/scenario.md,
 * "Plausibility warnings"). The floors sit far below the slowest real parts: a 1 Gb/s Ethernet NIC is
 * 125 MB/s, a 2010 GPU 1 TFLOP/s. */
static const struct plausible {
	enum hs_unit u;
	double below;
	const char *floor;
	const char *hint;
} plausible[] = {
	{HS_U_BW, 1e6, "1 MB/s", "a bare number is bytes/s: write '400 Gb/s' or '50 GB/s'"},
	{HS_U_FLOPS, 1e9, "1 GFLOP/s", "a bare number is FLOP/s: write '989 TFLOP/s'"},
};

static void check_plausible(const hs_ynode *n, const char *path, const char *key, enum hs_unit u, double v)
{
	static const char *last_file;
	static int last_line, last_col;
	for (size_t i = 0; i < sizeof plausible / sizeof plausible[0]; i++) {
		const struct plausible *q = &plausible[i];
		if (q->u != u || !(v > 0 && v < q->below))
			continue;
		if (n->file == last_file && n->line == last_line && n->col == last_col)
			return; /* a sweep or a repeated read: once per position */
		last_file = n->file, last_line = n->line, last_col = n->col;
		const char *sep = (path && *path && key && *key) ? "." : "";
		fprintf(stderr,
			"hetsim: warning: %s:%d:%d: %s%s%s: '%s' is below %s, far from any real system (%s)\n",
			n->file ? n->file : "?", n->line, n->col, path ? path : "", sep, key ? key : "", n->str,
			q->floor, q->hint);
	}
}

int hs_cfg_node_num(const hs_ynode *n, const char *path, const char *key, enum hs_unit u, double lo, double hi,
		    double *out, hs_err *err)
{
	if (n->kind != HS_Y_SCALAR)
		return hs_cfg_err(n, err, path, key, "found %s (expected %s)", kind_word(n), hs_units_expect(u));
	char why[256];
	double v;
	if (hs_units_parse(n->str, u, &v, why, sizeof why))
		return hs_cfg_err(n, err, path, key, "%s (expected %s)", why, hs_units_expect(u));
	if (v < lo || v > hi) {
		if (hi >= 1e300)
			return hs_cfg_err(n, err, path, key, "'%s' is out of range (expected at least %.15g)", n->str, lo);
		return hs_cfg_err(n, err, path, key, "'%s' is out of range (expected %.15g to %.15g)", n->str, lo, hi);
	}
	check_plausible(n, path, key, u, v);
	*out = v;
	return 0;
}

int hs_cfg_num(const hs_ynode *map, const char *path, const char *key, enum hs_unit u, double lo, double hi,
	       double def, int required, double *out, hs_err *err)
{
	int missing;
	const hs_ynode *n = scalar_at(map, path, key, required, err, &missing);
	if (!n) {
		if (missing && !required) {
			*out = def;
			return 0;
		}
		return -1;
	}
	return hs_cfg_node_num(n, path, key, u, lo, hi, out, err);
}

int hs_cfg_int(const hs_ynode *map, const char *path, const char *key, int64_t lo, int64_t hi, int64_t def,
	       int required, int64_t *out, hs_err *err)
{
	int missing;
	const hs_ynode *n = scalar_at(map, path, key, required, err, &missing);
	if (!n) {
		if (missing && !required) {
			*out = def;
			return 0;
		}
		return -1;
	}
	double v;
	if (hs_cfg_node_num(n, path, key, HS_U_COUNT, (double)lo, (double)hi, &v, err))
		return -1;
	if (v != floor(v))
		return hs_cfg_err(n, err, path, key, "'%s' is not a whole number", n->str);
	*out = (int64_t)v;
	return 0;
}

int hs_cfg_bool(const hs_ynode *map, const char *path, const char *key, int def, int *out, hs_err *err)
{
	int missing;
	const hs_ynode *n = scalar_at(map, path, key, 0, err, &missing);
	if (!n) {
		if (missing) {
			*out = def;
			return 0;
		}
		return -1;
	}
	static const char *const t[] = {"true", "yes", "on", "True", "TRUE", NULL};
	static const char *const f[] = {"false", "no", "off", "False", "FALSE", NULL};
	for (int i = 0; t[i]; i++)
		if (strcmp(n->str, t[i]) == 0) {
			*out = 1;
			return 0;
		}
	for (int i = 0; f[i]; i++)
		if (strcmp(n->str, f[i]) == 0) {
			*out = 0;
			return 0;
		}
	return hs_cfg_err(n, err, path, key, "'%s' is not a boolean (expected true or false)", n->str);
}

int hs_cfg_str(const hs_ynode *map, const char *path, const char *key, const char *def, int required,
	       const char **out, hs_err *err)
{
	int missing;
	const hs_ynode *n = scalar_at(map, path, key, required, err, &missing);
	if (!n) {
		if (missing && !required) {
			*out = def;
			return 0;
		}
		return -1;
	}
	*out = n->str;
	return 0;
}

int hs_cfg_enum(const hs_ynode *map, const char *path, const char *key, const char *const *names, int def,
		int *out, hs_err *err)
{
	const char *s;
	if (hs_cfg_str(map, path, key, NULL, 0, &s, err))
		return -1;
	if (!s) {
		*out = def;
		return 0;
	}
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0) {
			*out = i;
			return 0;
		}
	const hs_ynode *n = hs_yaml_get(map, key);
	const char *sug = hs_cfg_suggest(s, names);
	char list[512] = "";
	size_t len = 0;
	for (int i = 0; names[i] && len < sizeof list - 40; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
	if (sug)
		return hs_cfg_err(n, err, path, key, "'%s' is not known (did you mean '%s'? expected one of: %s)", s,
				  sug, list);
	return hs_cfg_err(n, err, path, key, "'%s' is not known (expected one of: %s)", s, list);
}
