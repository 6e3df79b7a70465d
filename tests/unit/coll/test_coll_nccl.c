/* Validation against nccl-tests logs (tests/data/nccl-tests/, copied with their headers from
 * ../shared/data/nccl-tests): each log's hardware is a scenario in scenarios/validation/nccl/, and the NCCL
 * model's busbw must stay within 10% MAPE over sizes >= 1 MB (the gate of issue 16). Physical link figures
 * only; nothing is fitted per row. Logs whose measurement the model does not explain are known gaps: they
 * leave the gate (decision of issue 16) and are still run and printed, with why. Run from the repository
 * root (tests/run.sh does). */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "sim/coll/coll_nccl.h"
#include "sim/coll/nccl_search.h"
#include "tests/unit/helpers.h"
#include "topology/cluster.h"

#define SMALL_GATE 30 /* percent: mean relative time error below 1 MB, per log */

struct vcase {
	const char *log, *scenario;
	enum hs_coll_op op;
	enum hs_coll_algo algo;
	double gate; /* MAPE limit, percent */
	const char *why; /* non-NULL: a known gap, outside the gate (printed, not asserted) */
};

static const struct vcase cases[] = {
	/* Issue 16's gate is 10% for every log here that is not a known gap. The Azure log (NCCL 2.12.12, named in
	 * its scenario): its release's tuner chooses, the newest release's latencies (floored by the cluster's hop
	 * latencies) are charged. OCI (2.19.3, 16 ports of 100 Gb/s a node as NCCL sees them): NCCL's search gives
	 * the tree 16 channels at bwInter 12 and bwIntra 15 GB/s (sim/coll/nccl_search.h), which the tuner rates
	 * above the ring's 16 x 12 at every size, so the tree runs throughout, LL then LL128 then, from 1 GiB,
	 * Simple: the log's step from 156 to 219 GB/s between 512 MiB and 1 GiB is that protocol switch. Not fitted:
	 * see docs/collectives.md, "NCCL releases". */
	{"a100x16-oci-readme-allreduce.txt", "a100x16-oci-roce", HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, 10, NULL},
	{"a100x16-sxm4-80gb-ib-allreduce.txt", "a100x16-azure-hdr", HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, 10, NULL},
	{"a100x8-sxm4-80gb-nvswitch-allreduce.txt", "a100x8-nvswitch", HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, 10, NULL},
	{"h100x16-ndr-allreduce-default.txt", "h100x16-ndr", HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, 0,
	 "the reporter's system reaches 24% of its 8 x 400 Gb/s NICs (nccl-tests issue 290 asks why); the model "
	 "predicts the healthy system"},
	{"h100x16-ndr-allreduce-ring.txt", "h100x16-ndr", HS_COLL_ALL_REDUCE, HS_ALGO_RING, 0,
	 "same system as the default log, NCCL_ALGO=RING"},
	{"rtx2080ti-x2-pcie-allreduce.txt", "rtx2080ti-x2-pcie", HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, 10, NULL},
	{"rtx2080ti-x2-pcie-allgather.txt", "rtx2080ti-x2-pcie", HS_COLL_ALL_GATHER, HS_ALGO_AUTO, 0,
	 "all-gather through host memory runs at 0.72 of all-to-all's rate on this machine; the model moves the "
	 "same bytes for both"},
	{"rtx2080ti-x2-pcie-alltoall.txt", "rtx2080ti-x2-pcie", HS_COLL_ALL_TO_ALL, HS_ALGO_AUTO, 10, NULL},
	{"rtx2080ti-x2-pcie-broadcast.txt", "rtx2080ti-x2-pcie", HS_COLL_BROADCAST, HS_ALGO_AUTO, 10, NULL},
	{"rtx2080ti-x2-pcie-reduce.txt", "rtx2080ti-x2-pcie", HS_COLL_REDUCE, HS_ALGO_AUTO, 10, NULL},
};

struct row {
	double size, time_us, busbw;
};

/* Rows of an nccl-tests log: lines whose first field is a size, after any launcher prefix such as
 * "[1,0]<stdout>:" or "[0]". Out-of-place columns: size count type redop root time algbw busbw. Older
 * layouts without redop/root have 7+ fields; we read time, algbw and busbw from after the type field. */
