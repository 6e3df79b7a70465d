/* Fabric scenarios: parse (every key checked), run each scheme, print the comparison (text or JSON). */
#include "sim/fabric/fabric_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/fabric/fabric_exp.h"
#include "sim/base/sizes.h"

const char *const hs_fabric_queue_names[] = {"rxbuf_bytes", "ingress", "hbm_max_partition", "atomic",
					     "response",    "admit",   "fwd_path_max",	    NULL};

/* ---- parsing helpers ---- */

/* A positive quantity: a zero rate or service time would never serve, so it is an error, not a default. */
static int positive(const hs_ynode *m, const char *path, const char *key, enum hs_unit u, double def, double *out,
		    hs_err *err)
{
	if (hs_cfg_num(m, path, key, u, 0, 1e300, def, 0, out, err))
		return -1;
	if (*out <= 0)
		return hs_cfg_err(hs_yaml_get(m, key), err, path, key,
				  "must be greater than zero (a zero rate or service time never serves; expected %s)",
				  hs_units_expect(u));
	return 0;
}

static int bytes32(const hs_ynode *m, const char *path, const char *key, double lo, double def, uint32_t *out,
		   hs_err *err)
{
	double v;
	if (hs_cfg_num(m, path, key, HS_U_BYTES, lo, HS_GiB, def, 0, &v, err))
		return -1;
	if (v != floor(v))
		return hs_cfg_err(hs_yaml_get(m, key), err, path, key, "not a whole number of bytes");
	*out = (uint32_t)v;
	return 0;
}

static int submap(const hs_ynode *m, const char *path, const char *key, const char *const *known, char *sub,
		  size_t sublen, const hs_ynode **out, hs_err *err)
{
	snprintf(sub, sublen, "%s%s%s", path, *path ? "." : "", key);
	*out = hs_yaml_get(m, key);
	if (*out && hs_cfg_known(*out, sub, known, "a mapping", err))
		return -1;
	return 0;
}

static void fmt_size(char *b, size_t n, uint64_t v)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(b, n, "%lluMiB", (unsigned long long)(v >> 20));
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(b, n, "%lluKiB", (unsigned long long)(v >> 10));
	else
		snprintf(b, n, "%lluB", (unsigned long long)v);
}

int hs_fabric_parse_params(const hs_ynode *m, const char *path, hs_fabric_params *p, hs_err *err)
{
	static const char *const known[] = {"paths",	     "spray",	       "source_bandwidth", "path_bandwidth",
					    "path_latency",  "mtu",	       "header",	   "receive_buffer",
					    "credit_latency", "hbm",	       "atomic",	   "response",
					    "admission",	     NULL};
	static const char *const khbm[] = {"partitions", "interleave", "bandwidth", "latency", "queue_depth", NULL};
	static const char *const katom[] = {"service_time", "queue_depth", NULL};
	static const char *const kresp[] = {"bandwidth", NULL};
	static const char *const spray[] = {"round_robin", "random", NULL};
	static const char *const admission[] = {"transmit", "issue", NULL};
	if (!m)
		return 0;
	if (hs_cfg_known(m, path, known, "a mapping", err))
		return -1;
	int64_t v;
	double d;
	if (hs_cfg_int(m, path, "paths", 1, 256, p->paths, 0, &v, err))
		return -1;
	p->paths = (int)v;
	if (hs_cfg_enum(m, path, "spray", spray, 0, &p->spray_random, err))
		return -1;
	if (hs_cfg_enum(m, path, "admission", admission, 0, &p->admit_at_issue, err))
		return -1;
	if (positive(m, path, "source_bandwidth", HS_U_BW, hs_rate_to_Bps(p->src_rate), &d, err))
		return -1;
	p->src_rate = hs_rate_from_Bps(d);
	if (positive(m, path, "path_bandwidth", HS_U_BW, hs_rate_to_Bps(p->path_rate), &d, err))
		return -1;
	p->path_rate = hs_rate_from_Bps(d);
	if (hs_cfg_num(m, path, "path_latency", HS_U_TIME, 0, 1, hs_time_to_s(p->path_latency), 0, &d, err))
		return -1;
	p->path_latency = hs_time_from_s(d);
	if (bytes32(m, path, "mtu", 1, p->mtu, &p->mtu, err) ||
	    bytes32(m, path, "header", 0, p->header, &p->header, err) ||
	    bytes32(m, path, "receive_buffer", 1, p->rxbuf, &p->rxbuf, err))
		return -1;
	if (p->rxbuf < p->mtu + p->header)
		return hs_cfg_err(hs_yaml_get(m, "receive_buffer"), err, path, "receive_buffer",
				  "%u B cannot hold one packet of %u B (expected at least mtu + header)", p->rxbuf,
				  p->mtu + p->header);
	if (hs_cfg_num(m, path, "credit_latency", HS_U_TIME, 0, 1, hs_time_to_s(p->credit_latency), 0, &d, err))
		return -1;
	p->credit_latency = hs_time_from_s(d);
	char sub[128];
	const hs_ynode *h;
	if (submap(m, path, "hbm", khbm, sub, sizeof sub, &h, err))
		return -1;
	if (h) {
		if (hs_cfg_int(h, sub, "partitions", 1, 4096, p->partitions, 0, &v, err))
			return -1;
		p->partitions = (int)v;
		if (bytes32(h, sub, "interleave", 1, p->interleave, &p->interleave, err))
			return -1;
		if (positive(h, sub, "bandwidth", HS_U_BW, hs_rate_to_Bps(p->hbm_rate), &d, err))
			return -1;
		p->hbm_rate = hs_rate_from_Bps(d);
		if (hs_cfg_num(h, sub, "latency", HS_U_TIME, 0, 1, hs_time_to_s(p->hbm_latency), 0, &d, err))
			return -1;
		p->hbm_latency = hs_time_from_s(d);
		if (hs_cfg_int(h, sub, "queue_depth", 1, 1 << 20, p->hbm_depth, 0, &v, err))
			return -1;
		p->hbm_depth = (uint32_t)v;
	}
	if (submap(m, path, "atomic", katom, sub, sizeof sub, &h, err))
		return -1;
	if (h) {
		if (positive(h, sub, "service_time", HS_U_TIME, hs_time_to_s(p->atomic_time), &d, err))
			return -1;
		p->atomic_time = hs_time_from_s(d);
		if (!p->atomic_time)
			return hs_cfg_err(hs_yaml_get(h, "service_time"), err, sub, "service_time",
					  "rounds to 0 ps (expected at least 1 ps)");
		if (hs_cfg_int(h, sub, "queue_depth", 1, 1 << 20, p->atomic_depth, 0, &v, err))
			return -1;
		p->atomic_depth = (uint32_t)v;
	}
	if (submap(m, path, "response", kresp, sub, sizeof sub, &h, err))
		return -1;
	if (h) {
		if (positive(h, sub, "bandwidth", HS_U_BW, hs_rate_to_Bps(p->resp_rate), &d, err))
			return -1;
		p->resp_rate = hs_rate_from_Bps(d);
	}
	return 0;
}

