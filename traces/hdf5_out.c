#include "traces/hdf5_out.h"

#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/schedule.h"
#include "sim/base/alloc.h"
#include "sim/base/version.h"
#include "sim/study/cost.h"
#include "sim/base/file.h"
#include "sim/base/outfile.h"

struct hs_h5 {
	hid_t f;
	hs_outfile out; /* where the finished image goes */
	int failed;
};

static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* The file is built in memory (HDF5's core driver, no backing store) and written out on commit through
 * hs_outfile, which checks every write and the close. HDF5 never touches the disk itself: with the default
 * driver a full disk made H5Fclose fail and leave the library's file object half torn down, and libhdf5's exit
 * handler then crashed on it (issue 18). The cost is the file's size in memory while it is written. */
hs_h5 *hs_h5_create(const char *path, const char *kind, hs_err *err)
{
	quiet();
	hs_h5 *h = hs_xcalloc(1, sizeof *h);
	if (hs_outfile_open(&h->out, path, err)) {
		free(h);
		return NULL;
	}
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0 ||
	    (h->f = H5Fcreate(h->out.tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
		if (fapl >= 0)
			H5Pclose(fapl);
		hs_outfile_abort(&h->out);
		hs_err_set(err, HS_EINTERNAL, "%s: HDF5 could not create a file in memory", path);
		free(h);
		return NULL;
	}
	H5Pclose(fapl);
	hs_h5_attr_str(h, "/", "hetsim_kind", kind);
	hs_h5_attr_str(h, "/", "hetsim_version", HS_VERSION);
	hs_h5_attr_num(h, "/", "schema_version", 1);
	return h;
}

int hs_h5_commit(hs_h5 *h, hs_err *err)
{
	int bad = h->failed;
	unsigned char *img = NULL;
	ssize_t n = -1;
	if (!bad && H5Fflush(h->f, H5F_SCOPE_GLOBAL) >= 0 && (n = H5Fget_file_image(h->f, NULL, 0)) > 0) {
		img = hs_xmalloc((size_t)n);
		if (H5Fget_file_image(h->f, img, (size_t)n) != n)
			n = -1;
	}
	if (H5Fclose(h->f) < 0 || n <= 0)
		bad = 1;
	if (bad) {
		free(img);
		hs_outfile_abort(&h->out);
		hs_err_set(err, HS_EINTERNAL, "%s: HDF5 failed to build the file", h->out.path);
		free(h);
		return -1;
	}
	hs_outfile_write(&h->out, img, (size_t)n);
	free(img);
	int rc = hs_outfile_commit(&h->out, err);
	free(h);
	return rc;
}

void hs_h5_abort(hs_h5 *h)
{
	if (!h)
		return;
	H5Fclose(h->f);
	hs_outfile_abort(&h->out);
	free(h);
}

/* Open a group by absolute path, creating it (and its parents) when missing. */
static hid_t group(hs_h5 *h, const char *path)
{
	if (strcmp(path, "/") == 0)
		return H5Gopen2(h->f, "/", H5P_DEFAULT);
	if (H5Lexists(h->f, path, H5P_DEFAULT) > 0)
		return H5Gopen2(h->f, path, H5P_DEFAULT);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	H5Pset_create_intermediate_group(lcpl, 1);
	hid_t g = H5Gcreate2(h->f, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
	H5Pclose(lcpl);
	return g;
}

static hid_t str_type(size_t len)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, len ? len : 1);
	H5Tset_strpad(t, H5T_STR_NULLTERM);
	return t;
}

static int put_attr(hs_h5 *h, const char *grp, const char *name, hid_t type, const void *v)
{
	hid_t g = group(h, grp);
	if (g < 0)
		return h->failed = 1, -1;
	if (H5Aexists(g, name) > 0)
		H5Adelete(g, name);
	hid_t sp = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
	int rc = a < 0 || H5Awrite(a, type, v) < 0 ? -1 : 0;
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(sp);
	H5Gclose(g);
	if (rc)
		h->failed = 1;
	return rc;
}

int hs_h5_attr_num(hs_h5 *h, const char *grp, const char *name, double v)
{
	return put_attr(h, grp, name, H5T_NATIVE_DOUBLE, &v);
}

int hs_h5_attr_str(hs_h5 *h, const char *grp, const char *name, const char *v)
{
	hid_t t = str_type(strlen(v) + 1);
	int rc = put_attr(h, grp, name, t, v);
	H5Tclose(t);
	return rc;
}

/* Append `name` to the group's `columns` attribute (a 1-D array of fixed-length strings). */
static void add_column_name(hid_t g, const char *name)
{
	enum { W = 64 };
	char (*names)[W] = NULL;
	hsize_t n = 0;
	if (H5Aexists(g, "columns") > 0) {
		hid_t a = H5Aopen(g, "columns", H5P_DEFAULT);
		hid_t sp = H5Aget_space(a);
		H5Sget_simple_extent_dims(sp, &n, NULL);
		names = hs_xcalloc(n + 1, W);
		hid_t t = str_type(W);
		H5Aread(a, t, names);
		H5Tclose(t);
		H5Sclose(sp);
		H5Aclose(a);
		H5Adelete(g, "columns");
	} else {
		names = hs_xcalloc(1, W);
	}
	snprintf(names[n], W, "%s", name);
	n++;
	hid_t t = str_type(W);
	hid_t sp = H5Screate_simple(1, &n, NULL);
	hid_t a = H5Acreate2(g, "columns", t, sp, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(a, t, names);
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
	free(names);
}

static int put_col(hs_h5 *h, const char *grp, const char *name, hid_t ftype, hid_t mtype, const void *v, size_t n)
{
	hid_t g = group(h, grp);
	if (g < 0)
		return h->failed = 1, -1;
	hsize_t dim = n;
	hid_t sp = H5Screate_simple(1, &dim, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (n >= 4096 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) { /* big tables (tasks): chunked and gzipped */
		hsize_t chunk = 4096;
		H5Pset_chunk(dcpl, 1, &chunk);
		H5Pset_deflate(dcpl, 4);
	}
	hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	int rc = d < 0 || (n > 0 && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) ? -1 : 0;
	if (d >= 0)
		H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
	if (!rc)
		add_column_name(g, name);
	H5Gclose(g);
	if (rc)
		h->failed = 1;
	return rc;
}

int hs_h5_col_num(hs_h5 *h, const char *grp, const char *name, const double *v, size_t n)
{
	return put_col(h, grp, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n);
}

int hs_h5_col_int(hs_h5 *h, const char *grp, const char *name, const int32_t *v, size_t n)
{
	return put_col(h, grp, name, H5T_STD_I32LE, H5T_NATIVE_INT32, v, n);
}

int hs_h5_col_str(hs_h5 *h, const char *grp, const char *name, const char *const *v, size_t n)
{
	size_t w = 1;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i] ? v[i] : "") + 1;
		if (l > w)
			w = l;
	}
	char *buf = hs_xcalloc(n ? n : 1, w);
	for (size_t i = 0; i < n; i++)
		if (v[i])
			memcpy(buf + i * w, v[i], strlen(v[i]));
	hid_t t = str_type(w);
	int rc = put_col(h, grp, name, t, t, buf, n);
	H5Tclose(t);
	free(buf);
	return rc;
}