static int parse_log(const char *path, struct row *rows, int max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[1024];
	int n = 0;
	while (n < max && fgets(line, sizeof line, f)) {
		char *p = line;
		while (*p == '[' || (*p && *p != ' ' && strchr(p, ']') && p < strchr(p, ']') && *p != '#')) {
			char *q = strchr(p, ']');
			if (!q)
				break;
			p = q + 1;
			if (strncmp(p, "<stdout>:", 9) == 0)
				p += 9;
		}
		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			continue;
		char *tok[16];
		int nt = 0;
		for (char *s = strtok(p, " \t\n"); s && nt < 16; s = strtok(NULL, " \t\n"))
			tok[nt++] = s;
		if (nt < 7)
			continue;
		int ti = 0; /* index of the type field */
		while (ti < nt && !isalpha((unsigned char)tok[ti][0]))
			ti++;
		int hasop = ti + 2 < nt && isalpha((unsigned char)tok[ti + 1][0]);
		int tcol = ti + (hasop ? 3 : 1);
		if (tcol + 2 >= nt)
			continue;
		rows[n].size = atof(tok[0]);
		rows[n].time_us = atof(tok[tcol]);
		rows[n].busbw = atof(tok[tcol + 2]);
		if (rows[n].size > 0)
			n++;
	}
	fclose(f);
	return n;
}

START_TEST(log_parser_handles_prefixes)
{
	char path[64];
	hs_test_write_tmp(path, sizeof path, "nccl-log",
			  "# header\nNCCL version 2.12.12\n[1,0]<stdout>:     1048576        262144     float     sum      -1    85.58   12.25   22.97      0    84.50   12.41   23.27      0\n"
			  "     2097152        524288     float    99.19   21.14   39.64      0\n"
			  "           0             0     float    none      -1     0.33    0.00    0.00      0\n");
	struct row r[4];
	ck_assert_int_eq(parse_log(path, r, 4), 2);
	ck_assert_double_eq(r[0].size, 1048576);
	ck_assert_double_eq_tol(r[0].time_us, 85.58, 1e-9);
	ck_assert_double_eq_tol(r[0].busbw, 22.97, 1e-9);
	ck_assert_double_eq_tol(r[1].time_us, 99.19, 1e-9);
	ck_assert_double_eq_tol(r[1].busbw, 39.64, 1e-9);
	remove(path);
}
END_TEST

