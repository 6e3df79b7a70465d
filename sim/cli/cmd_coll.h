/* `hetsim coll SCENARIO.yaml`: one collective over the scenario's cluster, at a range of sizes, printed in
 * nccl-tests' columns (or JSON) so it compares directly with an nccl-tests log. */
#ifndef HS_CMD_COLL_H
#define HS_CMD_COLL_H

#include "sim/cli/opt.h"

extern const hs_cmd_usage hs_usage_coll;
int cmd_coll(int argc, char **argv);

/* Parse an nccl-tests size: a number with an optional K, M or G suffix (powers of 1024, as nccl-tests' -b
 * and -e read them). -1 if malformed. */
double hs_coll_parse_size(const char *s);

#endif
