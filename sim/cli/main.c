/* The `hetsim` command: a table of subcommands (after git's commands[]), each in sim/cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/cli/cmd.h"
#include "sim/cli/cmd_table.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		hs_print_commands(stderr);
		return HS_EINPUT;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		hs_print_commands(stdout);
		return hs_cmd_finish(0);
	}
	if (strcmp(name, "--version") == 0)
		name = "version";
	const hs_cmd *c = hs_find_command(name);
	if (!c) {
		const char *names[64];
		int n = 0;
		for (const hs_cmd *k = hs_commands; k->name && n < 63; k++)
			names[n++] = k->name;
		names[n] = NULL;
		const char *sug = hs_cfg_suggest(name, names);
		fprintf(stderr, "hetsim: '%s' is not a command%s%s%s; see 'hetsim help'\n", name,
			sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
		return HS_EINPUT;
	}
	/* every command's stdout is checked here too: a full disk or a closed pipe is exit 2, never a silent 0 */
	return hs_cmd_finish(c->fn(argc - 1, argv + 1));
}