int hs_fabric_parse_credits(const hs_ynode *m, const char *path, hs_credit_cfg *c, hs_err *err)
{
	static const char *const known[] = {"cell", "bytes", "hbm", "atomic_bytes", "resp", "atomic", "split", NULL};
	static const char *const split[] = {"shared", "per_sender", NULL};
	if (!m)
		return 0;
	if (hs_cfg_known(m, path, known, "a mapping", err))
		return -1;
	double d;
	int64_t *dst[] = {&c->cell, &c->bytes, &c->hbm, &c->atomic_bytes, &c->resp};
	for (int i = 0; i < 5; i++) {
		if (hs_cfg_num(m, path, known[i], HS_U_BYTES, 1, 1e15, 0, 0, &d, err))
			return -1;
		*dst[i] = (int64_t)d;
	}
	int64_t v;
	if (hs_cfg_int(m, path, "atomic", 1, 1 << 30, 0, 0, &v, err))
		return -1;
	c->atomic = v;
	return hs_cfg_enum(m, path, "split", split, 0, &c->per_sender, err);
}

static int parse_op(const hs_ynode *n, const char *path, const char *gname, hs_traffic_class *c, hs_err *err)
{
	static const char *const known[] = {"op", "size", "weight", "count", "hot", "name", NULL};
	static const char *const khot[] = {"fraction", "bytes", NULL};
	if (hs_cfg_known(n, path, known, "a mapping with op and size", err))
		return -1;
	if (hs_cfg_enum(n, path, "op", hs_fabric_op_names, -1, &c->kind, err))
		return -1;
	if (c->kind < 0)
		return hs_cfg_err(n, err, path, "op", "missing required key (expected one of: read, write, atomic, notify)");
	double d;
	if (hs_cfg_num(n, path, "size", HS_U_BYTES, 1, HS_GiB, 0, 1, &d, err))
		return -1;
	c->size = (uint32_t)d;
	if (hs_cfg_num(n, path, "weight", HS_U_COUNT, 0, 1e9, 1, 0, &c->weight, err))
		return -1;
	if (c->weight <= 0)
		return hs_cfg_err(hs_yaml_get(n, "weight"), err, path, "weight", "must be greater than zero");
	int64_t cnt;
	if (hs_cfg_int(n, path, "count", 1, 1 << 20, 1, 0, &cnt, err))
		return -1;
	c->count = (uint32_t)cnt;
	char sub[160];
	const hs_ynode *h;
	if (submap(n, path, "hot", khot, sub, sizeof sub, &h, err))
		return -1;
	if (h) {
		if (hs_cfg_num(h, sub, "fraction", HS_U_COUNT, 0, 1, 1, 0, &c->hot_frac, err) ||
		    hs_cfg_num(h, sub, "bytes", HS_U_BYTES, 1, 1e18, 0, 1, &d, err))
			return -1;
		c->hot_bytes = (uint64_t)d;
	}
	const char *nm;
	if (hs_cfg_str(n, path, "name", NULL, 0, &nm, err))
		return -1;
	char sz[32];
	fmt_size(sz, sizeof sz, c->size);
	if (nm)
		snprintf(c->name, sizeof c->name, "%s", nm);
	else
		snprintf(c->name, sizeof c->name, "%s.%s-%s", gname, hs_fabric_op_names[c->kind], sz);
	return 0;
}

