/* Route-aware bandwidth of a ring's inter-node edges, for the closed forms (sim/coll_impl.h).
 *
 * The closed forms give each node's ring edge the node's NIC share. On a torus, a dragonfly, an oversubscribed
 * Clos or between WAN sites several edges of one ring meet on a link and share it. Here every directed
 * inter-node edge of the ring (nodes in the order they first appear in the rank list, each entered once, as
 * NCCL's rings enter each node once) is split into channels, one per NIC the node's ranks use, channel c
 * leaving by NIC c and arriving at NIC c of the next node (rail-aligned, as topology/route.c routes). Each
 * channel is routed NIC -> switch -> ... -> switch -> NIC on the shortest paths of the built topology, spread
 * evenly over equal next hops at every switch (ideal ECMP, so the answer does not depend on a hash: with one
 * hashed path per channel a full-bisection fat-tree would show collisions no adaptive fabric has). A link's
 * load is the number of channels crossing it (fractions where they are spread); a channel's rate is
 * min(its NIC share, min over the links it crosses of bandwidth / load), an edge runs at the sum of its
 * channels (equal shares: channels x the slowest channel), and the ring at its slowest edge.
 *
 * Clos fabrics without oversubscription (fat-tree, rail-optimised, multi-plane) are not routed: a leaf's
 * uplinks carry all its NICs' bandwidth and each NIC starts at most one channel, so with even spreading no
 * link gets below a NIC's rate and the answer is the NIC share (tests/unit/test_coll.c checks that routing
 * them gives the same figure). That keeps `hetsim sweep` on those fabrics from building the link graph.
 *
 * Cost: the link graph is built once per cluster (kept with it, hs_cluster_memo); per rank set one
 * breadth-first search over the fabric's switches per distinct destination switch, and one spread per channel.
 * The last few rank sets' answers are cached, since hs_coll_time is called once per message size. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc.h"
#include "sim/coll_impl.h"
#include "topology/topo.h"

#define MEMO_SETS 8 /* rank sets remembered: a step's TP/DP/PP/EP/CP groups fit */

typedef struct rset {
	int n;
	int *ranks;
	double bw;
} rset;

typedef struct netmemo {
	hs_topo *t;            /* NULL when the topology does not build: callers keep the NIC share */
	int nsw;               /* fabric switches (node -1) */
	int *swi;              /* [nv]: index of a fabric switch, -1 for other vertices */
	int *out_off, *out;    /* CSR over fabric switches: links to other fabric switches */
	int *in_off, *in;      /* the same by destination */
	int *nic_sw;           /* [nv]: for a NIC, the index of its fabric switch (-1: none) */
	int *nic_up, *nic_dn;  /* [nv]: for a NIC, its links NIC -> switch and switch -> NIC */
	pthread_mutex_t mu;    /* guards sets */
	rset sets[MEMO_SETS];
	int next;
} netmemo;