START_TEST(matches_nccl_tests)
{
	const struct vcase *vc = &cases[_i];
	char path[512];
	snprintf(path, sizeof path, "tests/data/nccl-tests/%s", vc->log);
	struct row rows[64];
	int nr = parse_log(path, rows, 64);
	ck_assert_msg(nr > 0, "cannot read %s (run from the repository root)", path);
	snprintf(path, sizeof path, "scenarios/validation/nccl/%s.yaml", vc->scenario);
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_file(path, &err);
	ck_assert_msg(d != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	int n = hs_cluster_ngpus(c);
	int ranks[64];
	for (int i = 0; i < n; i++)
		ranks[i] = i;
	double sum = 0, lsum = 0;
	int cnt = 0, lcnt = 0;
	for (int i = 0; i < nr; i++) {
		double t = hs_coll_nccl_time(c, vc->op, vc->algo, HS_PROTO_AUTO, ranks, n, rows[i].size, NULL);
		ck_assert(t > 0);
		double bus = rows[i].size / t / 1e9 * hs_coll_busbw_factor(vc->op, n);
		if (rows[i].size >= 1048576) {
			sum += fabs(bus - rows[i].busbw) / rows[i].busbw;
			cnt++;
		} else {
			lsum += fabs(t * 1e6 - rows[i].time_us) / rows[i].time_us;
			lcnt++;
		}
	}
	double mape = 100 * sum / cnt;
	printf("nccl validation: %-42s busbw MAPE (>= 1 MB, %2d rows) %6.2f%%   small-size time error (%2d rows) %s%.1f%%%s%s\n",
	       vc->log, cnt, mape, lcnt, lcnt ? "" : "n/a ", lcnt ? 100 * lsum / lcnt : 0.0, vc->why ? "   known gap: " : "",
	       vc->why ? vc->why : "");
	if (!vc->why)
		ck_assert_msg(mape <= vc->gate, "%s: busbw MAPE %.2f%% exceeds %.1f%%", vc->log, mape, vc->gate);
	/* Below 1 MB (issue 16, item 9) the time is mostly NCCL's latency model (tuning.cc's per-launch and per-hop
	 * figures, not fitted): its mean relative error per log is reported above and held at SMALL_GATE, above
	 * today's worst (26.4%, the 2080 Ti all-to-all), so that a change to the latencies that makes it worse fails
	 * here. Known gaps are held too: their small sizes are not what keeps them out of the busbw gate. */
	if (lcnt)
		ck_assert_msg(100 * lsum / lcnt <= SMALL_GATE, "%s: small-size time error %.1f%% exceeds %.0f%%", vc->log,
			      100 * lsum / lcnt, (double)SMALL_GATE);
	hs_cluster_free(c);
	hs_yaml_free(d);
}
END_TEST

/* The tree's time on two nodes, by hand (sim/coll/coll_nccl.c tree_charged, sim/coll/coll_tree.c): 2 x 8 A100
 * (NVLink 300 GB/s x 0.8 = 240 GB/s), 200 GB/s of NICs a node (x 0.92 = 184 GB/s). The closed form: each GPU of
 * the chain sends 2S over NVLink (2S / 240 GB/s), a node's NICs send S (S / 184 GB/s: on two nodes each tree is
 * one edge, half the NIC bytes of a ring's 2(n-1)/n S): the chain binds, S / 120 GB/s, bus bandwidth 240 GB/s in
 * the tuner's terms (algorithm bandwidth / .5). NCCL's per-channel limit on two Ampere nodes is 23.6 GB/s
 * (tuning.cc perChMaxTreeBws): with 8 NICs of 200 Gb/s the search has 8 channels, 188.8 GB/s, which binds;
 * with 16 of 100 Gb/s, 16 channels, 377.6, which does not. The size correction is 1 past 256 MiB; the Simple
 * tree's latency (newest release) 8.4 + 2 (7 x 4.0 + 1 x 14) = 92.4 us. */
START_TEST(tree_two_nodes_by_hand)
{
	static const char *fmt = "cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 8, gpu: A100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us},\n"
				 "       nic: {bandwidth: %s, per_node: %d, latency: 3 us}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2}\n";
	static const struct {
		const char *nic;
		int per;
		double bus;
	} tc[] = {{"200 Gb/s", 8, 188.8e9}, {"100 Gb/s", 16, 240e9}};
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	for (int k = 0; k < 2; k++) {
		char y[512];
		snprintf(y, sizeof y, fmt, tc[k].nic, tc[k].per);
		hs_err err = {0};
		hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "t", &err);
		ck_assert_msg(d != NULL, "%s", err.msg);
		hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		double S = 8589934592.0;
		double t = hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, HS_PROTO_SIMPLE, ranks, 16, S, NULL);
		double want = 92.4e-6 + S / (0.5 * tc[k].bus);
		ck_assert_msg(fabs(t - want) <= 1e-9 * want, "%s x %d: %.9g s, expected %.9g s", tc[k].nic, tc[k].per,
			      t, want);
		hs_cluster_free(c);
		hs_yaml_free(d);
	}
}
END_TEST

