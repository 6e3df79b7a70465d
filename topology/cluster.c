/* hs_cluster: parse a scenario's `cluster:` mapping into node groups and a fabric, and answer where each
 * device lives. Every key, unit and default is documented in docs/topology.md. */
#include "topology/cluster.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"

struct hs_cluster {
	int ngroups;
	hs_node_group *groups;
	hs_fabric_spec fabric;
	int ngpus, nnodes;
	int *gpu0;  /* ngroups+1: first device of each group (prefix sums) */
	int *node0; /* ngroups+1: first global node of each group */
	int *dom0;  /* ngroups+1: first scale-up domain of each group */
	_Atomic(struct memo *) memo; /* hs_cluster_memo: NULL until set, then never changed */
	struct hs_fabprof **fab;      /* ngroups: hs_cluster_fabprof, NULL where none is attached */
	void (*fab_free)(struct hs_fabprof *);
	int nccl_ver; /* cluster.nccl.version as major*100 + minor; 0: not given (the newest modelled) */
};

struct memo {
	void *p;
	void (*free_fn)(void *);
};

/* The scale-up and fabric kinds a cluster may name are tables with properties (topology/kind.h). The analytical
 * models only need bandwidth and latency; the topology builders (topology/topo.c) use the kind to lay out links. */

/* "a", "a or b", "a, b or c": for messages that list the kinds having a property. */
static const char *join_or(const char *const *names, int n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
	return buf;
}

/* The names of the scale-up kinds whose switch can reduce, for the message that lists them. */
static const char *reducing_scaleups(char *buf, size_t len)
{
	const char *names[32];
	int n = 0;
	for (int i = 0; i < hs_kind_nscaleup() && n < 32; i++)
		if (hs_kind_scaleup(i)->switch_reduce)
			names[n++] = hs_kind_scaleup(i)->name;
	return join_or(names, n, buf, len);
}

/* The names of the fabric kinds that are tori, for the message that lists them. */
static const char *torus_fabrics(char *buf, size_t len)
{
	const char *names[32];
	int n = 0;
	for (int i = 0; i < hs_kind_nfabric() && n < 32; i++)
		if (hs_kind_fabric(i)->dims)
			names[n++] = hs_kind_fabric(i)->name;
	return join_or(names, n, buf, len);
}

/* The names of the fabric kinds that list their own switches and links, for the message that lists them. */
static const char *listing_fabrics(char *buf, size_t len)
{
	const char *names[32];
	int n = 0;
	for (int i = 0; i < hs_kind_nfabric() && n < 32; i++)
		if (hs_kind_fabric(i)->lists_links)
			names[n++] = hs_kind_fabric(i)->name;
	return join_or(names, n, buf, len);
}

/* Defaults when a key is absent (docs/topology.md). Latencies are typical one-hop figures: NVLink through
 * an NVSwitch ~1-2 us end to end as NCCL sees it; a RDMA NIC send/receive ~3 us; one switch hop ~1 us as the
 * scenario example writes it. */
#define DEF_SCALEUP_LAT 2e-6
#define DEF_NIC_BW (400e9 / 8) /* 400 Gb/s, the NDR/CX-7 NIC of an H100 HGX node */
#define DEF_NIC_LAT 3e-6
#define DEF_FABRIC_LAT 1e-6
/* PCIe Gen4 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s per direction (PCI-SIG base spec 4.0). */
#define DEF_PCIE_BW 31.5e9
/* A 64-port switch: NVIDIA Quantum-2 QM9700 (64 x 400 Gb/s NDR), Spectrum-4 SN5600 (64 x 800 GbE). */
#define DEF_RADIX 64
/* Wide-area default: one 400 Gb/s wavelength, and 5 us per km of fibre x 1000 km (a metro-to-region span). */
#define DEF_WAN_BW (400e9 / 8)
#define DEF_WAN_LAT 5e-3

/* The names of the scale-up kinds whose domain may span nodes, for the message that lists them. */
static const char *spanning_scaleups(char *buf, size_t len)
{
	const char *names[32];
	int n = 0;
	for (int i = 0; i < hs_kind_nscaleup() && n < 32; i++)
		if (hs_kind_scaleup(i)->spans)
			names[n++] = hs_kind_scaleup(i)->name;
	return join_or(names, n, buf, len);
}

/* `scaleup.domain`: GPUs per scale-up domain. A kind with a size of its own (nvl72: 72) takes that size, and a
 * group whose nodes hold fewer GPUs must say that the domain spans them: writing `kind: nvl72` on nodes of 4
 * used to give a silent 4-GPU domain. */
