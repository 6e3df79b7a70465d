/* The ns-3 network model (sim/net/net_ns3.cc) against the flow model on cases whose difference is known: one
 * flow per link, N-to-1 incast, two flows hashed onto one ECMP path against two on distinct paths; a ring
 * all-reduce step by step on both; determinism and bytes conserved. Skipped (exit 77, with the reason) where the
 * build has no ns-3.
 *
 * The closed forms. A transfer of B bytes is p = ceil(B / 4096) packets, each with H = HS_NS3_HDR = 46 wire
 * bytes besides its payload; the last carries what is left. On a path of h links of one
 * bandwidth b with latencies summing to L, a sender whose window never binds (net_ns3.cc sizes it so) finishes
 * at
 *     T = L + (h - 1) (f + H) / b + (B + p H) / b,   f = min(B, 4096) the first (largest) packet's payload
 * (the first packet stored and forwarded by each hop but the last, then every packet back to back on the last
 * link), where the flow model gives L + B / b: the difference is the headers, 1.12% of a full packet's time, and
 * one packet's time per further hop. ns-3 rounds each packet's transmission time to its picosecond tick
 * (DataRate::CalculateBytesTxTime), so the comparison with the closed form allows 1 ps per packet and hop. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/yaml.h"
#include "sim/net/net.h"
#include "sim/net/net_impl.h" /* hs_net_home_rail: the rail hs_net_send takes */
#include "sim/net/net_ns3.h"
#include "topology/cluster.h"
#include "topology/route.h"

static hs_ydoc *doc;

static hs_cluster *load(const char *text)
{
	hs_err err;
	hs_err_clear(&err);
	doc = hs_yaml_load_string(text, strlen(text), "t.yaml", &err);
	ck_assert_msg(doc != NULL, "%s", err.msg);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(doc), "cluster"), "cluster", &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	return c;
}

static void unload(hs_cluster *c)
{
	hs_cluster_free(c);
	hs_yaml_free(doc);
	doc = NULL;
}

static hs_time done_at[64];
static int ndone;
static hs_engine *cur;
static void rec(void *ctx, uint64_t arg)
{
	(void)ctx;
	done_at[arg] = hs_engine_now(cur);
	ndone++;
}

#define MTU HS_NS3_MTU
#define HDR HS_NS3_HDR

static double packets(double B) { return ceil(B / MTU); }

/* seconds for a window-unbound transfer of B bytes over h links of bw bytes/s and total latency L s */
static double closed(double B, int h, double bw, double L)
{
	return L + (B + packets(B) * HDR) / bw + (h - 1) * (fmin(B, MTU) + HDR) / bw;
}

struct send {
	int src, dst;
	double bytes;
	double at; /* seconds */
};

struct start_ctx {
	hs_net *n;
	const struct send *s;
};
static struct start_ctx starts[16];
static void start_ev(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)eng;
	struct start_ctx *sc = ctx;
	hs_err err;
	hs_err_clear(&err);
	ck_assert_msg(hs_net_send(sc->n, sc->s->src, sc->s->dst, sc->s->bytes, rec, NULL, arg, &err) == 0, "%s", err.msg);
}

/* Run the sends on `model`; completion times (ps) in done_at; with st, the ns-3 figures. */
static void run(const hs_cluster *c, const char *model, const struct send *s, int ns, hs_net_ns3_stat *st)
{
	hs_err err;
	hs_err_clear(&err);
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, model, cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	memset(done_at, 0, sizeof done_at);
	ndone = 0;
	for (int i = 0; i < ns; i++) {
		starts[i] = (struct start_ctx){n, &s[i]};
		hs_engine_at(cur, hs_time_from_s(s[i].at), start_ev, &starts[i], (uint64_t)i);
	}
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert_int_eq(ndone, ns);
	hs_time last = 0;
	for (int i = 0; i < ns; i++)
		last = done_at[i] > last ? done_at[i] : last;
	ck_assert_uint_eq(hs_engine_now(cur), last); /* nothing of the model runs on after the last completion */
	double want = 0;
	for (int i = 0; i < ns; i++)
		want += s[i].bytes;
	ck_assert_double_eq_tol(hs_net_bytes_injected(n), want, 1e-6);
	if (st) {
		ck_assert_int_eq(hs_net_ns3_stats(n, st), 0);
		ck_assert_double_eq_tol(st->delivered, want, 0.5); /* bytes conserved: every payload byte arrived */
		ck_assert_uint_eq(st->drops, 0);
		double pk = 0;
		for (int i = 0; i < ns; i++)
			pk += packets(s[i].bytes);
		ck_assert_uint_eq(st->data_packets, (uint64_t)pk);
		ck_assert_uint_eq(st->ack_packets, (uint64_t)pk); /* one acknowledgement per data packet */
	} else {
		ck_assert_int_eq(hs_net_ns3_stats(n, &(hs_net_ns3_stat){0}), -1); /* not an ns3 network */
	}
	hs_net_free(n);
	hs_engine_destroy(cur);
}

