#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "topology/cluster.h"

static hs_cluster *load(const char *text, hs_err *err, hs_ydoc **docp)
{
	hs_err_clear(err);
	hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "t.yaml", err);
	ck_assert_msg(d != NULL, "%s", err->msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", err);
	*docp = d;
	return c;
}

static const char *example = "cluster:\n"
			     "  groups:\n"
			     "    - name: h100\n"
			     "      nodes: 2\n"
			     "      gpus_per_node: 8\n"
			     "      gpu: H100-SXM-80GB\n"
			     "      scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}\n"
			     "      nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}\n"
			     "    - name: a100\n"
			     "      nodes: 3\n"
			     "      gpus_per_node: 4\n"
			     "      gpu: A100-SXM-80GB\n"
			     "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n";

START_TEST(parses_example)
{
	hs_err err;
	hs_ydoc *d;
	hs_cluster *c = load(example, &err, &d);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_cluster_ngroups(c), 2);
	ck_assert_int_eq(hs_cluster_ngpus(c), 28);
	ck_assert_int_eq(hs_cluster_nnodes(c), 5);
	const hs_node_group *g = hs_cluster_group(c, 0);
	ck_assert_str_eq(g->name, "h100");
	ck_assert_str_eq(g->scaleup_kind, "nvswitch");
	ck_assert_double_eq_tol(g->scaleup_bw, 450e9, 1);
	ck_assert_double_eq_tol(g->scaleup_lat, 2e-6, 1e-15);
	ck_assert_double_eq_tol(g->nic_bw, 50e9, 1);
	ck_assert_int_eq(g->nics_per_node, 8);
	ck_assert_double_eq_tol(g->nic_lat, 3e-6, 1e-15);
	/* defaults of the second group */
	const hs_node_group *a = hs_cluster_group(c, 1);
	ck_assert_str_eq(a->scaleup_kind, "nvswitch");
	ck_assert_double_eq_tol(a->scaleup_bw, 300e9, 1); /* from the device type */
	ck_assert_int_eq(a->nics_per_node, 4);		    /* one per GPU */
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	ck_assert_str_eq(f->kind, "fat-tree");
	ck_assert_int_eq(f->tiers, 2);
	ck_assert_double_eq_tol(f->latency, 1e-6, 1e-15);
	/* placement */
	ck_assert_int_eq(hs_cluster_group_of(c, 0), 0);
	ck_assert_int_eq(hs_cluster_group_of(c, 15), 0);
	ck_assert_int_eq(hs_cluster_group_of(c, 16), 1);
	ck_assert_int_eq(hs_cluster_group_of(c, 27), 1);
	ck_assert_int_eq(hs_cluster_group_of(c, 28), -1);
	ck_assert_int_eq(hs_cluster_node_of(c, 7), 0);
	ck_assert_int_eq(hs_cluster_node_of(c, 8), 1);
	ck_assert_int_eq(hs_cluster_node_of(c, 16), 2);
	ck_assert_int_eq(hs_cluster_node_of(c, 20), 3);
	ck_assert_int_eq(hs_cluster_node_of(c, 27), 4);
	ck_assert_int_eq(hs_cluster_local_rank(c, 21), 1);
	ck_assert_str_eq(hs_cluster_device(c, 20)->name, "A100-SXM-80GB");
	hs_cluster_free(c);
	hs_yaml_free(d);
}
END_TEST

struct bad {
	const char *text;
	const char *want; /* substring of the message */
};

