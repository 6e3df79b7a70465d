/* Offload to host memory (parallelism.offload) over the node's host link (cluster.groups[].host):
 * - a model that does not fit without optimizer offload fits with it, and the optimizer states move to host
 *   memory (16 bytes per parameter of the partition: Adam's fp32 master and moments, and an fp32 gradient);
 * - one layer on one GPU, derived by hand: with the optimizer offloaded the step loses the device's Adam and
 *   gains the gradient copy out (P x gradient bytes / link), the CPU step (P x (28 + 2) bytes x GPUs per node
 *   / host memory bandwidth) and the parameters back (P x 2 / link), in that order, none overlapped (one
 *   micro-batch, nothing left to hide behind);
 * - one layer, one micro-batch, activations offloaded: the backward waits for the layer's saved activations
 *   to go out and come back, 2 A / link, where A is Korthikanti's per-layer figure hetsim's memory uses;
 * - a faster link (Gen5 against Gen4, C2C against Gen5) is never slower;
 * - PCIe rates: PCI-SIG's signalling rate times the line code;
 * - bad input: offload on a group with no host link, exit 2 naming the key and the group. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "topology/host.h"

static const char *one_layer =
	"name: offload-one-layer\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a, nodes: 1, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
	"       host: {link: pcie, generation: 4, lanes: 16, memory_bandwidth: 200 GB/s}}\n"
	"model: {layers: 1, hidden: 4096, heads: 32, ffn: 16384, vocab: 32000, seq_len: 4096, tied_embeddings: false}\n"
	"training: {global_batch: 1, micro_batch: 1, precision: bf16, grad_dtype: fp32}\n"
	"parallelism: {tp: 1, pp: 1, dp: 1, zero: 1}\n";

static int sim_text(const char *text, const char *const *sets, int n, hs_sim *sim, hs_err *err)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "offl", text);
	struct hs_strlist l = {.v = (const char **)sets, .n = n};
	int rc = hs_simulate(path, &l, 1, NULL, sim, err);
	unlink(path);
	return rc;
}

static void run(const char *text, const char *const *sets, int n, hs_sim *sim)
{
	hs_err err = {0};
	ck_assert_msg(sim_text(text, sets, n, sim, &err) == 0, "%s", err.msg);
}

#define PCIE4 (16e9 * 128 / 130 / 8 * 16)
#define HOST_MEM_BW 200e9

START_TEST(pcie_rates_are_the_specifications)
{
	ck_assert(fabs(hs_host_pcie_bw(4, 16) - 31.5076923e9) < 1e3);
	ck_assert(fabs(hs_host_pcie_bw(5, 16) - 2 * hs_host_pcie_bw(4, 16)) < 1);
	ck_assert(fabs(hs_host_pcie_bw(3, 8) - hs_host_pcie_bw(4, 16) / 4) < 1);
	ck_assert(fabs(hs_host_pcie_bw(6, 16) - 64e9 * 242 / 256 / 8 * 16) < 1);
	ck_assert(hs_host_pcie_bw(2, 16) == 0);
}
END_TEST

START_TEST(one_layer_optimizer_offload_by_hand)
{
	hs_sim base, off;
	run(one_layer, NULL, 0, &base);
	const char *sets[] = {"parallelism.offload.optimizer=cpu"};
	run(one_layer, sets, 1, &off);
	double P = base.b.stages[0].params; /* one replica: the partition is every parameter */
	double out = P * 4 / PCIE4, cpu = P * (28 + 2) * 1 / HOST_MEM_BW, back = P * 2 / PCIE4;
	double gpu_adam = base.r.reps[0].optimizer_s;
	ck_assert(gpu_adam > 0);
	ck_assert_msg(off.r.reps[0].optimizer_s == 0, "device optimizer %g s left", off.r.reps[0].optimizer_s);
	double grown = off.r.step_time_s - (base.r.step_time_s - gpu_adam);
	/* each of the three tasks is rounded to the engine's picosecond */
	ck_assert_msg(fabs(grown - (out + cpu + back)) < 1e-11 + 1e-12 * grown, "grew %.12g s, by hand %.12g s", grown,
		      out + cpu + back);
	/* the breakdown names it: the device waits for the host the whole time */
	ck_assert(fabs(off.r.reps[0].offload_s - (out + cpu + back)) < 1e-9);
	/* memory: the optimizer states leave the device; the host holds them and the fp32 gradient */
	const hs_mem *a = &base.b.stages[0].mem, *b = &off.b.stages[0].mem;
	ck_assert(b->optimizer == 0 && a->optimizer > 0);
	ck_assert(fabs(b->host - (a->optimizer + 4 * (P + 4096.0 * 4096 + 2 * 4096))) < 1e-6 * b->host);
	ck_assert(fabs(a->total - b->total - a->optimizer) < 1e-6 * a->total);
	hs_sim_free(&base);
	hs_sim_free(&off);
}
END_TEST

START_TEST(one_layer_activation_offload_by_hand)
{
	hs_sim base, off;
	run(one_layer, NULL, 0, &base);
	const char *sets[] = {"parallelism.offload.activations=cpu"};
	run(one_layer, sets, 1, &off);
	hs_layer_cfg lc;
	hs_build_layer_cfg(&off.s->wl, &lc);
	double A = hs_memory_layer_activations_at(&off.s->model, &lc, 0);
	double grown = off.r.step_time_s - base.r.step_time_s;
	ck_assert_msg(fabs(grown - 2 * A / PCIE4) < 1e-11, "grew %.12g s, 2 A / link %.12g s", grown, 2 * A / PCIE4);
	/* one layer: the device keeps its activations (two layers' worth is the floor), nothing goes to host */
	ck_assert(off.b.stages[0].mem.host == 0);
	hs_sim_free(&base);
	hs_sim_free(&off);
}
END_TEST