static double sec(hs_time t) { return hs_time_to_s(t); }

/* (a) One flow per link, through a switch: the closed form above, to 1 ps per packet and hop; the flow model's
 * L + B/b within the headers and the store-and-forward of the last packet. */
START_TEST(one_flow_per_link)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			     "  fabric:\n"
			     "    kind: explicit\n"
			     "    switches: [s0]\n"
			     "    links: [{from: gpu0, to: s0, bandwidth: 10 GB/s, latency: 2 us},\n"
			     "            {from: s0, to: gpu1, bandwidth: 10 GB/s, latency: 3 us}]\n");
	const double sizes[] = {1, 4096, 4097, 1e6, 64 << 20};
	for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		double B = sizes[k];
		struct send s[] = {{0, 1, B, 0}};
		hs_net_ns3_stat st;
		run(c, "ns3", s, 1, &st);
		double t3 = sec(done_at[0]);
		run(c, "flow", s, 1, NULL);
		double tf = sec(done_at[0]);
		double want = closed(B, 2, 10e9, 5e-6);
		ck_assert_msg(fabs(t3 - want) <= 2 * packets(B) * 1e-12, "%g B: ns-3 %.12g s, closed form %.12g s", B, t3, want);
		ck_assert_double_eq_tol(tf, 5e-6 + B / 10e9, 1e-11);
		/* the derived tolerance against the flow model: headers plus one packet stored and forwarded */
		double tol = (packets(B) * HDR + MTU + HDR) / 10e9 + 2 * packets(B) * 1e-12;
		ck_assert_msg(t3 >= tf && t3 - tf <= tol, "%g B: ns-3 %.9g s, flow %.9g s (tolerance %.3g s)", B, t3, tf, tol);
		/* alone, the only queue is the sender's: its window, less the packet on the wire (none, for one packet);
		 * the window is the path's bandwidth-delay product in packets + 2 (net_ns3.cc) */
		double S = MTU + HDR, rtt = 10e-6 + 2 * S / 10e9 + 2 * (double)HS_NS3_ACK / 10e9;
		double W = ceil(10e9 * rtt / S) + 2, q = fmax(1, fmin(packets(B), W) - 1);
		ck_assert_msg((double)st.max_queue == q, "%g B: deepest queue %llu, derived %g", B,
			      (unsigned long long)st.max_queue, q);
	}
	unload(c);
}
END_TEST

/* N senders, one switch, one receiver, every link 10 GB/s and 1 us. */
static const char *incast_cluster = "cluster:\n"
				    "  groups:\n"
				    "    - {nodes: 6, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
				    "  fabric:\n"
				    "    kind: explicit\n"
				    "    switches: [s0]\n"
				    "    links: [{from: gpu0, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
				    "            {from: gpu1, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
				    "            {from: gpu2, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
				    "            {from: gpu3, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
				    "            {from: gpu4, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
				    "            {from: gpu5, to: s0, bandwidth: 10 GB/s, latency: 1 us}]\n";

/* (b) N-to-1 incast. Max-min gives each sender b/N: all finish at L + N B / b. In ns-3 the switch's port to the
 * receiver is busy from the first packet's arrival (L0 + S/b) until every sender's bytes and headers are through,
 * so the last finishes at L + S/b + N (B + p H)/b >= the flow model's, the extra being the headers and one packet
 * (derived, tested to 3 packet times: which sender's packet is last depends on arrival order). Meanwhile the port's
 * queue holds what the N windows put in flight beyond the path's pipe: about (N - 1) W packets, W the window.
 * A one-packet probe sent into it mid-incast waits that queue (a queueing delay the flow model has no notion of:
 * it gives the probe a 1/(N+1) share at once). */
