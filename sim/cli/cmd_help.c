#include <stdio.h>

#include "config/cfg.h"
#include "sim/cli/cmd_table.h"

static const hs_opt opts[] = {{.type = HS_OPT_END}};
const hs_cmd_usage hs_usage_help = {"help", "hetsim help [COMMAND]", "Show the commands, or one command's usage.",
				    opts, NULL};

int cmd_help(int argc, char **argv)
{
	const char *pos[1];
	int n = hs_opt_parse(&hs_usage_help, argc, argv, pos, 1);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n == 0) {
		hs_print_commands(stdout);
		return hs_cmd_finish(0);
	}
	const hs_cmd *c = hs_find_command(pos[0]);
	if (!c) {
		fprintf(stderr, "hetsim help: '%s' is not a command; see 'hetsim help'\n", pos[0]);
		return HS_EINPUT;
	}
	hs_opt_usage(c->usage, stdout);
	return hs_cmd_finish(0);
}