/* NCCL's search in closed form (sim/coll/nccl_search.c), by hand from search.cc and init.cc at the tags named:
 * - OCI BM.GPU4.8 under 2.19: 16 NICs of 12.5 GB/s, PCIe 24, NVLink 240 (12 x 20). The first inter-node step at
 *   or below 12.5 is 12: 16 channels (16 x 12 = 192 fits the NVLink), below 25 so not duplicated. The tree: the
 *   ring's 16 channels at 12, then bwIntra 12 -> 15 (16 x 15 = 240 fits), not 18 (288 does not).
 * - Azure NDm A100 v4 under 2.12: 8 NICs of 25 GB/s, PCIe 24: 8 channels at 24 (2.12's array has 24), not
 *   duplicated; the tree raises bwIntra 24 -> 30 (240 fits), not 48; the duplication at the end is bounded by
 *   the ring's 8 channels.
 * - 2 x 8 H100, 8 NICs of 50 GB/s, PCIe Gen5 48, NVLink 450 x 0.8 = 360, under 2.23: 48 a channel would need 384
 *   of NVLink, so 45 (360); Hopper below 50 GB/s with more than 4 channels is not duplicated; bwIntra stays 45
 *   (48 x 8 does not fit).
 * - The same with one NIC a node: 1 channel at 48, duplicated (one channel) into 2 at 24; the tree raises bwIntra
 *   24 -> 30 -> 40 -> 42 -> 45 -> 48 and stops at twice bwInter.
 * - One A100 a node, one NIC of 25 GB/s, 2.19: 1 channel at 24, the plain TREE pattern, bwIntra raised to 48
 *   (no NVLink bounds it). */
START_TEST(nccl_search_by_hand)
{
	static const struct {
		hs_nccl_search_in in;
		int rn;
		double rbw;
		int tn;
		double tintra, tinter;
		int tpat;
	} tc[] = {
		{{219, HS_ARCH_AMPERE, 16, 12.5e9, 240e9, 8}, 16, 12, 16, 15, 12, 0},
		{{212, HS_ARCH_AMPERE, 8, 24e9, 240e9, 8}, 8, 24, 8, 30, 24, 0},
		{{223, HS_ARCH_HOPPER, 8, 48e9, 360e9, 8}, 8, 45, 8, 45, 45, 0},
		{{223, HS_ARCH_HOPPER, 1, 48e9, 360e9, 8}, 2, 24, 2, 48, 24, 0},
		{{219, HS_ARCH_AMPERE, 1, 24e9, INFINITY, 1}, 1, 24, 1, 48, 24, 1},
	};
	for (size_t k = 0; k < sizeof tc / sizeof *tc; k++) {
		hs_nccl_graph r, t;
		ck_assert_int_eq(hs_nccl_search(&tc[k].in, &r, &t), 0);
		ck_assert_msg(r.nch == tc[k].rn && fabs(r.bw_inter - tc[k].rbw * 1e9) < 1 && r.bw_intra == r.bw_inter,
			      "case %zu: ring %d x %g/%g", k, r.nch, r.bw_intra / 1e9, r.bw_inter / 1e9);
		ck_assert_msg(t.nch == tc[k].tn && fabs(t.bw_intra - tc[k].tintra * 1e9) < 1 &&
				      fabs(t.bw_inter - tc[k].tinter * 1e9) < 1 && t.tree_pattern == tc[k].tpat,
			      "case %zu: tree %d x %g/%g pattern %d", k, t.nch, t.bw_intra / 1e9, t.bw_inter / 1e9,
			      t.tree_pattern);
	}
	hs_nccl_graph r, t;
	hs_nccl_search_in none = {219, HS_ARCH_AMPERE, 0, 25e9, 240e9, 8};
	ck_assert_int_eq(hs_nccl_search(&none, &r, &t), -1);
	ck_assert_int_eq(r.nch + t.nch, 0);
}
END_TEST

/* What the search changes in the choice, on the OCI log's scenario (NCCL 2.19.3, 16 x 100 Gb/s a node): the tree
 * is rated 16 x 15 x .92 = 220.8 GB/s of bus bandwidth (110.4 of algorithm bandwidth), LL128 x 120/128 = 103.5,
 * the ring 16 x 12 x 16/30 = 102.4, so the tree runs at every size: LL128 at
 * 512 MiB (latency 48.5 us against Simple's 448), Simple from 1 GiB, where 448 us matter less than LL128's
 * bandwidth. On the Azure log's hardware (8 x 200 Gb/s, 2.12.12) the tree's 8 channels hold it at 188.8 (94.4)
 * and the ring runs at 1 GiB. */