START_TEST(incast)
{
	hs_cluster *c = load(incast_cluster);
	const int N = 4;
	const double B = 4 << 20, bw = 10e9, S = MTU + HDR;
	struct send s[6];
	for (int i = 0; i < N; i++)
		s[i] = (struct send){i, 5, B, 0};
	hs_net_ns3_stat st;
	run(c, "ns3", s, N, &st);
	hs_time t3[4];
	memcpy(t3, done_at, sizeof t3);
	run(c, "flow", s, N, NULL);
	double tf = 0, last3 = 0, first3 = 1e9;
	for (int i = 0; i < N; i++) {
		tf = sec(done_at[i]) > tf ? sec(done_at[i]) : tf;
		last3 = sec(t3[i]) > last3 ? sec(t3[i]) : last3;
		first3 = sec(t3[i]) < first3 ? sec(t3[i]) : first3;
	}
	ck_assert_double_eq_tol(tf, 2e-6 + N * B / bw, 1e-11);
	double want = 2e-6 + S / bw + N * (B + packets(B) * HDR) / bw;
	ck_assert_msg(last3 >= tf, "incast: ns-3 %.9g s before the flow model's %.9g s", last3, tf);
	ck_assert_msg(fabs(last3 - want) <= 3 * S / bw, "incast: ns-3 %.9g s, closed form %.9g s", last3, want);
	/* FIFO interleaving keeps the senders' progress together: the first finishes within N packets of the last */
	ck_assert_msg(last3 - first3 <= (N + 1) * S / bw, "incast: first %.9g s, last %.9g s", first3, last3);
	/* the queue: N windows less the one path's pipe (window - 2 packets), within one window */
	double rtt = 4e-6 + 2 * S / bw + 2 * (double)HS_NS3_ACK / bw;
	double W = ceil(bw * rtt / S) + 2;
	double q = (double)st.max_queue, qwant = N * W - (W - 2);
	printf("incast %d x %.0f B: ns-3 %.6f us, flow %.6f us (+%.3f us); window %.0f packets, deepest queue %.0f "
	       "packets (derived %.0f), %.2f us of queueing\n",
	       N, B, last3 * 1e6, tf * 1e6, (last3 - tf) * 1e6, W, q, qwant, q * S / bw * 1e6);
	ck_assert_msg(fabs(q - qwant) <= W, "incast: deepest queue %.0f packets, derived %.0f", q, qwant);

	/* the probe: one packet from gpu4, started when the queue is full (half way through) */
	s[N] = (struct send){4, 5, MTU, tf / 2};
	run(c, "ns3", s, N + 1, &st);
	double probe3 = sec(done_at[N]) - tf / 2;
	run(c, "flow", s, N + 1, NULL);
	double probef = sec(done_at[N]) - tf / 2;
	printf("probe of one packet mid-incast: ns-3 %.3f us, flow %.3f us\n", probe3 * 1e6, probef * 1e6);
	/* flow: latency + a 1/(N+1) share; ns-3: latency, two packet times and the queue of the N senders' windows */
	ck_assert_double_eq_tol(probef, 2e-6 + (N + 1) * MTU / bw, 1e-9);
	double qprobe = (N * W - (W - 2)) * S / bw;
	ck_assert_msg(probe3 > probef && fabs(probe3 - (2e-6 + 2 * S / bw + qprobe)) <= W * S / bw,
		      "probe: ns-3 %.9g s, derived %.9g s", probe3, 2e-6 + 2 * S / bw + qprobe);
	unload(c);
}
END_TEST

/* Two leaves of four GPUs, two spines; every link 10 GB/s, 1 us. */
static const char *ecmp_cluster = "cluster:\n"
				  "  groups:\n"
				  "    - {nodes: 8, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
				  "  fabric:\n"
				  "    kind: explicit\n"
				  "    switches: [leaf0, leaf1, spine0, spine1]\n"
				  "    links: [{from: gpu0, to: leaf0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu1, to: leaf0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu2, to: leaf0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu3, to: leaf0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu4, to: leaf1, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu5, to: leaf1, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu6, to: leaf1, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: gpu7, to: leaf1, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: leaf0, to: spine0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: leaf0, to: spine1, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: leaf1, to: spine0, bandwidth: 10 GB/s, latency: 1 us},\n"
				  "            {from: leaf1, to: spine1, bandwidth: 10 GB/s, latency: 1 us}]\n";

