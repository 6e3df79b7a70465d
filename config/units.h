/* Quantities with units, as scenario files write them: '450 GB/s', '400 Gb/s', '1.5 us', '80 GiB', '2k'.
 * A plain number is in SI base units (bytes, seconds, bytes/s, FLOP/s, watts). Prefixes are case-exact:
 * 'm' is milli and 'M' mega; 'b' is bits and 'B' bytes. kB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024, and a
 * bare K/M/G on a byte count is a power of 1024 (as nccl-tests means it); on a count K/M/G stay powers of 1000. */
#ifndef HS_UNITS_H
#define HS_UNITS_H

#include <stddef.h>

enum hs_unit {
	HS_U_COUNT, /* dimensionless: 2k, 1.5M, 4Ki */
	HS_U_BYTES, /* B, kB, MB, GB, TB, KiB, MiB, GiB, TiB */
	HS_U_BW,    /* bytes/s: GB/s, GiB/s, Gb/s (bits), GBps, Gbps */
	HS_U_TIME,  /* seconds: ps, ns, us, ms, s, min, h, d */
	HS_U_FLOPS, /* FLOP/s: TFLOP/s, TFLOPS, PFLOP/s */
	HS_U_POWER, /* watts: W, kW, MW */
	HS_U_RATE,  /* per second: /s, k/s, M/s, Hz, kHz, MHz, GHz */
};

/* Parse `s` as a quantity of kind `u` into SI base units. Returns 0, or -1 with a reason in `why`
 * ("unit 'GB' is a size, not a bandwidth"). Rejects NaN, infinities and trailing garbage. */
int hs_units_parse(const char *s, enum hs_unit u, double *out, char *why, size_t whylen);
/* What a value of this kind looks like, for messages: "a bandwidth such as '450 GB/s' or '400 Gb/s'". */
const char *hs_units_expect(enum hs_unit u);

#endif
