#include <check.h>
#include <string.h>

#include "config/yaml.h"
#include "topology/device.h"

static int from_text(const char *text, hs_device_type *d, hs_err *err)
{
	hs_err_clear(err);
	hs_ydoc *doc = hs_yaml_load_string(text, strlen(text), "t.yaml", err);
	ck_assert_ptr_nonnull(doc);
	hs_ynode *root = hs_yaml_root(doc);
	int rc = hs_device_from_yaml(hs_yaml_get(root, "gpu"), "cluster.groups.0.gpu", d, err);
	hs_yaml_free(doc);
	return rc;
}

START_TEST(builtins)
{
	int n = 0;
	for (const char *const *p = hs_device_names(); *p; p++, n++) {
		const hs_device_type *d = hs_device_builtin(*p);
		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d->name, *p);
		ck_assert_str_eq(d->profile, *p);
		ck_assert(d->peak_flops[HS_BF16] > 0 && d->hbm_bytes > 0 && d->hbm_bw > 0 && d->tdp_w > 0);
		ck_assert(d->scaleup_bw > 0);
	}
	ck_assert_int_eq(n, 11);
	const hs_device_type *h = hs_device_builtin("H100-SXM-80GB");
	ck_assert_double_eq_tol(h->peak_flops[HS_BF16], 989e12, 1e9);
	ck_assert_double_eq_tol(h->peak_flops[HS_FP8], 1979e12, 1e9);
	ck_assert_double_eq_tol(h->hbm_bw, 3.35e12, 1e9);
	ck_assert_double_eq_tol(h->scaleup_bw, 450e9, 1e6);
	ck_assert_double_eq(hs_device_builtin("A100-SXM-40GB")->peak_flops[HS_FP8], 0);
	ck_assert_double_eq(hs_device_builtin("RTX-3090")->peak_flops[HS_FP8], 0);
	ck_assert_double_eq_tol(hs_device_builtin("H200-SXM-141GB")->hbm_bw, 4.8e12, 1e9);
	ck_assert_ptr_null(hs_device_builtin("H100"));
}
END_TEST

START_TEST(scalar_names_a_builtin)
{
	hs_device_type d;
	hs_err err;
	ck_assert_int_eq(from_text("gpu: MI300X\n", &d, &err), 0);
	ck_assert_str_eq(d.name, "MI300X");
	ck_assert_int_eq(from_text("gpu: H100-SXM-80G\n", &d, &err), -1);
	ck_assert_int_eq(err.code, HS_EINPUT);
	ck_assert_msg(strstr(err.msg, "t.yaml:1:6: cluster.groups.0.gpu") && strstr(err.msg, "did you mean 'H100-SXM-80GB'"),
		      "%s", err.msg);
}
END_TEST

START_TEST(inline_and_base)
{
	hs_device_type d;
	hs_err err;
	ck_assert_int_eq(from_text("gpu: {name: X1, peak_bf16: '100 TFLOP/s', memory: '16 GiB',\n"
				   "      memory_bandwidth: '1 TB/s', tdp: '300 W'}\n", &d, &err), 0);
	ck_assert_str_eq(d.name, "X1");
	ck_assert_double_eq_tol(d.peak_flops[HS_BF16], 100e12, 1);
	ck_assert_double_eq_tol(d.peak_flops[HS_FP16], 100e12, 1);
	ck_assert_double_eq(d.peak_flops[HS_FP8], 0);
	ck_assert_double_eq(d.hbm_bytes, 16.0 * 1073741824.0);
	ck_assert_double_eq_tol(d.hbm_bw, 1e12, 1);
	ck_assert_str_eq(d.profile, "H200-SXM-141GB");
	ck_assert_int_eq(from_text("gpu:\n  base: H100-SXM-80GB\n  name: H100-slow\n  memory_bandwidth: 2 TB/s\n"
				   "  profile: H100-SXM-80GB\n", &d, &err), 0);
	ck_assert_str_eq(d.name, "H100-slow");
	ck_assert_double_eq_tol(d.peak_flops[HS_BF16], 989e12, 1e9);
	ck_assert_double_eq_tol(d.hbm_bw, 2e12, 1);
	ck_assert_double_eq_tol(d.scaleup_bw, 450e9, 1);
	ck_assert_int_eq(from_text("gpu: {base: A100-SXM-80GB}\n", &d, &err), 0);
	ck_assert_str_eq(d.name, "A100-SXM-80GB");
}
END_TEST

START_TEST(bad_input)
{
	hs_device_type d;
	hs_err err;
	ck_assert_int_eq(from_text("gpu: {name: X, peak_bf16: '100 TFLOP/s', memory: '-16 GiB', memory_bandwidth: 1 TB/s}\n",
				   &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "cluster.groups.0.gpu.memory"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu:\n  base: H100-SXM-80GB\n  memroy: 1 GiB\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "t.yaml:3:3") && strstr(err.msg, "did you mean 'memory'"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: {peak_bf16: 1e14, memory: 1e9, memory_bandwidth: 1e12}\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "name") && strstr(err.msg, "missing"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: {name: Y, memory: 1e9, memory_bandwidth: 1e12}\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "peak_bf16"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: {base: B300}\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "gpu.base") && strstr(err.msg, "unknown device type 'B300'"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: {base: B200, memory_bandwidth: 8 GiB}\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "memory_bandwidth"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: [1, 2]\n", &d, &err), -1);
	/* a family name suggests its types, not the nearest other family by edit distance (B200) */
	ck_assert_int_eq(from_text("gpu: H100\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "unknown device type 'H100' (did you mean one of 'H100-SXM-80GB', "
				      "'H100-PCIe-80GB'?)"), "%s", err.msg);
	ck_assert_int_eq(from_text("gpu: h200\n", &d, &err), -1);
	ck_assert_msg(strstr(err.msg, "(did you mean 'H200-SXM-141GB'?)"), "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("device");
	tcase_add_test(tc, builtins);
	tcase_add_test(tc, scalar_names_a_builtin);
	tcase_add_test(tc, inline_and_base);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
