/* libFuzzer harness: the HDF5 result reader (traces/hdf5_out.c) on files that are valid HDF5 but of any shape.
 * libhdf5 itself is not robust against corrupt bytes (its own bug tracker), so raw bytes would fuzz the library,
 * not us; instead the input is a recipe the harness builds a file from with the HDF5 API: a table at /ranks as a
 * group of column datasets (schema 1), a compound dataset (schema 2) or another dataset, its fields' types
 * (float, int of 1-8 bytes, fixed or variable strings, nested compounds, arrays), ranks, extents (up to 2^40 in
 * chunked space that needs no storage), a `columns` attribute that may disagree, and scalar or ranked root
 * attributes. Then every read `hetsim report` makes of a run file. A crash, a leak or a sanitizer report is a
 * bug; errors are the point. */
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traces/hdf5_out.h"

/* called by libFuzzer; none of its headers declares it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const uint8_t *p;
	size_t n, i;
};

static unsigned take(struct in *in)
{
	return in->i < in->n ? in->p[in->i++] : 0;
}

static const char *const names[] = {"stage", "dp_index", "multiplicity", "device", "finish_s", "compute_s", "x"};

/* A field or column type from the recipe; close with H5Tclose. */
static hid_t pick_type(struct in *in, int depth)
{
	unsigned c = take(in) % 8;
	switch (c) {
	case 0: return H5Tcopy(H5T_NATIVE_DOUBLE);
	case 1: return H5Tcopy(H5T_NATIVE_FLOAT);
	case 2: {
		unsigned w = take(in) % 4; /* HDF5's native type ids are run-time values, not constants */
		return H5Tcopy(w == 0 ? H5T_NATIVE_INT8 : w == 1 ? H5T_NATIVE_INT16 : w == 2 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64);
	}
	case 3: {
		hid_t t = H5Tcopy(H5T_C_S1);
		H5Tset_size(t, 1 + take(in) * 17 % 5000);
		return t;
	}
	case 4: {
		hid_t t = H5Tcopy(H5T_C_S1);
		H5Tset_size(t, H5T_VARIABLE);
		return t;
	}
	case 5:
		if (depth < 2) {
			hid_t a = pick_type(in, depth + 1);
			hid_t c2 = H5Tcreate(H5T_COMPOUND, H5Tget_size(a) + 8);
			H5Tinsert(c2, "inner", 0, a);
			H5Tinsert(c2, "pad", H5Tget_size(a), H5T_NATIVE_DOUBLE);
			H5Tclose(a);
			return c2;
		}
		return H5Tcopy(H5T_NATIVE_DOUBLE);
	case 6: {
		hsize_t d = 1 + take(in) % 4;
		return H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &d);
	}
	default: return H5Tcopy(H5T_NATIVE_INT32);
	}
}

/* A dataspace: scalar, or rank 1-3 with extents from the recipe (the last one may be 2^40). */
static hid_t pick_space(struct in *in, hsize_t *rows, int *rank)
{
	unsigned r = take(in) % 4;
	*rank = (int)r;
	if (r == 0) {
		*rows = 1;
		return H5Screate(H5S_SCALAR);
	}
	hsize_t d[3];
	for (unsigned k = 0; k < r; k++) {
		unsigned v = take(in);
		d[k] = v == 255 ? (hsize_t)1 << 40 : v % 6;
	}
	*rows = d[0];
	return H5Screate_simple((int)r, d, NULL);
}

static void put_dataset(hid_t loc, const char *name, hid_t t, hid_t sp, hsize_t rows, int rank)
{
	hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
	hsize_t chunk[3] = {1, 1, 1};
	if (rank > 0)
		H5Pset_chunk(pl, rank, chunk); /* chunked: a huge extent needs no storage */
	hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	(void)rows;
	if (d >= 0)
		H5Dclose(d);
	H5Pclose(pl);
}

static void columns_attr(hid_t obj, struct in *in, int n)
{
	char buf[8][64] = {{0}};
	int k = n > 8 ? 8 : n;
	for (int i = 0; i < k; i++)
		snprintf(buf[i], 64, "%s", names[take(in) % 7]);
	hsize_t d = (hsize_t)k;
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, 1 + take(in) % 80);
	hid_t sp = H5Screate_simple(1, &d, NULL);
	hid_t a = H5Acreate2(obj, "columns", t, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		if (H5Tget_size(t) == 64)
			H5Awrite(a, t, buf);
		H5Aclose(a);
	}
	H5Sclose(sp);
	H5Tclose(t);
}

