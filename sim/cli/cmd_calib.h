/* `hetsim calib`: fit device profiles from measurements, derive profiles for other devices, and import
 * nccl-tests logs as fabric alpha-beta fits (docs/calibration.md). */
#ifndef HS_CMD_CALIB_H
#define HS_CMD_CALIB_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_calib;
int cmd_calib(int argc, char **argv);

#endif