START_TEST(nccl_tree_choice_follows_the_search)
{
	static const struct {
		const char *scenario;
		double S;
		enum hs_coll_algo algo;
		enum hs_coll_proto proto;
	} tc[] = {{"a100x16-oci-roce", 512.0 * (1 << 20), HS_ALGO_TREE, HS_PROTO_LL128},
		  {"a100x16-oci-roce", 1024.0 * (1 << 20), HS_ALGO_TREE, HS_PROTO_SIMPLE},
		  {"a100x16-azure-hdr", 1024.0 * (1 << 20), HS_ALGO_RING, HS_PROTO_SIMPLE}};
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	for (size_t k = 0; k < sizeof tc / sizeof *tc; k++) {
		char path[256];
		snprintf(path, sizeof path, "scenarios/validation/nccl/%s.yaml", tc[k].scenario);
		hs_err err = {0};
		hs_ydoc *d = hs_yaml_load_file(path, &err);
		ck_assert_msg(d != NULL, "%s", err.msg);
		hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
		ck_assert_msg(c != NULL, "%s", err.msg);
		hs_coll_choice ch;
		ck_assert(hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 16, tc[k].S, &ch) > 0);
		ck_assert_msg(ch.algo == tc[k].algo && ch.proto == tc[k].proto, "%s at %g B: %s/%s", tc[k].scenario,
			      tc[k].S, hs_coll_algo_name(ch.algo), hs_coll_proto_name(ch.proto));
		hs_cluster_free(c);
		hs_yaml_free(d);
	}
}
END_TEST

/* NCCL's AUTO time is the fastest of its (algorithm, protocol) times, each of which falls with bandwidth: more NIC
 * or NVLink bandwidth is never slower, whatever the choice switches to. */
START_TEST(nccl_auto_monotonic)
{
	static const char *fmt = "cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: %g GB/s, in_switch_reduction: true},\n"
				 "       nic: {bandwidth: %g Gb/s, per_node: 8}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2}\n";
	static const double bw[] = {100, 200, 400, 800};
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	for (int op = 0; op < HS_COLL_OP_COUNT; op++)
		for (double S = 4096; S <= 8e9; S *= 16)
			for (int which = 0; which < 2; which++) {
				double prev = INFINITY;
				for (int k = 0; k < 4; k++) {
					char y[512];
					snprintf(y, sizeof y, fmt, which ? bw[k] : 450.0, which ? 400.0 : bw[k]);
					hs_err err = {0};
					hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "t", &err);
					ck_assert_msg(d != NULL, "%s", err.msg);
					hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
					ck_assert_msg(c != NULL, "%s", err.msg);
					int n = op == HS_COLL_SENDRECV ? 2 : 16;
					double t = hs_coll_nccl_time(c, op, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, n, S, NULL);
					ck_assert_msg(t <= prev * (1 + 1e-12), "%s at %g B: %g s > %g s", hs_coll_op_name(op), S, t,
						      prev);
					prev = t;
					hs_cluster_free(c);
					hs_yaml_free(d);
				}
			}
}
END_TEST

/* The tree's LL128 is charged with each link at its own efficiency (sim/coll/coll_nccl.c tree_charged): charged
 * by the binding link alone, 4 x 8 A100 went from 120/128 to 7/9 when 400 Gb/s NICs moved the bound to NVLink,
 * and a 16 MiB all-reduce took 16% longer than on 200 Gb/s. All-reduce on 4 x 8 A100, NICs 100 to 800 Gb/s,
 * each release's choice: never slower. */
