/* HDF5 round trip through the HDF5 C API: what hs_h5_write_run writes (summary attributes, /ranks, /stages,
 * /tasks) reads back equal to the result it came from; a link series written through the hook reads back;
 * column groups list their columns in order; and the file appears only when committed. */
#include <check.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/study/simulate.h"
#include "tests/unit/helpers.h"
#include "traces/hdf5_out.h"

START_TEST(run_round_trip)
{
	hs_sim sim;
	hs_err err = {0};
	ck_assert_msg(hs_simulate("scenarios/default.yaml", NULL, 0, NULL, &sim, &err) == 0, "%s", err.msg);
	char path[128];
	hs_test_tmpname(path, sizeof path, "h5", "");
	hs_h5 *h = hs_h5_create(path, "run", &err);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(hs_h5_write_run(h, &sim, 1, &err), 0);
	ck_assert_int_ne(access(path, F_OK), 0); /* not there before commit */
	ck_assert_int_eq(hs_h5_commit(h, &err), 0);

	/* plain HDF5 API: the root attribute, and a field of the /tasks table (a compound dataset, read by
	 * field name as h5py and pandas read it) */
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert(f >= 0);
	double step = 0;
	hid_t a = H5Aopen_by_name(f, "/", "step_time_s", H5P_DEFAULT, H5P_DEFAULT);
	ck_assert(a >= 0);
	H5Aread(a, H5T_NATIVE_DOUBLE, &step);
	H5Aclose(a);
	ck_assert(step == sim.r.step_time_s);
	hid_t d = H5Dopen2(f, "/tasks", H5P_DEFAULT);
	ck_assert(d >= 0);
	hid_t dt = H5Dget_type(d);
	ck_assert_int_eq(H5Tget_class(dt), H5T_COMPOUND);
	ck_assert_int_ge(H5Tget_member_index(dt, "end_s"), 0);
	H5Tclose(dt);
	hid_t sp = H5Dget_space(d);
	hsize_t n = 0;
	H5Sget_simple_extent_dims(sp, &n, NULL);
	ck_assert_int_eq(n, sim.b.graph.ntasks);
	double *end = calloc(n, sizeof *end);
	hid_t one = H5Tcreate(H5T_COMPOUND, sizeof(double));
	H5Tinsert(one, "end_s", 0, H5T_NATIVE_DOUBLE);
	ck_assert(H5Dread(d, one, H5S_ALL, H5S_ALL, H5P_DEFAULT, end) >= 0);
	H5Tclose(one);
	/* the table's units and schema attributes */
	double ver = 0;
	hid_t va = H5Aopen(d, "schema_version", H5P_DEFAULT);
	ck_assert(va >= 0);
	H5Aread(va, H5T_NATIVE_DOUBLE, &ver);
	H5Aclose(va);
	ck_assert(ver == HS_H5_SCHEMA);
	ck_assert(H5Aexists(d, "units") > 0);
	for (hsize_t i = 0; i < n; i++)
		ck_assert(end[i] == sim.r.spans[i].end);
	free(end);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);

	/* the reader */
	hs_h5r *r = hs_h5_open(path, &err);
	ck_assert_ptr_nonnull(r);
	char kind[16], scn[128];
	ck_assert_int_eq(hs_h5_get_str(r, "/", "hetsim_kind", kind, sizeof kind), 0);
	ck_assert_str_eq(kind, "run");
	hs_h5_get_str(r, "/", "scenario", scn, sizeof scn);
	ck_assert_str_eq(scn, sim.s->name);
	double mfu, tp, e;
	hs_h5_get_num(r, "/", "mfu", &mfu);
	hs_h5_get_num(r, "/parallelism", "tp", &tp);
	ck_assert(mfu == sim.r.mfu);
	ck_assert(tp == sim.s->par.tp);
	ck_assert_int_eq(hs_h5_get_num(r, "/cost", "energy_j_per_step", &e), 0);
	ck_assert(e > 0);
	ck_assert_int_eq(hs_h5_get_num(r, "/", "no_such", &e), -1);
	char **cols;
	int nc;
	ck_assert_int_eq(hs_h5_columns(r, "/ranks", &cols, &nc), 0);
	ck_assert_str_eq(cols[0], "stage");
	ck_assert_str_eq(cols[3], "device");
	for (int i = 0; i < nc; i++)
		free(cols[i]);
	free(cols);
	double *comp;
	size_t nr;
	ck_assert_int_eq(hs_h5_read_num(r, "/ranks", "compute_s", &comp, &nr), 0);
	ck_assert_int_eq(nr, sim.r.nreps);
	for (size_t i = 0; i < nr; i++)
		ck_assert(comp[i] == sim.r.reps[i].compute_s);
	free(comp);
	char **dev;
	ck_assert(hs_h5_is_str(r, "/ranks", "device"));
	ck_assert_int_eq(hs_h5_read_str(r, "/ranks", "device", &dev, &nr), 0);
	ck_assert_str_eq(dev[0], sim.r.reps[0].device);
	for (size_t i = 0; i < nr; i++)
		free(dev[i]);
	free(dev);
	double links;
	hs_h5_get_num(r, "/", "links", &links);
	ck_assert(links == 0);
	hs_h5_close(r);
	unlink(path);
	hs_sim_free(&sim);
}
END_TEST

START_TEST(links_hook)
{
	char path[128];
	hs_test_tmpname(path, sizeof path, "h5", "");
	hs_err err = {0};
	hs_h5 *h = hs_h5_create(path, "run", &err);
	const char *names[] = {"nic0->leaf0", "leaf0->spine1"};
	double cap[] = {50e9, 400e9}, util[] = {0.1, 0.5, 0.9, 0.0, 0.2, 0.4};
	hs_link_series ls = {.nlinks = 2, .nbins = 3, .bin_s = 0.01, .names = names, .capacity_Bps = cap, .util = util};
	ck_assert_int_eq(hs_h5_write_links(h, &ls, &err), 0);
	ck_assert_int_eq(hs_h5_commit(h, &err), 0);
	hs_h5r *r = hs_h5_open(path, &err);
	double *m, nl;
	size_t rows, cols;
	ck_assert_int_eq(hs_h5_read_matrix(r, "/links_utilisation", &m, &rows, &cols), 0);
	ck_assert_int_eq(rows, 2);
	ck_assert_int_eq(cols, 3);
	for (int i = 0; i < 6; i++)
		ck_assert(m[i] == util[i]);
	free(m);
	hs_h5_get_num(r, "/", "links", &nl);
	ck_assert(nl == 2);
	hs_h5_close(r);
	unlink(path);
}
END_TEST

START_TEST(abort_leaves_nothing)
{
	char path[128];
	hs_test_tmpname(path, sizeof path, "h5", "");
	hs_err err = {0};
	hs_h5 *h = hs_h5_create(path, "run", &err);
	hs_h5_attr_num(h, "/", "x", 1);
	hs_h5_abort(h);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_ptr_null(hs_h5_create("/nonexistent-dir/x.h5", "run", &err));
	ck_assert_int_eq(err.code, HS_EINPUT);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hdf5");
	TCase *t = tcase_create("round trip");
	tcase_add_test(t, run_round_trip);
	tcase_add_test(t, links_hook);
	tcase_add_test(t, abort_leaves_nothing);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
