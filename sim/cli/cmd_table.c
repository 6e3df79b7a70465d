#include "sim/cli/cmd_table.h"

#include <string.h>

#include "sim/cli/cmd_calib.h"
#include "sim/cli/cmd_coll.h"
#include "sim/cli/cmd_place.h"
#include "sim/cli/cmd_export_graph.h"
#include "sim/cli/cmd_list.h"
#include "sim/cli/cmd_report.h"
#include "sim/cli/cmd_sweep.h"

const hs_cmd hs_commands[] = {
	{"run", cmd_run, &hs_usage_run},
	{"validate", cmd_validate, &hs_usage_validate},
	{"coll", cmd_coll, &hs_usage_coll},
	{"place", cmd_place, &hs_usage_place},
	{"calib", cmd_calib, &hs_usage_calib},
	{"export-graph", cmd_export_graph, &hs_usage_export_graph},
	{"sweep", cmd_sweep, &hs_usage_sweep},
	{"report", cmd_report, &hs_usage_report},
	{"list", cmd_list, &hs_usage_list},
	{"help", cmd_help, &hs_usage_help},
	{"version", cmd_version, &hs_usage_version},
	{NULL, NULL, NULL},
};

const hs_cmd_subs hs_subcommands[] = {
	{"calib", hs_calib_subs},
	{NULL, NULL},
};

const hs_exit_status hs_exit_statuses[] = {
	{HS_OK, "done"},
	{HS_EINTERNAL, "internal error (a bug in hetsim; never the input or the environment)"},
	{HS_EINPUT, "usage, bad input, or an environment error such as an unwritable output path"},
	{HS_EINFEASIBLE, "infeasible configuration (does not fit in memory, parallelism does not divide), with the "
			 "numbers"},
	{HS_EDRIFT, "validate: a prediction beyond its tolerance"},
	{-1, NULL},
};

const hs_cmd *hs_find_command(const char *name)
{
	for (const hs_cmd *c = hs_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void hs_print_commands(FILE *f)
{
	fprintf(f, "usage: hetsim COMMAND [options] [args]\n\n"
		   "hetsim simulates ML training on heterogeneous GPU clusters.\n\ncommands:\n");
	for (const hs_cmd *c = hs_commands; c->name; c++)
		fprintf(f, "  %-14s %s\n", c->name, c->usage->summary);
	fprintf(f, "\n'hetsim help COMMAND' or 'hetsim COMMAND --help' shows a command's options; 'man hetsim' all of\n"
		   "them, once installed (make install).\nexit status:\n");
	for (const hs_exit_status *e = hs_exit_statuses; e->meaning; e++)
		fprintf(f, "  %d  %s\n", e->code, e->meaning);
}