static void build(const char *path, struct in *in)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0)
		return;
	/* root attributes: hetsim_kind, and step_time_s of a picked type and shape */
	hid_t st = H5Tcopy(H5T_C_S1);
	H5Tset_size(st, 4);
	hid_t sc = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(f, "hetsim_kind", st, sc, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		H5Awrite(a, st, take(in) & 1 ? "run" : "swp");
		H5Aclose(a);
	}
	H5Sclose(sc);
	H5Tclose(st);
	{
		hsize_t rows;
		int rank;
		hid_t t = pick_type(in, 0), sp = pick_space(in, &rows, &rank);
		if (rows < 64 && rank < 3) {
			hid_t at = H5Acreate2(f, take(in) & 1 ? "step_time_s" : "links", t, sp, H5P_DEFAULT, H5P_DEFAULT);
			if (at >= 0)
				H5Aclose(at);
		}
		H5Tclose(t);
		H5Sclose(sp);
	}
	unsigned layout = take(in) % 3, nf = 1 + take(in) % 6;
	if (layout == 0) { /* schema 1: a group of columns */
		hid_t g = H5Gcreate2(f, "/ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		columns_attr(g, in, (int)nf);
		for (unsigned i = 0; i < nf; i++) {
			hsize_t rows;
			int rank;
			hid_t t = pick_type(in, 0), sp = pick_space(in, &rows, &rank);
			put_dataset(g, names[take(in) % 7], t, sp, rows, rank);
			H5Tclose(t);
			H5Sclose(sp);
		}
		H5Gclose(g);
	} else { /* schema 2: a compound table, or (layout 2) another dataset at the table's path */
		hid_t t;
		if (layout == 1) {
			hid_t ft[6];
			size_t off = 0;
			for (unsigned i = 0; i < nf; i++) {
				ft[i] = pick_type(in, 0);
				off += H5Tget_size(ft[i]);
			}
			t = H5Tcreate(H5T_COMPOUND, off ? off : 1);
			off = 0;
			for (unsigned i = 0; i < nf; i++) {
				char nm[16];
				snprintf(nm, sizeof nm, "%s", names[take(in) % 7]);
				if (H5Tget_member_index(t, nm) < 0)
					H5Tinsert(t, nm, off, ft[i]);
				off += H5Tget_size(ft[i]);
				H5Tclose(ft[i]);
			}
		} else {
			t = pick_type(in, 0);
		}
		hsize_t rows;
		int rank;
		hid_t sp = pick_space(in, &rows, &rank);
		put_dataset(f, "/ranks", t, sp, rows, rank);
		H5Tclose(t);
		H5Sclose(sp);
		hid_t d = H5Dopen2(f, "/ranks", H5P_DEFAULT);
		if (d >= 0) {
			if (take(in) & 1)
				columns_attr(d, in, (int)nf);
			H5Dclose(d);
		}
	}
	if (take(in) & 1) { /* a link matrix of some shape */
		hsize_t rows;
		int rank;
		hid_t t = pick_type(in, 0), sp = pick_space(in, &rows, &rank);
		put_dataset(f, "/links_utilisation", t, sp, rows, rank);
		H5Tclose(t);
		H5Sclose(sp);
	}
	H5Fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[256];
	if (!path[0]) {
		snprintf(path, sizeof path, "%s/hetsim-fuzz-h5-%ld.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (long)getpid());
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		/* HDF5 keeps freed blocks on free lists up to 64 KiB a list by default, so the file's metadata cache
		 * (over 1 MiB, allocated at each open and create) went back to the system every time and came back
		 * as fresh pages to zero: two thirds of each input's time was page faults. Unbounded lists keep
		 * them (a few MiB: the blocks of one input, reused by the next). */
		H5set_free_list_limits(-1, -1, -1, -1, -1, -1);
	}
	struct in in = {data, size, 0};
	build(path, &in);
	hs_err err = {0};
	hs_h5r *h = hs_h5_open(path, &err);
	if (h) {
		/* every read hetsim report makes of a run file */
		char kind[16];
		double v;
		hs_h5_get_str(h, "/", "hetsim_kind", kind, sizeof kind);
		hs_h5_get_num(h, "/", "step_time_s", &v);
		hs_h5_get_num(h, "/", "links", &v);
		char **cols;
		int nc;
		if (hs_h5_columns(h, "/ranks", &cols, &nc) == 0) {
			for (int i = 0; i < nc; i++) {
				double *x;
				char **s;
				size_t n;
				if (hs_h5_is_str(h, "/ranks", cols[i])) {
					if (hs_h5_read_str(h, "/ranks", cols[i], &s, &n) == 0) {
						for (size_t k = 0; k < n; k++)
							free(s[k]);
						free(s);
					}
				} else if (hs_h5_read_num(h, "/ranks", cols[i], &x, &n) == 0) {
					free(x);
				}
				free(cols[i]);
			}
			free(cols);
		}
		for (int i = 0; i < 7; i++) {
			double *x;
			size_t n;
			if (hs_h5_read_num(h, "/ranks", names[i], &x, &n) == 0)
				free(x);
		}
		double *m;
		size_t r, c;
		if (hs_h5_read_matrix(h, "/links_utilisation", &m, &r, &c) == 0)
			free(m);
		hs_h5_close(h);
	}
	unlink(path);
	return 0;
}
