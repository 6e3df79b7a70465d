/* The ns-3 network model: every transfer as packets on ns-3 (3.37, Debian's libns3-dev) point-to-point links
 * with drop-tail queues, on the cluster's own link graph. The only C++ file of hetsim; the C side sees the
 * hs_net_ops table below and the figures of net_ns3.h.
 *
 * Topology. One ns-3 Node per hs_topo vertex (devices, NICs, switches, hosts). Each directed hs_topo link is
 * one PointToPointChannel joining a transmitting PointToPointNetDevice on its `from` node (DataRate = the link's
 * bandwidth, the channel's Delay = its latency, so both directions of a duplex link keep their own figures)
 * and a receiving one on its `to` node. No IP stack: forwarding follows hetsim's own routes (topology/route.h,
 * the ones the flow model uses, ECMP hash and rail choice included), written into each packet as a tag (the
 * subflow and its hop), so the two models see the same paths and differ only in how they share links. A route
 * split over several paths (rails, k ECMP paths) is decomposed into its paths, each a subflow carrying its
 * share of the bytes.
 *
 * Transport: a window-limited sender with per-packet acknowledgements over a lossless network, as RDMA over
 * InfiniBand or RoCE with PFC runs (no drops; the transfers NCCL's net transports post are RDMA writes).
 *   - Data packets carry HS_NS3_MTU = 4096 payload bytes (the RDMA MTU NCCL's IB transport uses by default,
 *     NCCL_IB_MTU, src/transport/net_ib.cc) and 44 header bytes (RoCEv2: IPv4 20 + UDP 8 + IB BTH 12 + ICRC 4,
 *     InfiniBand Architecture Spec. vol. 1 rel. 1.4 annex A17); ns-3's device adds its 2-byte PPP header, so
 *     HS_NS3_HDR = 46 wire bytes per packet. An acknowledgement is 48 bytes (BTH + AETH 4) + 2 = HS_NS3_ACK.
 *     Ethernet's preamble, inter-frame gap and FCS are not modelled.
 *   - Each subflow keeps at most W packets unacknowledged, W = ceil(bottleneck bw x base RTT / packet) + 2,
 *     the base RTT being the path's latencies both ways plus one data and one ack packet's serialisation per
 *     hop: alone on its path a subflow is never held by its window (it sends at its bottleneck's rate), and
 *     a queue holds at most the windows of the subflows crossing it. A window of the bandwidth-delay product is
 *     HPCC's cap on a flow's bytes in flight (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
 *     sec. 3.2). Its cost: queueing anywhere on the path lengthens the RTT the window must cover, so a flow
 *     whose path crosses another's queue runs below its share (docs/network.md gives a measured case). There
 *     is no congestion control: senders
 *     that share a bottleneck fill its queue up to their windows (an incast's queueing delay), which is what
 *     queues of a lossless fabric without ECN do. Queues are sized (2^32 - 1 packets) so that nothing drops;
 *     the drop count is kept and tested to be 0.
 *   - Limits: no congestion control (DCQCN, HPCC, Swift), no PFC pauses (they would not trigger with these
 *     windows' deep queues), FIFO queues only, one priority; the scale-up links are carried as packets too
 *     (without the scale-up fabric's credits, sim/fabric/).
 *   TCP (ns-3's BulkSend over its Internet stack) was not chosen: slow start and loss recovery would make the
 *   comparison with the flow model depend on TCP's tuning, and NCCL's inter-node traffic is RDMA, not TCP.
 *
 * Time. The engine's clock leads; ns-3's never passes it. ns-3 runs on hetsim's picoseconds (Time resolution
 * PS, int64 ticks: 106 days). The model keeps one pending engine event at the time of ns-3's next event (read
 * from ns-3's scheduler, a MapScheduler subclass that exposes PeekNext): that event runs ns-3 up to and
 * including its events at the engine's time (Simulator::Stop(delay) + Run), then hands each transfer that
 * completed or was sent in that instant to its callback, and schedules the next step. A transfer started by an
 * engine event first brings ns-3 to the engine's time (ns-3 has no events before it, since the pending step
 * would have run them), so packets enter ns-3 at the engine's time. Both queues order ties by insertion, so a
 * run is deterministic; nothing random is drawn. Cost: one engine event per distinct ns-3 event time.
 *
 * ns-3's simulator is one per process (a singleton): one ns3 network exists at a time, a second is refused
 * (so a threaded sweep cannot use this model). */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ns3/core-module.h>
