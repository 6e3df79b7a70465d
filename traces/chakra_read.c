/* Chakra ET files -> hs_graph (traces/chakra.h; docs/chakra.md says what of the schema is read and how).
 *
 * One rank at a time: parse its Node messages (keeping only what the graph needs), index them by id, order
 * them topologically (Kahn's algorithm taking the lowest file position first, so a file that is already in
 * dependency order keeps its order: that is the order of every stream), and emit tasks. Nodes that are not
 * tasks (metadata nodes, and receives, which become a dependency on their send) pass their dependencies
 * through to their dependents. Collectives are matched across the ranks of their group by issue order, and
 * receives to sends once every rank has been read. */
#include "traces/chakra.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/coll/coll.h"
#include "sim/base/file.h"
#include "traces/chakra_wire.h"

/* A rank's file is read whole: 1 GiB bounds the memory one bad path can take (a 10,000-node rank of
 * hetsim's export is about 0.5 MB). */
#define HS_CHAKRA_MAX_FILE (1ull << 30)
/* A receive's dependency, marked until its send is matched: the high bit, then the receive's index. */
#define RECV_MARK 0x80000000u

/* ---- a small open-addressing map from a pair of 64-bit keys to a 32-bit value ---- */
struct kv {
	uint64_t a, b;
	uint32_t v;
	uint8_t used;
};
struct map {
	struct kv *e;
	size_t n, cap;
};

static size_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ h >> 29);
}

/* The slot of (a, b): found (used) or where it goes. */
static struct kv *map_slot(struct map *m, uint64_t a, uint64_t b)
{
	if (2 * (m->n + 1) > m->cap) {
		struct kv *old = m->e;
		size_t oc = m->cap;
		m->cap = oc ? 2 * oc : 64;
		m->e = hs_xcalloc(m->cap, sizeof *m->e);
		for (size_t i = 0; i < oc; i++)
			if (old[i].used) {
				size_t j = hash2(old[i].a, old[i].b) & (m->cap - 1);
				while (m->e[j].used)
					j = (j + 1) & (m->cap - 1);
				m->e[j] = old[i];
			}
		free(old);
	}
	size_t j = hash2(a, b) & (m->cap - 1);
	while (m->e[j].used && (m->e[j].a != a || m->e[j].b != b))
		j = (j + 1) & (m->cap - 1);
	return &m->e[j];
}

static void map_put(struct map *m, struct kv *s, uint64_t a, uint64_t b, uint32_t v)
{
	if (!s->used)
		m->n++;
	*s = (struct kv){a, b, v, 1};
}

static void map_free(struct map *m)
{
	free(m->e);
	memset(m, 0, sizeof *m);
}

/* ---- one rank's nodes as parsed ---- */
struct node {
	uint64_t id;
	size_t off;          /* byte offset of its message in the file */
	uint8_t type;
	int8_t hsgroup;      /* hetsim_group attribute: enum hs_group, -1 none */
	uint8_t has_dur, has_ctype, has_size, has_src, has_dst, gemm;
	uint8_t in_layer;    /* hetsim_in_layer: a collective that blocks the compute stream */
	uint64_t dur_ps;
	int comm_type;
	double bytes;        /* comm_size, or tensor_size */
	int64_t src, dst, tag;
	uint32_t grp;        /* interned comm_group + 1; 0: the world */
	uint32_t dep_first, dep_count; /* ids, then local indices, in rank.deps */
	double m, n, k, count; /* GEMM priced by the op-time model */
	enum hs_dtype dtype;
};

struct rank {
	struct node *nodes;
	size_t n, cap;
	uint64_t *deps;
	size_t ndeps, capdeps;
};

/* ---- groups and rendezvous, across ranks ---- */
struct group {
	uint32_t first, n;   /* members: ctx.granks[first .. first + n), ascending */
	uint32_t *count;     /* [n] collectives each member has issued */
	int32_t *rv;         /* [nrv] rendezvous id of the group's k-th collective */
	uint8_t *rv_coll;
	double *rv_bytes;
	size_t nrv, caprv;
};

struct pending_recv {
	int64_t src, dst, tag;
	uint32_t seq;
	int rank;
	uint64_t id;
};

struct ctx {
	const char *const *names;
	int nranks, ndevices;
	hs_graph *g;
	hs_chakra_info *info;
	hs_err *err;
	int *granks;
	size_t ngranks, capgranks;
	struct group *groups;
	size_t ngroups, capgroups;
	struct map group_by_hash; /* (hash, size) -> group index (chained through `next` on a clash) */
	uint32_t *group_next;
	size_t capnext;
	uint32_t world;           /* the world group + 1, 0 until used */
	struct map sends;         /* (src << 32 | dst, tag) -> index into send_lists */
	uint32_t **send_tasks;
	size_t *send_n, *send_cap, nsendkeys, capsendkeys;
	struct map recv_seq;      /* (src << 32 | dst, tag) -> receives seen so far */
	struct pending_recv *recvs;
	size_t nrecvs, caprecvs;
	struct map dur_op, mem_op; /* op dedup: duration ps / bytes -> op index */
};

