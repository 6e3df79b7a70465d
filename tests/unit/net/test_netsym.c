/* Symmetry classes in the flow model (sim/net/netsym.h, issue 22 item 1): the same collectives with classes
 * and with every transfer a flow (hs_net_set_symmetry 0, what --no-symmetry runs) give the same completion
 * times and the same bytes on every link, to 1e-9 relative, on symmetric fabrics (one switch, a 16-node
 * fat-tree at 2:1, a 4x4 torus, a rail-optimised cluster with a channel per rail) and on ones that are not
 * (a slower NIC, an explicit graph, other traffic entering the ring's links mid-way, rings that share links);
 * and the classes form, split or stay away where the fabric says they should. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/base/sizes.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_flow.h"
#include "sim/net/net.h"
#include "topology/cluster.h"

static hs_ydoc *doc;

static hs_cluster *load(const char *text)
{
	hs_err err;
	hs_err_clear(&err);
	doc = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

static void unload(hs_cluster *c)
{
	hs_cluster_free(c);
	hs_yaml_free(doc);
	doc = NULL;
}

#define MAXJ 4
static double done_at[MAXJ];
static hs_engine *cur;
static void rec(void *ctx, uint64_t arg)
{
	(void)ctx;
	done_at[arg] = hs_time_to_s(hs_engine_now(cur));
}

/* A job: a collective over ranks[0..n) (or one send from ranks[0] to ranks[1], n = -2), started at t0_us. */
typedef struct job {
	enum hs_coll_op op;
	enum hs_coll_algo algo;
	int ranks[256], n;
	double bytes, t0_us;
} job;

typedef struct outcome {
	double t[MAXJ];
	double *link; /* bytes per link */
	int nlinks;
	double injected;
	hs_net_sym_stat st;
} outcome;

static hs_net *curnet;
static const job *curjobs;
/* hs_net_set_ring_hops in run(): the tests of the classes' replay and re-form turn it off, where a timed
 * ring's broken set would go on as hops (sim/net/netcoll_ring_hops.c), and check the hops' path beside */
static int hops_on = 1;
static double chunk; /* hs_net_set_chunk in run(): 0, the slices of a step's piece whole */
/* the network keeps a timeline of each link's bytes (hs_net_stats_timeline): timed ring hops go slice by slice
 * instead of as runs of their closed form (sim/net/netcoll_ring_hops.c) */
static int timeline;
static void start_job(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng, (void)ctx;
	const job *j = &curjobs[arg];
	hs_err err;
	hs_err_clear(&err);
	int rc = j->n == -2 ? hs_net_send(curnet, j->ranks[0], j->ranks[1], j->bytes, rec, NULL, arg, &err)
			    : hs_net_collective(curnet, j->op, j->algo, j->ranks, j->n, j->bytes, rec, NULL, arg, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
}

static outcome run(const hs_cluster *c, const job *jobs, int nj, int symmetry, int channels)
{
	outcome o = {0};
	hs_err err;
	hs_err_clear(&err);
	cur = hs_engine_create();
	curnet = hs_net_create(c, "flow", cur, &err);
	ck_assert_msg(curnet != NULL, "%s", err.msg);
	hs_net_set_symmetry(curnet, symmetry);
	hs_net_set_ring_hops(curnet, hops_on);
	hs_net_set_channels(curnet, channels);
	hs_net_set_chunk(curnet, chunk);
	if (timeline)
		hs_net_stats_timeline(curnet, 1e-4, 64);
	curjobs = jobs;
	for (int k = 0; k < nj; k++) {
		done_at[k] = -1;
		hs_engine_at(cur, hs_time_from_s(jobs[k].t0_us * 1e-6), start_job, NULL, (uint64_t)k);
	}
	hs_engine_run(cur, HS_TIME_MAX);
	for (int k = 0; k < nj; k++) {
		ck_assert_msg(done_at[k] > 0, "job %d did not complete", k);
		o.t[k] = done_at[k];
	}
	o.nlinks = hs_net_nlinks(curnet);
	o.link = malloc((size_t)o.nlinks * sizeof *o.link);
	for (int l = 0; l < o.nlinks; l++) {
		hs_net_link_stat s;
		hs_net_link_stats(curnet, l, &s, NULL, 0);
		o.link[l] = s.bytes;
	}
	o.injected = hs_net_bytes_injected(curnet);
	o.st = hs_net_sym_stats(curnet);
	hs_net_free(curnet);
	hs_engine_destroy(cur);
	return o;
}

/* Classes on and off: same times and link bytes to 1e-9; returns the classes' statistics. Times may also differ
 * by one picosecond, the clock's quantum: a finish time is the rounding of rem / rate up to whole picoseconds,
 * and a class's rate, summed on the quotient's links in another order than its members' on theirs, can differ
 * in the last bits (seen on the direct all-to-all over half of each node's GPUs: 592.202560 us against
 * 592.202561 us, 1.7e-9 relative). */
static hs_net_sym_stat compare(const char *what, const hs_cluster *c, const job *jobs, int nj, int channels)
{
	outcome a = run(c, jobs, nj, 1, channels), b = run(c, jobs, nj, 0, channels);
	for (int k = 0; k < nj; k++)
		ck_assert_msg(fabs(a.t[k] - b.t[k]) <= 1e-9 * b.t[k] + 1e-12, "%s: job %d done at %.15g s with classes, %.15g s without",
			      what, k, a.t[k], b.t[k]);
	double tot = 0;
	for (int l = 0; l < b.nlinks; l++)
		tot += b.link[l];
	ck_assert(tot > 0);
	for (int l = 0; l < a.nlinks; l++)
		ck_assert_msg(fabs(a.link[l] - b.link[l]) <= 1e-9 * (b.link[l] > 0 ? b.link[l] : tot),
			      "%s: link %d carried %.12g bytes with classes, %.12g without", what, l, a.link[l], b.link[l]);
	ck_assert_msg(fabs(a.injected - b.injected) <= 1e-9 * b.injected, "%s: injected %.12g vs %.12g", what, a.injected,
		      b.injected);
	ck_assert_msg(b.st.sets == 0 && b.st.flows == 0 && b.st.holds == 0 && b.st.solo == 0,
		      "%s: classes formed, hops held or a collective timed alone with symmetry off", what);
	free(a.link), free(b.link);
	return a.st;
}

static job ring(enum hs_coll_op op, int n, double bytes)
{
	job j = {op, HS_ALGO_RING, {0}, n, bytes, 0};
	for (int i = 0; i < n; i++)
		j.ranks[i] = i;
	return j;
}

static const char *one_switch = "cluster:\n"
				"  groups:\n"
				"    - {nodes: 64, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
				"       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
				"  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n";

/* One switch: every hop alike, one class; each step is one flow, and that class is alone on its links (each
 * hop on its own NIC ports), so the flow model times every one of them without its solver (net_flow.c). */
START_TEST(one_switch_one_class)
{
	hs_cluster *c = load(one_switch);
	enum hs_coll_op ops[] = {HS_COLL_ALL_REDUCE, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
	for (int k = 0; k < 3; k++) {
		job j = ring(ops[k], 64, 64 * HS_MiB);
		hs_net_sym_stat st = compare("one switch", c, &j, 1, 1);
		int steps = ops[k] == HS_COLL_ALL_REDUCE ? 2 * 63 : 63;
		ck_assert_msg(st.sets == 1 && st.broken == 0 && st.flows == (uint64_t)steps,
			      "one switch: %llu sets, %llu broken, %llu class flows (expected 1, 0, %d)",
			      (unsigned long long)st.sets, (unsigned long long)st.broken, (unsigned long long)st.flows, steps);
		ck_assert_msg(st.alone == st.flows, "one switch: %llu of %llu class flows timed alone",
			      (unsigned long long)st.alone, (unsigned long long)st.flows);
	}
	unload(c);
}
END_TEST

/* 16 nodes on a 2-tier fat-tree at 2:1 (radix 6: 4 nodes per leaf, 2 uplinks): a ring's hops inside a leaf
 * and across the spines differ, so the classes are the ring rotated by a leaf (4 per ring), wherever the
 * hashed spine paths let a rotation carry the routes onto each other; either way the results are the
 * per-flow ones. */
START_TEST(fat_tree_2to1)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 16, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 2, radix: 6, oversubscription: 2, latency: 1 us}\n");
	job j = ring(HS_COLL_ALL_REDUCE, 16, 16 * HS_MiB);
	hs_net_sym_stat st = compare("fat-tree 2:1", c, &j, 1, 1);
	ck_assert_msg(st.sets == 1 && st.flows > 0 && st.flows < 16 * 2 * 15,
		      "fat-tree 2:1: %llu sets, %llu class flows (expected classes, fewer flows than 480 transfers)",
		      (unsigned long long)st.sets, (unsigned long long)st.flows);
	/* all-to-all is not run by classes (direct algorithm): same results, nothing formed */
	job a = ring(HS_COLL_ALL_TO_ALL, 16, 4 * HS_MiB);
	a.algo = HS_ALGO_DIRECT;
	st = compare("fat-tree 2:1 all-to-all", c, &a, 1, 1);
	ck_assert(st.sets == 0);
	unload(c);
}
END_TEST