/* the spine the route hs_net_send takes from src to dst crosses (its hash's pick) */
static int spine_of(const hs_cluster *c, int src, int dst)
{
	hs_err err;
	hs_err_clear(&err);
	hs_engine *e = hs_engine_create();
	hs_net *n = hs_net_create(c, "flow", e, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	const hs_route *r = hs_route_get(hs_net_router(n), src, dst, hs_net_home_rail(n, src), &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->npaths, 1);
	int sp = -1;
	for (int i = 0; i < r->nl; i++) {
		char buf[32];
		const char *nm = hs_topo_vname(hs_net_topo(n), hs_topo_link(hs_net_topo(n), r->link[i])->to, buf, sizeof buf);
		if (!strncmp(nm, "spine", 5))
			sp = nm[5] - '0';
	}
	hs_net_free(n);
	hs_engine_destroy(e);
	ck_assert_int_ge(sp, 0);
	return sp;
}

/* (c) Two flows between distinct GPUs of leaf0 and leaf1: when the ECMP hash puts both on one spine, they share
 * leaf0 -> spine and spine -> leaf1, so each runs at b/2 and both finish near L + 2 (B + p H)/b; on distinct
 * spines each finishes as if alone, L + 3 (4096 + H)/b + (B + p H)/b. So collided / distinct -> 2 (minus the latency
 * and pipeline terms), in ns-3 as in the flow model, and each ns-3 time is the flow model's within the headers
 * and 3 packets stored and forwarded. */
START_TEST(ecmp_collision)
{
	hs_cluster *c = load(ecmp_cluster);
	int same[2][2] = {{-1, -1}, {-1, -1}}, diff[2][2] = {{-1, -1}, {-1, -1}};
	/* pairs (i -> 4 + j) and (i' -> 4 + j') with i != i', j != j': no edge link shared */
	for (int i = 0; i < 4 && (same[0][0] < 0 || diff[0][0] < 0); i++)
		for (int j = 0; j < 4; j++)
			for (int i2 = i + 1; i2 < 4; i2++)
				for (int j2 = 0; j2 < 4; j2++) {
					if (j2 == j)
						continue;
					int eq = spine_of(c, i, 4 + j) == spine_of(c, i2, 4 + j2);
					int(*p)[2] = eq ? same : diff;
					if (p[0][0] < 0)
						p[0][0] = i, p[0][1] = 4 + j, p[1][0] = i2, p[1][1] = 4 + j2;
				}
	ck_assert_msg(same[0][0] >= 0 && diff[0][0] >= 0, "the hash gave no colliding or no distinct pair");
	const double B = 8 << 20, bw = 10e9, S = MTU + HDR;
	double t[2][2]; /* [same | distinct][ns3 | flow] */
	for (int k = 0; k < 2; k++) {
		int(*p)[2] = k ? diff : same;
		struct send s[2] = {{p[0][0], p[0][1], B, 0}, {p[1][0], p[1][1], B, 0}};
		hs_net_ns3_stat st;
		run(c, "ns3", s, 2, &st);
		t[k][0] = fmax(sec(done_at[0]), sec(done_at[1]));
		run(c, "flow", s, 2, NULL);
		t[k][1] = fmax(sec(done_at[0]), sec(done_at[1]));
	}
	double L = 4e-6, hdr = packets(B) * HDR;
	ck_assert_double_eq_tol(t[0][1], L + 2 * B / bw, 1e-11);
	ck_assert_double_eq_tol(t[1][1], L + B / bw, 1e-11);
	ck_assert_msg(fabs(t[1][0] - closed(B, 4, bw, L)) <= 8 * packets(B) * 1e-12, "distinct: ns-3 %.9g s, closed %.9g s",
		      t[1][0], closed(B, 4, bw, L));
	double want_same = L + 2 * (B + hdr) / bw;
	ck_assert_msg(fabs(t[0][0] - want_same) <= 4 * S / bw, "collided: ns-3 %.9g s, derived %.9g s", t[0][0], want_same);
	for (int k = 0; k < 2; k++) {
		double tol = (k ? 1 : 2) * hdr / bw + 4 * S / bw;
		ck_assert_msg(t[k][0] >= t[k][1] && t[k][0] - t[k][1] <= tol, "%s: ns-3 %.9g s, flow %.9g s",
			      k ? "distinct" : "collided", t[k][0], t[k][1]);
	}
	printf("ECMP, 2 x %.0f B: collided ns-3 %.3f us (flow %.3f), distinct ns-3 %.3f us (flow %.3f): ratio %.4f "
	       "(flow %.4f)\n",
	       B, t[0][0] * 1e6, t[0][1] * 1e6, t[1][0] * 1e6, t[1][1] * 1e6, t[0][0] / t[1][0], t[0][1] / t[1][1]);
	unload(c);
}
END_TEST

/* A parking lot: A = gpu0 -> gpu4 crosses s0 -> s1 (shared with B = gpu1 -> gpu5) and s1 -> gpu4 (shared with
 * C = gpu2 -> gpu4 and D = gpu3 -> gpu4). Max-min gives A, C and D b/3 each and B the 2b/3 A leaves on s0 -> s1.
 * Window senders on FIFO queues have no such allocation, but s1 -> gpu4 is work-conserving: busy from the first
 * packet's arrival (C's or D's, one hop: 1 us + S/b) until the three flows' bytes and headers are through, so the
 * last of A, C, D finishes at 2 us + S/b + 3 (B + p H)/b (to 3 packet times). How the link is shared among them
 * is printed: where it is not max-min's equal thirds, a collective whose step waits for its slowest transfer
 * differs from the flow model by that spread. */
START_TEST(parking_lot)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 6, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			     "  fabric:\n"
			     "    kind: explicit\n"
			     "    switches: [s0, s1]\n"
			     "    links: [{from: gpu0, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: gpu1, to: s0, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: s0, to: s1, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: gpu2, to: s1, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: gpu3, to: s1, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: gpu4, to: s1, bandwidth: 10 GB/s, latency: 1 us},\n"
			     "            {from: gpu5, to: s1, bandwidth: 10 GB/s, latency: 1 us}]\n");
	const double B = 8 << 20, bw = 10e9, S = MTU + HDR;
	struct send s[] = {{0, 4, B, 0}, {1, 5, B, 0}, {2, 4, B, 0}, {3, 4, B, 0}};
	hs_net_ns3_stat st;
	run(c, "ns3", s, 4, &st);
	double t3[4], tf[4];
	for (int i = 0; i < 4; i++)
		t3[i] = sec(done_at[i]);
	run(c, "flow", s, 4, NULL);
	for (int i = 0; i < 4; i++)
		tf[i] = sec(done_at[i]);
	ck_assert_double_eq_tol(tf[1], 3e-6 + 1.5 * B / bw, 1e-9); /* B: 2b/3 while A runs, all of it */
	ck_assert_double_eq_tol(tf[0], 3e-6 + 3 * B / bw, 1e-9); /* A, C, D: b/3 (A has one more hop's latency) */
	ck_assert_double_eq_tol(tf[2], 2e-6 + 3 * B / bw, 1e-9);
	double last = fmax(t3[0], fmax(t3[2], t3[3])), want = 2e-6 + S / bw + 3 * (B + packets(B) * HDR) / bw;
	ck_assert_msg(fabs(last - want) <= 3 * S / bw, "parking lot: last of A, C, D %.9g s, derived %.9g s", last, want);
	ck_assert_msg(t3[1] >= tf[1], "parking lot: B %.9g s before the flow model's %.9g s", t3[1], tf[1]);
	printf("parking lot, 4 x %.0f B: ns-3 A %.1f B %.1f C %.1f D %.1f us; flow A %.1f B %.1f C %.1f D %.1f us\n", B,
	       t3[0] * 1e6, t3[1] * 1e6, t3[2] * 1e6, t3[3] * 1e6, tf[0] * 1e6, tf[1] * 1e6, tf[2] * 1e6, tf[3] * 1e6);
	unload(c);
}
END_TEST

