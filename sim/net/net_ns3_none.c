/* The ns-3 model's figures in a build without ns-3 (the Makefile found no libns3-dev): nothing to report. With
 * ns-3, sim/net/net_ns3.cc defines these instead. */
#include "sim/net/net_ns3.h"

#ifndef HS_HAVE_NS3
int hs_net_ns3_built(void) { return 0; }

int hs_net_ns3_stats(const hs_net *n, hs_net_ns3_stat *out)
{
	(void)n;
	(void)out;
	return -1;
}
#endif
