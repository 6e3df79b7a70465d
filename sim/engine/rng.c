#include "sim/engine/rng.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "sim/base/alloc.h"

struct hs_rng {
	gsl_rng *g;
};

/* splitmix64 (Steele et al. 2014) mixes seed and stream into a well-spread 32-bit GSL seed. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

hs_rng *hs_rng_create(uint64_t seed, uint64_t stream)
{
	hs_rng *r = hs_xmalloc(sizeof *r);
	r->g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r->g) {
		free(r);
		return NULL;
	}
	unsigned long s = (unsigned long)(mix(seed ^ mix(stream + 1)) & 0xffffffffu);
	gsl_rng_set(r->g, s ? s : 4357);
	return r;
}

void hs_rng_destroy(hs_rng *r)
{
	if (!r)
		return;
	gsl_rng_free(r->g);
	free(r);
}

double hs_rng_uniform(hs_rng *r) { return gsl_rng_uniform(r->g); }
uint64_t hs_rng_uint(hs_rng *r, uint64_t n)
{
	if (n <= 1)
		return 0;
	if (n <= 0xffffffffu)
		return gsl_rng_uniform_int(r->g, (unsigned long)n);
	return (uint64_t)(gsl_rng_uniform(r->g) * (double)n) % n;
}
double hs_rng_exponential(hs_rng *r, double mean) { return gsl_ran_exponential(r->g, mean); }
double hs_rng_lognormal(hs_rng *r, double zeta, double sigma) { return gsl_ran_lognormal(r->g, zeta, sigma); }
double hs_rng_gamma(hs_rng *r, double shape, double scale) { return gsl_ran_gamma(r->g, shape, scale); }
double hs_rng_weibull(hs_rng *r, double scale, double shape) { return gsl_ran_weibull(r->g, scale, shape); }
double hs_rng_gaussian(hs_rng *r, double sigma) { return gsl_ran_gaussian(r->g, sigma); }

/* GSL's binomial takes an unsigned int count; larger counts (never met in practice: tokens per layer) are
 * split into chunks, a sum of binomials being binomial. */
uint64_t hs_rng_binomial(hs_rng *r, double p, uint64_t n)
{
	uint64_t k = 0;
	while (n > 0) {
		unsigned int c = n > 0x7fffffffu ? 0x7fffffffu : (unsigned int)n;
		k += gsl_ran_binomial(r->g, p, c);
		n -= c;
	}
	return k;
}