static int parse_domain(const hs_ynode *m, const char *path, hs_node_group *g, hs_err *err)
{
	const hs_scaleup_kind *k = g->scaleup_props;
	const hs_ynode *dn = hs_yaml_get(m, "domain");
	int gpn = g->gpus_per_node;
	int64_t d;
	char list[128];
	if (hs_cfg_int(m, path, "domain", 1, 1 << 24, k->domain ? k->domain : gpn, 0, &d, err))
		return -1;
	if (dn && !k->spans && d != gpn)
		return hs_cfg_err(dn, err, path, "domain", "scale-up kind '%s' joins the GPUs of one node only (expected "
				  "domain: %d, or a kind whose domain spans nodes: %s)", k->name, gpn,
				  spanning_scaleups(list, sizeof list));
	const hs_ynode *at = dn ? dn : hs_yaml_get(m, "kind") ? hs_yaml_get(m, "kind") : m;
	if (k->domain && d != k->domain && dn)
		return hs_cfg_err(dn, err, path, "domain", "scale-up kind '%s' is one domain of %d GPUs (expected "
				  "domain: %d, or kind: nvswitch with domain: %d for a domain of another size)", k->name,
				  k->domain, k->domain, (int)d);
	if (k->domain && !dn && gpn != k->domain)
		return hs_cfg_err(at, err, path, "kind", "scale-up kind '%s' is one domain of %d GPUs, but the group "
				  "has %d GPUs per node (expected domain: %d, so that one domain spans %d nodes of %d, each "
				  "with its own NICs, or gpus_per_node: %d)", k->name, k->domain, gpn, k->domain,
				  k->domain / gpn > 0 ? k->domain / gpn : 1, gpn, k->domain);
	if (d % gpn)
		return hs_cfg_err(at, err, path, "domain",
				  "a domain of %d GPUs does not hold whole nodes of %d (expected a multiple of %d)", (int)d,
				  gpn, gpn);
	if (((int64_t)g->nodes * gpn) % d)
		return hs_cfg_err(at, err, path, "domain",
				  "the group's %d nodes of %d GPUs do not fill whole domains of %d (expected nodes a "
				  "multiple of %d)", g->nodes, gpn, (int)d, (int)d / gpn);
	if ((d / k->parts) % gpn)
		return hs_cfg_err(at, err, path, "domain",
				  "scale-up kind '%s' splits its domain of %d GPUs over %d switches, which does not "
				  "hold whole nodes of %d (expected GPUs per node dividing %d)", k->name, (int)d, k->parts,
				  gpn, (int)d / k->parts);
	g->domain = (int)d;
	g->nodes_per_domain = (int)d / gpn;
	return 0;
}

static int parse_scaleup(const hs_ynode *m, const char *path, hs_node_group *g, hs_err *err)
{
	static const char *const known[] = {"kind", "bandwidth", "latency", "p2p", "in_switch_reduction",
					    "pcie_bandwidth", "domain", NULL};
	if (hs_cfg_known(m, path, known, "a mapping such as {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}",
			 err))
		return -1;
	if (hs_kind_cfg_scaleup(m, path, &g->scaleup_props, err))
		return -1;
	snprintf(g->scaleup_kind, sizeof g->scaleup_kind, "%s", g->scaleup_props->name);
	double def_bw = g->gpu.scaleup_bw > 0 ? g->gpu.scaleup_bw : 0;
	/* A bandwidth must be positive: 1 B/s is the floor so that "0" is an error, not a division by zero. */
	if (hs_cfg_num(m, path, "bandwidth", HS_U_BW, 1, 1e18, def_bw, def_bw <= 0 && g->gpus_per_node > 1,
		       &g->scaleup_bw, err))
		return -1;
	if (g->scaleup_bw <= 0)
		g->scaleup_bw = 1e18; /* one GPU per node: never used */
	/* NCCL runs NVLS wherever the switch can reduce and the GPU drives it: NVSwitch 3rd generation (HGX
	 * H100/H200) and later, Hopper and Blackwell GPUs (NCCL src/graph/search.cc: no NVLS graph below sm_90);
	 * an A100's 2nd-generation NVSwitch has no NVLink SHARP. The rack kinds are Blackwell by definition. */
	int reduce_def = g->scaleup_props->switch_reduce &&
			 (g->scaleup_props->reduce_default || hs_arch_has_nvls(g->gpu.arch));
	if (hs_cfg_bool(m, path, "p2p", 1, &g->scaleup_p2p, err) ||
	    hs_cfg_bool(m, path, "in_switch_reduction", reduce_def, &g->scaleup_reduce, err))
		return -1;
	char list[128];
	if (g->scaleup_reduce && !g->scaleup_props->switch_reduce)
		return hs_cfg_err(hs_yaml_get(m, "in_switch_reduction"), err, path, "in_switch_reduction",
				  "scale-up kind '%s' has no switch to reduce in (expected %s)", g->scaleup_kind,
				  reducing_scaleups(list, sizeof list));
	if (!g->scaleup_p2p && !g->scaleup_props->pcie)
		return hs_cfg_err(hs_yaml_get(m, "p2p"), err, path, "p2p",
				  "only a PCIe scale-up can lack peer-to-peer (kind is '%s')", g->scaleup_kind);
	/* the GPU's own PCIe link when its type gives one (topology/device.c), else a Gen4 x16 */
	double def_pcie = g->gpu.pcie_bw > 0 ? g->gpu.pcie_bw : DEF_PCIE_BW;
	if (hs_cfg_num(m, path, "pcie_bandwidth", HS_U_BW, 1, 1e18, def_pcie, 0, &g->pcie_bw, err))
		return -1;
	if (parse_domain(m, path, g, err))
		return -1;
	return hs_cfg_num(m, path, "latency", HS_U_TIME, 0, 1, DEF_SCALEUP_LAT, 0, &g->scaleup_lat, err);
}

