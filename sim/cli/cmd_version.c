#include <gsl/gsl_version.h>
#include <stdio.h>
#include <yaml.h>

#include "sim/cli/cmd.h"
#include "sim/base/version.h"

static const hs_opt opts[] = {{.type = HS_OPT_END}};
const hs_cmd_usage hs_usage_version = {"version", "hetsim version", "Print the version of hetsim and of the "
								    "libraries it was built with.",
				       opts, NULL};

int cmd_version(int argc, char **argv)
{
	const char *pos[1];
	int n = hs_opt_parse(&hs_usage_version, argc, argv, pos, 0);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	printf("hetsim %s (libyaml %s, GSL %s)\n", HS_VERSION, yaml_get_version_string(), GSL_VERSION);
	return hs_cmd_finish(0);
}
