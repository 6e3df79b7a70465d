/* hs_opt_parse (sim/cli/opt.c): every spelling getopt_long accepts, positionals where they stand, --, and the
 * messages for unknown, ambiguous and valueless options; numeric options checked against their range. */
#include <check.h>
#include <float.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/opt.h"
#include "tests/unit/helpers.h"

static const char *jobs, *trace, *trace_ranks;
static int json, detail;
static struct hs_strlist sets;
static const hs_opt opts[] = {
	{HS_OPT_STRING, "jobs", 'j', &jobs, "N", "threads"},
	{HS_OPT_FLAG, "json", 0, &json, NULL, "json"},
	{HS_OPT_FLAG, "detail", 'd', &detail, NULL, "detail"},
	{HS_OPT_LIST, "set", 's', &sets, "KEY=VALUE", "override"},
	{HS_OPT_STRING, "trace", 0, &trace, "FILE", "trace"},
	{HS_OPT_STRING, "trace-ranks", 0, &trace_ranks, "SPEC", "ranks"},
	{.type = HS_OPT_END},
};
static const hs_cmd_usage usage = {"t", "hetsim t [options] ARG...", "A test.", opts, NULL};

static char err[4096];

/* Parse a NULL-terminated argument list with stderr captured into err. */
static int parse(const char **pos, int maxpos, char **argv)
{
	jobs = trace = trace_ranks = NULL;
	json = detail = 0;
	hs_strlist_free(&sets);
	int argc = 0;
	while (argv[argc])
		argc++;
	char name[64];
	int fd = hs_test_mkstemp(name, sizeof name, "opt", "");
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	int n = hs_opt_parse(&usage, argc, argv, pos, maxpos);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	lseek(fd, 0, SEEK_SET);
	ssize_t k = read(fd, err, sizeof err - 1);
	err[k > 0 ? k : 0] = 0;
	close(fd);
	unlink(name);
	return n;
}

START_TEST(spellings)
{
	const char *pos[4];
	char *a1[] = {"t", "-j2", NULL}, *a2[] = {"t", "-j", "3", NULL}, *a3[] = {"t", "--jobs=4", NULL},
	     *a4[] = {"t", "--jobs", "5", NULL}, *a5[] = {"t", "--jo", "6", NULL};
	ck_assert_int_eq(parse(pos, 4, a1), 0);
	ck_assert_str_eq(jobs, "2");
	ck_assert_int_eq(parse(pos, 4, a2), 0);
	ck_assert_str_eq(jobs, "3");
	ck_assert_int_eq(parse(pos, 4, a3), 0);
	ck_assert_str_eq(jobs, "4");
	ck_assert_int_eq(parse(pos, 4, a4), 0);
	ck_assert_str_eq(jobs, "5");
	ck_assert_int_eq(parse(pos, 4, a5), 0); /* a unique prefix */
	ck_assert_str_eq(jobs, "6");
	/* clustered short flags, an attached list value, long flags, repeated lists */
	char *a6[] = {"t", "-dj7", "-sa=1", "--set", "b=2", "--json", NULL};
	ck_assert_int_eq(parse(pos, 4, a6), 0);
	ck_assert_int_eq(detail, 1);
	ck_assert_int_eq(json, 1);
	ck_assert_str_eq(jobs, "7");
	ck_assert_int_eq(sets.n, 2);
	ck_assert_str_eq(sets.v[0], "a=1");
	ck_assert_str_eq(sets.v[1], "b=2");
	/* an exact name wins over the longer names it prefixes */
	char *a7[] = {"t", "--trace", "x.json", NULL};
	ck_assert_int_eq(parse(pos, 4, a7), 0);
	ck_assert_str_eq(trace, "x.json");
	ck_assert_ptr_null(trace_ranks);
	hs_strlist_free(&sets);
}
END_TEST

