/* Topology builders and routes (topology/topo.c, topology/route.c), on every example in scenarios/topology/
 * and on a hand-checked 2-node fat-tree. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The router's searches stop at the source asked about and resume for a farther one (topology/route.c): the
 * routes must not depend on the order they are asked in. Every device to every other (at most 64 devices),
 * asked near-to-far from device 0 in one router and in the reverse order in another: the same links,
 * coefficients and latency. */
static void routes_do_not_depend_on_order(const char *path, const hs_topo *t, const hs_cluster *c)
{
	hs_err err = {0};
	hs_router *fwd = hs_router_create(t), *rev = hs_router_create(t);
	int G = hs_cluster_ngpus(c) < 64 ? hs_cluster_ngpus(c) : 64, P = G * G;
	for (int k = 0; k < P; k++) {
		int a = k / G, b = k % G, x = (P - 1 - k) / G, y = (P - 1 - k) % G;
		if (a != b)
			ck_assert(hs_route_get(fwd, a, b, -1, &err) != NULL);
		if (x != y)
			ck_assert(hs_route_get(rev, x, y, -1, &err) != NULL);
	}
	for (int a = 0; a < G; a++)
		for (int b = 0; b < G; b++) {
			if (a == b)
				continue;
			const hs_route *p = hs_route_get(fwd, a, b, -1, &err), *q = hs_route_get(rev, a, b, -1, &err);
			ck_assert_msg(p->nl == q->nl && p->lat == q->lat, "%s: %d->%d: %d links against %d", path, a, b, p->nl,
				      q->nl);
			for (int i = 0; i < p->nl; i++)
				ck_assert_msg(p->link[i] == q->link[i] && p->coef[i] == q->coef[i], "%s: %d->%d: link %d differs",
					      path, a, b, i);
		}
	hs_router_free(fwd);
	hs_router_free(rev);
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
		routes_do_not_depend_on_order(path, t, c);
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

/* ---- hop counts per fabric kind ----
 *
 * Each instance is small enough to derive every path by hand from the layouts of docs/topology.md. A route is
 * counted in links (a GPU-to-GPU path through one switch is GPU->NIC->switch->NIC->GPU: 4 links); with one
 * rail named, a route is a single path, so its link count is its hop count. */

typedef struct built {
	hs_ydoc *doc;
	hs_cluster *c;
	hs_topo *t;
	hs_router *r;
} built;

static built build(const char *yaml)
{
	built b;
	hs_err err = {0};
	b.doc = hs_yaml_load_string(yaml, strlen(yaml), "t.yaml", &err);
	ck_assert_msg(b.doc != NULL, "%s", err.msg);
	b.c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(b.doc), "cluster"), "cluster", &err);
	ck_assert_msg(b.c != NULL, "%s", err.msg);
	b.t = hs_topo_build(b.c, &err);
	ck_assert_msg(b.t != NULL, "%s", err.msg);
	b.r = hs_router_create(b.t);
	return b;
}

static void unbuild(built *b)
{
	hs_router_free(b->r);
	hs_topo_free(b->t);
	hs_cluster_free(b->c);
	hs_yaml_free(b->doc);
}

/* Links on the one path from device a to device b on `rail`. */
static int hops(built *b, int a, int d, int rail)
{
	hs_err err = {0};
	const hs_route *rt = hs_route_get(b->r, a, d, rail, &err);
	ck_assert_msg(rt != NULL, "%d->%d: %s", a, d, err.msg);
	check_route(b->t, rt, a, d);
	ck_assert_int_eq(rt->npaths, 1);
	return rt->nl;
}

/* Every pair routes as far one way as the other. */
static void check_symmetric(built *b, int rail)
{
	int G = hs_cluster_ngpus(b->c);
	for (int a = 0; a < G; a++)
		for (int d = a + 1; d < G; d++)
			ck_assert_msg(hops(b, a, d, rail) == hops(b, d, a, rail), "hops(%d,%d) = %d, hops(%d,%d) = %d", a,
				      d, hops(b, a, d, rail), d, a, hops(b, d, a, rail));
}

