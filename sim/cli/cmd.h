/* The `hetsim` subcommands. main.c dispatches through a table of these; each lives in sim/cmd_<name>.c,
 * parses its options with hs_opt, prints results to stdout and errors to stderr, and returns the exit status
 * (hs_exit_statuses in cmd_table.c: 0 done, 1 internal error, 2 usage or bad input, 3 infeasible, 4 drift). */
#ifndef HS_CMD_H
#define HS_CMD_H

#include <stdio.h>

#include "sim/base/err.h"
#include "sim/cli/opt.h"

typedef struct hs_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const hs_cmd_usage *usage;
} hs_cmd;

/* Print "hetsim CMD: message" for an hs_err and return its status as the exit code. */
int hs_cmd_fail(const char *cmd, const hs_err *err);
/* Check that stdout was written without error (a full disk, a closed pipe) before exiting 0. */
int hs_cmd_finish(int status);

extern const hs_cmd_usage hs_usage_run, hs_usage_version, hs_usage_help, hs_usage_validate;
int cmd_validate(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

#endif
