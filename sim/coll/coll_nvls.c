/* NVLS (NVLink SHARP): all-reduce inside one NVSwitch domain, the switch reducing and multicasting.
 *
 * Data path (NCCL's NVLS all-reduce, src/device/all_reduce.h, runNvls): rank k owns slice k (S/p) of the
 * buffer. It issues multimem.ld_reduce on slice k: the switch reads slice k from all p GPUs, reduces it and
 * returns S/p to rank k; then multimem.st of the result: rank k sends S/p to the switch, which writes it into
 * all p GPUs. So over its own NVLink ports each GPU
 *   sends    S (its p slices, read by the switch for the p reductions) + S/p (its multicast store),
 *   receives S/p (its reduced slice) + S (the p multicasts),
 * both directions at once: S (1 + 1/p) per direction, against the ring's 2 (p-1)/p S. Latency: up to the
 * switch and back twice (reduce, then multicast); the two overlap across chunks, so 2 hops.
 *
 *   t = 2 a_up + S (1 + 1/p) / (e B_up)
 *
 * with e the fraction of the link the multimem operations reach: NCCL's per-architecture nvlsEfficiency,
 * NCCL 2.28.3 src/graph/tuning.cc (the first release with it; unchanged to 2.30): Hopper 0.85, Blackwell
 * 0.74, none for Volta and Ampere (no NVLS). Example, HGX H100 (p = 8, B_up 450 GB/s, NVLink 4 x 18 links
 * through third-generation NVSwitch, H100 SXM datasheet): S (9/8) / (0.85 x 450 GB/s) = S / 340 GB/s, busbw
 * 2 (7/8) x 340 = 595 GB/s ideal; with NCCL's copies at 0.8 of the link (coll_nccl.c) 476 GB/s.
 *
 * Needs `in_switch_reduction` on the scale-up (topology/cluster.c; docs/collectives.md says which systems
 * have it). Across nodes NCCL runs NVLS-tree (coll_nvls_tree.c), or NVLS with CollNet (SHARP: inswitch). */
#include <string.h>

#include "sim/coll/coll_impl.h"

/* NCCL 2.28.3 tuning.cc nvlsEfficiency by architecture; 1 where NCCL has none (NVLS is not run there by
 * default: topology/cluster.c). */
double hs_coll_nvls_efficiency(const hs_device_type *d)
{
	switch (d->arch) {
	case HS_ARCH_HOPPER: return 0.85;
	case HS_ARCH_BLACKWELL: return 0.74;
	default: return 1;
	}
}

static int supports(const hs_coll_grp *g, enum hs_coll_op op)
{
	return op == HS_COLL_ALL_REDUCE && g->nnodes == 1 && g->ppn > 1 && g->inswitch_up && !g->up_pcie;
}

static double nvls_time(const hs_coll_grp *g, enum hs_coll_op op, double S)
{
	(void)op;
	int p = g->ppn;
	return 2 * g->lat_up + S * (1 + 1.0 / p) / (g->nvls_eff * g->bw_up);
}

const hs_coll_algo_ops hs_coll_nvls = {HS_ALGO_NVLS, supports, nvls_time};