static int parse_nic(const hs_ynode *m, const char *path, hs_node_group *g, hs_err *err)
{
	static const char *const known[] = {"bandwidth", "per_node", "latency", NULL};
	if (hs_cfg_known(m, path, known, "a mapping such as {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}", err))
		return -1;
	int64_t per;
	if (hs_cfg_num(m, path, "bandwidth", HS_U_BW, 1, 1e18, DEF_NIC_BW, 0, &g->nic_bw, err) ||
	    hs_cfg_int(m, path, "per_node", 1, 1024, g->gpus_per_node, 0, &per, err) ||
	    hs_cfg_num(m, path, "latency", HS_U_TIME, 0, 1, DEF_NIC_LAT, 0, &g->nic_lat, err))
		return -1;
	g->nics_per_node = (int)per;
	return 0;
}

/* `fabric_profile: FILE` of a mapping (a group, or the cluster for every group without its own): the path
 * resolved against the folder of the file the key was read from (as written when absolute, or when the key
 * came from --set), and where the key is. Absent: g is left as it is. */
static int fabric_profile_key(const hs_ynode *m, const char *path, hs_node_group *g, hs_err *err)
{
	const char *f;
	if (hs_cfg_str(m, path, "fabric_profile", NULL, 0, &f, err))
		return -1;
	if (!f)
		return 0;
	const hs_ynode *k = hs_yaml_get(m, "fabric_profile");
	const char *file = k->file ? k->file : "";
	const char *slash = strrchr(file, '/');
	int n;
	if (f[0] == '/' || !slash || file[0] == '<')
		n = snprintf(g->fabric_profile, sizeof g->fabric_profile, "%s", f);
	else
		n = snprintf(g->fabric_profile, sizeof g->fabric_profile, "%.*s/%s", (int)(slash - file), file, f);
	if (n < 0 || (size_t)n >= sizeof g->fabric_profile || !*f)
		return hs_cfg_err(k, err, path, "fabric_profile", "'%s': expected a file name of at most %zu characters", f,
				  sizeof g->fabric_profile - 1);
	snprintf(g->fabric_profile_at, sizeof g->fabric_profile_at, "%s:%d:%d", file, k->line, k->col);
	return 0;
}

static int parse_group(const hs_ynode *m, const char *path, int idx, hs_node_group *g, hs_err *err)
{
	static const char *const known[] = {"name", "nodes", "gpus_per_node", "gpu", "scaleup", "nic",
					    "fabric_profile", "host", NULL};
	if (hs_cfg_known(m, path, known,
			 "a node group mapping {name, nodes, gpus_per_node, gpu, scaleup, nic, fabric_profile, host}", err))
		return -1;
	memset(g, 0, sizeof *g);
	const char *name;
	char defname[32];
	snprintf(defname, sizeof defname, "group%d", idx);
	int64_t nodes, gpn;
	if (hs_cfg_str(m, path, "name", defname, 0, &name, err) ||
	    hs_cfg_int(m, path, "nodes", 1, 1 << 20, 1, 0, &nodes, err) ||
	    hs_cfg_int(m, path, "gpus_per_node", 1, 1024, 8, 0, &gpn, err))
		return -1;
	if (strlen(name) >= sizeof g->name)
		return hs_cfg_err(hs_yaml_get(m, "name"), err, path, "name", "'%s' is too long (expected at most %zu characters)",
				  name, sizeof g->name - 1);
	snprintf(g->name, sizeof g->name, "%s", name);
	g->nodes = (int)nodes;
	g->gpus_per_node = (int)gpn;
	if ((int64_t)g->nodes * g->gpus_per_node > (1 << 24))
		return hs_cfg_err(m, err, path, "", "%d nodes x %d GPUs is too large (expected at most %d devices)",
				  g->nodes, g->gpus_per_node, 1 << 24);

	char sub[256];
	const hs_ynode *gpu = hs_yaml_get(m, "gpu");
	snprintf(sub, sizeof sub, "%s.gpu", path);
	if (!gpu)
		return hs_cfg_err(m, err, path, "gpu", "missing required key (expected a built-in device name such as "
				  "H100-SXM-80GB, or a mapping that defines one)");
	if (hs_device_from_yaml(gpu, sub, &g->gpu, err))
		return -1;

	/* Scale-up and NIC mappings are optional; absent ones take every default. */
	static const hs_ynode empty = {.kind = HS_Y_MAP};
	const hs_ynode *su = hs_yaml_get(m, "scaleup");
	snprintf(sub, sizeof sub, "%s.scaleup", path);
	if (parse_scaleup(su ? su : &empty, sub, g, err))
		return -1;
	const hs_ynode *nic = hs_yaml_get(m, "nic");
	snprintf(sub, sizeof sub, "%s.nic", path);
	if (parse_nic(nic ? nic : &empty, sub, g, err))
		return -1;
	snprintf(sub, sizeof sub, "%s.host", path);
	if (hs_host_from_yaml(hs_yaml_get(m, "host"), sub, &g->host, err))
		return -1;
	return fabric_profile_key(m, path, g, err);
}