static int parse_group(const hs_ynode *n, const char *path, int idx, hs_traffic *t, hs_err *err)
{
	static const char *const known[] = {"name", "sources", "arrival", "rate", "window", "gap", "ops", NULL};
	hs_traffic_group *g = &t->g[t->ngroups];
	if (hs_cfg_known(n, path, known, "a mapping (a traffic group)", err))
		return -1;
	const char *nm;
	if (hs_cfg_str(n, path, "name", NULL, 0, &nm, err))
		return -1;
	if (nm)
		snprintf(g->name, sizeof g->name, "%s", nm);
	else
		snprintf(g->name, sizeof g->name, "g%d", idx);
	int64_t v;
	if (hs_cfg_int(n, path, "sources", 1, 4096, 1, 0, &v, err))
		return -1;
	g->nsrc = (int)v;
	g->first_src = hs_traffic_sources(t);
	if (hs_cfg_enum(n, path, "arrival", hs_arrival_names, HS_ARR_POISSON, &g->arrival, err))
		return -1;
	const hs_ynode *rate = hs_yaml_get(n, "rate"), *win = hs_yaml_get(n, "window"), *gap = hs_yaml_get(n, "gap");
	if (gap && g->arrival != HS_ARR_STEPS)
		return hs_cfg_err(gap, err, path, "gap", "only for bulk-synchronous arrival (arrival: steps)");
	if (g->arrival == HS_ARR_STEPS) {
		if (rate || win)
			return hs_cfg_err(rate ? rate : win, err, path, rate ? "rate" : "window",
					  "not for arrival: steps (a step starts when the previous one has completed; "
					  "set gap and each operation's count)");
		double d;
		if (hs_cfg_num(n, path, "gap", HS_U_TIME, 0, 1, 0, 0, &d, err))
			return -1;
		g->gap = hs_time_from_s(d);
	} else if (g->arrival == HS_ARR_CLOSED) {
		if (rate)
			return hs_cfg_err(rate, err, path, "rate", "only for open-loop arrival (poisson, periodic); a "
							      "closed-loop group sets window");
		if (hs_cfg_int(n, path, "window", 0, 1 << 20, 0, 1, &v, err))
			return -1;
		if (v < 1)
			return hs_cfg_err(win, err, path, "window",
					  "0 outstanding operations never issues anything (expected at least 1)");
		g->window = (int)v;
	} else {
		if (win)
			return hs_cfg_err(win, err, path, "window", "only for closed-loop arrival (arrival: closed)");
		double r;
		if (positive(n, path, "rate", HS_U_RATE, 0, &r, err))
			return -1;
		g->interval = HS_PS_PER_S / r;
	}
	const hs_ynode *ops = hs_yaml_get(n, "ops");
	if (!ops)
		return hs_cfg_err(n, err, path, "ops", "missing required key (expected a list of operations)");
	if (ops->kind != HS_Y_SEQ || ops->n == 0)
		return hs_cfg_err(ops, err, path, "ops", "expected a non-empty list of operations");
	if (ops->n > HS_TRAFFIC_MAX_CLASSES)
		return hs_cfg_err(ops, err, path, "ops", "%zu operations (expected at most %d)", ops->n,
				  HS_TRAFFIC_MAX_CLASSES);
	for (size_t i = 0; i < ops->n; i++) {
		char sub[160];
		snprintf(sub, sizeof sub, "%s.ops.%zu", path, i);
		if (parse_op(ops->vals[i], sub, g->name, &g->cls[i], err))
			return -1;
		const hs_ynode *cn = hs_yaml_get(ops->vals[i], "count"), *wn = hs_yaml_get(ops->vals[i], "weight");
		if (cn && g->arrival != HS_ARR_STEPS)
			return hs_cfg_err(cn, err, sub, "count", "only for arrival: steps (other arrivals draw by weight)");
		if (wn && g->arrival == HS_ARR_STEPS)
			return hs_cfg_err(wn, err, sub, "weight", "not for arrival: steps (set count per step)");
	}
	g->nclasses = (int)ops->n;
	t->ngroups++;
	return 0;
}

static int parse_groups(const hs_ynode *seq, const char *path, hs_traffic *t, hs_err *err)
{
	if (seq->kind != HS_Y_SEQ || seq->n == 0)
		return hs_cfg_err(seq, err, path, "", "expected a non-empty list of traffic groups");
	if (seq->n > HS_TRAFFIC_MAX_GROUPS)
		return hs_cfg_err(seq, err, path, "", "%zu groups (expected at most %d)", seq->n, HS_TRAFFIC_MAX_GROUPS);
	for (size_t i = 0; i < seq->n; i++) {
		char sub[96];
		snprintf(sub, sizeof sub, "%s.%zu", path, i);
		if (parse_group(seq->vals[i], sub, (int)i, t, err))
			return -1;
	}
	return 0;
}

static int parse_traffic(const hs_ynode *m, hs_fabric_exp_spec *s, hs_ydoc **mixdoc, const hs_ynode **space_node,
			 hs_err *err)
{
	static const char *const known[] = {"mix", "groups", "address_space", NULL};
	hs_traffic *t = &s->traffic;
	if (!m)
		return hs_err_set(err, HS_EINPUT, "%s: traffic: missing required key (expected mix: or groups:)",
				  s->name);
	if (hs_cfg_known(m, "traffic", known, "a mapping", err))
		return -1;
	double d;
	if (hs_cfg_num(m, "traffic", "address_space", HS_U_BYTES, 1, 1e18, HS_GiB, 0, &d, err))
		return -1;
	t->address_space = (uint64_t)d;
	*space_node = hs_yaml_get(m, "address_space");
	const hs_ynode *mix = hs_yaml_get(m, "mix"), *groups = hs_yaml_get(m, "groups");
	if (mix && groups)
		return hs_cfg_err(groups, err, "traffic", "groups", "give either mix or groups, not both");
	if (groups)
		return parse_groups(groups, "traffic.groups", t, err);
	if (!mix)
		return hs_cfg_err(m, err, "traffic", "mix", "missing required key (expected mix: or groups:)");
	int which;
	if (hs_cfg_enum(m, "traffic", "mix", hs_traffic_mix_names, 0, &which, err))
		return -1;
	const char *name = hs_traffic_mix_names[which];
	char label[64];
	snprintf(label, sizeof label, "<mix %s>", name);
	const char *text = hs_traffic_mix(name);
	*mixdoc = hs_yaml_load_string(text, strlen(text), label, err);
	if (!*mixdoc)
		return -1;
	return parse_groups(hs_yaml_root(*mixdoc), "groups", t, err);
}

