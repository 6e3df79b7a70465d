/* Training steps at packet fidelity (sim/exec/comm_packet.c on sim/fabric/fabric_coll.c):
 * - bytes conserved: every receiver takes in exactly the ring's closed form (all-reduce 2(n-1) S/n,
 *   all-gather and reduce-scatter (n-1) S/n) for Simple pushes, LL128 and P2P reads, and a step's recorded
 *   collectives replayed give the closed form's bytes, count by count;
 * - a TP-8 step on one H100 node at packet fidelity, with credits and a receive buffer that never bind, equals
 *   the flow fidelity's step within 5% (the payload rate is the same; what differs is the packets' latency and
 *   the protocol's flags);
 * - atomic-heavy limits (signals as remote atomics, a slow atomic engine with a short queue): vector credits
 *   keep the excess atomics at their senders, so the data behind them in the in-order receive path waits
 *   less (the direction of the atomic-contention experiment, docs/fabric.md), and with vector's atomic pool
 *   below the credit loop the step is slower, as the first version's all-reduce loss showed;
 * - bad input: packet fidelity on a scale-up the model cannot represent, an unknown credit scheme: HS_EINPUT
 *   with file:line:col;
 * - same scenario, same result. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fabric/fabric_replay.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"

static void fabric_default(hs_fabric_params *p)
{
	hs_fabric_params_default(p);
	p->src_rate = hs_rate_from_Bps(450e9);
	p->path_rate = hs_rate_from_Bps(450e9 / 4);
	p->resp_rate = hs_rate_from_Bps(450e9);
	p->rxbuf = 4u << 20;
}

START_TEST(bytes_per_receiver_are_the_closed_form)
{
	hs_fabric_params p;
	fabric_default(&p);
	const hs_credit_scheme *s = hs_credit_find("per_resource");
	hs_credit_cfg cc = {0};
	int ops[] = {HS_FCOLL_ALL_REDUCE, HS_FCOLL_ALL_GATHER, HS_FCOLL_REDUCE_SCATTER};
	double sizes[] = {1000, 3 * 1048576.0 + 17, 40e6};
	for (int o = 0; o < 3; o++)
		for (int z = 0; z < 3; z++)
			for (int mode = 0; mode < 3; mode++) { /* Simple push, LL128, Simple pull */
				hs_fcoll c = {.op = ops[o], .n = 8, .bytes = sizes[z], .channels = 3,
					      .proto = mode == 1 ? HS_FCOLL_LL128 : HS_FCOLL_SIMPLE, .pull = mode == 2};
				hs_fcoll_out out;
				hs_fcoll_run(&p, s, &cc, &c, &out, NULL);
				uint64_t steps = ops[o] == HS_FCOLL_ALL_REDUCE ? 14 : 7;
				uint64_t closed = hs_fcoll_closed_bytes(&c);
				ck_assert_uint_eq(closed, steps * (uint64_t)(sizes[z] / 8));
				ck_assert_uint_eq(out.data_bytes, closed);
				if (mode == 0)
					ck_assert_uint_eq(out.bytes[HS_FOP_WRITE], closed);
				if (mode == 2)
					ck_assert_uint_eq(out.bytes[HS_FOP_READ], closed);
				if (mode == 1) /* 128 B lines of 120 B: at least 128/120 of the data, one line per slice more at most */
					ck_assert(out.bytes[HS_FOP_WRITE] >= closed * 128 / 120 &&
						  out.bytes[HS_FOP_WRITE] <= closed * 128 / 120 + 128 * 3 * steps * 2);
				ck_assert(out.time > 0);
			}
}
END_TEST

static const char *tp8 =
	"name: tp8\n"
	"cluster:\n"
	"  groups:\n"
	"    - {name: h100, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
	"       scaleup: {kind: %s, bandwidth: 450 GB/s, latency: 2 us},\n"
	"       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
	"  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
	"model: {name: tp8, layers: 2, hidden: 8192, heads: 64, ffn: 28672, vocab: 32000, seq_len: 8192}\n"
	"training: {seq_len: 8192, global_batch: 1, micro_batch: 1, precision: bf16, optimizer: adam}\n"
	"parallelism: {tp: 8, pp: 1, dp: 1, recompute: none}\n"
	"simulation:\n"
	"  fidelity: %s\n"
	"  collective_algorithm: ring\n"
	"%s";

static int sim_text(const char *kind, const char *fid, const char *extra, hs_sim *out, hs_err *err)
{
	char text[4096], path[64];
	snprintf(text, sizeof text, tp8, kind, fid, extra);
	hs_test_write_tmp(path, sizeof path, "packet", text);
	int rc = hs_simulate(path, NULL, -1, NULL, out, err);
	unlink(path);
	return rc;
}

