/* hetsim sweep (sim/cli/cmd_sweep.c). */
#ifndef HS_CMD_SWEEP_H
#define HS_CMD_SWEEP_H

#include "sim/cli/cmd.h"

extern const hs_cmd_usage hs_usage_sweep;
int cmd_sweep(int argc, char **argv);

#endif
