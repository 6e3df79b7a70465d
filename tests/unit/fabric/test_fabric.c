/* The scale-up fabric: golden stage sums, M/D/1 at the atomic engine, Little's law on every queue, credit
 * conservation, determinism, the direction of the published P99 changes, and bad-input errors. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/fabric/fabric.h"
#include "sim/fabric/fabric_exp.h"
#include "sim/fabric/fabric_run.h"
/* Not used here: included with the fabric's headers to show they no longer clash (enum hs_op_kind and
 * hs_fabric_spec were once defined on both sides). */
#include "models/ops.h"
#include "topology/cluster.h"

/* ---- golden: one operation alone takes exactly the sum of its stage times ---- */

struct one {
	hs_time done;
};

static void on_done(void *ctx, int src, int cls, uint64_t tag)
{
	(void)src, (void)cls, (void)tag;
	((struct one *)ctx)->done = 1;
}

static hs_time single(const hs_credit_scheme *s, int kind, uint32_t size)
{
	hs_fabric_params p;
	hs_fabric_params_default(&p);
	p.sources = 1;
	hs_engine *e = hs_engine_create();
	hs_credit_cfg c = {0};
	hs_fabric *f = hs_fabric_create(e, &p, s, &c);
	struct one o = {0};
	hs_fabric_on_done(f, on_done, &o);
	hs_fabric_issue(f, 0, kind, size, 4096, 0, 1, 0);
	hs_engine_run(e, HS_TIME_MAX);
	ck_assert_uint_eq(o.done, 1);
	hs_time lat = hs_hist_quantile(&hs_fabric_class(f, 0)->lat, 0.5);
	ck_assert_uint_eq(hs_hist_quantile(&hs_fabric_class(f, 0)->stall, 0.5), 0);
	hs_fabric_destroy(f);
	hs_engine_destroy(e);
	return lat;
}

START_TEST(golden_single_op)
{
	hs_fabric_params p;
	hs_fabric_params_default(&p);
	const uint32_t h = p.header;
	for (int k = 0; hs_credit_schemes[k]; k++) {
		const hs_credit_scheme *s = hs_credit_schemes[k];
		uint32_t S = 64;
		/* read: header out, HBM, data back */
		hs_time want = hs_time_for(h, p.src_rate) + hs_time_for(h, p.path_rate) + p.path_latency +
			       hs_time_for(S, p.hbm_rate) + p.hbm_latency + hs_time_for(S + h, p.resp_rate) +
			       hs_time_for(S + h, p.path_rate) + p.path_latency;
		ck_assert_uint_eq(single(s, HS_FOP_READ, S), want);
		/* write and notify: data out, HBM, ack back */
		want = hs_time_for(S + h, p.src_rate) + hs_time_for(S + h, p.path_rate) + p.path_latency +
		       hs_time_for(S, p.hbm_rate) + p.hbm_latency + hs_time_for(h, p.resp_rate) +
		       hs_time_for(h, p.path_rate) + p.path_latency;
		ck_assert_uint_eq(single(s, HS_FOP_WRITE, S), want);
		ck_assert_uint_eq(single(s, HS_FOP_NOTIFY, S), want);
		/* atomic: operand out, engine, operand back */
		uint32_t A = 8;
		want = hs_time_for(A + h, p.src_rate) + hs_time_for(A + h, p.path_rate) + p.path_latency +
		       p.atomic_time + hs_time_for(A + h, p.resp_rate) + hs_time_for(A + h, p.path_rate) +
		       p.path_latency;
		ck_assert_uint_eq(single(s, HS_FOP_ATOMIC, A), want);
	}
}
END_TEST

/* ---- M/D/1 at the atomic engine ---- */

static hs_ydoc *doc_of(const char *text)
{
	hs_err err;
	hs_err_clear(&err);
	hs_ydoc *d = hs_yaml_load_string(text, strlen(text), "<test>", &err);
	ck_assert_msg(d != NULL, "%s", err.msg);
	return d;
}

