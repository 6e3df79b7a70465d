/* A built-in workload's simulated step -> Chakra ET files, one per rank (traces/chakra.h).
 *
 * The step's per-stage programs are expanded for every rank of the job as the task-graph export does
 * (traces/graph_export.h: concrete groups, pipeline peers, the receiving half of every send), then each rank's
 * tasks are written in graph order with ids 0, 1, ... in its file:
 * - a compute task is a COMP_NODE whose duration is what the simulation gave it (its kernels and host waits),
 *   as duration_micros (rounded) and exactly as the attribute duration_ps; the collectives inside it (TP, CP
 *   and EP collectives in a layer, hs_result.inl) are COMM_COLL_NODEs of their own between the pieces of
 *   compute before and after them (in_layer.c below says how they are placed);
 * - a collective is a COMM_COLL_NODE with comm_type, comm_size (bytes, as nccl-tests counts them), comm_group
 *   (the member ranks) and hetsim_group (tp, cp, dp, ep or pp: which parallelism it belongs to);
 * - a send is a COMM_SEND_NODE with comm_dst, a receive a COMM_RECV_NODE with comm_src, both with comm_size
 *   and the same comm_tag (the transfer's instance id).
 * Dependencies in the file are data_deps within the rank (a receive stands for the cross-rank edge), plus
 * ctrl_deps on the previous task of the same stream, since a Chakra consumer has no streams: the order in
 * which hetsim's executor runs each stream is then part of the graph. A compute task written as pieces is a
 * chain: its first piece takes the task's dependencies, each node depends on the one before, and what depended
 * on the task depends on its last piece. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/base/outfile.h"
#include "traces/chakra.h"
#include "traces/chakra_wire.h"
#include "traces/graph_export.h"
#include "traces/chakra_inlayer.h"

static void attr_int(hs_pbw *w, hs_pbw *a, const char *name, int64_t v)
{
	hs_pbw_clear(a);
	hs_pbw_str(a, HS_ETA_NAME, name);
	hs_pbw_uint(a, HS_ETA_INT64, (uint64_t)v);
	hs_pbw_bytes(w, HS_ETN_ATTR, a->p, a->n);
}

static void attr_str(hs_pbw *w, hs_pbw *a, const char *name, const char *v)
{
	hs_pbw_clear(a);
	hs_pbw_str(a, HS_ETA_NAME, name);
	hs_pbw_str(a, HS_ETA_STRING, v);
	hs_pbw_bytes(w, HS_ETN_ATTR, a->p, a->n);
}

static void attr_bool(hs_pbw *w, hs_pbw *a, const char *name, int v)
{
	hs_pbw_clear(a);
	hs_pbw_str(a, HS_ETA_NAME, name);
	hs_pbw_uint(a, HS_ETA_BOOL, (uint64_t)(v != 0));
	hs_pbw_bytes(w, HS_ETN_ATTR, a->p, a->n);
}

/* comm_group as an Int64List of the member ranks (packed) */
static void attr_group(hs_pbw *w, hs_pbw *a, hs_pbw *l, const hs_xgroup *g)
{
	hs_pbw_clear(l);
	for (int i = 0; i < g->n; i++)
		hs_pbw_varint(l, (uint64_t)g->ranks[i]);
	hs_pbw_clear(a);
	hs_pbw_str(a, HS_ETA_NAME, "comm_group");
	hs_pbw tmp = {0};
	hs_pbw_bytes(&tmp, 1, l->p, l->n); /* Int64List.values = 1, packed */
	hs_pbw_bytes(a, HS_ETA_INT64_LIST, tmp.p, tmp.n);
	hs_pbw_free(&tmp);
	hs_pbw_bytes(w, HS_ETN_ATTR, a->p, a->n);
}

