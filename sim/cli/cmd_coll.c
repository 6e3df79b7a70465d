/* `hetsim coll`: run one collective over a scenario's cluster at nccl-tests' sizes. Reads only the
 * scenario's `name` and `cluster` keys; the rest of the file belongs to other modules and is ignored here,
 * except that `--set` overrides are checked as `hetsim run` checks them (check_sets). */
#include "sim/cli/cmd.h"
#include "sim/cli/cmd_coll.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/fabric.h"
#include "config/cfg.h"
#include "config/units.h"
#include "config/yaml.h"
#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/coll/coll_flow.h"
#include "sim/coll/coll_nccl.h"
#include "sim/engine/engine.h"
#include "sim/net/net.h"
#include "sim/study/scenario.h"
#include "topology/cluster.h"
#include "sim/base/sizes.h"

static const char *o_op, *o_sizes, *o_algo, *o_proto, *o_fid, *o_chunk;
/* the numeric options and their ranges (checked by hs_opt_parse, sim/cli/opt.h); --ranks against the cluster too */
static hs_optnum o_factor = {.min = 1, .min_open = 1, .max = DBL_MAX}, o_ranks = {.min = 1, .max = INT_MAX},
		 o_channels = {.min = 1, .max = 64}, o_window = {.min = 1, .max = 1024};
static int o_json, o_ideal, o_nosym;
static const char *net_model = "flow"; /* simulation.network, at --fidelity flow */
static struct hs_strlist o_set;

static const hs_opt coll_opts[] = {
	{HS_OPT_STRING, "op", 0, &o_op, "OP",
	 "all_reduce (default), all_gather, reduce_scatter, all_to_all, broadcast, reduce, sendrecv"},
	{HS_OPT_STRING, "sizes", 0, &o_sizes, "MIN:MAX", "byte sizes, K/M/G = 2^10/2^20/2^30 (default 8:8G)"},
	{HS_OPT_NUMBER, "factor", 0, &o_factor, "F", "multiply the size by F each row (default 2)"},
	{HS_OPT_COUNT, "ranks", 0, &o_ranks, "N", "use devices 0..N-1 (default: every device)"},
	{HS_OPT_STRING, "algo", 0, &o_algo, "ALGO",
	 "auto (default), ring, tree, halving_doubling, direct, hierarchical, inswitch"},
	{HS_OPT_STRING, "proto", 0, &o_proto, "PROTO", "auto (default), LL, LL128, Simple"},
	{HS_OPT_STRING, "fidelity", 0, &o_fid, "MODEL",
	 "analytical (default: closed forms) or flow (step by step on the routed topology, max-min sharing)"},
	{HS_OPT_COUNT, "channels", 0, &o_channels, "C",
	 "flow: parallel rings or trees, channel c on rail c (default: the NICs per node when the ranks span nodes, "
	 "as NCCL runs a channel per NIC at least; 1 inside a node)"},
	{HS_OPT_STRING, "chunk", 0, &o_chunk, "BYTES", "flow: pipelined slice size (default: one slice per step)"},
	{HS_OPT_COUNT, "window", 0, &o_window, "W", "flow: tree slices a sender may be ahead of its receiver (default 8)"},
	{HS_OPT_FLAG, "no-symmetry", 0, &o_nosym, NULL, "flow: every transfer a flow, no symmetry classes"},
	{HS_OPT_FLAG, "ideal", 0, &o_ideal, NULL, "physical closed form only, without NCCL's protocols and latencies"},
	{HS_OPT_FLAG, "json", 0, &o_json, NULL, "print {\"rows\":[...]} instead of nccl-tests' table"},
	{HS_OPT_LIST, "set", 0, &o_set, "KEY=VALUE", "override a scenario key (repeatable)"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};

const hs_cmd_usage hs_usage_coll = {
	"coll",
	"hetsim coll [options] SCENARIO.yaml",
	"Time one collective over the scenario's cluster, in nccl-tests' columns.",
	coll_opts,
	"Sizes follow nccl-tests: the per-rank buffer for all_reduce, broadcast and reduce, the total output for\n"
	"all_gather, the total input for reduce_scatter, each rank's send buffer for all_to_all; sendrecv is\n"
	"sendrecv_perf's pattern: every rank sends the size to the next rank and receives it from the previous.\n"
	"busbw uses nccl-tests' factors: 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and\n"
	"all_to_all, 1 otherwise. The table is nccl-tests' (banner, both halves, #wrong, average bus bandwidth),\n"
	"so `hetsim calib import-nccl-tests` and other readers of nccl-tests logs read it.\n"
	"Example: hetsim coll --op all_reduce --sizes 8:8G scenarios/validation/nccl/h100x16-ndr.yaml",
};

/* A byte count in the one size grammar of config/units.h: 8G and 8GiB are 2^33 (nccl-tests' -b/-e meaning), 8GB
 * is 8 x 10^9. -1 when it is not a size. */
double hs_coll_parse_size(const char *s)
{
	double v;
	char why[160];
	if (hs_units_parse(s, HS_U_BYTES, &v, why, sizeof why) || !(v >= 0) || !isfinite(v))
		return -1;
	return floor(v);
}

static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "hetsim coll: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s\n", hs_usage_coll.synopsis);
	return HS_EINPUT;
}

