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

/* A table being written: its columns are kept until the table is written as one compound dataset (at commit,
 * or when an attribute is put on it), since HDF5 fixes a compound type's fields at creation. */
enum { COL_F64, COL_I32, COL_STR };
struct h5col {
	char name[64];
	int kind;
	size_t w; /* bytes per value: 8, 4, or the string width with its terminator */
	void *data;
};
struct h5tab {
	char path[128];
	size_t n;
	int ncol, cap, written;
	struct h5col *col;
};

struct hs_h5 {
	hid_t f;
	hs_outfile out; /* where the finished image goes */
	int failed;
	struct h5tab *tab;
	int ntab, captab;
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
	/* 2: tables are compound datasets (1: groups of column datasets; hetsim report reads both) */
	hs_h5_attr_num(h, "/", "schema_version", HS_H5_SCHEMA);
	return h;
}

static void flush_all(hs_h5 *h);
static void free_tables(hs_h5 *h);

int hs_h5_commit(hs_h5 *h, hs_err *err)
{
	flush_all(h);
	free_tables(h);
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
	free_tables(h);
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

static struct h5tab *find_tab(hs_h5 *h, const char *path);
static void flush_tab(hs_h5 *h, struct h5tab *t);

/* The object at `path` for an attribute: a table written first when it is still pending, an existing group or
 * dataset, else a new group. */
static hid_t attr_target(hs_h5 *h, const char *path)
{
	struct h5tab *t = find_tab(h, path);
	if (t && !t->written)
		flush_tab(h, t);
	if (strcmp(path, "/") != 0 && H5Lexists(h->f, path, H5P_DEFAULT) > 0)
		return H5Oopen(h->f, path, H5P_DEFAULT);
	return group(h, path);
}

static int put_attr(hs_h5 *h, const char *grp, const char *name, hid_t type, const void *v)
{
	hid_t g = attr_target(h, grp);
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
	H5Oclose(g);
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

static struct h5tab *find_tab(hs_h5 *h, const char *path)
{
	for (int i = 0; i < h->ntab; i++)
		if (strcmp(h->tab[i].path, path) == 0)
			return &h->tab[i];
	return NULL;
}

static void free_tables(hs_h5 *h)
{
	for (int i = 0; i < h->ntab; i++) {
		for (int c = 0; c < h->tab[i].ncol; c++)
			free(h->tab[i].col[c].data);
		free(h->tab[i].col);
	}
	free(h->tab);
	h->tab = NULL;
	h->ntab = h->captab = 0;
}

/* A field's unit, from the suffix of its name (docs/outputs.md): hetsim's names end in their unit. */
static const char *unit_of(const char *name)
{
	static const struct {
		const char *suffix, *unit;
	} rules[] = {{"_per_s", "1/s"}, {"_Bps", "B/s"}, {"_bytes", "B"}, {"_s", "s"},	 {"flops", "FLOP"},
		     {"_w", "W"},	{"_j", "J"},	  {"_kwh", "kWh"},   {"params", "1"}};
	size_t l = strlen(name);
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		size_t k = strlen(rules[i].suffix);
		if (l >= k && strcmp(name + l - k, rules[i].suffix) == 0)
			return rules[i].unit;
	}
	return "";
}

static hid_t str_array_type(void) { return str_type(64); }

/* A 1-D attribute of n strings of up to 63 bytes. */
static void put_str_list(hid_t obj, const char *name, const char *const *v, size_t n)
{
	char(*buf)[64] = hs_xcalloc(n ? n : 1, 64);
	for (size_t i = 0; i < n; i++)
		snprintf(buf[i], 64, "%s", v[i]);
	hsize_t dim = n;
	hid_t t = str_array_type(), sp = H5Screate_simple(1, &dim, NULL);
	hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		H5Awrite(a, t, buf);
		H5Aclose(a);
	}
	H5Sclose(sp);
	H5Tclose(t);
	free(buf);
}