/* Every operation must fit every pool of every scheme listed, or it could never be admitted. */
static int check_fit(const hs_fabric_exp_spec *s, const hs_ynode *credits, hs_err *err)
{
	static const char *const pool_key[][2] = {{"bytes", "bytes"},		{"hbm_bytes", "hbm"},
						  {"atomic_bytes", "atomic_bytes"}, {"resp_bytes", "resp"},
						  {"atomics", "atomic"}};
	hs_credit_cfg c = s->credits;
	hs_credit_defaults(&c, s->p.rxbuf, s->p.atomic_depth);
	for (int k = 0; k < s->nschemes; k++) {
		const char *names[HS_CREDIT_POOLS];
		int64_t cap[HS_CREDIT_POOLS];
		int np = s->schemes[k]->pools(&c, names, cap);
		for (int i = 0; i < np; i++)
			cap[i] = hs_credit_share(&c, cap[i], hs_traffic_sources(&s->traffic));
		for (int gi = 0; gi < s->traffic.ngroups; gi++)
			for (int ci = 0; ci < s->traffic.g[gi].nclasses; ci++) {
				const hs_traffic_class *cl = &s->traffic.g[gi].cls[ci];
				hs_credit_op op = hs_fabric_describe(&s->p, cl->kind, cl->size);
				int64_t need[HS_CREDIT_POOLS] = {0};
				s->schemes[k]->demand(&c, &op, need);
				for (int i = 0; i < np; i++) {
					if (need[i] <= cap[i])
						continue;
					const char *key = names[i];
					for (size_t j = 0; j < sizeof pool_key / sizeof pool_key[0]; j++)
						if (strcmp(pool_key[j][0], names[i]) == 0)
							key = pool_key[j][1];
					const hs_ynode *at = hs_yaml_get(credits, key);
					char where[128] = "";
					if (!at)
						snprintf(where, sizeof where, " (the default; set credits.%s)", key);
					if (c.per_sender)
						snprintf(where + strlen(where), sizeof where - strlen(where),
							 " (per sender: the pool split %d ways)",
							 hs_traffic_sources(&s->traffic));
					return hs_cfg_err(at ? at : credits, err, "credits", key,
							  "%lld is smaller than one operation: %s (%s of %u B) needs %lld "
							  "in pool %s of scheme %s%s",
							  (long long)cap[i], cl->name, hs_fabric_op_names[cl->kind],
							  cl->size, (long long)need[i], names[i], s->schemes[k]->name,
							  where);
				}
			}
	}
	return 0;
}

static int parse_focus(const hs_ynode *rep, hs_fabric_exp_spec *s, hs_err *err)
{
	const hs_ynode *f = hs_yaml_get(rep, "focus");
	const hs_ynode *one[1] = {f};
	const hs_ynode *const *items = one;
	size_t n = 1;
	if (!f) {
		/* default: the small operations, or every class when none is small */
		int id = 0, any = 0;
		for (int gi = 0; gi < s->traffic.ngroups; gi++)
			for (int ci = 0; ci < s->traffic.g[gi].nclasses; ci++, id++)
				any |= s->focus[id] = s->traffic.g[gi].cls[ci].size <= s->small_max;
		if (!any)
			memset(s->focus, 1, (size_t)id);
		snprintf(s->focus_desc, sizeof s->focus_desc, "%s", any ? "small" : "all");
		return 0;
	} else if (f->kind == HS_Y_SEQ) {
		items = (const hs_ynode *const *)f->vals;
		n = f->n;
		if (!n)
			return hs_cfg_err(f, err, "report", "focus", "empty list (expected class or group names)");
	} else if (f->kind != HS_Y_SCALAR) {
		return hs_cfg_err(f, err, "report", "focus", "expected a name or a list of names");
	}
	size_t len = 0;
	s->focus_desc[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const hs_ynode *it = items[i];
		if (it->kind != HS_Y_SCALAR)
			return hs_cfg_err(it, err, "report", "focus", "expected a name");
		int hit = 0, id = 0;
		for (int gi = 0; gi < s->traffic.ngroups; gi++)
			for (int ci = 0; ci < s->traffic.g[gi].nclasses; ci++, id++) {
				const hs_traffic_class *cl = &s->traffic.g[gi].cls[ci];
				int m = strcmp(it->str, "all") == 0 ||
					(strcmp(it->str, "small") == 0 && cl->size <= s->small_max) ||
					strcmp(it->str, s->traffic.g[gi].name) == 0 || strcmp(it->str, cl->name) == 0;
				if (m) {
					s->focus[id] = 1;
					hit = 1;
				}
			}
		if (!hit)
			return hs_cfg_err(it, err, "report", "focus",
					  "'%s' matches no class or group (expected a class name, a group name, "
					  "'small' or 'all')",
					  it->str);
		len += (size_t)snprintf(s->focus_desc + len, sizeof s->focus_desc - len, "%s%s", i ? "+" : "",
					it->str);
		if (len >= sizeof s->focus_desc)
			len = sizeof s->focus_desc - 1;
	}
	return 0;
}

static int exp_parse(hs_ydoc *doc, hs_fabric_exp_spec *s, int replay, hs_err *err);

int hs_fabric_exp_parse(hs_ydoc *doc, hs_fabric_exp_spec *s, hs_err *err) { return exp_parse(doc, s, 0, err); }
int hs_fabric_exp_parse_replay(hs_ydoc *doc, hs_fabric_exp_spec *s, hs_err *err) { return exp_parse(doc, s, 1, err); }