/* Same sends twice: identical times and figures. */
START_TEST(deterministic)
{
	hs_cluster *c = load(incast_cluster);
	struct send s[] = {{0, 5, 3e6, 0}, {1, 5, 1e6, 1e-6}, {2, 5, 2e6, 0}, {5, 0, 1e6, 5e-6}, {3, 4, 7e5, 2e-6}};
	hs_net_ns3_stat a, b;
	run(c, "ns3", s, 5, &a);
	hs_time ta[5];
	memcpy(ta, done_at, sizeof ta);
	run(c, "ns3", s, 5, &b);
	ck_assert(memcmp(ta, done_at, sizeof ta) == 0);
	ck_assert_uint_eq(a.ns3_events, b.ns3_events);
	ck_assert_uint_eq(a.steps, b.steps);
	ck_assert_uint_eq(a.max_queue, b.max_queue);
	unload(c);
}
END_TEST

static void coll_done(void *ctx, uint64_t arg)
{
	(void)ctx, (void)arg;
	done_at[0] = hs_engine_now(cur);
	ndone++;
}

/* A ring all-reduce step by step (sim/net/netcoll_ring.c) on 4 nodes x 1 GPU, 100 Gb/s NICs, one switch: every
 * one of its 2 (n - 1) steps is a transfer of B/n per rank on a NIC -> switch -> NIC path (4 links: GPU-NIC,
 * NIC-switch each way), so ns-3's time is the flow model's plus, per step, the headers of its packets and 3
 * packets stored and forwarded (and the window's ramp, none here: a window exceeds a step's packets); bytes on
 * every link as the flow model counts them. */