static const char *const group_names[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
static const char *const what_names[] = {"fwd", "bwd", "bwd_input", "bwd_weight", "optimizer", "grad_reduce",
					 "param_gather", "p2p"};

/* The nodes of compute task t written as pieces, from its first id `id`: compute, then for each collective
 * inside it a COMM_COLL_NODE and the compute after it, in a chain. The caller has begun the first piece in m
 * (its id, the task's name, COMP_NODE and the task's dependencies). Returns the last piece's id. */
static uint32_t write_pieces(const hs_sim *sim, const hs_graph_export *x, const hs_xtask *t, const hs_chakra_inl *il,
			     uint32_t id, hs_pbw *m, hs_pbw *a, hs_pbw *l, hs_pbw *out, size_t *nodes,
			     const char *name)
{
	const hs_graph *g = &sim->b.graph;
	const hs_chakra_piece *pc = hs_chakra_inl_pieces(il, t->src);
	int np = hs_chakra_inl_npieces(il, t->src);
	for (int k = 0; k < np; k++) {
		char nm[128];
		if (k > 0) {
			hs_pbw_clear(m);
			hs_pbw_uint(m, HS_ETN_ID, id + (uint32_t)k);
			hs_pbw_uint(m, HS_ETN_DATA_DEPS, id + (uint32_t)k - 1); /* packed list of one */
		}
		if (pc[k].op == UINT32_MAX) {
			if (k > 0) { /* the first piece's name and type are the task's, written by the caller */
				snprintf(nm, sizeof nm, "%s part %d", name, k / 2);
				hs_pbw_str(m, HS_ETN_NAME, nm);
				hs_pbw_uint(m, HS_ETN_TYPE, HS_ET_COMP);
			}
			hs_pbw_uint(m, HS_ETN_DURATION_MICROS, (pc[k].ps + 500000) / 1000000);
			attr_bool(m, a, "is_cpu_op", 0);
			attr_int(m, a, "duration_ps", (int64_t)pc[k].ps);
		} else {
			const hs_op *o = &g->ops[pc[k].op];
			snprintf(nm, sizeof nm, "%s %s", name, o->name ? o->name : "collective");
			hs_pbw_str(m, HS_ETN_NAME, nm);
			hs_pbw_uint(m, HS_ETN_TYPE, HS_ET_COLL);
			attr_bool(m, a, "is_cpu_op", 0);
			attr_int(m, a, "comm_type", hs_chakra_comm_type(o->coll));
			attr_int(m, a, "comm_size", llround(o->bytes));
			attr_group(m, a, l, &x->groups[x->ranks[t->rank].groups[o->group]]);
			attr_str(m, a, "hetsim_group", group_names[o->group]);
			attr_bool(m, a, "hetsim_in_layer", 1);
		}
		hs_pbw_delimited(out, m);
		++*nodes;
	}
	return id + (uint32_t)np - 1;
}

/* One rank's file into `out` (GlobalMetadata, then its nodes). local[i] is the first id of task i's nodes,
 * last[i] its last (they differ for a compute task written as pieces). */
static int write_rank(const hs_sim *sim, const hs_graph_export *x, const hs_chakra_inl *il, int rank,
		      const uint32_t *local, const uint32_t *last, hs_pbw *out, size_t *nodes, hs_err *err)
{
	const hs_graph *g = &sim->b.graph;
	hs_pbw m = {0}, a = {0}, l = {0}, deps = {0};
	hs_pbw_clear(out);
	/* GlobalMetadata: the schema version Chakra's own tools write, and who wrote it */
	hs_pbw_str(&m, HS_ETG_VERSION, "0.0.4");
	hs_pbw_clear(&a);
	hs_pbw_str(&a, HS_ETA_NAME, "generator");
	hs_pbw_str(&a, HS_ETA_STRING, "hetsim export-graph --format chakra");
	hs_pbw_bytes(&m, HS_ETG_ATTR, a.p, a.n);
	hs_pbw_delimited(out, &m);
	uint32_t prev[HS_S_COUNT];
	for (int k = 0; k < HS_S_COUNT; k++)
		prev[k] = UINT32_MAX;
	int rc = 0;
	for (size_t i = 0; i < x->ntasks && !rc; i++) {
		const hs_xtask *t = &x->tasks[i];
		if (t->rank != rank)
			continue;
		const hs_task *st = &g->tasks[t->src];
		hs_pbw_clear(&m);
		hs_pbw_uint(&m, HS_ETN_ID, local[i]);
		char name[96];
		const char *what = st->what < sizeof what_names / sizeof *what_names ? what_names[st->what] : "task";
		if (t->kind == HS_XT_RECV)
			what = "recv";
		snprintf(name, sizeof name, "%s mb%d chunk%d (task %u)", what, st->mb, st->chunk, t->src);
		hs_pbw_str(&m, HS_ETN_NAME, name);
		int type = t->kind == HS_XT_COMPUTE ? HS_ET_COMP
			   : t->kind == HS_XT_COLL  ? HS_ET_COLL
			   : t->kind == HS_XT_SEND  ? HS_ET_SEND
						    : HS_ET_RECV;
		hs_pbw_uint(&m, HS_ETN_TYPE, (uint64_t)type);
		/* the stream order (receives are no stream work: see above) */
		int stream = t->kind == HS_XT_RECV ? -1 : st->stream;
		if (stream >= 0 && prev[stream] != UINT32_MAX)
			hs_pbw_uint(&m, HS_ETN_CTRL_DEPS, prev[stream]);
		hs_pbw_clear(&deps);
		for (uint32_t k = 0; k < t->dep_count; k++) {
			uint32_t d = x->deps[t->dep_first + k];
			if (x->tasks[d].rank == rank)
				hs_pbw_varint(&deps, last[d]);
		}
		if (deps.n)
			hs_pbw_bytes(&m, HS_ETN_DATA_DEPS, deps.p, deps.n);
		if (t->kind == HS_XT_COMPUTE && hs_chakra_inl_npieces(il, t->src) > 0) {
			uint32_t end = write_pieces(sim, x, t, il, local[i], &m, &a, &l, out, nodes, name);
			if (stream >= 0)
				prev[stream] = end;
			continue;
		}
		if (t->kind == HS_XT_COMPUTE) {
			const hs_span *sp = &sim->r.spans[t->src];
			/* the span's two instants are whole picoseconds: their difference rounds back exactly */
			double ps = llround((sp->end - sp->start) * 1e12);
			uint64_t dps = ps > 0 ? (uint64_t)ps : 0;
			hs_pbw_uint(&m, HS_ETN_DURATION_MICROS, (dps + 500000) / 1000000);
			attr_bool(&m, &a, "is_cpu_op", 0);
			attr_int(&m, &a, "duration_ps", (int64_t)dps);
		} else if (t->kind == HS_XT_COLL) {
			int ct = hs_chakra_comm_type(st->coll);
			if (ct < 0) {
				rc = hs_err_set(err, HS_EINTERNAL, "internal error: task %u: collective %d has no Chakra "
								   "comm_type",
						t->src, st->coll);
				break;
			}
			attr_bool(&m, &a, "is_cpu_op", 0);
			attr_int(&m, &a, "comm_type", ct);
			attr_int(&m, &a, "comm_size", llround(st->bytes));
			attr_group(&m, &a, &l, &x->groups[t->group]);
			attr_str(&m, &a, "hetsim_group", group_names[st->group]);
		} else {
			attr_bool(&m, &a, "is_cpu_op", 0);
			attr_int(&m, &a, t->kind == HS_XT_SEND ? "comm_dst" : "comm_src", t->peer);
			attr_int(&m, &a, "comm_size", llround(st->bytes));
			attr_int(&m, &a, "comm_tag", t->inst);
		}
		if (stream >= 0)
			prev[stream] = local[i];
		hs_pbw_delimited(out, &m);
		++*nodes;
	}
	hs_pbw_free(&m);
	hs_pbw_free(&a);
	hs_pbw_free(&l);
	hs_pbw_free(&deps);
	return rc;
}

int hs_chakra_write(const char *prefix, const hs_sim *sim, int *files, size_t *nodes, hs_err *err)
{
	*files = 0;
	*nodes = 0;
	const hs_parallel *p = &sim->s->par;
	int world = p->tp * p->cp * p->dp * p->pp;
	int *ranks = hs_xmalloc((size_t)world * sizeof *ranks);
	for (int r = 0; r < world; r++)
		ranks[r] = r;
	hs_graph_export x;
	int rc = hs_graph_export_plan(sim->s, &sim->b, ranks, world, &x, err);
	free(ranks);
	if (rc)
		return -1;
	hs_chakra_inl il;
	if (hs_chakra_inl_plan(sim, &il, err)) {
		hs_graph_export_free(&x);
		return -1;
	}
	/* every task's ids in its rank's file: the first and the last of its nodes */
	uint32_t *local = hs_xmalloc((x.ntasks + 1) * sizeof *local), *last = hs_xmalloc((x.ntasks + 1) * sizeof *last);
	uint32_t *next = hs_xcalloc((size_t)world, sizeof *next);
	for (size_t i = 0; i < x.ntasks; i++) {
		int np = x.tasks[i].kind == HS_XT_COMPUTE ? hs_chakra_inl_npieces(&il, x.tasks[i].src) : 0;
		local[i] = next[x.tasks[i].rank];
		next[x.tasks[i].rank] += np > 0 ? (uint32_t)np : 1;
		last[i] = next[x.tasks[i].rank] - 1;
	}
	free(next);
	hs_pbw buf = {0};
	for (int r = 0; r < world && !rc; r++) {
		char path[1100];
		if (snprintf(path, sizeof path, "%s.%d.et", prefix, r) >= (int)sizeof path) {
			rc = hs_err_set(err, HS_EINPUT, "%s: the prefix is too long (expected under 1000 characters)",
					prefix);
			break;
		}
		if (write_rank(sim, &x, &il, r, local, last, &buf, nodes, err)) {
			rc = -1;
			break;
		}
		hs_outfile o;
		if (hs_outfile_open(&o, path, err)) {
			rc = -1;
			break;
		}
		hs_outfile_write(&o, buf.p, buf.n);
		if (hs_outfile_commit(&o, err)) {
			rc = -1;
			break;
		}
		++*files;
	}
	hs_pbw_free(&buf);
	free(local);
	free(last);
	hs_chakra_inl_free(&il);
	hs_graph_export_free(&x);
	return rc;
}
