/* Task-graph export (traces/graph_export.h) and its reader (kernels/graph_reader.h, the code refexec uses):
 * - export -> parse back -> the same graph, every field, on a 1-GPU step and on multi-rank ones (TP, PP, DP,
 *   ZeRO, a node that holds only one pipeline stage);
 * - collective instances hold the whole group, and every send has exactly one receive;
 * - `hetsim export-graph` through its command function;
 * - hand-written graphs parse, with the documented defaults;
 * - malformed files are rejected with their line number. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/graph_reader.h"
#include "models/graph.h"
#include "sim/cli/cmd_export_graph.h"
#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/graph_export.h"

/* the reader's enums are hetsim's */
#define EQ(a, b) ((int)(a) == (int)(b))
_Static_assert(EQ(HSG_OP_GEMM, HS_OP_GEMM) && EQ(HSG_OP_ATTN, HS_OP_ATTN) && EQ(HSG_OP_MEM, HS_OP_MEM) &&
		       EQ(HSG_OP_COMM, HS_OP_COMM) && EQ(HSG_OP_OPTIMIZER, HS_OP_OPTIMIZER),
	       "op kinds");
_Static_assert(EQ(HSG_ALL_REDUCE, HS_COLL_ALL_REDUCE) && EQ(HSG_ALL_GATHER, HS_COLL_ALL_GATHER) &&
		       EQ(HSG_REDUCE_SCATTER, HS_COLL_REDUCE_SCATTER) && EQ(HSG_ALL_TO_ALL, HS_COLL_ALL_TO_ALL) &&
		       EQ(HSG_BROADCAST, HS_COLL_BROADCAST) && EQ(HSG_REDUCE, HS_COLL_REDUCE) &&
		       EQ(HSG_SENDRECV, HS_COLL_SENDRECV) && EQ(HSG_COLL_COUNT, HS_COLL_OP_COUNT),
	       "collectives");
_Static_assert(EQ(HSG_GROUP_TP, HS_GROUP_TP) && EQ(HSG_GROUP_CP, HS_GROUP_CP) && EQ(HSG_GROUP_DP, HS_GROUP_DP) &&
		       EQ(HSG_GROUP_EP, HS_GROUP_EP) && EQ(HSG_GROUP_PP, HS_GROUP_PP) && EQ(HSG_GROUP_COUNT, HS_GROUP_COUNT),
	       "groups");
_Static_assert(EQ(HSG_T_COMPUTE, HS_T_COMPUTE) && EQ(HSG_T_COLL, HS_T_COLL) && EQ(HSG_T_SEND, HS_T_SEND) &&
		       EQ(HSG_T_RECV, HS_XT_RECV),
	       "task kinds");
/* every stream but the host's, which the export refuses (traces/graph_export.c: no offload tasks) */
_Static_assert(EQ(HSG_S_COMPUTE, HS_S_COMPUTE) && EQ(HSG_S_COMM, HS_S_COMM) && EQ(HSG_S_P2P, HS_S_P2P) &&
		       EQ(HSG_S_COUNT, HS_S_HOST),
	       "streams");
_Static_assert(EQ(HSG_W_FWD, HS_W_FWD) && EQ(HSG_W_BWD, HS_W_BWD) && EQ(HSG_W_BWD_INPUT, HS_W_BWD_INPUT) &&
		       EQ(HSG_W_BWD_WEIGHT, HS_W_BWD_WEIGHT) && EQ(HSG_W_OPTIMIZER, HS_W_OPTIMIZER) &&
		       EQ(HSG_W_GRAD_REDUCE, HS_W_GRAD_REDUCE) && EQ(HSG_W_PARAM_GATHER, HS_W_PARAM_GATHER) &&
		       EQ(HSG_W_P2P, HS_W_P2P),
	       "what");
_Static_assert(EQ(HSG_FP8, HS_FP8) && EQ(HSG_BF16, HS_BF16) && EQ(HSG_FP16, HS_FP16) && EQ(HSG_TF32, HS_TF32) &&
		       EQ(HSG_FP32, HS_FP32),
	       "dtypes");

static char *write_tmp(const char *text)
{
	char *path = malloc(64);
	hs_test_write_tmp(path, 64, "graph", text);
	return path;
}

/* Export `ranks` (NULL: node `node`) of a scenario through a file and check that the reader gives back every
 * field of the expanded graph. Returns the number of tasks. */