static int fail(const hs_err *err)
{
	fprintf(stderr, "hetsim coll: %s%s\n", err->msg[0] ? err->msg : "failed",
		err->code == HS_EINTERNAL ? " (this is a bug in hetsim; please report it)" : "");
	return err->code ? err->code : HS_EINTERNAL;
}

/* --set is checked as `hetsim run` checks it, so a misspelled key is an error here too: the top-level keys
 * always (a scenario with only a cluster, as the nccl-tests hardware files are); the whole scenario, every
 * section, when the file is a training scenario (it has a model). Only bad input fails: a --set that makes
 * the training step infeasible (exit 3 from run) does not concern the collective. */
static int check_sets(const char *file, const hs_ynode *root, hs_err *err)
{
	if (o_set.n == 0)
		return 0;
	if (hs_cfg_known(root, "", hs_scenario_keys, "a scenario mapping with a cluster: key", err))
		return -1;
	if (!hs_yaml_get(root, "model"))
		return 0;
	hs_err e = {0};
	/* simulation.network is read here (it may name ns3, which a training step refuses): checked as flow */
	struct hs_strlist sets = {0};
	for (int i = 0; i < o_set.n; i++)
		hs_strlist_push(&sets, o_set.v[i]);
	hs_strlist_push(&sets, "simulation.network=flow");
	hs_scenario *s = hs_scenario_load(file, &sets, &e);
	hs_strlist_free(&sets);
	hs_scenario_free(s);
	if (!s && e.code == HS_EINPUT) {
		*err = e;
		return -1;
	}
	return 0;
}

/* One row of the table: the size nccl-tests prints (bytes) and its `count` column (elements). */
struct row {
	double size, count, t, algbw, busbw;
	hs_coll_choice ch;
};

/* nccl-tests' getCollByteCount: the gathers, scatters and all-to-all move n pieces of count/n elements each
 * and print that per-rank count; the others move `count` elements (src/all_gather.cu, alltoall.cu, ...). */
static int per_rank_pieces(int op)
{
	return op == HS_COLL_ALL_GATHER || op == HS_COLL_REDUCE_SCATTER || op == HS_COLL_ALL_TO_ALL;
}

static double elements(int op, int n, double bytes)
{
	double count = floor(bytes / 4); /* float */
	return per_rank_pieces(op) ? floor(count / n) : count;
}

/* The name of the nccl-tests binary that runs `op` (what tools that read the logs look for). */
static const char *perf_name(int op)
{
	static const char *const names[HS_COLL_OP_COUNT] = {
		[HS_COLL_ALL_REDUCE] = "all_reduce_perf", [HS_COLL_ALL_GATHER] = "all_gather_perf",
		[HS_COLL_REDUCE_SCATTER] = "reduce_scatter_perf", [HS_COLL_ALL_TO_ALL] = "alltoall_perf",
		[HS_COLL_BROADCAST] = "broadcast_perf", [HS_COLL_REDUCE] = "reduce_perf",
		[HS_COLL_SENDRECV] = "sendrecv_perf"};
	return (unsigned)op < HS_COLL_OP_COUNT && names[op] ? names[op] : "?";
}

