/* hs_kind: the scale-up kinds a node group may name and the scale-out fabric kinds a cluster may name, one
 * table each, with the properties other modules ask about (has the fabric full bisection, are its NICs on
 * rails, is the scale-up a PCIe tree), so that no module tests a kind by its name. The parser
 * (topology/cluster.c) takes the names, their order and its messages from these tables; the builders
 * (topology/topo.c) dispatch on `layout`. A new kind is one table entry, and a builder if its layout is new.
 * docs/topology.md describes every kind. */
#ifndef HS_KIND_H
#define HS_KIND_H

#include "config/yaml.h"
#include "sim/base/err.h"

/* How a node's GPUs are joined (topology/topo.c builds each). */
enum hs_up_layout {
	HS_UP_SWITCH, /* every GPU to one scale-up switch */
	HS_UP_MESH,   /* all-to-all point-to-point links */
	HS_UP_BRIDGE, /* bridged pairs; the rest through a PCIe switch */
	HS_UP_PCIE,   /* a PCIe switch; without peer-to-peer, through host memory */
	HS_UP_NONE,   /* no scale-up links: devices of a node meet through the NICs */
	HS_UP_LAYOUTS
};

typedef struct hs_scaleup_kind {
	const char *name;         /* what a scenario writes: nvswitch, nvl72, ... */
	enum hs_up_layout layout;
	int switch_reduce;        /* has a switch that can reduce (NVLS): in_switch_reduction is allowed */
	int reduce_default;       /* in_switch_reduction is on unless the scenario says otherwise */
	int pcie;                 /* a PCIe tree: the only kind that may lack peer-to-peer */
	int domain;               /* GPUs in one domain of this kind (72 for a GB200 NVL72 rack), which may span
				   * nodes; 0: the node is the domain, whatever its size */
	int parts;                /* switches the domain is split over, joined switch to switch (2 for NVL36x2:
				   * two racks of 36); 1: one switch */
	int spans;                /* a domain may span nodes (`domain:` is allowed): switch layouts only */
} hs_scaleup_kind;

/* How the nodes' NICs are joined (topology/topo.c builds each but EXPLICIT, which the scenario lists). */
enum hs_out_layout {
	HS_OUT_FAT_TREE,
	HS_OUT_RAILS,     /* rail-optimised: NIC r of every node on rail r's leaves, one spine tier */
	HS_OUT_PLANES,    /* multi-plane: one fat-tree per plane, planes never meet */
	HS_OUT_DRAGONFLY,
	HS_OUT_TORUS,
	HS_OUT_WAN,       /* a fat-tree per site, gateways joined by WAN links */
	HS_OUT_EXPLICIT,  /* switches and links listed by the scenario; no NICs */
	HS_OUT_NONE,      /* no scale-out fabric */
	HS_OUT_LAYOUTS
};

typedef struct hs_fabric_kind {
	const char *name;         /* what a scenario writes: fat-tree, rail-optimized, ... */
	enum hs_out_layout layout;
	int clos;                 /* a Clos of leaves and spines: full bisection unless oversubscribed */
	int rail_aligned;         /* NICs of one local index meet in their own rail or plane: when not
				   * oversubscribed, traffic of different local ranks shares no fabric link */
	int dims;                 /* a torus of this many dimensions; 0: not a torus */
	int lists_links;          /* the scenario lists the switches and links (`switches:`, `links:`) */
	int routed;               /* NICs joined by built switches: route-aware collective costs apply */
} hs_fabric_kind;

/* The tables, in the order the scenario reference and the "expected one of" messages list them. */
int hs_kind_nscaleup(void);
const hs_scaleup_kind *hs_kind_scaleup(int i);
int hs_kind_nfabric(void);
const hs_fabric_kind *hs_kind_fabric(int i);

/* Read `kind` of a scale-up (fabric) mapping: the first table entry when absent; an unknown name is an
 * error that lists the table's names and suggests the nearest (config/cfg.h, hs_cfg_enum). */
int hs_kind_cfg_scaleup(const hs_ynode *m, const char *path, const hs_scaleup_kind **out, hs_err *err);
int hs_kind_cfg_fabric(const hs_ynode *m, const char *path, const hs_fabric_kind **out, hs_err *err);

#endif