#include <ns3/drop-tail-queue.h>
#include <ns3/map-scheduler.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-channel.h>
#include <ns3/point-to-point-net-device.h>

extern "C" {
#include "sim/net/net_impl.h"
#include "sim/net/net_ns3.h"
}

using namespace ns3;

namespace {

/* ns-3's scheduler with its next event in view (Scheduler::PeekNext is public, the simulator's Next is not). */
class PeekScheduler : public MapScheduler
{
  public:
	static PeekScheduler *live;
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("hetsim::PeekScheduler")
					    .SetParent<MapScheduler>()
					    .SetGroupName("hetsim")
					    .AddConstructor<PeekScheduler>();
		return tid;
	}
	PeekScheduler() { live = this; }
	~PeekScheduler() override
	{
		if (live == this)
			live = nullptr;
	}
};
PeekScheduler *PeekScheduler::live = nullptr;

/* What a data packet carries besides its bytes: its subflow, the hop it is on, its payload. */
class HsTag : public Tag
{
  public:
	uint32_t sub = 0, bytes = 0;
	uint16_t hop = 0;
	uint8_t last = 0; /* the subflow's last data packet */
	static TypeId GetTypeId()
	{
		static TypeId tid =
			TypeId("hetsim::HsTag").SetParent<Tag>().SetGroupName("hetsim").AddConstructor<HsTag>();
		return tid;
	}
	TypeId GetInstanceTypeId() const override { return GetTypeId(); }
	uint32_t GetSerializedSize() const override { return 11; }
	void Serialize(TagBuffer b) const override
	{
		b.WriteU32(sub), b.WriteU32(bytes), b.WriteU16(hop), b.WriteU8(last);
	}
	void Deserialize(TagBuffer b) override
	{
		sub = b.ReadU32(), bytes = b.ReadU32(), hop = b.ReadU16(), last = b.ReadU8();
	}
	void Print(std::ostream &os) const override { os << "sub=" << sub << " hop=" << hop; }
};

const uint16_t PROTO = 0x0800; /* ns-3's PPP device carries only IPv4's and IPv6's numbers; no IP stack here */
const uint32_t HDR_OWN = HS_NS3_HDR - 2, ACK_OWN = HS_NS3_ACK - 2; /* the device adds PPP's 2 bytes */

struct Sub {
	int x;                       /* its transfer */
	std::vector<int> path, back; /* links out, links back (ack path, reversed) */
	uint64_t total, queued = 0;  /* payload bytes: all, handed to the first link */
	uint64_t arrived = 0;        /* payload bytes at the destination */
	uint32_t window, inflight = 0;
	hs_time ack_delay = 0;       /* the ack path's latencies and one ack's serialisation per hop */
	uint32_t gen = 0;            /* bumped when the record is freed: an ack names the generation it is for */
	bool last_out = false;
	int next_free = -1;
};

struct Xfer {
	hs_net_done sent, done;
	void *ctx;
	uint64_t arg;
	int subs_left, unsent;
	int next_free = -1;
};

struct Note {
	int x;
	bool done; /* false: sent */
};

} // namespace

struct hs_net_model {
	const hs_topo *t;
	hs_engine *eng;
	std::vector<Ptr<Node>> nodes;
	std::vector<Ptr<PointToPointNetDevice>> dev; /* [link]: its transmitting device */
	std::vector<int> rev;                         /* [link]: the reverse link */
	std::vector<Sub> subs;
	std::vector<Xfer> xs;
	int sub_free = -1, x_free = -1;
	size_t active = 0;
	std::vector<Note> notes; /* completions of this instant, for the step event */
	bool ev_pending = false;
	hs_time ev_t = 0;
	hs_event_id ev{};
	hs_net_ns3_stat st{};

	void recv(Ptr<NetDevice> d, Ptr<const Packet> p, uint16_t proto, const Address &from, const Address &to,
		  NetDevice::PacketType type);
	void tx_end(Ptr<const Packet> p);
	void pump(int s);
	void ack(int s, uint32_t gen);
	void forward(Ptr<Packet> p, int link);
};

static bool g_live = false;

static hs_time ns3_now() { return (hs_time)Simulator::Now().GetTimeStep(); }

/* Run ns-3 up to and including its events at time t (>= its clock): the stop event goes after the events
 * already scheduled at t (ties run in insertion order); what they schedule at t runs in the next step. */
static void advance(hs_time t)
{
	Simulator::Stop(PicoSeconds(t - ns3_now()));
	Simulator::Run();
}