static const struct bad bads[] = {
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodez: 2}]}\n", "t.yaml:1:41: cluster.groups[0].nodez: unknown key (did you mean 'nodes'?)"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nic: {bandwidth: 0 Gb/s}}]}\n", "cluster.groups[0].nic.bandwidth: '0 Gb/s' is out of range"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nic: {bandwidth: -5 GB/s}}]}\n", "cluster.groups[0].nic.bandwidth"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, scaleup: {bandwidth: 0}}]}\n", "cluster.groups[0].scaleup.bandwidth"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, scaleup: {kind: nvswich}}]}\n", "did you mean 'nvswitch'?"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, scaleup: {bandwith: 1 GB/s}}]}\n", "did you mean 'bandwidth'?"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 0}]}\n", "cluster.groups[0].nodes: '0' is out of range"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 1.5}]}\n", "not a whole number"},
	{"cluster: {groups: [{nodes: 2}]}\n", "cluster.groups[0].gpu: missing required key"},
	{"cluster: {groups: []}\n", "cluster.groups: expected a non-empty list"},
	{"cluster: {fabric: {kind: fat-tree}}\n", "cluster.groups: missing required key"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, name: a}, {gpu: H100-SXM-80GB, name: a}]}\n", "already the name of groups[0]"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB}], fabric: {kind: fat-tre}}\n", "did you mean 'fat-tree'?"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB}], fabric: {oversubscription: 0.5}}\n", "cluster.fabric.oversubscription"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB}], fabric: {tiers: 4}}\n", "cluster.fabric.tiers: '4' is out of range"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB}], fabrik: {}}\n", "cluster.fabrik: unknown key (did you mean 'fabric'?)"},
	{"cluster: {groups: [{gpu: NOPE}]}\n", "unknown device type 'NOPE'"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nic: 5}]}\n", "cluster.groups[0].nic: found a scalar"},
	{"cluster: 3\n", "cluster: found a scalar"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 2, gpus_per_node: 1}], fabric: {kind: explicit, switches: [s, t], links: [{from: gpu0, to: s, bandwidth: 1 GB/s}, {from: gpu0, to: s, bandwidth: 2 GB/s}]}}\n",
	 "'gpu0' - 's' is already links[0]"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 2, gpus_per_node: 1}], fabric: {kind: explicit, switches: [s, t], links: [{from: gpu0, to: s, bandwidth: 1 GB/s}, {from: s, to: gpu0, bandwidth: 2 GB/s}]}}\n",
	 "'s' - 'gpu0' is already links[0]"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 2, gpus_per_node: 1}], fabric: {kind: explicit, switches: [s, t], links: [{from: gpu0, to: s, bandwidth: 1 GB/s}, {from: s, to: gpu0, bandwidth: 2 GB/s, duplex: false}]}}\n",
	 "is a one-way link here but links[0] is a duplex link between them"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 2, gpus_per_node: 1}], fabric: {kind: explicit, switches: [s, s], links: [{from: gpu0, to: s, bandwidth: 1 GB/s}]}}\n",
	 "'s' is already switches[0] (expected each switch named once)"},
	/* scale-up domains: nvl72 on trays of 4 must say that its domain spans them */
	{"cluster: {groups: [{gpu: GB200, nodes: 18, gpus_per_node: 4, scaleup: {kind: nvl72}}]}\n",
	 "t.yaml:1:78: cluster.groups[0].scaleup.kind: scale-up kind 'nvl72' is one domain of 72 GPUs, but the group has "
	 "4 GPUs per node (expected domain: 72, so that one domain spans 18 nodes of 4"},
	{"cluster: {groups: [{gpu: GB200, nodes: 18, gpus_per_node: 4, scaleup: {kind: nvl72, domain: 36}}]}\n",
	 "scaleup.domain: scale-up kind 'nvl72' is one domain of 72 GPUs (expected domain: 72"},
	{"cluster: {groups: [{gpu: GB200, nodes: 9, gpus_per_node: 4, scaleup: {kind: nvl72, domain: 72}}]}\n",
	 "the group's 9 nodes of 4 GPUs do not fill whole domains of 72 (expected nodes a multiple of 18)"},
	{"cluster: {groups: [{gpu: GB200, nodes: 18, gpus_per_node: 5, scaleup: {kind: nvswitch, domain: 72}}]}\n",
	 "a domain of 72 GPUs does not hold whole nodes of 5"},
	{"cluster: {groups: [{gpu: H100-SXM-80GB, nodes: 2, scaleup: {kind: nvlink-mesh, domain: 16}}]}\n",
	 "scale-up kind 'nvlink-mesh' joins the GPUs of one node only (expected domain: 8, or a kind whose domain "
	 "spans nodes: nvswitch, nvl72 or nvl36x2)"},
	{"cluster: {groups: [{gpu: GB200, nodes: 36, gpus_per_node: 8, scaleup: {kind: nvl36x2, domain: 72}}]}\n",
	 "splits its domain of 72 GPUs over 2 switches, which does not hold whole nodes of 8 (expected GPUs per node dividing 36)"},
};

/* An NVL72 rack built as it is: 18 trays of 4 on one domain; two racks are two domains, each tray with its NICs. */
START_TEST(domains_span_nodes)
{
	hs_err err;
	hs_ydoc *d;
	hs_cluster *c = load("cluster: {groups: [{gpu: GB200, nodes: 36, gpus_per_node: 4,\n"
			     "  scaleup: {kind: nvl72, domain: 72}, nic: {per_node: 4, bandwidth: 400 Gb/s}},\n"
			     "  {name: h, gpu: H100-SXM-80GB, nodes: 2}]}\n", &err, &d);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_int_eq(hs_cluster_nnodes(c), 38);
	ck_assert_int_eq(hs_cluster_ndomains(c), 4); /* two racks, then two 8-GPU nodes */
	ck_assert_int_eq(hs_cluster_domain_of(c, 0), 0);
	ck_assert_int_eq(hs_cluster_domain_of(c, 71), 0);
	ck_assert_int_eq(hs_cluster_domain_of(c, 72), 1);
	ck_assert_int_eq(hs_cluster_domain_of(c, 144), 2);
	ck_assert_int_eq(hs_cluster_domain_of(c, 159), 3);
	ck_assert_int_eq(hs_cluster_domain_of(c, 160), -1);
	ck_assert_int_eq(hs_cluster_node_of(c, 71), 17);
	ck_assert_int_eq(hs_cluster_node_domain(c, 17), 0);
	ck_assert_int_eq(hs_cluster_node_domain(c, 18), 1);
	ck_assert_int_eq(hs_cluster_node_domain(c, 37), 3);
	ck_assert_int_eq(hs_cluster_domain_group(c, 1), 0);
	ck_assert_int_eq(hs_cluster_domain_group(c, 2), 1);
	ck_assert_int_eq(hs_cluster_domain_first_node(c, 1), 18);
	ck_assert_int_eq(hs_cluster_domain_first_node(c, 3), 37);
	ck_assert_int_eq(hs_cluster_group(c, 0)->domain, 72);
	ck_assert_int_eq(hs_cluster_group(c, 0)->nodes_per_domain, 18);
	ck_assert_int_eq(hs_cluster_group(c, 1)->domain, 8);
	/* 18 trays x 4 NICs x 50 GB/s */
	ck_assert_double_eq_tol(hs_cluster_domain_nic_bw(c, 1), 72 * 50e9, 1);
	hs_cluster_free(c);
	hs_yaml_free(d);
}
END_TEST

