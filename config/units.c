#include "config/units.h"
#include "sim/base/sizes.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct suffix {
	const char *s;
	double mul;
};

/* Longest suffixes first within each table is not needed: matching is exact on the whole remainder. */
static const struct suffix count_sfx[] = {{"", 1},	   {"k", 1e3},	 {"K", 1e3},	  {"M", 1e6},
					  {"G", 1e9},	   {"T", 1e12},	 {"Ki", 1024.0}, {"Mi", HS_MiB},
					  {"Gi", HS_GiB}, {NULL, 0}};
/* The one size grammar (docs/scenario.md, "Sizes"): kB/KB/MB/GB/TB/PB are powers of 1000 and KiB/MiB/GiB/TiB
 * powers of 1024, as SI and IEC write them; a bare k/K/M/G/T on a byte count is a power of 1024, because that is
 * what nccl-tests' -b/-e options and its logs mean by 1G, and a validation check that read nccl-tests' "1G" as
 * 10^9 would be 7% off without saying so (issue 17). Counts keep k/M/G as powers of 1000 (count_sfx). */
static const struct suffix bytes_sfx[] = {
	{"", 1},	  {"B", 1},	      {"kB", 1e3},		{"KB", 1e3},		  {"MB", 1e6},
	{"GB", 1e9},	  {"TB", 1e12},	      {"PB", 1e15},		{"KiB", 1024.0},	  {"MiB", HS_MiB},
	{"GiB", HS_GiB}, {"TiB", HS_TiB}, {"k", 1024.0}, {"K", 1024.0}, {"M", HS_MiB},
	{"G", HS_GiB},	  {"T", HS_TiB},      {"Ki", 1024.0},	{"Mi", HS_MiB}, {"Gi", HS_GiB}, {NULL, 0}};
static const struct suffix bw_sfx[] = {
	{"", 1},	     {"B/s", 1},	 {"kB/s", 1e3},	 {"KB/s", 1e3},	 {"MB/s", 1e6},
	{"GB/s", 1e9},	     {"TB/s", 1e12},	 {"KiB/s", 1024.0}, {"MiB/s", HS_MiB}, {"GiB/s", HS_GiB},
	{"TiB/s", HS_TiB}, {"b/s", 0.125}, {"kb/s", 125.0}, {"Kb/s", 125.0},	 {"Mb/s", 1.25e5},
	{"Gb/s", 1.25e8},    {"Tb/s", 1.25e11},	 {"Bps", 1},	 {"kBps", 1e3},	 {"MBps", 1e6},
	{"GBps", 1e9},	     {"TBps", 1e12},	 {"bps", 0.125}, {"kbps", 125.0}, {"Mbps", 1.25e5},
	{"Gbps", 1.25e8},    {"Tbps", 1.25e11},	 {NULL, 0}};
static const struct suffix time_sfx[] = {{"", 1},    {"s", 1},	    {"ms", 1e-3},  {"us", 1e-6},
					 {"\xc2\xb5s", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}, {"min", 60},
					 {"h", 3600}, {"d", 86400}, {NULL, 0}};
static const struct suffix flops_sfx[] = {{"", 1},	      {"FLOP/s", 1},	   {"kFLOP/s", 1e3},
					  {"MFLOP/s", 1e6},   {"GFLOP/s", 1e9},	   {"TFLOP/s", 1e12},
					  {"PFLOP/s", 1e15},  {"FLOPS", 1},	   {"GFLOPS", 1e9},
					  {"TFLOPS", 1e12},   {"PFLOPS", 1e15},	   {NULL, 0}};
static const struct suffix power_sfx[] = {{"", 1}, {"W", 1}, {"kW", 1e3}, {"MW", 1e6}, {"mW", 1e-3}, {NULL, 0}};
static const struct suffix rate_sfx[] = {{"", 1},	 {"/s", 1},	{"k/s", 1e3},	{"M/s", 1e6},
					 {"G/s", 1e9},	 {"Hz", 1},	{"kHz", 1e3},	{"MHz", 1e6},
					 {"GHz", 1e9},	 {NULL, 0}};

