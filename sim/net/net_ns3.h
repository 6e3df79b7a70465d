/* hs_net_ns3: the packet-level network model through ns-3 (sim/net/net_ns3.cc), built only where libns3-dev is
 * installed (the Makefile's pkg-config probe defines HS_HAVE_NS3). Elsewhere hs_net_models[] names "ns3" with
 * the note "not built: install libns3-dev (make deps)" and hs_net_create("ns3") fails with it (exit 2).
 *
 * What the model is, its transport and how its clock is kept with the engine's: the comment at the top of
 * net_ns3.cc, and docs/network.md ("ns3"). These figures are for the validation tests and reports. */
#ifndef HS_NET_NS3_H
#define HS_NET_NS3_H

#include <stdint.h>

#include "sim/net/net.h"

/* Payload bytes per data packet (an RDMA MTU) and the wire bytes each packet carries besides its payload
 * (net_ns3.cc says where each comes from). */
#define HS_NS3_MTU 4096
#define HS_NS3_HDR 46
#define HS_NS3_ACK 50

typedef struct hs_net_ns3_stat {
	uint64_t data_packets;   /* data packets injected by senders */
	uint64_t ack_packets;    /* acknowledgements injected by receivers */
	uint64_t drops;          /* packets a queue refused (0 by construction: queues hold every window) */
	uint64_t max_queue;      /* the deepest any transmit queue got, packets */
	double delivered;        /* payload bytes that reached their destinations */
	uint64_t ns3_events;     /* events ns-3's simulator ran */
	uint64_t steps;          /* engine events the model ran to keep ns-3's clock with the engine's */
} hs_net_ns3_stat;

/* 1 when this build has the ns-3 model. */
int hs_net_ns3_built(void);
/* The figures of network n so far; -1 when n does not run on the ns-3 model (or it is not built). */
int hs_net_ns3_stats(const hs_net *n, hs_net_ns3_stat *out);

#endif