int hs_h5_write_links(hs_h5 *h, const hs_link_series *ls, hs_err *err)
{
	hs_h5_attr_num(h, "/", "links", ls->nlinks);
	hs_h5_attr_num(h, "/links", "bin_s", ls->bin_s);
	hs_h5_col_str(h, "/links", "name", ls->names, (size_t)ls->nlinks);
	hs_h5_col_num(h, "/links", "capacity_Bps", ls->capacity_Bps, (size_t)ls->nlinks);
	/* the matrix is not a column: a 2-D dataset beside the link table */
	hid_t g = group(h, "/links");
	hsize_t dims[2] = {(hsize_t)ls->nlinks, (hsize_t)ls->nbins};
	hid_t sp = H5Screate_simple(2, dims, NULL);
	hid_t d = H5Dcreate2(g, "utilisation", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, ls->util) < 0)
		h->failed = 1;
	if (d >= 0)
		H5Dclose(d);
	H5Sclose(sp);
	H5Gclose(g);
	return h->failed ? hs_err_set(err, HS_EINPUT, "%s: writing /links failed", h->out.path) : 0;
}

static const char *const group_names[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};
static const char *const rc_names[] = {"none", "selective", "full"};

int hs_h5_write_run(hs_h5 *h, const hs_sim *sim, int tasks, hs_err *err)
{
	const hs_scenario *s = sim->s;
	const hs_build *b = &sim->b;
	const hs_result *r = &sim->r;
	const char *R = "/";
	hs_h5_attr_str(h, R, "scenario", s->name);
	hs_h5_attr_str(h, R, "model", s->model.name);
	hs_h5_attr_num(h, R, "gpus", hs_cluster_ngpus(s->cluster));
	hs_h5_attr_num(h, R, "step_time_s", r->step_time_s);
	hs_h5_attr_num(h, R, "mfu", r->mfu);
	hs_h5_attr_num(h, R, "hfu", r->hfu);
	hs_h5_attr_num(h, R, "tokens_per_s", r->tokens_per_s);
	hs_h5_attr_num(h, R, "memory_peak_bytes", r->mem_peak_bytes);
	hs_h5_attr_num(h, R, "model_flops", r->model_flops);
	hs_h5_attr_num(h, R, "hardware_flops", r->hw_flops);
	hs_h5_attr_num(h, R, "critical_rank", r->critical_rep);
	hs_h5_attr_num(h, R, "events", (double)r->events);
	hs_h5_attr_num(h, R, "links", 0); /* hs_h5_write_links overwrites it when a network model has links */
	const char *P = "/parallelism";
	hs_h5_attr_num(h, P, "tp", s->par.tp);
	hs_h5_attr_num(h, P, "pp", s->par.pp);
	hs_h5_attr_num(h, P, "dp", s->par.dp);
	hs_h5_attr_num(h, P, "cp", s->par.cp);
	hs_h5_attr_num(h, P, "ep", s->par.ep);
	hs_h5_attr_num(h, P, "virtual_stages", s->par.vstages);
	hs_h5_attr_num(h, P, "micro_batches", s->par.micro_batches);
	hs_h5_attr_num(h, P, "micro_batch", s->train.micro_batch);
	hs_h5_attr_num(h, P, "global_batch", (double)s->train.global_batch);
	hs_h5_attr_num(h, P, "seq_len", s->train.seq_len);
	hs_h5_attr_str(h, P, "schedule", hs_sched_names[s->par.schedule]);
	hs_h5_attr_str(h, P, "recompute", rc_names[s->par.recompute]);
	const hs_cost c = sim->cost;
	const char *C = "/cost";
	hs_h5_attr_num(h, C, "gpu_hours_per_step", c.gpu_hours_per_step);
	hs_h5_attr_num(h, C, "utilisation", c.utilisation);
	hs_h5_attr_num(h, C, "power_w", c.power_w);
	hs_h5_attr_num(h, C, "energy_j_per_step", c.energy_j_per_step);
	hs_h5_attr_num(h, C, "kwh_per_mtok", c.kwh_per_mtok);
	hs_h5_attr_num(h, C, "tokens_per_step", c.tokens_per_step);
	hs_h5_attr_num(h, C, "cost_per_step", c.cost_per_step);
	hs_h5_attr_num(h, C, "cost_per_mtok", c.cost_per_mtok);
	hs_h5_attr_num(h, C, "cost_per_hour", c.cost_per_hour);
	hs_h5_attr_str(h, C, "currency", c.currency);

	/* /ranks: one row per simulated rank */
	size_t n = (size_t)r->nreps;
	int32_t *iv = hs_xcalloc(n + 1, sizeof *iv);
	double *dv = hs_xcalloc(n + 1, sizeof *dv);
	const char **sv = hs_xcalloc(n + 1, sizeof *sv);
	const char *T = "/ranks";
#define ICOL(name, expr) do { for (size_t i = 0; i < n; i++) iv[i] = (int32_t)(expr); hs_h5_col_int(h, T, name, iv, n); } while (0)
#define DCOL(name, expr) do { for (size_t i = 0; i < n; i++) dv[i] = (expr); hs_h5_col_num(h, T, name, dv, n); } while (0)
	ICOL("stage", r->reps[i].stage);
	ICOL("dp_index", r->reps[i].dp_index);
	ICOL("multiplicity", i < (size_t)b->graph.nreps ? b->graph.reps[i].multiplicity : 1);
	for (size_t i = 0; i < n; i++)
		sv[i] = r->reps[i].device;
	hs_h5_col_str(h, T, "device", sv, n);
	DCOL("finish_s", r->reps[i].finish_s);
	DCOL("compute_s", r->reps[i].compute_s);
	DCOL("optimizer_s", r->reps[i].optimizer_s);
	for (int k = 0; k < HS_TC_COUNT; k++) { /* compute_s by kind: compute_gemm_s, ..., compute_host_s */
		char nm[32];
		snprintf(nm, sizeof nm, "compute_%s_s", hs_time_class_name((enum hs_time_class)k));
		DCOL(nm, r->reps[i].class_s[k]);
	}
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		char nm[32];
		snprintf(nm, sizeof nm, "exposed_%s_s", group_names[k]);
		DCOL(nm, r->reps[i].exposed_s[k]);
	}
	DCOL("bubble_s", r->reps[i].bubble_s);
	DCOL("idle_tail_s", r->step_time_s - r->reps[i].finish_s);
	DCOL("flops", r->reps[i].flops);
	DCOL("memory_bytes", r->reps[i].mem_bytes);
	DCOL("memory_capacity_bytes", r->reps[i].mem_capacity);
