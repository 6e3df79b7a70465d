/* Flow-level collective benchmark (issue 3). Reports wall time, engine events/s and peak RSS (getrusage) for:
 *   - a ring all-reduce of 1 GiB over 1,024 GPUs (128 nodes x 8 H100, 8 x 400 Gb/s NICs per node,
 *     rail-optimised fat-tree of 64-port switches): target under 2 s wall on a 2-core machine;
 *   - the double-binary-tree all-reduce of 1 GiB on the same cluster, with one channel (the heads cross on
 *     their own NIC) and with 8 (one per NIC, as NCCL runs its tree channels);
 *   - a direct all-to-all of 1 GiB per rank over 256 GPUs;
 *   - memory against flows: all-to-all over 128 then 256 GPUs (n(n-1) flows at once), the RSS growth per
 *     flow at each size, which should match (linear growth).
 * Exits 0 unless a run fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "config/yaml.h"
#include "sim/engine/engine.h"
#include "sim/net/net.h"
#include "topology/cluster.h"
#include "sim/base/sizes.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

static double done_t;
static void done(void *ctx, uint64_t arg)
{
	(void)arg;
	done_t = hs_time_to_s(hs_engine_now(ctx));
}

static int bench(const char *label, int nodes, enum hs_coll_op op, enum hs_coll_algo algo, double bytes, int channels)
{
	char y[1024];
	snprintf(y, sizeof y,
		 "cluster:\n"
		 "  groups:\n"
		 "    - {nodes: %d, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
		 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us},\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
		 "  fabric: {kind: rail-optimized, radix: 64, latency: 1 us}\n",
		 nodes);
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "bench.yaml", &err);
	hs_cluster *c = d ? hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err) : NULL;
	if (!c) {
		fprintf(stderr, "bench_coll: %s\n", err.msg);
		return 1;
	}
	int n = nodes * 8;
	int *ranks = malloc((size_t)n * sizeof *ranks);
	for (int i = 0; i < n; i++)
		ranks[i] = i;
	double t0 = now_s();
	hs_engine *eng = hs_engine_create();
	hs_net *net = hs_net_create(c, "flow", eng, &err);
	if (net)
		hs_net_set_channels(net, channels);
	if (!net || hs_net_collective(net, op, algo, ranks, n, bytes, done, eng, 0, &err)) {
		fprintf(stderr, "bench_coll: %s\n", err.msg);
		return 1;
	}
	done_t = -1;
	uint64_t ev = hs_engine_run(eng, HS_TIME_MAX);
	double wall = now_s() - t0;
	if (done_t < 0) {
		fprintf(stderr, "bench_coll: %s did not complete\n", label);
		return 1;
	}
	printf("%-44s %5d GPUs  sim %9.3f ms  wall %6.3f s  %9llu events  %6.2f M events/s  %9llu flows  peak RSS %7.1f MB\n",
	       label, n, done_t * 1e3, wall, (unsigned long long)ev, ev / wall / 1e6,
	       (unsigned long long)hs_net_transfers(net), rss_mb());
	hs_net_free(net);
	hs_engine_destroy(eng);
	free(ranks);
	hs_cluster_free(c);
	hs_yaml_free(d);
	return 0;
}

int main(void)
{
	int rc = 0;
	double G = HS_GiB;
	/* the memory pair runs first: peak RSS only grows, so a larger run before it would hide its growth */
	double r0 = rss_mb();
	rc |= bench("all-to-all 1 GiB/rank, 128 GPUs", 16, HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, G, 1);
	double r1 = rss_mb();
	rc |= bench("all-to-all 1 GiB/rank, 256 GPUs", 32, HS_COLL_ALL_TO_ALL, HS_ALGO_DIRECT, G, 1);
	double r2 = rss_mb();
	double f1 = 128.0 * 127, f2 = 256.0 * 255;
	printf("memory vs flows in flight: peak RSS %.1f -> %.1f -> %.1f MB with %.0f then %.0f flows at once: "
	       "%.2f KB per flow at the first size, %.2f KB per added flow to the second (linear when these match)\n",
	       r0, r1, r2, f1, f2, (r1 - r0) * 1024 / f1, (r2 - r1) * 1024 / (f2 - f1));
	rc |= bench("ring all-reduce 1 GiB, rail-optimised", 128, HS_COLL_ALL_REDUCE, HS_ALGO_RING, G, 1);
	rc |= bench("tree all-reduce 1 GiB, rail-optimised", 128, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, G, 1);
	rc |= bench("tree all-reduce 1 GiB, 8 channels", 128, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, G, 8);
	return rc;
}