static size_t roundtrip(const char *scenario_text, int node, const int *ranks, int nranks, hsg_graph *out)
{
	char *spath = write_tmp(scenario_text);
	hs_sim sim;
	hs_err err = {0};
	int rc = hs_simulate(spath, NULL, 1, NULL, &sim, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	int *own = NULL;
	if (!ranks) {
		ck_assert_int_eq(hs_graph_export_node_ranks(sim.s, node, &own, &nranks, &err), 0);
		ranks = own;
	}
	hs_graph_export x;
	ck_assert_msg(hs_graph_export_plan(sim.s, &sim.b, ranks, nranks, &x, &err) == 0, "%s", err.msg);
	char gpath[64];
	snprintf(gpath, sizeof gpath, "%s.graph", spath);
	ck_assert_msg(hs_graph_export_file(gpath, sim.s, &sim.b, &sim.r, &x, "hetsim export-graph test", &err) == 0,
		      "%s", err.msg);
	char msg[512];
	hsg_graph g;
	ck_assert_msg(hsg_read_file(gpath, &g, msg, sizeof msg) == 0, "%s", msg);
	const hs_graph *G = &sim.b.graph;

	/* header */
	ck_assert_int_eq(g.version, 1);
	ck_assert_str_eq(g.name, sim.s->name);
	ck_assert_str_eq(g.scenario, spath);
	ck_assert_str_eq(g.command, "hetsim export-graph test");
	ck_assert_int_eq(g.dtype, sim.s->train.dtype);
	ck_assert_int_eq(g.hidden, sim.s->model.hidden);
	ck_assert_int_eq(g.world, x.world);
	ck_assert(g.step_pred_s == sim.r.step_time_s);
	ck_assert_str_eq(g.device, x.ranks[0].device);
	/* ranks and groups */
	ck_assert_int_eq(g.nranks, x.nranks);
	for (int i = 0; i < x.nranks; i++) {
		const hsg_rank *a = &g.ranks[i];
		const hs_xrank *b = &x.ranks[i];
		ck_assert_int_eq(a->rank, b->rank);
		ck_assert_int_eq(a->node, b->node);
		ck_assert_int_eq(a->local, b->local);
		ck_assert_int_eq(a->stage, b->stage);
		ck_assert_int_eq(a->tp_index, b->tp_index);
		ck_assert_int_eq(a->cp_index, b->cp_index);
		ck_assert_int_eq(a->dp_index, b->dp_index);
		ck_assert_str_eq(a->device, b->device);
		for (int k = 0; k < HS_GROUP_COUNT; k++)
			ck_assert_int_eq(a->groups[k], b->groups[k]);
	}
	ck_assert_int_eq(g.ngroups, x.ngroups);
	for (int i = 0; i < x.ngroups; i++) {
		ck_assert_int_eq(g.groups[i].kind, x.groups[i].kind);
		ck_assert_int_eq(g.groups[i].n, x.groups[i].n);
		for (int m = 0; m < x.groups[i].n; m++)
			ck_assert_int_eq(g.groups[i].ranks[m], x.groups[i].ranks[m]);
	}
	/* ops: every field the kind uses */
	ck_assert_uint_eq(g.nops, G->nops);
	for (size_t i = 0; i < G->nops; i++) {
		const hs_op *o = &G->ops[i];
		const hsg_op *q = &g.ops[i];
		ck_assert_int_eq(q->kind, o->kind);
		ck_assert_str_eq(q->name, o->name);
		ck_assert_int_eq(q->dtype, o->dtype);
		ck_assert(q->flops == o->flops && q->bytes == o->bytes);
		ck_assert_int_eq(q->recompute, !!o->recompute);
		if (o->kind == HS_OP_GEMM)
			ck_assert(q->m == o->m && q->n == o->n && q->k == o->k && q->count == o->count);
		if (o->kind == HS_OP_ATTN)
			ck_assert(q->b == o->b && q->h == o->h && q->s == o->s && q->skv == o->s_kv && q->d == o->d &&
				  q->causal == !!o->causal && q->bwd == !!o->bwd);
		if (o->kind == HS_OP_COMM)
			ck_assert(q->coll == (int)o->coll && q->group == (int)o->group);
	}
	/* tasks */
	ck_assert_uint_eq(g.ntasks, x.ntasks);
	ck_assert_int_eq(g.ninst, x.ninst);
	for (size_t i = 0; i < x.ntasks; i++) {
		const hs_xtask *t = &x.tasks[i];
		const hs_task *s = &G->tasks[t->src];
		const hsg_task *q = &g.tasks[i];
		ck_assert_int_eq(q->rank, t->rank);
		ck_assert_int_eq(q->kind, t->kind);
		ck_assert_int_eq(q->stream, t->kind == HS_XT_RECV ? HS_S_P2P : s->stream);
		ck_assert_int_eq(q->what, s->what);
		ck_assert_int_eq(q->mb, s->mb);
		ck_assert_int_eq(q->chunk, s->chunk);
		if (t->kind == HS_XT_COMPUTE) {
			ck_assert_uint_eq(q->op_first, s->op_first);
			ck_assert_uint_eq(q->op_count, s->op_count);
			ck_assert(q->scale == s->scale);
		} else {
			ck_assert(q->bytes == s->bytes);
		}
		ck_assert_int_eq(q->peer, t->peer);
		ck_assert_int_eq(q->group, t->group);
		ck_assert_int_eq(q->coll, t->kind == HS_XT_COLL ? (int)s->coll : -1);
		ck_assert_int_eq(q->inst, t->inst);
		ck_assert(q->pred_s == sim.r.spans[t->src].end - sim.r.spans[t->src].start);
		ck_assert_uint_eq(q->dep_count, t->dep_count);
		for (uint32_t j = 0; j < t->dep_count; j++)
			ck_assert_uint_eq(g.deps[q->dep_first + j], x.deps[t->dep_first + j]);
	}
	/* instances: a collective's members are its group's exported ranks, once each; a send pairs with one
	 * receive when the receiver is exported */
	for (int in = 0; in < g.ninst; in++) {
		int coll = 0, sends = 0, recvs = 0, grp = -1, members = 0, send_peer = -1;
		for (size_t i = 0; i < g.ntasks; i++) {
			const hsg_task *q = &g.tasks[i];
			if (q->inst != in)
				continue;
			coll += q->kind == HSG_T_COLL;
			sends += q->kind == HSG_T_SEND;
			recvs += q->kind == HSG_T_RECV;
			if (q->kind == HSG_T_COLL) {
				ck_assert(grp < 0 || grp == q->group);
				grp = q->group;
				members++;
			}
			if (q->kind == HSG_T_SEND)
				send_peer = q->peer;
		}
		if (coll) {
			ck_assert_int_eq(sends + recvs, 0);
			int local = 0;
			for (int m = 0; m < g.groups[grp].n; m++)
				local += hsg_rank_index(&g, g.groups[grp].ranks[m]) >= 0;
			ck_assert_int_eq(members, local);
		} else {
			ck_assert_int_le(sends, 1);
			ck_assert_int_le(recvs, 1);
			ck_assert_int_ge(sends + recvs, 1);
			if (sends && hsg_rank_index(&g, send_peer) >= 0)
				ck_assert_int_eq(recvs, 1);
		}
	}
	size_t n = x.ntasks;
	hs_graph_export_free(&x);
	free(own);
	hs_sim_free(&sim);
	remove(gpath);
	remove(spath);
	free(spath);
	*out = g;
	return n;
}

#define CLUSTER(nodes, gpn)                                                                                        \
	"cluster:\n  groups:\n    - {name: a, nodes: " #nodes ", gpus_per_node: " #gpn ", gpu: H100-SXM-80GB,\n"      \
	"       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us}, nic: {bandwidth: 400 Gb/s, per_node: " \
	#gpn ", latency: 3 us}}\n  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n"
#define MODEL "model: {layers: 4, hidden: 1024, heads: 8, ffn: 4096, vocab: 32000, seq_len: 1024}\n"

START_TEST(one_gpu_is_the_graph)
{
	FILE *f = fopen("scenarios/validation/refexec/gpt-1gpu.yaml", "r");
	ck_assert_ptr_nonnull(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	hsg_graph g;
	size_t nt = roundtrip(text, 0, NULL, 0, &g);
	/* one rank, no sends: the export is hetsim's graph task for task */
	ck_assert_uint_eq(nt, 3); /* forward, backward, optimizer */
	ck_assert_int_eq(g.nranks, 1);
	ck_assert_int_eq(g.hidden, 2048);
	ck_assert_int_eq(g.tasks[2].what, HSG_W_OPTIMIZER);
	ck_assert_int_eq(g.tasks[2].dep_count, 1);
	ck_assert_uint_eq(g.deps[g.tasks[2].dep_first], 1);
	hsg_free(&g);
}
END_TEST

START_TEST(multi_rank_one_node)
{
	hsg_graph g;
	/* 8 GPUs: tp 2 x dp 2 x pp 2, ZeRO-1 (reduce-scatter + all-gather), interleaved pipeline */
	roundtrip("name: multi\n" CLUSTER(1, 8) MODEL "training: {global_batch: 8, micro_batch: 1}\n"
		  "parallelism: {tp: 2, pp: 2, dp: 2, zero: 1, dp_bucket: 8 MB}\n",
		  0, NULL, 0, &g);
	ck_assert_int_eq(g.nranks, 8);
	int recv = 0, send = 0, coll = 0;
	for (size_t i = 0; i < g.ntasks; i++) {
		recv += g.tasks[i].kind == HSG_T_RECV;
		send += g.tasks[i].kind == HSG_T_SEND;
		coll += g.tasks[i].kind == HSG_T_COLL;
	}
	ck_assert_int_gt(send, 0);
	ck_assert_int_eq(recv, send); /* every peer is on this node */
	ck_assert_int_gt(coll, 0);
	hsg_free(&g);
}
END_TEST

START_TEST(node_with_one_stage)
{
	hsg_graph g;
	/* 2 nodes x 4: pp 2 puts stage 1 on node 1; node 1's receives come from node 0 */
	roundtrip("name: two-nodes\n" CLUSTER(2, 4) MODEL "training: {global_batch: 8, micro_batch: 1}\n"
		  "parallelism: {tp: 2, pp: 2, dp: 2}\n",
		  1, NULL, 0, &g);
	ck_assert_int_eq(g.nranks, 4);
	for (int i = 0; i < g.nranks; i++) {
		ck_assert_int_eq(g.ranks[i].node, 1);
		ck_assert_int_eq(g.ranks[i].stage, 1);
	}
	int recv = 0;
	for (size_t i = 0; i < g.ntasks; i++)
		if (g.tasks[i].kind == HSG_T_RECV) {
			recv++;
			ck_assert_int_lt(g.tasks[i].peer, 4); /* senders are stage 0, on node 0 */
		}
	ck_assert_int_gt(recv, 0);
	hsg_free(&g);
	/* explicit ranks across both nodes */
	int ranks[] = {1, 5};
	roundtrip("name: two-nodes\n" CLUSTER(2, 4) MODEL "training: {global_batch: 8, micro_batch: 1}\n"
		  "parallelism: {tp: 2, pp: 2, dp: 2}\n",
		  0, ranks, 2, &g);
	ck_assert_int_eq(g.nranks, 2);
	hsg_free(&g);
}
END_TEST

START_TEST(command_writes_a_readable_file)
{
	char out[64];
	hs_test_tmpfile(out, sizeof out, "graph-cmd", "");
	char *argv[] = {"export-graph", "scenarios/validation/refexec/gpt-1gpu.yaml", "--set", "model.layers=2", "-o",
			out, NULL};
	ck_assert_int_eq(cmd_export_graph(6, argv), 0);
	hsg_graph g;
	char msg[512];
	ck_assert_msg(hsg_read_file(out, &g, msg, sizeof msg) == 0, "%s", msg);
	ck_assert_ptr_nonnull(strstr(g.command, "export-graph"));
	ck_assert_ptr_nonnull(strstr(g.command, "model.layers=2"));
	ck_assert_int_eq(g.ntasks, 3);
	ck_assert(g.step_pred_s > 0);
	hsg_free(&g);
	/* bad input: exit 2, the old file untouched */
	char *bad[] = {"export-graph", "scenarios/validation/refexec/gpt-1gpu.yaml", "--node", "3", "-o", out, NULL};
	ck_assert_int_eq(cmd_export_graph(6, bad), 2);
	char *noout[] = {"export-graph", "scenarios/validation/refexec/gpt-1gpu.yaml", NULL};
	ck_assert_int_eq(cmd_export_graph(2, noout), 2);
	ck_assert_int_eq(hsg_read_file(out, &g, msg, sizeof msg), 0);
	hsg_free(&g);
	remove(out);
}
END_TEST

static const char *hand =
	"# a hand-written graph: one GPU, forward then an optimizer step\n"
	"hsgraph 1\n"
	"name hand written\n"
	"dtype bf16\n"
	"hidden 1024\n"
	"\n"
	"rank 0\n"
	"op 0 kind=gemm name=fc1 dtype=bf16 m=4096 n=4096 k=1024\n"
	"op 1 kind=attn name=attn dtype=bf16 b=1 h=8 s=2048 d=128 causal=1\n"
	"op 2 kind=mem name=ln1 dtype=bf16 bytes=1e6\n"
	"op 3 kind=comm name=tp_ar dtype=bf16 coll=all_reduce group=tp bytes=4e6\n"
	"op 4 kind=optimizer name=adam dtype=fp32 bytes=16e6\n"
	"task 0 rank=0 kind=compute ops=0+4\n"
	"task 1 rank=0 kind=compute what=optimizer ops=4+1 deps=0   \r\n"
	"task 2 rank=0 kind=compute ops=0+0 scale=0.5 deps=0,1 pred_s=1e-3\n";

START_TEST(hand_written_graph)
{
	hsg_graph g;
	char msg[512];
	ck_assert_msg(hsg_parse(hand, strlen(hand), "hand", &g, msg, sizeof msg) == 0, "%s", msg);
	ck_assert_str_eq(g.name, "hand written");
	ck_assert_int_eq(g.dtype, HSG_BF16);
	ck_assert(g.step_pred_s < 0);
	ck_assert_int_eq(g.nranks, 1);
	ck_assert_int_eq(g.ranks[0].groups[HSG_GROUP_TP], -1); /* no groups: alone in each */
	ck_assert_uint_eq(g.nops, 5);
	ck_assert(g.ops[0].count == 1);         /* default */
	ck_assert(g.ops[1].skv == 2048);        /* default: s */
	ck_assert_int_eq(g.ops[1].bwd, 0);
	ck_assert(g.ops[2].bytes == 1e6);
	ck_assert_int_eq(g.ops[3].coll, HSG_ALL_REDUCE);
	ck_assert_uint_eq(g.ntasks, 3);
	ck_assert_int_eq(g.tasks[0].stream, HSG_S_COMPUTE);
	ck_assert_int_eq(g.tasks[0].what, HSG_W_FWD);
	ck_assert(g.tasks[0].scale == 1 && g.tasks[0].pred_s == -1);
	ck_assert_int_eq(g.tasks[1].what, HSG_W_OPTIMIZER);
	ck_assert(g.tasks[2].scale == 0.5 && g.tasks[2].pred_s == 1e-3);
	ck_assert_uint_eq(g.tasks[2].dep_count, 2);
	ck_assert_int_eq(g.ninst, 0);
	hsg_free(&g);

	/* two GPUs with a collective and a send/recv pair */
	const char *two = "hsgraph 1\n"
			  "rank 0 groups=0,-1,-1,-1,-1\nrank 1 groups=0,-1,-1,-1,-1\n"
			  "group 0 kind=tp ranks=0,1\n"
			  "op 0 kind=gemm name=g dtype=fp16 m=128 n=128 k=128\n"
			  "task 0 rank=0 kind=compute ops=0+1\n"
			  "task 1 rank=1 kind=compute ops=0+1\n"
			  "task 2 rank=0 kind=coll group=0 coll=all_reduce bytes=1048576 inst=0 deps=0\n"
			  "task 3 rank=1 kind=coll group=0 coll=all_reduce bytes=1048576 inst=0 deps=1\n"
			  "task 4 rank=0 kind=send peer=1 bytes=4096 inst=1 deps=2\n"
			  "task 5 rank=1 kind=recv peer=0 bytes=4096 inst=1\n"
			  "task 6 rank=1 kind=compute ops=0+1 deps=5,3\n";
	ck_assert_msg(hsg_parse(two, strlen(two), "two", &g, msg, sizeof msg) == 0, "%s", msg);
	ck_assert_int_eq(g.ninst, 2);
	ck_assert_int_eq(g.tasks[2].stream, HSG_S_COMM);
	ck_assert_int_eq(g.tasks[5].stream, HSG_S_P2P);
	ck_assert_int_eq(g.tasks[4].what, HSG_W_P2P);
	ck_assert_int_eq(hsg_rank_index(&g, 1), 1);
	hsg_free(&g);
}
END_TEST

static const struct {
	const char *text, *expect;
} bad[] = {
	{"", "bad:1: empty"},
	{"hsgraph 2\n", "bad:1: format version '2'"},
	{"rank 0\n", "bad:1: not a hetsim graph file"},
	{"hsgraph 1\n", "no rank declared"},
	{"hsgraph 1\nrank 0\nbogus 3\n", "bad:3: unknown record 'bogus'"},
	{"hsgraph 1\nrank 0\nrank 0\n", "bad:3: rank 0 declared twice"},
	{"hsgraph 1\nrank 0\nop 1 kind=gemm name=a dtype=bf16 m=1 n=1 k=1\n", "bad:3: op 1: ids must be dense"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf16 m=1 n=1\n", "bad:3: op: missing key 'k'"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf17 m=1 n=1 k=1\n", "bad:3: op: dtype=bf17: unknown"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf16 m=x n=1 k=1\n", "bad:3: op: m=x: expected a finite"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf16 m=1 n=1 k=1 q=2\n", "bad:3: op: unknown key 'q'"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf16 m=1 m=1 n=1 k=1\n", "bad:3: op: key 'm' given twice"},
	{"hsgraph 1\nrank 0\nop 0 kind=gemm name=a dtype=bf16 m=1 n=1 k=1 junk\n", "bad:3: op: 'junk' is not KEY=VALUE"},
	{"hsgraph 1\nrank 0\n\n# c\ntask 0 rank=0 kind=compute ops=0+1\n", "bad:5: task 0: ops 0+1 run past"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=compute\n", "bad:3: task: a compute task needs ops"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=compute ops=0+0 deps=0\n", "bad:3: task 0: dependency 0 is not an earlier"},
	{"hsgraph 1\nrank 0\ntask 0 rank=1 kind=compute ops=0+0\n", "bad:3: task 0: rank 1 is not declared"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=send bytes=1 inst=0\n", "bad:3: task: missing key 'peer'"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=coll group=0 coll=all_reduce bytes=1\n", "bad:3: task: missing key 'inst'"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=coll group=0 coll=all_reduce bytes=1 inst=0\n",
	 "bad:3: task 0: group 0 is not declared"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=compute ops=0+x\n", "bad:3: task: ops=0+x"},
	{"hsgraph 1\nrank 0 groups=0,1\n", "bad:2: rank: groups= lists 2 ids"},
	{"hsgraph 1\nrank 0 groups=0,-1,-1,-1,-1\ngroup 0 kind=dp ranks=0\n", "bad:2: rank 0: group 0 is a dp group"},
	{"hsgraph 1\nrank 0 groups=0,-1,-1,-1,-1\ngroup 0 kind=tp ranks=1,2\n", "bad:2: rank 0: not a member"},
	{"hsgraph 1\nrank 0\ngroup 0 kind=tp ranks=1,1\n", "bad:3: group: rank 1 listed twice"},
	{"hsgraph 1\nrank 0\nhidden -4\n", "bad:3: hidden -4"},
	{"hsgraph 1\nrank 0\nname\n", "bad:3: header 'name' needs a value"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=send peer=0 bytes=1 inst=0\n", "bad:3: task 0: a send to itself"},
	{"hsgraph 1\nrank 0\ntask 0 rank=0 kind=compute ops=0+0 scale=-1\n", "bad:3: task: scale=-1"},
};

START_TEST(malformed)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		hsg_graph g;
		char msg[512];
		int rc = hsg_parse(bad[i].text, strlen(bad[i].text), "bad", &g, msg, sizeof msg);
		ck_assert_msg(rc == -1, "case %zu was accepted", i);
		ck_assert_msg(strstr(msg, bad[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i, msg, bad[i].expect);
		ck_assert_ptr_null(g.tasks);
		ck_assert_int_eq(g.nranks, 0);
	}
	/* a NUL byte and a missing file */
	hsg_graph g;
	char msg[512];
	ck_assert_int_eq(hsg_parse("hsgraph 1\nrank 0\n\0x\n", 19, "nul", &g, msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(msg, "nul:3: NUL byte"));
	ck_assert_int_eq(hsg_read_file("/nonexistent/graph", &g, msg, sizeof msg), -1);
	ck_assert_ptr_nonnull(strstr(msg, "cannot open"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("graph_io");
	TCase *c = tcase_create("graph_io");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, one_gpu_is_the_graph);
	tcase_add_test(c, multi_rank_one_node);
	tcase_add_test(c, node_with_one_stage);
	tcase_add_test(c, command_writes_a_readable_file);
	tcase_add_test(c, hand_written_graph);
	tcase_add_test(c, malformed);
	suite_add_tcase(s, c);
	return s;
}

#include "tests/unit/check_main.h"