#undef ICOL
#undef DCOL
	/* /stages: memory of one rank of each stage */
	n = (size_t)b->pp;
	T = "/stages";
	iv = hs_xrealloc(iv, (n + 1) * sizeof *iv);
	dv = hs_xrealloc(dv, (n + 1) * sizeof *dv);
#define ICOL(name, expr) do { for (size_t i = 0; i < n; i++) iv[i] = (int32_t)(expr); hs_h5_col_int(h, T, name, iv, n); } while (0)
#define DCOL(name, expr) do { for (size_t i = 0; i < n; i++) dv[i] = (expr); hs_h5_col_num(h, T, name, dv, n); } while (0)
	ICOL("stage", i);
	ICOL("layers", b->stages[i].layers);
	DCOL("params", b->stages[i].params);
	DCOL("weights_bytes", b->stages[i].mem.weights);
	DCOL("grads_bytes", b->stages[i].mem.grads);
	DCOL("optimizer_bytes", b->stages[i].mem.optimizer);
	DCOL("activations_bytes", b->stages[i].mem.activations);
	DCOL("logits_bytes", b->stages[i].mem.logits);
	DCOL("total_bytes", b->stages[i].mem.total);
#undef ICOL
#undef DCOL
	if (tasks) {
		const hs_graph *g = &b->graph;
		n = g->ntasks;
		T = "/tasks";
		iv = hs_xrealloc(iv, (n + 1) * sizeof *iv);
		dv = hs_xrealloc(dv, (n + 1) * sizeof *dv);
#define ICOL(name, expr) do { for (size_t i = 0; i < n; i++) iv[i] = (int32_t)(expr); hs_h5_col_int(h, T, name, iv, n); } while (0)
#define DCOL(name, expr) do { for (size_t i = 0; i < n; i++) dv[i] = (expr); hs_h5_col_num(h, T, name, dv, n); } while (0)
		ICOL("rank", g->tasks[i].rep);
		ICOL("stream", g->tasks[i].stream);
		ICOL("kind", g->tasks[i].kind);
		ICOL("what", g->tasks[i].what);
		ICOL("mb", g->tasks[i].mb);
		ICOL("chunk", g->tasks[i].chunk);
		ICOL("group", g->tasks[i].kind == HS_T_COLL ? g->tasks[i].group : -1);
		ICOL("peer", g->tasks[i].kind == HS_T_SEND ? g->tasks[i].peer : -1);
		DCOL("bytes", g->tasks[i].kind == HS_T_COMPUTE ? 0 : g->tasks[i].bytes);
		DCOL("start_s", r->spans[i].start);
		DCOL("end_s", r->spans[i].end);
#undef ICOL
#undef DCOL
		hs_h5_attr_str(h, T, "kind_names", "0 compute, 1 collective, 2 send, 3 host");
		hs_h5_attr_str(h, T, "stream_names", "0 compute, 1 collectives, 2 p2p, 3 to host, 4 from host");
		hs_h5_attr_str(h, T, "what_names",
			       "0 fwd, 1 bwd, 2 bwd_input, 3 bwd_weight, 4 optimizer, 5 grad_reduce, 6 param_gather, 7 p2p, "
			       "8 offload, 9 cpu_optimizer");
		hs_h5_attr_str(h, T, "group_names", "-1 none, 0 tp, 1 cp, 2 dp, 3 ep, 4 pp");
	}
	free(iv);
	free(dv);
	free(sv);
	return h->failed ? hs_err_set(err, HS_EINPUT, "%s: writing the HDF5 tables failed", h->out.path) : 0;
}

