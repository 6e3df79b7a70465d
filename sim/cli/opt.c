/* Options as data, parsed by getopt_long (glibc) so that every spelling a Unix user types works: -j2, -j 2,
 * --jobs=2, --jobs 2, clustered short flags, unique prefixes of long names (--det for --detail, as GNU tools
 * and git take them), and -- to end the options. The struct option array and the short-option string are built
 * from the command's hs_opt table on each call, so a command declares its options once, and the usage text,
 * the man page (sim/cli/man.c) and the parser all read the same table.
 *
 * getopt_long runs in "return in order" mode (optstring starting with '-'): positional arguments come back
 * one at a time where they stand, so options may follow them (`run SCENARIO --json`) whatever
 * POSIXLY_CORRECT says, and argv is not permuted. Its own messages are off (opterr = 0, leading ':'): ours
 * name the command and suggest the nearest option (config/cfg.h's edit distance, as for YAML keys). */
#include "sim/cli/opt.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"

void hs_opt_usage(const hs_cmd_usage *u, FILE *f)
{
	fprintf(f, "usage: %s\n\n%s\n", u->synopsis, u->summary);
	if (u->opts && u->opts[0].type != HS_OPT_END)
		fprintf(f, "\noptions:\n");
	for (const hs_opt *o = u->opts; o && o->type != HS_OPT_END; o++) {
		char left[64];
		if (o->shortname)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortname, o->name, o->argname ? " " : "",
				 o->argname ? o->argname : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->argname ? " " : "",
				 o->argname ? o->argname : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
	if (u->details)
		fprintf(f, "\n%s\n", u->details);
}

/* "a whole number from 1 to 1024", "a number above 1 and at most 2", "a finite number of at least 0": what
 * option o takes (a count's range is always written out: a count too large for it is refused by it). */
static void expected(const hs_opt *o, char *buf, size_t cap)
{
	const hs_optnum *r = o->target;
	int count = o->type == HS_OPT_COUNT;
	const char *what = count ? "a whole number" : "a number";
	if (!count && r->max >= DBL_MAX)
		snprintf(buf, cap, "a finite number %s %.10g", r->min_open ? "above" : "of at least", r->min);
	else if (r->min_open)
		snprintf(buf, cap, "%s above %.10g and at most %.10g", what, r->min, r->max);
	else
		snprintf(buf, cap, "%s from %.16g to %.16g", what, r->min, r->max);
}

/* The value of a numeric option, or -1 when `arg` is not one in its range. A count is digits only: strtoull
 * alone would take "-1" (as 2^64 - 1), " 4" and "+4", and atoi "4x" as 4 and "x" as 0. */
static int number(const hs_opt *o, const char *arg, double *out)
{
	const hs_optnum *r = o->target;
	double v;
	if (o->type == HS_OPT_COUNT) {
		if (!*arg || strspn(arg, "0123456789") != strlen(arg))
			return -1;
		errno = 0;
		unsigned long long u = strtoull(arg, NULL, 10);
		if (errno == ERANGE || u > (unsigned long long)HS_OPT_COUNT_MAX)
			return -1;
		v = (double)u;
	} else {
		char *end;
		if (!*arg || isspace((unsigned char)*arg))
			return -1;
		v = strtod(arg, &end);
		if (*end || !isfinite(v))
			return -1;
	}
	if (v < r->min || (r->min_open && v == r->min) || v > r->max)
		return -1;
	*out = v;
	return 0;
}

/* Store the argument of option o (spelled `nm` on the command line); -1 with a message when a numeric one is
 * not a number in its range. */
static int set(const hs_cmd_usage *u, const hs_opt *o, const char *nm, const char *arg)
{
	switch (o->type) {
	case HS_OPT_FLAG: *(int *)o->target = 1; break;
	case HS_OPT_STRING: *(const char **)o->target = arg; break;
	case HS_OPT_LIST: hs_strlist_push(o->target, arg); break;
	case HS_OPT_COUNT:
	case HS_OPT_NUMBER: {
		hs_optnum *r = o->target;
		if (number(o, arg, &r->v)) {
			char want[160];
			expected(o, want, sizeof want);
			fprintf(stderr, "hetsim %s: %s '%s': expected %s\n", u->name, nm, arg, want);
			return -1;
		}
		r->given = 1;
		break;
	}
	case HS_OPT_END: break;
	}
	return 0;
}

/* getopt_long's value for option i of the table: past every char, so short and long never collide. */
#define LONGVAL(i) (256 + (i))
#define HELPVAL 'h'

static int nopts(const hs_cmd_usage *u)
{
	int n = 0;
	while (u->opts && u->opts[n].type != HS_OPT_END)
		n++;
	return n;
}

/* The option getopt_long returned as `val` (a short name or LONGVAL(i)); NULL for none. */
static const hs_opt *by_val(const hs_cmd_usage *u, int n, int val)
{
	if (val >= LONGVAL(0) && val < LONGVAL(n))
		return &u->opts[val - LONGVAL(0)];
	for (int i = 0; val > 0 && i < n; i++)
		if (u->opts[i].shortname == val)
			return &u->opts[i];
	return NULL;
}

/* "--name" for messages, as the user may have typed it (short when `val` is a short name). */
static void spell(const hs_opt *o, int val, char *buf, size_t cap)
{
	if (val < 256)
		snprintf(buf, cap, "-%c", val);
	else
		snprintf(buf, cap, "--%s", o->name);
}

/* The message for an unknown or ambiguous long option `arg` ("--jsn", "--trace-=x"). */
static void unknown_long(const hs_cmd_usage *u, int n, const char *arg)
{
	const char *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), name);
	/* a prefix of two or more names: getopt_long calls it ambiguous; say which */
	char which[512] = "";
	size_t wl = 0;
	int matches = 0;
	for (int i = 0; i < n; i++)
		if (len > 0 && strncmp(u->opts[i].name, word, len) == 0) {
			matches++;
			wl += (size_t)snprintf(which + wl, wl < sizeof which ? sizeof which - wl : 0, "%s--%s",
					       matches > 1 ? ", " : "", u->opts[i].name);
		}
	if (matches > 1) {
		fprintf(stderr, "hetsim %s: option '--%s' is ambiguous (it could be %s)\n", u->name, word, which);
		return;
	}
	const char **cands = hs_xcalloc((size_t)n + 2, sizeof *cands);
	for (int i = 0; i < n; i++)
		cands[i] = u->opts[i].name;
	cands[n] = "help";
	const char *sug = hs_cfg_suggest(word, cands);
	if (sug)
		fprintf(stderr, "hetsim %s: unknown option '%.*s' (did you mean '--%s'?)\n", u->name,
			(int)(len + 2), arg, sug);
	else
		fprintf(stderr, "hetsim %s: unknown option '%.*s'\n", u->name, (int)(len + 2), arg);
	free(cands);
}