/* A 4x4 torus. A ring over one row (a 4-cycle, the wrap-around link included) is one class. The row-major
 * ring over all 16 is not symmetric as routed: hop 15 -> 0 has two shortest paths and the ECMP hash takes
 * it column first (switch15 -> switch3 -> switch0), sharing switch3 -> switch0 with hop 3 -> 4, which went
 * row first; no rotation carries one route onto the other, so no class forms, and the results are the same. */
START_TEST(torus_4x4)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 16, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "  fabric: {kind: torus2d, dims: [4, 4], latency: 1 us}\n");
	job row = ring(HS_COLL_ALL_REDUCE, 4, 16 * HS_MiB);
	hs_net_sym_stat st = compare("torus 4x4, one row", c, &row, 1, 1);
	ck_assert_msg(st.sets == 1 && st.flows == 2 * 3, "torus row: %llu sets, %llu class flows",
		      (unsigned long long)st.sets, (unsigned long long)st.flows);
	job j = ring(HS_COLL_ALL_REDUCE, 16, 16 * HS_MiB);
	st = compare("torus 4x4", c, &j, 1, 1);
	ck_assert_msg(st.sets == 0, "torus 4x4: %llu sets", (unsigned long long)st.sets);
	/* both at once: the row's classes are broken by the full ring's flows, results still equal */
	job both[2] = {row, j};
	compare("torus row and full ring", c, both, 2, 1);
	unload(c);
}
END_TEST

/* 8 nodes x 8 GPUs, rail-optimised, 8 channels (one per rail): hops inside a node on the NVSwitch, one per
 * node across. Channel c's ring enters every node at GPU c (NIC c's), so the channels are alike up to the
 * rotation of every node's GPUs and NICs by one, which the fabric bears: with the ring's rotation by a node
 * (8 ranks) the 512 hops of a step are 8 classes, one flow each, 2(n - 1) x 8 class flows in all (unfolded it
 * would be 8 per channel, 64 a step). */
START_TEST(rails_channels)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			     "  fabric: {kind: rail-optimized, radix: 16, latency: 1 us}\n");
	job j = ring(HS_COLL_ALL_REDUCE, 64, 256 * HS_MiB);
	for (int ch = 1; ch <= 8; ch *= 8) {
		hs_net_sym_stat st = compare("rail-optimised", c, &j, 1, ch);
		ck_assert_msg(st.sets == 1 && st.broken == 0, "rail-optimised, %d channels: %llu sets, %llu broken", ch,
			      (unsigned long long)st.sets, (unsigned long long)st.broken);
		if (ch == 8)
			ck_assert_msg(st.flows == 2 * 63 * 8, "rail-optimised, 8 channels: %llu class flows (expected %d)",
				      (unsigned long long)st.flows, 2 * 63 * 8);
	}
	/* broken mid-way by a send between two of the ring's GPUs: the folded classes come apart into every
	 * channel's ranks, results still equal */
	job b[2] = {j, {HS_COLL_SENDRECV, HS_ALGO_RING, {3, 12}, -2, 4 * HS_MiB, 300}};
	hs_net_sym_stat st = compare("rail-optimised, 8 channels, broken", c, b, 2, 8);
	ck_assert_msg(st.sets == 1 && st.broken == 1, "rails broken: %llu sets, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken);
	unload(c);
}
END_TEST

/* The channels' ring orders (hs_coll_ring_channel_order): over whole nodes, channel c's ring visits each node's
 * GPUs from NIC c's GPU on (NCCL's search: NET c -> GPU c -> ... -> GPU c - 1 -> NET c), nodes in order; a ring
 * over part of each node, or over one node, keeps its order. With 4 NICs per 8 GPUs NIC c hangs off GPU 2c. */