START_TEST(ring_allreduce_vs_flow)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 4, gpus_per_node: 1, gpu: H100-SXM-80GB,\n"
			     "       nic: {bandwidth: 100 Gb/s, per_node: 1, latency: 2 us}}\n"
			     "  fabric: {kind: fat-tree, tiers: 1, latency: 1 us}\n");
	const int ranks[] = {0, 1, 2, 3};
	const double B = 16 << 20;
	double t[2], lb[2][64];
	int nl = 0;
	const char *models[] = {"ns3", "flow"};
	for (int m = 0; m < 2; m++) {
		hs_err err;
		hs_err_clear(&err);
		cur = hs_engine_create();
		hs_net *n = hs_net_create(c, models[m], cur, &err);
		ck_assert_msg(n != NULL, "%s", err.msg);
		ndone = 0;
		clock_t c0 = clock();
		ck_assert_int_eq(hs_net_collective(n, HS_COLL_ALL_REDUCE, HS_ALGO_RING, ranks, 4, B, coll_done, NULL, 0, &err), 0);
		hs_engine_run(cur, HS_TIME_MAX);
		double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
		hs_net_ns3_stat st;
		if (m == 0 && hs_net_ns3_stats(n, &st) == 0) /* speed, for the record (not asserted) */
			printf("ring all-reduce on ns-3: %llu data packets, %llu ns-3 events, %llu engine steps in %.3f s CPU "
			       "(%.2fM ns-3 events/s)\n",
			       (unsigned long long)st.data_packets, (unsigned long long)st.ns3_events,
			       (unsigned long long)st.steps, cpu, cpu > 0 ? (double)st.ns3_events / cpu / 1e6 : 0);
		ck_assert_int_eq(ndone, 1);
		t[m] = sec(done_at[0]);
		nl = hs_net_nlinks(n);
		ck_assert_int_le(nl, 64);
		for (int l = 0; l < nl; l++) {
			hs_net_link_stat ls;
			hs_net_link_stats(n, l, &ls, NULL, 0);
			lb[m][l] = ls.bytes;
		}
		hs_net_free(n);
		hs_engine_destroy(cur);
	}
	for (int l = 0; l < nl; l++)
		ck_assert_double_eq_tol(lb[0][l], lb[1][l], 1e-3);
	double step = B / 4, steps = 6, nicbw = 12.5e9;
	double tol = steps * (packets(step) * HDR + 3 * (MTU + HDR)) / nicbw;
	printf("ring all-reduce 4 x %.0f B: ns-3 %.3f us, flow %.3f us (+%.2f%%; derived bound +%.3f us)\n", B, t[0] * 1e6,
	       t[1] * 1e6, (t[0] / t[1] - 1) * 100, tol * 1e6);
	ck_assert_msg(t[0] >= t[1] && t[0] - t[1] <= tol, "ring: ns-3 %.9g s, flow %.9g s, bound %.3g s", t[0], t[1], tol);
	unload(c);
}
END_TEST

static hs_time sent_at;
static void on_sent(void *ctx, uint64_t arg)
{
	(void)ctx, (void)arg;
	sent_at = hs_engine_now(cur);
}