/* Poisson atomics, deterministic 20 ns service, an atomic queue deep enough never to block the dispatcher.
 * Upstream links add only a constant delay and sub-ns serialisation, so arrivals at the engine stay Poisson.
 * Tolerance: 5%. At rho 0.7, 200k atomics span ~26k relaxation times (S / (1-rho)^2), so the standard error
 * of the mean wait is about 1%; 5% is about five standard errors. */
START_TEST(atomic_engine_md1)
{
	const double S = 20e-9;
	double rhos[] = {0.5, 0.7};
	for (int i = 0; i < 2; i++) {
		double rho = rhos[i];
		char text[1024];
		snprintf(text, sizeof text,
			 "kind: fabric\n"
			 "fabric: {path_bandwidth: 400 GB/s, source_bandwidth: 400 GB/s,\n"
			 "         atomic: {service_time: 20 ns, queue_depth: 1000000}}\n"
			 "traffic:\n"
			 "  groups:\n"
			 "    - {sources: 1, arrival: poisson, rate: %.6f M/s, ops: [{op: atomic, size: 8 B}]}\n"
			 "schemes: [none]\n"
			 "simulation: {seed: 3, ops: 200000, warmup: 0}\n",
			 rho / S / 1e6);
		hs_ydoc *d = doc_of(text);
		static hs_fabric_exp_spec s;
		hs_err err;
		hs_err_clear(&err);
		ck_assert_msg(hs_fabric_exp_parse(d, &s, &err) == 0, "%s", err.msg);
		hs_engine *e = hs_engine_create();
		hs_fabric *f = hs_fabric_create(e, &s.p, s.schemes[0], &s.credits);
		hs_traffic_run(&s.traffic, e, f);
		double wsum;
		uint64_t n;
		hs_fabric_atomic_wait(f, &wsum, &n);
		ck_assert_uint_eq(n, 200000);
		double wq = wsum / (double)n / 1e12;
		double want = rho * S / (2 * (1 - rho));
		ck_assert_msg(fabs(wq - want) / want < 0.05, "rho %.2f: Wq %.3f ns, M/D/1 %.3f ns", rho, wq * 1e9,
			      want * 1e9);
		hs_fabric_destroy(f);
		hs_engine_destroy(e);
		hs_yaml_free(d);
	}
}
END_TEST

/* ---- every published scenario, shortened: Little's law, credits, drain ---- */

static const char *const scen[] = {"hbm-hotspot",	  "atomic-contention",	 "response-incast",
				   "allreduce-shaped",	  "remote-read-shaped", "moe-dispatch-shaped"};

static hs_ydoc *load_scenario(const char *name, const char *ops, const char *schemes)
{
	char path[256], set[128];
	snprintf(path, sizeof path, "scenarios/fabric/%s.yaml", name);
	hs_err err;
	hs_err_clear(&err);
	hs_ydoc *d = hs_yaml_load_file(path, &err);
	ck_assert_msg(d != NULL, "%s", err.msg);
	if (ops) {
		snprintf(set, sizeof set, "simulation.ops=%s", ops);
		ck_assert(hs_yaml_set(d, set, &err) == 0);
		ck_assert(hs_yaml_set(d, "simulation.warmup=0", &err) == 0);
	}
	if (schemes) {
		snprintf(set, sizeof set, "schemes=%s", schemes);
		ck_assert_msg(hs_yaml_set(d, set, &err) == 0, "%s", err.msg);
	}
	return d;
}

START_TEST(little_and_credits_on_every_scenario)
{
	for (size_t i = 0; i < sizeof scen / sizeof scen[0]; i++) {
		hs_ydoc *d = load_scenario(scen[i], "3000", NULL);
		static hs_fabric_exp_spec s;
		static hs_fabric_outcome o;
		hs_err err;
		hs_err_clear(&err);
		ck_assert_msg(hs_fabric_exp_parse(d, &s, &err) == 0, "%s", err.msg);
		for (int k = 0; k < s.nschemes; k++) {
			hs_fabric_exp_run(&s, s.schemes[k], &o);
			ck_assert_uint_eq(o.issued, 3000);
			ck_assert_msg(o.little_err < 1e-9, "%s/%s: Little's law off by %g", scen[i], s.schemes[k]->name,
				      o.little_err);
			for (int p = 0; p < o.npools; p++) {
				ck_assert_int_ge(o.pool_min[p], 0);
				ck_assert_int_eq(o.pool_end[p], o.pool_cap[p]);
			}
		}
		hs_yaml_free(d);
	}
}
END_TEST