START_TEST(channel_orders)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			     "    - {nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 4, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n");
	int rk[32], out[32];
	for (int i = 0; i < 32; i++)
		rk[i] = i;
	for (int rail = 0; rail < 8; rail++) {
		ck_assert_int_eq(hs_coll_ring_channel_order(c, rk, 16, rail, out), rail != 0);
		for (int i = 0; i < 16; i++)
			ck_assert_int_eq(out[i], i / 8 * 8 + (i % 8 + rail) % 8);
	}
	/* the second group: 4 NICs, NIC 3 on GPU 6; over all four nodes the first group's nodes start at GPU 3 */
	ck_assert_int_eq(hs_coll_ring_channel_order(c, rk + 16, 16, 3, out), 1);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(out[i], 16 + i / 8 * 8 + (i % 8 + 6) % 8);
	ck_assert_int_eq(hs_coll_ring_channel_order(c, rk, 32, 3, out), 1);
	ck_assert_int_eq(out[0], 3);
	ck_assert_int_eq(out[16], 22);
	/* NIC 5 is not on the second group's nodes: those keep their order */
	ck_assert_int_eq(hs_coll_ring_channel_order(c, rk, 32, 5, out), 1);
	ck_assert_int_eq(out[8], 13);
	ck_assert_int_eq(out[16], 16);
	/* one channel (rail -1), part of each node, one node, a node's GPUs out of order: unchanged */
	int half[8] = {0, 1, 2, 3, 8, 9, 10, 11}, odd[16];
	for (int i = 0; i < 16; i++)
		odd[i] = i;
	odd[0] = 1, odd[1] = 0;
	ck_assert_int_eq(hs_coll_ring_channel_order(c, rk, 16, -1, out), 0);
	ck_assert_int_eq(hs_coll_ring_channel_order(c, half, 8, 2, out), 0);
	ck_assert_int_eq(out[0], 0);
	ck_assert_int_eq(hs_coll_ring_channel_order(c, rk, 8, 2, out), 0);
	ck_assert_int_eq(hs_coll_ring_channel_order(c, odd, 16, 2, out), 0);
	ck_assert_int_eq(out[0], 1);
	unload(c);
}
END_TEST

/* Not symmetric: one group's NICs at half speed. The rotation that would carry a fast hop onto a slow one
 * keeps no bandwidth, so no class spans the two; results equal. */
START_TEST(slow_nics_split)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 6, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 200 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n");
	job j = ring(HS_COLL_ALL_REDUCE, 8, 16 * HS_MiB);
	hs_net_sym_stat st = compare("slow NICs", c, &j, 1, 1);
	ck_assert_msg(st.sets == 0, "slow NICs: %llu sets (a ring of 8 with 2 slow nodes has no rotation)",
		      (unsigned long long)st.sets);
	unload(c);
	/* 4 + 4: the slow half is a rotation by 4 away from itself, so rotating by 8 is the only one kept: none */
	c = load("cluster:\n"
		 "  groups:\n"
		 "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
		 "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
		 "       nic: {bandwidth: 200 Gb/s, per_node: 1, latency: 3 us}}\n"
		 "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n");
	st = compare("slow half", c, &j, 1, 1);
	ck_assert(st.sets == 0);
	unload(c);
}
END_TEST

/* An explicit graph: a switch per device, the switches in a one-way ring. With one slow ring link no rotation
 * keeps the bandwidths; with none slow the ring is one class. */
START_TEST(explicit_graph)
{
	const char *fmt = "cluster:\n"
			  "  groups:\n"
			  "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			  "  fabric:\n"
			  "    kind: explicit\n"
			  "    switches: [s0, s1, s2, s3]\n"
			  "    links:\n"
			  "      - {from: gpu0, to: s0, bandwidth: 100 GB/s}\n"
			  "      - {from: gpu1, to: s1, bandwidth: 100 GB/s}\n"
			  "      - {from: gpu2, to: s2, bandwidth: 100 GB/s}\n"
			  "      - {from: gpu3, to: s3, bandwidth: 100 GB/s}\n"
			  "      - {from: s0, to: s1, bandwidth: 10 GB/s, duplex: false}\n"
			  "      - {from: s1, to: s2, bandwidth: 10 GB/s, duplex: false}\n"
			  "      - {from: s2, to: s3, bandwidth: 10 GB/s, duplex: false}\n"
			  "      - {from: s3, to: s0, bandwidth: %s, duplex: false}\n";
	char y[1024];
	snprintf(y, sizeof y, fmt, "5 GB/s");
	hs_cluster *c = load(y);
	job j = ring(HS_COLL_ALL_REDUCE, 4, 8 * HS_MiB);
	ck_assert(compare("explicit, one slow link", c, &j, 1, 1).sets == 0);
	unload(c);
	snprintf(y, sizeof y, fmt, "10 GB/s");
	c = load(y);
	ck_assert(compare("explicit, uniform", c, &j, 1, 1).sets == 1);
	unload(c);
}
END_TEST

/* Other traffic enters the ring's links mid-way (a send between two of its nodes, 500 us in): the classes
 * break there, each class flow in flight is cut and carried on per member, and the ring goes on rank by rank:
 * the same times and bytes as per-flow all along. */
START_TEST(break_midway)
{
	hs_cluster *c = load(one_switch);
	job j[2] = {ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB)};
	j[1] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {5, 9}, -2, 4 * HS_MiB, 500};
	/* with hops on the ring goes on with its hops timed, the two the send enters as flows */
	hs_net_sym_stat st = compare("break mid-way, hops", c, j, 2, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 1 && st.holds == 64 && st.holds_broken == 2,
		      "break, hops: %llu sets, %llu broken, %llu hops held, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken, (unsigned long long)st.holds, (unsigned long long)st.holds_broken);
	hops_on = 0;
	st = compare("break mid-way", c, j, 2, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 1, "break: %llu sets, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken);
	/* the flows cut by the break were timed alone: what they had left comes from their start and rate */
	ck_assert_msg(st.alone > 0 && st.alone == st.flows, "break: %llu of %llu class flows timed alone",
		      (unsigned long long)st.alone, (unsigned long long)st.flows);
	/* the same send between a ring step's arrivals (a step is 1.34 ms / 126 long) and at the very start */
	for (int k = 0; k < 3; k++) {
		static const double at[] = {0, 10.4, 1000.7};
		j[1].t0_us = at[k];
		for (hops_on = 0; hops_on < 2; hops_on++) {
			st = compare("break at other times", c, j, 2, 1);
			ck_assert(st.broken == 1);
		}
	}
	hops_on = 1;
	unload(c);
}
END_TEST

/* A ring whose classes are all alone times them itself (netcoll_ring.c, `ana`) and replays its timeline at a
 * break: sends of random sizes between random ranks at random times into a ring of random size, on one switch
 * and on a 2-tier fat-tree with dmodk (chunked, k = 4 slices a step, too), against the per-flow run. */
START_TEST(break_random)
{
	static const char *fat = "cluster:\n"
				 "  groups:\n"
				 "    - {nodes: 16, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
				 "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2, radix: 8, latency: 1 us, ecmp: dmodk}\n";
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int midway = 0, hopped = 0;
	for (int w = 0; w < 4; w++) {
		hops_on = w >= 2;
		hs_cluster *c = load(w % 2 ? fat : one_switch);
		for (int k = 0; k < 12; k++) {
			int n = w % 2 ? 16 : 8 << (k % 3);
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			double S = (double)(1 + (x >> 40) % 64) * HS_MiB;
			job j[3] = {ring(k % 3 == 2 ? HS_COLL_ALL_GATHER : HS_COLL_ALL_REDUCE, n, S)};
			/* the ring of S over n ranks takes about 2 S / 50 GB/s: breaks anywhere in it, and after */
			double span_us = 2 * S / 50e3;
			for (int b = 1; b < 3; b++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				int a = (int)((x >> 33) % (uint64_t)n), d = (int)((x >> 13) % (uint64_t)(n - 1));
				d = d >= a ? d + 1 : d;
				j[b] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {a, d}, -2, (double)(1 + (x >> 50) % 8) * HS_MiB,
					     (double)((x >> 20) % 1000) / 1000.0 * 1.2 * span_us};
			}
			char what[80];
			snprintf(what, sizeof what, "random break %d.%d (%d ranks, %.0f MiB)", w, k, n, S / HS_MiB);
			hs_net_sym_stat st = compare(what, c, j, 3, 1);
			ck_assert_msg(st.sets == 1, "%s: %llu sets", what, (unsigned long long)st.sets);
			midway += st.broken && st.alone > 0; /* broken after some slices ran as the ring timed them */
			hopped += st.broken && st.holds > 0; /* on with its hops timed */
		}
		unload(c);
	}
	hops_on = 1;
	ck_assert_msg(midway >= 12 && hopped >= 12, "%d of 24 rings broken mid-way while timing their classes, %d of 24 on as hops",
		      midway, hopped);
}
END_TEST