/* 13B on eight 40 GB A100s under ZeRO-2: Adam's 12 bytes per parameter over 8 ranks, beside 26 GB of bf16
 * weights, do not fit; on the host they do. */
static const char *big =
	"name: offload-13b\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: a100, nodes: 1, gpus_per_node: 8, gpu: A100-SXM-40GB,\n"
	"       scaleup: {kind: nvswitch, bandwidth: 300 GB/s, latency: 2 us},\n"
	"       host: {link: pcie, generation: 4, lanes: 16, memory_bandwidth: 200 GB/s, memory: 1 TB}}\n"
	"model: llama2-13b\n"
	"training: {seq_len: 4096, global_batch: 16, micro_batch: 1, precision: bf16}\n"
	"parallelism: {tp: 1, pp: 1, dp: 8, zero: 2, recompute: full}\n";

START_TEST(does_not_fit_without_offload_fits_with_it)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert_int_ne(sim_text(big, NULL, 0, &sim, &err), 0);
	ck_assert_int_eq(err.code, HS_EINFEASIBLE);
	const char *sets[] = {"parallelism.offload.optimizer=cpu"};
	run(big, sets, 1, &sim);
	ck_assert(sim.b.stages[0].mem.optimizer == 0 && sim.b.stages[0].mem.host > 0);
	hs_sim_free(&sim);
	/* host memory is checked where the node declares it: 8 GPUs' partitions need more than 64 GB */
	const char *small[] = {"parallelism.offload.optimizer=cpu", "cluster.groups.0.host.memory=64 GB"};
	err = (hs_err){0};
	ck_assert_int_ne(sim_text(big, small, 2, &sim, &err), 0);
	ck_assert_int_eq(err.code, HS_EINFEASIBLE);
	ck_assert_msg(strstr(err.msg, "does not fit in host memory"), "%s", err.msg);
}
END_TEST

/* Bytes conserved: the gradient partitions copied out add up to the rank's partition once per reduction,
 * once per step under ZeRO-2 (reduced in the last micro-batch's backward), once per micro-batch under ZeRO-3
 * (reduce-scattered every backward); the parameters come back once. */
START_TEST(gradient_copies_add_up_to_the_partition)
{
	for (int z = 2; z <= 3; z++) {
		char zs[32];
		snprintf(zs, sizeof zs, "parallelism.zero=%d", z);
		const char *sets[] = {"parallelism.offload.optimizer=cpu", zs};
		hs_sim sim;
		run(big, sets, 2, &sim);
		const hs_graph *g = &sim.b.graph;
		double out = 0, back = 0, shard = sim.b.stages[0].params / 8;
		for (size_t i = 0; i < g->ntasks; i++) {
			const hs_task *t = &g->tasks[i];
			if (t->kind == HS_T_HOST && t->what == HS_W_OFFLOAD && t->rep == 0)
				*(t->stream == HS_S_HOST ? &out : &back) += t->bytes;
		}
		int m = 16 / 8, times = z == 3 ? m : 1;
		ck_assert_msg(fabs(out - times * shard * 4) < 1e-9 * out, "zero %d: %g out, expected %g", z, out,
			      times * shard * 4);
		ck_assert_msg(fabs(back - shard * 2) < 1e-9 * back, "zero %d: %g back", z, back);
		hs_sim_free(&sim);
	}
}
END_TEST

START_TEST(faster_link_is_never_slower)
{
	static const char *links[] = {"cluster.groups.0.host={link: pcie, generation: 4, memory_bandwidth: 200 GB/s}",
				      "cluster.groups.0.host={link: pcie, generation: 5, memory_bandwidth: 200 GB/s}",
				      "cluster.groups.0.host={link: c2c, memory_bandwidth: 200 GB/s}"};
	double prev = INFINITY;
	for (int i = 0; i < 3; i++) {
		const char *sets[] = {"parallelism.offload={optimizer: cpu, activations: cpu}",
				      "parallelism.recompute=none", links[i]};
		hs_sim sim;
		run(big, sets, 3, &sim);
		ck_assert_msg(sim.r.step_time_s <= prev, "%s: %g after %g", links[i], sim.r.step_time_s, prev);
		prev = sim.r.step_time_s;
		hs_sim_free(&sim);
	}
}
END_TEST

START_TEST(offload_without_host_link_is_bad_input)
{
	static const char *nohost =
		"name: nohost\n"
		"cluster:\n"
		"  groups:\n"
		"    - {name: bare, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB}\n"
		"model: llama3-8b\n"
		"training: {seq_len: 4096, global_batch: 8, micro_batch: 1, precision: bf16}\n"
		"parallelism: {dp: 8, zero: 1, offload: {activations: cpu}}\n";
	hs_sim sim;
	hs_err err = {0};
	ck_assert_int_ne(sim_text(nohost, NULL, 0, &sim, &err), 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, ":7:") && strstr(err.msg, "parallelism.offload.activations") &&
			      strstr(err.msg, "'bare' describes no host link") && strstr(err.msg, "cluster.groups.0.host"),
		      "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("offload");
	TCase *t = tcase_create("offload");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, pcie_rates_are_the_specifications);
	tcase_add_test(t, one_layer_optimizer_offload_by_hand);
	tcase_add_test(t, one_layer_activation_offload_by_hand);
	tcase_add_test(t, does_not_fit_without_offload_fits_with_it);
	tcase_add_test(t, gradient_copies_add_up_to_the_partition);
	tcase_add_test(t, faster_link_is_never_slower);
	tcase_add_test(t, offload_without_host_link_is_bad_input);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