static int fail_node(struct ctx *c, int rank, const struct node *nd, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_node(struct ctx *c, int rank, const struct node *nd, const char *fmt, ...)
{
	char msg[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hs_err_set(c->err, HS_EINPUT, "%s: byte %zu: node %" PRIu64 ": %s", c->names[rank], nd->off, nd->id,
			  msg);
}

/* ---- parsing ---- */

/* A list attribute's integers (packed or not) into out[0..*n), at most `max`. -1 on a malformed list. */
static int int_list(hs_pb *lc, int zigzag, int64_t *out, size_t *n, size_t max, const char **why)
{
	hs_pb_field f;
	int r;
	while ((r = hs_pb_next(lc, &f)) == 1) {
		if (f.num != 1)
			continue;
		if (f.wire == HS_PB_VARINT) {
			if (*n >= max) {
				*why = "a comm_group with more ranks than the trace has";
				return -1;
			}
			out[(*n)++] = zigzag ? (int64_t)(f.v >> 1) ^ -(int64_t)(f.v & 1) : (int64_t)f.v;
		} else if (f.wire == HS_PB_LEN) {
			hs_pb p = hs_pb_sub(lc, &f);
			while (p.p < p.end) {
				uint64_t v;
				if (hs_pb_varint(&p, &v)) {
					*why = p.why;
					return -1;
				}
				if (*n >= max) {
					*why = "a comm_group with more ranks than the trace has";
					return -1;
				}
				out[(*n)++] = zigzag ? (int64_t)(v >> 1) ^ -(int64_t)(v & 1) : (int64_t)v;
			}
		}
	}
	if (r < 0)
		*why = lc->why;
	return r < 0 ? -1 : 0;
}

static int name_is(const hs_pb_field *f, const char *s)
{
	return f->len == strlen(s) && memcmp(f->data, s, f->len) == 0;
}

static uint32_t intern_group(struct ctx *c, int64_t *r, size_t n);

/* One AttributeProto of a node. */
static int parse_attr(struct ctx *c, int rank, hs_pb *ac, struct node *nd, int64_t *scratch)
{
	hs_pb_field f, name = {0}, val = {0};
	int r, have = 0;
	while ((r = hs_pb_next(ac, &f)) == 1) {
		if (f.num == HS_ETA_NAME && f.wire == HS_PB_LEN)
			name = f;
		else if (f.num >= HS_ETA_DOUBLE && f.num <= HS_ETA_BYTES_LIST)
			val = f, have = 1;
	}
	if (r < 0)
		return fail_node(c, rank, nd, "an attribute: %s (expected an AttributeProto message)", ac->why);
	if (!have || !name.data)
		return 0;
	int is_int = val.wire == HS_PB_VARINT &&
		     (val.num == HS_ETA_INT32 || val.num == HS_ETA_INT64 || val.num == HS_ETA_UINT32 ||
		      val.num == HS_ETA_UINT64 || val.num == HS_ETA_SINT32 || val.num == HS_ETA_SINT64 ||
		      val.num == HS_ETA_BOOL);
	int is_fixed = (val.wire == HS_PB_I64 || val.wire == HS_PB_I32) && val.num >= HS_ETA_FIXED32 &&
		       val.num <= HS_ETA_SFIXED64;
	int64_t iv = 0;
	if (is_int)
		iv = val.num == HS_ETA_SINT32 || val.num == HS_ETA_SINT64 ? (int64_t)(val.v >> 1) ^ -(int64_t)(val.v & 1)
									   : val.num == HS_ETA_INT32 ? (int32_t)val.v
												     : (int64_t)val.v;
	else if (is_fixed)
		iv = val.num == HS_ETA_SFIXED32 ? (int32_t)val.v : (int64_t)val.v;
	else if (val.wire == HS_PB_I64 && val.num == HS_ETA_DOUBLE) {
		double d;
		memcpy(&d, &val.v, 8);
		iv = d >= 0 && d < 9e18 ? (int64_t)d : -1;
		is_int = 1;
	}
	int integer = is_int || is_fixed;
	const char *want = NULL;
	if (name_is(&name, "comm_type")) {
		if (!integer || iv < 0 || iv > HS_ET_BARRIER)
			want = "comm_type: expected an integer CollectiveCommType, 0 to 9";
		nd->comm_type = (int)iv, nd->has_ctype = 1;
	} else if (name_is(&name, "comm_size") || name_is(&name, "tensor_size")) {
		if (!integer || iv < 0)
			want = "comm_size / tensor_size: expected a byte count of 0 or more";
		else if (name_is(&name, "comm_size") || !nd->has_size)
			nd->bytes = (double)iv, nd->has_size = 1;
	} else if (name_is(&name, "comm_src") || name_is(&name, "comm_dst")) {
		int dst = name_is(&name, "comm_dst");
		if (!integer || iv < 0 || iv >= c->nranks) {
			return fail_node(c, rank, nd, "%s is %" PRId64 " (expected a rank with a file, 0 to %d)",
					 dst ? "comm_dst" : "comm_src", iv, c->nranks - 1);
		}
		if (dst)
			nd->dst = iv, nd->has_dst = 1;
		else
			nd->src = iv, nd->has_src = 1;
	} else if (name_is(&name, "comm_tag")) {
		if (!integer)
			want = "comm_tag: expected an integer";
		nd->tag = iv;
	} else if (name_is(&name, "duration_ps")) {
		if (!integer || iv < 0)
			want = "duration_ps: expected picoseconds, 0 or more";
		nd->dur_ps = (uint64_t)iv, nd->has_dur = 1;
	} else if (name_is(&name, "hetsim_in_layer")) {
		if (!integer)
			want = "hetsim_in_layer: expected a bool";
		nd->in_layer = iv != 0;
	} else if (name_is(&name, "hetsim_group")) {
		static const char *const gn[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
		nd->hsgroup = -1;
		for (int k = 0; k < HS_GROUP_COUNT && val.wire == HS_PB_LEN; k++)
			if (name_is(&val, gn[k]))
				nd->hsgroup = (int8_t)k;
	} else if (name_is(&name, "comm_group")) {
		if (val.wire != HS_PB_LEN || (val.num != HS_ETA_INT32_LIST && val.num != HS_ETA_INT64_LIST &&
					      val.num != HS_ETA_UINT32_LIST && val.num != HS_ETA_UINT64_LIST &&
					      val.num != HS_ETA_SINT32_LIST && val.num != HS_ETA_SINT64_LIST))
			return fail_node(c, rank, nd, "comm_group: expected a list of integer ranks");
		hs_pb lc = hs_pb_sub(ac, &val);
		size_t n = 0;
		const char *why = NULL;
		if (int_list(&lc, val.num == HS_ETA_SINT32_LIST || val.num == HS_ETA_SINT64_LIST, scratch, &n,
			     (size_t)c->nranks, &why))
			return fail_node(c, rank, nd, "comm_group: %s (expected at most %d distinct ranks)", why,
					 c->nranks);
		int self = 0;
		for (size_t i = 0; i < n; i++) {
			if (scratch[i] < 0 || scratch[i] >= c->nranks)
				return fail_node(c, rank, nd,
						 "comm_group names rank %" PRId64 ", which has no file (expected ranks 0 to %d, "
						 "those of %s.. files)",
						 scratch[i], c->nranks - 1, c->names[0]);
			self |= scratch[i] == rank;
		}
		if (!self)
			return fail_node(c, rank, nd, "comm_group does not hold rank %d, whose file it is in "
						      "(expected the issuing rank among its members)",
					 rank);
		uint32_t gi = intern_group(c, scratch, n);
		if (!gi)
			return fail_node(c, rank, nd, "comm_group names a rank twice (expected distinct ranks)");
		nd->grp = gi;
	}
	if (want)
		return fail_node(c, rank, nd, "attribute %s", want);
	return 0;
}

/* The dimensions of up to 4 tensors in an IOInfo shapes string such as "[[1024,4096],[4096,1024]]". */
static int parse_shapes(const uint8_t *s, size_t len, double dims[4][4], int nd[4])
{
	int t = -1, depth = 0, nt = 0;
	double v = 0;
	int inval = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = (char)s[i];
		if (ch == '[') {
			if (++depth == 2) {
				if (nt == 4)
					return nt;
				t = nt++;
				nd[t] = 0;
			}
		} else if (ch >= '0' && ch <= '9') {
			v = v * 10 + (ch - '0');
			inval = 1;
		} else {
			if (inval && depth == 2 && t >= 0 && nd[t] < 4)
				dims[t][nd[t]++] = v;
			v = 0;
			inval = 0;
			if (ch == ']')
				depth--;
		}
	}
	return nt;
}

/* A compute node the op-time model can price: aten::mm [[m,k],[k,n]], aten::addmm [bias,[m,k],[k,n]],
 * aten::bmm [[b,m,k],[b,k,n]], in the dtype of inputs.types (bf16 unless it names Half or float). */
static void gemm_from(struct node *nd, const hs_pb_field *name, const uint8_t *shp, size_t shl, const uint8_t *ty,
		      size_t tyl)
{
	double d[4][4];
	int n[4] = {0};
	int nt = parse_shapes(shp, shl, d, n);
	int a = -1;
	double b = 1;
	if (name_is(name, "aten::mm") && nt >= 2 && n[0] == 2 && n[1] == 2)
		a = 0;
	else if (name_is(name, "aten::addmm") && nt >= 3 && n[1] == 2 && n[2] == 2)
		a = 1;
	else if (name_is(name, "aten::bmm") && nt >= 2 && n[0] == 3 && n[1] == 3) {
		b = d[0][0];
		for (int k = 0; k < 2; k++)
			d[k][0] = d[k][1], d[k][1] = d[k][2];
		a = 0;
	}
	if (a < 0 || d[a][1] != d[a + 1][0])
		return;
	nd->gemm = 1;
	nd->m = d[a][0], nd->k = d[a][1], nd->n = d[a + 1][1], nd->count = b;
	nd->dtype = HS_BF16;
	for (size_t i = 0; i + 4 <= tyl; i++) {
		if (memcmp(ty + i, "Half", 4) == 0) {
			nd->dtype = HS_FP16;
			break;
		}
		if (memcmp(ty + i, "float", 5 <= tyl - i ? 5 : 4) == 0 && i + 5 <= tyl) {
			nd->dtype = HS_FP32;
			break;
		}
	}
}

static int parse_node(struct ctx *c, int rank, struct rank *rk, hs_pb *nc, struct node *nd, int64_t *scratch)
{
	hs_pb_field f, name = {0};
	const uint8_t *shp = NULL, *ty = NULL;
	size_t shl = 0, tyl = 0;
	uint64_t dur_us = 0;
	int r;
	nd->hsgroup = -1;
	nd->dep_first = (uint32_t)rk->ndeps;
	while ((r = hs_pb_next(nc, &f)) == 1) {
		switch (f.num) {
		case HS_ETN_ID: nd->id = f.v; break;
		case HS_ETN_NAME:
			if (f.wire == HS_PB_LEN)
				name = f;
			break;
		case HS_ETN_TYPE: nd->type = f.v <= HS_ET_COLL ? (uint8_t)f.v : 255; break;
		case HS_ETN_DURATION_MICROS: dur_us = f.v; break;
		case HS_ETN_CTRL_DEPS:
		case HS_ETN_DATA_DEPS: {
			hs_pb p = f.wire == HS_PB_LEN ? hs_pb_sub(nc, &f) : (hs_pb){0};
			uint64_t v = f.v;
			for (;;) {
				if (f.wire == HS_PB_LEN) {
					if (p.p >= p.end)
						break;
					if (hs_pb_varint(&p, &v))
						return fail_node(c, rank, nd, "its dependency list: %s (expected packed varints)",
								 p.why);
				}
				hs_xgrow(&rk->deps, &rk->capdeps, rk->ndeps + 1, sizeof *rk->deps);
				rk->deps[rk->ndeps++] = v;
				if (f.wire != HS_PB_LEN)
					break;
			}
			break;
		}
		case HS_ETN_INPUTS:
			if (f.wire == HS_PB_LEN) {
				hs_pb io = hs_pb_sub(nc, &f);
				hs_pb_field g;
				int q;
				while ((q = hs_pb_next(&io, &g)) == 1)
					if (g.wire == HS_PB_LEN && g.num == HS_ETIO_SHAPES)
						shp = g.data, shl = g.len;
					else if (g.wire == HS_PB_LEN && g.num == HS_ETIO_TYPES)
						ty = g.data, tyl = g.len;
				if (q < 0)
					return fail_node(c, rank, nd, "inputs: %s (expected an IOInfo message)", io.why);
			}
			break;
		case HS_ETN_ATTR:
			if (f.wire == HS_PB_LEN) {
				hs_pb ac = hs_pb_sub(nc, &f);
				if (parse_attr(c, rank, &ac, nd, scratch))
					return -1;
			}
			break;
		default: break;
		}
	}
	if (r < 0)
		return fail_node(c, rank, nd, "%s (expected a well-formed Node message)", nc->why);
	nd->dep_count = (uint32_t)(rk->ndeps - nd->dep_first);
	if (nd->type == 255)
		return fail_node(c, rank, nd, "type is not a NodeType (expected 0 to 7)");
	if (!nd->has_dur && dur_us) {
		if (dur_us > UINT64_MAX / 1000000)
			return fail_node(c, rank, nd, "duration_micros %" PRIu64 " is too long (expected under 1.8e13 us)",
					 dur_us);
		nd->dur_ps = dur_us * 1000000, nd->has_dur = 1;
	}
	if (nd->type == HS_ET_COMP && !nd->has_dur && name.data && shp)
		gemm_from(nd, &name, shp, shl, ty, tyl);
	return 0;
}

/* Parse one rank's file image into rk. */
static int parse_rank(struct ctx *c, int rank, const uint8_t *buf, size_t len, struct rank *rk, int64_t *scratch)
{
	hs_pb fc = {.p = buf, .end = buf + len, .file = buf};
	int k = 0;
	uint64_t last_id = 0;
	while (fc.p < fc.end) {
		size_t off = hs_pb_at(&fc);
		uint64_t n;
		if (hs_pb_varint(&fc, &n) || n > (uint64_t)(fc.end - fc.p)) {
			char where[96];
			if (k == 0)
				snprintf(where, sizeof where, "the GlobalMetadata message");
			else if (k == 1)
				snprintf(where, sizeof where, "node message 1 (the first)");
			else
				snprintf(where, sizeof where, "node message %d (after node %" PRIu64 ")", k, last_id);
			if (fc.why && fc.p >= fc.end && n == 0)
				return hs_err_set(c->err, HS_EINPUT,
						  "%s: byte %zu: %s: its length prefix is cut short: %s (expected a varint "
						  "length, then that many bytes)",
						  c->names[rank], off, where, fc.why);
			if (fc.why)
				return hs_err_set(c->err, HS_EINPUT, "%s: byte %zu: %s: its length prefix: %s (expected a "
								     "varint of at most 10 bytes)",
						  c->names[rank], off, where, fc.why);
			return hs_err_set(c->err, HS_EINPUT,
					  "%s: byte %zu: %s is cut short: its length prefix says %" PRIu64
					  " bytes but %zu remain (expected a complete length-delimited message: a truncated "
					  "file?)",
					  c->names[rank], off, where, n, (size_t)(fc.end - fc.p));
		}
		hs_pb mc = {.p = fc.p, .end = fc.p + n, .file = buf};
		fc.p += n;
		if (k++ == 0) { /* GlobalMetadata: its version is informative; nothing in it changes the graph */
			hs_pb_field f;
			int r;
			while ((r = hs_pb_next(&mc, &f)) == 1)
				;
			if (r < 0)
				return hs_err_set(c->err, HS_EINPUT, "%s: byte %zu: the GlobalMetadata message: %s "
								     "(expected a GlobalMetadata first)",
						  c->names[rank], hs_pb_at(&mc), mc.why);
			continue;
		}
		hs_xgrow(&rk->nodes, &rk->cap, rk->n + 1, sizeof *rk->nodes);
		struct node *nd = &rk->nodes[rk->n];
		memset(nd, 0, sizeof *nd);
		nd->off = off;
		nd->id = UINT64_MAX;
		if (parse_node(c, rank, rk, &mc, nd, scratch))
			return -1;
		last_id = nd->id;
		rk->n++;
	}
	if (k == 0)
		return hs_err_set(c->err, HS_EINPUT, "%s: the file is empty (expected a GlobalMetadata message, then "
						     "Node messages)",
				  c->names[rank]);
	c->info->nodes += rk->n;
	return 0;
}

/* ---- groups ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The index + 1 of the group with ranks r[0..n) (sorted here); 0 when a rank repeats. */
static uint32_t intern_group(struct ctx *c, int64_t *r, size_t n)
{
	qsort(r, n, sizeof *r, cmp_i64);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		if (i && r[i] == r[i - 1])
			return 0;
		h = (h ^ (uint64_t)r[i]) * 1099511628211ull;
	}
	struct kv *s = map_slot(&c->group_by_hash, h, n);
	for (uint32_t gi = s->used ? s->v : 0; gi; gi = c->group_next[gi - 1]) {
		const struct group *g = &c->groups[gi - 1];
		size_t i = 0;
		while (i < n && c->granks[g->first + i] == r[i])
			i++;
		if (i == n)
			return gi;
	}
	hs_xgrow(&c->groups, &c->capgroups, c->ngroups + 1, sizeof *c->groups);
	hs_xgrow(&c->group_next, &c->capnext, c->ngroups + 1, sizeof *c->group_next);
	hs_xgrow(&c->granks, &c->capgranks, c->ngranks + n, sizeof *c->granks);
	struct group *g = &c->groups[c->ngroups];
	memset(g, 0, sizeof *g);
	g->first = (uint32_t)c->ngranks;
	g->n = (uint32_t)n;
	g->count = hs_xcalloc(n, sizeof *g->count);
	for (size_t i = 0; i < n; i++)
		c->granks[c->ngranks++] = (int)r[i];
	c->group_next[c->ngroups] = s->used ? s->v : 0;
	uint32_t gi = (uint32_t)++c->ngroups;
	map_put(&c->group_by_hash, s, h, n, gi);
	return gi;
}

static uint32_t world_group(struct ctx *c, int64_t *scratch)
{
	if (!c->world) {
		for (int i = 0; i < c->nranks; i++)
			scratch[i] = i;
		c->world = intern_group(c, scratch, (size_t)c->nranks);
	}
	return c->world;
}

static int member_pos(const struct ctx *c, const struct group *g, int rank)
{
	int lo = 0, hi = (int)g->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, v = c->granks[g->first + mid];
		if (v == rank)
			return mid;
		if (v < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static const char *const comm_names[] = {"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER",
					 "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

/* Chakra's collective -> ours; -1 where hetsim has none. REDUCE_SCATTER_BLOCK is a reduce-scatter of equal
 * blocks (PyTorch's reduce_scatter_tensor), which is what ours is; a barrier is an all-reduce of nothing. */
static int coll_of(int t)
{
	switch (t) {
	case HS_ET_ALL_REDUCE: return HS_COLL_ALL_REDUCE;
	case HS_ET_REDUCE: return HS_COLL_REDUCE;
	case HS_ET_ALL_GATHER: return HS_COLL_ALL_GATHER;
	case HS_ET_BROADCAST: return HS_COLL_BROADCAST;
	case HS_ET_ALL_TO_ALL: return HS_COLL_ALL_TO_ALL;
	case HS_ET_REDUCE_SCATTER:
	case HS_ET_REDUCE_SCATTER_BLOCK: return HS_COLL_REDUCE_SCATTER;
	case HS_ET_BARRIER: return HS_COLL_ALL_REDUCE;
	default: return -1;
	}
}

/* The rendezvous of rank's next collective over group gi: a new one for the first member to get there, and
 * the same kind and size for every other. */
static int rendezvous(struct ctx *c, int rank, const struct node *nd, uint32_t gi, int coll, double bytes,
		      int32_t *out)
{
	struct group *g = &c->groups[gi - 1];
	int pos = member_pos(c, g, rank);
	uint32_t k = g->count[pos]++;
	if (k == g->nrv) {
		if (g->nrv == g->caprv) {
			g->caprv = g->caprv ? 2 * g->caprv : 16;
			g->rv = hs_xrealloc(g->rv, g->caprv * sizeof *g->rv);
			g->rv_coll = hs_xrealloc(g->rv_coll, g->caprv);
			g->rv_bytes = hs_xrealloc(g->rv_bytes, g->caprv * sizeof *g->rv_bytes);
		}
		g->rv[k] = g->n > 1 ? c->g->nrendezvous++ : -1;
		g->rv_coll[k] = (uint8_t)coll;
		g->rv_bytes[k] = bytes;
		g->nrv++;
	} else if (g->rv_coll[k] != coll || g->rv_bytes[k] != bytes) {
		return fail_node(c, rank, nd,
				 "collective %u over a group of %u ranks (from rank %d) is %s of %.0f bytes, but another "
				 "member's collective %u over that group is %s of %.0f bytes (expected the members of a "
				 "group to issue the same collectives in the same order)",
				 k + 1, g->n, c->granks[g->first], hs_coll_op_name(coll), bytes, k + 1,
				 hs_coll_op_name(g->rv_coll[k]), g->rv_bytes[k]);
	}
	*out = g->rv[k];
	return 0;
}

/* ---- one rank into the graph ---- */

/* The op a compute node runs: deduplicated by duration (or bytes), so that a trace of a million nodes of a
 * few distinct durations has a few ops and the executor's range memo stays small. */
static uint32_t node_op(struct ctx *c, const struct node *nd)
{
	hs_graph *g = c->g;
	struct map *m = NULL;
	struct kv *s = NULL;
	uint64_t ka = 0, kb = 0;
	hs_op o = {.count = 1, .dtype = HS_BF16};
	if (nd->type == HS_ET_COMP && nd->has_dur) {
		m = &c->dur_op;
		ka = nd->dur_ps;
		s = map_slot(m, ka, kb);
		o.kind = HS_OP_TIMED;
		o.name = "chakra_comp";
		o.dur_s = (double)nd->dur_ps * 1e-12; /* hs_time_from_s rounds it back to these picoseconds */
	} else if (nd->type == HS_ET_COMP && nd->gemm) {
		o.kind = HS_OP_GEMM;
		o.name = "chakra_gemm";
		o.m = nd->m, o.n = nd->n, o.k = nd->k, o.count = nd->count, o.dtype = nd->dtype;
		o.flops = 2 * nd->m * nd->n * nd->k * nd->count;
		o.bytes = (nd->m * nd->k + nd->k * nd->n + nd->m * nd->n) * nd->count * hs_dtype_bytes(nd->dtype);
		c->info->priced++;
	} else if (nd->type == HS_ET_COMP) { /* nothing to time it by */
		m = &c->dur_op;
		s = map_slot(m, ka, kb);
		o.kind = HS_OP_TIMED;
		o.name = "chakra_comp";
		c->info->unpriced++;
	} else { /* a memory load or store of tensor_size bytes, at the device's copy speed */
		uint64_t bits;
		memcpy(&bits, &nd->bytes, 8);
		m = &c->mem_op;
		ka = bits;
		s = map_slot(m, ka, kb);
		o.kind = HS_OP_MEM;
		o.name = nd->type == HS_ET_MEM_LOAD ? "chakra_mem_load" : "chakra_mem_store";
		o.family = HS_MF_COPY;
		o.bytes = nd->bytes;
	}
	if (s && s->used)
		return s->v;
	hs_xgrow(&g->ops, &g->capops, g->nops + 1, sizeof *g->ops);
	g->ops[g->nops] = o;
	if (s)
		map_put(m, s, ka, kb, (uint32_t)g->nops);
	return (uint32_t)g->nops++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* A binary min-heap of local indices: Kahn's algorithm takes the lowest file position among the ready. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, size_t *n)
{
	uint32_t top = h[0], v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t mv = v;
		if (l < *n && h[l] < mv)
			m = l, mv = h[l];
		if (r < *n && h[r] < mv)
			m = r;
		if (m == i)
			break;
		h[i] = h[m];
		i = m;
	}
	if (*n)
		h[i] = v;
	return top;
}

static int emit_rank(struct ctx *c, int rank, struct rank *rk, int64_t *scratch)
{
	hs_graph *g = c->g;
	size_t n = rk->n;
	int rc = -1;
	struct map ids = {0};
	uint32_t *indeg = hs_xcalloc(n + 1, sizeof *indeg), *succ_first = hs_xcalloc(n + 2, sizeof *succ_first);
	uint32_t *succ = hs_xmalloc((rk->ndeps + 1) * sizeof *succ), *heap = hs_xmalloc((n + 1) * sizeof *heap);
	uint32_t *order = hs_xmalloc((n + 1) * sizeof *order);
	/* what each node's completion stands for: its own task, or (a node that is no task) the union of what its
	 * dependencies stand for */
	uint32_t *done_first = hs_xmalloc((n + 1) * sizeof *done_first), *done_n = hs_xmalloc((n + 1) * sizeof *done_n);
	uint32_t *done = NULL, *tmp = NULL;
	size_t ndone = 0, capdone = 0, captmp = 0;
	/* ids that count up from the first node's (what Chakra's converter and generator write) are looked up
	 * by subtraction; any other numbering goes through a hash map */
	uint64_t base = n ? rk->nodes[0].id : 0;
	int dense = 1;
	for (size_t i = 0; i < n && dense; i++)
		dense = rk->nodes[i].id == base + i && base + i >= base;
	for (size_t i = 0; i < n && !dense; i++) {
		struct node *nd = &rk->nodes[i];
		struct kv *s = map_slot(&ids, nd->id, 0);
		if (s->used) {
			fail_node(c, rank, nd, "its id is also the id of the node at byte %zu (expected distinct ids)",
				  rk->nodes[s->v].off);
			goto out;
		}
		map_put(&ids, s, nd->id, 0, (uint32_t)i);
	}
	for (size_t i = 0; i < n; i++) { /* dependency ids -> local indices; successor lists */
		struct node *nd = &rk->nodes[i];
		for (uint32_t k = 0; k < nd->dep_count; k++) {
			uint64_t id = rk->deps[nd->dep_first + k];
			struct kv dk = {.used = dense && id - base < n, .v = (uint32_t)(id - base)};
			struct kv *s = dense ? &dk : map_slot(&ids, id, 0);
			if (!s->used) {
				fail_node(c, rank, nd, "depends on node %" PRIu64 ", which %s does not hold (expected the "
							"id of a node in the same file)",
					  id, c->names[rank]);
				goto out;
			}
			rk->deps[nd->dep_first + k] = s->v;
			succ_first[s->v + 1]++;
			indeg[i]++;
		}
	}
	for (size_t i = 0; i < n; i++)
		succ_first[i + 1] += succ_first[i];
	uint32_t *fill = hs_xcalloc(n + 1, sizeof *fill);
	for (size_t i = 0; i < n; i++) {
		const struct node *nd = &rk->nodes[i];
		for (uint32_t k = 0; k < nd->dep_count; k++) {
			uint32_t d = (uint32_t)rk->deps[nd->dep_first + k];
			succ[succ_first[d] + fill[d]++] = (uint32_t)i;
		}
	}
	free(fill);
	size_t nh = 0, no = 0;
	for (size_t i = 0; i < n; i++)
		if (!indeg[i])
			heap_push(heap, &nh, (uint32_t)i);
	while (nh) {
		uint32_t i = heap_pop(heap, &nh);
		order[no++] = i;
		for (uint32_t k = succ_first[i]; k < succ_first[i + 1]; k++)
			if (--indeg[succ[k]] == 0)
				heap_push(heap, &nh, succ[k]);
	}
	if (no < n) {
		/* a node left with dependencies is on a cycle or after one: walk back through unfinished
		 * dependencies until a node repeats, which is on the cycle */
		size_t i = 0;
		while (!indeg[i])
			i++;
		uint8_t *seen = hs_xcalloc(n, 1);
		while (!seen[i]) {
			seen[i] = 1;
			const struct node *nd = &rk->nodes[i];
			for (uint32_t k = 0; k < nd->dep_count; k++) {
				uint32_t d = (uint32_t)rk->deps[nd->dep_first + k];
				if (indeg[d]) {
					i = d;
					break;
				}
			}
		}
		free(seen);
		fail_node(c, rank, &rk->nodes[i], "is on a dependency cycle (expected the dependencies to form an "
						  "acyclic graph)");
		goto out;
	}
	for (size_t oi = 0; oi < n; oi++) {
		uint32_t i = order[oi];
		struct node *nd = &rk->nodes[i];
		/* the union of what its dependencies stand for, deduplicated */
		size_t nt = 0;
		for (uint32_t k = 0; k < nd->dep_count; k++) {
			uint32_t d = (uint32_t)rk->deps[nd->dep_first + k];
			hs_xgrow(&tmp, &captmp, nt + done_n[d], sizeof *tmp);
			if (done_n[d])
				memcpy(tmp + nt, done + done_first[d], done_n[d] * sizeof *tmp);
			nt += done_n[d];
		}
		if (nt > 1) {
			qsort(tmp, nt, sizeof *tmp, cmp_u32);
			size_t u = 1;
			for (size_t q = 1; q < nt; q++)
				if (tmp[q] != tmp[u - 1])
					tmp[u++] = tmp[q];
			nt = u;
		}
		hs_task t = {.rep = rank, .peer = -1, .op_count = 0, .scale = 1, .rendezvous = -1};
		int is_task = 1;
		switch (nd->type) {
		case HS_ET_COMP:
		case HS_ET_MEM_LOAD:
		case HS_ET_MEM_STORE:
			t.kind = HS_T_COMPUTE, t.stream = HS_S_COMPUTE, t.what = HS_W_FWD;
			t.op_first = node_op(c, nd), t.op_count = 1;
			break;
		case HS_ET_COLL: {
			int coll = nd->has_ctype ? coll_of(nd->comm_type) : -1;
			if (!nd->has_ctype || coll < 0) {
				fail_node(c, rank, nd, nd->has_ctype ? "comm_type %s is not supported (expected ALL_REDUCE, "
								       "REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, "
								       "REDUCE_SCATTER[_BLOCK] or BARRIER)"
								     : "a collective without a comm_type attribute%s (expected "
								       "the CollectiveCommType)",
					  nd->has_ctype ? comm_names[nd->comm_type] : "");
				goto out;
			}
			if (!nd->has_size && nd->comm_type != HS_ET_BARRIER) {
				fail_node(c, rank, nd, "a collective without a comm_size attribute (expected its bytes)");
				goto out;
			}
			double bytes = nd->comm_type == HS_ET_BARRIER ? 0 : nd->bytes;
			uint32_t gi = nd->grp ? nd->grp : world_group(c, scratch);
			/* a collective inside a layer (hetsim's writer marks it) blocks the compute stream, as the
			 * layer's collectives do in a built-in workload; any other runs on the comm stream */
			t.kind = HS_T_COLL, t.stream = nd->in_layer ? HS_S_COMPUTE : HS_S_COMM;
			t.what = nd->in_layer ? HS_W_FWD : HS_W_GRAD_REDUCE;
			t.group = (uint8_t)(nd->hsgroup >= 0 ? nd->hsgroup : HS_GROUP_DP);
			t.coll = (uint8_t)coll, t.bytes = bytes, t.xgroup = gi;
			if (rendezvous(c, rank, nd, gi, coll, bytes, &t.rendezvous))
				goto out;
			break;
		}
		case HS_ET_SEND:
		case HS_ET_RECV: {
			int send = nd->type == HS_ET_SEND;
			int64_t peer = send ? nd->dst : nd->src;
			if (!(send ? nd->has_dst : nd->has_src) || peer == rank) {
				fail_node(c, rank, nd, "a %s %s (expected a %s attribute naming another rank)",
					  send ? "send" : "receive", peer == rank ? "to or from itself" : "without a peer",
					  send ? "comm_dst" : "comm_src");
				goto out;
			}
			int64_t src = send ? rank : peer, dst = send ? peer : rank;
			if (send) {
				if (!nd->has_size) {
					fail_node(c, rank, nd, "a send without comm_size or tensor_size (expected its bytes)");
					goto out;
				}
				t.kind = HS_T_SEND, t.stream = HS_S_P2P, t.what = HS_W_P2P, t.group = HS_GROUP_PP;
				t.peer = (int32_t)dst, t.bytes = nd->bytes;
				struct kv *s = map_slot(&c->sends, (uint64_t)src << 32 | (uint64_t)dst, (uint64_t)nd->tag);
				if (!s->used) {
					size_t cap = c->capsendkeys;
					hs_xgrow(&c->send_tasks, &c->capsendkeys, c->nsendkeys + 1, sizeof *c->send_tasks);
					size_t cap2 = cap;
					hs_xgrow(&c->send_n, &cap, c->nsendkeys + 1, sizeof *c->send_n);
					hs_xgrow(&c->send_cap, &cap2, c->nsendkeys + 1, sizeof *c->send_cap);
					c->send_tasks[c->nsendkeys] = NULL;
					c->send_n[c->nsendkeys] = c->send_cap[c->nsendkeys] = 0;
					map_put(&c->sends, s, (uint64_t)src << 32 | (uint64_t)dst, (uint64_t)nd->tag,
						(uint32_t)c->nsendkeys++);
				}
				size_t q = s->v;
				hs_xgrow(&c->send_tasks[q], &c->send_cap[q], c->send_n[q] + 1, sizeof **c->send_tasks);
				c->send_tasks[q][c->send_n[q]++] = (uint32_t)g->ntasks;
			} else {
				/* a receive is no task: its dependents wait for the matching send (resolved once every
				 * rank is read) and for what the receive itself waited for */
				struct kv *s = map_slot(&c->recv_seq, (uint64_t)src << 32 | (uint64_t)dst, (uint64_t)nd->tag);
				uint32_t seq = s->used ? s->v : 0;
				map_put(&c->recv_seq, s, (uint64_t)src << 32 | (uint64_t)dst, (uint64_t)nd->tag, seq + 1);
				hs_xgrow(&c->recvs, &c->caprecvs, c->nrecvs + 1, sizeof *c->recvs);
				c->recvs[c->nrecvs] = (struct pending_recv){src, dst, nd->tag, seq, rank, nd->id};
				hs_xgrow(&tmp, &captmp, nt + 1, sizeof *tmp);
				tmp[nt++] = RECV_MARK | (uint32_t)c->nrecvs++;
				is_task = 0;
			}
			break;
		}
		default: /* metadata and invalid nodes: no work */
			c->info->skipped++;
			is_task = 0;
			break;
		}
		done_first[i] = (uint32_t)ndone;
		if (is_task) {
			if (g->ntasks >= RECV_MARK || g->ndeps + nt >= UINT32_MAX) {
				fail_node(c, rank, nd, "the trace has more than 2^31 tasks (expected fewer)");
				goto out;
			}
			hs_xgrow(&g->tasks, &g->captasks, g->ntasks + 1, sizeof *g->tasks);
			hs_xgrow(&g->deps, &g->capdeps, g->ndeps + nt, sizeof *g->deps);
			t.dep_first = (uint32_t)g->ndeps, t.dep_count = (uint32_t)nt;
			if (nt) /* (memcpy of nothing from a NULL tmp is undefined) */
				memcpy(g->deps + g->ndeps, tmp, nt * sizeof *tmp);
			g->ndeps += nt;
			hs_xgrow(&done, &capdone, ndone + 1, sizeof *done);
			done[ndone++] = (uint32_t)g->ntasks;
			g->tasks[g->ntasks++] = t;
		} else {
			hs_xgrow(&done, &capdone, ndone + nt, sizeof *done);
			if (nt)
				memcpy(done + ndone, tmp, nt * sizeof *tmp);
			ndone += nt;
		}
		done_n[i] = (uint32_t)(ndone - done_first[i]);
	}
	rc = 0;
out:
	map_free(&ids);
	free(indeg);
	free(succ_first);
	free(succ);
	free(heap);
	free(order);
	free(done_first);
	free(done_n);
	free(done);
	free(tmp);
	return rc;
}

/* Reorder the tasks, emitted rank after rank, so that the k-th task of every rank sits beside the k-th of the
 * others: the ranks of a trace run in step, and the executor then touches neighbouring memory from one event
 * to the next instead of one place per rank (tests/chakra/gen_scale.py, 1,024 ranks of 10,000 nodes: the
 * whole run's user CPU time fell from 7.1 s to 4.8 s). Each rank's tasks keep their order, which is every
 * stream's order; no simulated time changes. */
struct repcnt {
	size_t cnt;
	int rep;
};

static int cmp_cnt_desc(const void *a, const void *b)
{
	const struct repcnt *x = a, *y = b;
	return x->cnt != y->cnt ? (x->cnt < y->cnt) - (x->cnt > y->cnt) : (x->rep > y->rep) - (x->rep < y->rep);
}

static void interleave(hs_graph *g, int nreps)
{
	size_t n = g->ntasks;
	size_t *cnt = hs_xcalloc((size_t)nreps, sizeof *cnt), *first = hs_xcalloc((size_t)nreps, sizeof *first);
	for (size_t i = 0; i < n; i++)
		cnt[g->tasks[i].rep]++;
	for (int r = 1; r < nreps; r++)
		first[r] = first[r - 1] + cnt[r - 1];
	struct repcnt *rc = hs_xmalloc((size_t)nreps * sizeof *rc);
	for (int r = 0; r < nreps; r++)
		rc[r] = (struct repcnt){cnt[r], r};
	qsort(rc, (size_t)nreps, sizeof *rc, cmp_cnt_desc); /* the reps with tasks left are a prefix */
	int *byc = hs_xmalloc((size_t)nreps * sizeof *byc);
	for (int r = 0; r < nreps; r++)
		byc[r] = rc[r].rep;
	free(rc);
	uint32_t *to = hs_xmalloc((n + 1) * sizeof *to);
	size_t k = 0;
	int active = nreps;
	for (size_t p = 0; k < n; p++) {
		while (active > 0 && cnt[byc[active - 1]] <= p)
			active--;
		for (int j = 0; j < active; j++)
			to[first[byc[j]] + p] = (uint32_t)k++;
	}
	hs_task *nt = hs_xmalloc((n + 1) * sizeof *nt);
	for (size_t i = 0; i < n; i++)
		nt[to[i]] = g->tasks[i];
	uint32_t *nd = hs_xmalloc((g->ndeps + 1) * sizeof *nd);
	size_t q = 0;
	for (size_t i = 0; i < n; i++) {
		hs_task *t = &nt[i];
		uint32_t f = t->dep_first;
		t->dep_first = (uint32_t)q;
		for (uint32_t d = 0; d < t->dep_count; d++)
			nd[q++] = to[g->deps[f + d]];
	}
	free(g->tasks);
	free(g->deps);
	g->tasks = nt;
	g->captasks = n + 1;
	g->deps = nd;
	g->capdeps = g->ndeps + 1;
	free(to);
	free(byc);
	free(cnt);
	free(first);
}

/* Receives -> their sends; every group's members issued as many collectives. */
static int finish(struct ctx *c)
{
	hs_graph *g = c->g;
	uint32_t *send_of = hs_xmalloc((c->nrecvs + 1) * sizeof *send_of);
	for (size_t i = 0; i < c->nrecvs; i++) {
		const struct pending_recv *p = &c->recvs[i];
		struct kv *s = map_slot(&c->sends, (uint64_t)p->src << 32 | (uint64_t)p->dst, (uint64_t)p->tag);
		size_t have = s->used ? c->send_n[s->v] : 0;
		if (p->seq >= have) {
			free(send_of);
			return hs_err_set(c->err, HS_EINPUT,
					  "%s: node %" PRIu64 ": receive %u from rank %" PRId64 " with tag %" PRId64
					  " has no matching send: %s sends %zu to rank %" PRId64
					  " with that tag (expected a COMM_SEND_NODE for every COMM_RECV_NODE)",
					  c->names[p->rank], p->id, p->seq + 1, p->src, p->tag, c->names[p->src], have,
					  p->dst);
		}
		send_of[i] = c->send_tasks[s->v][p->seq];
	}
	for (size_t i = 0; i < g->ndeps; i++)
		if (g->deps[i] & RECV_MARK)
			g->deps[i] = send_of[g->deps[i] & ~RECV_MARK];
	free(send_of);
	/* a dependency may now repeat (two receives of one send): harmless to the executor, which counts it
	 * twice on both sides */
	for (size_t gi = 0; gi < c->ngroups; gi++) {
		const struct group *q = &c->groups[gi];
		for (uint32_t m = 1; m < q->n; m++)
			if (q->count[m] != q->count[0])
				return hs_err_set(c->err, HS_EINPUT,
						  "%s: issues %u collectives over the group of %u ranks {%d, %d, ...} but %s "
						  "issues %u (expected every member of a group to take part in each of its "
						  "collectives)",
						  c->names[c->granks[q->first + m]], q->count[m], q->n, c->granks[q->first],
						  c->granks[q->first + (q->n > 1)], c->names[c->granks[q->first]], q->count[0]);
	}
	interleave(g, c->nranks);
	/* the groups, in the graph's explicit-group table */
	g->nxg = (uint32_t)c->ngroups;
	g->xg_first = hs_xmalloc((c->ngroups + 1) * sizeof *g->xg_first);
	g->xg_ranks = hs_xmalloc((c->ngranks + 1) * sizeof *g->xg_ranks);
	for (size_t gi = 0; gi < c->ngroups; gi++)
		g->xg_first[gi] = c->groups[gi].first;
	g->xg_first[c->ngroups] = (uint32_t)c->ngranks;
	if (c->ngranks)
		memcpy(g->xg_ranks, c->granks, c->ngranks * sizeof *g->xg_ranks);
	g->nreps = c->nranks;
	g->reps = hs_xcalloc((size_t)c->nranks, sizeof *g->reps);
	for (int r = 0; r < c->nranks; r++)
		g->reps[r] = (hs_rep){.stage = 0, .dp_index = r, .multiplicity = 1};
	return 0;
}

static void ctx_free(struct ctx *c)
{
	free(c->granks);
	for (size_t i = 0; i < c->ngroups; i++) {
		free(c->groups[i].count);
		free(c->groups[i].rv);
		free(c->groups[i].rv_coll);
		free(c->groups[i].rv_bytes);
	}
	free(c->groups);
	free(c->group_next);
	map_free(&c->group_by_hash);
	for (size_t i = 0; i < c->nsendkeys; i++)
		free(c->send_tasks[i]);
	free(c->send_tasks);
	free(c->send_n);
	free(c->send_cap);
	map_free(&c->sends);
	map_free(&c->recv_seq);
	free(c->recvs);
	map_free(&c->dur_op);
	map_free(&c->mem_op);
}

/* A source of rank files: in memory, or read from disk one at a time. */
typedef int (*rank_src)(void *ctx, int rank, const uint8_t **buf, size_t *len, hs_err *err);

static int read_all(rank_src src, void *sctx, const char *const *names, int nranks, int ndevices, hs_graph *g,
		    hs_chakra_info *info, hs_err *err)
{
	memset(g, 0, sizeof *g);
	memset(info, 0, sizeof *info);
	info->ranks = nranks;
	if (nranks > ndevices)
		return hs_err_set(err, HS_EINPUT,
				  "%s: the trace has %d ranks (files %s to %s) but the scenario's cluster has %d devices "
				  "(expected at most one rank per device: rank r runs on device r)",
				  names[0], nranks, names[0], names[nranks - 1], ndevices);
	struct ctx c = {.names = names, .nranks = nranks, .ndevices = ndevices, .g = g, .info = info, .err = err};
	int64_t *scratch = hs_xmalloc(((size_t)nranks + 1) * sizeof *scratch);
	int rc = -1;
	for (int r = 0; r < nranks; r++) {
		const uint8_t *buf;
		size_t len;
		if (src(sctx, r, &buf, &len, err))
			goto out;
		info->bytes += len;
		struct rank rk = {0};
		int bad = parse_rank(&c, r, buf, len, &rk, scratch) || emit_rank(&c, r, &rk, scratch);
		free(rk.nodes);
		free(rk.deps);
		if (bad)
			goto out;
	}
	rc = finish(&c);
out:
	free(scratch);
	ctx_free(&c);
	if (rc)
		hs_graph_free(g);
	return rc;
}

struct mem_src {
	const uint8_t *const *files;
	const size_t *len;
};

static int from_mem(void *ctx, int rank, const uint8_t **buf, size_t *len, hs_err *err)
{
	(void)err;
	struct mem_src *m = ctx;
	*buf = m->files[rank];
	*len = m->len[rank];
	return 0;
}

int hs_chakra_read_mem(const uint8_t *const *files, const size_t *len, const char *const *names, int nranks,
		       int ndevices, hs_graph *g, hs_chakra_info *info, hs_err *err)
{
	struct mem_src m = {files, len};
	return read_all(from_mem, &m, names, nranks, ndevices, g, info, err);
}

struct disk_src {
	char *buf;
	char **names;
};

static int from_disk(void *ctx, int rank, const uint8_t **buf, size_t *len, hs_err *err)
{
	struct disk_src *d = ctx;
	free(d->buf);
	d->buf = hs_read_file(d->names[rank], HS_CHAKRA_MAX_FILE, "a Chakra ET file", len, err);
	*buf = (const uint8_t *)d->buf;
	return d->buf ? 0 : -1;
}

int hs_chakra_read(const char *prefix, int ndevices, hs_graph *g, hs_chakra_info *info, hs_err *err)
{
	memset(g, 0, sizeof *g);
	/* the ranks are the files PREFIX.0.et, PREFIX.1.et, ... up to the first missing one (one past the
	 * devices at most: a rank too many is reported as such) */
	struct disk_src d = {0};
	size_t cap = 0;
	int n = 0;
	for (;; n++) {
		char path[1100];
		if (snprintf(path, sizeof path, "%s.%d.et", prefix, n) >= (int)sizeof path)
			return hs_err_set(err, HS_EINPUT, "%s: the prefix is too long (expected under 1000 characters)",
					  prefix);
		FILE *f = n <= ndevices ? fopen(path, "rb") : NULL;
		if (!f)
			break;
		fclose(f);
		hs_xgrow(&d.names, &cap, (size_t)n + 1, sizeof *d.names);
		d.names[n] = hs_xstrdup(path);
	}
	int rc;
	if (n == 0)
		rc = hs_err_set(err, HS_EINPUT, "%s.0.et: cannot open (expected the Chakra ET of rank 0: a workload "
						"is the files PREFIX.0.et, PREFIX.1.et, ...)",
				prefix);
	else
		rc = read_all(from_disk, &d, (const char *const *)d.names, n, ndevices, g, info, err);
	free(d.buf);
	for (int i = 0; i < n; i++)
		free(d.names[i]);
	free(d.names);
	return rc;
}