static int exp_parse(hs_ydoc *doc, hs_fabric_exp_spec *s, int replay, hs_err *err)
{
	static const char *const known[] = {"kind",	"name",	  "description", "fabric",    "credits",
					    "traffic", "schemes", "report",	 "simulation", NULL};
	static const char *const krep[] = {"baseline", "focus", "small_max", NULL};
	static const char *const ksim[] = {"seed", "ops", "duration", "warmup", NULL};
	memset(s, 0, sizeof *s);
	hs_fabric_params_default(&s->p);
	hs_ynode *root = hs_yaml_root(doc);
	if (hs_cfg_known(root, "", known, "a mapping (a fabric scenario)", err))
		return -1;
	const char *kind;
	if (hs_cfg_str(root, "", "kind", NULL, 1, &kind, err))
		return -1;
	if (strcmp(kind, "fabric") != 0)
		return hs_cfg_err(hs_yaml_get(root, "kind"), err, "", "kind", "'%s' is not a fabric scenario (expected fabric)",
				  kind);
	const char *desc;
	if (hs_cfg_str(root, "", "name", hs_yaml_name(doc), 0, &s->name, err) ||
	    hs_cfg_str(root, "", "description", NULL, 0, &desc, err))
		return -1;
	if (hs_fabric_parse_params(hs_yaml_get(root, "fabric"), "fabric", &s->p, err) ||
	    hs_fabric_parse_credits(hs_yaml_get(root, "credits"), "credits", &s->credits, err))
		return -1;
	hs_ydoc *mixdoc = NULL;
	const hs_ynode *space = NULL;
	int rc = 0;
	if (replay) /* the traffic is the recorded one: a traffic section, if any, is not read */
		s->traffic.address_space = HS_GiB;
	else
		rc = parse_traffic(hs_yaml_get(root, "traffic"), s, &mixdoc, &space, err);
	hs_yaml_free(mixdoc);
	if (rc)
		return -1;
	uint64_t granules = s->traffic.address_space / s->p.interleave;
	if (granules < (uint64_t)s->p.partitions) {
		const hs_ynode *at = hs_yaml_get(hs_yaml_get(hs_yaml_get(root, "fabric"), "hbm"), "partitions");
		return hs_cfg_err(at ? at : space ? space : root, err, at ? "fabric.hbm" : "traffic",
				  at ? "partitions" : "address_space",
				  "%d HBM partitions but the address space holds only %llu interleave granules of %u B "
				  "(expected no more partitions than addresses)",
				  s->p.partitions, (unsigned long long)granules, s->p.interleave);
	}
	for (int gi = 0; gi < s->traffic.ngroups; gi++)
		for (int ci = 0; ci < s->traffic.g[gi].nclasses; ci++) {
			hs_traffic_class *cl = &s->traffic.g[gi].cls[ci];
			if (cl->kind == HS_FOP_ATOMIC && cl->size > s->p.mtu)
				return hs_err_set(err, HS_EINPUT,
						  "%s: traffic: %s: an atomic of %u B does not fit one packet (mtu %u B)",
						  hs_yaml_name(doc), cl->name, cl->size, s->p.mtu);
		}
	/* schemes */
	const hs_ynode *sch = hs_yaml_get(root, "schemes");
	if (!sch) {
		for (int i = 0; hs_credit_schemes[i] && i < HS_FABRIC_MAX_SCHEMES; i++)
			s->schemes[s->nschemes++] = hs_credit_schemes[i];
	} else {
		if (sch->kind != HS_Y_SEQ || sch->n == 0 || sch->n > HS_FABRIC_MAX_SCHEMES)
			return hs_cfg_err(sch, err, "", "schemes", "expected a list of 1 to %d scheme names",
					  HS_FABRIC_MAX_SCHEMES);
		for (size_t i = 0; i < sch->n; i++) {
			const hs_ynode *it = sch->vals[i];
			const hs_credit_scheme *cs = it->kind == HS_Y_SCALAR ? hs_credit_find(it->str) : NULL;
			if (!cs) {
				const char *names[HS_FABRIC_MAX_SCHEMES + 1];
				int k = 0;
				for (; hs_credit_schemes[k] && k < HS_FABRIC_MAX_SCHEMES; k++)
					names[k] = hs_credit_schemes[k]->name;
				names[k] = NULL;
				const char *sug = it->kind == HS_Y_SCALAR ? hs_cfg_suggest(it->str, names) : NULL;
				char path[32];
				snprintf(path, sizeof path, "schemes.%zu", i);
				if (sug)
					return hs_cfg_err(it, err, path, "", "unknown scheme '%s' (did you mean '%s'?)",
							  it->str, sug);
				return hs_cfg_err(it, err, path, "",
						  "unknown scheme (expected none, byte, per_resource, vector)");
			}
			s->schemes[s->nschemes++] = cs;
		}
	}
	if (check_fit(s, hs_yaml_get(root, "credits"), err))
		return -1;
	/* report */
	const hs_ynode *rep = hs_yaml_get(root, "report");
	s->small_max = 256;
	const char *base = "per_resource";
	if (rep) {
		if (hs_cfg_known(rep, "report", krep, "a mapping", err))
			return -1;
		if (bytes32(rep, "report", "small_max", 1, 256, &s->small_max, err) ||
		    hs_cfg_str(rep, "report", "baseline", base, 0, &base, err))
			return -1;
	}
	s->baseline = NULL;
	for (int i = 0; i < s->nschemes; i++)
		if (strcmp(s->schemes[i]->name, base) == 0)
			s->baseline = s->schemes[i];
	if (!s->baseline && rep && hs_yaml_get(rep, "baseline"))
		return hs_cfg_err(hs_yaml_get(rep, "baseline"), err, "report", "baseline",
				  "'%s' is not one of the schemes listed", base);
	if (parse_focus(rep, s, err))
		return -1;
	/* simulation */
	const hs_ynode *sim = hs_yaml_get(root, "simulation");
	int64_t v;
	double d;
	hs_traffic *t = &s->traffic;
	t->seed = 1;
	t->ops = 100000;
	if (sim) {
		if (hs_cfg_known(sim, "simulation", ksim, "a mapping", err))
			return -1;
		if (hs_cfg_int(sim, "simulation", "seed", 0, INT64_MAX, 1, 0, &v, err))
			return -1;
		t->seed = (uint64_t)v;
		if (hs_cfg_num(sim, "simulation", "duration", HS_U_TIME, 0, 1e6, 0, 0, &d, err))
			return -1;
		t->duration = hs_time_from_s(d);
		if (hs_cfg_int(sim, "simulation", "ops", 0, INT64_MAX, t->duration ? 0 : 100000, 0, &v, err))
			return -1;
		t->ops = (uint64_t)v;
		if (!t->ops && !t->duration)
			return hs_cfg_err(sim, err, "simulation", "ops",
					  "neither ops nor duration is set (expected a limit on the run)");
		if (hs_cfg_int(sim, "simulation", "warmup", 0, INT64_MAX, (int64_t)(t->ops / 10), 0, &v, err))
			return -1;
		t->warmup = (uint64_t)v;
		if (t->ops && t->warmup >= t->ops)
			return hs_cfg_err(hs_yaml_get(sim, "warmup"), err, "simulation", "warmup",
					  "%llu is not below ops %llu (nothing would be measured)",
					  (unsigned long long)t->warmup, (unsigned long long)t->ops);
	} else {
		t->warmup = t->ops / 10;
	}
	/* metric classes are numbered in group order */
	int id = 0;
	for (int gi = 0; gi < t->ngroups; gi++)
		for (int ci = 0; ci < t->g[gi].nclasses; ci++)
			t->g[gi].cls[ci].id = id++;
	s->p.sources = hs_traffic_sources(t);
	s->p.nclasses = id;
	s->p.seed = t->seed;
	if (s->p.sources > 65535)
		return hs_err_set(err, HS_EINPUT, "%s: traffic: %d sources (expected at most 65535)",
				  hs_yaml_name(doc), s->p.sources);
	return 0;
}