static void step_event(hs_engine *eng, void *ctx, uint64_t arg);

/* Keep one engine event at ns-3's next event time (now, when completions are waiting). */
static void schedule_step(hs_net_model *m)
{
	hs_time t;
	if (!m->notes.empty())
		t = hs_engine_now(m->eng);
	else if (m->active == 0) /* what ns-3 has left are acks of finished subflows: run with the next transfer */
		return;
	else if (PeekScheduler::live && !PeekScheduler::live->IsEmpty())
		t = (hs_time)PeekScheduler::live->PeekNext().key.m_ts;
	else
		return;
	if (m->ev_pending && m->ev_t <= t)
		return;
	if (m->ev_pending)
		hs_engine_cancel(m->eng, m->ev);
	m->ev = hs_engine_at(m->eng, t, step_event, m, 0);
	m->ev_t = t;
	m->ev_pending = true;
}

static void step_event(hs_engine *eng, void *ctx, uint64_t arg)
{
	(void)arg;
	hs_net_model *m = (hs_net_model *)ctx;
	m->ev_pending = false;
	m->st.steps++;
	advance(hs_engine_now(eng));
	/* callbacks may start transfers, whose completions in this instant join the list */
	for (size_t i = 0; i < m->notes.size(); i++) {
		Note n = m->notes[i];
		Xfer &x = m->xs[n.x];
		if (!n.done) {
			x.sent(x.ctx, x.arg);
			continue;
		}
		Xfer c = x;
		m->xs[n.x].next_free = m->x_free;
		m->x_free = n.x;
		m->active--;
		c.done(c.ctx, c.arg);
	}
	m->notes.clear();
	schedule_step(m);
}

void hs_net_model::forward(Ptr<Packet> p, int link)
{
	Ptr<PointToPointNetDevice> d = dev[link];
	if (!d->Send(p, d->GetBroadcast(), PROTO))
		st.drops++;
}

/* Fill subflow s's window from its first link. */
void hs_net_model::pump(int s)
{
	while (subs[s].inflight < subs[s].window && subs[s].queued < subs[s].total) {
		Sub &u = subs[s];
		uint64_t b = u.total - u.queued < HS_NS3_MTU ? u.total - u.queued : HS_NS3_MTU;
		u.queued += b;
		u.inflight++;
		HsTag tag;
		tag.sub = (uint32_t)s, tag.bytes = (uint32_t)b, tag.hop = 0, tag.last = u.queued == u.total;
		Ptr<Packet> p = Create<Packet>((uint32_t)b + HDR_OWN);
		p->AddPacketTag(tag);
		st.data_packets++;
		forward(p, u.path[0]);
	}
}

void hs_net_model::recv(Ptr<NetDevice> d, Ptr<const Packet> p, uint16_t proto, const Address &from,
			const Address &to, NetDevice::PacketType type)
{
	(void)d, (void)proto, (void)from, (void)to, (void)type;
	HsTag tag;
	Ptr<Packet> q = p->Copy();
	q->RemovePacketTag(tag);
	int s = (int)tag.sub;
	const std::vector<int> &path = subs[(size_t)s].path;
	if ((size_t)tag.hop + 1 < path.size()) {
		tag.hop++;
		q->AddPacketTag(tag);
		forward(q, path[tag.hop]);
		return;
	}
	/* at the destination: count it, acknowledge it */
	Sub &u = subs[(size_t)s];
	u.arrived += tag.bytes;
	st.delivered += tag.bytes;
	st.ack_packets++;
	/* an ack matters only while the sender has bytes to send: the others are not simulated (they would keep
	 * ns-3, and so the engine, running after the last transfer is done) */
	if (u.queued < u.total)
		Simulator::Schedule(PicoSeconds(u.ack_delay), &hs_net_model::ack, this, s, u.gen);
	if (u.arrived == u.total) { /* the subflow is over: acks still on their way find another generation */
		if (--xs[(size_t)u.x].subs_left == 0)
			notes.push_back({u.x, true});
		u.gen++;
		u.next_free = sub_free;
		sub_free = s;
	}
}

/* An acknowledgement at the source: the window opens. */
void hs_net_model::ack(int s, uint32_t gen)
{
	if (subs[(size_t)s].gen != gen)
		return;
	subs[(size_t)s].inflight--;
	pump(s);
}

