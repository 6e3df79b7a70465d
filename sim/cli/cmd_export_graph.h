/* `hetsim export-graph`: write one training step's task graph, for the ranks of one node, in the format the
 * reference executor (kernels/refexec) reads (docs/graph-format.md). */
#ifndef HS_CMD_EXPORT_GRAPH_H
#define HS_CMD_EXPORT_GRAPH_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_export_graph;
int cmd_export_graph(int argc, char **argv);

#endif