/* reading
 *
 * Everything read is checked against what the schema (docs/outputs.md) allows before memory is sized from it:
 * an attribute is a scalar (rank 0, or rank 1 of one element) of a numeric or fixed-length string type; the
 * `columns` attribute is a 1-D list of at most HS_H5_MAX_COLS names; a column is a 1-D dataset of numbers or
 * fixed-length strings; a matrix is 1-D or 2-D; a string is at most HS_H5_MAX_STR bytes wide; nothing is
 * larger than HS_H5_MAX_BYTES in memory (sizes multiplied without overflow). A file that breaks a rule sets the
 * reader's error (path, object and rule), which sticks: later reads of that file fail too, and hs_h5_error
 * hands it to the caller. An absent object is not an error (the schema has optional parts). */
#define HS_H5_MAX_COLS 4096
#define HS_H5_MAX_STR 4096
#define HS_H5_MAX_BYTES ((size_t)1 << 30) /* 1 GiB: a 100M-task timeline's column is 800 MB */

struct hs_h5r {
	hid_t f;
	char path[1024];
	hs_err err;
};

static int bad(hs_h5r *h, const char *obj, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(hs_h5r *h, const char *obj, const char *name, const char *fmt, ...)
{
	if (h->err.code)
		return -1;
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return hs_err_set(&h->err, HS_EINPUT, "%s: %s%s%s: %s (not a hetsim result, or a damaged one)", h->path,
			  obj, name ? (strcmp(obj, "/") ? "/" : "") : "", name ? name : "", what);
}

const hs_err *hs_h5_error(const hs_h5r *h) { return h->err.code ? &h->err : NULL; }
void hs_h5_fail(hs_h5r *h, const char *obj, const char *what) { bad(h, obj, NULL, "%s", what); }

hs_h5r *hs_h5_open(const char *path, hs_err *err)
{
	quiet();
	if (hs_file_check(path, "an HDF5 result", err))
		return NULL;
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		hs_err_set(err, HS_EINPUT, "%s: cannot open as HDF5", path);
		return NULL;
	}
	hs_h5r *h = hs_xcalloc(1, sizeof *h);
	h->f = f;
	snprintf(h->path, sizeof h->path, "%s", path);
	return h;
}

