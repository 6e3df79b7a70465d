/* `hetsim place SCENARIO.yaml`: search placements of a training job on a heterogeneous cluster. Pipeline stages
 * are outermost in the rank order and devices are numbered group by group, so the order of the node groups
 * decides which group runs which stages; the search tries every distinct order of the groups and every TP x PP
 * x DP shape (TP inside a node), balancing each with `stage_layers: auto` and `dp_microbatches: auto`, simulates
 * each candidate through the library and prints the fastest with why (the bottleneck stage and its device, the
 * bubble and the exposed communication). */
#ifndef HS_CMD_PLACE_H
#define HS_CMD_PLACE_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_place;
int cmd_place(int argc, char **argv);

#endif
