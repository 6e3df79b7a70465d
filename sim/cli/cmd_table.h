/* The subcommand table (sim/cli/cmd_table.c) and lookups used by main and `hetsim help`. */
#ifndef HS_CMD_TABLE_H
#define HS_CMD_TABLE_H

#include <stdio.h>

#include "sim/cli/cmd.h"

extern const hs_cmd hs_commands[]; /* terminated by {NULL} */
/* Commands whose subcommands have option tables of their own (calib fit, ...): the man page lists them. */
typedef struct hs_cmd_subs {
	const char *name;                  /* the command: "calib" */
	const hs_cmd_usage *const *usages; /* NULL-terminated */
} hs_cmd_subs;
extern const hs_cmd_subs hs_subcommands[]; /* terminated by {NULL} */
/* The exit statuses of every command (docs/architecture.md, "Errors"), for `hetsim help` and the man page; terminated by {-1}. */
typedef struct hs_exit_status {
	int code;
	const char *meaning;
} hs_exit_status;
extern const hs_exit_status hs_exit_statuses[];
const hs_cmd *hs_find_command(const char *name);
void hs_print_commands(FILE *f);

#endif
