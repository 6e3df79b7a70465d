/* The host side of a node: the link between each GPU and host memory (PCIe of a generation and lane count,
 * or NVLink-C2C on a Grace superchip), and the host memory a CPU-side step runs at. A node group describes it
 * under `host:`; a group without one has no host link described, and what needs one (offload) says so. The
 * same link bounds any host <-> device copy, so it is a property of the topology, read with the accessors. */
#ifndef HS_HOST_H
#define HS_HOST_H

#include "config/yaml.h"
#include "sim/base/err.h"

typedef struct hs_host_spec {
	int described;        /* the group has a `host:` mapping */
	int c2c;              /* NVLink-C2C (Grace), else PCIe */
	int generation, lanes;/* PCIe */
	double link_bw;       /* bytes/s per GPU per direction between the GPU and host memory */
	double mem_bw;        /* bytes/s of host memory per node, shared by its GPUs' CPU work; 0: not given */
	double mem_bytes;     /* host memory per node; 0: not given (not checked) */
	char at[320];         /* "file:line:col" of the `host` key, for messages found later */
} hs_host_spec;

/* Parse `m` (a group's `host:` mapping, at key path `path`) into *h; NULL m: not described. */
int hs_host_from_yaml(const hs_ynode *m, const char *path, hs_host_spec *h, hs_err *err);
/* Bytes/s per direction of one PCIe link of `generation` (3-6) and `lanes`: the signalling rate times the line
 * code's efficiency (PCI-SIG base specifications; host.c cites each). 0 for a generation it does not know. */
double hs_host_pcie_bw(int generation, int lanes);

#endif
