/* hs_time: simulated time as integer picoseconds, and the converters used at the edges.
 *
 * Everything inside the simulator speaks picoseconds (time) and bytes or FLOP per picosecond (rates).
 * Parsing and printing convert; nothing in the middle does. uint64_t picoseconds cover 213 days. */
#ifndef HS_TIME_H
#define HS_TIME_H

#include <stdint.h>

typedef uint64_t hs_time;

#define HS_TIME_MAX UINT64_MAX
#define HS_PS_PER_S 1e12

/* Seconds (double) to picoseconds, rounded to nearest; negative or NaN gives 0, overflow saturates. */
static inline hs_time hs_time_from_s(double s)
{
	if (!(s > 0))
		return 0;
	if (s * HS_PS_PER_S >= 1.8e19)
		return HS_TIME_MAX;
	return (hs_time)(s * HS_PS_PER_S + 0.5);
}

static inline double hs_time_to_s(hs_time t) { return (double)t / HS_PS_PER_S; }

/* Bytes per second to bytes per picosecond, the internal rate unit. */
static inline double hs_rate_from_Bps(double bps) { return bps / HS_PS_PER_S; }
static inline double hs_rate_to_Bps(double r) { return r * HS_PS_PER_S; }

/* Time to move `amount` at `rate` per picosecond, rounded up so a transfer never finishes early. */
static inline hs_time hs_time_for(double amount, double rate)
{
	if (amount <= 0)
		return 0;
	double t = amount / rate;
	if (t >= 1.8e19)
		return HS_TIME_MAX;
	hs_time r = (hs_time)t;
	return (double)r < t ? r + 1 : r;
}

#endif