/* in_switch_reduction's default follows the GPU's architecture on an NVSwitch (docs/collectives.md, "NVLS: where
 * it is on"): Hopper and Blackwell on, A100 off, a custom type by its `arch` (or its base's), unknown off; the
 * rack kinds on whatever the device; an explicit value wins. */
START_TEST(in_switch_default_by_arch)
{
	static const struct {
		const char *gpu, *scaleup;
		int want;
	} cases[] = {
		{"H100-SXM-80GB", "{kind: nvswitch}", 1},
		{"H200-SXM-141GB", "{kind: nvswitch}", 1},
		{"B200", "{kind: nvswitch}", 1},
		{"A100-SXM-80GB", "{kind: nvswitch}", 0},
		{"H100-SXM-80GB", "{kind: nvswitch, in_switch_reduction: false}", 0},
		{"A100-SXM-80GB", "{kind: nvswitch, in_switch_reduction: true}", 1},
		{"H100-SXM-80GB", "{kind: nvlink-mesh}", 0},
		{"{name: X, memory: 80 GiB, memory_bandwidth: 3 TB/s, peak_bf16: 1 PFLOP/s, scaleup_bandwidth: 450 GB/s}",
		 "{kind: nvswitch}", 0},
		{"{name: X, memory: 80 GiB, memory_bandwidth: 3 TB/s, peak_bf16: 1 PFLOP/s, scaleup_bandwidth: 450 GB/s,"
		 " arch: hopper}", "{kind: nvswitch}", 1},
		{"{name: X, base: A100-SXM-80GB, memory: 40 GiB}", "{kind: nvswitch}", 0},
		{"{name: X, base: H100-SXM-80GB, memory: 94 GiB}", "{kind: nvswitch}", 1},
		{"{name: X, memory: 80 GiB, memory_bandwidth: 3 TB/s, peak_bf16: 1 PFLOP/s, scaleup_bandwidth: 900 GB/s}",
		 "{kind: nvl72, domain: 72}", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char y[512];
		snprintf(y, sizeof y, "cluster: {groups: [{gpu: %s, nodes: 18, gpus_per_node: 4, scaleup: %s}]}\n",
			 cases[i].gpu, cases[i].scaleup);
		hs_err err;
		hs_ydoc *d;
		hs_cluster *c = load(y, &err, &d);
		ck_assert_msg(c != NULL, "%s: %s", y, err.msg);
		ck_assert_msg(hs_cluster_group(c, 0)->scaleup_reduce == cases[i].want, "case %zu: %s", i, y);
		hs_cluster_free(c);
		hs_yaml_free(d);
	}
	/* an architecture that is not one is an error naming the key */
	hs_err err;
	hs_ydoc *d;
	hs_cluster *c = load("cluster: {groups: [{gpu: {name: X, base: B200, arch: kepler}, nodes: 1}]}\n", &err, &d);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "arch") != NULL, "%s", err.msg);
	hs_yaml_free(d);
}
END_TEST

START_TEST(rejects_bad_input)
{
	hs_err err;
	hs_ydoc *d;
	hs_cluster *c = load(bads[_i].text, &err, &d);
	ck_assert_msg(c == NULL, "accepted: %s", bads[_i].text);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, bads[_i].want) != NULL, "message '%s' lacks '%s'", err.msg, bads[_i].want);
	hs_yaml_free(d);
}
END_TEST

START_TEST(missing_cluster)
{
	hs_err err = {0};
	ck_assert_ptr_null(hs_cluster_from_yaml(NULL, "cluster", &err));
	ck_assert_int_eq(err.code, HS_EINPUT);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cluster");
	TCase *t = tcase_create("cluster");
	tcase_add_test(t, parses_example);
	tcase_add_loop_test(t, rejects_bad_input, 0, (int)(sizeof bads / sizeof *bads));
	tcase_add_test(t, missing_cluster);
	tcase_add_test(t, domains_span_nodes);
	tcase_add_test(t, in_switch_default_by_arch);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