static double step(const char *fid, const char *extra)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(sim_text("nvswitch", fid, extra, &sim, &err) == 0, "%s", err.msg);
	double t = sim.r.step_time_s;
	hs_sim_free(&sim);
	return t;
}

/* Credits and a receive buffer far above what a 450 GB/s sender has in flight. */
static const char *unbound =
	"  packet:\n"
	"    scheme: per_resource\n"
	"    fabric: {receive_buffer: 1 GiB}\n"
	"    credits: {hbm: 1 GiB, resp: 1 GiB, atomic_bytes: 1 GiB, bytes: 1 GiB, atomic: 1000000}\n";

START_TEST(tp8_packet_equals_flow_when_credits_never_bind)
{
	double flow = step("flow", "");
	double packet = step("packet", unbound);
	ck_assert_msg(fabs(packet - flow) / flow < 0.05, "packet %.6f s vs flow %.6f s", packet, flow);
	/* and it is the packet model that ran: a tighter receiver is slower */
	double tight = step("packet", "  packet: {fabric: {receive_buffer: 64 KiB}}\n");
	ck_assert_msg(tight > packet * 1.05, "64 KiB buffer %.6f s vs unbound %.6f s", tight, packet);
	ck_assert(step("packet", unbound) == packet); /* same scenario, same result */
}
END_TEST

/* Signals as remote atomics on an engine of 200 ns per atomic and a queue of 16, 32 channels: the flags of a
 * ring step (a tail and a head per channel and slice) outrun the engine. */
static void atomic_heavy(const char *scheme, int64_t atomic_credits, hs_replay_row *row)
{
	hs_fabric_exp_spec s;
	memset(&s, 0, sizeof s);
	s.name = "atomic-heavy";
	fabric_default(&s.p);
	s.p.path_latency = s.p.credit_latency = 1000000; /* 1 us */
	s.p.rxbuf = 2u << 20;
	s.p.atomic_time = 200000;
	s.p.atomic_depth = 16;
	s.credits.atomic = atomic_credits;
	hs_replay_coll v = {.c = {.op = HS_FCOLL_ALL_REDUCE, .n = 8, .bytes = 32.0 * 1048576, .channels = 32,
				  .signal = HS_FCOLL_SIG_ATOMIC},
			    .count = 2};
	hs_fabric_replay_run(&s, hs_credit_find(scheme), &v, 1, row);
}

START_TEST(atomic_heavy_vector_unblocks_what_waits_behind_atomics)
{
	hs_replay_row pr, vec, vlow, vhigh;
	atomic_heavy("per_resource", 16, &pr);
	atomic_heavy("vector", 16, &vec);
	/* the data and the heads no longer wait behind the atomic queue's overflow in the dispatcher */
	ck_assert_msg(vec.cls[HS_FCOLL_CLS_DATA].p50 < 0.8 * pr.cls[HS_FCOLL_CLS_DATA].p50, "data P50 %.1f vs %.1f ns",
		      vec.cls[HS_FCOLL_CLS_DATA].p50, pr.cls[HS_FCOLL_CLS_DATA].p50);
	ck_assert_msg(vec.cls[HS_FCOLL_CLS_HEAD].p99 < 0.8 * pr.cls[HS_FCOLL_CLS_HEAD].p99, "head P99 %.1f vs %.1f ns",
		      vec.cls[HS_FCOLL_CLS_HEAD].p99, pr.cls[HS_FCOLL_CLS_HEAD].p99);
	/* the signals gate the ring and the engine's work per step is fixed: the collective cannot get faster */
	ck_assert_msg(vec.comm_s >= 0.999 * pr.comm_s, "vector %.6g s vs per_resource %.6g s", vec.comm_s, pr.comm_s);
	/* 4 atomic credits over a loop of about 2.5 us carry at most 1.6 M atomics/s against the engine's 5 M/s */
	atomic_heavy("vector", 4, &vlow);
	ck_assert_msg(vlow.comm_s > 1.3 * pr.comm_s, "vector(4) %.6g s vs per_resource %.6g s", vlow.comm_s, pr.comm_s);
	/* a pool that covers the loop twice over does not bind: per_resource's time */
	atomic_heavy("vector", 64, &vhigh);
	ck_assert_msg(fabs(vhigh.comm_s - pr.comm_s) < 0.01 * pr.comm_s, "vector(64) %.6g s vs %.6g s", vhigh.comm_s,
		      pr.comm_s);
	ck_assert(vec.rx_bytes == vec.closed_bytes && pr.rx_bytes == pr.closed_bytes);
}
END_TEST