/* ---- running ---- */

static void lat_of(const hs_fabric_class_stats *cs, const hs_hist *lat, const hs_hist *stall, uint64_t bytes,
		   hs_time first, hs_time last, hs_fabric_lat *o)
{
	memset(o, 0, sizeof *o);
	o->ops = lat->n;
	if (!lat->n)
		return;
	o->p50 = hs_hist_quantile(lat, 0.5) / 1e3;
	o->p99 = hs_hist_quantile(lat, 0.99) / 1e3;
	o->p999 = hs_hist_quantile(lat, 0.999) / 1e3;
	o->mean = hs_hist_mean(lat) / 1e3;
	o->stall_mean = hs_hist_mean(stall) / 1e3;
	o->stall_p99 = hs_hist_quantile(stall, 0.99) / 1e3;
	double span = last > first ? hs_time_to_s(last - first) : 0;
	if (span > 0) {
		o->ops_per_s = (double)lat->n / span;
		o->GB_per_s = (double)bytes / span / 1e9;
	}
}

static double little(const hs_occ *q)
{
	double L = q->area, W = q->sojourn; /* both in item-picoseconds over a drained run */
	double d = fabs(L - W), m = fabs(L) > 1e-12 ? fabs(L) : 1e-12;
	if (q->arrivals != q->departures)
		return 1;
	return W == 0 && L == 0 ? 0 : d / m;
}

static void qsum(const hs_occ *q, hs_fabric_queue_sum *o)
{
	o->mean = hs_occ_mean(q);
	o->max = q->max;
	o->bin_ns = (double)q->bin_w / 1e3;
	o->nbins = hs_occ_nbins(q);
	for (size_t i = 0; i < o->nbins; i++)
		o->series[i] = hs_occ_bin_mean(q, i);
}

/* The larger of two summaries (for "the busiest partition / path"). */
static void qmax(const hs_occ *qs, int n, hs_fabric_queue_sum *o)
{
	int best = 0;
	for (int i = 1; i < n; i++)
		if (hs_occ_mean(&qs[i]) > hs_occ_mean(&qs[best]))
			best = i;
	qsum(&qs[best], o);
}

