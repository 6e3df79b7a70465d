#include <stdio.h>

#include "config/cfg.h"
#include "sim/cli/cmd_table.h"
#include "sim/cli/man.h"

static int o_man;
static const hs_opt opts[] = {
	{HS_OPT_FLAG, "man", 0, &o_man, NULL, "print the manual page hetsim(1) in roff (make install installs it)"},
	{.type = HS_OPT_END},
};
const hs_cmd_usage hs_usage_help = {"help", "hetsim help [--man] [COMMAND]",
				    "Show the commands, or one command's usage.", opts, NULL};

int cmd_help(int argc, char **argv)
{
	const char *pos[1];
	int n = hs_opt_parse(&hs_usage_help, argc, argv, pos, 1);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (o_man) {
		if (n > 0) {
			fprintf(stderr, "hetsim help: --man prints the whole page; it takes no COMMAND\n");
			return HS_EINPUT;
		}
		hs_man_write(stdout);
		return hs_cmd_finish(0);
	}
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
