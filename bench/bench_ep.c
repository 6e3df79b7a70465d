/* The DeepSeek-style EP step (scenarios/moe/deepseek-v3-style.yaml: 512 H100s, EP 64 over 8 nodes, PP 8) at
 * flow fidelity (issue 22: under 5 s of CPU). Its cost is the EP all-to-alls: 64 ranks, 4,032 pair transfers
 * each (24.2M transfers in the step). Two runs in one process, CPU seconds of each (CLOCK_PROCESS_CPUTIME_ID):
 *   dmodk  `fabric.ecmp: dmodk` (destination-mod-k routing): the all-to-all's pairs fall into symmetry classes
 *          (sim/net/netcoll_direct.c), one flow per class;
 *   hash   the default hashed ECMP: the pairs' hashed spine paths collide unevenly and no class forms; an
 *          all-to-all whose links carry nothing else at its start is timed alone there (sim/net/netcoll_solo.c:
 *          its group's timeline computed once, one event a run), the rest pair by pair as flows.
 * The two are different routings (a modelling choice, docs/topology.md `ecmp`), so their step times differ
 * a little; each equals its own per-flow run (symmetry off) by the tests of tests/unit/net/test_netsym.c.
 * A ring whose set other traffic broke forms its classes again once its ranks are back in step
 * (sim/net/netcoll_ring.c reform): dmodk 3,695,717 -> 2,497,735 events; an all-to-all whose links a live ring
 * set holds opens beside it, on classes found for both (sim/net/netcoll_direct.c joint_classes): 1,863,396
 * events, 1.5-2.0 s, the same step time (docs/collectives.md).
 * After a finish the solver fills only the flows that lost their bottleneck, after a start only the new flows
 * and those the link binds (sim/net/maxmin.c): hash from 44.3 s to 20-27 s on the 2-core machine of 2026-12-02's
 * third session (pairs of binaries run at once; docs/collectives.md, "Recomputes after a finish").
 * Direct collectives timed alone (2026-12-02, sixth session): hash 14.2-14.3 s -> 5.3-5.6 s, 31,414,557 ->
 * 8,536,998 events, the same step (33.581090 s), the binaries before and after run at once in two pairs; what
 * is left is mostly the data-parallel rings' 3.86M hops (8 channels sharing every GPU's NVSwitch port, so no hop
 * can be held: docs/collectives.md).
 * Bundles (2026-12-03): a ring's hops that share links only with each other (a node's channels on its ports)
 * are held together and rated by the model's fill (sim/net/ring_bundle.c): 34.01 G -> 27.79 G
 * instructions (callgrind), 3.8-3.9 s -> 2.7 s of CPU one at a time, the same step (docs/collectives.md,
 * "Bundles, built").
 * Prints the ratio hash / dmodk and whether each met the target (the is the default routing's, hash);
 * exits 1 only when a run fails. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "models/build.h"
#include "sim/exec/exec.h"
#include "sim/exec/plan.h"
#include "sim/study/scenario.h"

static const char *scn =
	"name: deepseek-v3-style-512xh100\n"
	"cluster:\n"
	"  groups:\n"
	"    - name: h100\n"
	"      nodes: 64\n"
	"      gpus_per_node: 8\n"
	"      gpu: H100-SXM-80GB\n"
	"      scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}\n"
	"      nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us, ecmp: %s}\n"
	"model: {preset: deepseek-v3, layers: 64}\n"
	"training: {seq_len: 4096, global_batch: 1024, micro_batch: 1, precision: bf16, optimizer: adam}\n"
	"parallelism: {tp: 1, pp: 8, ep: 64, zero: 1, recompute: full, schedule: 1f1b,\n"
	"              expert_imbalance: {zipf: 0.2}}\n"
	"simulation: {fidelity: flow, seed: 1}\n";

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int one(const char *ecmp, double *cpu)
{
	hs_err err = {0};
	char text[4096];
	snprintf(text, sizeof text, scn, ecmp);
	double t0 = cpu_s();
	hs_ydoc *doc = hs_yaml_load_string(text, strlen(text), "bench_ep", &err);
	hs_scenario *s = doc ? hs_scenario_from_doc(doc, "bench_ep", &err) : NULL;
	if (!s) {
		fprintf(stderr, "bench_ep: %s\n", err.msg);
		return -1;
	}
	hs_build b;
	hs_result r;
	if (hs_plan_step(&s->wl, 1, &b, &err)) {
		fprintf(stderr, "bench_ep: %s\n", err.msg);
		hs_scenario_free(s);
		return -1;
	}
	if (hs_exec_step(&s->wl, &s->sim, &b, NULL, 0, &r, &err)) {
		fprintf(stderr, "bench_ep: %s\n", err.msg);
		hs_build_free(&b);
		hs_scenario_free(s);
		return -1;
	}
	*cpu = cpu_s() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("ecmp %-6s CPU %7.2f s  step %.6f s  events %9llu  peak RSS %.0f MB\n", ecmp, *cpu, r.step_time_s,
	       (unsigned long long)r.events, ru.ru_maxrss / 1024.0);
	hs_result_free(&r);
	hs_build_free(&b);
	hs_scenario_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	double a, b;
	if (argc > 1) { /* one routing only (profiling): bench_ep dmodk | hash */
		if (strcmp(argv[1], "dmodk") && strcmp(argv[1], "hash")) {
			fprintf(stderr, "usage: bench_ep [dmodk | hash]\n");
			return 2;
		}
		return one(argv[1], &a) ? 1 : 0;
	}
	printf("DeepSeek-style EP step, 512 H100, EP 64 PP 8, flow fidelity (target: under 5 s of CPU)\n");
	if (one("dmodk", &a) || one("hash", &b))
		return 1;
	printf("hash / dmodk CPU: %.1fx; target (5 s): hash (the default) %.2f s %s, dmodk %.2f s %s\n", b / a, b,
	       b < 5.0 ? "met" : "MISSED", a, a < 5.0 ? "met" : "MISSED");
	return 0;
}
