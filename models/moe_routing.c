/* hs_moe_routing (models/moe_routing.h): one Dirichlet draw of the expert shares, a multinomial of the tokens
 * given them, the busiest expert-parallel rank.
 *
 * Why a Dirichlet: observed routing is skewed and the skew moves between batches and iterations (He et al.
 * 2022, "FasterMoE: Modeling and Optimizing Training of Large-Scale Dynamic Pre-Trained Models", PPoPP: expert
 * popularity is skewed and changes during training; Huang et al. 2023, "Towards MoE Deployment: Mitigating
 * Inefficiencies in Mixture-of-Expert (MoE) Inference", arXiv 2303.06182: a few experts take most tokens,
 * varying by batch; DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv 2412.19437, section 2.1.2: the
 * per-batch expert load its bias adjustment keeps balanced). A symmetric Dirichlet is the one-parameter law
 * of a random composition with exchangeable experts: no expert is special, the busiest is whichever the draw
 * makes it, and skew = 1/alpha sets how uneven. It is a stated assumption, not a fit: choose skew from a
 * measured per-expert load CV (skew ~ CV^2).
 *
 * A closed form to test against: for alpha = 1, p = G / sum(G) with G_i iid Exp(1); sum(G) is independent of
 * p (Lukacs 1955, "A characterization of the gamma distribution"), so E[max G] = E[sum G] E[max p] = E E[max
 * p], and E[max G] = H_E, the harmonic number (Renyi 1953: the maximum of E exponentials is a sum of
 * independent Exp(1)/k, k = 1..E). So the busiest expert's expected load over the uniform share is
 * E E[max p] = H_E (tests/unit/models/test_moe_routing.c). */
#include "models/moe_routing.h"

#include <math.h>

double hs_moe_routing_draw(hs_rng *r, const hs_moe_routing *rt, int experts, int ep, double tokens,
			   double *scratch, double *expert, int *rank)
{
	if (expert)
		*expert = 1;
	if (rank)
		*rank = 0;
	if (!rt || !(rt->skew > 0) || experts < 1 || ep < 1 || !(tokens > 0))
		return 1;
	double alpha = 1 / rt->skew, sum = 0;
	/* Dirichlet: independent Gamma(alpha, 1) normalised (gsl_ran_dirichlet's construction) */
	for (int i = 0; i < experts; i++)
		sum += scratch[i] = hs_rng_gamma(r, alpha, 1);
	if (!(sum > 0)) { /* every gamma underflowed (alpha tiny): one expert takes all */
		for (int i = 0; i < experts; i++)
			scratch[i] = 0;
		scratch[hs_rng_uint(r, (uint64_t)experts)] = 1;
		sum = 1;
	}
	if (rt->multinomial) {
		/* multinomial(N, p) as conditional binomials, expert by expert */
		uint64_t left = (uint64_t)llround(tokens);
		double mass = 1;
		for (int i = 0; i < experts; i++) {
			double p = scratch[i] / sum;
			uint64_t k = i == experts - 1 ? left : hs_rng_binomial(r, mass > 0 ? fmin(1, p / mass) : 0, left);
			mass -= p;
			left -= k;
			scratch[i] = (double)k;
		}
		sum = tokens;
	} else {
		for (int i = 0; i < experts; i++)
			scratch[i] *= tokens / sum;
		sum = tokens;
	}
	int per = experts / ep, best = 0;
	double most = -1, top = 0;
	for (int k = 0; k < ep; k++) {
		double t = 0;
		for (int i = k * per; i < (k + 1) * per; i++) {
			t += scratch[i];
			if (scratch[i] > top)
				top = scratch[i];
		}
		if (t > most) {
			most = t;
			best = k;
		}
	}
	if (expert)
		*expert = top / (sum / experts);
	if (rank)
		*rank = best;
	return most / (sum / ep);
}
