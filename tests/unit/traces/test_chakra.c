/* Chakra ET in and out (traces/chakra.h):
 * - round trip: a built-in workload simulated, written as Chakra ET, read back and simulated on the same
 *   scenario gives the same step time to the picosecond (analytical fidelity), every rank finishes when its
 *   stage's rep did, each kind of group carries the same bytes (the collectives inside layers are COMM_COLL
 *   nodes of their own) and is exposed as long, for several parallel layouts;
 * - ASTRA-sim's microbenchmark ETs (tests/chakra/gen_microbench.py) over 8, 64 and 1,024 ranks simulate to the
 *   collective's closed form within half a picosecond (the engine's resolution; under 1e-9 s absolute);
 * - bad input (a truncated file, a varint that runs on, a missing dependency, a cycle, a group naming a rank
 *   without a file) fails with HS_EINPUT naming the file, the node and what was expected. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/coll/coll.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/chakra.h"
#include "traces/chakra_wire.h"

static const char *scenario_text(int nodes)
{
	static char buf[1200];
	snprintf(buf, sizeof buf,
		 "name: chakra-test\n"
		 "cluster:\n"
		 "  groups:\n"
		 "    - {name: h100, nodes: %d, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
		 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
		 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
		 "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
		 "model: llama3-8b\n"
		 "training: {seq_len: 8192, global_batch: %d, micro_batch: 1, precision: bf16, optimizer: adam}\n"
		 "parallelism: {tp: 8, pp: 1, dp: %d}\n"
		 "simulation: {fidelity: analytical, seed: 1}\n",
		 nodes, nodes * 2, nodes);
	return buf;
}

static int chakra_sim(const char *scn, const char *const *sets, int nsets, const char *prefix, hs_sim *out,
		      hs_chakra_info *info, hs_err *err)
{
	hs_ydoc *doc = hs_yaml_load_file_set(scn, sets, nsets, err);
	ck_assert_msg(doc != NULL, "%s", err->msg);
	return hs_chakra_simulate(doc, scn, prefix, out, info, err);
}

/* Bytes each kind of group carries in the step (collectives, those inside compute tasks at the task's share,
 * sends), summed over every real rank: what a round trip must keep. Counted from the graph, beside the
 * summary's own accounting. */
static void kind_bytes(const hs_sim *sim, double out[HS_GROUP_COUNT])
{
	const hs_graph *g = &sim->b.graph;
	const hs_parallel *p = &sim->s->par;
	int n[HS_GROUP_COUNT] = {p->tp, p->cp, p->dp, p->ep, p->pp};
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		out[k] = 0;
	for (size_t i = 0; i < g->ntasks; i++) {
		const hs_task *t = &g->tasks[i];
		double mult = g->reps[t->rep].multiplicity;
		if (t->kind == HS_T_SEND)
			out[HS_GROUP_PP] += mult * t->bytes;
		else if (t->kind == HS_T_COLL)
			out[t->group] += mult * t->bytes;
		else if (t->kind == HS_T_COMPUTE)
			for (uint32_t q = t->op_first; q < t->op_first + t->op_count; q++) {
				const hs_op *o = &g->ops[q];
				if (o->kind == HS_OP_COMM && n[o->group] > 1)
					out[o->group] += mult * t->scale * o->bytes;
			}
	}
}

