/* `hetsim list gpus|models|topologies|schedules|recipes|collectives`: what a scenario may name, with each
 * entry's key figures and where they come from, read from the tables that define them. */
#ifndef HS_CMD_LIST_H
#define HS_CMD_LIST_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_list;
int cmd_list(int argc, char **argv);

#endif