void hs_fabric_exp_run(const hs_fabric_exp_spec *s, const hs_credit_scheme *scheme, hs_fabric_outcome *o)
{
	memset(o, 0, sizeof *o);
	o->scheme = scheme;
	hs_engine *eng = hs_engine_create();
	hs_fabric *f = hs_fabric_create(eng, &s->p, scheme, &s->credits);
	o->issued = hs_traffic_run(&s->traffic, eng, f);
	hs_fabric_close(f);
	o->events = hs_engine_executed(eng);
	o->sim_us = (double)hs_engine_now(eng) / 1e6;
	o->nclasses = s->p.nclasses;
	hs_hist *fl = hs_xmalloc(sizeof *fl), *fs = hs_xmalloc(sizeof *fs);
	hs_hist_init(fl);
	hs_hist_init(fs);
	uint64_t fbytes = 0;
	hs_time ffirst = HS_TIME_MAX, flast = 0;
	for (int c = 0; c < s->p.nclasses; c++) {
		const hs_fabric_class_stats *cs = hs_fabric_class(f, c);
		lat_of(cs, &cs->lat, &cs->stall, cs->bytes, cs->first_issue, cs->last_done, &o->cls[c]);
		if (s->focus[c] && cs->ops) {
			hs_hist_merge(fl, &cs->lat);
			hs_hist_merge(fs, &cs->stall);
			fbytes += cs->bytes;
			if (cs->first_issue < ffirst)
				ffirst = cs->first_issue;
			if (cs->last_done > flast)
				flast = cs->last_done;
		}
	}
	lat_of(NULL, fl, fs, fbytes, ffirst, flast, &o->focus);
	free(fl);
	free(fs);
	const hs_fabric_queues *q = hs_fabric_queues_of(f);
	qsum(&q->rxbuf, &o->q[HS_FQ_RXBUF]);
	qsum(&q->ingress, &o->q[HS_FQ_INGRESS]);
	qmax(q->hbm, s->p.partitions, &o->q[HS_FQ_HBM]);
	qsum(&q->atomic, &o->q[HS_FQ_ATOMIC]);
	qsum(&q->resp, &o->q[HS_FQ_RESP]);
	qsum(&q->admit, &o->q[HS_FQ_ADMIT]);
	qmax(q->fwd, s->p.paths, &o->q[HS_FQ_FWD]);
	/* Little's law on every item queue (the receive buffer counts bytes, not items) */
	double le = 0, x;
	const hs_occ *single[] = {&q->ingress, &q->atomic, &q->resp, &q->admit, &q->inflight};
	for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
		if ((x = little(single[i])) > le)
			le = x;
	for (int i = 0; i < s->p.partitions; i++)
		if ((x = little(&q->hbm[i])) > le)
			le = x;
	for (int i = 0; i < s->p.paths; i++) {
		if ((x = little(&q->fwd[i])) > le)
			le = x;
		if ((x = little(&q->rev[i])) > le)
			le = x;
	}
	for (int i = 0; i < s->p.sources; i++)
		if ((x = little(&q->egress[i])) > le)
			le = x;
	o->little_err = le;
	const int64_t *cap, *avail, *mn;
	o->npools = hs_fabric_pools(f, o->pool_names, &cap, &avail, &mn);
	for (int i = 0; i < o->npools; i++) {
		o->pool_cap[i] = cap[i];
		o->pool_min[i] = mn[i];
		o->pool_end[i] = avail[i];
	}
	hs_fabric_destroy(f);
	hs_engine_destroy(eng);
}

/* ---- printing ---- */

static double change(double x, double base) { return base > 0 ? 100.0 * (x - base) / base : 0; }

static void print_lat_text(FILE *out, const char *scheme, const char *name, const hs_fabric_lat *l)
{
	fprintf(out, "%-13s %-26s %9llu %9.1f %9.1f %9.1f %8.2f %8.2f %9.1f\n", scheme, name,
		(unsigned long long)l->ops, l->p50, l->p99, l->p999, l->ops_per_s / 1e6, l->GB_per_s, l->stall_mean);
}

static void print_text(FILE *out, const hs_fabric_exp_spec *s, const hs_fabric_outcome *os)
{
	const hs_traffic *t = &s->traffic;
	fprintf(out, "fabric scenario %s: seed %llu, %llu ops (first %llu not measured), %d sources, %d paths\n",
		s->name, (unsigned long long)t->seed, (unsigned long long)os[0].issued,
		(unsigned long long)t->warmup, s->p.sources, s->p.paths);
	fprintf(out, "focus: %s (small = at most %u B)\n\n", s->focus_desc, s->small_max);
	fprintf(out, "%-13s %-26s %9s %9s %9s %9s %8s %8s %9s\n", "scheme", "class", "ops", "P50 ns", "P99 ns",
		"P99.9 ns", "Mop/s", "GB/s", "stall ns");
	for (int k = 0; k < s->nschemes; k++) {
		const hs_fabric_outcome *o = &os[k];
		int id = 0;
		for (int gi = 0; gi < t->ngroups; gi++)
			for (int ci = 0; ci < t->g[gi].nclasses; ci++, id++)
				print_lat_text(out, id ? "" : o->scheme->name, t->g[gi].cls[ci].name, &o->cls[id]);
		char fn[64];
		snprintf(fn, sizeof fn, "[focus %s]", s->focus_desc);
		print_lat_text(out, "", fn, &o->focus);
	}
	fprintf(out, "\nqueues, time-weighted mean / max (rxbuf in KiB, others in entries)\n");
	fprintf(out, "%-13s %15s %15s %15s %15s %15s %15s\n", "scheme", "rxbuf", "ingress", "hbm(busiest)",
		"atomic", "response", "credit wait");
	static const int cols[] = {HS_FQ_RXBUF, HS_FQ_INGRESS, HS_FQ_HBM, HS_FQ_ATOMIC, HS_FQ_RESP, HS_FQ_ADMIT};
	for (int k = 0; k < s->nschemes; k++) {
		fprintf(out, "%-13s", os[k].scheme->name);
		for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
			const hs_fabric_queue_sum *q = &os[k].q[cols[c]];
			double scale = cols[c] == HS_FQ_RXBUF ? 1.0 / 1024 : 1;
			char cell[32];
			snprintf(cell, sizeof cell, "%.1f/%.0f", q->mean * scale, q->max * scale);
			fprintf(out, " %15s", cell);
		}
		fprintf(out, "\n");
	}
	fprintf(out, "\ncredit pools: capacity, least available (all back at drain: yes/no)\n");
	for (int k = 0; k < s->nschemes; k++) {
		const hs_fabric_outcome *o = &os[k];
		fprintf(out, "%-13s", o->scheme->name);
		if (!o->npools)
			fprintf(out, " (none)");
		for (int i = 0; i < o->npools; i++)
			fprintf(out, " %s %lld, least %lld, back %s;", o->pool_names[i], (long long)o->pool_cap[i],
				(long long)o->pool_min[i], o->pool_end[i] == o->pool_cap[i] ? "yes" : "no");
		fprintf(out, "\n");
	}
	if (s->baseline) {
		const hs_fabric_outcome *b = NULL;
		for (int k = 0; k < s->nschemes; k++)
			if (os[k].scheme == s->baseline)
				b = &os[k];
		fprintf(out, "\nP99 of focus vs %s (%.1f ns):", s->baseline->name, b->focus.p99);
		for (int k = 0; k < s->nschemes; k++)
			if (&os[k] != b)
				fprintf(out, "  %s %+.1f%%", os[k].scheme->name, change(os[k].focus.p99, b->focus.p99));
		fprintf(out, "\n");
	}
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_lat(FILE *out, const hs_fabric_lat *l)
{
	fprintf(out,
		"\"ops\": %llu, \"p50_ns\": %.3f, \"p99_ns\": %.3f, \"p999_ns\": %.3f, \"mean_ns\": %.3f, "
		"\"ops_per_s\": %.6g, \"GB_per_s\": %.6g, \"stall_mean_ns\": %.3f, \"stall_p99_ns\": %.3f",
		(unsigned long long)l->ops, l->p50, l->p99, l->p999, l->mean, l->ops_per_s, l->GB_per_s, l->stall_mean,
		l->stall_p99);
}

