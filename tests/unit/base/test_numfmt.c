/* sim/base/numfmt: hs_fmt_6g writes what snprintf's "%.6g" writes, byte for byte, over every magnitude, ties
 * and near-ties of the sixth digit, powers of ten and the values either side of them. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/numfmt.h"
#include "tests/unit/helpers.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void same(double v)
{
	char want[64], got[64];
	snprintf(want, sizeof want, "%.6g", v);
	size_t n = hs_fmt_6g(got, v);
	if (strcmp(want, got) || n != strlen(want))
		ck_abort_msg("%.17g: snprintf '%s', hs_fmt_6g '%s' (%zu)", v, want, got, n);
}

START_TEST(equals_snprintf)
{
	static const double fixed[] = {0.0, -0.0, 1, -1, 0.5, 100000.5, 999999.5, 999999.4999, 1e5, 1e6, 1e-5, 1e-4,
				       9.999995e-5, 0.000099999949, 123456.5, 1.000005, 2.5, 1e300, -1e-300, 5e-324,
				       INFINITY, -INFINITY, NAN, 1e22, 1e27, 1e-22, 9.9999949999e32, 0.1, 0.3};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		same(fixed[i]);
	for (int i = 0; i < 400000; i++) {
		uint64_t r = next();
		double v;
		memcpy(&v, &r, sizeof v); /* any bit pattern: every exponent */
		same(v);
		/* a decimal of a few digits at a magnitude rows hold (times, fractions, rates, costs) */
		int e = (int)(next() % 50) - 25;
		same((double)(next() % 100000000) * pow(10, e));
		/* the sixth digit's ties and the values a few ulps either side */
		double t = ((double)(next() % 900000 + 100000) + 0.5) * pow(10, (int)(next() % 40) - 20);
		same(t);
		same(nextafter(t, INFINITY));
		same(nextafter(t, -INFINITY));
		double p = pow(10, (int)(next() % 60) - 30);
		same(p);
		same(nextafter(p, 0));
		same(-nextafter(p, INFINITY));
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("numfmt");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, equals_snprintf);
	suite_add_tcase(s, tc);
	return s;
}

#include "tests/unit/check_main.h"