START_TEST(recorded_step_replayed_conserves_bytes)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(sim_text("nvswitch", "packet", "", &sim, &err) == 0, "%s", err.msg);
	hs_packet_use *u;
	size_t n = hs_exec_packet_uses(&sim.s->wl, &sim.s->sim, &sim.b, &u);
	ck_assert(n >= 1);
	hs_replay_coll v[8];
	double closed = 0, S = 8192.0 * 8192 * 2; /* the TP all-reduce of a layer: s x h bf16 */
	int found = 0;
	for (size_t i = 0; i < n && i < 8; i++) {
		v[i] = (hs_replay_coll){.c = {.op = u[i].op, .n = u[i].n, .bytes = u[i].bytes, .channels = 8},
					.count = u[i].count};
		closed += u[i].count * 2 * 7 * floor(u[i].bytes / 8);
		if (u[i].op == HS_FCOLL_ALL_REDUCE && u[i].bytes == S) {
			found = 1;
			ck_assert(u[i].count >= 8); /* 2 layers x 2 all-reduces, forward and backward */
		}
	}
	ck_assert(found);
	hs_fabric_exp_spec s;
	memset(&s, 0, sizeof s);
	s.name = "replay";
	fabric_default(&s.p);
	hs_replay_row row = {0};
	hs_fabric_replay_run(&s, hs_credit_find("vector"), v, (int)n, &row);
	ck_assert_msg(row.rx_bytes == closed && row.closed_bytes == closed, "%.0f replayed, %.0f closed", row.rx_bytes,
		      closed);
	free(u);
	hs_sim_free(&sim);
}
END_TEST

/* Two nodes, TP 2 x PP 2 x DP 4: the TP all-reduces run on the packet model, the data-parallel reduction across
 * the nodes and the pipeline sends on the flow network, whose completions come back through the packet
 * fidelity's communication interface (a regression: they once read the wrong state and the step deadlocked). */
static double default_step(const char *fid)
{
	const char *sets[] = {"model={preset: llama3-8b, layers: 4}", "simulation.collective_algorithm=ring", fid};
	struct hs_strlist sl = {.v = sets, .n = 3};
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(hs_simulate("scenarios/default.yaml", &sl, -1, NULL, &sim, &err) == 0, "%s", err.msg);
	ck_assert(sim.r.reps[0].exposed_s[HS_GROUP_PP] > 0 || sim.r.reps[sim.r.nreps - 1].exposed_s[HS_GROUP_PP] > 0 ||
		  sim.r.reps[0].exposed_s[HS_GROUP_DP] > 0);
	double t = sim.r.step_time_s;
	hs_sim_free(&sim);
	return t;
}

START_TEST(out_of_domain_traffic_runs_on_the_flow_network)
{
	double flow = default_step("simulation.fidelity=flow");
	double packet = default_step("simulation.fidelity=packet");
	ck_assert_msg(fabs(packet - flow) / flow < 0.05, "packet %.6f s vs flow %.6f s", packet, flow);
}
END_TEST

static void bad(const char *kind, const char *extra, const char *want)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert(sim_text(kind, "packet", extra, &sim, &err) != 0);
	ck_assert_int_eq(err.code, HS_EINPUT);
	/* file:line:col: the position of the offending key */
	const char *c = strstr(err.msg, ".yaml:") ? strstr(err.msg, ".yaml:") : strchr(err.msg, ':');
	int line = 0, col = 0;
	ck_assert_msg(c && sscanf(strchr(c, ':'), ":%d:%d:", &line, &col) == 2 && line > 0 && col > 0, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, want), "'%s' not in: %s", want, err.msg);
}

START_TEST(bad_input_is_exit_2_with_position)
{
	bad("nvlink-mesh", "", "switched scale-up domain");
	bad("pcie", "", "scale-up kind 'pcie'");
	bad("nvswitch", "  packet: {scheme: vectr}\n", "did you mean 'vector'");
	bad("nvswitch", "  packet: {scheme: credit_per_link}\n", "unknown credit scheme");
	bad("nvswitch", "  packet: {protocol: ll128, pull: true}\n", "Simple protocol only");
	bad("nvswitch", "  packet: {credits: {resp: 64}}\n", "pool");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("packet");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 600);
	tcase_add_test(t, bytes_per_receiver_are_the_closed_form);
	tcase_add_test(t, tp8_packet_equals_flow_when_credits_never_bind);
	tcase_add_test(t, atomic_heavy_vector_unblocks_what_waits_behind_atomics);
	tcase_add_test(t, recorded_step_replayed_conserves_bytes);
	tcase_add_test(t, bad_input_is_exit_2_with_position);
	tcase_add_test(t, out_of_domain_traffic_runs_on_the_flow_network);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
