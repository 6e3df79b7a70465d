/* hs_host: the node's host link and host memory (see host.h). */
#include "topology/host.h"

#include <stdio.h>
#include <string.h>

#include "config/cfg.h"

/* Per lane and direction, bytes/s, from the PCI-SIG base specifications' signalling rates and line codes:
 *   Gen3 (3.0, 2010):  8 GT/s, 128b/130b ->  0.985 GB/s
 *   Gen4 (4.0, 2017): 16 GT/s, 128b/130b ->  1.969 GB/s  (x16: 31.5 GB/s)
 *   Gen5 (5.0, 2019): 32 GT/s, 128b/130b ->  3.938 GB/s  (x16: 63.0 GB/s)
 *   Gen6 (6.0, 2022): 64 GT/s PAM4 in 256-byte FLITs of which 242 carry TLP bytes (FEC and CRC take the rest)
 *                     ->  7.563 GB/s (x16: 121 GB/s)
 * These are link rates: DMA copies measure below them (TLP headers; a Gen4 x16 H2D copy of pinned memory reaches
 * about 25 GB/s, Gen5 about 55 GB/s), so `host.bandwidth` takes a measured figure instead. */
double hs_host_pcie_bw(int generation, int lanes)
{
	double per_lane;
	switch (generation) {
	case 3: per_lane = 8e9 * 128 / 130 / 8; break;
	case 4: per_lane = 16e9 * 128 / 130 / 8; break;
	case 5: per_lane = 32e9 * 128 / 130 / 8; break;
	case 6: per_lane = 64e9 * 242 / 256 / 8; break;
	default: return 0;
	}
	return per_lane * lanes;
}

/* NVLink-C2C between Grace and Hopper (or Blackwell): 900 GB/s total, 450 GB/s per direction (NVIDIA GH200
 * Grace Hopper Superchip datasheet, 2023; the same link on GB200). */
#define C2C_BW 450e9

int hs_host_from_yaml(const hs_ynode *m, const char *path, hs_host_spec *h, hs_err *err)
{
	memset(h, 0, sizeof *h);
	if (!m)
		return 0;
	static const char *const known[] = {"link", "generation", "lanes", "bandwidth", "memory_bandwidth", "memory",
					    NULL};
	if (hs_cfg_known(m, path, known, "a mapping such as {link: pcie, generation: 5, lanes: 16, memory_bandwidth: "
			 "300 GB/s} or {link: c2c, memory_bandwidth: 500 GB/s}", err))
		return -1;
	static const char *const links[] = {"pcie", "c2c", NULL};
	int link;
	if (hs_cfg_enum(m, path, "link", links, 0, &link, err))
		return -1;
	h->described = 1;
	h->c2c = link == 1;
	double def = C2C_BW;
	if (!h->c2c) {
		int64_t gen, lanes;
		if (hs_cfg_int(m, path, "generation", 3, 6, 4, 0, &gen, err) ||
		    hs_cfg_int(m, path, "lanes", 1, 32, 16, 0, &lanes, err))
			return -1;
		h->generation = (int)gen;
		h->lanes = (int)lanes;
		def = hs_host_pcie_bw(h->generation, h->lanes);
	} else {
		const char *pcie_only[] = {"generation", "lanes"};
		for (int i = 0; i < 2; i++)
			if (hs_yaml_get(m, pcie_only[i]))
				return hs_cfg_err(hs_yaml_get(m, pcie_only[i]), err, path, pcie_only[i],
						  "a PCIe setting, but link is c2c (expected no %s with c2c)", pcie_only[i]);
	}
	if (hs_cfg_num(m, path, "bandwidth", HS_U_BW, 1, 1e18, def, 0, &h->link_bw, err) ||
	    hs_cfg_num(m, path, "memory_bandwidth", HS_U_BW, 1, 1e18, 0, 0, &h->mem_bw, err) ||
	    hs_cfg_num(m, path, "memory", HS_U_BYTES, 1, 1e18, 0, 0, &h->mem_bytes, err))
		return -1;
	snprintf(h->at, sizeof h->at, "%s:%d:%d", m->file ? m->file : "", m->line, m->col);
	return 0;
}
