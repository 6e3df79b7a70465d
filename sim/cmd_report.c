#include "sim/cmd_report.h"
const hs_cmd_usage hs_usage_report = {"report", "hetsim report RESULT -o DIR", "Plots and a report page.", NULL, NULL};
int cmd_report(int argc, char **argv) { return 1; }
