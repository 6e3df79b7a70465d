/* The subcommand table (sim/cli/cmd_table.c) and lookups used by main and `hetsim help`. */
#ifndef HS_CMD_TABLE_H
#define HS_CMD_TABLE_H

#include <stdio.h>

#include "sim/cli/cmd.h"

extern const hs_cmd hs_commands[]; /* terminated by {NULL} */
const hs_cmd *hs_find_command(const char *name);
void hs_print_commands(FILE *f);

#endif