/* Rings without classes (sim/net/netcoll_ring_hops.c): on a 2-tier fat-tree under the default hashed ECMP
 * no rotation carries a ring's routes onto each other, and two lanes' rings (the GPUs of one local index, each
 * crossing by its own NIC) share a spine port wherever the hash sends two crossings there. The hops alone on
 * their links are timed by the ring, the others are flows, and a send that enters a timed hop's links breaks
 * it: against the per-flow run, on random ring sizes and sizes, with the rings started apart, with sends at
 * random times, with 4 slices a step, with two channels, and with a timeline (the hops slice by slice, not as
 * runs). */
START_TEST(ring_hops)
{
	static const char *fat = "cluster:\n"
				 "  groups:\n"
				 "    - {nodes: 16, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
				 "       nic: {bandwidth: 400 Gb/s, per_node: 2, latency: 3 us}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2, radix: 8, latency: 1 us}\n";
	hs_cluster *c = load(fat);
	hs_net_sym_stat tot = {0};
	uint64_t reformed = 0;
	/* with the hops off, the rings whose classes break go rank by rank and form again: two channels with
	 * classes of their own once lost bytes there (a member that arrived before the last of its re-formed
	 * class stayed busy when the set broke again, and its channel stalled) */
	for (hops_on = 1; hops_on >= 0; hops_on--) {
		uint64_t x = 0x2545f4914f6cdd1dULL;
		for (int k = 0; k < 16; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int n = 4 + (int)((x >> 35) % 13); /* nodes in each lane's ring */
			double S = (double)(1 + (x >> 40) % 32) * HS_MiB;
			enum hs_coll_op op = k % 3 == 2 ? HS_COLL_REDUCE_SCATTER : HS_COLL_ALL_REDUCE;
			job j[4] = {ring(op, n, S), ring(op, n, S)};
			for (int i = 0; i < n; i++)
				j[0].ranks[i] = 2 * i, j[1].ranks[i] = 2 * i + 1;
			double span_us = 2 * S / 50e3;
			j[1].t0_us = k % 4 == 1 ? 0.3 * span_us : 0;
			int nj = k % 4 == 3 ? 2 : 4;
			for (int b = 2; b < nj; b++) { /* sends across the fat-tree, into the rings' NICs and spine ports */
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				int a = (int)((x >> 33) % (uint64_t)(2 * n)), d = (int)((x >> 13) % (uint64_t)(2 * n - 1));
				d = d >= a ? d + 1 : d;
				j[b] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {a, d}, -2, (double)(1 + (x >> 50) % 8) * HS_MiB,
					     (double)((x >> 20) % 1000) / 1000.0 * 1.2 * span_us};
			}
			for (int v = 0; v < 4; v++) { /* plain, 4 slices a step, two channels, with a timeline */
				char what[96];
				snprintf(what, sizeof what, "ring hops %d.%d (%d nodes a lane, %.0f MiB, hops %s)", k, v, n,
					 S / HS_MiB, hops_on ? "on" : "off");
				chunk = v == 1 ? S / n / 4 : 0;
				timeline = v == 3;
				hs_net_sym_stat st = compare(what, c, j, nj, v == 2 ? 2 : 1);
				chunk = 0, timeline = 0;
				ck_assert(hops_on || st.holds == 0);
				tot.holds += st.holds, tot.holds_broken += st.holds_broken;
				reformed += st.reformed;
			}
		}
	}
	hops_on = 1;
	ck_assert_msg(reformed > 5, "%llu re-forms with the hops off", (unsigned long long)reformed);
	/* the hops are timed, and breaks happen (the lanes' shared ports, the sends) */
	ck_assert_msg(tot.holds > 500 && tot.holds_broken > 20, "%llu hops timed, %llu broken",
		      (unsigned long long)tot.holds, (unsigned long long)tot.holds_broken);
	printf("ring hops: %llu hops timed, %llu broken; with the hops off, %llu re-forms\n", (unsigned long long)tot.holds,
	       (unsigned long long)tot.holds_broken, (unsigned long long)reformed);
	unload(c);
}
END_TEST

/* Bundles (sim/net/netcoll_ring_hops.c): a ring over nodes of 4 GPUs on an NVSwitch, one channel per NIC, on
 * a 2-tier fat-tree under hashed ECMP. Each channel enters a node at its NIC's GPU, so 3 of the 4 channels cross
 * each pair of neighbouring GPUs' scale-up ports and the fourth reaches its rail's NIC through them: those hops
 * share links with each other and with nothing else, are held together and timed by the ring, each slice at
 * the rate max-min gives it beside the bundle's others in flight. Against the per-flow run on random ring
 * sizes and sizes, alone, with sends between GPUs of a node and across the fabric at random times (which break
 * bundles mid-way; a bundle is held again once its links are free), with 4 slices a step and with a timeline. */