/* `fabric.switches` and `fabric.links` of kind explicit. Endpoint names: gpu<i> or a listed switch. */
static int endpoint(const hs_ynode *n, const char *path, const hs_fabric_spec *f, int ngpus, int *out, hs_err *err)
{
	if (!n || n->kind != HS_Y_SCALAR)
		return hs_cfg_err(n, err, path, "", "expected an endpoint name (gpu<i> or a switch name)");
	if (strncmp(n->str, "gpu", 3) == 0 && n->str[3] >= '0' && n->str[3] <= '9') {
		char *end;
		long v = strtol(n->str + 3, &end, 10);
		if (*end || v >= ngpus)
			return hs_cfg_err(n, err, path, "", "'%s' is not a device of the cluster (expected gpu0 to gpu%d)",
					  n->str, ngpus - 1);
		*out = (int)v;
		return 0;
	}
	for (int i = 0; i < f->nswitches; i++)
		if (strcmp(f->switch_names[i], n->str) == 0) {
			*out = ngpus + i;
			return 0;
		}
	return hs_cfg_err(n, err, path, "", "'%s' names no switch of fabric.switches and no device (expected gpu<i> "
			  "or a switch name)", n->str);
}

static int parse_explicit(const hs_ynode *m, const char *path, hs_fabric_spec *f, int ngpus, hs_err *err)
{
	const hs_ynode *sw = hs_yaml_get(m, "switches"), *ls = hs_yaml_get(m, "links");
	char sub[256];
	if (sw) {
		if (sw->kind != HS_Y_SEQ)
			return hs_cfg_err(sw, err, path, "switches", "expected a list of switch names");
		f->nswitches = (int)sw->n;
		f->switch_names = hs_xcalloc(sw->n ? sw->n : 1, sizeof *f->switch_names);
		for (size_t i = 0; i < sw->n; i++) {
			const hs_ynode *v = sw->vals[i];
			snprintf(sub, sizeof sub, "%s.switches[%zu]", path, i);
			if (v->kind != HS_Y_SCALAR || strlen(v->str) >= 64 || (strncmp(v->str, "gpu", 3) == 0))
				return hs_cfg_err(v, err, sub, "", "expected a switch name under 64 characters, not gpu<i>");
			for (size_t j = 0; j < i; j++)
				if (strcmp(f->switch_names[j], v->str) == 0)
					return hs_cfg_err(v, err, sub, "", "'%s' is already switches[%zu] (expected each switch "
							  "named once)", v->str, j);
			snprintf(f->switch_names[i], 64, "%s", v->str);
		}
	}
	if (!ls || ls->kind != HS_Y_SEQ || ls->n == 0)
		return hs_cfg_err(ls ? ls : m, err, path, "links",
				  "kind explicit needs a non-empty list of links {from, to, bandwidth, latency}");
	f->nxlinks = (int)ls->n;
	f->xlinks = hs_xcalloc(ls->n, sizeof *f->xlinks);
	for (size_t i = 0; i < ls->n; i++) {
		static const char *const known[] = {"from", "to", "bandwidth", "latency", "duplex", NULL};
		const hs_ynode *l = ls->vals[i];
		hs_xlink *x = &f->xlinks[i];
		snprintf(sub, sizeof sub, "%s.links[%zu]", path, i);
		if (hs_cfg_known(l, sub, known, "a link {from: gpu0, to: sw0, bandwidth: 50 GB/s, latency: 1 us}", err))
			return -1;
		char kp[300];
		snprintf(kp, sizeof kp, "%s.from", sub);
		const hs_ynode *a = hs_yaml_get(l, "from"), *b = hs_yaml_get(l, "to");
		if (!a || !b)
			return hs_cfg_err(l, err, sub, a ? "to" : "from", "missing required key (expected an endpoint name)");
		if (endpoint(a, kp, f, ngpus, &x->a, err))
			return -1;
		snprintf(kp, sizeof kp, "%s.to", sub);
		if (endpoint(b, kp, f, ngpus, &x->b, err))
			return -1;
		if (x->a == x->b)
			return hs_cfg_err(b, err, sub, "to", "a link joins two different endpoints ('%s' twice)", b->str);
		if (hs_cfg_num(l, sub, "bandwidth", HS_U_BW, 1, 1e18, 0, 1, &x->bw, err) ||
		    hs_cfg_num(l, sub, "latency", HS_U_TIME, 0, 1, 0, 0, &x->lat, err) ||
		    hs_cfg_bool(l, sub, "duplex", 1, &x->duplex, err))
			return -1;
		/* One link per direction between two endpoints: a second one would be summed by some readers and
		 * shadowed by others, and a duplex link beside a one-way one says two things about one direction. */
		for (size_t j = 0; j < i; j++) {
			const hs_xlink *y = &f->xlinks[j];
			int same = y->a == x->a && y->b == x->b, rev = y->a == x->b && y->b == x->a;
			if (!same && !rev)
				continue;
			if (x->duplex != y->duplex && (same || x->duplex || y->duplex))
				return hs_cfg_err(l, err, sub, "duplex", "'%s' - '%s' is %s here but links[%zu] is %s "
						  "(expected one duplex link, or one one-way link per direction)", a->str,
						  b->str, x->duplex ? "a duplex link" : "a one-way link", j,
						  y->duplex ? "a duplex link between them" : "a one-way link between them");
			if (same || x->duplex)
				return hs_cfg_err(l, err, sub, "", "'%s' - '%s' is already links[%zu] (expected one link "
						  "per pair and direction; give it the bandwidth of both)", a->str, b->str, j);
		}
	}
	return 0;
}

