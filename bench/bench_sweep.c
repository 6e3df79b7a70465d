/* Sweep throughput (issue 7): an analytical sweep of Llama 3 70B on 1,024 H100s over TP x PP x DP x
 * micro-batch x recompute, evaluated through hs_sweep_eval (the path `hetsim sweep` takes: scenario load with
 * the axis overrides, task graph, execution, memory check, cost, CSV row), on one thread and on two.
 *
 * Of the 900 points, 126 have tp x pp x dp = 1,024; the other 774 are rejected by the scenario check in
 * microseconds. Two rates are printed: every point, and "configurations" (the points that were simulated:
 * those that passed the check, whether or not they then fit in memory), which is the figure the target
 * (>= 1,000/s on one core; Calculon manages about 190/s in Python) is about. It always exits 0: it measures. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/study/sweep.h"

static const char *base =
	"name: llama3-70b-1024xh100\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h100, nodes: 128, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: llama3-70b\n"
	"training: {seq_len: 8192, global_batch: 2048, micro_batch: 1, precision: bf16, optimizer: adam}\n"
	"parallelism: {tp: 8, pp: 8, dp: 16, recompute: selective, sequence_parallel: true, schedule: 1f1b}\n"
	"simulation: {fidelity: analytical, seed: 1}\n"
	"cost: {gpu_hour: 2.5}\n";

static const char *sweep =
	"base: base.yaml\n"
	"axes:\n"
	"  parallelism.tp: [1, 2, 4, 8]\n"
	"  parallelism.pp: [1, 2, 4, 8, 16]\n"
	"  parallelism.dp: [8, 16, 32, 64, 128]\n"
	"  training.micro_batch: [1, 2, 4]\n"
	"  parallelism.recompute: [none, selective, full]\n";

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

struct run {
	const hs_sweep *sw;
	atomic_size_t next;
	atomic_size_t simulated, ok;
	double sim_s[64]; /* per thread: time in simulated points */
};

struct arg {
	struct run *r;
	int id;
};

static int simulated(const char *row)
{
	/* ok rows and rows that failed the memory check went through the whole simulation */
	return strstr(row, ",ok,") || strstr(row, "does not fit in memory");
}

static void *worker(void *p)
{
	struct arg *a = p;
	struct run *r = a->r;
	hs_profile_cache *cache = hs_profile_cache_create();
	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);
		if (i >= r->sw->npoints)
			break;
		hs_sweep_row row = {0};
		hs_err err = {0};
		double t0 = now();
		if (hs_sweep_eval(r->sw, i, &row, cache, &err)) {
			fprintf(stderr, "bench_sweep: %s\n", err.msg);
			exit(1);
		}
		double dt = now() - t0;
		if (simulated(row.text)) {
			atomic_fetch_add(&r->simulated, 1);
			r->sim_s[a->id] += dt;
		}
		if (row.ok)
			atomic_fetch_add(&r->ok, 1);
		free(row.text);
	}
	hs_profile_cache_free(cache);
	return NULL;
}

static double run(const hs_sweep *sw, int threads, size_t *nsim, size_t *nok, double *sim_s)
{
	struct run r = {.sw = sw};
	pthread_t th[64];
	struct arg args[64];
	double t0 = now();
	for (int t = 0; t < threads; t++) {
		args[t] = (struct arg){&r, t};
		pthread_create(&th[t], NULL, worker, &args[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	double dt = now() - t0;
	*nsim = r.simulated;
	*nok = r.ok;
	*sim_s = 0;
	for (int t = 0; t < threads; t++)
		*sim_s += r.sim_s[t];
	return dt;
}

int main(void)
{
	char dir[] = "/tmp/hetsim-bench-sweep-XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	char bp[128], sp[128];
	snprintf(bp, sizeof bp, "%s/base.yaml", dir);
	snprintf(sp, sizeof sp, "%s/sweep.yaml", dir);
	FILE *f = fopen(bp, "w");
	fputs(base, f);
	fclose(f);
	f = fopen(sp, "w");
	fputs(sweep, f);
	fclose(f);
	hs_sweep sw;
	hs_err err = {0};
	if (hs_sweep_load(sp, &sw, &err)) {
		fprintf(stderr, "bench_sweep: %s\n", err.msg);
		return 1;
	}
	size_t nsim, nok;
	double sim_s;
	run(&sw, 1, &nsim, &nok, &sim_s); /* warm the page cache and the allocator */
	double best1 = INFINITY, best2 = INFINITY, sim1 = 0;
	for (int rep = 0; rep < 7; rep++) { /* best of 7: the machine is shared */
		double t = run(&sw, 1, &nsim, &nok, &sim_s);
		if (t < best1)
			best1 = t, sim1 = sim_s;
		t = run(&sw, 2, &nsim, &nok, &sim_s);
		if (t < best2)
			best2 = t;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	printf("sweep: Llama 3 70B, 1024 x H100, TP x PP x DP x micro-batch x recompute = %zu points, "
	       "%zu simulated (%zu fit in memory)\n", sw.npoints, nsim, nok);
	printf("  1 thread : %.3f s, %.0f points/s, %.0f configurations/s (simulated points only: %.0f us each; "
	       "target >= 1000/s)\n", best1, sw.npoints / best1, nsim / sim1, 1e6 * sim1 / nsim);
	printf("  2 threads: %.3f s, %.0f points/s, speed-up %.2fx (%ld CPUs online)\n", best2, sw.npoints / best2,
	       best1 / best2, cpus);
	printf("  target (>= 1000 configurations/s on one thread, counting simulated points only): %s\n",
	       nsim / sim1 >= 1000 ? "met" : "NOT met");
	hs_sweep_free(&sw);
	remove(bp);
	remove(sp);
	rmdir(dir);
	return 0;
}