START_TEST(positionals)
{
	const char *pos[4];
	/* in order, options before and after them; "-" is a positional; -- ends the options */
	char *a[] = {"t", "one", "--json", "-", "--", "--detail", "-j", NULL};
	ck_assert_int_eq(parse(pos, 4, a), 4);
	ck_assert_str_eq(pos[0], "one");
	ck_assert_str_eq(pos[1], "-");
	ck_assert_str_eq(pos[2], "--detail");
	ck_assert_str_eq(pos[3], "-j");
	ck_assert_int_eq(json, 1);
	ck_assert_int_eq(detail, 0);
	char *b[] = {"t", "a", "b", NULL};
	ck_assert_int_eq(parse(pos, 1, b), -1);
	ck_assert_ptr_nonnull(strstr(err, "unexpected argument 'b'"));
	char *c[] = {"t", "--help", NULL};
	ck_assert_int_eq(parse(pos, 1, c), -2);
	ck_assert_ptr_nonnull(strstr(err, "usage: hetsim t [options] ARG..."));
}
END_TEST

START_TEST(messages)
{
	const char *pos[4];
	char *a[] = {"t", "--jsno", "x", NULL};
	ck_assert_int_eq(parse(pos, 4, a), -1);
	ck_assert_msg(strstr(err, "hetsim t: unknown option '--jsno' (did you mean '--json'?)"), "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "hetsim t --help"));
	char *b[] = {"t", "--detial=3", NULL};
	ck_assert_int_eq(parse(pos, 4, b), -1);
	ck_assert_msg(strstr(err, "unknown option '--detial' (did you mean '--detail'?)"), "%s", err);
	char *c[] = {"t", "--tr", "x", NULL};
	ck_assert_int_eq(parse(pos, 4, c), -1);
	ck_assert_msg(strstr(err, "'--tr' is ambiguous (it could be --trace, --trace-ranks)"), "%s", err);
	char *d[] = {"t", "--json=1", NULL};
	ck_assert_int_eq(parse(pos, 4, d), -1);
	ck_assert_msg(strstr(err, "option '--json' takes no value"), "%s", err);
	char *e[] = {"t", "x", "--jobs", NULL};
	ck_assert_int_eq(parse(pos, 4, e), -1);
	ck_assert_msg(strstr(err, "option '--jobs' needs a value (N)"), "%s", err);
	char *f[] = {"t", "-j", NULL};
	ck_assert_int_eq(parse(pos, 4, f), -1);
	ck_assert_msg(strstr(err, "option '-j' needs a value (N)"), "%s", err);
	char *g[] = {"t", "-x", NULL};
	ck_assert_int_eq(parse(pos, 4, g), -1);
	ck_assert_msg(strstr(err, "unknown option '-x'"), "%s", err);
	char *h[] = {"t", "--zzzzzz", NULL};
	ck_assert_int_eq(parse(pos, 4, h), -1);
	ck_assert_msg(strstr(err, "unknown option '--zzzzzz'\n"), "%s", err);
}
END_TEST

/* numeric options: the value in range, and every other string refused with the option and the range */
static hs_optnum n_count = {.min = 0, .max = 1024}, n_big = {.min = 1, .max = HS_OPT_COUNT_MAX},
		 n_factor = {.min = 1, .max = DBL_MAX, .min_open = 1}, n_frac = {.min = 0, .max = 1};
static const hs_opt nopts[] = {
	{HS_OPT_COUNT, "count", 'c', &n_count, "N", "a count"},
	{HS_OPT_COUNT, "big", 0, &n_big, "N", "a large count"},
	{HS_OPT_NUMBER, "factor", 0, &n_factor, "F", "above 1"},
	{HS_OPT_NUMBER, "frac", 0, &n_frac, "X", "0 to 1"},
	{.type = HS_OPT_END},
};
static const hs_cmd_usage nusage = {"n", "hetsim n [options]", "Numbers.", nopts, NULL};

/* Parse `opt` `val` with nusage; the message into err. */
static int nparse(const char *opt, const char *val)
{
	n_count.given = n_big.given = n_factor.given = n_frac.given = 0;
	n_count.v = n_big.v = n_factor.v = n_frac.v = -7; /* "not set" */
	char o[64], v[128], name[64];
	snprintf(o, sizeof o, "%s", opt);
	snprintf(v, sizeof v, "%s", val);
	char *argv[] = {"n", o, v, NULL};
	const char *pos[1];
	int fd = hs_test_mkstemp(name, sizeof name, "optn", "");
	fflush(stderr);
	int se = dup(2);
	dup2(fd, 2);
	int n = hs_opt_parse(&nusage, 3, argv, pos, 0);
	fflush(stderr);
	dup2(se, 2);
	close(se);
	lseek(fd, 0, SEEK_SET);
	ssize_t k = read(fd, err, sizeof err - 1);
	err[k > 0 ? k : 0] = 0;
	close(fd);
	unlink(name);
	return n;
}

START_TEST(numbers)
{
	ck_assert_int_eq(nparse("-c", "0"), 0);
	ck_assert(n_count.given && n_count.v == 0);
	ck_assert_int_eq(nparse("--count", "1024"), 0);
	ck_assert(n_count.v == 1024);
	ck_assert_int_eq(nparse("--count", "007"), 0);
	ck_assert(n_count.v == 7);
	ck_assert_int_eq(nparse("--big", "9007199254740992"), 0); /* 2^53, the largest count */
	ck_assert(n_big.v == HS_OPT_COUNT_MAX);
	ck_assert_int_eq(nparse("--factor", "1.5"), 0);
	ck_assert(n_factor.v == 1.5);
	ck_assert_int_eq(nparse("--factor", "1e3"), 0);
	ck_assert(n_factor.v == 1000);
	ck_assert_int_eq(nparse("--frac", "0"), 0);
	ck_assert_int_eq(nparse("--frac", "1"), 0);
	ck_assert(n_frac.v == 1);
	static const char *const bad[][3] = {
		{"--count", "", "a whole number from 0 to 1024"},
		{"--count", "x", "a whole number from 0 to 1024"},
		{"--count", "4x", "a whole number from 0 to 1024"},
		{"--count", "-1", "a whole number from 0 to 1024"},
		{"--count", "+1", "a whole number from 0 to 1024"},
		{"--count", " 1", "a whole number from 0 to 1024"},
		{"--count", "1 ", "a whole number from 0 to 1024"},
		{"--count", "1.0", "a whole number from 0 to 1024"},
		{"--count", "1e2", "a whole number from 0 to 1024"},
		{"--count", "0x10", "a whole number from 0 to 1024"},
		{"--count", "1025", "a whole number from 0 to 1024"},
		{"-c", "18446744073709551616", "a whole number from 0 to 1024"}, /* 2^64: strtoull's ERANGE */
		{"--big", "9007199254740993", "a whole number from 1 to 9007199254740992"},
		{"--big", "0", "a whole number from 1 to 9007199254740992"},
		{"--factor", "1", "a finite number above 1"},
		{"--factor", "0.5", "a finite number above 1"},
		{"--factor", "inf", "a finite number above 1"},
		{"--factor", "nan", "a finite number above 1"},
		{"--factor", "1e999", "a finite number above 1"},
		{"--factor", "2x", "a finite number above 1"},
		{"--factor", " 2", "a finite number above 1"},
		{"--factor", "", "a finite number above 1"},
		{"--frac", "1.01", "a number from 0 to 1"},
		{"--frac", "-0.5", "a number from 0 to 1"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_msg(nparse(bad[i][0], bad[i][1]) == -1, "%s '%s' accepted", bad[i][0], bad[i][1]);
		char want[256];
		snprintf(want, sizeof want, "hetsim n: %s '%s': expected %s\n", bad[i][0], bad[i][1], bad[i][2]);
		ck_assert_msg(strcmp(err, want) == 0, "%s '%s': got '%s', want '%s'", bad[i][0], bad[i][1], err, want);
		ck_assert_int_eq(n_count.given + n_big.given + n_factor.given + n_frac.given, 0);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opt");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, spellings);
	tcase_add_test(t, positionals);
	tcase_add_test(t, messages);
	tcase_add_test(t, numbers);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