/* The vector atomic pool is actually exhausted under atomic contention (the limit is exercised) and still
 * never goes below zero. */
START_TEST(vector_atomic_pool_binds)
{
	hs_ydoc *d = load_scenario("atomic-contention", "5000", "[per_resource, vector]");
	static hs_fabric_exp_spec s;
	static hs_fabric_outcome o;
	hs_err err;
	hs_err_clear(&err);
	ck_assert(hs_fabric_exp_parse(d, &s, &err) == 0);
	hs_fabric_exp_run(&s, s.schemes[1], &o);
	ck_assert_str_eq(o.pool_names[1], "atomics");
	ck_assert_int_eq(o.pool_min[1], 0);
	ck_assert_int_eq(o.pool_end[1], o.pool_cap[1]);
	hs_yaml_free(d);
}
END_TEST

/* ---- determinism ---- */

static char *run_json(hs_ydoc *d, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	hs_err err;
	hs_err_clear(&err);
	ck_assert_msg(hs_fabric_run(d, 1, f, &err) == 0, "%s", err.msg);
	fclose(f);
	return buf;
}

START_TEST(same_seed_same_bytes)
{
	hs_ydoc *d = load_scenario("response-incast", "4000", NULL);
	size_t la, lb, lc;
	char *a = run_json(d, &la), *b = run_json(d, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(a, b, la) == 0);
	ck_assert(strstr(a, "\"p99_change_vs_baseline_pct\"") != NULL);
	hs_err err;
	ck_assert(hs_yaml_set(d, "simulation.seed=2", &err) == 0);
	char *c = run_json(d, &lc);
	ck_assert(lc != la || memcmp(a, c, la) != 0);
	free(a);
	free(b);
	free(c);
	/* text output too */
	char *t1 = NULL, *t2 = NULL;
	size_t n1, n2;
	FILE *f1 = open_memstream(&t1, &n1), *f2 = open_memstream(&t2, &n2);
	hs_err_clear(&err);
	ck_assert(hs_fabric_run(d, 0, f1, &err) == 0);
	ck_assert(hs_fabric_run(d, 0, f2, &err) == 0);
	fclose(f1);
	fclose(f2);
	ck_assert_uint_eq(n1, n2);
	ck_assert(memcmp(t1, t2, n1) == 0);
	ck_assert(strstr(t1, "P99 of focus vs per_resource") != NULL);
	free(t1);
	free(t2);
	hs_yaml_free(d);
}
END_TEST

/* ---- direction of the P99 change, vector vs the per-resource byte baseline ---- */

static double p99_change_set(const char *name, const char *ops, const char *set1, const char *set2)
{
	hs_ydoc *d = load_scenario(name, ops, "[per_resource, vector]");
	static hs_fabric_exp_spec s;
	static hs_fabric_outcome b, v;
	hs_err err;
	hs_err_clear(&err);
	if (set1)
		ck_assert_msg(hs_yaml_set(d, set1, &err) == 0, "%s", err.msg);
	if (set2)
		ck_assert_msg(hs_yaml_set(d, set2, &err) == 0, "%s", err.msg);
	ck_assert_msg(hs_fabric_exp_parse(d, &s, &err) == 0, "%s", err.msg);
	hs_fabric_exp_run(&s, s.schemes[0], &b);
	hs_fabric_exp_run(&s, s.schemes[1], &v);
	hs_yaml_free(d);
	return 100.0 * (v.focus.p99 - b.focus.p99) / b.focus.p99;
}

static double p99_change(const char *name, const char *ops) { return p99_change_set(name, ops, NULL, NULL); }

/* Published: -52.4% (atomic contention), -10.2% (response incast), parity (HBM hotspot, MoE dispatch). The
 * bounds pin the direction with room for the shortened runs; docs/fabric.md has the full-length figures. */