/* Near-cubic factorisation of the node count over a torus's dimensions, largest dimension first. */
static void cubic_dims(hs_fabric_spec *f, int nnodes)
{
	int want = f->props->dims, rest = nnodes;
	for (int i = 0; i < want; i++) {
		int left = want - i, best = rest;
		for (int x = 1; x <= rest; x++)
			if (rest % x == 0 && pow(x, left) >= rest - 1e-9) {
				best = x;
				break;
			}
		f->dims[i] = best;
		rest /= best;
	}
}

static int parse_fabric(const hs_ynode *m, const char *path, hs_fabric_spec *f, const hs_cluster *c, hs_err *err)
{
	static const char *const known[] = {"kind", "tiers", "oversubscription", "latency", "in_network_reduction",
					    "radix", "planes", "dims", "routers_per_group", "nics_per_router",
					    "link_bandwidth", "wan_bandwidth", "wan_latency", "switches", "links", "ecmp", NULL};
	static const char *const ecmp_names[] = {"hash", "dmodk", NULL};
	if (hs_cfg_known(m, path, known,
			 "a mapping such as {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}", err))
		return -1;
	int64_t tiers, radix, planes, rpg, npr;
	if (hs_kind_cfg_fabric(m, path, &f->props, err) ||
	    hs_cfg_int(m, path, "tiers", 1, 3, 2, 0, &tiers, err) ||
	    hs_cfg_num(m, path, "oversubscription", HS_U_COUNT, 1, 1e6, 1, 0, &f->oversubscription, err) ||
	    hs_cfg_num(m, path, "latency", HS_U_TIME, 0, 1, DEF_FABRIC_LAT, 0, &f->latency, err) ||
	    hs_cfg_bool(m, path, "in_network_reduction", 0, &f->reduce, err) ||
	    hs_cfg_enum(m, path, "ecmp", ecmp_names, HS_ECMP_HASH, &f->ecmp, err) ||
	    hs_cfg_int(m, path, "radix", 4, 4096, DEF_RADIX, 0, &radix, err) ||
	    hs_cfg_int(m, path, "planes", 1, 64, 2, 0, &planes, err) ||
	    hs_cfg_int(m, path, "routers_per_group", 1, 4096, 4, 0, &rpg, err) ||
	    hs_cfg_int(m, path, "nics_per_router", 1, 4096, 8, 0, &npr, err) ||
	    hs_cfg_num(m, path, "link_bandwidth", HS_U_BW, 1, 1e18, c->groups[0].nic_bw, 0, &f->link_bw, err) ||
	    hs_cfg_num(m, path, "wan_bandwidth", HS_U_BW, 1, 1e18, DEF_WAN_BW, 0, &f->wan_bw, err) ||
	    hs_cfg_num(m, path, "wan_latency", HS_U_TIME, 0, 10, DEF_WAN_LAT, 0, &f->wan_lat, err))
		return -1;
	snprintf(f->kind, sizeof f->kind, "%s", f->props->name);
	f->tiers = (int)tiers;
	f->radix = (int)radix;
	f->planes = (int)planes;
	f->routers_per_group = (int)rpg;
	f->nics_per_router = (int)npr;
	const hs_ynode *d = hs_yaml_get(m, "dims");
	int want = f->props->dims;
	char list[128];
	if (d) {
		if (!want)
			return hs_cfg_err(d, err, path, "dims", "only a %s fabric has dims (kind is '%s')",
					  torus_fabrics(list, sizeof list), f->kind);
		if (d->kind != HS_Y_SEQ || (int)d->n != want)
			return hs_cfg_err(d, err, path, "dims", "expected a list of %d sizes such as [4, 4%s]", want,
					  want == 3 ? ", 4" : "");
		int64_t prod = 1;
		for (int i = 0; i < want; i++) {
			double v;
			char kp[32];
			snprintf(kp, sizeof kp, "dims[%d]", i);
			if (hs_cfg_node_num(d->vals[i], path, kp, HS_U_COUNT, 1, 1 << 20, &v, err))
				return -1;
			f->dims[i] = (int)v;
			prod *= f->dims[i];
		}
		if (prod != c->nnodes)
			return hs_cfg_err(d, err, path, "dims", "the torus has %lld positions for %d nodes (expected a "
					  "product equal to the node count)", (long long)prod, c->nnodes);
	} else if (want) {
		cubic_dims(f, c->nnodes);
	}
	if (f->props->lists_links)
		return parse_explicit(m, path, f, c->ngpus, err);
	if (hs_yaml_get(m, "links") || hs_yaml_get(m, "switches"))
		return hs_cfg_err(hs_yaml_get(m, "links") ? hs_yaml_get(m, "links") : hs_yaml_get(m, "switches"), err,
				  path, hs_yaml_get(m, "links") ? "links" : "switches",
				  "only kind %s lists its own switches and links (kind is '%s')",
				  listing_fabrics(list, sizeof list), f->kind);
	return 0;
}