/* nccl-tests' time column: 2 decimals below 100 us, 1 below 10 ms, none above (BenchTime in src/common.cu). */
static const char *time_str(double us, char *buf, size_t len)
{
	snprintf(buf, len, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
	return buf;
}

/* The table as nccl-tests prints it (src/common.cu of NVIDIA/nccl-tests at 01d6761: run(), the Reporter and
 * BenchTime), so that tools which read nccl-tests logs read ours: the banner with one "Rank" line per rank, the
 * out-of-place and in-place header, one row per size with both halves (the model has one time for both), and
 * the footer with the average bus bandwidth over both halves of every row. #wrong is -1, as nccl-tests prints
 * it with validation off (validation: 0): nothing was checked. What hetsim adds is in comment lines: the
 * scenario and model, and before each row the algorithm and protocol that ran. */
static void print_table(const hs_cluster *c, const char *name, int op, const int *ranks, int n, double lo, double hi,
			double factor, int flow, const struct row *rows, size_t nrows)
{
	int reduce = op == HS_COLL_ALL_REDUCE || op == HS_COLL_REDUCE_SCATTER || op == HS_COLL_REDUCE;
	int root_rank = op == HS_COLL_BROADCAST || op == HS_COLL_REDUCE ? 0 : -1;
	printf("# Collective test starting: %s\n", perf_name(op));
	printf("# hetsim coll: %s, %s over %d ranks (%s model)\n", name, hs_coll_op_name(op), n,
	       flow ? net_model : o_ideal ? "ideal" : "nccl");
	printf("# nThread 1 nGpus 1 minBytes %.0f maxBytes %.0f step: %g(factor) warmup iters: 0 iters: 1 agg iters: 1 "
	       "validation: 0 graph: 0\n#\n# Using devices\n", lo, hi, factor);
	for (int i = 0; i < n; i++) {
		char host[32];
		snprintf(host, sizeof host, "node%d", hs_cluster_node_of(c, ranks[i]));
		printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s\n", i, 0, 0, host,
		       hs_cluster_local_rank(c, ranks[i]), 0, hs_cluster_device(c, ranks[i])->name);
	}
	printf("#\n");
	printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
	       "", "");
	printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
	       "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
	printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
	       "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
	double sum = 0;
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		char ts[32];
		printf("# hetsim algo/proto: %s/%s\n", hs_coll_algo_name(r->ch.algo),
		       flow ? net_model : o_ideal ? "ideal" : hs_coll_proto_name(r->ch.proto));
		printf("%12.0f  %12.0f  %8s  %6s  %6d", r->size, r->count, "float", reduce ? "sum" : "none", root_rank);
		time_str(r->t * 1e6, ts, sizeof ts);
		for (int half = 0; half < 2; half++)
			printf("  %7s  %6.2f  %6.2f  %5d", ts, r->algbw, r->busbw, -1);
		printf("\n");
		sum += 2 * r->busbw;
	}
	printf("# Out of bounds values : 0 OK\n");
	printf("# Avg bus bandwidth    : %g \n#\n\n", nrows ? sum / (2.0 * (double)nrows) : 0);
}

static double flow_done;
static int flow_calls;
static void on_flow_done(void *ctx, uint64_t arg)
{
	(void)arg;
	flow_done = hs_time_to_s(hs_engine_now(ctx)); /* the engine's clock only advances: the last one's */
	flow_calls++;
}

/* One collective on a fresh network (idle at time 0) with plan pl's algorithm and channels; seconds, or -1
 * with err. */
