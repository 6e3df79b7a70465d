/* `hetsim calib`: fit device profiles from measurements, derive profiles for other devices, and import
 * nccl-tests logs as fabric alpha-beta fits (docs/calibration.md). */
#ifndef HS_CMD_CALIB_H
#define HS_CMD_CALIB_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_calib;
/* The subcommands' usages (fit, derive, import-nccl-tests, compare-refexec), NULL-terminated: the man page. */
extern const hs_cmd_usage *const hs_calib_subs[];
int cmd_calib(int argc, char **argv);

#endif