void hs_h5_close(hs_h5r *h)
{
	if (h) {
		H5Fclose(h->f);
		free(h);
	}
}

/* The dimensions of a dataspace of rank 1..maxrank (rank 0, a scalar, counts as rank 1 of one element when
 * scalar_ok); the element count, checked against HS_H5_MAX_BYTES for elements of `elem` bytes. -1 on a
 * violation (h->err set). */
static int shape(hs_h5r *h, hid_t sp, const char *obj, const char *name, int maxrank, int scalar_ok, size_t elem,
		 hsize_t dims[2], int *rank)
{
	dims[0] = dims[1] = 1;
	int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
	H5S_class_t cls = sp < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(sp);
	if (nd < 0 || cls == H5S_NO_CLASS)
		return bad(h, obj, name, "unreadable dataspace");
	if (cls == H5S_NULL)
		return bad(h, obj, name, "a null dataspace (expected %s)", maxrank == 2 ? "a matrix" : "values");
	if (nd == 0) {
		if (!scalar_ok)
			return bad(h, obj, name, "a scalar (expected a %d-D dataset)", maxrank);
		*rank = 0;
		return 0;
	}
	if (nd > maxrank)
		return bad(h, obj, name, "rank %d (expected at most %d)", nd, maxrank);
	H5Sget_simple_extent_dims(sp, dims, NULL);
	*rank = nd;
	size_t total = elem ? elem : 1;
	for (int i = 0; i < nd; i++) {
		if (dims[i] > HS_H5_MAX_BYTES || (dims[i] && total > HS_H5_MAX_BYTES / dims[i]))
		{
			char ext[64];
			if (nd == 2)
				snprintf(ext, sizeof ext, "%llu x %llu", (unsigned long long)dims[0],
					 (unsigned long long)dims[1]);
			else
				snprintf(ext, sizeof ext, "%llu", (unsigned long long)dims[0]);
			return bad(h, obj, name, "extent %s of %zu-byte elements is over hetsim's %zu MiB limit", ext, elem,
				   HS_H5_MAX_BYTES >> 20);
		}
		total *= dims[i] ? dims[i] : 1;
	}
	if (nd == 1 && scalar_ok && dims[0] != 1)
		return bad(h, obj, name, "%llu values (expected one)", (unsigned long long)dims[0]);
	return 0;
}

