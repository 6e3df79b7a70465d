/* Packet fidelity's speed (issue 21): events per second of the scale-up fabric under a ring all-reduce's
 * traffic, and a TP-8 training step of one 8-GPU H100 node with a 1 GiB all-reduce per layer at packet
 * fidelity. Targets: >= 2M events/s; the step in under a minute. CPU seconds of this process are reported
 * beside wall seconds (the machine is shared: CPU time is the figure that does not depend on the others).
 * Wall-clock figures live only here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/fabric/fabric_coll.h"
#include "sim/study/simulate.h"

static double clk(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char scenario[] =
	"name: tp8-1gib-per-layer\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h100, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {name: tp8-1gib, layers: 4, hidden: 8192, heads: 64, ffn: 28672, vocab: 32000, seq_len: 65536}\n"
	"training: {seq_len: 65536, global_batch: 1, micro_batch: 1, precision: bf16, optimizer: adam}\n"
	"parallelism: {tp: 8, pp: 1, dp: 1, recompute: none}\n"
	"simulation: {fidelity: packet, collective_algorithm: ring}\n";

int main(void)
{
	int fail = 0;
	/* one 1 GiB ring all-reduce over 8 ranks at one receiver, NVLink-class rates, Simple, 8 channels */
	hs_fabric_params p;
	hs_fabric_params_default(&p);
	p.src_rate = hs_rate_from_Bps(450e9 * 272 / 256);
	p.path_rate = hs_rate_from_Bps(450e9 * 272 / 256 / 4);
	p.resp_rate = p.src_rate;
	p.path_latency = p.credit_latency = 2000000;
	p.rxbuf = 4u << 20;
	p.hbm_rate = hs_rate_from_Bps(3.35e12 / 8);
	hs_credit_cfg cc = {0};
	hs_fcoll c = {.op = HS_FCOLL_ALL_REDUCE, .n = 8, .bytes = 1073741824.0, .channels = 8};
	hs_fcoll_out o;
	double w0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
	hs_fcoll_run(&p, hs_credit_find("vector"), &cc, &c, &o, NULL);
	double w = clk(CLOCK_MONOTONIC) - w0, cpu = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("packet 1 GiB ring all-reduce, 8 ranks, vector: %llu events in %.2f s CPU (%.2f s wall): %.2fM events/s "
	       "of CPU (target >= 2M); simulated %.3f ms\n",
	       (unsigned long long)o.events, cpu, w, (double)o.events / cpu / 1e6, hs_time_to_s(o.time) * 1e3);
	fail |= (double)o.events / cpu < 2e6;
	/* the TP-8 step */
	char path[] = "/tmp/bench_packet_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, scenario, strlen(scenario)) != (ssize_t)strlen(scenario))
		return 1;
	close(fd);
	hs_sim sim;
	hs_err err = {0};
	w0 = clk(CLOCK_MONOTONIC);
	c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
	int rc = hs_simulate(path, NULL, -1, NULL, &sim, &err);
	w = clk(CLOCK_MONOTONIC) - w0;
	cpu = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
	unlink(path);
	if (rc) {
		fprintf(stderr, "bench_packet: %s\n", err.msg);
		return 1;
	}
	printf("packet TP-8 step, 4 layers, 1 GiB all-reduce per layer: %llu events in %.2f s CPU (%.2f s wall); "
	       "step %.4f s (target: under a minute)\n",
	       (unsigned long long)sim.r.events, cpu, w, sim.r.step_time_s);
	fail |= cpu >= 60;
	hs_sim_free(&sim);
	return fail;
}
