#include "sim/base/numfmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The fast path needs a long double of at least 64 bits of mantissa: then 10^k is exact for k <= 27 (5^27 <
 * 2^64), and a product or quotient of a double by it is within 2^-64 of its value (relative). Elsewhere (a
 * long double that is a double) everything goes to snprintf. */
enum { MAXPOW = 27 };

/* 10^k, exact: each literal is an integer below 2^64 */
static const long double p10[MAXPOW + 1] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
					    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
					    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* a x 10^k (|k| <= MAXPOW), rounded once */
static long double scale(double a, int k)
{
	return k >= 0 ? (long double)a * p10[k] : (long double)a / p10[-k];
}

/* The six significant digits of a > 0 (d in [10^5, 10^6)) and its decimal exponent x, as %e with precision 5
 * rounds them; 0 when this cannot be sure (near a tie, a power of ten, or outside the exact range). */
static int digits6(double a, uint64_t *d, int *x)
{
	int e = (int)floor(log10(a));
	for (int tries = 0; tries < 3; tries++) {
		int k = 5 - e;
		if (k > MAXPOW || k < -MAXPOW)
			return 0;
		long double s = scale(a, k);
		/* the scaled value is within 1e6 x 2^-64 < 1e-13 of a x 10^k: 1e-9 keeps far from every doubt */
		if (fabsl(s - 1e5L) < 1e-9L || fabsl(s - 1e6L) < 1e-9L)
			return 0;
		if (s < 1e5L) {
			e--;
			continue;
		}
		if (s >= 1e6L) {
			e++;
			continue;
		}
		long double f = floorl(s);
		if (fabsl(s - f - 0.5L) < 1e-9L)
			return 0; /* a tie or nearly one: round-half-even on the exact value is snprintf's to decide */
		uint64_t n = (uint64_t)f + (s - f > 0.5L);
		if (n == 1000000) {
			n = 100000;
			e++;
		}
		*d = n;
		*x = e;
		return 1;
	}
	return 0;
}

size_t hs_fmt_6g(char *buf, double v)
{
	uint64_t d;
	int x;
	if (LDBL_MANT_DIG < 64 || !isfinite(v) || v == 0 || !digits6(fabs(v), &d, &x))
		return (size_t)snprintf(buf, 32, "%.6g", v);
	char dg[6];
	for (int i = 5; i >= 0; i--, d /= 10)
		dg[i] = (char)('0' + d % 10);
	int nd = 6; /* %g drops trailing zeros (no '#' flag) */
	while (nd > 1 && dg[nd - 1] == '0')
		nd--;
	char *p = buf;
	if (v < 0)
		*p++ = '-';
	if (x < -4 || x >= 6) { /* %e style: d.ddddde+XX */
		*p++ = dg[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, dg + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		*p++ = 'e';
		*p++ = x < 0 ? '-' : '+';
		int ax = x < 0 ? -x : x;
		if (ax >= 100)
			*p++ = (char)('0' + ax / 100);
		*p++ = (char)('0' + ax / 10 % 10);
		*p++ = (char)('0' + ax % 10);
	} else if (x >= 0) { /* x + 1 digits before the point */
		memcpy(p, dg, (size_t)x + 1);
		p += x + 1;
		if (nd > x + 1) {
			*p++ = '.';
			memcpy(p, dg + x + 1, (size_t)(nd - x - 1));
			p += nd - x - 1;
		}
	} else { /* 0.000ddd */
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*p++ = '0';
		memcpy(p, dg, (size_t)nd);
		p += nd;
	}
	*p = 0;
	return (size_t)(p - buf);
}
