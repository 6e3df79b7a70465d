/* NCCL's topology search in closed form (sim/coll/nccl_search.h). The speed arrays and the channel-duplication
 * rules are copied from src/graph/search.cc at the release tags named; the steps they feed are described in the
 * header. What the closed form leaves out of the search: its timeouts, cross-NIC and path-type passes (it
 * assumes each GPU reaches a NIC of its own PCIe switch, as on HGX/DGX nodes), and 2.18's tree minChannels (the
 * tree gets the ring's channels in every release, which NCCL 2.18 to 2.21 ask for and earlier releases find
 * where every NIC serves one channel). */
#include "sim/coll/nccl_search.h"

#include <stddef.h>
#include <string.h>

#include "topology/device.h"

/* GB/s per channel, fastest first (search.cc speedArrayInter / sm90SpeedArrayInter / sm100SpeedArrayInter). */
static const double inter_212[] = {48, 30, 24, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
static const double inter_215[] = {48, 30, 28, 24, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
static const double inter_218[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm90_217[] = {48, 45, 30, 24, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm90_218[] = {48, 45, 42, 40, 30, 24, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm90_219[] = {48, 45, 42, 40, 30, 24, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm90_220[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm100_227[] = {47.9, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm100_228[] = {96, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};

#define ARR(a) a, sizeof a / sizeof *a

/* ncclTopoDupChannels' condition, by release: 2.12-2.16 from 25 GB/s a channel; 2.17 from 25 GB/s on compute
 * capability 8.0 and below, from 50 up to 9.0; from 2.18.3 from 25 GB/s, except above 8.0 below 50 GB/s with
 * more than 4 channels. */
enum { DUP_25, DUP_217, DUP_218 };

typedef struct release {
	int first, last;
	const double *inter; /* compute capability below 9.0 */
	size_t ninter;
	const double *sm90;  /* 9.0 and later (NULL: the array above) */
	size_t nsm90;
	const double *sm100; /* 10.0 and later (NULL: sm90's) */
	size_t nsm100;
	int dup;
	int dup_first; /* 2.19 and later duplicate at the end of pass 1, before pass 2 raises the tree's bwIntra;
			* earlier releases at the end of the search */
} release;

/* clang-format off */
static const release releases[] = {
	{212, 214, ARR(inter_212), NULL, 0, NULL, 0, DUP_25, 0},
	{215, 216, ARR(inter_215), NULL, 0, NULL, 0, DUP_25, 0},
	{217, 217, ARR(inter_215), ARR(sm90_217), NULL, 0, DUP_217, 0},
	{218, 218, ARR(inter_218), ARR(sm90_218), NULL, 0, DUP_218, 0},
	{219, 219, ARR(inter_218), ARR(sm90_219), NULL, 0, DUP_218, 1},
	{220, 226, ARR(inter_218), ARR(sm90_220), NULL, 0, DUP_218, 1}, /* 2.25-2.26's sm100 array is sm90's */
	{227, 227, ARR(inter_218), ARR(sm90_220), ARR(sm100_227), DUP_218, 1},
	{228, 229, ARR(inter_218), ARR(sm90_220), ARR(sm100_228), DUP_218, 1},
};
/* clang-format on */

#define MAX_RING_CHANNELS 16 /* init.cc: ringGraph.maxChannels = MAXCHANNELS/2, MAXCHANNELS 32 */

static const release *release_for(int ver)
{
	size_t nr = sizeof releases / sizeof *releases;
	if (ver == 0 || ver > releases[nr - 1].last)
		return &releases[nr - 1];
	for (size_t i = 0; i < nr; i++)
		if (ver >= releases[i].first && ver <= releases[i].last)
			return &releases[i];
	return &releases[0];
}

/* NCCL's compute capability of an architecture (ccMin), major*10 + minor. */
static int compcap(int arch)
{
	switch (arch) {
	case HS_ARCH_VOLTA: return 70;
	case HS_ARCH_TURING: return 75;
	case HS_ARCH_ADA: return 89;
	case HS_ARCH_HOPPER: return 90;
	case HS_ARCH_BLACKWELL: return 100;
	default: return 80; /* Ampere, and devices NCCL does not name */
	}
}

static int dup_applies(int rule, int cc, double bw, int nch)
{
	switch (rule) {
	case DUP_25: return bw >= 25;
	case DUP_217: return (cc <= 80 && bw >= 25) || (cc <= 90 && bw >= 50);
	default: return bw >= 25 && !(cc > 80 && bw < 50 && nch > 4);
	}
}

/* ncclTopoDupChannels: min(2 nch, maxChannels) channels, each speed divided by DIVUP(new, old). */
static void dup(hs_nccl_graph *g, int max)
{
	int n2 = 2 * g->nch < max ? 2 * g->nch : max;
	if (n2 <= g->nch)
		return;
	int div = (n2 + g->nch - 1) / g->nch;
	g->bw_intra /= div;
	g->bw_inter /= div;
	g->nch = n2;
}

/* Pass 2 for trees: from the step at or below bwInter, raise bwIntra one step at a time while it is below twice
 * bwInter and the channels fit in the GPU's intra-node links at the next step (no such bound with one GPU per
 * node). */
static void raise_intra(hs_nccl_graph *t, const double *arr, size_t n, double nvlink, int ppn)
{
	size_t i = 0;
	while (i + 1 < n && arr[i] > t->bw_inter * (1 + 1e-9))
		i++;
	t->bw_intra = arr[i];
	while (i > 0 && t->bw_intra < 2 * t->bw_inter) {
		double next = arr[i - 1];
		if (ppn > 1 && t->nch * next > nvlink * (1 + 1e-9))
			break;
		t->bw_intra = next;
		i--;
	}
}

int hs_nccl_search(const hs_nccl_search_in *in, hs_nccl_graph *ring, hs_nccl_graph *tree)
{
	memset(ring, 0, sizeof *ring);
	memset(tree, 0, sizeof *tree);
	if (in->nics <= 0 || !(in->nic_path > 0))
		return -1;
	const release *r = release_for(in->ver);
	int cc = compcap(in->arch);
	const double *arr = r->inter;
	size_t n = r->ninter;
	if (cc >= 90 && r->sm90)
		arr = r->sm90, n = r->nsm90;
	if (cc >= 100 && r->sm100)
		arr = r->sm100, n = r->nsm100;
	double maxbw = in->nic_path / 1e9, nvl = in->nvlink / 1e9;
	/* pass 1: the first step the GPU-NIC path carries, one channel per NIC; lower while the channels do not fit
	 * in the GPU's NVLink (each ring channel enters and leaves every GPU once) */
	size_t i = 0;
	while (i + 1 < n && arr[i] > maxbw * (1 + 1e-9))
		i++;
	int nch = in->nics < MAX_RING_CHANNELS ? in->nics : MAX_RING_CHANNELS;
	while (in->ppn > 1 && i + 1 < n && nch * arr[i] > nvl * (1 + 1e-9))
		i++;
	*ring = (hs_nccl_graph){nch, arr[i], arr[i], 0};
	*tree = *ring;
	tree->tree_pattern = in->ppn <= 1;
	if (dup_applies(r->dup, cc, ring->bw_intra, ring->nch))
		dup(ring, MAX_RING_CHANNELS);
	if (r->dup_first) {
		/* the tree searches for the ring's channels (init.cc: treeGraph.minChannels = maxChannels = the
		 * ring's), at the duplicated speed, then raises bwIntra */
		tree->nch = ring->nch;
		tree->bw_intra = tree->bw_inter = ring->bw_inter;
		raise_intra(tree, arr, n, nvl, in->ppn);
	} else {
		/* raise first; the duplication at the end of the search is bounded by the ring's channels (the tree's
		 * maxChannels) */
		raise_intra(tree, arr, n, nvl, in->ppn);
		if (dup_applies(r->dup, cc, tree->bw_intra, tree->nch))
			dup(tree, ring->nch);
	}
	/* speeds in bytes/s */
	ring->bw_intra *= 1e9, ring->bw_inter *= 1e9;
	tree->bw_intra *= 1e9, tree->bw_inter *= 1e9;
	return 0;
}