/* A type's class must be numeric (want_str 0) or a fixed-length string at most HS_H5_MAX_STR wide; its width. */
static int type_ok(hs_h5r *h, hid_t t, const char *obj, const char *name, int want_str, size_t *w)
{
	H5T_class_t c = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
	*w = t < 0 ? 0 : H5Tget_size(t);
	if (want_str) {
		if (c != H5T_STRING)
			return bad(h, obj, name, "not a string");
		if (H5Tis_variable_str(t) > 0)
			return bad(h, obj, name, "a variable-length string (hetsim writes fixed-length ones)");
		if (*w == 0 || *w > HS_H5_MAX_STR)
			return bad(h, obj, name, "strings %zu bytes wide (expected 1 to %d)", *w, HS_H5_MAX_STR);
		return 0;
	}
	if (c != H5T_INTEGER && c != H5T_FLOAT)
		return bad(h, obj, name, "not a number");
	if (*w == 0 || *w > 16)
		return bad(h, obj, name, "%zu-byte numbers", *w);
	return 0;
}

static hid_t open_attr(hs_h5r *h, const char *obj, const char *name)
{
	if (h->err.code)
		return -1;
	if (strcmp(obj, "/") && H5Lexists(h->f, obj, H5P_DEFAULT) <= 0)
		return -1;
	if (H5Aexists_by_name(h->f, obj, name, H5P_DEFAULT) <= 0)
		return -1;
	hid_t a = H5Aopen_by_name(h->f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0)
		bad(h, obj, name, "an attribute that cannot be opened");
	return a;
}