/* The last data packet of a subflow has left its source: with every subflow's out, the transfer is sent. */
void hs_net_model::tx_end(Ptr<const Packet> p)
{
	HsTag tag;
	if (!p->PeekPacketTag(tag) || tag.hop != 0 || !tag.last)
		return;
	Sub &u = subs[tag.sub];
	if (u.last_out)
		return;
	u.last_out = true;
	Xfer &x = xs[u.x];
	if (--x.unsent == 0 && x.sent)
		notes.push_back({u.x, false});
}

static void st_queue(hs_net_model *m, uint32_t old, uint32_t now)
{
	(void)old;
	if (now > m->st.max_queue)
		m->st.max_queue = now;
}

static hs_net_model *create(const hs_topo *t, hs_engine *eng, hs_err *err)
{
	if (g_live) {
		hs_err_set(err, HS_EINPUT,
			   "network model 'ns3': ns-3's simulator is one per process and another ns3 network is running "
			   "(one at a time; a threaded sweep cannot use it)");
		return nullptr;
	}
	int nlk = hs_topo_nlinks(t), nv = hs_topo_nvertices(t);
	std::vector<int> rev((size_t)nlk, -1);
	for (int l = 0; l < nlk; l++) {
		const hs_link *L = hs_topo_link(t, l);
		int first, count;
		hs_topo_out(t, L->to, &first, &count);
		for (int i = first; i < first + count && rev[l] < 0; i++) {
			int k = hs_topo_out_link(t, i);
			if (hs_topo_link(t, k)->to == L->from)
				rev[l] = k;
		}
		if (rev[l] < 0) {
			char a[64], b[64];
			hs_err_set(err, HS_EINPUT,
				   "network model 'ns3': link %s -> %s has no reverse link (the model returns "
				   "acknowledgements on the reverse path: expected duplex links)",
				   hs_topo_vname(t, L->from, a, sizeof a), hs_topo_vname(t, L->to, b, sizeof b));
			return nullptr;
		}
	}
	static bool resolution_set = false;
	if (!resolution_set) { /* hetsim's unit; ns-3 converts the Time values it already holds */
		Time::SetResolution(Time::PS);
		resolution_set = true;
	}
	ObjectFactory f;
	f.SetTypeId(PeekScheduler::GetTypeId());
	Simulator::SetScheduler(f);
	g_live = true;
	hs_net_model *m = new hs_net_model();
	m->t = t;
	m->eng = eng;
	m->rev = rev;
	for (int v = 0; v < nv; v++) {
		Ptr<Node> n = CreateObject<Node>();
		n->RegisterProtocolHandler(MakeCallback(&hs_net_model::recv, m), PROTO, Ptr<NetDevice>(), false);
		m->nodes.push_back(n);
	}
	for (int l = 0; l < nlk; l++) {
		const hs_link *L = hs_topo_link(t, l);
		Ptr<PointToPointChannel> ch = CreateObject<PointToPointChannel>();
		ch->SetAttribute("Delay", TimeValue(PicoSeconds(L->lat)));
		Ptr<PointToPointNetDevice> a = CreateObject<PointToPointNetDevice>(),
					   b = CreateObject<PointToPointNetDevice>();
		/* bytes per ps to bits per s, rounded to ns-3's whole bits per second */
		DataRate rate((uint64_t)llround(L->bw * 8e12));
		a->SetDataRate(rate), b->SetDataRate(rate);
		a->SetAddress(Mac48Address::Allocate()), b->SetAddress(Mac48Address::Allocate());
		Ptr<DropTailQueue<Packet>> qa = CreateObject<DropTailQueue<Packet>>(),
					   qb = CreateObject<DropTailQueue<Packet>>();
		qa->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, UINT32_MAX));
		qb->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, UINT32_MAX));
		qa->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&st_queue, m));
		a->SetQueue(qa), b->SetQueue(qb);
		m->nodes[(size_t)L->from]->AddDevice(a);
		m->nodes[(size_t)L->to]->AddDevice(b);
		a->Attach(ch), b->Attach(ch);
		a->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&hs_net_model::tx_end, m));
		m->dev.push_back(a);
	}
	return m;
}

static void destroy(hs_net_model *m)
{
	if (!m)
		return;
	Simulator::Destroy(); /* disposes of the nodes, devices and channels (ns-3's node and channel lists) */
	delete m;
	g_live = false;
}

/* The paths of route r, each with its share of the bytes: a flow decomposition of its links (a DAG of shortest
 * paths): from the source, follow the lowest-numbered link with share left, take the path's least share. */