static void memo_free(void *p)
{
	netmemo *m = p;
	hs_topo_free(m->t);
	free(m->swi);
	free(m->out_off);
	free(m->out);
	free(m->in_off);
	free(m->in);
	free(m->nic_sw);
	free(m->nic_up);
	free(m->nic_dn);
	for (int i = 0; i < MEMO_SETS; i++)
		free(m->sets[i].ranks);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

static int fabric_switch(const hs_topo *t, int v) { return hs_topo_vkind(t, v) == HS_V_SWITCH && hs_topo_vnode(t, v) < 0; }

static netmemo *memo_build(const hs_cluster *c)
{
	netmemo *m = hs_xcalloc(1, sizeof *m);
	pthread_mutex_init(&m->mu, NULL);
	hs_err err = {0};
	m->t = hs_topo_build(c, &err);
	if (!m->t)
		return m;
	const hs_topo *t = m->t;
	int nv = hs_topo_nvertices(t), nl = hs_topo_nlinks(t);
	m->swi = hs_xmalloc((size_t)nv * sizeof *m->swi);
	m->nic_sw = hs_xmalloc((size_t)nv * sizeof *m->nic_sw);
	m->nic_up = hs_xmalloc((size_t)nv * sizeof *m->nic_up);
	m->nic_dn = hs_xmalloc((size_t)nv * sizeof *m->nic_dn);
	for (int v = 0; v < nv; v++) {
		m->swi[v] = fabric_switch(t, v) ? m->nsw++ : -1;
		m->nic_sw[v] = m->nic_up[v] = m->nic_dn[v] = -1;
	}
	m->out_off = hs_xcalloc((size_t)m->nsw + 1, sizeof *m->out_off);
	m->in_off = hs_xcalloc((size_t)m->nsw + 1, sizeof *m->in_off);
	int nss = 0;
	for (int l = 0; l < nl; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (m->swi[L->from] >= 0 && m->swi[L->to] >= 0) {
			m->out_off[m->swi[L->from] + 1]++;
			m->in_off[m->swi[L->to] + 1]++;
			nss++;
		} else if (hs_topo_vkind(t, L->from) == HS_V_NIC && m->swi[L->to] >= 0) {
			m->nic_up[L->from] = l;
			m->nic_sw[L->from] = m->swi[L->to];
		} else if (hs_topo_vkind(t, L->to) == HS_V_NIC && m->swi[L->from] >= 0)
			m->nic_dn[L->to] = l;
	}
	for (int s = 0; s < m->nsw; s++) {
		m->out_off[s + 1] += m->out_off[s];
		m->in_off[s + 1] += m->in_off[s];
	}
	m->out = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->out);
	m->in = hs_xmalloc((size_t)(nss ? nss : 1) * sizeof *m->in);
	int *po = hs_xmalloc((size_t)(m->nsw ? m->nsw : 1) * sizeof *po);
	int *pi = hs_xmalloc((size_t)(m->nsw ? m->nsw : 1) * sizeof *pi);
	memcpy(po, m->out_off, (size_t)m->nsw * sizeof *po);
	memcpy(pi, m->in_off, (size_t)m->nsw * sizeof *pi);
	for (int l = 0; l < nl; l++) {
		const hs_link *L = hs_topo_link(t, l);
		if (m->swi[L->from] >= 0 && m->swi[L->to] >= 0) {
			m->out[po[m->swi[L->from]]++] = l;
			m->in[pi[m->swi[L->to]]++] = l;
		}
	}
	free(po);
	free(pi);
	return m;
}

static netmemo *memo_get(const hs_cluster *c)
{
	netmemo *m = hs_cluster_memo(c);
	return m ? m : hs_cluster_memo_set(c, memo_build(c), memo_free);
}

/* One channel of a ring edge: NIC to NIC. */
typedef struct chan {
	int src, dst; /* NIC vertices */
	int edge;     /* ring edge it belongs to */
	double cap;   /* its share of the sending node's NICs, bytes/s */
	int first, count; /* its crossed links in the crossing list */
	int dsw, seq; /* destination switch (the sort key) and creation order (ties) */
} chan;

typedef struct crossing {
	int link;
	double frac;
} crossing;

typedef struct scratch {
	int *dist;      /* [nsw] hops to the current destination switch */
	double *frac;   /* [nsw] share of the current channel at a switch */
	int *layer, *next;
	crossing *x;
	size_t xcap;
	int nx;
} scratch;

static void cross(scratch *s, double *load, int link, double f)
{
	hs_xgrow(&s->x, &s->xcap, (size_t)s->nx + 1, sizeof *s->x);
	s->x[s->nx++] = (crossing){link, f};
	load[link] += f;
}

static void bfs_to(const netmemo *m, const hs_topo *t, scratch *s, int dst)
{
	for (int i = 0; i < m->nsw; i++)
		s->dist[i] = -1;
	int h = 0, q = 0;
	s->dist[dst] = 0;
	s->layer[q++] = dst;
	while (h < q) {
		int u = s->layer[h++];
		for (int i = m->in_off[u]; i < m->in_off[u + 1]; i++) {
			int w = m->swi[hs_topo_link(t, m->in[i])->from];
			if (s->dist[w] < 0) {
				s->dist[w] = s->dist[u] + 1;
				s->layer[q++] = w;
			}
		}
	}
}

/* Spread one unit from switch a to the destination switch of s->dist, layer by layer, evenly over every next
 * hop one step closer; records each crossed link with its share. -1 if a cannot reach it. */