/* Single-GPU nodes with one NIC each: device i is node i, its NIC is rail 0. */
#define ONE_GPU_NODES(n) "cluster:\n  groups:\n    - {nodes: " #n ", gpus_per_node: 1, gpu: H100-SXM-80GB,\n" \
			 "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 1 us}}\n"

/* 2-tier fat-tree, radix 4, no oversubscription: leaves of D = 4*1/(1+1) = 2 NICs and U = 2 uplinks, so nodes
 * 0-1 share leaf 0 and nodes 2-3 leaf 1, and two spines join the leaves.
 *   same leaf:  GPU->NIC->leaf->NIC->GPU                   4 links
 *   otherwise:  GPU->NIC->leaf->spine->leaf->NIC->GPU      6 links */
START_TEST(hops_fat_tree_2)
{
	built b = build(ONE_GPU_NODES(4) "  fabric: {kind: fat-tree, tiers: 2, radix: 4, oversubscription: 1}\n");
	ck_assert_int_eq(hops(&b, 0, 1, 0), 4);
	ck_assert_int_eq(hops(&b, 2, 3, 0), 4);
	ck_assert_int_eq(hops(&b, 0, 2, 0), 6);
	ck_assert_int_eq(hops(&b, 1, 3, 0), 6);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* A leaf that is not full has a full leaf's uplinks. Radix 8, oversubscription 3: D = 8*3/4 = 6 NICs per leaf,
 * U = 2 uplinks, each carrying a full leaf's 6 x 50 GB/s / 3 / 2 = 50 GB/s. 7 nodes: leaf 0 holds 6, leaf 1
 * only node 6, whose uplinks are still 50 GB/s each (sizing them by the one NIC attached gave 50/3/2 = 8.3). */
START_TEST(partial_leaf_has_full_uplinks)
{
	built b = build(ONE_GPU_NODES(7) "  fabric: {kind: fat-tree, tiers: 2, radix: 8, oversubscription: 3}\n");
	int nup = 0;
	for (int l = 0; l < hs_topo_nlinks(b.t); l++) {
		const hs_link *k = hs_topo_link(b.t, l);
		if (hs_topo_vkind(b.t, k->from) == HS_V_SWITCH && hs_topo_vkind(b.t, k->to) == HS_V_SWITCH) {
			ck_assert_double_eq_tol(k->bw * 1e12, 50e9, 1); /* bytes/ps to bytes/s */
			nup++;
		}
	}
	ck_assert_int_eq(nup, 2 * 2 * 2); /* 2 leaves x 2 spines, both directions */
	/* node 6 reaches node 0 at its NIC's rate: one uplink of 50 GB/s is no narrower */
	hs_err err = {0};
	const hs_route *rt = hs_route_get(b.r, 6, 0, 0, &err);
	ck_assert_msg(rt != NULL, "%s", err.msg);
	ck_assert_double_eq_tol(rt->bw * 1e12, 50e9, 1);
	unbuild(&b);
}
END_TEST

/* 3-tier fat-tree, radix 4: leaves of 2 NICs (D = 2, U = 2), pods of radix/2 = 2 leaves with U = 2
 * aggregation switches each, every aggregation switch with radix/2 = 2 core uplinks. 8 nodes: leaves
 * {0,1} {2,3} (pod 0), {4,5} {6,7} (pod 1).
 *   same leaf:  GPU->NIC->leaf->NIC->GPU                               4
 *   same pod:   GPU->NIC->leaf->agg->leaf->NIC->GPU                    6
 *   other pod:  GPU->NIC->leaf->agg->core->agg->leaf->NIC->GPU         8 */
START_TEST(hops_fat_tree_3)
{
	built b = build(ONE_GPU_NODES(8) "  fabric: {kind: fat-tree, tiers: 3, radix: 4, oversubscription: 1}\n");
	ck_assert_int_eq(hops(&b, 0, 1, 0), 4);
	ck_assert_int_eq(hops(&b, 0, 2, 0), 6);
	ck_assert_int_eq(hops(&b, 5, 7, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 4, 0), 8);
	ck_assert_int_eq(hops(&b, 3, 6, 0), 8);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* Rail-optimised, 4 nodes of 2 GPUs with 2 NICs (NIC i owned by local GPU i), radix 4 (leaves of 2 NICs).
 * Rail 0: node0.nic0, node1.nic0 on one leaf, node2.nic0, node3.nic0 on the next; rail 1 likewise; one
 * spine tier over the four leaves. On rail 0 (device 2k is local GPU 0 of node k):
 *   node 0 -> node 1, local 0 -> 0:  GPU->NIC->leaf->NIC->GPU                         4
 *   node 0 -> node 2, local 0 -> 0:  GPU->NIC->leaf->spine->leaf->NIC->GPU            6
 *   node 0 -> node 2, local 0 -> 1:  ... ->NIC->GPU(owner of nic0)->NVSwitch->GPU    8 (PXN on arrival)
 * and a route on rail 0 never touches rail 1's NICs. */
START_TEST(hops_rail_optimized)
{
	built b = build("cluster:\n  groups:\n    - {nodes: 4, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s},\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 2}}\n"
			"  fabric: {kind: rail-optimized, tiers: 2, radix: 4, oversubscription: 1}\n");
	ck_assert_int_eq(hops(&b, 0, 2, 0), 4);
	ck_assert_int_eq(hops(&b, 1, 3, 1), 4);
	ck_assert_int_eq(hops(&b, 0, 4, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 5, 0), 8);
	hs_err err = {0};
	const hs_route *rt = hs_route_get(b.r, 0, 6, 0, &err);
	for (int i = 0; i < rt->nl; i++) {
		const hs_link *l = hs_topo_link(b.t, rt->link[i]);
		for (int node = 0; node < 4; node++)
			ck_assert(l->from != hs_topo_nic(b.t, node, 1) && l->to != hs_topo_nic(b.t, node, 1));
	}
	check_symmetric(&b, 0);
	check_symmetric(&b, 1);
	unbuild(&b);
}
END_TEST

/* Multi-plane, 2 planes each a 2-tier fat-tree of radix 4; 4 nodes of 2 GPUs, NIC i in plane i. Plane 0 holds
 * every node's NIC 0: leaves {node0, node1} and {node2, node3}.
 *   node 0 -> node 1 on plane 0:  GPU->NIC->leaf->NIC->GPU               4
 *   node 0 -> node 3 on plane 1:  GPU->NIC->leaf->spine->leaf->NIC->GPU  6 */
START_TEST(hops_multi_plane)
{
	built b = build("cluster:\n  groups:\n    - {nodes: 4, gpus_per_node: 2, gpu: H100-SXM-80GB,\n"
			"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s},\n"
			"       nic: {bandwidth: 400 Gb/s, per_node: 2}}\n"
			"  fabric: {kind: multi-plane, planes: 2, tiers: 2, radix: 4, oversubscription: 1}\n");
	ck_assert_int_eq(hops(&b, 0, 2, 0), 4);
	ck_assert_int_eq(hops(&b, 1, 7, 1), 6);
	check_symmetric(&b, 0);
	check_symmetric(&b, 1);
	unbuild(&b);
}
END_TEST

/* Dragonfly, 12 single-NIC nodes, 1 NIC per router, 4 routers per group: groups {R0..R3} {R4..R7} {R8..R11},
 * local links all-to-all inside a group, and the global link between groups i and j leaves router j mod 4 of
 * group i: g0-g1 is R1-R4, g0-g2 is R2-R8, g1-g2 is R6-R9. Minimal routing is at most local, global, local:
 *   node 0 -> node 1  (same group):              GPU->NIC->R0->R1->NIC->GPU                  5
 *   node 2 -> node 8  (both ends of a global):   GPU->NIC->R2->R8->NIC->GPU                  5
 *   node 1 -> node 6:                            GPU->NIC->R1->R4->R6->NIC->GPU              6
 *   node 0 -> node 9:                            GPU->NIC->R0->R2->R8->R9->NIC->GPU          7
 *   node 0 -> node 5:                            GPU->NIC->R0->R1->R4->R5->NIC->GPU          7
 * and no pair takes more than 3 router-to-router links (7 links). */
START_TEST(hops_dragonfly)
{
	built b = build(ONE_GPU_NODES(12) "  fabric: {kind: dragonfly, routers_per_group: 4, nics_per_router: 1,\n"
					  "           link_bandwidth: 200 Gb/s}\n");
	ck_assert_int_eq(hops(&b, 0, 1, 0), 5);
	ck_assert_int_eq(hops(&b, 2, 8, 0), 5);
	ck_assert_int_eq(hops(&b, 1, 6, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 9, 0), 7);
	ck_assert_int_eq(hops(&b, 0, 5, 0), 7);
	for (int a = 0; a < 12; a++)
		for (int d = 0; d < 12; d++)
			if (a != d)
				ck_assert_int_le(hops(&b, a, d, 0), 7);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* Router (switch vertex) of each node on a torus: the switch its only NIC attaches to. */
static void torus_routers(built *b, int *router_node)
{
	for (int v = 0; v < hs_topo_nvertices(b->t); v++)
		router_node[v] = -1;
	for (int node = 0; node < hs_cluster_nnodes(b->c); node++) {
		int f, c, nic = hs_topo_nic(b->t, node, 0);
		hs_topo_out(b->t, nic, &f, &c);
		for (int i = f; i < f + c; i++) {
			int w = hs_topo_link(b->t, hs_topo_out_link(b->t, i))->to;
			if (hs_topo_vkind(b->t, w) == HS_V_SWITCH)
				router_node[w] = node;
		}
	}
}

/* Torus distance: per dimension the shorter way round, summed (node = x + X*y + X*Y*z). */
static int torus_dist(const int *dims, int nd, int a, int b)
{
	int d = 0;
	for (int k = 0; k < nd; k++) {
		int x = a % dims[k], y = b % dims[k], dx = abs(x - y);
		d += dx < dims[k] - dx ? dx : dims[k] - dx;
		a /= dims[k];
		b /= dims[k];
	}
	return d;
}

/* Routes on a torus: GPU->NIC->router, then one router link per unit of wrap-around Manhattan distance, then
 * router->NIC->GPU: 4 + sum over dimensions of min(|dx|, size - |dx|) links. Every router-to-router link a route
 * takes joins torus neighbours (distance 1), so routes use only torus links. */
static void check_torus(built *b, const int *dims, int nd)
{
	int G = hs_cluster_ngpus(b->c);
	int *rn = malloc((size_t)hs_topo_nvertices(b->t) * sizeof *rn);
	torus_routers(b, rn);
	for (int a = 0; a < G; a++)
		for (int d = 0; d < G; d++) {
			if (a == d)
				continue;
			ck_assert_msg(hops(b, a, d, 0) == 4 + torus_dist(dims, nd, a, d), "torus %d->%d: %d links, expected %d",
				      a, d, hops(b, a, d, 0), 4 + torus_dist(dims, nd, a, d));
			hs_err err = {0};
			const hs_route *rt = hs_route_get(b->r, a, d, 0, &err);
			for (int i = 0; i < rt->nl; i++) {
				const hs_link *l = hs_topo_link(b->t, rt->link[i]);
				if (hs_topo_vkind(b->t, l->from) != HS_V_SWITCH || hs_topo_vkind(b->t, l->to) != HS_V_SWITCH)
					continue;
				ck_assert(rn[l->from] >= 0 && rn[l->to] >= 0);
				ck_assert_int_eq(torus_dist(dims, nd, rn[l->from], rn[l->to]), 1);
			}
		}
	free(rn);
}

/* 2D torus 4 x 4: e.g. node 0 (0,0) -> node 15 (3,3) wraps both ways, 1 + 1 = 2 router links (6 in all);
 * node 0 -> node 10 (2,2) is 2 + 2 either way round (8); node 5 (1,1) -> node 14 (2,3) is 1 + 2 (7). */
START_TEST(hops_torus2d)
{
	built b = build(ONE_GPU_NODES(16) "  fabric: {kind: torus2d, dims: [4, 4], link_bandwidth: 100 GB/s}\n");
	ck_assert_int_eq(hops(&b, 0, 15, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 10, 0), 8);
	ck_assert_int_eq(hops(&b, 5, 14, 0), 7);
	ck_assert_int_eq(hops(&b, 0, 3, 0), 5);
	int dims[2] = {4, 4};
	check_torus(&b, dims, 2);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* 3D torus 2 x 3 x 4 (a dimension of 2 is one link, not two): node 0 (0,0,0) -> node 23 (1,2,3) is 1 + 1 + 1
 * (7 links); node 0 -> node 12 (0,0,2) is 2 (6). */
START_TEST(hops_torus3d)
{
	built b = build(ONE_GPU_NODES(24) "  fabric: {kind: torus3d, dims: [2, 3, 4], link_bandwidth: 100 GB/s}\n");
	ck_assert_int_eq(hops(&b, 0, 23, 0), 7);
	ck_assert_int_eq(hops(&b, 0, 12, 0), 6);
	int dims[3] = {2, 3, 4};
	check_torus(&b, dims, 3);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* WAN: two sites (node groups) of 4 single-GPU nodes, each its own fat-tree with radix 4 (leaves of 2 NICs), and
 * a gateway per site on its top tier; the gateways joined by one WAN link.
 *   2 tiers, same leaf:    GPU->NIC->leaf->NIC->GPU                                       4
 *   2 tiers, same site:    GPU->NIC->leaf->spine->leaf->NIC->GPU                          6
 *   2 tiers, across:       GPU->NIC->leaf->spine->gw->gw->spine->leaf->NIC->GPU            9
 * With 3 tiers and 8 nodes per site (two pods), the top tier is the core, so across sites:
 *                          GPU->NIC->leaf->agg->core->gw->gw->core->agg->leaf->NIC->GPU   11 */
#define WAN_SITES(n, tiers) "cluster:\n  groups:\n" \
	"    - {name: east, nodes: " #n ", gpus_per_node: 1, gpu: H100-SXM-80GB, nic: {per_node: 1}}\n" \
	"    - {name: west, nodes: " #n ", gpus_per_node: 1, gpu: H100-SXM-80GB, nic: {per_node: 1}}\n" \
	"  fabric: {kind: wan, tiers: " #tiers ", radix: 4, wan_bandwidth: 100 Gb/s, wan_latency: 1 ms}\n"

START_TEST(hops_wan)
{
	built b = build(WAN_SITES(4, 2));
	ck_assert_int_eq(hops(&b, 0, 1, 0), 4);
	ck_assert_int_eq(hops(&b, 0, 3, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 4, 0), 9);
	ck_assert_int_eq(hops(&b, 7, 1, 0), 9);
	check_symmetric(&b, 0);
	unbuild(&b);
	b = build(WAN_SITES(8, 3));
	ck_assert_int_eq(hops(&b, 0, 2, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 4, 0), 8);
	ck_assert_int_eq(hops(&b, 0, 8, 0), 11);
	ck_assert_int_eq(hops(&b, 5, 14, 0), 11);
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* GB200 NVL72 racks of 18 trays x 4 GPUs (scaleup.domain: 72), each tray with 4 NICs on a rail-optimised
 * fabric of radix 64: a rail of 36 NICs fills a leaf of D = 32 and 4 more on a second leaf, with spines above.
 *   same rack:                     GPU->NVLink switch->GPU                                     2 links
 *   other rack, owner to owner:    GPU->NIC->leaf->NIC->GPU (nodes 0 and 18 share rail leaves) 4 links
 *   other rack, through a peer:    GPU->switch->GPU(owner)->NIC->leaf->NIC->GPU                6 links
 *   to node 35 (second rail leaf): GPU->NIC->leaf->spine->leaf->NIC->GPU(owner)->switch->GPU   8 links
 * Inside a rack no route touches a NIC; across racks every NIC on a route is the source's or the
 * destination's tray's. */
static int route_nics(built *b, const hs_route *rt, int *nodes, int max)
{
	int n = 0;
	for (int i = 0; i < rt->nl; i++) {
		const hs_link *l = hs_topo_link(b->t, rt->link[i]);
		int ends[2] = {l->from, l->to};
		for (int e = 0; e < 2; e++)
			if (hs_topo_vkind(b->t, ends[e]) == HS_V_NIC && n < max)
				nodes[n++] = hs_topo_vnode(b->t, ends[e]);
	}
	return n;
}

#define NVL72_RACKS(n) "cluster:\n  groups:\n    - {nodes: " #n ", gpus_per_node: 4, gpu: GB200,\n" \
		       "       scaleup: {kind: nvl72, domain: 72, bandwidth: 900 GB/s},\n" \
		       "       nic: {bandwidth: 400 Gb/s, per_node: 4}}\n" \
		       "  fabric: {kind: rail-optimized, radix: 64}\n"

START_TEST(hops_nvl72_racks)
{
	built b = build(NVL72_RACKS(36));
	hs_err err = {0};
	int nodes[64];
	/* one rack: every pair over the rack's NVLink switch, never a NIC, whatever the rail */
	for (int a = 0; a < 72; a++)
		for (int d = 0; d < 72; d++) {
			if (a == d)
				continue;
			const hs_route *rt = hs_route_get(b.r, a, d, -1, &err);
			ck_assert_msg(rt != NULL, "%s", err.msg);
			check_route(b.t, rt, a, d);
			ck_assert_int_eq(rt->nl, 2);
			ck_assert_int_eq(route_nics(&b, rt, nodes, 64), 0);
		}
	/* all 18 trays share the one switch */
	ck_assert_int_eq(hs_topo_upswitch(b.t, 0), hs_topo_upswitch(b.t, 17));
	ck_assert_int_ne(hs_topo_upswitch(b.t, 17), hs_topo_upswitch(b.t, 18));
	ck_assert_int_eq(hs_topo_domain_nnics(b.t, 0), 72);
	ck_assert_int_eq(hs_topo_vnode(b.t, hs_topo_domain_nic(b.t, 1, 5)), 19);
	/* across the racks, on the trays' NICs */
	ck_assert_int_eq(hops(&b, 0, 72, 0), 4);
	ck_assert_int_eq(hops(&b, 1, 73, 1), 4);
	ck_assert_int_eq(hops(&b, 1, 72, 0), 6);
	ck_assert_int_eq(hops(&b, 0, 143, 0), 8);
	for (int a = 0; a < 72; a += 5)
		for (int d = 72; d < 144; d += 7) {
			const hs_route *rt = hs_route_get(b.r, a, d, -1, &err);
			ck_assert_msg(rt != NULL, "%s", err.msg);
			check_route(b.t, rt, a, d);
			ck_assert_int_eq(rt->npaths, 4); /* the tray's four NICs */
			int k = route_nics(&b, rt, nodes, 64);
			ck_assert_int_gt(k, 0);
			for (int i = 0; i < k; i++)
				ck_assert_msg(nodes[i] == hs_cluster_node_of(b.c, a) || nodes[i] == hs_cluster_node_of(b.c, d),
					      "%d->%d crosses node %d's NIC", a, d, nodes[i]);
		}
	check_symmetric(&b, 0);
	unbuild(&b);
}
END_TEST

/* NVL36x2: two racks of 36 (9 trays of 4) whose switches are joined into one domain of 72: crossing to the
 * other half adds the switch-to-switch link (3 links), never a NIC; that link carries a half's bandwidth. */
START_TEST(hops_nvl36x2)
{
	built b = build("cluster:\n  groups:\n    - {nodes: 18, gpus_per_node: 4, gpu: GB200,\n"
			"       scaleup: {kind: nvl36x2, domain: 72, bandwidth: 900 GB/s}, nic: {per_node: 4}}\n");
	hs_err err = {0};
	int nodes[8];
	ck_assert_int_eq(hops(&b, 0, 35, 0), 2);
	ck_assert_int_eq(hops(&b, 0, 36, 0), 3);
	ck_assert_int_eq(hops(&b, 71, 2, 0), 3);
	const hs_route *rt = hs_route_get(b.r, 4, 40, -1, &err);
	ck_assert_msg(rt != NULL, "%s", err.msg);
	ck_assert_int_eq(route_nics(&b, rt, nodes, 8), 0);
	ck_assert_int_eq(hs_topo_upswitch(b.t, 0), hs_topo_upswitch(b.t, 8));
	ck_assert_int_ne(hs_topo_upswitch(b.t, 8), hs_topo_upswitch(b.t, 9));
	double bw = 0;
	for (int l = 0; l < hs_topo_nlinks(b.t); l++) {
		const hs_link *L = hs_topo_link(b.t, l);
		if (L->from == hs_topo_upswitch(b.t, 0) && L->to == hs_topo_upswitch(b.t, 9))
			bw = hs_rate_to_Bps(L->bw);
	}
	ck_assert_double_eq_tol(bw, 36 * 900e9, 1e3);
	unbuild(&b);
}
END_TEST

/* ECMP by destination mod k (fabric `ecmp: dmodk`, topology/route.c): 16 single-GPU nodes on a 2-tier fat-tree
 * of radix 8 (4 NICs and 4 spines per leaf). The spine a route crosses is a function of its destination alone:
 * NIC ordinal mod 4, so the 4 NICs of a leaf are reached over 4 different spines, and from every other leaf over
 * the same one. With the hash (the default) some destination is reached over two spines. */
static int spine_of(built *b, int src, int dst)
{
	hs_err err = {0};
	const hs_route *r = hs_route_get(b->r, src, dst, 0, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	int sp = -1;
	for (int i = 0; i < r->nl; i++) {
		const hs_link *L = hs_topo_link(b->t, r->link[i]);
		if (hs_topo_vkind(b->t, L->from) == HS_V_SWITCH && hs_topo_vkind(b->t, L->to) == HS_V_SWITCH &&
		    L->to > L->from)
			sp = L->to; /* leaf -> spine: spines are built after the leaves */
	}
	return sp;
}

START_TEST(ecmp_dmodk)
{
	const char *fmt = "cluster:\n"
			  "  groups:\n"
			  "    - {nodes: 16, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			  "       nic: {bandwidth: 400 Gb/s, per_node: 1}}\n"
			  "  fabric: {kind: fat-tree, tiers: 2, radix: 8%s}\n";
	char y[512];
	for (int mode = 0; mode < 2; mode++) {
		snprintf(y, sizeof y, fmt, mode ? ", ecmp: dmodk" : "");
		built b = build(y);
		int varies = 0;
		for (int dst = 0; dst < 16; dst++) {
			int first = -1;
			for (int src = 0; src < 16; src++) {
				if (src / 4 == dst / 4)
					continue;
				int sp = spine_of(&b, src, dst);
				ck_assert(sp >= 0);
				if (first < 0)
					first = sp;
				varies |= sp != first;
			}
			if (mode) {
				ck_assert_msg(!varies, "dmodk: destination %d reached over several spines", dst);
				if (dst % 4)
					ck_assert_msg(first != spine_of(&b, (dst + 4) % 16, dst - 1),
						      "dmodk: NICs %d and %d of one leaf share a spine", dst - 1, dst);
			}
		}
		if (!mode)
			ck_assert_msg(varies, "hash: every destination reached over one spine (the hash should spread)");
		unbuild(&b);
	}
	/* a value that is neither: exit-2 error naming the key */
	hs_err err = {0};
	snprintf(y, sizeof y, fmt, ", ecmp: random");
	hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "t.yaml", &err);
	ck_assert(d != NULL);
	ck_assert(hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err) == NULL);
	ck_assert_msg(strstr(err.msg, "ecmp") && strstr(err.msg, "dmodk") && err.code == HS_EINPUT, "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("topo");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, every_example_builds_and_routes);
	tcase_add_test(t, rail_route_stays_on_its_rail);
	tcase_add_test(t, hops_fat_tree_2);
	tcase_add_test(t, partial_leaf_has_full_uplinks);
	tcase_add_test(t, hops_fat_tree_3);
	tcase_add_test(t, hops_rail_optimized);
	tcase_add_test(t, hops_multi_plane);
	tcase_add_test(t, hops_dragonfly);
	tcase_add_test(t, hops_torus2d);
	tcase_add_test(t, hops_torus3d);
	tcase_add_test(t, hops_wan);
	tcase_add_test(t, hops_nvl72_racks);
	tcase_add_test(t, hops_nvl36x2);
	tcase_add_test(t, ecmp_dmodk);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