static int decompose(const hs_topo *t, const hs_route *r, std::vector<std::vector<int>> &paths,
		     std::vector<double> &share)
{
	std::vector<double> left(r->coef, r->coef + r->nl);
	double out = 1;
	while (out > 1e-9) {
		std::vector<int> p;
		int v = r->src;
		double s = out;
		while (v != r->dst) {
			int pick = -1;
			for (int i = 0; i < r->nl; i++)
				if (left[(size_t)i] > 1e-9 && hs_topo_link(t, r->link[i])->from == v) {
					pick = i;
					break;
				}
			if (pick < 0 || p.size() > (size_t)r->nl)
				return -1;
			p.push_back(pick);
			s = left[(size_t)pick] < s ? left[(size_t)pick] : s;
			v = hs_topo_link(t, r->link[pick])->to;
		}
		for (int i : p)
			left[(size_t)i] -= s;
		out -= s;
		std::vector<int> links;
		for (int i : p)
			links.push_back(r->link[i]);
		paths.push_back(links);
		share.push_back(s);
	}
	return 0;
}

static void start(hs_net_model *m, const hs_route *r, double bytes, hs_net_done sent, hs_net_done done, void *ctx,
		  uint64_t arg)
{
	advance(hs_engine_now(m->eng)); /* packets enter at the engine's time */
	std::vector<std::vector<int>> paths;
	std::vector<double> share;
	if (decompose(m->t, r, paths, share)) {
		/* a route is a union of src -> dst paths (topology/route.h): anything else is a router bug */
		fprintf(stderr, "hetsim: internal error: ns3: route %d -> %d is not a set of paths\n", r->src, r->dst);
		abort();
	}
	int xi;
	if (m->x_free >= 0) {
		xi = m->x_free;
		m->x_free = m->xs[(size_t)xi].next_free;
	} else {
		xi = (int)m->xs.size();
		m->xs.emplace_back();
	}
	/* whole bytes: a fractional size is rounded up */
	uint64_t B = (uint64_t)ceil(bytes), given = 0;
	m->xs[(size_t)xi] = Xfer{sent, done, ctx, arg, 0, 0, -1};
	m->active++;
	for (size_t k = 0; k < paths.size(); k++) {
		uint64_t b = k + 1 == paths.size() ? B - given : (uint64_t)floor((double)B * share[k]);
		if (b > B - given)
			b = B - given;
		given += b;
		if (b == 0)
			continue;
		int s;
		if (m->sub_free >= 0) {
			s = m->sub_free;
			m->sub_free = m->subs[(size_t)s].next_free;
		} else {
			s = (int)m->subs.size();
			m->subs.emplace_back();
		}
		Sub &u = m->subs[(size_t)s];
		uint32_t gen = u.gen;
		u = Sub();
		u.gen = gen;
		u.x = xi;
		u.path = paths[k];
		for (size_t i = u.path.size(); i-- > 0;)
			u.back.push_back(m->rev[(size_t)u.path[i]]);
		u.total = b;
		/* the window: bottleneck bandwidth x base RTT in packets, + 2 */
		double bw = 1e300, rtt = 0;
		for (int l : u.path) {
			const hs_link *L = hs_topo_link(m->t, l);
			bw = L->bw < bw ? L->bw : bw;
			rtt += (double)L->lat + (HS_NS3_MTU + HS_NS3_HDR) / L->bw;
		}
		double back = 0;
		for (int l : u.back) {
			const hs_link *L = hs_topo_link(m->t, l);
			back += (double)L->lat + HS_NS3_ACK / L->bw;
		}
		u.ack_delay = (hs_time)llround(back);
		rtt += back;
		u.window = (uint32_t)ceil(bw * rtt / (HS_NS3_MTU + HS_NS3_HDR)) + 2;
		m->xs[(size_t)xi].subs_left++;
		m->xs[(size_t)xi].unsent++;
		m->pump(s);
	}
	if (m->xs[(size_t)xi].subs_left == 0) /* nothing to carry (bytes > 0 rounds to >= 1: not reached) */
		m->notes.push_back({xi, true});
	schedule_step(m);
}

static size_t active(const hs_net_model *m) { return m->active; }

extern "C" {

const hs_net_ops hs_net_ns3 = {"ns3", create, destroy, start, active, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

int hs_net_ns3_built(void) { return 1; }

int hs_net_ns3_stats(const hs_net *n, hs_net_ns3_stat *out)
{
	if (!n || n->ops != &hs_net_ns3)
		return -1;
	*out = n->m->st;
	out->ns3_events = Simulator::GetEventCount();
	return 0;
}
}
