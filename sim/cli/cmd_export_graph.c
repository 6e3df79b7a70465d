/* hetsim export-graph: simulate one step (symmetric build), expand it for the selected ranks and write it. */
#include "sim/cli/cmd_export_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/base/alloc.h"
#include "sim/cli/cmd.h"
#include "sim/study/simulate.h"
#include "traces/chakra.h"
#include "traces/graph_export.h"

static const char *out_path, *ranks_arg, *format;
static hs_optnum node_arg = {.min = 0, .max = 1 << 30}; /* checked by hs_opt_parse (sim/cli/opt.h) */
static struct hs_strlist sets;

static const hs_opt opts[] = {
	{HS_OPT_STRING, "output", 'o', &out_path, "FILE", "write the graph here (required; chakra: the prefix)"},
	{HS_OPT_STRING, "format", 0, &format, "hsgraph|chakra",
	 "hsgraph (default): one node's ranks for refexec; chakra: every rank's PREFIX.<rank>.et (docs/chakra.md)"},
	{HS_OPT_LIST, "set", 's', &sets, "KEY=VALUE", "override a scenario key (repeatable): --set parallelism.tp=4"},
	{HS_OPT_COUNT, "node", 0, &node_arg, "N", "export the ranks on node N (default 0)"},
	{HS_OPT_STRING, "ranks", 0, &ranks_arg, "A,B,...", "export these global ranks instead of a node's"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_export_graph = {
	"export-graph", "hetsim export-graph SCENARIO.yaml [--set K=V] [--node N | --ranks A,B] [--format F] -o FILE",
	"Write one training step's task graph for the ranks of a node, for the reference executor (kernels/refexec).",
	opts,
	"The format (\"hsgraph 1\") is documented in docs/graph-format.md. Every task carries hetsim's predicted\n"
	"duration (pred_s) and the header the predicted step time, for `hetsim calib compare-refexec`.\n"
	"Exit status: 0 done, 1 internal error, 2 bad input, 3 infeasible (does not fit in memory)."};

static int parse_int(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < 0 || v > 1 << 30)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_ranks(const char *arg, int **out, int *n)
{
	*n = 0;
	*out = hs_xmalloc((strlen(arg) / 2 + 2) * sizeof **out);
	char *copy = hs_xstrdup(arg), *save = NULL;
	int bad = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		bad |= parse_int(t, &(*out)[(*n)++]);
	free(copy);
	if (bad || *n == 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static char *command_line(int argc, char **argv)
{
	size_t n = 8;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = hs_xmalloc(n);
	strcpy(s, "hetsim");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int cmd_export_graph(int argc, char **argv)
{
	const char *pos[2];
	out_path = ranks_arg = format = NULL;
	node_arg.given = 0, node_arg.v = 0;
	int np = hs_opt_parse(&hs_usage_export_graph, argc, argv, pos, 1);
	if (np == -2)
		return 0;
	int status = 0;
	if (np < 0) {
		status = HS_EINPUT;
		goto done;
	}
	if (np != 1 || !out_path || (node_arg.given && ranks_arg)) {
		fprintf(stderr, "hetsim export-graph: %s\nusage: %s\n",
			np != 1 ? "give one scenario" : !out_path ? "-o FILE is required"
							 : "give --node or --ranks, not both",
			hs_usage_export_graph.synopsis);
		status = HS_EINPUT;
		goto done;
	}
	int chakra = format && strcmp(format, "chakra") == 0;
	if (format && !chakra && strcmp(format, "hsgraph") != 0) {
		fprintf(stderr, "hetsim export-graph: --format %s: expected hsgraph or chakra\n", format);
		status = HS_EINPUT;
		goto done;
	}
	if (chakra && (node_arg.given || ranks_arg)) {
		fprintf(stderr, "hetsim export-graph: --format chakra writes every rank: --node and --ranks do not "
				"apply\n");
		status = HS_EINPUT;
		goto done;
	}
	int node = (int)node_arg.v, *ranks = NULL, nranks = 0;
	if (ranks_arg && parse_ranks(ranks_arg, &ranks, &nranks)) {
		fprintf(stderr, "hetsim export-graph: --ranks %s: expected comma-separated rank numbers\n", ranks_arg);
		status = HS_EINPUT;
		goto done;
	}
	hs_err err = {0};
	hs_sim sim;
	/* Chakra: keeping where the collectives inside layers ran, which the writer makes nodes of */
	memset(&sim, 0, sizeof sim);
	hs_ydoc *doc = chakra ? hs_yaml_load_file_set(pos[0], sets.v, sets.n, &err) : NULL;
	if (chakra ? !doc || hs_simulate_doc_traced(doc, pos[0], 1, NULL, NULL, NULL, &sim, &err)
		   : hs_simulate(pos[0], &sets, 1, NULL, &sim, &err)) {
		free(ranks);
		status = hs_cmd_fail("export-graph", &err);
		goto done;
	}
	if (chakra) {
		int files = 0;
		size_t nodes = 0;
		if (hs_chakra_write(out_path, &sim, &files, &nodes, &err))
			status = hs_cmd_fail("export-graph", &err);
		else
			printf("%s.<0..%d>.et: %d Chakra ET files, %zu nodes; predicted step %.12f s\n", out_path,
			       files - 1, files, nodes, sim.r.step_time_s);
		free(ranks);
		hs_sim_free(&sim);
		goto done;
	}
	hs_graph_export x;
	char *cmd = command_line(argc, argv);
	if ((!ranks && hs_graph_export_node_ranks(sim.s, node, &ranks, &nranks, &err)) ||
	    hs_graph_export_plan(sim.s, &sim.b, ranks, nranks, &x, &err)) {
		status = hs_cmd_fail("export-graph", &err);
	} else {
		if (hs_graph_export_file(out_path, sim.s, &sim.b, &sim.r, &x, cmd, &err))
			status = hs_cmd_fail("export-graph", &err);
		else
			printf("%s: %zu tasks, %zu ops, %d ranks (%d groups); predicted step %.6f s\n", out_path, x.ntasks,
			       sim.b.graph.nops, x.nranks, x.ngroups, sim.r.step_time_s);
		hs_graph_export_free(&x);
	}
	free(cmd);
	free(ranks);
	hs_sim_free(&sim);
done:
	hs_strlist_free(&sets);
	return hs_cmd_finish(status);
}
