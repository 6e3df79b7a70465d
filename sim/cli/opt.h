/* Command-line options as data (after git's parse-options): each subcommand declares an array of hs_opt and
 * hs_opt_parse fills the targets, collects positional arguments, and prints the usage on misuse. */
#ifndef HS_OPT_H
#define HS_OPT_H

#include <stdio.h>

#include "sim/base/strlist.h"

enum hs_opt_type {
	HS_OPT_FLAG,   /* int *: set to 1 */
	HS_OPT_STRING, /* const char **: the argument */
	HS_OPT_LIST,   /* struct hs_strlist *: every occurrence appended (--set a=1 --set b=2) */
	HS_OPT_END
};


typedef struct hs_opt {
	enum hs_opt_type type;
	const char *name; /* long name without dashes: "json" */
	char shortname;   /* 0 for none */
	void *target;
	const char *argname; /* "FILE" for options with an argument */
	const char *help;
} hs_opt;

typedef struct hs_cmd_usage {
	const char *name;    /* "run" */
	const char *synopsis; /* "hetsim run [options] SCENARIO.yaml" */
	const char *summary;  /* one line */
	const hs_opt *opts;   /* terminated by HS_OPT_END */
	const char *details;  /* free text after the options, or NULL */
} hs_cmd_usage;

/* Parse argv[1..] (argv[0] is the subcommand). Positional arguments are stored in pos (up to maxpos; more is
 * an error). Returns the number of positionals, -1 on a usage error (message printed to stderr), or -2 when
 * --help was asked (usage printed to stdout). */
int hs_opt_parse(const hs_cmd_usage *u, int argc, char **argv, const char **pos, int maxpos);
void hs_opt_usage(const hs_cmd_usage *u, FILE *f);

#endif
