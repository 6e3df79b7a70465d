/* hetsim report on HDF5 files that break the schema (issue 18, finding 3): a column of rank 2, an attribute of
 * rank 4, a string column whose rows x width would wrap, a declared extent of 2^40 rows, a column the
 * `columns` list names but the group lacks, columns of different lengths, a variable-length string, a
 * required column missing. Each is files written with the HDF5 API (valid HDF5, wrong shape), and each must
 * give exit status 2 (HS_EINPUT) with the file and the object in the message, no crash, no leak, and no
 * report folder left behind. Skipped (exit 77) where gnuplot is not installed. */
#include <check.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/report.h"
#include "traces/hdf5_out.h"
#include "tests/unit/helpers.h"

static const char *no_gnuplot(void)
{
	return system("gnuplot -e 'exit' >/dev/null 2>&1") == 0 ? NULL : "gnuplot not installed";
}

static void attr_str(hid_t obj, const char *name, const char *v)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, strlen(v) + 1);
	hid_t sp = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(a, t, v);
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
}

static void columns(hid_t g, int n, const char *const *names)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, 64);
	char buf[8][64] = {{0}};
	for (int i = 0; i < n; i++)
		snprintf(buf[i], 64, "%s", names[i]);
	hsize_t d = (hsize_t)n;
	hid_t sp = H5Screate_simple(1, &d, NULL);
	hid_t a = H5Acreate2(g, "columns", t, sp, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(a, t, buf);
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
}

