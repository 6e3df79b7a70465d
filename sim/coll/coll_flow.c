/* The flow fidelity's plan for one collective: algorithm and channel layout (sim/coll/coll_flow.h).
 *
 * Why a channel per NIC: NCCL's ring and tree search (src/graph/search.cc, ncclTopoCompute) starts each channel
 * at a NIC next to a GPU of the communicator, so a communicator that spans nodes opens at least a channel per
 * NIC it can reach, and its traffic leaves a node by every such NIC. One channel would push a node's crossing
 * through the NIC of the one GPU at the ring's edge (DP 16 over two 8-GPU nodes took 4.3x the analytical step
 * that way, docs/collectives.md). */
#include "sim/coll/coll_flow.h"

#include <stdlib.h>

#include "sim/coll/coll_impl.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Channels and rails of the group (the header's rule). */
static void layout(const hs_cluster *c, const int *ranks, int n, hs_coll_flow_plan *out)
{
	out->channels = 1;
	out->nrails = 0;
	int node0 = hs_cluster_node_of(c, ranks[0]), dom0 = hs_cluster_domain_of(c, ranks[0]), spans = 0, nl = 0;
	int maxnics = 0;
	int loc[HS_COLL_FLOW_MAX_CHANNELS];
	const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, ranks[0]));
	for (int i = 0; i < n; i++) {
		/* crossing NICs means leaving the scale-up domain (an NVL72 rack's trays never use them inside it) */
		if (hs_cluster_domain_of(c, ranks[i]) != dom0)
			spans = 1;
		int k = hs_cluster_group(c, hs_cluster_group_of(c, ranks[i]))->nics_per_node;
		if (k > maxnics)
			maxnics = k;
		if (hs_cluster_node_of(c, ranks[i]) == node0 && nl < HS_COLL_FLOW_MAX_CHANNELS)
			loc[nl++] = hs_cluster_local_rank(c, ranks[i]);
	}
	int p = g->gpus_per_node, nn = g->nics_per_node;
	if (!spans || maxnics == 0)
		return;
	if (nl == p) { /* a whole node: every NIC */
		out->channels = maxnics > HS_COLL_FLOW_MAX_CHANNELS ? HS_COLL_FLOW_MAX_CHANNELS : maxnics;
		return;
	}
	if (nn == 0)
		return;
	int C = 0;
	for (int i = 0; i < nn && C < HS_COLL_FLOW_MAX_CHANNELS; i++) /* NIC i hangs off device i * p / nn
									  * (topology/topo.c) */
		for (int k = 0; k < nl; k++)
			if (loc[k] == (int)((long)i * p / nn)) {
				out->rails[C++] = i;
				break;
			}
	for (int k = 0; k < nl && C < HS_COLL_FLOW_MAX_CHANNELS; k++) { /* a device without a NIC: the nearest */
		int nic = (int)((long)loc[k] * nn / p), seen = 0;
		for (int j = 0; j < C; j++)
			seen |= out->rails[j] == nic;
		if (!seen)
			out->rails[C++] = nic;
	}
	if (C < 2) /* one NIC: one channel, which leaves by the sending device's own NIC */
		return;
	qsort(out->rails, (size_t)C, sizeof *out->rails, cmp_int);
	out->channels = C;
	out->nrails = C;
}

int hs_coll_ring_channel_order(const hs_cluster *c, const int *ranks, int n, int rail, int *out)
{
	for (int i = 0; i < n; i++)
		out[i] = ranks[i];
	if (rail < 0 || n < 2)
		return 0;
	/* whole nodes, each a block of its devices by local index, and at least two of them */
	int rot = 0;
	for (int b = 0; b < n;) {
		int node = hs_cluster_node_of(c, ranks[b]);
		const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, ranks[b]));
		int p = g->gpus_per_node;
		if (p < 1 || b + p > n || (b == 0 && p == n))
			return 0;
		for (int j = 0; j < p; j++)
			if (hs_cluster_node_of(c, ranks[b + j]) != node || hs_cluster_local_rank(c, ranks[b + j]) != j)
				return 0;
		b += p;
	}
	for (int b = 0; b < n;) {
		const hs_node_group *g = hs_cluster_group(c, hs_cluster_group_of(c, ranks[b]));
		int p = g->gpus_per_node, nn = g->nics_per_node;
		int q = rail < nn ? (int)((long)rail * p / nn) : 0; /* a node without NIC `rail`: as it is */
		for (int j = 0; j < p; j++)
			out[b + j] = ranks[b + (j + q) % p];
		rot |= q != 0;
		b += p;
	}
	return rot;
}

int hs_coll_flow_plan_of(const hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo algo, enum hs_coll_proto proto,
			 const int *ranks, int n, double bytes, hs_coll_flow_plan *out)
{
	hs_err err = {0};
	hs_coll_grp g;
	*out = (hs_coll_flow_plan){hs_coll_default_algo(op), 1, 0, {0}};
	if (!ranks || n < 1 || (unsigned)op >= HS_COLL_OP_COUNT || (unsigned)algo >= HS_ALGO_COUNT ||
	    hs_coll_grp_init(&g, c, ranks, n, &err))
		return -1;
	if (algo == HS_ALGO_AUTO && proto != HS_PROTO_AUTO) {
		/* the tuner restricted to one protocol (hetsim coll --proto) may pick another algorithm */
		hs_coll_choice ch;
		hs_coll_nccl_time(c, op, HS_ALGO_AUTO, proto, ranks, n, bytes, &ch);
		out->algo = ch.algo;
	} else {
		out->algo = hs_coll_grp_resolve(&g, op, algo, bytes); /* as hs_coll_resolve_algo */
	}
	layout(c, ranks, n, out);
	return 0;
}