static double flow_time(const hs_cluster *c, const char *model, int op, const hs_coll_flow_plan *pl, const int *ranks,
			int n, double s, double chunk, int window, hs_err *err)
{
	hs_engine *eng = hs_engine_create();
	hs_net *net = hs_net_create(c, model, eng, err);
	double t = -1;
	if (net) {
		hs_net_set_channels(net, pl->channels);
		hs_net_set_rails(net, pl->nrails ? pl->rails : NULL, pl->nrails);
		hs_net_set_chunk(net, chunk);
		hs_net_set_window(net, window);
		hs_net_set_symmetry(net, !o_nosym);
		flow_done = -1;
		flow_calls = 0;
		int rc = 0, want = 1;
		if (op == HS_COLL_SENDRECV && n > 2) {
			/* nccl-tests' sendrecv_perf: every rank sends to the next and receives from the previous, all
			 * at once; the row's time is the last transfer's */
			for (int i = 0; i < n && !rc; i++)
				rc = hs_net_send(net, ranks[i], ranks[(i + 1) % n], s, on_flow_done, eng, (uint64_t)i, err);
			want = n;
		} else {
			rc = hs_net_collective(net, (enum hs_coll_op)op, pl->algo, ranks, n, s, on_flow_done, eng, 0, err);
		}
		if (rc == 0) {
			hs_engine_run(eng, HS_TIME_MAX);
			t = flow_calls == want ? flow_done : -1;
			if (t < 0)
				hs_err_set(err, HS_EINTERNAL, "the collective did not complete");
		}
	}
	hs_net_free(net);
	hs_engine_destroy(eng);
	return t;
}

