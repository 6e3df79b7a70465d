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
	HS_OPT_COUNT,  /* hs_optnum *: a whole number, digits only, within [min, max] */
	HS_OPT_NUMBER, /* hs_optnum *: a finite decimal number within [min, max] (above min when min_open) */
	HS_OPT_END
};

/* The target of a numeric option: its range, declared with the command, and what was given. hs_opt_parse
 * refuses, naming the option and the range, anything else: not a number, trailing junk ("4x"), a sign on a
 * count ("-1", which strtoull would wrap to 2^64 - 1), overflow, inf and nan, a value out of range. So no
 * command parses its numbers itself, and a bad one is exit 2 with one kind of message. The command sets
 * `given` (0) and `v` (its default) before each parse: a process may parse several command lines. */
typedef struct hs_optnum {
	double min, max; /* the range (counts: whole numbers, max at most HS_OPT_COUNT_MAX) */
	int min_open;    /* 1: above min, not equal to it (a factor above 1) */
	int given;       /* set to 1 by hs_opt_parse when the option was on the command line */
	double v;        /* the value (counts are exact up to HS_OPT_COUNT_MAX) */
} hs_optnum;

/* The largest count an option may take: 2^53, the largest up to which every whole number is a double. */
#define HS_OPT_COUNT_MAX 9007199254740992.0


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
 * an error); numeric options are checked against their range (hs_optnum). Returns the number of positionals, -1 on a usage error (message printed to stderr), or -2 when
 * --help was asked (usage printed to stdout). */
int hs_opt_parse(const hs_cmd_usage *u, int argc, char **argv, const char **pos, int maxpos);
void hs_opt_usage(const hs_cmd_usage *u, FILE *f);

#endif
