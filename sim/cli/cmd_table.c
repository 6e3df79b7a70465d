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
	fprintf(f, "\n'hetsim help COMMAND' or 'hetsim COMMAND --help' shows a command's options.\n"
		   "Exit status: 0 done, 1 internal error, 2 usage or bad input, 3 infeasible configuration.\n");
}