START_TEST(published_directions)
{
	double c;
	c = p99_change("atomic-contention", "20000");
	ck_assert_msg(c < -25, "atomic contention: vector changes small-op P99 by %+.1f%% (published -52.4%%)", c);
	c = p99_change("response-incast", "20000");
	ck_assert_msg(c < 0, "response incast: %+.1f%% (published -10.2%%)", c);
	c = p99_change("hbm-hotspot", "20000");
	ck_assert_msg(fabs(c) < 5, "HBM hotspot: %+.1f%% (published: parity)", c);
	/* MoE: published parity; this model gives a modest gain at full length (-6.3%, seeds 2-4: -6.4%, -14.5%,
	 * -9.0%): vector returns HBM credits at HBM completion, per_resource only after the write's ack. */
	c = p99_change("moe-dispatch-shaped", "30000");
	ck_assert_msg(c < 0 && c > -20, "MoE dispatch: %+.1f%% (published: parity; this model: -6.3%%)", c);
	/* Not reproduced (docs/fabric.md explains why): both application shapes give parity, where the
	 * publication reports -57.7% and -14.5%. Pinned as this model gives them, so that a change is noticed.
	 * All-reduce-shaped: the signals' P99 is the atomic engine's work per step (128 signals x 20 ns), which
	 * no admission rule can shorten, and the signals reach the target paced by the links. */
	c = p99_change("allreduce-shaped", "20000");
	ck_assert_msg(fabs(c) < 5, "all-reduce-shaped: %+.1f%% (published -57.7%%; this model: parity)", c);
	c = p99_change("remote-read-shaped", "20000");
	ck_assert_msg(fabs(c) < 5, "remote-read-shaped: %+.1f%% (published -14.5%%, this model: parity)", c);
}
END_TEST

/* Why the first version lost on all-reduce-shaped (+39%): with credits taken at issue, a signal holds one of
 * vector's 64 atomic credits (the queue depth) while it waits in its sender's egress queue behind slices, so
 * the credits do not cover the loop and the engine idles. Taken at transmission (the default) the loss is
 * gone; at issue it comes back, and at issue with 128 atomic credits it is gone again. */
START_TEST(allreduce_loss_is_the_atomic_credit_loop)
{
	double c = p99_change_set("allreduce-shaped", "20000", "fabric.admission=issue", NULL);
	ck_assert_msg(c > 15, "all-reduce-shaped, credits at issue: %+.1f%% (expected a loss, about +39%%)", c);
	c = p99_change_set("allreduce-shaped", "20000", "fabric.admission=issue", "credits.atomic=128");
	ck_assert_msg(fabs(c) < 5, "all-reduce-shaped, credits at issue, 128 atomic credits: %+.1f%%", c);
	c = p99_change_set("allreduce-shaped", "20000", "fabric.admission=transmit", NULL);
	ck_assert_msg(fabs(c) < 5, "all-reduce-shaped, credits at transmission: %+.1f%%", c);
}
END_TEST

/* Credits at transmission: one source issues three 4 KiB writes at t = 0. Each takes its credits only when
 * the egress link is free, so the third waits exactly two writes' serialisation: 2 x 16 packets x (256 + 16)
 * B / 100 GB/s = 87.04 ns (the stall histogram's bucket is within 1/256). At issue all three are admitted at
 * once (stall 0). */
static hs_time third_write_stall(int at_issue)
{
	hs_fabric_params p;
	hs_fabric_params_default(&p);
	p.sources = 1;
	p.admit_at_issue = at_issue;
	hs_engine *e = hs_engine_create();
	hs_credit_cfg c = {0};
	hs_fabric *f = hs_fabric_create(e, &p, hs_credit_find("vector"), &c);
	for (int i = 0; i < 3; i++)
		hs_fabric_issue(f, 0, HS_FOP_WRITE, 4096, 4096u * (unsigned)i, 0, 1, 0);
	hs_engine_run(e, HS_TIME_MAX);
	hs_time st = hs_hist_quantile(&hs_fabric_class(f, 0)->stall, 1.0);
	hs_fabric_destroy(f);
	hs_engine_destroy(e);
	return st;
}

