/* How a collective runs step by step at flow fidelity: the algorithm and the channel layout (how many parallel
 * rings or trees, and the NIC rail each crosses nodes on). One rule for every caller, so that a collective
 * timed alone by `hetsim coll --fidelity flow` and the same collective inside a simulated step (sim/exec's
 * network path: a training step's DP reduction, a traced workload's COMM_COLL node) run the same program on
 * the network and take the same time on an idle one. The network model applies the layout
 * (hs_net_set_channels, hs_net_set_rails, sim/net/net.h); this module only decides it. */
#ifndef HS_COLL_FLOW_H
#define HS_COLL_FLOW_H

#include "sim/coll/coll.h"
#include "sim/coll/coll_nccl.h"

/* The most channels a collective opens: NCCL's MAXCHANNELS (64 since NCCL 2.12, src/include/device.h), as
 * HS_NET_MAX_CHANNELS (sim/net/net.h) counts them. */
#define HS_COLL_FLOW_MAX_CHANNELS 64

typedef struct hs_coll_flow_plan {
	enum hs_coll_algo algo; /* concrete: AUTO resolved to NCCL's tuner choice */
	int channels;           /* >= 1 */
	int nrails;             /* 0: channel c crosses on NIC c; else channel c on NIC rails[c] (nrails = channels) */
	int rails[HS_COLL_FLOW_MAX_CHANNELS];
} hs_coll_flow_plan;

/* The plan for `op` of `bytes` over devices ranks[0..n-1] of `c` with `algo` (AUTO: what NCCL's tuner picks
 * with `proto`, as hs_coll_nccl_time chooses; an algorithm the op lacks: the op's default). Channels, as
 * NCCL's ring and tree search opens them (a channel next to each NIC of the communicator's GPUs):
 *   - a group inside one scale-up domain, or on nodes without NICs: one channel;
 *   - a group that holds a whole node (the first rank's): a channel per NIC, the most NICs per node of the
 *     groups its ranks are in, channel c on NIC c;
 *   - a group that holds some devices of a node: a channel per NIC those devices hang off (a device without a
 *     NIC of its own: the nearest one), on those NICs; one such NIC: one channel, which crosses on the
 *     sending device's own NIC. The first rank's node stands for all (a parallel strategy's groups hold the
 *     same local devices on every node).
 * Returns -1 when the group is not a valid one of `c` (hs_coll_check says why), else 0. */
int hs_coll_flow_plan_of(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, enum hs_coll_proto proto,
			 const int *ranks, int n, double bytes, hs_coll_flow_plan *out);

/* Channel `rail`'s ring order over ranks[0..n-1] (the ring's order, each node's devices adjacent) into out[n]:
 * where the ring holds whole nodes, each a block of its devices by local index (as the network's ring order
 * sorts them), and rail >= 0, every node's block is rotated to start at the device that NIC `rail` hangs off
 * (local index rail * gpus / nics, topology/topo.c), keeping the node order. NCCL's ring search
 * (src/graph/search.cc, NCCL 2.19.3: ncclTopoSearchRecNet, "try the most local GPUs") starts each channel's ring
 * at the GPU nearest the channel's NIC and ends it at the node's last GPU, which sends to the next node by the
 * same NIC (PXN over NVLink where it is not the NIC's own GPU): NET c -> GPU c -> ... -> GPU c-1 -> NET c.
 * So channel c enters every node at GPU c, and the channels of a node are alike up to a rotation of its
 * devices and NICs (the symmetry classes use it, sim/net/netcoll_ring.c). Anything else (a partial node, a
 * node's devices out of order, one channel): out = ranks. Returns 1 when rotated, else 0. */
int hs_coll_ring_channel_order(const hs_cluster *c, const int *ranks, int n, int rail, int *out);

#endif