START_TEST(ring_bundles)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 8, gpus_per_node: 4, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 449 GB/s, latency: 2 us},\n"
			     "       nic: {bandwidth: 397 Gb/s, per_node: 4, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 2, radix: 8, latency: 1 us}\n");
	hs_net_sym_stat tot = {0};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int k = 0; k < 12; k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int nodes = 2 + (int)((x >> 35) % 7), n = 4 * nodes;
		/* sizes and bandwidths off round numbers: with 1 MiB slices at 25 GB/s a transfer takes a whole number
		 * of picoseconds exactly, and the last bits of the rate, which the per-flow solver reaches by other
		 * sums, decide which way its finish rounds; down a chain of transfers those picoseconds add up (13 ps
		 * over a 225 us send seen on round figures) */
		double S = (double)(1 + (x >> 40) % 24) * HS_MiB + 4099;
		enum hs_coll_op op = k % 3 == 2 ? HS_COLL_REDUCE_SCATTER : HS_COLL_ALL_REDUCE;
		job j[4] = {ring(op, n, S)};
		double span_us = 2 * S / 4 / 50e3;
		int nj = k % 4 == 0 ? 1 : 4;
		for (int b = 1; b < nj; b++) { /* a send inside a node (its ports) or across the fabric */
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int a = (int)((x >> 33) % (uint64_t)n), d;
			if (b == 1)
				d = a - a % 4 + (a % 4 + 1 + (int)((x >> 13) % 3)) % 4;
			else
				d = (a + 4 * (1 + (int)((x >> 13) % (uint64_t)(nodes - 1)))) % n;
			j[b] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {a, d}, -2, (double)(1 + (x >> 50) % 8) * HS_MiB,
				     (double)((x >> 20) % 1000) / 1000.0 * 1.2 * span_us};
		}
		for (int v = 0; v < 3; v++) { /* plain, 4 slices a step, with a timeline */
			char what[96];
			snprintf(what, sizeof what, "ring bundles %d.%d (%d nodes, %.0f MiB, %d jobs)", k, v, nodes,
				 S / HS_MiB, nj);
			chunk = v == 1 ? S / n / 4 / 4 : 0;
			timeline = v == 2;
			hs_net_sym_stat st = compare(what, c, j, nj, 4);
			chunk = 0, timeline = 0;
			ck_assert_msg(st.bundled > 0, "%s: no hop bundled", what);
			ck_assert_msg(nj > 1 || st.bundles_broken == 0, "%s: a bundle broken with nothing else running",
				      what);
			tot.bundled += st.bundled, tot.bundles_broken += st.bundles_broken;
			tot.bundles_reformed += st.bundles_reformed;
		}
	}
	ck_assert_msg(tot.bundles_broken > 5 && tot.bundles_reformed > 5, "%llu bundles broken, %llu held again",
		      (unsigned long long)tot.bundles_broken, (unsigned long long)tot.bundles_reformed);
	printf("ring bundles: %llu hops bundled, %llu bundles broken, %llu held again\n", (unsigned long long)tot.bundled,
	       (unsigned long long)tot.bundles_broken, (unsigned long long)tot.bundles_reformed);
	unload(c);
}
END_TEST

/* Direct collectives without classes timed alone on their links (sim/net/netcoll_solo.c): a 2-tier fat-tree
 * under the default hashed ECMP, where the pairs' spine paths collide unevenly and no class forms. Random
 * cases: an all-to-all, all-gather or reduce-scatter over 4 to 16 ranks, the same collective again on the same
 * group (after the first has ended: its timeline is reused; or while it runs: its hold is refused, and its
 * flows break the first), and sends across the fabric at random times, which break runs mid-way. Every
 * completion, every link's bytes and the injected total equal the per-flow run's (compare: 1e-9). */
START_TEST(solo)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 16, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 2, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 2, radix: 8, latency: 1 us}\n");
	hs_net_sym_stat tot = {0};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	enum hs_coll_op ops[] = {HS_COLL_ALL_TO_ALL, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
	for (int k = 0; k < 24; k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int n = 4 + (int)((x >> 35) % 13), stride = k % 2 ? 2 : 1;
		double S = (double)(1 + (x >> 40) % 32) * HS_MiB, span_us = S / 50e3;
		job j[4] = {ring(ops[k % 3], n, S)};
		for (int i = 0; i < n; i++)
			j[0].ranks[i] = i * stride;
		j[0].algo = HS_ALGO_DIRECT;
		j[1] = j[0];
		j[1].t0_us = k % 4 == 1 ? 0.3 * span_us : 4 * span_us + 100;
		int nj = k % 4 == 3 ? 2 : 4;
		for (int b = 2; b < nj; b++) { /* sends into the group's NICs and spine ports */
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int a = (int)((x >> 33) % 32), d = (int)((x >> 13) % 31);
			d = d >= a ? d + 1 : d;
			j[b] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {a, d}, -2, (double)(1 + (x >> 50) % 8) * HS_MiB,
				     (b == 3 ? j[1].t0_us : 0) + (double)((x >> 20) % 1000) / 1000.0 * 1.2 * span_us};
		}
		char what[96];
		snprintf(what, sizeof what, "solo %d (%s, %d ranks, stride %d, %.0f MiB)", k, hs_coll_op_name(ops[k % 3]), n,
			 stride, S / HS_MiB);
		hs_net_sym_stat st = compare(what, c, j, nj, 1);
		tot.solo += st.solo, tot.solo_broken += st.solo_broken, tot.sets += st.sets;
	}
	/* timed alone, and broken too (by the sends, by the second run) */
	ck_assert_msg(tot.solo >= 30 && tot.solo_broken >= 12, "%llu collectives timed alone, %llu broken (%llu sets)",
		      (unsigned long long)tot.solo, (unsigned long long)tot.solo_broken, (unsigned long long)tot.sets);
	printf("solo: %llu direct collectives timed alone, %llu broken; %llu class sets\n", (unsigned long long)tot.solo,
	       (unsigned long long)tot.solo_broken, (unsigned long long)tot.sets);
	unload(c);
}
END_TEST

/* Classes that form again (sim/net/netcoll_ring.c, reform): once the foreign send is gone and the ring's
 * ranks are back in step (a ring step waits on the predecessor's piece, so a delay spreads round the ring
 * and every rank ends up shifted by it alike), the pump finds every rank in its representative's state, the
 * members in flight alike, and the links free, and the ring goes on as classes again: the same times and
 * bytes as per-flow all along, with the re-form counted and fewer flows than staying broken would take. */