static int spread(const netmemo *m, const hs_topo *t, scratch *s, double *load, int a)
{
	if (s->dist[a] < 0)
		return -1;
	int nl = 1, nn;
	s->layer[0] = a;
	s->frac[a] = 1;
	while (s->dist[s->layer[0]] > 0) {
		nn = 0;
		for (int i = 0; i < nl; i++) {
			int u = s->layer[i], k = 0;
			for (int j = m->out_off[u]; j < m->out_off[u + 1]; j++)
				k += s->dist[m->swi[hs_topo_link(t, m->out[j])->to]] == s->dist[u] - 1;
			double f = s->frac[u] / k;
			s->frac[u] = 0;
			for (int j = m->out_off[u]; j < m->out_off[u + 1]; j++) {
				int w = m->swi[hs_topo_link(t, m->out[j])->to];
				if (s->dist[w] != s->dist[u] - 1)
					continue;
				if (s->frac[w] == 0)
					s->next[nn++] = w;
				s->frac[w] += f;
				cross(s, load, m->out[j], f);
			}
		}
		int *tmp = s->layer;
		s->layer = s->next;
		s->next = tmp;
		nl = nn;
	}
	s->frac[s->layer[0]] = 0; /* the destination */
	return 0;
}

typedef struct nfirst {
	int node, first, k;
} nfirst;

static int cmp_node(const void *a, const void *b)
{
	const nfirst *x = a, *y = b;
	if (x->node != y->node)
		return (x->node > y->node) - (x->node < y->node);
	return (x->first > y->first) - (x->first < y->first);
}