START_TEST(credits_taken_at_transmission)
{
	double want = 2 * 16 * 272 / 100e9 * 1e12; /* ps */
	hs_time st = third_write_stall(0);
	ck_assert_msg(fabs((double)st - want) <= want / 256 + 1, "third write stalled %llu ps, expected %.0f",
		      (unsigned long long)st, want);
	ck_assert_uint_eq(third_write_stall(1), 0);
}
END_TEST

/* arrival: steps is a barrier: 4 sources x (2 writes + 3 atomics) = 20 operations per step; a step starts
 * only after the previous one completed and a 1 us gap, so at most 20 are ever in flight and 20 steps take
 * at least 19 gaps. */
START_TEST(steps_are_a_barrier)
{
	hs_ydoc *d = doc_of("kind: fabric\n"
			    "traffic:\n"
			    "  groups:\n"
			    "    - {sources: 4, arrival: steps, gap: 1 us,\n"
			    "       ops: [{op: write, size: 1 KiB, count: 2}, {op: atomic, size: 8 B, count: 3}]}\n"
			    "schemes: [vector]\n"
			    "simulation: {seed: 1, ops: 400, warmup: 0}\n");
	static hs_fabric_exp_spec s;
	hs_err err;
	hs_err_clear(&err);
	ck_assert_msg(hs_fabric_exp_parse(d, &s, &err) == 0, "%s", err.msg);
	hs_engine *e = hs_engine_create();
	hs_fabric *f = hs_fabric_create(e, &s.p, s.schemes[0], &s.credits);
	uint64_t n = hs_traffic_run(&s.traffic, e, f);
	ck_assert_uint_eq(n, 400); /* 20 ops per step, 20 steps */
	hs_fabric_close(f);
	/* never more than one step (20 ops) in flight */
	ck_assert(hs_fabric_queues_of(f)->inflight.max <= 20);
	/* 20 steps, each at least the 1 us gap apart (19 gaps) */
	ck_assert(hs_engine_now(e) >= 19 * 1000000LL);
	hs_fabric_destroy(f);
	hs_engine_destroy(e);
	hs_yaml_free(d);
}
END_TEST

/* credits.split: per_sender: each sender owns floor(cap / senders) of every pool; the totals are back at
 * drain, never negative, and an operation larger than one sender's share is a clear error. */
START_TEST(per_sender_split)
{
	hs_ydoc *d = load_scenario("atomic-contention", "4000", "[per_resource, vector]");
	hs_err err;
	hs_err_clear(&err);
	ck_assert(hs_yaml_set(d, "credits.split=per_sender", &err) == 0);
	static hs_fabric_exp_spec s;
	static hs_fabric_outcome o;
	ck_assert_msg(hs_fabric_exp_parse(d, &s, &err) == 0, "%s", err.msg);
	hs_fabric_exp_run(&s, s.schemes[1], &o);
	ck_assert_str_eq(o.pool_names[1], "atomics");
	ck_assert_int_eq(o.pool_cap[1], 64); /* 16 senders x 4 */
	ck_assert(o.little_err < 1e-9);
	for (int p = 0; p < o.npools; p++) {
		ck_assert_int_ge(o.pool_min[p], 0);
		ck_assert_int_eq(o.pool_end[p], o.pool_cap[p]);
	}
	/* a flooding sender cannot hold more than its share: the 12 atomic senders hold at most 48 */
	ck_assert_int_ge(o.pool_min[1], 64 - 12 * 4);
	hs_yaml_free(d);
}
END_TEST

/* ---- bad input ---- */

static void bad(const char *text, const char *want)
{
	hs_ydoc *d = doc_of(text);
	hs_err err;
	hs_err_clear(&err);
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(hs_fabric_run(d, 0, f, &err), -1);
	fclose(f);
	ck_assert_uint_eq(len, 0); /* nothing half-done printed */
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, want) != NULL, "wanted '%s' in: %s", want, err.msg);
	free(buf);
	hs_yaml_free(d);
}

#define TRAFFIC                                                                                               \
	"traffic:\n"                                                                                           \
	"  groups:\n"                                                                                          \
	"    - {sources: 2, arrival: closed, window: 2, ops: [{op: write, size: 4 KiB}]}\n"

