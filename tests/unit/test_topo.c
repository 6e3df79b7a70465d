/* Topology builders and routes (topology/topo.c, topology/route.c), on every example in scenarios/topology/
 * and on a hand-checked 2-node fat-tree. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "topology/cluster.h"
#include "topology/route.h"
#include "topology/topo.h"

static hs_cluster *load(const char *path, hs_ydoc **doc)
{
	hs_err err = {0};
	*doc = hs_yaml_load_file(path, &err);
	ck_assert_msg(*doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(*doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s: %s", path, err.msg);
	return c;
}

/* Every route is a chain of links from src to dst (each path's links join up), its coefficients are fractions
 * summing to at least 1 on the links leaving src, its latency is positive, and its alone-bandwidth is at most
 * the slowest link it uses at full share. */
static void check_route(const hs_topo *t, const hs_route *r, int src, int dst)
{
	ck_assert_int_eq(r->src, src);
	ck_assert_int_eq(r->dst, dst);
	ck_assert_int_gt(r->nl, 0);
	ck_assert(r->lat > 0);
	double out_src = 0, in_dst = 0;
	for (int i = 0; i < r->nl; i++) {
		const hs_link *l = hs_topo_link(t, r->link[i]);
		ck_assert(r->coef[i] > 0 && r->coef[i] <= 1 + 1e-12);
		ck_assert(r->bw <= l->bw / r->coef[i] * (1 + 1e-9));
		if (l->from == src)
			out_src += r->coef[i];
		if (l->to == dst)
			in_dst += r->coef[i];
		if (i)
			ck_assert_int_lt(r->link[i - 1], r->link[i]); /* ascending, distinct */
	}
	/* all of the bytes leave the source and reach the destination */
	ck_assert_msg(fabs(out_src - 1) < 1e-9 && fabs(in_dst - 1) < 1e-9, "route %d->%d: %g out, %g in", src, dst,
		      out_src, in_dst);
}

START_TEST(every_example_builds_and_routes)
{
	DIR *d = opendir("scenarios/topology");
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".yaml"))
			continue;
		char path[512];
		snprintf(path, sizeof path, "scenarios/topology/%s", e->d_name);
		hs_ydoc *doc;
		hs_cluster *c = load(path, &doc);
		hs_err err = {0};
		hs_topo *t = hs_topo_build(c, &err);
		ck_assert_msg(t != NULL, "%s: %s", path, err.msg);
		hs_router *r = hs_router_create(t);
		int G = hs_cluster_ngpus(c);
		/* every device reaches device 0, the last one and its neighbour, both ways */
		for (int a = 0; a < G; a++) {
			int targets[3] = {0, G - 1, (a + 1) % G};
			for (int k = 0; k < 3; k++) {
				int b = targets[k];
				if (a == b)
					continue;
				const hs_route *rt = hs_route_get(r, a, b, -1, &err);
				ck_assert_msg(rt != NULL, "%s: %d->%d: %s", path, a, b, err.msg);
				check_route(t, rt, a, b);
			}
		}
		hs_router_free(r);
		hs_topo_free(t);
		hs_cluster_free(c);
		hs_yaml_free(doc);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 9);
}
END_TEST

static const char *two_nodes = "cluster:\n"
			       "  groups:\n"
			       "    - {name: a, nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
			       "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
			       "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
			       "  fabric: {kind: rail-optimized, tiers: 2, oversubscription: 1, latency: 1 us}\n";

/* On a rail-optimised fabric with a NIC per GPU, a transfer on rail i leaves through NIC i and arrives at NIC i:
 * from gpu 3 of node 0 to gpu 3 of node 1 on rail 3, the path is gpu -> nic -> (rail switch) -> nic -> gpu, all
 * at the NIC's 50 GB/s, and no scale-up link is used. */
START_TEST(rail_route_stays_on_its_rail)
{
	hs_err err = {0};
	hs_ydoc *doc = hs_yaml_load_string(two_nodes, strlen(two_nodes), "t.yaml", &err);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	hs_topo *t = hs_topo_build(c, &err);
	hs_router *r = hs_router_create(t);
	const hs_route *rt = hs_route_get(r, 3, 11, 3, &err);
	ck_assert_msg(rt != NULL, "%s", err.msg);
	check_route(t, rt, 3, 11);
	ck_assert_int_eq(rt->npaths, 1);
	int nic0 = hs_topo_nic(t, 0, 3), nic1 = hs_topo_nic(t, 1, 3);
	int up = hs_topo_upswitch(t, 0), up1 = hs_topo_upswitch(t, 1);
	int saw0 = 0, saw1 = 0;
	for (int i = 0; i < rt->nl; i++) {
		const hs_link *l = hs_topo_link(t, rt->link[i]);
		ck_assert_double_eq_tol(rt->coef[i], 1, 1e-12);
		ck_assert(l->from != up && l->to != up && l->from != up1 && l->to != up1);
		saw0 |= l->from == nic0;
		saw1 |= l->to == nic1;
	}
	ck_assert(saw0 && saw1);
	ck_assert_double_eq_tol(rt->bw * 1e12, 50e9, 1e3); /* 400 Gb/s */
	/* the same pair with no rail named spreads over every rail: 8 paths, more bandwidth than one NIC */
	const hs_route *all = hs_route_get(r, 3, 11, -1, &err);
	check_route(t, all, 3, 11);
	ck_assert_int_eq(all->npaths, 8);
	ck_assert(all->bw > rt->bw);
	hs_router_free(r);
	hs_topo_free(t);
	hs_cluster_free(c);
	hs_yaml_free(doc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("topo");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, every_example_builds_and_routes);
	tcase_add_test(t, rail_route_stays_on_its_rail);
	suite_add_tcase(s, t);
	return s;
}

#include "check_main.h"