static int run(const char *file)
{
	int op = o_op ? hs_coll_op_parse(o_op) : HS_COLL_ALL_REDUCE;
	if (op < 0)
		return usage_err("--op '%s' is not known (expected all_reduce, all_gather, reduce_scatter, all_to_all, "
				 "broadcast, reduce or sendrecv)", o_op);
	int algo = o_algo ? hs_coll_algo_parse(o_algo) : HS_ALGO_AUTO;
	if (algo < 0)
		return usage_err("--algo '%s' is not known (expected auto, ring, tree, halving_doubling, direct, "
				 "hierarchical or inswitch)", o_algo);
	int proto = o_proto ? hs_coll_proto_parse(o_proto) : HS_PROTO_AUTO;
	if (proto < 0)
		return usage_err("--proto '%s' is not known (expected auto, LL, LL128 or Simple)", o_proto);
	int flow = 0;
	if (o_fid && strcmp(o_fid, "flow") == 0)
		flow = 1;
	else if (o_fid && strcmp(o_fid, "analytical") != 0)
		return usage_err("--fidelity '%s' is not known (expected analytical or flow)", o_fid);
	/* channels 0: not given */
	int channels = o_channels.given ? (int)o_channels.v : 0, window = o_window.given ? (int)o_window.v : 0;
	double chunk = 0;
	if (o_chunk && (chunk = hs_coll_parse_size(o_chunk)) <= 0)
		return usage_err("--chunk '%s': expected a size such as 512K", o_chunk);
	double lo = 8, hi = 8589934592.0, factor = o_factor.v;
	if (o_sizes) {
		const char *colon = strchr(o_sizes, ':');
		char a[64];
		snprintf(a, sizeof a, "%.*s", colon ? (int)(colon - o_sizes) : (int)strlen(o_sizes), o_sizes);
		lo = hs_coll_parse_size(a);
		hi = colon ? hs_coll_parse_size(colon + 1) : lo;
		if (lo < 0 || hi < 0 || hi < lo)
			return usage_err("--sizes '%s': expected MIN:MAX such as 8:8G with MIN <= MAX", o_sizes);
	}

	/* bounds on the work asked for, before any of it: rows of the table, and slices per transfer at flow
	 * fidelity (each slice is a flow per rank and step) */
	enum { MAX_ROWS = 10000 };
	double nrow = 0;
	for (double req = lo; req <= hi * (1 + 1e-12) && nrow <= MAX_ROWS;
	     req = req * factor < req + 1 ? req + 1 : floor(req * factor))
		nrow++;
	if (nrow > MAX_ROWS)
		return usage_err("--sizes %s with --factor %.10g asks for more than %d rows (the limit; nccl-tests' 8:8G "
				 "at factor 2 is 31): use a larger --factor or a narrower --sizes",
				 o_sizes ? o_sizes : "8:8G", factor, MAX_ROWS);
	if (flow && chunk > 0 && hi / chunk > 1e6)
		return usage_err("--chunk '%s': %.3g slices per transfer at the largest size (the limit is 1e6 at flow "
				 "fidelity, each a flow per rank and step): use a chunk of at least %.0f bytes",
				 o_chunk, hi / chunk, ceil(hi / 1e6));

	hs_err err = {0};
	hs_ydoc *doc = hs_yaml_load_file_set(file, o_set.v, o_set.n, &err);
	if (!doc)
		return fail(&err);
	hs_ynode *root = hs_yaml_root(doc);
	if (!root || root->kind != HS_Y_MAP) {
		hs_err_set(&err, HS_EINPUT, "%s: expected a scenario mapping with a cluster: key", file);
		hs_yaml_free(doc);
		return fail(&err);
	}
	if (check_sets(file, root, &err)) {
		hs_yaml_free(doc);
		return fail(&err);
	}
	hs_ynode *cn = hs_yaml_get(root, "cluster");
	if (!cn) {
		hs_err_set(&err, HS_EINPUT, "%s:%d:%d: cluster: missing required key (expected the cluster to run on)",
			   file, root->line, root->col);
		hs_yaml_free(doc);
		return fail(&err);
	}
	hs_cluster *c = hs_cluster_from_yaml(cn, "cluster", &err);
	if (c && hs_fabprof_attach(c, &err)) {
		hs_cluster_free(c);
		c = NULL;
	}
	if (c && !flow && hs_coll_closed_form_check(c, (enum hs_coll_algo)algo, &err)) {
		hs_cluster_free(c);
		c = NULL;
	}
	if (!c) {
		hs_yaml_free(doc);
		return fail(&err);
	}
	hs_ynode *nn = hs_yaml_get(root, "name");
	const char *name = nn && nn->kind == HS_Y_SCALAR ? nn->str : file;
	/* simulation.network: the model step-by-step collectives run on (docs/network.md) */
	const hs_ynode *simn = hs_yaml_get(root, "simulation");
	static const char *const nets[] = {"flow", "ns3", NULL};
	int net = 0;
	if (simn && simn->kind == HS_Y_MAP && hs_cfg_enum(simn, "simulation", "network", nets, 0, &net, &err) == 0 &&
	    net == 1) {
		hs_err e2 = {0};
		if (!flow)
			hs_cfg_err(hs_yaml_get(simn, "network"), &err, "simulation", "network",
				   "'ns3' runs the collective step by step on ns-3 (expected --fidelity flow with it)");
		else if (!hs_net_find("ns3", &e2))
			hs_cfg_err(hs_yaml_get(simn, "network"), &err, "simulation", "network", "'ns3': %s", e2.msg);
		net_model = "ns3";
	}
	if (err.code) {
		hs_cluster_free(c);
		hs_yaml_free(doc);
		return fail(&err);
	}

	int ng = hs_cluster_ngpus(c), n = ng;
	if (o_ranks.given) {
		if (o_ranks.v > ng) {
			hs_cluster_free(c);
			hs_yaml_free(doc);
			fprintf(stderr, "hetsim coll: --ranks %.0f: the cluster has %d devices (expected 1 to %d)\n", o_ranks.v,
				ng, ng);
			return HS_EINPUT;
		}
		n = (int)o_ranks.v;
	}
	int *ranks = hs_xmalloc((size_t)n * sizeof *ranks);
	for (int i = 0; i < n; i++)
		ranks[i] = i;

	/* Compute every row before printing anything: nothing half-done reaches stdout. */
	size_t cap = 64, nrows = 0;
	struct row *rows = hs_xmalloc(cap * sizeof *rows);
	int status = 0;
	for (double req = lo; req <= hi * (1 + 1e-12); req = req * factor < req + 1 ? req + 1 : floor(req * factor)) {
		/* the size nccl-tests times for a requested one: whole floats, whole per-rank pieces */
		double count = elements(op, n, req), s = count * 4 * (per_rank_pieces(op) ? n : 1);
		hs_coll_choice ch = {hs_coll_default_algo(op), HS_PROTO_SIMPLE, 0, 0};
		double t;
		if (flow) {
			/* the flow model has no protocol overheads: it is the routed, contended physical transfer. The
			 * algorithm and channels are the plan a simulated step's collective over these devices runs
			 * (sim/coll/coll_flow.h): AUTO is what NCCL's tuner (as sim/coll/coll_nccl.c models it) would
			 * run, as nccl-tests does; a channel per NIC across nodes, as NCCL's search opens them.
			 * --channels C overrides the layout: C channels, channel c on NIC c. */
			hs_coll_flow_plan pl;
			hs_coll_flow_plan_of(c, op, (enum hs_coll_algo)algo, (enum hs_coll_proto)proto, ranks, n, s, &pl);
			if (channels > 0)
				pl.channels = channels, pl.nrails = 0;
			ch.algo = pl.algo;
			ch.proto = HS_PROTO_SIMPLE;
			t = flow_time(c, net_model, op, &pl, ranks, n, s, chunk, window, &err);
			if (t < 0) {
				status = fail(&err);
				break;
			}
		} else
			t = o_ideal ? hs_coll_time(c, op, algo, ranks, n, s)
				    : hs_coll_nccl_time(c, op, algo, proto, ranks, n, s, &ch);
		if (o_ideal)
			ch.algo = algo == HS_ALGO_AUTO ? hs_coll_auto_algo(c, op, ranks, n, s) : (enum hs_coll_algo)algo;
		else if (flow && algo != HS_ALGO_AUTO)
			ch.algo = (enum hs_coll_algo)algo;
		if (t < 0) {
			hs_coll_check(c, ranks, n, &err);
			status = fail(&err);
			break;
		}
		if (nrows == cap)
			rows = hs_xrealloc(rows, (cap *= 2) * sizeof *rows);
		double algbw = t > 0 ? s / t / 1e9 : 0;
		rows[nrows++] = (struct row){s, count, t, algbw, algbw * hs_coll_busbw_factor(op, n), ch};
		if (req == 0 && lo == 0 && hi == 0)
			break;
	}
	if (!status) {
		if (o_json) {
			printf("{\"name\":\"%s\",\"op\":\"%s\",\"ranks\":%d,\"rows\":[", name, hs_coll_op_name(op), n);
			for (size_t i = 0; i < nrows; i++)
				printf("%s{\"size_bytes\":%.0f,\"count\":%.0f,\"time_us\":%.3f,\"algbw_GBps\":%.3f,"
				       "\"busbw_GBps\":%.3f,\"algo\":\"%s\",\"proto\":\"%s\"}",
				       i ? "," : "", rows[i].size, rows[i].count, rows[i].t * 1e6, rows[i].algbw, rows[i].busbw,
				       hs_coll_algo_name(rows[i].ch.algo),
				       flow ? net_model : o_ideal ? "ideal" : hs_coll_proto_name(rows[i].ch.proto));
			printf("]}\n");
		} else
			print_table(c, name, op, ranks, n, lo, hi, factor, flow, rows, nrows);
	}
	free(rows);
	free(ranks);
	hs_cluster_free(c);
	hs_yaml_free(doc);
	return status;
}

int cmd_coll(int argc, char **argv)
{
	o_op = o_sizes = o_algo = o_proto = o_fid = o_chunk = NULL;
	o_factor.v = 2, o_ranks.v = o_channels.v = o_window.v = 0;
	o_factor.given = o_ranks.given = o_channels.given = o_window.given = 0;
	o_json = o_ideal = o_nosym = 0;
	hs_strlist_free(&o_set);
	const char *pos[1];
	int np = hs_opt_parse(&hs_usage_coll, argc, argv, pos, 1);
	if (np == -2)
		return 0;
	if (np < 0)
		return HS_EINPUT;
	int status;
	if (np != 1)
		status = usage_err("%s", "expected one SCENARIO.yaml");
	else
		status = run(pos[0]);
	hs_strlist_free(&o_set);
	return hs_cmd_finish(status);
}