START_TEST(nccl_tree_faster_nics_never_slower)
{
	static const char *fmt = "cluster:\n  groups:\n    - {nodes: 4, gpus_per_node: 8, gpu: A100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: 300 GB/s},\n"
				 "       nic: {bandwidth: %g Gb/s, per_node: 8}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2}\n  nccl: {version: \"%s\"}\n";
	static const double bw[] = {100, 200, 400, 800};
	static const char *ver[] = {"2.12.12", "2.19.3", "2.23.4", "2.29.2"};
	int ranks[32];
	for (int i = 0; i < 32; i++)
		ranks[i] = i;
	for (int v = 0; v < 4; v++)
		for (double S = 1024; S <= 8.6e9; S *= 4) {
			double prev = INFINITY;
			for (int k = 0; k < 4; k++) {
				char y[512];
				snprintf(y, sizeof y, fmt, bw[k], ver[v]);
				hs_err err = {0};
				hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "t", &err);
				ck_assert_msg(d != NULL, "%s", err.msg);
				hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
				ck_assert_msg(c != NULL, "%s", err.msg);
				double t = hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 32, S, NULL);
				ck_assert_msg(t <= prev * (1 + 1e-12), "%s, %g Gb/s, %g B: %g s > %g s", ver[v], bw[k], S, t, prev);
				prev = t;
				hs_cluster_free(c);
				hs_yaml_free(d);
			}
		}
}
END_TEST

/* NCCL's release changes what its tuner chooses, not how fast the links are (sim/coll/nccl_tuner.h). On two
 * nodes of 8 A100s with 8 x 200 Gb/s, 16 MiB all-reduce: the LL128 ring and the LL128 tree are rated within a
 * few microseconds of each other, and 2.12-2.22 charge the ring's all-reduce 2 nNodes = 4 network steps where
 * 2.23 charges 2 (nNodes - 1) = 2, 2 x 4.0 us less: 2.19 picks the tree, 2.23 the ring. A forced algorithm
 * takes the same time under every release, since the time charged is the newest release's. */
/* The cluster of `fmt` (a YAML document with one %s, the NCCL release) at release `ver`; *doc holds it. */
static hs_cluster *versioned(const char *fmt, const char *ver, hs_ydoc **doc)
{
	char y[512];
	snprintf(y, sizeof y, fmt, ver);
	hs_err err = {0};
	*doc = hs_yaml_load_string(y, strlen(y), "t", &err);
	ck_assert_msg(*doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(*doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

START_TEST(nccl_version_changes_the_choice)
{
	static const char *fmt = "cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 8, gpu: A100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us},\n"
				 "       nic: {bandwidth: 200 Gb/s, per_node: 8, latency: 3 us}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2, latency: 1 us}\n"
				 "  nccl: {version: \"%s\"}\n";
	static const char *ver[] = {"2.19.3", "2.23.4-1"};
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	hs_coll_choice ch[2];
	double forced[2][2];
	for (int v = 0; v < 2; v++) {
		hs_ydoc *d;
		hs_cluster *c = versioned(fmt, ver[v], &d);
		ck_assert_int_eq(hs_cluster_nccl_version(c), v ? 223 : 219);
		double S = 16 << 20;
		ck_assert(hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 16, S, &ch[v]) > 0);
		forced[v][0] = hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_RING, HS_PROTO_AUTO, ranks, 16, S, NULL);
		forced[v][1] = hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_TREE, HS_PROTO_AUTO, ranks, 16, S, NULL);
		hs_cluster_free(c);
		hs_yaml_free(d);
	}
	ck_assert_msg(ch[0].algo == HS_ALGO_TREE && ch[0].proto == HS_PROTO_LL128, "2.19: %s/%s",
		      hs_coll_algo_name(ch[0].algo), hs_coll_proto_name(ch[0].proto));
	ck_assert_msg(ch[1].algo == HS_ALGO_RING && ch[1].proto == HS_PROTO_LL128, "2.23: %s/%s",
		      hs_coll_algo_name(ch[1].algo), hs_coll_proto_name(ch[1].proto));
	ck_assert_double_eq(forced[0][0], forced[1][0]);
	ck_assert_double_eq(forced[0][1], forced[1][1]);
}
END_TEST

/* NVLS and NVLS-tree by release (src/include/devcomm.h at the tags): NCCL 2.16 has neither, 2.17 NVLS on one
 * node only, 2.18 NVLS-tree across nodes. On two HGX H100 nodes at 1 GiB (NVLS's and NVLS-tree's regime, where
 * they beat the ring: 473 and 501 GB/s busbw against the ring's NIC bound), AUTO takes each only from its
 * release; before, it runs the ring or the tree. */
