/* The flow fidelity's plan for a collective (sim/coll/coll_flow.h), the one rule of `hetsim coll --fidelity
 * flow` and of the executor's network path:
 * - inside one scale-up domain: one channel, whatever the group;
 * - a group of whole nodes across nodes: a channel per NIC of the node, channel c on NIC c (no rail list);
 * - some devices of each node: a channel per NIC those devices hang off, on those NICs; one device per node:
 *   one channel (the sender's own NIC); devices sharing a NIC (4 NICs for 8 GPUs): that NIC once;
 * - a heterogeneous group of whole nodes: the most NICs per node of its groups;
 * - AUTO resolves to NCCL's tuner choice (hs_coll_auto_algo), an explicit algorithm stays, one the operation
 *   lacks becomes its default; a bad group is refused. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_flow.h"
#include "topology/cluster.h"

static hs_ydoc *doc;

static hs_cluster *mk(const char *text)
{
	hs_err err = {0};
	doc = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

static void done(hs_cluster *c)
{
	hs_cluster_free(c);
	hs_yaml_free(doc);
	doc = NULL;
}

static const char *four_nodes = "cluster:\n"
				"  groups:\n"
				"    - {name: a, nodes: 4, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
				"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
				"       nic: {bandwidth: 400 Gb/s, per_node: %d, latency: 3 us}}\n"
				"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n";

static hs_cluster *mk_nics(int nics)
{
	static char buf[1024];
	snprintf(buf, sizeof buf, four_nodes, nics);
	return mk(buf);
}

static hs_coll_flow_plan plan(hs_cluster *c, enum hs_coll_op op, enum hs_coll_algo a, const int *r, int n)
{
	hs_coll_flow_plan p;
	ck_assert_int_eq(hs_coll_flow_plan_of(c, op, a, HS_PROTO_AUTO, r, n, 64.0 * 1024 * 1024, &p), 0);
	ck_assert(p.channels >= 1 && p.channels <= HS_COLL_FLOW_MAX_CHANNELS);
	return p;
}

START_TEST(layouts)
{
	hs_cluster *c = mk_nics(8);
	int r[32];
	for (int i = 0; i < 32; i++)
		r[i] = i;
	/* one node: one channel */
	hs_coll_flow_plan p = plan(c, HS_COLL_ALL_GATHER, HS_ALGO_RING, r, 8);
	ck_assert_int_eq(p.channels, 1);
	ck_assert_int_eq(p.nrails, 0);
	/* four whole nodes: a channel per NIC, channel c on NIC c */
	p = plan(c, HS_COLL_ALL_GATHER, HS_ALGO_RING, r, 32);
	ck_assert_int_eq(p.channels, 8);
	ck_assert_int_eq(p.nrails, 0);
	/* devices 2 and 5 of every node: their two NICs */
	int two[8];
	for (int k = 0; k < 4; k++)
		two[2 * k] = 8 * k + 2, two[2 * k + 1] = 8 * k + 5;
	p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, two, 8);
	ck_assert_int_eq(p.channels, 2);
	ck_assert_int_eq(p.nrails, 2);
	ck_assert_int_eq(p.rails[0], 2);
	ck_assert_int_eq(p.rails[1], 5);
	/* device 3 of every node (a TP lane's DP group): one channel, on the sender's NIC */
	int one[4] = {3, 11, 19, 27};
	p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, one, 4);
	ck_assert_int_eq(p.channels, 1);
	ck_assert_int_eq(p.nrails, 0);
	done(c);

	/* 4 NICs for 8 GPUs: NIC i hangs off device 2i; devices 0 and 1 share NIC 0, devices 2 and 6 have NICs 1, 3 */
	c = mk_nics(4);
	int share[8] = {0, 1, 8, 9, 16, 17, 24, 25};
	p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, share, 8);
	ck_assert_int_eq(p.channels, 1);
	int own[8] = {2, 6, 10, 14, 18, 22, 26, 30};
	p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, own, 8);
	ck_assert_int_eq(p.channels, 2);
	ck_assert_int_eq(p.rails[0], 1);
	ck_assert_int_eq(p.rails[1], 3);
	p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, r, 32);
	ck_assert_int_eq(p.channels, 4);
	ck_assert_int_eq(p.nrails, 0);
	done(c);
}
END_TEST

START_TEST(heterogeneous_whole_nodes)
{
	hs_cluster *c = mk("cluster:\n"
			   "  groups:\n"
			   "    - {name: a, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			   "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			   "       nic: {bandwidth: 400 Gb/s, per_node: 4, latency: 3 us}}\n"
			   "    - {name: b, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			   "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			   "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			   "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n");
	int r[16];
	for (int i = 0; i < 16; i++)
		r[i] = i;
	hs_coll_flow_plan p = plan(c, HS_COLL_ALL_GATHER, HS_ALGO_RING, r, 16);
	ck_assert_int_eq(p.channels, 8);
	ck_assert_int_eq(p.nrails, 0);
	done(c);
}
END_TEST

START_TEST(algorithm)
{
	hs_cluster *c = mk_nics(8);
	int r[32];
	for (int i = 0; i < 32; i++)
		r[i] = i;
	double S = 64.0 * 1024 * 1024;
	for (int op = HS_COLL_ALL_REDUCE; op <= HS_COLL_ALL_TO_ALL; op++) {
		hs_coll_flow_plan p = plan(c, (enum hs_coll_op)op, HS_ALGO_AUTO, r, 32);
		ck_assert_int_eq(p.algo, hs_coll_auto_algo(c, (enum hs_coll_op)op, r, 32, S));
		ck_assert(p.algo != HS_ALGO_AUTO && p.algo != HS_ALGO_FASTEST);
	}
	hs_coll_flow_plan p = plan(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, r, 32);
	ck_assert_int_eq(p.algo, HS_ALGO_TREE);
	/* all-to-all has no ring: its default, direct */
	p = plan(c, HS_COLL_ALL_TO_ALL, HS_ALGO_RING, r, 32);
	ck_assert_int_eq(p.algo, hs_coll_default_algo(HS_COLL_ALL_TO_ALL));
	/* a rank twice, a rank outside the cluster */
	int bad[2] = {3, 3}, out[2] = {0, 99};
	ck_assert_int_eq(hs_coll_flow_plan_of(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, bad, 2, S, &p), -1);
	ck_assert_int_eq(hs_coll_flow_plan_of(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, out, 2, S, &p), -1);
	done(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_flow");
	TCase *t = tcase_create("core");
	tcase_add_test(t, layouts);
	tcase_add_test(t, heterogeneous_whole_nodes);
	tcase_add_test(t, algorithm);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