/* H5Aiterate2 callback: copy attribute `name` of `obj` to the object *(hid_t *)to. */
static herr_t copy_attr(hid_t obj, const char *name, const H5A_info_t *info, void *to)
{
	(void)info;
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	if (a < 0)
		return -1;
	hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
	size_t n = (size_t)H5Sget_simple_extent_npoints(sp) * H5Tget_size(t);
	void *buf = hs_xcalloc(n ? n : 1, 1);
	herr_t rc = -1;
	if (H5Aread(a, t, buf) >= 0) {
		hid_t b = H5Acreate2(*(hid_t *)to, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
		if (b >= 0) {
			rc = H5Awrite(b, t, buf) < 0 ? -1 : 0;
			H5Aclose(b);
		}
	}
	free(buf);
	H5Sclose(sp);
	H5Tclose(t);
	H5Aclose(a);
	return rc;
}

/* Write table t as one compound dataset at its path: a field per column in order (float64, int32, fixed-length
 * strings), with `columns` (the field names), `units` (one per field, "" for labels and counts) and
 * `schema_version` attributes. */
static void flush_tab(hs_h5 *h, struct h5tab *t)
{
	t->written = 1;
	size_t row = 0;
	for (int c = 0; c < t->ncol; c++)
		row += t->col[c].w;
	hid_t ct = H5Tcreate(H5T_COMPOUND, row ? row : 1);
	size_t off = 0;
	for (int c = 0; c < t->ncol; c++) {
		const struct h5col *k = &t->col[c];
		hid_t ft = k->kind == COL_F64 ? H5Tcopy(H5T_IEEE_F64LE) : k->kind == COL_I32 ? H5Tcopy(H5T_STD_I32LE)
											   : str_type(k->w);
		H5Tinsert(ct, k->name, off, ft);
		H5Tclose(ft);
		off += k->w;
	}
	unsigned char *buf = hs_xcalloc(t->n ? t->n : 1, row ? row : 1);
	off = 0;
	for (int c = 0; c < t->ncol; c++) {
		const struct h5col *k = &t->col[c];
		for (size_t i = 0; i < t->n; i++)
			memcpy(buf + i * row + off, (const unsigned char *)k->data + i * k->w, k->w);
		off += k->w;
	}
	hsize_t dim = t->n;
	hid_t sp = H5Screate_simple(1, &dim, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (t->n >= 4096 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) { /* big tables (tasks): chunked and gzipped */
		hsize_t chunk = 4096;
		H5Pset_chunk(dcpl, 1, &chunk);
		H5Pset_deflate(dcpl, 4);
	}
	/* attributes put on the path before its first column made a group there: the table takes its place and
	 * its attributes */
	hid_t old = -1;
	if (H5Lexists(h->f, t->path, H5P_DEFAULT) > 0) {
		char tmp[160];
		snprintf(tmp, sizeof tmp, "%s.attrs", t->path);
		if (H5Lmove(h->f, t->path, h->f, tmp, H5P_DEFAULT, H5P_DEFAULT) < 0 ||
		    (old = H5Oopen(h->f, tmp, H5P_DEFAULT)) < 0)
			h->failed = 1;
	}
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	H5Pset_create_intermediate_group(lcpl, 1);
	hid_t d = H5Dcreate2(h->f, t->path, ct, sp, lcpl, dcpl, H5P_DEFAULT);
	if (old >= 0) {
		if (d >= 0)
			H5Aiterate2(old, H5_INDEX_CRT_ORDER, H5_ITER_NATIVE, NULL, copy_attr, &d);
		H5Oclose(old);
		char tmp[160];
		snprintf(tmp, sizeof tmp, "%s.attrs", t->path);
		H5Ldelete(h->f, tmp, H5P_DEFAULT);
	}
	if (d < 0 || (t->n > 0 && H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0))
		h->failed = 1;
	if (d >= 0) {
		const char **names = hs_xcalloc((size_t)t->ncol + 1, sizeof *names);
		const char **units = hs_xcalloc((size_t)t->ncol + 1, sizeof *units);
		for (int c = 0; c < t->ncol; c++)
			names[c] = t->col[c].name, units[c] = t->col[c].kind == COL_STR ? "" : unit_of(t->col[c].name);
		put_str_list(d, "columns", names, (size_t)t->ncol);
		put_str_list(d, "units", units, (size_t)t->ncol);
		double v = HS_H5_SCHEMA;
		hid_t asp = H5Screate(H5S_SCALAR);
		hid_t a = H5Acreate2(d, "schema_version", H5T_NATIVE_DOUBLE, asp, H5P_DEFAULT, H5P_DEFAULT);
		if (a < 0 || H5Awrite(a, H5T_NATIVE_DOUBLE, &v) < 0)
			h->failed = 1;
		if (a >= 0)
			H5Aclose(a);
		H5Sclose(asp);
		free(names);
		free(units);
		H5Dclose(d);
	}
	H5Pclose(lcpl);
	H5Pclose(dcpl);
	H5Sclose(sp);
	H5Tclose(ct);
	free(buf);
}

static void flush_all(hs_h5 *h)
{
	for (int i = 0; i < h->ntab; i++)
		if (!h->tab[i].written)
			flush_tab(h, &h->tab[i]);
}

/* Add a column to the table at `path`: every column of a table has its row count, and a table once written
 * takes no more columns (an attribute put on it writes it). */
static int put_col(hs_h5 *h, const char *path, const char *name, int kind, size_t w, const void *v, size_t n)
{
	struct h5tab *t = find_tab(h, path);
	if (!t) {
		if (h->ntab == h->captab) {
			h->captab = h->captab ? 2 * h->captab : 8;
			h->tab = hs_xrealloc(h->tab, (size_t)h->captab * sizeof *h->tab);
		}
		t = &h->tab[h->ntab++];
		memset(t, 0, sizeof *t);
		snprintf(t->path, sizeof t->path, "%s", path);
		t->n = n;
	}
	if (t->written || n != t->n || strlen(name) >= sizeof t->col[0].name)
		return h->failed = 1, -1;
	if (t->ncol == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->col = hs_xrealloc(t->col, (size_t)t->cap * sizeof *t->col);
	}
	struct h5col *c = &t->col[t->ncol++];
	snprintf(c->name, sizeof c->name, "%s", name);
	c->kind = kind;
	c->w = w;
	c->data = hs_xmalloc(n * w + 1);
	if (n)
		memcpy(c->data, v, n * w);
	return 0;
}

int hs_h5_col_num(hs_h5 *h, const char *grp, const char *name, const double *v, size_t n)
{
	return put_col(h, grp, name, COL_F64, sizeof(double), v, n);
}

int hs_h5_col_int(hs_h5 *h, const char *grp, const char *name, const int32_t *v, size_t n)
{
	return put_col(h, grp, name, COL_I32, sizeof(int32_t), v, n);
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
	int rc = put_col(h, grp, name, COL_STR, w, buf, n);
	free(buf);
	return rc;
}

int hs_h5_write_links(hs_h5 *h, const hs_link_series *ls, hs_err *err)
{
	hs_h5_attr_num(h, "/", "links", ls->nlinks);
	hs_h5_col_str(h, "/links", "name", ls->names, (size_t)ls->nlinks);
	hs_h5_col_num(h, "/links", "capacity_Bps", ls->capacity_Bps, (size_t)ls->nlinks);
	if (ls->bytes)
		hs_h5_col_num(h, "/links", "carried_bytes", ls->bytes, (size_t)ls->nlinks);
	hs_h5_attr_num(h, "/links", "bin_s", ls->bin_s);
	/* the matrix is not a table: a 2-D dataset beside it, a row per link in the table's order */
	hid_t g = group(h, "/");
	hsize_t dims[2] = {(hsize_t)ls->nlinks, (hsize_t)ls->nbins};
	hid_t sp = H5Screate_simple(2, dims, NULL);
	hid_t d = H5Dcreate2(g, "links_utilisation", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
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

/* Is `grp` a table of schema 2 (a compound dataset)? 1 yes, 0 no (a group of columns, or absent), -1 when it is
 * a dataset of another type (h->err set). */
static int is_compound(hs_h5r *h, const char *grp)
{
	if (h->err.code || strcmp(grp, "/") == 0 || H5Lexists(h->f, grp, H5P_DEFAULT) <= 0)
		return 0;
	H5O_info_t oi;
	if (H5Oget_info_by_name(h->f, grp, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET)
		return 0;
	hid_t d = H5Dopen2(h->f, grp, H5P_DEFAULT);
	hid_t t = d < 0 ? -1 : H5Dget_type(d);
	int c = t >= 0 && H5Tget_class(t) == H5T_COMPOUND;
	if (t >= 0)
		H5Tclose(t);
	if (d >= 0)
		H5Dclose(d);
	return c ? 1 : bad(h, grp, NULL, "a dataset that is not a table (expected a compound dataset or a group)");
}

/* A column: 1-D, numeric or string as asked; its length and element width. From a schema-2 table, the field
 * `name` of the compound dataset `grp` (*field 1); from a schema-1 table, the dataset grp/name (*field 0). */
static hid_t open_col(hs_h5r *h, const char *grp, const char *name, int want_str, size_t *n, size_t *w, int *field)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", grp, name);
	int comp = is_compound(h, grp);
	if (comp < 0)
		return -1;
	*field = comp;
	hid_t d = open_data(h, comp ? grp : p);
	if (d < 0)
		return -1;
	hid_t t = H5Dget_type(d), sp = H5Dget_space(d), mt = -1;
	int rc = 0;
	if (comp) {
		int idx = H5Tget_member_index(t, name);
		if (idx < 0) {
			H5Tclose(t);
			H5Sclose(sp);
			H5Dclose(d);
			return -1; /* absent, as a missing column dataset */
		}
		mt = H5Tget_member_type(t, (unsigned)idx);
	}
	hsize_t dims[2];
	int rank;
	rc = type_ok(h, comp ? mt : t, p, NULL, want_str, w);
	if (!rc)
		rc = shape(h, sp, p, NULL, 1, 0, want_str ? *w + 1 + sizeof(char *) : sizeof(double), dims, &rank);
	if (mt >= 0)
		H5Tclose(mt);
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

/* The memory type to read column `name` as `elem` with: the type itself, or for a field a compound of that
 * one field (HDF5 converts by field name). Close with H5Tclose. */
static hid_t read_type(hid_t elem, const char *name, int field)
{
	if (!field)
		return H5Tcopy(elem);
	hid_t c = H5Tcreate(H5T_COMPOUND, H5Tget_size(elem));
	H5Tinsert(c, name, 0, elem);
	return c;
}

int hs_h5_is_str(hs_h5r *h, const char *grp, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", grp, name);
	int comp = is_compound(h, grp);
	if (comp < 0)
		return 0;
	hid_t d = open_data(h, comp ? grp : p);
	if (d < 0)
		return 0;
	hid_t t = H5Dget_type(d), mt = t;
	if (comp && t >= 0) {
		int idx = H5Tget_member_index(t, name);
		mt = idx < 0 ? -1 : H5Tget_member_type(t, (unsigned)idx);
	}
	/* the class only: the width and the rest are checked when the column is read */
	int s = mt >= 0 && H5Tget_class(mt) == H5T_STRING;
	if (mt >= 0 && mt != t)
		H5Tclose(mt);
	if (t >= 0)
		H5Tclose(t);
	H5Dclose(d);
	return s;
}

int hs_h5_read_num(hs_h5r *h, const char *grp, const char *name, double **v, size_t *n)
{
	size_t w;
	int field;
	*v = NULL;
	*n = 0;
	hid_t d = open_col(h, grp, name, 0, n, &w, &field);
	if (d < 0)
		return -1;
	*v = hs_xcalloc(*n + 1, sizeof **v);
	hid_t mt = read_type(H5T_NATIVE_DOUBLE, name, field);
	int rc = *n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) < 0 ? -1 : 0;
	H5Tclose(mt);
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
	int field;
	*v = NULL;
	*n = 0;
	hid_t d = open_col(h, grp, name, 1, n, &w, &field);
	if (d < 0)
		return -1;
	/* shape() bounded n * (w + 1 + sizeof(char *)), so neither product below wraps */
	char *buf = hs_xcalloc(*n * w + 1, 1);
	hid_t t = str_type(w), mt = read_type(t, name, field);
	int rc = *n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
	H5Tclose(mt);
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