static void print_json(FILE *out, const hs_fabric_exp_spec *s, const hs_fabric_outcome *os)
{
	const hs_traffic *t = &s->traffic;
	fprintf(out, "{\"kind\": \"fabric\", \"name\": ");
	json_str(out, s->name);
	fprintf(out, ", \"seed\": %llu, \"ops\": %llu, \"warmup\": %llu, \"focus\": ", (unsigned long long)t->seed,
		(unsigned long long)os[0].issued, (unsigned long long)t->warmup);
	json_str(out, s->focus_desc);
	fprintf(out, ", \"baseline\": ");
	if (s->baseline)
		json_str(out, s->baseline->name);
	else
		fprintf(out, "null");
	fprintf(out, ",\n \"schemes\": [");
	for (int k = 0; k < s->nschemes; k++) {
		const hs_fabric_outcome *o = &os[k];
		fprintf(out, "%s\n  {\"scheme\": \"%s\", \"events\": %llu, \"sim_us\": %.3f, \"classes\": [", k ? "," : "",
			o->scheme->name, (unsigned long long)o->events, o->sim_us);
		int id = 0;
		for (int gi = 0; gi < t->ngroups; gi++)
			for (int ci = 0; ci < t->g[gi].nclasses; ci++, id++) {
				fprintf(out, "%s\n    {\"name\": ", id ? "," : "");
				json_str(out, t->g[gi].cls[ci].name);
				fprintf(out, ", \"op\": \"%s\", \"size\": %u, ",
					hs_fabric_op_names[t->g[gi].cls[ci].kind], t->g[gi].cls[ci].size);
				json_lat(out, &o->cls[id]);
				fprintf(out, "}");
			}
		fprintf(out, "],\n   \"focus\": {");
		json_lat(out, &o->focus);
		fprintf(out, "},\n   \"queues\": {");
		for (int qi = 0; qi < HS_FQ_N; qi++) {
			const hs_fabric_queue_sum *q = &o->q[qi];
			fprintf(out, "%s\n    \"%s\": {\"mean\": %.6g, \"max\": %.6g, \"bin_ns\": %.3f, \"series\": [",
				qi ? "," : "", hs_fabric_queue_names[qi], q->mean, q->max, q->bin_ns);
			for (size_t b = 0; b < q->nbins; b++)
				fprintf(out, "%s%.4g", b ? ", " : "", q->series[b]);
			fprintf(out, "]}");
		}
		fprintf(out, "},\n   \"credits\": [");
		for (int i = 0; i < o->npools; i++)
			fprintf(out, "%s{\"pool\": \"%s\", \"capacity\": %lld, \"least_available\": %lld, \"returned\": %s}",
				i ? ", " : "", o->pool_names[i], (long long)o->pool_cap[i], (long long)o->pool_min[i],
				o->pool_end[i] == o->pool_cap[i] ? "true" : "false");
		fprintf(out, "]}");
	}
	fprintf(out, "],\n \"p99_change_vs_baseline_pct\": {");
	if (s->baseline) {
		const hs_fabric_outcome *b = NULL;
		for (int k = 0; k < s->nschemes; k++)
			if (os[k].scheme == s->baseline)
				b = &os[k];
		int first = 1;
		for (int k = 0; k < s->nschemes; k++)
			if (&os[k] != b) {
				fprintf(out, "%s\"%s\": %.2f", first ? "" : ", ", os[k].scheme->name,
					change(os[k].focus.p99, b->focus.p99));
				first = 0;
			}
	}
	fprintf(out, "}}\n");
}

int hs_fabric_run(hs_ydoc *doc, int json, FILE *out, hs_err *err)
{
	hs_fabric_exp_spec *s = hs_xmalloc(sizeof *s);
	if (hs_fabric_exp_parse(doc, s, err)) {
		free(s);
		return -1;
	}
	hs_fabric_outcome *os = hs_xcalloc((size_t)s->nschemes, sizeof *os);
	int rc = 0;
	for (int k = 0; k < s->nschemes; k++) {
		hs_fabric_exp_run(s, s->schemes[k], &os[k]);
		for (int i = 0; i < os[k].npools; i++)
			if (os[k].pool_end[i] != os[k].pool_cap[i] || os[k].pool_min[i] < 0)
				rc = hs_err_set(err, HS_EINTERNAL, "fabric: scheme %s: credit pool %s ended at %lld of %lld",
						os[k].scheme->name, os[k].pool_names[i], (long long)os[k].pool_end[i],
						(long long)os[k].pool_cap[i]);
	}
	if (!rc) {
		if (json)
			print_json(out, s, os);
		else
			print_text(out, s, os);
	}
	free(os);
	free(s);
	return rc;
}
