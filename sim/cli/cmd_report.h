/* hetsim report (sim/cli/cmd_report.c). */
#ifndef HS_CMD_REPORT_H
#define HS_CMD_REPORT_H

#include "sim/cli/cmd.h"

extern const hs_cmd_usage hs_usage_report;
int cmd_report(int argc, char **argv);

#endif