/* A dataset of `rank` dims (chunked, so a huge extent needs no storage), of type t. */
static void dataset(hid_t g, const char *name, hid_t t, int rank, const hsize_t *dims, const void *data)
{
	hsize_t chunk[4] = {1, 1, 1, 1};
	hid_t sp = H5Screate_simple(rank, dims, NULL);
	hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(pl, rank, chunk);
	hid_t d = H5Dcreate2(g, name, t, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	if (data)
		H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
	H5Dclose(d);
	H5Pclose(pl);
	H5Sclose(sp);
}

enum flaw { RANK2_COLUMN, RANK4_ATTR, STR_WRAP, HUGE_EXTENT, LISTED_MISSING, UNEQUAL, VLEN_STR, NO_STAGE, NFLAWS };

/* A run file with one flaw in /ranks (or on the root). */
static void write_bad(const char *path, enum flaw fl)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	attr_str(f, "hetsim_kind", "run");
	if (fl == RANK4_ATTR) {
		hsize_t d4[4] = {2, 2, 2, 2};
		double v[16] = {0};
		hid_t sp = H5Screate_simple(4, d4, NULL);
		hid_t a = H5Acreate2(f, "step_time_s", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
		H5Awrite(a, H5T_NATIVE_DOUBLE, v);
		H5Aclose(a);
		H5Sclose(sp);
	}
	hid_t g = H5Gcreate2(f, "/ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	static const char *const cols[] = {"stage", "dp_index", "multiplicity", "device", "finish_s"};
	columns(g, 5, cols);
	double two[2] = {0, 1};
	hsize_t n2 = 2;
	dataset(g, "stage", H5T_NATIVE_DOUBLE, 1, &n2, two);
	dataset(g, "dp_index", H5T_NATIVE_DOUBLE, 1, &n2, two);
	dataset(g, "multiplicity", H5T_NATIVE_DOUBLE, 1, &n2, two);
	hid_t st = H5Tcopy(H5T_C_S1);
	H5Tset_size(st, 8);
	dataset(g, "device", st, 1, &n2, "H100\0\0\0\0H100\0\0\0\0");
	H5Tclose(st);
	switch (fl) {
	case RANK2_COLUMN: {
		hsize_t d[2] = {2, 3};
		double v[6] = {0};
		dataset(g, "finish_s", H5T_NATIVE_DOUBLE, 2, d, v);
		break;
	}
	case STR_WRAP: {
		/* rows x width is 2^64 + 2^32: wraps to a small allocation in a reader that multiplies blindly */
		hid_t t = H5Tcopy(H5T_C_S1);
		H5Tset_size(t, 4096);
		hsize_t d = ((hsize_t)1 << 52) + 1;
		dataset(g, "finish_s", t, 1, &d, NULL);
		H5Tclose(t);
		break;
	}
	case HUGE_EXTENT: {
		hsize_t d = (hsize_t)1 << 40;
		dataset(g, "finish_s", H5T_NATIVE_DOUBLE, 1, &d, NULL);
		break;
	}
	case LISTED_MISSING:
		break;
	case UNEQUAL: {
		hsize_t d = 3;
		double v[3] = {0};
		dataset(g, "finish_s", H5T_NATIVE_DOUBLE, 1, &d, v);
		break;
	}
	case VLEN_STR: {
		hid_t t = H5Tcopy(H5T_C_S1);
		H5Tset_size(t, H5T_VARIABLE);
		const char *v[2] = {"a", "b"};
		dataset(g, "finish_s", t, 1, &n2, v);
		H5Tclose(t);
		break;
	}
	case NO_STAGE:
		H5Ldelete(g, "stage", H5P_DEFAULT);
		columns(g, 0, cols); /* replaced below */
		break;
	default:
		dataset(g, "finish_s", H5T_NATIVE_DOUBLE, 1, &n2, two);
	}
	if (fl == NO_STAGE) {
		H5Adelete(g, "columns");
		columns(g, 4, cols + 1);
		dataset(g, "finish_s", H5T_NATIVE_DOUBLE, 1, &n2, two);
	}
	H5Gclose(g);
	H5Fclose(f);
}

static const char *const expect[NFLAWS] = {
	[RANK2_COLUMN] = "/ranks/finish_s: rank 2 (expected at most 1)",
	[RANK4_ATTR] = "step_time_s: rank 4 (expected at most 1)",
	[STR_WRAP] = "/ranks/finish_s: extent 4503599627370497 of",
	[HUGE_EXTENT] = "/ranks/finish_s: extent 1099511627776 of 8-byte elements is over hetsim's 1024 MiB limit",
	[LISTED_MISSING] = "/ranks/finish_s: listed in the columns attribute but missing",
	[UNEQUAL] = "/ranks/finish_s: a column of a different length from the table's first",
	[VLEN_STR] = "/ranks/finish_s: a variable-length string",
	[NO_STAGE] = "/ranks/stage: a required column is missing",
};

START_TEST(bad_shape)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	char h5[128], dir[128];
	hs_test_tmpname(h5, sizeof h5, "badh5", ".h5");
	hs_test_tmpname(dir, sizeof dir, "badh5-rep", "");
	write_bad(h5, (enum flaw)_i);
	hs_report_opts o = {0};
	hs_err err = {0};
	ck_assert_int_eq(hs_report_make(h5, dir, &o, &err), -1);
	ck_assert_msg(err.code == HS_EINPUT, "flaw %d: code %d: %s", _i, err.code, err.msg);
	ck_assert_msg(strstr(err.msg, h5) && strstr(err.msg, expect[_i]), "flaw %d: %s", _i, err.msg);
	struct stat sb;
	ck_assert_msg(stat(dir, &sb) != 0, "flaw %d: the report folder was left behind", _i);
	remove(h5);
}
END_TEST

/* Schema 1 (tables as groups of column datasets) still reads: the file above without a flaw. */
START_TEST(schema1_tables_read)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	char h5[128];
	hs_test_tmpname(h5, sizeof h5, "h5v1", ".h5");
	write_bad(h5, NFLAWS);
	hs_err err = {0};
	hs_h5r *r = hs_h5_open(h5, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	char **names;
	int nc;
	ck_assert_int_eq(hs_h5_columns(r, "/ranks", &names, &nc), 0);
	ck_assert_int_eq(nc, 5);
	ck_assert_str_eq(names[4], "finish_s");
	for (int i = 0; i < nc; i++)
		free(names[i]);
	free(names);
	double *v;
	size_t n;
	ck_assert_int_eq(hs_h5_read_num(r, "/ranks", "finish_s", &v, &n), 0);
	ck_assert(n == 2 && v[0] == 0 && v[1] == 1);
	free(v);
	ck_assert(hs_h5_is_str(r, "/ranks", "device"));
	ck_assert(!hs_h5_is_str(r, "/ranks", "finish_s"));
	ck_assert_ptr_null(hs_h5_error(r));
	hs_h5_close(r);
	remove(h5);
}
END_TEST

/* Schema 2: a table that is a dataset of another type than a compound is refused by name. */
START_TEST(schema2_not_a_table)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	char h5[128];
	hs_test_tmpname(h5, sizeof h5, "h5v2", ".h5");
	hid_t f = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	attr_str(f, "hetsim_kind", "run");
	hsize_t n2 = 2;
	double two[2] = {0, 1};
	dataset(f, "/ranks", H5T_NATIVE_DOUBLE, 1, &n2, two);
	H5Fclose(f);
	hs_err err = {0};
	hs_h5r *r = hs_h5_open(h5, &err);
	ck_assert_ptr_nonnull(r);
	double *v;
	size_t n;
	ck_assert_int_eq(hs_h5_read_num(r, "/ranks", "finish_s", &v, &n), -1);
	ck_assert_ptr_nonnull(hs_h5_error(r));
	ck_assert_msg(strstr(hs_h5_error(r)->msg, "/ranks: a dataset that is not a table"), "%s", hs_h5_error(r)->msg);
	hs_h5_close(r);
	remove(h5);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report_badh5");
	TCase *t = tcase_create("schema");
	tcase_set_timeout(t, 20);
	tcase_add_loop_test(t, bad_shape, 0, NFLAWS);
	tcase_add_test(t, schema1_tables_read);
	tcase_add_test(t, schema2_not_a_table);
	suite_add_tcase(s, t);
	return s;
}

#define HS_CHECK_SKIP no_gnuplot
#include "tests/unit/check_main.h"
