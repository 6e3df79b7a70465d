#include "sim/cli/opt.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

void hs_opt_usage(const hs_cmd_usage *u, FILE *f)
{
	fprintf(f, "usage: %s\n\n%s\n", u->synopsis, u->summary);
	if (u->opts && u->opts[0].type != HS_OPT_END)
		fprintf(f, "\noptions:\n");
	for (const hs_opt *o = u->opts; o && o->type != HS_OPT_END; o++) {
		char left[64];
		if (o->shortname)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortname, o->name, o->argname ? " " : "",
				 o->argname ? o->argname : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->argname ? " " : "",
				 o->argname ? o->argname : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
	if (u->details)
		fprintf(f, "\n%s\n", u->details);
}

static const hs_opt *find(const hs_cmd_usage *u, const char *name, size_t len, char shortname)
{
	for (const hs_opt *o = u->opts; o && o->type != HS_OPT_END; o++) {
		if (shortname && o->shortname == shortname)
			return o;
		if (!shortname && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	}
	return NULL;
}

static int set(const hs_opt *o, const char *arg)
{
	switch (o->type) {
	case HS_OPT_FLAG: *(int *)o->target = 1; break;
	case HS_OPT_STRING: *(const char **)o->target = arg; break;
	case HS_OPT_LIST: {
		hs_strlist_push(o->target, arg);
		break;
	}
	case HS_OPT_END: break;
	}
	return 0;
}

int hs_opt_parse(const hs_cmd_usage *u, int argc, char **argv, const char **pos, int maxpos)
{
	int npos = 0, only_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || a[1] == 0) {
			if (npos >= maxpos) {
				fprintf(stderr, "hetsim %s: unexpected argument '%s'\n", u->name, a);
				fprintf(stderr, "usage: %s\n", u->synopsis);
				return -1;
			}
			pos[npos++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			hs_opt_usage(u, stdout);
			return -2;
		}
		const hs_opt *o;
		const char *inl = NULL;
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find(u, name, len, 0);
			if (eq)
				inl = eq + 1;
		} else {
			o = a[2] == 0 ? find(u, NULL, 0, a[1]) : NULL;
		}
		if (!o) {
			fprintf(stderr, "hetsim %s: unknown option '%s'\n", u->name, a);
			fprintf(stderr, "usage: %s   (hetsim %s --help for the options)\n", u->synopsis, u->name);
			return -1;
		}
		if (o->type == HS_OPT_FLAG) {
			if (inl) {
				fprintf(stderr, "hetsim %s: option '--%s' takes no value\n", u->name, o->name);
				return -1;
			}
			set(o, NULL);
			continue;
		}
		if (!inl) {
			if (i + 1 >= argc) {
				fprintf(stderr, "hetsim %s: option '%s' needs a value (%s)\n", u->name, a,
					o->argname ? o->argname : "VALUE");
				return -1;
			}
			inl = argv[++i];
		}
		set(o, inl);
	}
	return npos;
}
