/* hetsim report RESULT -o DIR: plots (gnuplot) and a report page (index.html, summary.md) from what run,
 * sweep or validate wrote (reports/report.h). */
#include <stdio.h>

#include "reports/report.h"
#include "sim/cli/cmd.h"
#include "sim/cli/cmd_report.h"

static const char *o_dir, *o_format, *o_title;

static const hs_opt opts[] = {
	{HS_OPT_STRING, "output", 'o', &o_dir, "DIR", "the report folder (created; required)"},
	{HS_OPT_STRING, "format", 0, &o_format, "png|svg", "image format (default png, svg when gnuplot lacks cairo)"},
	{HS_OPT_STRING, "title", 0, &o_title, "TEXT", "the page's title"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_report = {
	"report", "hetsim report [options] RESULT -o DIR",
	"Draw plots with gnuplot and write DIR/index.html and DIR/summary.md from a run, sweep or validate result.",
	opts,
	"RESULT: the HDF5 of `run --hdf5` (add --hdf5-tasks for the timeline) or `sweep --hdf5`, a sweep CSV,\n"
	"or the JSON of `validate --json` or of `run --json` on a fabric scenario. docs/outputs.md lists the plots."};

int cmd_report(int argc, char **argv)
{
	const char *pos[4];
	o_dir = o_format = o_title = NULL;
	int n = hs_opt_parse(&hs_usage_report, argc, argv, pos, 4);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n != 1 || !o_dir) {
		fprintf(stderr, "hetsim report: expected one RESULT and -o DIR\nusage: %s\n", hs_usage_report.synopsis);
		return HS_EINPUT;
	}
	hs_report_opts o = {.format = o_format, .title = o_title};
	hs_err err = {0};
	if (hs_report_make(pos[0], o_dir, &o, &err))
		return hs_cmd_finish(hs_cmd_fail("report", &err));
	printf("%s report: %d plots, %s/index.html, %s/summary.md\n", o.kind, o.plots, o_dir, o_dir);
	return hs_cmd_finish(0);
}