/* An attribute holding one value: its type checked (numeric or string), its width in *w. */
static hid_t open_scalar_attr(hs_h5r *h, const char *obj, const char *name, int want_str, size_t *w)
{
	hid_t a = open_attr(h, obj, name);
	if (a < 0)
		return -1;
	hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
	hsize_t dims[2];
	int rank;
	int rc = type_ok(h, t, obj, name, want_str, w);
	if (!rc)
		rc = shape(h, sp, obj, name, 1, 1, *w, dims, &rank);
	if (t >= 0)
		H5Tclose(t);
	if (sp >= 0)
		H5Sclose(sp);
	if (rc) {
		H5Aclose(a);
		return -1;
	}
	return a;
}

int hs_h5_get_num(hs_h5r *h, const char *obj, const char *name, double *v)
{
	size_t w;
	hid_t a = open_scalar_attr(h, obj, name, 0, &w);
	if (a < 0)
		return -1;
	double x;
	int rc = H5Aread(a, H5T_NATIVE_DOUBLE, &x) < 0 ? bad(h, obj, name, "cannot be read") : 0;
	H5Aclose(a);
	if (!rc)
		*v = x;
	return rc;
}

int hs_h5_get_str(hs_h5r *h, const char *obj, const char *name, char *buf, size_t n)
{
	size_t w;
	hid_t a = open_scalar_attr(h, obj, name, 1, &w);
	if (a < 0)
		return -1;
	char *tmp = hs_xcalloc(w + 1, 1);
	hid_t t = str_type(w);
	int rc = H5Aread(a, t, tmp) < 0 ? bad(h, obj, name, "cannot be read") : 0;
	if (!rc)
		snprintf(buf, n, "%s", tmp);
	free(tmp);
	H5Tclose(t);
	H5Aclose(a);
	return rc;
}

int hs_h5_columns(hs_h5r *h, const char *grp, char ***names, int *n)
{
	*names = NULL;
	*n = 0;
	hid_t a = open_attr(h, grp, "columns");
	if (a < 0)
		return -1;
	enum { W = 64 };
	hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
	size_t w;
	hsize_t dims[2];
	int rank, rc = type_ok(h, ft, grp, "columns", 1, &w);
	if (!rc)
		rc = shape(h, sp, grp, "columns", 1, 0, W, dims, &rank);
	if (!rc && dims[0] > HS_H5_MAX_COLS)
		rc = bad(h, grp, "columns", "%llu columns (at most %d)", (unsigned long long)dims[0], HS_H5_MAX_COLS);
	if (ft >= 0)
		H5Tclose(ft);
	if (sp >= 0)
		H5Sclose(sp);
	if (rc) {
		H5Aclose(a);
		return -1;
	}
	hsize_t k = dims[0];
	char (*buf)[W] = hs_xcalloc(k + 1, W);
	hid_t t = str_type(W);
	rc = H5Aread(a, t, buf) < 0 ? bad(h, grp, "columns", "cannot be read") : 0;
	H5Tclose(t);
	H5Aclose(a);
	if (rc) {
		free(buf);
		return -1;
	}
	*names = hs_xcalloc(k + 1, sizeof **names);
	for (hsize_t i = 0; i < k; i++) {
		buf[i][W - 1] = 0;
		(*names)[i] = hs_xstrdup(buf[i]);
	}
	*n = (int)k;
	free(buf);
	return 0;
}