int hs_opt_parse(const hs_cmd_usage *u, int argc, char **argv, const char **pos, int maxpos)
{
	int n = nopts(u);
	struct option *lo = hs_xcalloc((size_t)n + 2, sizeof *lo);
	char *shorts = hs_xmalloc(3 + 2 * (size_t)n + 2), *sp = shorts;
	*sp++ = '-'; /* positionals in order, where they stand */
	*sp++ = ':'; /* a missing value returns ':', not '?' */
	*sp++ = 'h';
	for (int i = 0; i < n; i++) {
		const hs_opt *o = &u->opts[i];
		int arg = o->type == HS_OPT_FLAG ? no_argument : required_argument;
		lo[i] = (struct option){o->name, arg, NULL, LONGVAL(i)};
		if (o->shortname) {
			*sp++ = o->shortname;
			if (arg == required_argument)
				*sp++ = ':';
		}
	}
	*sp = 0;
	lo[n] = (struct option){"help", no_argument, NULL, HELPVAL};

	int npos = 0, rc = 0, c;
	optind = 0; /* glibc: 0 re-initialises the scanner (a process may parse several command lines) */
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const hs_opt *o = by_val(u, n, c);
		char nm[80];
		if (c == 1) { /* a positional argument */
			if (npos >= maxpos) {
				fprintf(stderr, "hetsim %s: unexpected argument '%s'\n", u->name, optarg);
				fprintf(stderr, "usage: %s\n", u->synopsis);
				rc = -1;
			} else
				pos[npos++] = optarg;
		} else if (c == HELPVAL) {
			hs_opt_usage(u, stdout);
			rc = -2;
		} else if (c == ':') {
			const hs_opt *m = by_val(u, n, optopt);
			spell(m, optopt, nm, sizeof nm);
			fprintf(stderr, "hetsim %s: option '%s' needs a value (%s)\n", u->name, nm,
				m && m->argname ? m->argname : "VALUE");
			rc = -1;
		} else if (c == '?') {
			const hs_opt *m = by_val(u, n, optopt);
			const char *arg = argv[optind - 1];
			if (m && m->type == HS_OPT_FLAG && optopt >= 256)
				fprintf(stderr, "hetsim %s: option '--%s' takes no value\n", u->name, m->name);
			else if (optopt == 0 && strncmp(arg, "--", 2) == 0)
				unknown_long(u, n, arg);
			else
				fprintf(stderr, "hetsim %s: unknown option '-%c'\n", u->name, optopt);
			if (rc == 0) {
				fprintf(stderr, "usage: %s   (hetsim %s --help for the options)\n", u->synopsis,
					u->name);
				rc = -1;
			}
		} else if (o) {
			spell(o, c, nm, sizeof nm);
			if (set(u, o, nm, optarg))
				rc = -1;
		} else {
			fprintf(stderr, "hetsim %s: option parsing returned %d (this is a bug in hetsim)\n", u->name, c);
			rc = -1;
		}
	}
	/* after --: every remaining argument is positional */
	for (int i = optind; rc == 0 && i < argc; i++) {
		if (npos >= maxpos) {
			fprintf(stderr, "hetsim %s: unexpected argument '%s'\n", u->name, argv[i]);
			fprintf(stderr, "usage: %s\n", u->synopsis);
			rc = -1;
		} else
			pos[npos++] = argv[i];
	}
	free(lo);
	free(shorts);
	return rc ? rc : npos;
}