/* "2.19", "2.19.3" or "2.19.3-1" as major*100 + minor; -1 when it is not such a version. */
static int nccl_version_parse(const char *s)
{
	char *end;
	long major = strtol(s, &end, 10);
	if (end == s || *end != '.' || major < 1 || major > 99)
		return -1;
	const char *m = end + 1;
	long minor = strtol(m, &end, 10);
	if (end == m || minor < 0 || minor > 99)
		return -1;
	if (*end == '.') { /* a patch release, and an optional "-1" package suffix */
		const char *p = end + 1;
		long patch = strtol(p, &end, 10);
		if (end == p || patch < 0)
			return -1;
		if (*end == '-') {
			p = end + 1;
			(void)strtol(p, &end, 10);
			if (end == p)
				return -1;
		}
	}
	return *end ? -1 : (int)(major * 100 + minor);
}

/* cluster.nccl: the communication library the jobs run, {version: "2.19.3"}. Its tuner's constants differ by
 * release (sim/coll/nccl_tuner.h); 2.12 is the oldest modelled there. */
static int parse_nccl(const hs_ynode *cl, const char *path, hs_cluster *c, hs_err *err)
{
	const hs_ynode *m = hs_yaml_get(cl, "nccl");
	if (!m)
		return 0;
	char sub[256];
	snprintf(sub, sizeof sub, "%s.nccl", path);
	static const char *const known[] = {"version", NULL};
	if (m->kind != HS_Y_MAP)
		return hs_cfg_err(m, err, path, "nccl", "expected a mapping {version: \"2.19.3\"}");
	if (hs_cfg_known(m, sub, known, "a mapping {version}", err))
		return -1;
	const char *v;
	if (hs_cfg_str(m, sub, "version", NULL, 1, &v, err))
		return -1;
	int ver = nccl_version_parse(v);
	if (ver < 0)
		return hs_cfg_err(hs_yaml_get(m, "version"), err, sub, "version",
				  "'%s': expected an NCCL release such as \"2.19\" or \"2.19.3\"", v);
	if (ver < 212)
		return hs_cfg_err(hs_yaml_get(m, "version"), err, sub, "version",
				  "'%s': the oldest NCCL release modelled is 2.12 (expected 2.12 or later)", v);
	c->nccl_ver = ver;
	return 0;
}

int hs_cluster_nccl_version(const hs_cluster *c) { return c->nccl_ver; }

hs_cluster *hs_cluster_from_yaml(const hs_ynode *cl, const char *path, hs_err *err)
{
	static const char *const known[] = {"groups", "fabric", "fabric_profile", "nccl", NULL};
	if (!path || !*path)
		path = "cluster";
	if (!cl) {
		hs_err_set(err, HS_EINPUT, "%s: missing (expected a mapping with groups: and fabric:)", path);
		return NULL;
	}
	if (hs_cfg_known(cl, path, known, "a mapping with groups: and fabric:", err))
		return NULL;
	const hs_ynode *gs = hs_yaml_get(cl, "groups");
	if (!gs) {
		hs_cfg_err(cl, err, path, "groups", "missing required key (expected a list of node groups)");
		return NULL;
	}
	if (gs->kind != HS_Y_SEQ || gs->n == 0) {
		hs_cfg_err(gs, err, path, "groups", "expected a non-empty list of node groups");
		return NULL;
	}
	hs_cluster *c = hs_xcalloc(1, sizeof *c);
	atomic_init(&c->memo, NULL);
	c->ngroups = (int)gs->n;
	c->groups = hs_xcalloc(gs->n, sizeof *c->groups);
	c->gpu0 = hs_xcalloc(gs->n + 1, sizeof *c->gpu0);
	c->node0 = hs_xcalloc(gs->n + 1, sizeof *c->node0);
	c->dom0 = hs_xcalloc(gs->n + 1, sizeof *c->dom0);
	c->fab = hs_xcalloc(gs->n, sizeof *c->fab);
	hs_node_group all = {0}; /* the cluster's fabric_profile, for groups that name none */
	if (fabric_profile_key(cl, path, &all, err) || parse_nccl(cl, path, c, err))
		goto fail;
	char sub[256];
	for (size_t i = 0; i < gs->n; i++) {
		snprintf(sub, sizeof sub, "%s.groups[%zu]", path, i);
		if (parse_group(gs->vals[i], sub, (int)i, &c->groups[i], err))
			goto fail;
		if (!c->groups[i].fabric_profile[0]) {
			memcpy(c->groups[i].fabric_profile, all.fabric_profile, sizeof all.fabric_profile);
			memcpy(c->groups[i].fabric_profile_at, all.fabric_profile_at, sizeof all.fabric_profile_at);
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->groups[j].name, c->groups[i].name) == 0) {
				hs_cfg_err(hs_yaml_get(gs->vals[i], "name") ? hs_yaml_get(gs->vals[i], "name")
									     : gs->vals[i],
					   err, sub, "name", "'%s' is already the name of groups[%zu] (expected unique names)",
					   c->groups[i].name, j);
				goto fail;
			}
		int64_t ng = (int64_t)c->gpu0[i] + (int64_t)c->groups[i].nodes * c->groups[i].gpus_per_node;
		if (ng > (1 << 24)) {
			hs_cfg_err(gs->vals[i], err, sub, "", "the cluster exceeds %d devices", 1 << 24);
			goto fail;
		}
		c->gpu0[i + 1] = (int)ng;
		c->node0[i + 1] = c->node0[i] + c->groups[i].nodes;
		c->dom0[i + 1] = c->dom0[i] + c->groups[i].nodes / c->groups[i].nodes_per_domain;
	}
	c->ngpus = c->gpu0[c->ngroups];
	c->nnodes = c->node0[c->ngroups];

	static const hs_ynode empty = {.kind = HS_Y_MAP};
	const hs_ynode *fab = hs_yaml_get(cl, "fabric");
	snprintf(sub, sizeof sub, "%s.fabric", path);
	if (parse_fabric(fab ? fab : &empty, sub, &c->fabric, c, err))
		goto fail;
	const hs_ynode *at = fab ? fab : cl;
	snprintf(c->fabric.where, sizeof c->fabric.where, "%s:%d:%d: %s", at->file ? at->file : "?", at->line, at->col,
		 sub);
	return c;
