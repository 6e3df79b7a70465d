/* hetsim report: gnuplot runs headless and writes non-empty PNG and SVG files, index.html embeds them, and the
 * Markdown summary links them. Skipped (exit 77) where gnuplot is not installed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/report.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/hdf5_out.h"

static const char *no_gnuplot(void)
{
	return system("gnuplot -e 'exit' >/dev/null 2>&1") == 0 ? NULL : "gnuplot not installed";
}

static long size_of(const char *dir, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	struct stat st;
	return stat(p, &st) ? -1 : (long)st.st_size;
}

static int contains(const char *dir, const char *name, const char *what)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	static char buf[1 << 22];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return strstr(buf, what) != NULL;
}

static void make_run(char *h5, size_t n)
{
	hs_test_tmpname(h5, n, "rep", ".h5");
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(hs_simulate("scenarios/default.yaml", NULL, -1, NULL, &sim, &err) == 0, "%s", err.msg);
	hs_h5 *h = hs_h5_create(h5, "run", &err);
	ck_assert_int_eq(hs_h5_write_run(h, &sim, 1, &err), 0);
	ck_assert_int_eq(hs_h5_commit(h, &err), 0);
	hs_sim_free(&sim);
}

static void one_format(const char *fmt)
{
	char h5[128], dir[128];
	make_run(h5, sizeof h5);
	hs_test_tmpname(dir, sizeof dir, "rep", "");
	hs_report_opts o = {.format = fmt};
	hs_err err = {0};
	ck_assert_msg(hs_report_make(h5, dir, &o, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(o.kind, "run");
	ck_assert_int_eq(o.plots, 3); /* breakdown, timeline, memory; no links in the analytical model */
	const char *names[] = {"breakdown", "timeline", "memory"};
	for (int i = 0; i < 3; i++) {
		char img[64];
		snprintf(img, sizeof img, "%s.%s", names[i], fmt);
		ck_assert_msg(size_of(dir, img) > 1000, "%s is empty or missing", img);
		ck_assert(contains(dir, "summary.md", img));
	}
	ck_assert(contains(dir, "index.html", strcmp(fmt, "svg") ? "data:image/png;base64," : "data:image/svg+xml;base64,"));
	ck_assert(contains(dir, "index.html", "</html>"));
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, h5);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(png) { one_format("png"); }
END_TEST

START_TEST(svg) { one_format("svg"); }
END_TEST

START_TEST(not_a_result)
{
	hs_report_opts o = {0};
	hs_err err = {0};
	char dir[128];
	hs_test_tmpname(dir, sizeof dir, "rep-bad", "");
	ck_assert_int_eq(hs_report_make("scenarios/default.yaml", dir, &o, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert(strstr(err.msg, "not a result") != NULL);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report");
	TCase *t = tcase_create("gnuplot");
	tcase_set_timeout(t, 20);
	tcase_add_test(t, png);
	tcase_add_test(t, svg);
	tcase_add_test(t, not_a_result);
	suite_add_tcase(s, t);
	return s;
}

#define HS_CHECK_SKIP no_gnuplot
#include "tests/unit/check_main.h"