static int cmp_first(const void *a, const void *b)
{
	const nfirst *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

static int cmp_dsw(const void *a, const void *b)
{
	const chan *x = a, *y = b;
	if (x->dsw != y->dsw)
		return (x->dsw > y->dsw) - (x->dsw < y->dsw);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Bytes/s of the ring's slowest inter-node edge, or -1 when the group spans one node or the fabric does not
 * join two of its nodes' NICs through switches. */
static double compute(const hs_cluster *c, const netmemo *m, const int *ranks, int n)
{
	const hs_topo *t = m->t;
	/* nodes in ring order (first appearance) with their rank counts */
	nfirst *nd = hs_xmalloc((size_t)n * sizeof *nd);
	for (int i = 0; i < n; i++)
		nd[i] = (nfirst){hs_cluster_node_of(c, ranks[i]), i, 1};
	qsort(nd, (size_t)n, sizeof *nd, cmp_node);
	int N = 0;
	for (int i = 0; i < n; i++) {
		if (N && nd[N - 1].node == nd[i].node)
			nd[N - 1].k++;
		else
			nd[N++] = nd[i];
	}
	qsort(nd, (size_t)N, sizeof *nd, cmp_first);
	if (N < 2) {
		free(nd);
		return -1;
	}
	/* channels: each node's NIC share (as hs_coll_grp_init counts it) over the NICs that share needs */
	chan *ch = NULL;
	size_t chcap = 0;
	int nch = 0, bad = 0;
	double *edge_min = hs_xmalloc((size_t)N * sizeof *edge_min);
	int *edge_m = hs_xmalloc((size_t)N * sizeof *edge_m);
	for (int e = 0; e < N; e++) {
		int u = nd[e].node, v = nd[(e + 1) % N].node;
		const hs_node_group *gu = hs_cluster_group(c, hs_cluster_group_of(c, ranks[nd[e].first]));
		double total = gu->nic_bw * gu->nics_per_node, per_gpu = total / gu->gpus_per_node;
		double avail = nd[e].k * per_gpu < total ? nd[e].k * per_gpu : total;
		int nu = hs_topo_nnics(t, u), nv = hs_topo_nnics(t, v);
		int mch = (int)ceil(avail / gu->nic_bw - 1e-9);
		mch = mch < 1 ? 1 : mch > nu ? nu : mch;
		edge_m[e] = mch;
		edge_min[e] = INFINITY;
		bad |= nu == 0 || nv == 0;
		for (int k = 0; k < mch && !bad; k++) {
			int a = hs_topo_nic(t, u, k % nu), b = hs_topo_nic(t, v, k % nv);
			bad |= m->nic_sw[a] < 0 || m->nic_sw[b] < 0 || m->nic_dn[b] < 0;
			hs_xgrow(&ch, &chcap, (size_t)nch + 1, sizeof *ch);
			ch[nch] = (chan){a, b, e, avail / mch, 0, 0, bad ? -1 : m->nic_sw[b], nch};
			nch++;
		}
	}
	double bw = -1;
	int nl = hs_topo_nlinks(t), ns = m->nsw ? m->nsw : 1;
	double *load = hs_xcalloc((size_t)nl, sizeof *load);
	scratch s = {0};
	s.dist = hs_xmalloc((size_t)ns * sizeof *s.dist);
	s.frac = hs_xcalloc((size_t)ns, sizeof *s.frac);
	s.layer = hs_xmalloc((size_t)ns * sizeof *s.layer);
	s.next = hs_xmalloc((size_t)ns * sizeof *s.next);
	if (!bad) {
		/* loads: channels grouped by destination switch, one search per switch */
		qsort(ch, (size_t)nch, sizeof *ch, cmp_dsw);
		for (int i = 0; i < nch && !bad; i++) {
			chan *x = &ch[i];
			if (i == 0 || ch[i - 1].dsw != x->dsw)
				bfs_to(m, t, &s, x->dsw);
			x->first = s.nx;
			cross(&s, load, m->nic_up[x->src], 1);
			bad |= spread(m, t, &s, load, m->nic_sw[x->src]) < 0;
			cross(&s, load, m->nic_dn[x->dst], 1);
			x->count = s.nx - x->first;
		}
	}
	if (!bad) {
		for (int i = 0; i < nch; i++) {
			double r = ch[i].cap;
			for (int j = ch[i].first; j < ch[i].first + ch[i].count; j++) {
				int l = s.x[j].link;
				double b = hs_rate_to_Bps(hs_topo_link(t, l)->bw) / load[l];
				if (b < r)
					r = b;
			}
			if (r < edge_min[ch[i].edge])
				edge_min[ch[i].edge] = r;
		}
		bw = INFINITY;
		for (int e = 0; e < N; e++)
			if (edge_m[e] * edge_min[e] < bw)
				bw = edge_m[e] * edge_min[e];
	}
	free(s.dist);
	free(s.frac);
	free(s.layer);
	free(s.next);
	free(s.x);
	free(load);
	free(ch);
	free(edge_min);
	free(edge_m);
	free(nd);
	return bw;
}

/* Clos fabrics at full bisection: the NIC share holds (the header's argument), no routing needed. */
static int full_bisection(const hs_fabric_spec *f)
{
	return f->oversubscription <= 1 &&
	       (!strcmp(f->kind, "fat-tree") || !strcmp(f->kind, "rail-optimized") || !strcmp(f->kind, "multi-plane"));
}

double hs_coll_ring_net_bw(const hs_cluster *c, const int *ranks, int n, int always)
{
	const hs_fabric_spec *f = hs_cluster_fabric(c);
	if (n < 2 || !strcmp(f->kind, "explicit") || !strcmp(f->kind, "none") || (!always && full_bisection(f)))
		return -1;
	netmemo *m = memo_get(c);
	if (!m->t)
		return -1;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MEMO_SETS; i++)
		if (m->sets[i].n == n && !memcmp(m->sets[i].ranks, ranks, (size_t)n * sizeof *ranks)) {
			double bw = m->sets[i].bw;
			pthread_mutex_unlock(&m->mu);
			return bw;
		}
	pthread_mutex_unlock(&m->mu);
	double bw = compute(c, m, ranks, n);
	pthread_mutex_lock(&m->mu);
	rset *r = &m->sets[m->next];
	m->next = (m->next + 1) % MEMO_SETS;
	r->ranks = hs_xrealloc(r->ranks, (size_t)n * sizeof *r->ranks);
	memcpy(r->ranks, ranks, (size_t)n * sizeof *ranks);
	r->n = n;
	r->bw = bw;
	pthread_mutex_unlock(&m->mu);
	return bw;
}