/* The sender hears `sent` when the last packet has left the source (its transmission on the first link ended),
 * before `done`: on one link of bandwidth b and latency L, at (B + p H)/b, and done L later, as the flow model
 * (which has no headers) calls them at B/b and B/b + L. */
START_TEST(sent_before_done)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			     "  fabric:\n"
			     "    kind: explicit\n"
			     "    links: [{from: gpu0, to: gpu1, bandwidth: 10 GB/s, latency: 5 us}]\n");
	const double B = 1e6, bw = 10e9;
	hs_err err;
	hs_err_clear(&err);
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "ns3", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg);
	const hs_route *r = hs_route_get(hs_net_router(n), 0, 1, -1, &err);
	ck_assert_ptr_nonnull(r);
	sent_at = 0;
	ndone = 0;
	hs_net_xfer(n, r, B, on_sent, rec, NULL, 0);
	hs_engine_run(cur, HS_TIME_MAX);
	ck_assert_int_eq(ndone, 1);
	double want = (B + packets(B) * HDR) / bw;
	ck_assert_msg(fabs(sec(sent_at) - want) <= packets(B) * 1e-12, "sent at %.12g s, derived %.12g s", sec(sent_at), want);
	ck_assert_uint_eq(done_at[0] - sent_at, hs_time_from_s(5e-6));
	hs_net_free(n);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

/* Refused, exit 2: a one-way link (acknowledgements return on the reverse path); a second ns3 network while one
 * exists (ns-3's simulator is one per process). */
START_TEST(refusals)
{
	hs_cluster *c = load("cluster:\n"
			     "  groups:\n"
			     "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
			     "  fabric:\n"
			     "    kind: explicit\n"
			     "    links: [{from: gpu0, to: gpu1, bandwidth: 10 GB/s, duplex: false},\n"
			     "            {from: gpu1, to: gpu0, bandwidth: 10 GB/s, duplex: false}]\n");
	hs_err err;
	hs_err_clear(&err);
	cur = hs_engine_create();
	hs_net *n = hs_net_create(c, "ns3", cur, &err);
	ck_assert_msg(n != NULL, "%s", err.msg); /* two one-way links, one each way: a reverse for each */
	hs_engine *e2 = hs_engine_create();
	ck_assert_ptr_null(hs_net_create(c, "ns3", e2, &err));
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "one per process"), "%s", err.msg);
	hs_net_free(n);
	hs_err_clear(&err);
	n = hs_net_create(c, "ns3", e2, &err); /* the first one gone, a new one is fine */
	ck_assert_msg(n != NULL, "%s", err.msg);
	hs_net_free(n);
	hs_engine_destroy(e2);
	hs_engine_destroy(cur);
	unload(c);
	c = load("cluster:\n"
		 "  groups:\n"
		 "    - {nodes: 2, gpus_per_node: 1, gpu: H100-SXM-80GB}\n"
		 "  fabric:\n"
		 "    kind: explicit\n"
		 "    switches: [s0]\n"
		 "    links: [{from: gpu0, to: s0, bandwidth: 10 GB/s}, {from: s0, to: gpu1, bandwidth: 10 GB/s},\n"
		 "            {from: gpu1, to: gpu0, bandwidth: 10 GB/s, duplex: false}]\n");
	cur = hs_engine_create();
	hs_err_clear(&err);
	ck_assert_ptr_null(hs_net_create(c, "ns3", cur, &err));
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "gpu1 -> gpu0 has no reverse link"), "%s", err.msg);
	hs_engine_destroy(cur);
	unload(c);
}
END_TEST

static const char *skip_reason(void)
{
	return hs_net_ns3_built() ? NULL
				  : "test_net_ns3: skipped: this build has no ns-3 model (install libns3-dev: "
				    "tools/deps.sh libns3-dev, then make)";
}
#define HS_CHECK_SKIP skip_reason

static Suite *suite(void)
{
	Suite *s = suite_create("net_ns3");
	TCase *t = tcase_create("net_ns3");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, one_flow_per_link);
	tcase_add_test(t, incast);
	tcase_add_test(t, ecmp_collision);
	tcase_add_test(t, parking_lot);
	tcase_add_test(t, deterministic);
	tcase_add_test(t, ring_allreduce_vs_flow);
	tcase_add_test(t, sent_before_done);
	tcase_add_test(t, refusals);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