fail:
	hs_cluster_free(c);
	return NULL;
}

hs_cluster *hs_cluster_sub(const hs_cluster *c, int node0, int nnodes, hs_err *err)
{
	if (nnodes < 1 || node0 < 0 || node0 + nnodes > c->nnodes) {
		hs_err_set(err, HS_EINPUT, "nodes %d-%d are outside the cluster's %d nodes (expected nodes 0-%d)", node0,
			   node0 + nnodes - 1, c->nnodes, c->nnodes - 1);
		return NULL;
	}
	if (c->fabric.props->lists_links) {
		/* its switches and links name the whole cluster's devices (gpu<i>): no part of it is a fabric */
		hs_err_set(err, HS_EINPUT, "a fabric of kind '%s' lists links between the whole cluster's devices and "
			   "cannot be divided among jobs (expected a fabric kind that a builder lays out)", c->fabric.kind);
		return NULL;
	}
	hs_cluster *s = hs_xcalloc(1, sizeof *s);
	atomic_init(&s->memo, NULL);
	s->nccl_ver = c->nccl_ver;
	s->groups = hs_xcalloc((size_t)c->ngroups, sizeof *s->groups);
	s->gpu0 = hs_xcalloc((size_t)c->ngroups + 1, sizeof *s->gpu0);
	s->node0 = hs_xcalloc((size_t)c->ngroups + 1, sizeof *s->node0);
	s->dom0 = hs_xcalloc((size_t)c->ngroups + 1, sizeof *s->dom0);
	s->fab = hs_xcalloc((size_t)c->ngroups, sizeof *s->fab);
	for (int g = 0; g < c->ngroups; g++) {
		int a = node0 > c->node0[g] ? node0 : c->node0[g];
		int b = node0 + nnodes < c->node0[g + 1] ? node0 + nnodes : c->node0[g + 1];
		if (a >= b)
			continue;
		const hs_node_group *from = &c->groups[g];
		int npd = from->nodes_per_domain;
		if ((a - c->node0[g]) % npd || (b - a) % npd) {
			/* a scale-up domain that spans nodes (an NVL72 rack) is one switch: half of it is no domain */
			hs_err_set(err, HS_EINPUT, "nodes %d-%d split a scale-up domain of group '%s' (its domains are %d "
				   "nodes each, from node %d; expected a range of whole domains)", node0,
				   node0 + nnodes - 1, from->name, npd, c->node0[g]);
			hs_cluster_free(s);
			return NULL;
		}
		int i = s->ngroups++;
		s->groups[i] = *from;
		s->groups[i].nodes = b - a;
		s->gpu0[i + 1] = s->gpu0[i] + (b - a) * from->gpus_per_node;
		s->node0[i + 1] = s->node0[i] + (b - a);
		s->dom0[i + 1] = s->dom0[i] + (b - a) / npd;
	}
	s->ngpus = s->gpu0[s->ngroups];
	s->nnodes = s->node0[s->ngroups];
	s->fabric = c->fabric;
	s->fabric.switch_names = NULL;
	s->fabric.xlinks = NULL;
	if (s->fabric.props->dims)
		cubic_dims(&s->fabric, s->nnodes); /* the part's own torus, as if it were the whole machine */
	return s;
}