/* A dataset of rank 1..maxrank; NULL-like -1 when absent (no error) or malformed (h->err). */
static hid_t open_data(hs_h5r *h, const char *path)
{
	if (h->err.code)
		return -1;
	char grp[512];
	const char *slash = strrchr(path, '/');
	snprintf(grp, sizeof grp, "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	if (H5Lexists(h->f, grp, H5P_DEFAULT) <= 0 || H5Lexists(h->f, path, H5P_DEFAULT) <= 0)
		return -1;
	H5O_info_t oi;
	if (H5Oget_info_by_name(h->f, path, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET) {
		bad(h, path, NULL, "not a dataset");
		return -1;
	}
	hid_t d = H5Dopen2(h->f, path, H5P_DEFAULT);
	if (d < 0)
		bad(h, path, NULL, "a dataset that cannot be opened");
	return d;
}

/* A column: 1-D, numeric or string as asked; its length and element width. */
static hid_t open_col(hs_h5r *h, const char *grp, const char *name, int want_str, size_t *n, size_t *w)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", grp, name);
	hid_t d = open_data(h, p);
	if (d < 0)
		return -1;
	hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
	hsize_t dims[2];
	int rank, rc = type_ok(h, t, p, NULL, want_str, w);
	if (!rc)
		rc = shape(h, sp, p, NULL, 1, 0, want_str ? *w + 1 + sizeof(char *) : sizeof(double), dims, &rank);
	if (t >= 0)
		H5Tclose(t);
	if (sp >= 0)
		H5Sclose(sp);
	if (rc) {
		H5Dclose(d);
		return -1;
	}
	*n = (size_t)dims[0];
	return d;
}

int hs_h5_is_str(hs_h5r *h, const char *grp, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", grp, name);
	hid_t d = open_data(h, p);
	if (d < 0)
		return 0;
	hid_t t = H5Dget_type(d);
	int s = t >= 0 && H5Tget_class(t) == H5T_STRING;
	if (t >= 0)
		H5Tclose(t);
	H5Dclose(d);
	return s;
}

int hs_h5_read_num(hs_h5r *h, const char *grp, const char *name, double **v, size_t *n)
{
	size_t w;
	*v = NULL;
	*n = 0;
	hid_t d = open_col(h, grp, name, 0, n, &w);
	if (d < 0)
		return -1;
	*v = hs_xcalloc(*n + 1, sizeof **v);
	int rc = *n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) < 0 ? -1 : 0;
	H5Dclose(d);
	if (rc) {
		free(*v);
		*v = NULL;
		*n = 0;
		char p[512];
		snprintf(p, sizeof p, "%s/%s", grp, name);
		return bad(h, p, NULL, "cannot be read");
	}
	return 0;
}

int hs_h5_read_str(hs_h5r *h, const char *grp, const char *name, char ***v, size_t *n)
{
	size_t w;
	*v = NULL;
	*n = 0;
	hid_t d = open_col(h, grp, name, 1, n, &w);
	if (d < 0)
		return -1;
	/* shape() bounded n * (w + 1 + sizeof(char *)), so neither product below wraps */
	char *buf = hs_xcalloc(*n * w + 1, 1);
	hid_t t = str_type(w);
	int rc = *n && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
	H5Tclose(t);
	H5Dclose(d);
	if (rc) {
		free(buf);
		*n = 0;
		char p[512];
		snprintf(p, sizeof p, "%s/%s", grp, name);
		return bad(h, p, NULL, "cannot be read");
	}
	*v = hs_xcalloc(*n + 1, sizeof **v);
	for (size_t i = 0; i < *n; i++) {
		(*v)[i] = hs_xcalloc(w + 1, 1);
		memcpy((*v)[i], buf + i * w, w);
	}
	free(buf);
	return 0;
}

int hs_h5_read_matrix(hs_h5r *h, const char *path, double **v, size_t *rows, size_t *cols)
{
	*v = NULL;
	*rows = *cols = 0;
	hid_t d = open_data(h, path);
	if (d < 0)
		return -1;
	hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
	size_t w;
	hsize_t dims[2];
	int rank, rc = type_ok(h, t, path, NULL, 0, &w);
	if (!rc)
		rc = shape(h, sp, path, NULL, 2, 0, sizeof(double), dims, &rank);
	if (t >= 0)
		H5Tclose(t);
	if (sp >= 0)
		H5Sclose(sp);
	if (rc) {
		H5Dclose(d);
		return -1;
	}
	*rows = dims[0], *cols = rank == 2 ? dims[1] : 1;
	*v = hs_xcalloc(*rows * *cols + 1, sizeof **v);
	rc = (*rows * *cols) > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) < 0 ? -1 : 0;
	H5Dclose(d);
	if (rc) {
		free(*v);
		*v = NULL;
		*rows = *cols = 0;
		return bad(h, path, NULL, "cannot be read");
	}
	return 0;
}