START_TEST(reform_after_break)
{
	hops_on = 0; /* the re-form, not the hops' path (which needs none) */
	hs_cluster *c = load(one_switch);
	job j[3] = {ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB)};
	j[1] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {5, 9}, -2, 4 * HS_MiB, 500};
	hs_net_sym_stat st = compare("re-form, one switch", c, j, 2, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 1 && st.reformed == 1, "re-form: %llu sets, %llu broken, %llu reformed",
		      (unsigned long long)st.sets, (unsigned long long)st.broken, (unsigned long long)st.reformed);
	/* a 16-rank ring broken twice (50 us and 1.3 ms in), back in step and re-formed after each */
	job t[3] = {ring(HS_COLL_ALL_REDUCE, 16, 64 * HS_MiB)};
	t[1] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {5, 9}, -2, 4 * HS_MiB, 50};
	t[2] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {12, 13}, -2, 4 * HS_MiB, 1300};
	st = compare("re-form twice, one switch", c, t, 3, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 2 && st.reformed == 2, "re-form twice: %llu sets, %llu broken, %llu reformed",
		      (unsigned long long)st.sets, (unsigned long long)st.broken, (unsigned long long)st.reformed);
	/* the second send before the ranks are back in step: broken once, re-formed once, later */
	t[2].t0_us = 400;
	st = compare("broken again before the re-form", c, t, 3, 1);
	ck_assert_msg(st.broken == 1 && st.reformed == 1, "broken again early: %llu broken, %llu reformed",
		      (unsigned long long)st.broken, (unsigned long long)st.reformed);
	/* a chunked ring (k = 4 slices a step) broken mid-way: results equal whether or not it re-forms */
	job k[2] = {ring(HS_COLL_ALL_REDUCE, 16, 64 * HS_MiB), t[1]};
	outcome o[2];
	for (int sym = 0; sym < 2; sym++) {
		hs_err err;
		hs_err_clear(&err);
		cur = hs_engine_create();
		curnet = hs_net_create(c, "flow", cur, &err);
		hs_net_set_symmetry(curnet, sym);
		hs_net_set_ring_hops(curnet, hops_on);
		hs_net_set_chunk(curnet, 1 * HS_MiB);
		curjobs = k;
		for (int q = 0; q < 2; q++) {
			done_at[q] = -1;
			hs_engine_at(cur, hs_time_from_s(k[q].t0_us * 1e-6), start_job, NULL, (uint64_t)q);
		}
		hs_engine_run(cur, HS_TIME_MAX);
		o[sym].t[0] = done_at[0], o[sym].t[1] = done_at[1];
		o[sym].st = hs_net_sym_stats(curnet);
		hs_net_free(curnet);
		hs_engine_destroy(cur);
	}
	for (int q = 0; q < 2; q++)
		ck_assert_msg(o[0].t[q] > 0 && fabs(o[0].t[q] - o[1].t[q]) <= 1e-9 * o[0].t[q], "chunked, broken: job %d %.12g vs %.12g",
			      q, o[1].t[q], o[0].t[q]);
	ck_assert(o[1].st.broken == 1);
	unload(c);
	/* 8 folded channels, one of them delayed by a send on its rail: that channel's ring ends up shifted
	 * against the other seven, so the folded classes (every channel alike) do not form again and the ring
	 * stays rank by rank; results equal */
	c = load("cluster:\n"
		 "  groups:\n"
		 "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
		 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
		 "  fabric: {kind: rail-optimized, radix: 16, latency: 1 us}\n");
	job b[2] = {ring(HS_COLL_ALL_REDUCE, 64, 256 * HS_MiB), {HS_COLL_SENDRECV, HS_ALGO_RING, {3, 12}, -2, 4 * HS_MiB, 300}};
	st = compare("rail-optimised, 8 channels, broken", c, b, 2, 8);
	ck_assert_msg(st.broken == 1 && st.reformed == 0, "rails: %llu broken, %llu reformed", (unsigned long long)st.broken,
		      (unsigned long long)st.reformed);
	hops_on = 1;
	unload(c);
}
END_TEST

/* An all-to-all over the GPUs of a data-parallel ring that is running (the EP step's pattern, bench/bench_ep.c):
 * the ring's live set holds the pairs' NIC links, so the all-to-all alone would be refused and its pairs would
 * break the ring; instead its classes are found under the ring's generators for both together, and it opens
 * beside the ring in its group (sim/net/netcoll_direct.c joint_classes). Results equal per-flow; a send that
 * enters their links breaks both; an all-to-all that outlasts the ring keeps its classes. */
START_TEST(joint_ring_all_to_all)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us, ecmp: dmodk}\n");
	job j[3] = {ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB), ring(HS_COLL_ALL_TO_ALL, 64, 32 * HS_MiB)};
	j[1].algo = HS_ALGO_DIRECT;
	j[1].t0_us = 100;
	hs_net_sym_stat st = compare("all-to-all beside a ring", c, j, 2, 8);
	/* the all-to-all's own open is refused (counted), then it opens beside the ring */
	ck_assert_msg(st.sets == 1 && st.joint == 1 && st.broken == 0 && st.refused == 1,
		      "beside a ring: %llu sets, %llu joint, %llu broken, %llu refused", (unsigned long long)st.sets,
		      (unsigned long long)st.joint, (unsigned long long)st.broken, (unsigned long long)st.refused);
	/* three all-to-alls in turn beside it (the memo's joint entry reused), the last outlasting the ring */
	job k[4] = {j[0], j[1], j[1], ring(HS_COLL_ALL_TO_ALL, 64, 512 * HS_MiB)};
	k[2].t0_us = 400;
	k[3].algo = HS_ALGO_DIRECT;
	k[3].t0_us = 900;
	st = compare("all-to-alls beside a ring", c, k, 4, 8);
	ck_assert_msg(st.joint == 3 && st.broken == 0, "three beside a ring: %llu joint, %llu broken",
		      (unsigned long long)st.joint, (unsigned long long)st.broken);
	/* a send between two of their GPUs while both run: the group breaks, both sets */
	j[2] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {3, 12}, -2, 4 * HS_MiB, 150};
	st = compare("all-to-all beside a ring, broken", c, j, 3, 8);
	ck_assert_msg(st.joint == 1 && st.broken == 2, "broken beside a ring: %llu joint, %llu broken",
		      (unsigned long long)st.joint, (unsigned long long)st.broken);
	unload(c);
}
END_TEST

/* Two rings at once: on disjoint nodes each has its classes; on shared nodes the second finds the links
 * taken (refused) and its flows break the first. */
