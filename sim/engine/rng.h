/* hs_rng: seeded random streams (GSL's mt19937). One stream per purpose (noise, traffic, failures), each
 * derived from the scenario seed and a stream number, so adding draws to one purpose never shifts another's
 * sequence and a seed always gives the same run. */
#ifndef HS_RNG_H
#define HS_RNG_H

#include <stdint.h>

typedef struct hs_rng hs_rng;

hs_rng *hs_rng_create(uint64_t seed, uint64_t stream);
void hs_rng_destroy(hs_rng *r);
double hs_rng_uniform(hs_rng *r);              /* [0, 1) */
uint64_t hs_rng_uint(hs_rng *r, uint64_t n);   /* [0, n) */
double hs_rng_exponential(hs_rng *r, double mean);
double hs_rng_lognormal(hs_rng *r, double zeta, double sigma);
double hs_rng_gamma(hs_rng *r, double shape, double scale);
double hs_rng_weibull(hs_rng *r, double scale, double shape);
double hs_rng_gaussian(hs_rng *r, double sigma);
uint64_t hs_rng_binomial(hs_rng *r, double p, uint64_t n); /* successes in n trials of probability p */

#endif