START_TEST(nvls_by_release)
{
	static const char *fmt = "cluster:\n  groups:\n    - {nodes: 2, gpus_per_node: 8, gpu: H100-SXM-80GB,\n"
				 "       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},\n"
				 "       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}\n"
				 "  fabric: {kind: fat-tree, tiers: 2, latency: 1 us}\n"
				 "  nccl: {version: \"%s\"}\n";
	static const char *ver[] = {"2.16.2", "2.17.1", "2.18.3", "2.29"};
	/* the algorithm AUTO takes on one node (8 ranks) and on two (16), by release */
	static const enum hs_coll_algo one[] = {HS_ALGO_COUNT, HS_ALGO_NVLS, HS_ALGO_NVLS, HS_ALGO_NVLS};
	static const enum hs_coll_algo two[] = {HS_ALGO_COUNT, HS_ALGO_COUNT, HS_ALGO_NVLS_TREE, HS_ALGO_NVLS_TREE};
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	for (int v = 0; v < 4; v++) {
		hs_ydoc *d;
		hs_cluster *c = versioned(fmt, ver[v], &d);
		hs_coll_choice ch[2];
		double S = 1 << 30;
		ck_assert(hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 8, S, &ch[0]) > 0);
		ck_assert(hs_coll_nccl_time(c, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 16, S, &ch[1]) > 0);
		/* HS_ALGO_COUNT: neither NVLS algorithm, the ring or the tree */
		if (one[v] == HS_ALGO_COUNT)
			ck_assert_msg(ch[0].algo == HS_ALGO_RING || ch[0].algo == HS_ALGO_TREE, "%s, 8 ranks: %s", ver[v],
				      hs_coll_algo_name(ch[0].algo));
		else
			ck_assert_msg(ch[0].algo == one[v], "%s, 8 ranks: %s", ver[v], hs_coll_algo_name(ch[0].algo));
		if (two[v] == HS_ALGO_COUNT)
			ck_assert_msg(ch[1].algo == HS_ALGO_RING || ch[1].algo == HS_ALGO_TREE, "%s, 16 ranks: %s", ver[v],
				      hs_coll_algo_name(ch[1].algo));
		else
			ck_assert_msg(ch[1].algo == two[v], "%s, 16 ranks: %s", ver[v], hs_coll_algo_name(ch[1].algo));
		hs_cluster_free(c);
		hs_yaml_free(d);
	}
}
END_TEST

/* cluster.nccl.version: a release before the oldest modelled, or not a version, is bad input naming the key. */
START_TEST(nccl_version_errors)
{
	static const char *bad[] = {"2.11", "two", "2.", "2.19.x", "2.19.3-"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char y[256];
		snprintf(y, sizeof y,
			 "cluster:\n  groups:\n    - {nodes: 1, gpus_per_node: 2, gpu: A100-SXM-80GB}\n"
			 "  nccl: {version: \"%s\"}\n", bad[i]);
		hs_err err = {0};
		hs_ydoc *d = hs_yaml_load_string(y, strlen(y), "t.yaml", &err);
		ck_assert_msg(d != NULL, "%s", err.msg);
		hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", &err);
		ck_assert_msg(c == NULL, "version '%s' accepted", bad[i]);
		ck_assert_int_eq(err.code, HS_EINPUT);
		ck_assert_msg(strstr(err.msg, "t.yaml:4:") && strstr(err.msg, "cluster.nccl.version"), "%s", err.msg);
		hs_yaml_free(d);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_nccl");
	TCase *t = tcase_create("validation");
	tcase_add_test(t, log_parser_handles_prefixes);
	tcase_add_test(t, nccl_auto_monotonic);
	tcase_add_test(t, nccl_tree_faster_nics_never_slower);
	tcase_add_test(t, nccl_version_changes_the_choice);
	tcase_add_test(t, nccl_version_errors);
	tcase_add_test(t, nvls_by_release);
	tcase_add_loop_test(t, matches_nccl_tests, 0, (int)(sizeof cases / sizeof *cases));
	tcase_add_test(t, tree_two_nodes_by_hand);
	tcase_add_test(t, nccl_search_by_hand);
	tcase_add_test(t, nccl_tree_choice_follows_the_search);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