static void roundtrip(const char *const *sets, int nsets)
{
	const char *scn = "scenarios/default.yaml";
	struct hs_strlist sl = {0};
	for (int i = 0; i < nsets; i++)
		hs_strlist_push(&sl, sets[i]);
	hs_err err = {0};
	hs_sim a, b;
	/* kept where the collectives inside layers ran: the writer makes nodes of them */
	hs_ydoc *doc = hs_yaml_load_file_set(scn, sets, nsets, &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	ck_assert_msg(hs_simulate_doc_traced(doc, scn, 1, NULL, NULL, NULL, &a, &err) == 0, "%s", err.msg);
	char prefix[256];
	hs_test_tmpname(prefix, sizeof prefix, "chakra", "");
	int files;
	size_t nodes;
	ck_assert_msg(hs_chakra_write(prefix, &a, &files, &nodes, &err) == 0, "%s", err.msg);
	const hs_parallel *p = &a.s->par;
	int world = p->tp * p->cp * p->dp * p->pp;
	ck_assert_int_eq(files, world);
	hs_chakra_info info;
	ck_assert_msg(chakra_sim(scn, sets, nsets, prefix, &b, &info, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(info.ranks, world);
	ck_assert_uint_eq(info.nodes, nodes);
	ck_assert_uint_eq(info.unpriced, 0);
	/* the same picoseconds: the step is the same instant */
	ck_assert_msg(a.r.step_time_s == b.r.step_time_s, "%s: built-in %.15f s, through Chakra %.15f s",
		      nsets ? sets[0] : "default", a.r.step_time_s, b.r.step_time_s);
	/* every kind's bytes: the collectives inside layers came back as collectives of their kind (the slices
	 * of a backward pass, 1/16 each, sum to whole collectives: within a relative 1e-12 of rounding) */
	double ka[HS_GROUP_COUNT], kb[HS_GROUP_COUNT];
	kind_bytes(&a, ka);
	kind_bytes(&b, kb);
	/* the trace's compute nodes hold no collectives (measured durations): its TP bytes are COMM_COLL nodes */
	ck_assert(p->tp == 1 || kb[HS_GROUP_TP] > 0);
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		ck_assert_msg(fabs(ka[k] - kb[k]) <= 1e-12 * ka[k], "%s: kind %d: built-in %.17g bytes, through "
			      "Chakra %.17g", nsets ? sets[0] : "default", k, ka[k], kb[k]);
	/* and the communication exposed to each kind, to the rounding of the pieces' picoseconds (1 ps each) */
	const hs_rep_result *ra = &a.r.reps[a.r.critical_rep];
	int crit = -1;
	for (int r = 0; r < world && crit < 0; r++)
		if (r / (p->tp * p->cp * p->dp) == ra->stage)
			crit = r;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		ck_assert_msg(fabs(ra->exposed_s[k] - b.r.reps[crit].exposed_s[k]) <= 1e-7 * a.r.step_time_s,
			      "%s: exposed kind %d: built-in %.12f s, through Chakra %.12f s", nsets ? sets[0] : "default",
			      k, ra->exposed_s[k], b.r.reps[crit].exposed_s[k]);
	/* every rank ends when its stage's rep ended (Megatron's order: the stage is the outermost index) */
	for (int r = 0; r < world; r++) {
		int stage = r / (p->tp * p->cp * p->dp);
		ck_assert_msg(b.r.reps[r].finish_s == a.r.reps[stage].finish_s, "rank %d: %.15f vs stage %d: %.15f", r,
			      b.r.reps[r].finish_s, stage, a.r.reps[stage].finish_s);
	}
	for (int r = 0; r < world; r++) {
		char path[300];
		snprintf(path, sizeof path, "%s.%d.et", prefix, r);
		unlink(path);
	}
	hs_sim_free(&a);
	hs_sim_free(&b);
	hs_strlist_free(&sl);
}

START_TEST(roundtrip_default) { roundtrip(NULL, 0); }
END_TEST

START_TEST(roundtrip_layouts)
{
	const char *pp4[] = {"parallelism.tp=1", "parallelism.pp=4", "parallelism.dp=4"};
	roundtrip(pp4, 3);
	const char *zero[] = {"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8", "parallelism.zero=1"};
	roundtrip(zero, 4);
	const char *inter[] = {"parallelism.pp=2", "parallelism.schedule=interleaved", "parallelism.virtual_stages=2"};
	roundtrip(inter, 3);
}
END_TEST

/* ASTRA-sim's microbenchmarks: one collective over every rank, simulated = its closed form on the cluster */
static void microbench(int nodes)
{
	int n = nodes * 8;
	char dir[256], cmd[600], scn[256];
	hs_test_tmpname(dir, sizeof dir, "chakra_mb", "");
	const double size = 64.0 * 1024 * 1024;
	snprintf(cmd, sizeof cmd, "python3 tests/chakra/gen_microbench.py %s %d %.0f", dir, n, size);
	ck_assert_int_eq(system(cmd), 0);
	hs_test_write_tmp(scn, sizeof scn, "chakra_scn", scenario_text(nodes));
	static const struct {
		const char *name;
		enum hs_coll_op op;
	} k[] = {{"ALL_REDUCE", HS_COLL_ALL_REDUCE},
		 {"ALL_GATHER", HS_COLL_ALL_GATHER},
		 {"ALL_TO_ALL", HS_COLL_ALL_TO_ALL},
		 {"REDUCE_SCATTER", HS_COLL_REDUCE_SCATTER}};
	int *ranks = malloc((size_t)n * sizeof *ranks);
	for (int i = 0; i < n; i++)
		ranks[i] = i;
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		char prefix[300];
		snprintf(prefix, sizeof prefix, "%s/%s", dir, k[i].name);
		hs_err err = {0};
		hs_sim s;
		hs_chakra_info info;
		ck_assert_msg(chakra_sim(scn, NULL, 0, prefix, &s, &info, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(info.ranks, n);
		double want = hs_coll_time(s.s->cluster, k[i].op, (enum hs_coll_algo)s.s->wl.coll_algo, ranks, n, size);
		ck_assert(want > 0);
		/* the engine keeps time in whole picoseconds: the closed form rounded to one, within half of one
		 * (a relative 1e-9 of a 64 MiB collective's ~0.3 ms would be 0.3 ps, below that resolution) */
		ck_assert_msg(fabs(s.r.step_time_s - want) <= 0.5e-12 + 1e-15, "%s over %d: %.15g s, closed form %.15g s",
			      k[i].name, n, s.r.step_time_s, want);
		hs_sim_free(&s);
	}
	free(ranks);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	unlink(scn);
}

START_TEST(microbench_8) { microbench(1); }
END_TEST
START_TEST(microbench_64) { microbench(8); }
END_TEST
START_TEST(microbench_1024) { microbench(128); }
END_TEST

/* ---- bad input, built in memory with the wire writer ---- */

static void node(hs_pbw *file, uint64_t id, int type, const uint64_t *deps, int ndeps, const char *attr_name,
		 int64_t attr_v)
{
	hs_pbw m = {0}, a = {0};
	hs_pbw_uint(&m, HS_ETN_ID, id);
	hs_pbw_uint(&m, HS_ETN_TYPE, (uint64_t)type);
	for (int i = 0; i < ndeps; i++)
		hs_pbw_uint(&m, HS_ETN_DATA_DEPS, deps[i]);
	hs_pbw_uint(&m, HS_ETN_DURATION_MICROS, 5);
	if (attr_name) {
		hs_pbw_str(&a, HS_ETA_NAME, attr_name);
		hs_pbw_uint(&a, HS_ETA_INT64, (uint64_t)attr_v);
		hs_pbw_bytes(&m, HS_ETN_ATTR, a.p, a.n);
	}
	hs_pbw_delimited(file, &m);
	hs_pbw_free(&m);
	hs_pbw_free(&a);
}

static void meta(hs_pbw *file)
{
	hs_pbw m = {0};
	hs_pbw_str(&m, HS_ETG_VERSION, "0.0.4");
	hs_pbw_delimited(file, &m);
	hs_pbw_free(&m);
}

static void expect_bad(hs_pbw *files, int n, const char *const *expect)
{
	const uint8_t *bufs[4];
	size_t lens[4];
	const char *names[4] = {"t.0.et", "t.1.et", "t.2.et", "t.3.et"};
	for (int i = 0; i < n; i++)
		bufs[i] = files[i].p, lens[i] = files[i].n;
	hs_graph g;
	hs_chakra_info info;
	hs_err err = {0};
	ck_assert_int_eq(hs_chakra_read_mem(bufs, lens, names, n, 16, &g, &info, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	for (int i = 0; expect[i]; i++)
		ck_assert_msg(strstr(err.msg, expect[i]) != NULL, "'%s' lacks '%s'", err.msg, expect[i]);
	ck_assert_ptr_null(g.tasks);
}

START_TEST(bad_input)
{
	hs_pbw f[2] = {{0}};
	uint64_t d1[] = {1}, d2[] = {2}, d9[] = {9};
	/* truncated: the last node message cut short */
	meta(&f[0]);
	node(&f[0], 1, HS_ET_COMP, NULL, 0, NULL, 0);
	node(&f[0], 2, HS_ET_COMP, d1, 1, NULL, 0);
	f[0].n -= 3;
	expect_bad(f, 1, (const char *[]){"t.0.et: byte ", "node message 2 (after node 1) is cut short",
					  "expected a complete length-delimited message", NULL});
	/* a varint that runs past 10 bytes (the node id) */
	hs_pbw_clear(&f[0]);
	meta(&f[0]);
	hs_pbw m = {0};
	hs_pbw_varint(&m, HS_ETN_ID << 3);
	for (int i = 0; i < 11; i++)
		hs_pbw_varint(&m, 0), m.p[m.n - 1] = 0x80;
	hs_pbw_varint(&m, 1);
	hs_pbw_delimited(&f[0], &m);
	hs_pbw_free(&m);
	expect_bad(f, 1, (const char *[]){"t.0.et: byte ", "a varint runs past 10 bytes", NULL});
	/* a dependency on a missing id */
	hs_pbw_clear(&f[0]);
	meta(&f[0]);
	node(&f[0], 1, HS_ET_COMP, NULL, 0, NULL, 0);
	node(&f[0], 2, HS_ET_COMP, d9, 1, NULL, 0);
	expect_bad(f, 1, (const char *[]){"t.0.et: byte ", "node 2: depends on node 9", "expected the id of a node", NULL});
	/* a cycle 1 -> 2 -> 1 */
	hs_pbw_clear(&f[0]);
	meta(&f[0]);
	node(&f[0], 1, HS_ET_COMP, d2, 1, NULL, 0);
	node(&f[0], 2, HS_ET_COMP, d1, 1, NULL, 0);
	expect_bad(f, 1, (const char *[]){"t.0.et: byte ", "is on a dependency cycle", "expected", NULL});
	/* a collective whose group names rank 5 of a 2-rank trace */
	hs_pbw_clear(&f[0]);
	meta(&f[0]);
	hs_pbw a = {0}, l = {0}, lst = {0};
	hs_pbw_varint(&l, 0);
	hs_pbw_varint(&l, 5);
	hs_pbw_bytes(&lst, 1, l.p, l.n);
	hs_pbw_str(&a, HS_ETA_NAME, "comm_group");
	hs_pbw_bytes(&a, HS_ETA_INT64_LIST, lst.p, lst.n);
	hs_pbw_clear(&m);
	hs_pbw_uint(&m, HS_ETN_ID, 7);
	hs_pbw_uint(&m, HS_ETN_TYPE, HS_ET_COLL);
	hs_pbw_bytes(&m, HS_ETN_ATTR, a.p, a.n);
	hs_pbw_delimited(&f[0], &m);
	meta(&f[1]);
	expect_bad(f, 2, (const char *[]){"t.0.et: byte ", "node 7: comm_group names rank 5, which has no file",
					  "expected ranks 0 to 1", NULL});
	/* members of a group that issue different numbers of collectives */
	hs_pbw_clear(&f[0]);
	hs_pbw_clear(&f[1]);
	meta(&f[0]);
	meta(&f[1]);
	hs_pbw_clear(&a);
	hs_pbw_str(&a, HS_ETA_NAME, "comm_type");
	hs_pbw_uint(&a, HS_ETA_INT64, HS_ET_ALL_REDUCE);
	hs_pbw_clear(&m);
	hs_pbw_uint(&m, HS_ETN_ID, 3);
	hs_pbw_uint(&m, HS_ETN_TYPE, HS_ET_COLL);
	hs_pbw_bytes(&m, HS_ETN_ATTR, a.p, a.n);
	hs_pbw_clear(&a);
	hs_pbw_str(&a, HS_ETA_NAME, "comm_size");
	hs_pbw_uint(&a, HS_ETA_INT64, 1024);
	hs_pbw_bytes(&m, HS_ETN_ATTR, a.p, a.n);
	hs_pbw_delimited(&f[0], &m);
	expect_bad(f, 2, (const char *[]){"t.1.et: issues 0 collectives", "t.0.et issues 1", "expected every member",
					  NULL});
	/* a receive without its send */
	hs_pbw_clear(&f[0]);
	meta(&f[0]);
	node(&f[0], 4, HS_ET_RECV, NULL, 0, "comm_src", 1);
	expect_bad(f, 2, (const char *[]){"t.0.et: node 4: receive 1 from rank 1", "expected a COMM_SEND_NODE", NULL});
	hs_pbw_free(&m);
	hs_pbw_free(&a);
	hs_pbw_free(&l);
	hs_pbw_free(&lst);
	hs_pbw_free(&f[0]);
	hs_pbw_free(&f[1]);
}
END_TEST

/* file order that is not dependency order is sorted; metadata nodes pass dependencies through */
START_TEST(topological_order)
{
	hs_pbw f = {0};
	uint64_t d1[] = {1}, d3[] = {3};
	meta(&f);
	node(&f, 2, HS_ET_COMP, d3, 1, NULL, 0);     /* needs 3, which comes later in the file */
	node(&f, 3, HS_ET_METADATA, d1, 1, NULL, 0); /* no work: 2 waits for 1 through it */
	node(&f, 1, HS_ET_COMP, NULL, 0, NULL, 0);
	const uint8_t *b = f.p;
	const char *name = "t.0.et";
	hs_graph g;
	hs_chakra_info info;
	hs_err err = {0};
	ck_assert_msg(hs_chakra_read_mem(&b, &f.n, &name, 1, 1, &g, &info, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(g.ntasks, 2);
	ck_assert_uint_eq(info.skipped, 1);
	ck_assert_uint_eq(g.tasks[0].dep_count, 0); /* node 1 first */
	ck_assert_uint_eq(g.tasks[1].dep_count, 1);
	ck_assert_uint_eq(g.deps[g.tasks[1].dep_first], 0);
	ck_assert(g.ops[g.tasks[0].op_first].kind == HS_OP_TIMED);
	ck_assert(fabs(g.ops[g.tasks[0].op_first].dur_s - 5e-6) < 1e-18);
	hs_graph_free(&g);
	hs_pbw_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("chakra");
	TCase *c = tcase_create("chakra");
	tcase_set_timeout(c, 300);
	tcase_add_test(c, roundtrip_default);
	tcase_add_test(c, roundtrip_layouts);
	tcase_add_test(c, microbench_8);
	tcase_add_test(c, microbench_64);
	tcase_add_test(c, microbench_1024);
	tcase_add_test(c, bad_input);
	tcase_add_test(c, topological_order);
	suite_add_tcase(s, c);
	return s;
}

#include "tests/unit/check_main.h"