START_TEST(two_rings)
{
	hs_cluster *c = load(one_switch);
	job j[2] = {ring(HS_COLL_ALL_REDUCE, 32, 32 * HS_MiB), ring(HS_COLL_ALL_REDUCE, 32, 32 * HS_MiB)};
	for (int i = 0; i < 32; i++)
		j[1].ranks[i] = 32 + i;
	j[1].t0_us = 100;
	hs_net_sym_stat st = compare("disjoint rings", c, j, 2, 1);
	ck_assert_msg(st.sets == 2 && st.broken == 0, "disjoint: %llu sets, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken);
	for (int i = 0; i < 32; i++)
		j[1].ranks[i] = 16 + i;
	st = compare("overlapping rings", c, j, 2, 1);
	ck_assert_msg(st.sets == 1 && st.refused == 1 && st.broken == 1, "overlapping: %llu sets, %llu refused, %llu broken",
		      (unsigned long long)st.sets, (unsigned long long)st.refused, (unsigned long long)st.broken);
	unload(c);
}
END_TEST

/* Pipelined slices (chunk): several slices per step, still one class flow per slice. */
START_TEST(chunked)
{
	hs_cluster *c = load(one_switch);
	job j = ring(HS_COLL_ALL_REDUCE, 16, 64 * HS_MiB);
	for (int s = 0; s < 2; s++) {
		outcome o[2];
		for (int sym = 0; sym < 2; sym++) {
			hs_err err;
			hs_err_clear(&err);
			cur = hs_engine_create();
			curnet = hs_net_create(c, "flow", cur, &err);
			hs_net_set_symmetry(curnet, sym);
			hs_net_set_chunk(curnet, s ? 1 * HS_MiB : 0);
			done_at[0] = -1;
			ck_assert(hs_net_collective(curnet, j.op, j.algo, j.ranks, 16, j.bytes, rec, NULL, 0, &err) == 0);
			hs_engine_run(cur, HS_TIME_MAX);
			o[sym].t[0] = done_at[0];
			o[sym].st = hs_net_sym_stats(curnet);
			hs_net_free(curnet);
			hs_engine_destroy(cur);
		}
		ck_assert_msg(o[0].t[0] > 0 && fabs(o[0].t[0] - o[1].t[0]) <= 1e-9 * o[0].t[0], "chunk: %.12g vs %.12g",
			      o[1].t[0], o[0].t[0]);
		ck_assert(o[1].st.sets == 1);
	}
	unload(c);
}
END_TEST

/* Direct all-to-all, all-gather and reduce-scatter (sim/net/netcoll_direct.c): one phase, so any rank
 * permutation the fabric bears makes classes. On one switch the rotation alone gives n - 1 classes (by j - i);
 * the rotations inside blocks and of blocks join some of those (6 classes for 64 nodes), and all 4,032 pairs
 * would be one class under the full symmetric group, which no candidate set here generates. */
START_TEST(direct_one_switch)
{
	hs_cluster *c = load(one_switch);
	enum hs_coll_op ops[] = {HS_COLL_ALL_TO_ALL, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
	for (int k = 0; k < 3; k++) {
		job j = ring(ops[k], 64, 64 * HS_MiB);
		j.algo = HS_ALGO_DIRECT;
		hs_net_sym_stat st = compare("direct, one switch", c, &j, 1, 1);
		ck_assert_msg(st.sets == 1 && st.broken == 0 && st.flows >= 1 && st.flows <= 63,
			      "direct, one switch: %llu sets, %llu broken, %llu class flows (expected 1, 0, 1..63)",
			      (unsigned long long)st.sets, (unsigned long long)st.broken, (unsigned long long)st.flows);
	}
	/* the two-phase all-reduce runs every pair */
	job a = ring(HS_COLL_ALL_REDUCE, 16, 16 * HS_MiB);
	a.algo = HS_ALGO_DIRECT;
	ck_assert(compare("direct all-reduce", c, &a, 1, 1).sets == 0);
	unload(c);
}
END_TEST

/* 8 nodes x 8 GPUs, rail-optimised: rotating the local ranks (rails) and the nodes are both borne, so an
 * all-to-all of 64 ranks (4,032 pairs) runs as at most 63 classes of 64 (31 with the block rotations). With a subset of the nodes' GPUs (4 of 8 on
 * each), fewer rotations hold, but whatever forms gives the per-flow results. */
START_TEST(direct_rails)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			     "  fabric: {kind: rail-optimized, radix: 16, latency: 1 us}\n");
	job j = ring(HS_COLL_ALL_TO_ALL, 64, 64 * HS_MiB);
	j.algo = HS_ALGO_DIRECT;
	hs_net_sym_stat st = compare("direct, rail-optimised", c, &j, 1, 1);
	ck_assert_msg(st.sets == 1 && st.flows <= 63, "direct, rails: %llu sets, %llu class flows (expected 1, <= 63)",
		      (unsigned long long)st.sets, (unsigned long long)st.flows);
	job h = {HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, {0}, 32, 32 * HS_MiB, 0};
	for (int i = 0; i < 32; i++)
		h.ranks[i] = i / 4 * 8 + i % 4;
	compare("direct, half of each node", c, &h, 1, 1);
	unload(c);
}
END_TEST

/* Not symmetric (a slower group of NICs) and broken mid-way (a send entering the classes' links): results
 * are the per-flow ones; the slow case forms classes only among equal speeds. */
START_TEST(direct_split_and_break)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 6, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 200 Gb/s, per_node: 1, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n");
	job j = ring(HS_COLL_ALL_TO_ALL, 8, 16 * HS_MiB);
	j.algo = HS_ALGO_DIRECT;
	hs_net_sym_stat st = compare("direct, slow NICs", c, &j, 1, 1);
	/* the nodes rotated in blocks of 2 ({0, 1} ... {6, 7}: fast with fast, slow with slow) is the one rotation
	 * borne: 28 classes of 2 pairs, none mixing speeds (the results above are the per-flow ones) */
	ck_assert_msg(st.sets == 1 && st.flows == 28, "direct, slow NICs: %llu sets, %llu class flows (expected 1, 28)",
		      (unsigned long long)st.sets, (unsigned long long)st.flows);
	unload(c);
	c = load(one_switch);
	job b[2] = {ring(HS_COLL_ALL_TO_ALL, 64, 64 * HS_MiB)};
	b[0].algo = HS_ALGO_DIRECT;
	b[1] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {5, 9}, -2, 4 * HS_MiB, 300};
	st = compare("direct, broken mid-way", c, b, 2, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 1, "direct break: %llu sets, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken);
	unload(c);
}
END_TEST

/* D-mod-k ECMP (fabric `ecmp: dmodk`): the uplink a route takes is a function of the destination's NIC alone,
 * so rotating the nodes inside a leaf permutes the spines the same way for every pair, and the all-to-all on a
 * 2-tier fat-tree forms classes where the hash formed none; the ring too. Results equal the per-flow ones on
 * the same routes (dmodk routes, not the hash's: another modelling choice, compared with itself). */