void hs_cluster_free(hs_cluster *c)
{
	if (!c)
		return;
	free(c->groups);
	free(c->fabric.switch_names);
	free(c->fabric.xlinks);
	free(c->gpu0);
	free(c->node0);
	free(c->dom0);
	for (int g = 0; c->fab && g < c->ngroups; g++)
		if (c->fab[g])
			c->fab_free(c->fab[g]);
	free(c->fab);
	struct memo *m = atomic_load(&c->memo);
	if (m) {
		m->free_fn(m->p);
		free(m);
	}
	free(c);
}

const struct hs_fabprof *hs_cluster_fabprof(const hs_cluster *c, int g)
{
	return g >= 0 && g < c->ngroups ? c->fab[g] : NULL;
}

void hs_cluster_set_fabprof(hs_cluster *c, int g, struct hs_fabprof *p, void (*free_fn)(struct hs_fabprof *))
{
	if (g < 0 || g >= c->ngroups)
		return;
	if (c->fab[g])
		c->fab_free(c->fab[g]);
	c->fab[g] = p;
	c->fab_free = free_fn;
}

void *hs_cluster_memo(const hs_cluster *c)
{
	struct memo *m = atomic_load(&((hs_cluster *)c)->memo);
	return m ? m->p : NULL;
}

void *hs_cluster_memo_set(const hs_cluster *c, void *p, void (*free_fn)(void *))
{
	/* The memo is a cache, not part of what the cluster describes, so setting it through a const pointer is
	 * fine; the compare-and-swap makes the first setter win. */
	struct memo *m = hs_xmalloc(sizeof *m), *old = NULL;
	*m = (struct memo){p, free_fn};
	if (atomic_compare_exchange_strong(&((hs_cluster *)c)->memo, &old, m))
		return p;
	free_fn(p);
	free(m);
	return old->p;
}

int hs_cluster_ngpus(const hs_cluster *c) { return c->ngpus; }
int hs_cluster_ngroups(const hs_cluster *c) { return c->ngroups; }
int hs_cluster_nnodes(const hs_cluster *c) { return c->nnodes; }
const hs_node_group *hs_cluster_group(const hs_cluster *c, int g) { return &c->groups[g]; }

double hs_cluster_host_link_bw(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	return g < 0 || !c->groups[g].host.described ? 0 : c->groups[g].host.link_bw;
}

double hs_cluster_host_mem_bw(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	return g < 0 ? 0 : c->groups[g].host.mem_bw;
}
const hs_fabric_spec *hs_cluster_fabric(const hs_cluster *c) { return &c->fabric; }

int hs_cluster_group_of(const hs_cluster *c, int gpu)
{
	if (gpu < 0 || gpu >= c->ngpus)
		return -1;
	/* Binary search over the prefix sums: clusters have few groups, but devices are many. */
	int lo = 0, hi = c->ngroups - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (c->gpu0[mid] <= gpu)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int hs_cluster_node_of(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	if (g < 0)
		return -1;
	return c->node0[g] + (gpu - c->gpu0[g]) / c->groups[g].gpus_per_node;
}

int hs_cluster_local_rank(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	if (g < 0)
		return -1;
	return (gpu - c->gpu0[g]) % c->groups[g].gpus_per_node;
}

int hs_cluster_first_gpu(const hs_cluster *c, int g) { return c->gpu0[g]; }
int hs_cluster_first_node(const hs_cluster *c, int g) { return c->node0[g]; }

const hs_device_type *hs_cluster_device(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	return g < 0 ? NULL : &c->groups[g].gpu;
}

int hs_cluster_ndomains(const hs_cluster *c) { return c->dom0[c->ngroups]; }

int hs_cluster_domain_of(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	if (g < 0)
		return -1;
	return c->dom0[g] + (gpu - c->gpu0[g]) / c->groups[g].domain;
}

int hs_cluster_node_domain(const hs_cluster *c, int node)
{
	for (int g = c->ngroups - 1; g >= 0; g--)
		if (c->node0[g] <= node)
			return c->dom0[g] + (node - c->node0[g]) / c->groups[g].nodes_per_domain;
	return -1;
}

int hs_cluster_domain_group(const hs_cluster *c, int dom)
{
	for (int g = c->ngroups - 1; g >= 0; g--)
		if (c->dom0[g] <= dom)
			return g;
	return -1;
}

int hs_cluster_domain_first_node(const hs_cluster *c, int dom)
{
	int g = hs_cluster_domain_group(c, dom);
	return g < 0 ? -1 : c->node0[g] + (dom - c->dom0[g]) * c->groups[g].nodes_per_domain;
}

double hs_cluster_gpu_pcie_bw(const hs_cluster *c, int gpu)
{
	int g = hs_cluster_group_of(c, gpu);
	return g < 0 ? 0 : c->groups[g].pcie_bw;
}

double hs_cluster_domain_nic_bw(const hs_cluster *c, int dom)
{
	int g = hs_cluster_domain_group(c, dom);
	if (g < 0)
		return 0;
	const hs_node_group *ng = &c->groups[g];
	return ng->nic_bw * ng->nics_per_node * ng->nodes_per_domain;
}
