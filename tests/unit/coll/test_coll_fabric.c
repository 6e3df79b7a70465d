/* Fabric profiles (calib/fabric.h) and their one place of use (sim/coll/coll_nccl.c): a fit recovers a
 * correction it was given, a profile survives save and load, a cluster that names one times its collectives
 * by the correction (hs_coll_nccl_time and hs_coll_time alike) and one that names none is unchanged, and a
 * profile of another cluster shape is refused with the key's file and line. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "calib/fabric.h"
#include "config/yaml.h"
#include "sim/coll/coll_nccl.h"
#include "tests/unit/helpers.h"

static const char *const scn_fmt = "cluster:\n"
				   "  %s\n"
				   "  groups:\n"
				   "    - {name: a, nodes: 2, gpus_per_node: %d, gpu: A100-SXM-80GB,\n"
				   "       scaleup: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us},\n"
				   "       nic: {bandwidth: 200 Gb/s, per_node: 8, latency: 3 us}}\n"
				   "  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}\n";

static hs_cluster *cluster(const char *extra, int gpn, hs_err *err)
{
	char text[2048];
	snprintf(text, sizeof text, scn_fmt, extra, gpn);
	char path[128];
	hs_test_write_tmp(path, sizeof path, "fabscn", text);
	hs_ydoc *d = hs_yaml_load_file(path, err);
	ck_assert_ptr_nonnull(d);
	hs_cluster *c = hs_cluster_from_yaml(hs_yaml_get(hs_yaml_root(d), "cluster"), "cluster", err);
	hs_yaml_free(d);
	unlink(path);
	if (c && hs_fabprof_attach(c, err)) {
		hs_cluster_free(c);
		return NULL;
	}
	return c;
}

/* Rows made by a known correction are fitted back to it: latency scale 1.5, efficiency 0.8. */
START_TEST(fit_recovers)
{
	hs_fab_row r[12];
	hs_fab_entry want = {.lat_scale = 1.5, .eff = 0.8};
	for (int i = 0; i < 12; i++) {
		double S = 1024.0 * (1 << (2 * i)) / 4, lat = 30e-6, bw = 100e9;
		r[i] = (hs_fab_row){"all_reduce", HS_FAB_INTER, "Simple", S, hs_fab_entry_time(&want, S, lat, bw), lat, bw, 0};
	}
	hs_err err = {0};
	hs_fab_shape sh = {"A100-SXM-80GB", 8, "nvswitch", 25e9, 8};
	hs_fabprof *p = hs_fabprof_fit(r, 12, -1, &sh, "t", &err);
	ck_assert_ptr_nonnull(p);
	const hs_fab_entry *e = hs_fabprof_lookup(p, "all_reduce", HS_FAB_INTER, "Simple");
	ck_assert_ptr_nonnull(e);
	ck_assert_double_eq_tol(e->lat_scale, 1.5, 1e-6);
	ck_assert_double_eq_tol(e->eff, 0.8, 1e-6);
	/* another protocol of the scope falls back to the pooled entry; another scope has none */
	ck_assert_ptr_eq(hs_fabprof_lookup(p, "all_reduce", HS_FAB_INTER, "LL"),
			 hs_fabprof_lookup(p, "all_reduce", HS_FAB_INTER, "any"));
	ck_assert_ptr_null(hs_fabprof_lookup(p, "all_reduce", HS_FAB_INTRA, "Simple"));
	ck_assert_ptr_null(hs_fabprof_lookup(p, "all_gather", HS_FAB_INTER, "Simple"));

	/* save, load, attach: the cluster's all-reduces follow the correction; a cluster without stays as it was */
	char path[128], key[256];
	hs_test_tmpfile(path, sizeof path, "fab", ".yaml");
	ck_assert_int_eq(hs_fabprof_save(p, path, NULL, &err), 0);
	hs_fabprof *q = hs_fabprof_load(path, &err);
	ck_assert_msg(q != NULL, "%s", err.msg);
	ck_assert_double_eq_tol(hs_fabprof_lookup(q, "all_reduce", HS_FAB_INTER, "Simple")->eff, 0.8, 1e-5);
	hs_fabprof_free(q);
	snprintf(key, sizeof key, "fabric_profile: %s", path);
	hs_cluster *plain = cluster("", 8, &err), *fit = cluster(key, 8, &err);
	ck_assert_msg(plain && fit, "%s", err.msg);
	int ranks[16];
	for (int i = 0; i < 16; i++)
		ranks[i] = i;
	double S = 1 << 30;
	hs_coll_choice ch;
	ck_assert(hs_coll_nccl_time(plain, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 16, S, &ch) > 0);
	ck_assert_int_eq(ch.proto, HS_PROTO_SIMPLE);
	double t1 = hs_coll_nccl_time(fit, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 16, S, NULL);
	ck_assert_double_eq_tol(t1, hs_fab_entry_time(e, S, ch.lat_s, ch.bw_Bps), 1e-12);
	/* the training path: hs_coll_time is the physical closed form without a profile, the calibrated time with */
	ck_assert_double_eq_tol(hs_coll_time(fit, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, ranks, 16, S), t1, 1e-12);
	ck_assert(fabs(hs_coll_time(plain, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, ranks, 16, S) - t1) > 1e-6);
	/* inside one node the profile has no entry: the model's time stands */
	ck_assert_double_eq(hs_coll_nccl_time(fit, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 8, S, NULL),
			    hs_coll_nccl_time(plain, HS_COLL_ALL_REDUCE, HS_ALGO_AUTO, HS_PROTO_AUTO, ranks, 8, S, NULL));
	hs_cluster_free(plain);
	hs_cluster_free(fit);

	/* another cluster shape (4 GPUs per node): refused, at the key */
	hs_err_clear(&err);
	ck_assert_ptr_null(cluster(key, 4, &err));
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "another cluster shape") && strstr(err.msg, ":2:19: fabric_profile"), "%s", err.msg);
	unlink(path);
	hs_fabprof_free(p);
}
END_TEST

/* Bad files: not a profile (the alpha-beta table alone), an unknown scope. */
START_TEST(bad_files)
{
	char path[128];
	hs_err err = {0};
	hs_test_write_tmp(path, sizeof path, "fabbad", "collectives:\n  - {collective: all_reduce}\n");
	ck_assert_ptr_null(hs_fabprof_load(path, &err));
	ck_assert_msg(strstr(err.msg, "fabric_profile: missing"), "%s", err.msg);
	unlink(path);
	hs_err_clear(&err);
	hs_test_write_tmp(path, sizeof path, "fabbad",
			  "fabric_profile:\n  measured_on: {gpus_per_node: 8, scaleup: nvswitch}\n  entries:\n"
			  "    - {collective: all_reduce, scope: across, efficiency: 0.9}\n");
	ck_assert_ptr_null(hs_fabprof_load(path, &err));
	ck_assert_msg(strstr(err.msg, ":4:") && strstr(err.msg, "scope"), "%s", err.msg);
	unlink(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_fabric");
	TCase *t = tcase_create("coll_fabric");
	tcase_add_test(t, fit_recovers);
	tcase_add_test(t, bad_files);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
