/* hs_kind: the tables of scale-up and fabric kinds (topology/kind.h). */
#include "topology/kind.h"

#include "config/cfg.h"

/* The order is the one docs/topology.md and the "expected one of" messages list; the first is the default. */
static const hs_scaleup_kind scaleup_kinds[] = {
	/* NVIDIA GB200 NVL72 datasheet (2024): one NVLink domain of 72 Blackwell GPUs in 18 compute trays of 4,
	 * NVLink 5 at 1.8 TB/s per GPU (both directions) through the rack's NVLink switch trays. An NVL36x2 is
	 * two racks of 36 GPUs (9 trays of 4 each) whose switch trays are cabled to each other into one 72-GPU
	 * domain (NVIDIA GB200 NVL72 and NVL36x2 configurations, GTC 2024; SemiAnalysis, "GB200 Hardware
	 * Architecture", July 2024: half of each NVSwitch's ports go to the other rack, so the halves are joined
	 * without blocking).
	 * name             layout        switch_reduce reduce_default pcie domain parts spans */
	{"nvswitch",      HS_UP_SWITCH, 1, 0, 0, 0,  1, 1},
	{"nvl72",         HS_UP_SWITCH, 1, 1, 0, 72, 1, 1},
	{"nvl36x2",       HS_UP_SWITCH, 1, 1, 0, 72, 2, 1},
	{"nvlink-mesh",   HS_UP_MESH,   0, 0, 0, 0,  1, 0},
	{"nvlink-bridge", HS_UP_BRIDGE, 0, 0, 0, 0,  1, 0},
	{"pcie",          HS_UP_PCIE,   0, 0, 1, 0,  1, 0},
	{"xgmi",          HS_UP_MESH,   0, 0, 0, 0,  1, 0},
	{"none",          HS_UP_NONE,   0, 0, 0, 0,  1, 0},
};
#define NSCALEUP ((int)(sizeof scaleup_kinds / sizeof scaleup_kinds[0]))

static const hs_fabric_kind fabric_kinds[] = {
	/* name              layout            clos rail_aligned dims lists_links routed */
	{"fat-tree",       HS_OUT_FAT_TREE,  1, 0, 0, 0, 1},
	{"rail-optimized", HS_OUT_RAILS,     1, 1, 0, 0, 1},
	{"dragonfly",      HS_OUT_DRAGONFLY, 0, 0, 0, 0, 1},
	{"torus2d",        HS_OUT_TORUS,     0, 0, 2, 0, 1},
	{"torus3d",        HS_OUT_TORUS,     0, 0, 3, 0, 1},
	{"multi-plane",    HS_OUT_PLANES,    1, 1, 0, 0, 1},
	{"wan",            HS_OUT_WAN,       0, 0, 0, 0, 1},
	/* explicit graphs have no NICs for the router's NIC-aware paths; none has no fabric at all */
	{"explicit",       HS_OUT_EXPLICIT,  0, 0, 0, 1, 0},
	{"none",           HS_OUT_NONE,      0, 0, 0, 0, 0},
};
#define NFABRIC ((int)(sizeof fabric_kinds / sizeof fabric_kinds[0]))

int hs_kind_nscaleup(void) { return NSCALEUP; }
const hs_scaleup_kind *hs_kind_scaleup(int i) { return &scaleup_kinds[i]; }
int hs_kind_nfabric(void) { return NFABRIC; }
const hs_fabric_kind *hs_kind_fabric(int i) { return &fabric_kinds[i]; }

/* hs_cfg_enum takes a NULL-terminated list of names: gathered from the table on each call (a parse reads a
 * handful of kinds), so the names are written once, in the table. */
int hs_kind_cfg_scaleup(const hs_ynode *m, const char *path, const hs_scaleup_kind **out, hs_err *err)
{
	const char *names[NSCALEUP + 1];
	for (int i = 0; i < NSCALEUP; i++)
		names[i] = scaleup_kinds[i].name;
	names[NSCALEUP] = NULL;
	int k;
	if (hs_cfg_enum(m, path, "kind", names, 0, &k, err))
		return -1;
	*out = &scaleup_kinds[k];
	return 0;
}

int hs_kind_cfg_fabric(const hs_ynode *m, const char *path, const hs_fabric_kind **out, hs_err *err)
{
	const char *names[NFABRIC + 1];
	for (int i = 0; i < NFABRIC; i++)
		names[i] = fabric_kinds[i].name;
	names[NFABRIC] = NULL;
	int k;
	if (hs_cfg_enum(m, path, "kind", names, 0, &k, err))
		return -1;
	*out = &fabric_kinds[k];
	return 0;
}