static const struct suffix *table(enum hs_unit u)
{
	switch (u) {
	case HS_U_COUNT: return count_sfx;
	case HS_U_BYTES: return bytes_sfx;
	case HS_U_BW: return bw_sfx;
	case HS_U_TIME: return time_sfx;
	case HS_U_FLOPS: return flops_sfx;
	case HS_U_POWER: return power_sfx;
	case HS_U_RATE: return rate_sfx;
	}
	return count_sfx;
}

const char *hs_units_expect(enum hs_unit u)
{
	switch (u) {
	case HS_U_COUNT: return "a number such as 64, '2k' or '1.5M'";
	case HS_U_BYTES: return "a size such as '80 GiB', '512 MB' or a number of bytes";
	case HS_U_BW: return "a bandwidth such as '450 GB/s' or '400 Gb/s', or bytes per second";
	case HS_U_TIME: return "a duration such as '1.5 us', '2 ms' or a number of seconds";
	case HS_U_FLOPS: return "a rate such as '989 TFLOP/s', or FLOP per second";
	case HS_U_POWER: return "a power such as '700 W'";
	case HS_U_RATE: return "a rate such as '100 M/s' or '1.5 GHz'";
	}
	return "a number";
}

/* Which kind a suffix belongs to, for "unit 'GB' is a size, not a bandwidth". */
static const char *kind_name(enum hs_unit u)
{
	static const char *const names[] = {"count", "size", "bandwidth", "duration", "FLOP rate", "power", "rate"};
	return names[u];
}

int hs_units_parse(const char *s, enum hs_unit u, double *out, char *why, size_t whylen)
{
	if (!s) {
		snprintf(why, whylen, "missing value");
		return -1;
	}
	while (isspace((unsigned char)*s))
		s++;
	/* A bare whole number (tp: 8, nodes: 128), the most common value, without strtod: below 10^15 the double
	 * strtod returns is that integer exactly, and every kind's bare number has multiplier 1. */
	size_t nd = 0;
	uint64_t iv = 0;
	while (nd < 16 && s[nd] >= '0' && s[nd] <= '9')
		iv = iv * 10 + (uint64_t)(s[nd++] - '0');
	if (nd > 0 && nd < 16 && s[nd] == 0) {
		*out = (double)iv;
		return 0;
	}
	char *end;
	double v = strtod(s, &end);
	if (end == s) {
		snprintf(why, whylen, "'%.60s' is not a number", s);
		return -1;
	}
	/* strtod accepts "nan", "inf" and hex floats; a scenario means none of them. */
	for (const char *p = s; p < end; p++)
		if (isalpha((unsigned char)*p) && *p != 'e' && *p != 'E') {
			snprintf(why, whylen, "'%.60s' is not a finite decimal number", s);
			return -1;
		}
	if (!isfinite(v)) {
		snprintf(why, whylen, "'%.60s' is not finite", s);
		return -1;
	}
	while (isspace((unsigned char)*end))
		end++;
	size_t n = strlen(end);
	while (n > 0 && isspace((unsigned char)end[n - 1]))
		n--;
	for (const struct suffix *x = table(u); x->s; x++)
		if (strlen(x->s) == n && strncmp(x->s, end, n) == 0) {
			*out = v * x->mul;
			return 0;
		}
	/* Suffix not of this kind: say which kind it is, if any. */
	for (int k = HS_U_COUNT; k <= HS_U_RATE; k++) {
		if (k == (int)u || k == HS_U_COUNT)
			continue;
		for (const struct suffix *x = table((enum hs_unit)k); x->s; x++)
			if (x->s[0] && strlen(x->s) == n && strncmp(x->s, end, n) == 0) {
				snprintf(why, whylen, "unit '%.*s' is a %s, not a %s", (int)n, end,
					 kind_name((enum hs_unit)k), kind_name(u));
				return -1;
			}
	}
	snprintf(why, whylen, "unknown unit '%.*s' for a %s", (int)(n > 40 ? 40 : n), end, kind_name(u));
	return -1;
}