START_TEST(fat_tree_dmodk)
{
	const char *fmt = "cluster:\n"
			  "  groups:\n"
			  "    - {nodes: 16, gpus_per_node: %d, gpu: H100-SXM-80GB,\n"
			  "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
			  "       nic: {bandwidth: 400 Gb/s, per_node: %d, latency: 3 us}}\n"
			  "  fabric: {kind: fat-tree, tiers: 2, radix: %d, oversubscription: %d, latency: 1 us, ecmp: dmodk}\n";
	static const int shape[][4] = {{1, 1, 6, 2}, {2, 2, 16, 1}};
	for (int k = 0; k < 2; k++) {
		char y[1024];
		snprintf(y, sizeof y, fmt, shape[k][0], shape[k][1], shape[k][2], shape[k][3]);
		hs_cluster *c = load(y);
		int n = 16 * shape[k][0];
		job a = ring(HS_COLL_ALL_TO_ALL, n, 16 * HS_MiB);
		a.algo = HS_ALGO_DIRECT;
		hs_net_sym_stat st = compare("fat-tree dmodk all-to-all", c, &a, 1, 1);
		ck_assert_msg(st.sets == 1 && st.flows > 0 && st.flows < (uint64_t)(n * (n - 1)) / 4,
			      "fat-tree dmodk all-to-all (%d GPUs per node): %llu sets, %llu class flows of %d pairs",
			      shape[k][0], (unsigned long long)st.sets, (unsigned long long)st.flows, n * (n - 1));
		/* an all-to-all's pairs share every NIC: no class is alone, all go to the solver */
		ck_assert_msg(st.alone == 0, "fat-tree dmodk all-to-all: %llu of %llu class flows timed alone",
			      (unsigned long long)st.alone, (unsigned long long)st.flows);
		job j = ring(HS_COLL_ALL_REDUCE, n, 16 * HS_MiB);
		compare("fat-tree dmodk ring", c, &j, 1, 1);
		unload(c);
	}
	/* the EP step's data-parallel ring (bench/bench_ep.c): 64 GPUs on 8 whole nodes, a channel per NIC, on a
	 * 2-tier fat-tree with dmodk. Whether the channels fold is the fabric's to say (a leaf's NICs must rotate
	 * onto each other's spines); results equal either way, and there are no more class flows than the
	 * unfolded 2(n - 1) x 8 per channel */
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			     "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			     "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us, ecmp: dmodk}\n");
	job j = ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB);
	hs_net_sym_stat st = compare("fat-tree dmodk ring, 8 channels", c, &j, 1, 8);
	ck_assert_msg(st.sets == 1 && st.flows > 0 && st.flows <= 2 * 63 * 64,
		      "fat-tree dmodk ring, 8 channels: %llu sets, %llu class flows", (unsigned long long)st.sets,
		      (unsigned long long)st.flows);
	fprintf(stderr, "fat-tree dmodk ring, 8 channels: %llu class flows\n", (unsigned long long)st.flows);
	unload(c);
}
END_TEST

/* Halving-doubling (sim/net/netcoll_hd.c): invariant under i -> i xor m. On one switch every bit's translation
 * is borne, so each step is one flow (2 log2 n for an all-reduce); rail-optimised 8 x 8 and a 2-tier fat-tree
 * with `ecmp: dmodk` too; broken mid-way by a send; a size that is not a power of two folds in and runs every
 * transfer. */
START_TEST(hd_classes)
{
	hs_cluster *c = load(one_switch);
	enum hs_coll_op ops[] = {HS_COLL_ALL_REDUCE, HS_COLL_ALL_GATHER, HS_COLL_REDUCE_SCATTER};
	for (int k = 0; k < 3; k++) {
		job j = ring(ops[k], 64, 64 * HS_MiB);
		j.algo = HS_ALGO_HALVING_DOUBLING;
		hs_net_sym_stat st = compare("hd, one switch", c, &j, 1, 1);
		uint64_t steps = ops[k] == HS_COLL_ALL_REDUCE ? 12 : 6;
		ck_assert_msg(st.sets == 1 && st.broken == 0 && st.flows == steps,
			      "hd, one switch: %llu sets, %llu broken, %llu class flows (expected 1, 0, %llu)",
			      (unsigned long long)st.sets, (unsigned long long)st.broken, (unsigned long long)st.flows,
			      (unsigned long long)steps);
	}
	job b[2] = {ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB)};
	b[0].algo = HS_ALGO_HALVING_DOUBLING;
	b[1] = (job){HS_COLL_SENDRECV, HS_ALGO_RING, {5, 9}, -2, 4 * HS_MiB, 400};
	hs_net_sym_stat st = compare("hd, broken mid-way", c, b, 2, 1);
	ck_assert_msg(st.sets == 1 && st.broken == 1, "hd break: %llu sets, %llu broken", (unsigned long long)st.sets,
		      (unsigned long long)st.broken);
	job f = ring(HS_COLL_ALL_REDUCE, 12, 12 * HS_MiB);
	f.algo = HS_ALGO_HALVING_DOUBLING;
	ck_assert(compare("hd, 12 ranks", c, &f, 1, 1).sets == 0);
	unload(c);
	c = load("cluster:\n"
		 "  groups:\n"
		 "    - {nodes: 8, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
		 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
		 "  fabric: {kind: fat-tree, tiers: 2, radix: 32, latency: 1 us, ecmp: dmodk}\n");
	job h = ring(HS_COLL_ALL_REDUCE, 64, 64 * HS_MiB);
	h.algo = HS_ALGO_HALVING_DOUBLING;
	st = compare("hd, fat-tree dmodk", c, &h, 1, 1);
	ck_assert_msg(st.sets == 1 && st.flows < 64 * 12, "hd, fat-tree dmodk: %llu sets, %llu class flows",
		      (unsigned long long)st.sets, (unsigned long long)st.flows);
	unload(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("netsym");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, one_switch_one_class);
	tcase_add_test(t, fat_tree_2to1);
	tcase_add_test(t, torus_4x4);
	tcase_add_test(t, rails_channels);
	tcase_add_test(t, channel_orders);
	tcase_add_test(t, slow_nics_split);
	tcase_add_test(t, explicit_graph);
	tcase_add_test(t, break_midway);
	tcase_add_test(t, reform_after_break);
	tcase_add_test(t, joint_ring_all_to_all);
	tcase_add_test(t, two_rings);
	tcase_add_test(t, chunked);
	tcase_add_test(t, direct_one_switch);
	tcase_add_test(t, direct_rails);
	tcase_add_test(t, direct_split_and_break);
	tcase_add_test(t, fat_tree_dmodk);
	tcase_add_test(t, break_random);
	tcase_add_test(t, ring_hops);
	tcase_add_test(t, ring_bundles);
	tcase_add_test(t, solo);
	tcase_add_test(t, hd_classes);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
