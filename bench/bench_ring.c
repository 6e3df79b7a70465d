/* Ring all-reduce of 64 MiB at flow fidelity over N single-GPU nodes on one switch (issue 22): the cost of
 * the 2N(N-1) transfers of a ring, with symmetry classes (one flow per ring step) and without (every
 * transfer a flow, the baseline, run in the same process at the sizes it can reach in seconds).
 *
 * Prints, per run: CPU seconds (CLOCK_PROCESS_CPUTIME_ID), engine events, flows in the model, transfers
 * they stand for, peak RSS, and the simulated time against the closed form 2(N-1)(alpha + S/(N B)) with
 * alpha and B the latency and bandwidth of one hop's route; then the ratio per-flow / classes at equal N and
 * the growth exponents log(cpu2/cpu1) / log(N2/N1). The targets: 4,096 / 16,384 / 65,536 nodes under
 * 1 / 2 / 10 s of CPU. Exits 1 when a run fails or a result is off the closed form by more than 1e-4 (the
 * simulation rounds each step to a picosecond: 2(N-1) ps at most). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "config/yaml.h"
#include "sim/base/sizes.h"
#include "sim/engine/engine.h"
#include "sim/net/net.h"
#include "topology/cluster.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0;
}

static double done_t;
static void done(void *ctx, uint64_t arg)
{
	(void)arg;
	done_t = hs_time_to_s(hs_engine_now(ctx));
}

typedef struct res {
	double cpu, sim, closed, rss;
	int ok;
} res;

static res run(int N, int symmetry)
{
	res o = {0};
	char y[512];
	snprintf(y, sizeof y,
		 "cluster:\n"
		 "  groups:\n"
		 "    - {nodes: %d, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 1, latency: 3 us}}\n"
		 "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n",
		 N);
	hs_err err = {0};
	double S = 64 * HS_MiB;
	double t0 = cpu_s();
	hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "bench_ring.yaml", &err);
	hs_cluster *c = d ? hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err) : NULL;
	hs_engine *eng = c ? hs_engine_create() : NULL;
	hs_net *net = eng ? hs_net_create(c, "flow", eng, &err) : NULL;
	int *ranks = malloc((size_t)N * sizeof *ranks);
	for (int i = 0; i < N; i++)
		ranks[i] = i;
	if (!net) {
		fprintf(stderr, "bench_ring: %s\n", err.msg);
		goto out;
	}
	hs_net_set_symmetry(net, symmetry);
	done_t = -1;
	if (hs_net_collective(net, HS_COLL_ALL_REDUCE, HS_ALGO_RING, ranks, N, S, done, eng, 0, &err)) {
		fprintf(stderr, "bench_ring: %s\n", err.msg);
		goto out;
	}
	uint64_t ev = hs_engine_run(eng, HS_TIME_MAX);
	o.cpu = cpu_s() - t0;
	o.rss = rss_mb();
	o.sim = done_t;
	const hs_route *r = hs_route_get(hs_net_router(net), 0, 1, -1, &err);
	double alpha = hs_time_to_s(r->lat), B = hs_rate_to_Bps(r->bw);
	o.closed = 2.0 * (N - 1) * (alpha + S / N / B);
	double rel = fabs(o.sim - o.closed) / o.closed;
	o.ok = done_t > 0 && rel < 1e-4;
	hs_net_sym_stat st = hs_net_sym_stats(net);
	printf("  N %6d  %-10s cpu %8.3f s  %9llu events  %9llu flows for %11llu transfers  peak RSS %7.1f MB  "
	       "sim %.9f s  closed form %.9f s  (rel %.1e)%s\n",
	       N, symmetry ? "classes" : "per-flow", o.cpu, (unsigned long long)ev,
	       (unsigned long long)(symmetry ? st.flows : hs_net_transfers(net)), (unsigned long long)hs_net_transfers(net),
	       o.rss, o.sim, o.closed, rel, o.ok ? "" : "  FAILED");
out:
	hs_net_free(net);
	hs_engine_destroy(eng);
	free(ranks);
	hs_cluster_free(c);
	hs_yaml_free(d);
	return o;
}

int main(int argc, char **argv)
{
	/* BENCH_RING_MAX caps the largest size (the full run takes about 10 s of CPU) */
	int maxn = argc > 1 ? atoi(argv[1]) : 65536;
	int rc = 0;
	printf("ring all-reduce 64 MiB, flow fidelity, N single-GPU nodes (400 Gb/s NIC) on one switch\n");
	static const int base_n[] = {512, 1024, 2048};
	int nb = getenv("BENCH_RING_NOBASE") ? 0 : 3;
	static const int sym_n[] = {512, 1024, 2048, 4096, 16384, 65536};
	res b[3], s[6];
	for (int i = 0; i < nb; i++) {
		b[i] = run(base_n[i], 0);
		rc |= !b[i].ok;
	}
	int ns = 0;
	for (int i = 0; i < 6 && sym_n[i] <= maxn; i++, ns++) {
		s[i] = run(sym_n[i], 1);
		rc |= !s[i].ok;
	}
	for (int i = 0; i < nb && i < ns; i++)
		printf("  N %6d: per-flow / classes %.1fx CPU; results differ by %.1e relative\n", base_n[i],
		       b[i].cpu / (s[i].cpu > 1e-9 ? s[i].cpu : 1e-9), fabs(b[i].sim - s[i].sim) / b[i].sim);
	if (nb)
		printf("  growth exponent of CPU, per-flow: %.2f (512 -> 2048)\n", log(b[2].cpu / b[0].cpu) / log(4.0));
	for (int i = 1; i < ns; i++)
		printf("  growth exponent of CPU, classes: %.2f (%d -> %d); of peak RSS %.2f\n",
		       log(s[i].cpu / s[i - 1].cpu) / log((double)sym_n[i] / sym_n[i - 1]), sym_n[i - 1], sym_n[i],
		       log(s[i].rss / s[i - 1].rss) / log((double)sym_n[i] / sym_n[i - 1]));
	static const double target[] = {0, 0, 0, 1, 2, 10};
	for (int i = 3; i < ns; i++)
		printf("  N %6d: %.3f s of CPU, target %.0f s: %s\n", sym_n[i], s[i].cpu, target[i],
		       s[i].cpu < target[i] ? "met" : "MISSED");
	return rc;
}
