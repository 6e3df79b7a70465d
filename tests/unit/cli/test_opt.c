/* hs_opt_parse (sim/cli/opt.c): every spelling getopt_long accepts, positionals where they stand, --, and the
 * messages for unknown, ambiguous and valueless options. */
#include <check.h>
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

static Suite *suite(void)
{
	Suite *s = suite_create("opt");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, spellings);
	tcase_add_test(t, positionals);
	tcase_add_test(t, messages);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