START_TEST(bad_input_errors)
{
	bad("kind: fabric\nfabric:\n  hbm: {partitions: 8}\ntraffic:\n  address_space: 1 KiB\n"
	    "  groups: [{sources: 1, arrival: closed, window: 1, ops: [{op: read, size: 64 B}]}]\n",
	    "<test>:3:21: fabric.hbm.partitions: 8 HBM partitions but the address space holds only 4");
	bad("kind: fabric\nfabric:\n  response: {bandwidth: 0 GB/s}\n" TRAFFIC,
	    "<test>:3:25: fabric.response.bandwidth: must be greater than zero");
	bad("kind: fabric\nfabric:\n  atomic: {service_time: 0 ns}\n" TRAFFIC,
	    "<test>:3:26: fabric.atomic.service_time: must be greater than zero");
	bad("kind: fabric\nfabric: {hbm: {bandwidth: 0}}\n" TRAFFIC, "fabric.hbm.bandwidth: must be greater than zero");
	bad("kind: fabric\ntraffic:\n  groups:\n    - {sources: 2, arrival: closed, window: 0, ops: [{op: read, size: 64 B}]}\n",
	    "<test>:4:45: traffic.groups.0.window: 0 outstanding operations never issues anything");
	bad("kind: fabric\ncredits:\n  hbm: 2 KiB\n" TRAFFIC "schemes: [per_resource]\n",
	    "<test>:3:8: credits.hbm: 2048 is smaller than one operation: g0.write-4KiB");
	bad("kind: fabric\ncredits: {bytes: 1 KiB}\n" TRAFFIC, "credits.bytes: 1024 is smaller than one operation");
	bad("kind: fabric\nfabric: {paths: 4, pahts: 2}\n" TRAFFIC, "<test>:2:20: fabric.pahts: unknown key (did you mean 'paths'?)");
	bad("kind: fabric\n" TRAFFIC "schemes: [vectr]\n", "unknown scheme 'vectr' (did you mean 'vector'?)");
	bad("kind: fabric\ntraffic: {mix: atomic_contension}\n", "did you mean 'atomic_contention'?");
	bad("kind: fabric\nfabric: {path_bandwidth: 10 GB}\n" TRAFFIC, "fabric.path_bandwidth:");
	bad("kind: fabric\n" TRAFFIC "simulation: {ops: 10, warmup: 10}\n", "simulation.warmup: 10 is not below ops");
	bad("kind: fabric\ntraffic:\n  groups: [{sources: 1, rate: 1 M/s, window: 2, ops: [{op: read, size: 8 B}]}]\n",
	    "window: only for closed-loop arrival");
	bad("kind: fabric\ntraffic:\n  groups: [{sources: 1, arrival: steps, rate: 1 M/s, ops: [{op: read, size: 8 B}]}]\n",
	    "rate: not for arrival: steps");
	bad("kind: fabric\ntraffic:\n  groups: [{sources: 1, arrival: closed, window: 1, ops: [{op: read, size: 8 B, count: 2}]}]\n",
	    "count: only for arrival: steps");
	bad("kind: fabric\ncredits: {split: per_sender, hbm: 6 KiB}\n" TRAFFIC "schemes: [per_resource]\n",
	    "credits.hbm: 3072 is smaller than one operation: g0.write-4KiB (write of 4096 B) needs 4096 in pool "
	    "hbm_bytes of scheme per_resource (per sender: the pool split 2 ways)");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fabric");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, golden_single_op);
	tcase_add_test(t, atomic_engine_md1);
	tcase_add_test(t, little_and_credits_on_every_scenario);
	tcase_add_test(t, vector_atomic_pool_binds);
	tcase_add_test(t, same_seed_same_bytes);
	tcase_add_test(t, published_directions);
	tcase_add_test(t, allreduce_loss_is_the_atomic_credit_loop);
	tcase_add_test(t, credits_taken_at_transmission);
	tcase_add_test(t, steps_are_a_barrier);
	tcase_add_test(t, per_sender_split);
	tcase_add_test(t, bad_input_errors);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
