/* hs_sched: the pipeline schedules (see schedule.h). Each builder appends a stage's items in order. */
#include "models/schedule.h"
#include "models/sched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

/* The names a scenario writes, in enum order; the behaviour of each is its row of `schedules` below. */
const char *const hs_sched_names[] = {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe", NULL};
_Static_assert(sizeof hs_sched_names / sizeof hs_sched_names[0] == HS_SCHED_COUNT + 1, "a name per schedule");

int hs_sched_parse(const char *name)
{
	for (int i = 0; hs_sched_names[i]; i++)
		if (strcmp(name, hs_sched_names[i]) == 0)
			return i;
	return -1;
}

const char *hs_sched_name(enum hs_sched_kind k) { return k >= 0 && k < HS_SCHED_COUNT ? hs_sched_names[k] : "?"; }

void hs_sched_add(hs_sched_list *l, int mb, int chunk, enum hs_si_kind kind)
{
	hs_xgrow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (hs_sched_item){mb, chunk, kind};
}

static void add(hs_sched_list *l, int mb, int chunk, enum hs_si_kind kind) { hs_sched_add(l, mb, chunk, kind); }

static void gpipe(hs_sched_list *l, int m)
{
	for (int i = 0; i < m; i++)
		add(l, i, 0, HS_SI_FWD);
	for (int i = 0; i < m; i++)
		add(l, i, 0, HS_SI_BWD);
}

static void one_f_one_b(hs_sched_list *l, int pp, int s, int m, enum hs_si_kind bwd)
{
	int warm = pp - s - 1 < m ? pp - s - 1 : m;
	for (int i = 0; i < warm; i++)
		add(l, i, 0, HS_SI_FWD);
	for (int i = 0; i < m - warm; i++) {
		add(l, warm + i, 0, HS_SI_FWD);
		add(l, i, 0, bwd);
	}
	for (int i = m - warm; i < m; i++)
		add(l, i, 0, bwd);
}

/* Megatron-LM schedules.py, forward_backward_pipelining_with_interleaving: virtual micro-batch k maps to a
 * chunk (groups of pp micro-batches per chunk, backward chunks reversed) and a micro-batch. */
static void vmb(int k, int pp, int v, int fwd, int *mb, int *chunk)
{
	int in_group = k % (pp * v);
	int c = in_group / pp;
	*chunk = fwd ? c : v - c - 1;
	*mb = k / (pp * v) * pp + k % pp;
}

static void interleaved(hs_sched_list *l, int pp, int s, int m, int v)
{
	int total = m * v, warm;
	if (m == pp)
		warm = total;
	else {
		warm = (pp - s - 1) * 2 + (v - 1) * pp;
		if (warm > total)
			warm = total;
	}
	int mb, c;
	for (int k = 0; k < warm; k++) {
		vmb(k, pp, v, 1, &mb, &c);
		add(l, mb, c, HS_SI_FWD);
	}
	for (int k = 0; k < total - warm; k++) {
		vmb(k + warm, pp, v, 1, &mb, &c);
		add(l, mb, c, HS_SI_FWD);
		vmb(k, pp, v, 0, &mb, &c);
		add(l, mb, c, HS_SI_BWD);
	}
	for (int k = total - warm; k < total; k++) {
		vmb(k, pp, v, 0, &mb, &c);
		add(l, mb, c, HS_SI_BWD);
	}
}

/* ZB-H1: run every stage's 1F1B order (B = input gradient) in unit time, and let each stage run a pending
 * W whenever its next F or B is not ready yet, or before an F that would hold more than pp micro-batches
 * between F and W (the same number on every worker, as Qi et al. keep it). Unit time F = B = W is the assumption under which Qi et al. hand-craft ZB-H1; with it the
 * fill never delays an F or B (everything finishes on integer times). The run is of every stage at once, so
 * it fills the lists of every stage it is given (out[s] NULL: not wanted) in one pass. */
static void zb_h1(hs_sched_list *const *out, int pp, int m)
{
	hs_sched_list *base = hs_xcalloc((size_t)pp, sizeof *base);
	int *pos = hs_xcalloc((size_t)pp, sizeof *pos);       /* next base item per stage */
	int *wnext = hs_xcalloc((size_t)pp, sizeof *wnext);   /* next micro-batch to W (W runs in B order) */
	int *bdone = hs_xcalloc((size_t)pp, sizeof *bdone);   /* B's finished (in order) */
	int *fdone = hs_xcalloc((size_t)pp, sizeof *fdone);   /* F's started */
	int *busy = hs_xcalloc((size_t)pp, sizeof *busy);     /* stage busy until */
	/* finish time of F and B per (stage, mb), -1 = not yet */
	long *ff = hs_xmalloc(sizeof *ff * (size_t)pp * (size_t)m);
	long *bf = hs_xmalloc(sizeof *bf * (size_t)pp * (size_t)m);
	for (size_t i = 0; i < (size_t)pp * (size_t)m; i++)
		ff[i] = bf[i] = -1;
	for (int s = 0; s < pp; s++)
		one_f_one_b(&base[s], pp, s, m, HS_SI_BWD_INPUT);
	int left = pp * 3 * m;
	long bound = 4L * (3L * m + pp) + 16; /* the run takes at most 3m + 2pp: a guard, not a limit */
	for (long t = 0; left > 0 && t < bound; t++) {
		for (int s = 0; s < pp; s++) {
			if (busy[s] > t)
				continue;
			int ready = 0;
			hs_sched_item *it = pos[s] < (int)base[s].n ? &base[s].v[pos[s]] : NULL;
			if (it) {
				long dep;
				if (it->kind == HS_SI_FWD)
					dep = s == 0 ? 0 : ff[(size_t)(s - 1) * m + it->mb];
				else
					dep = s == pp - 1 ? ff[(size_t)s * m + it->mb] : bf[(size_t)(s + 1) * m + it->mb];
				ready = dep >= 0 && dep <= t;
			}
			int wpending = wnext[s] < bdone[s];
			int held = fdone[s] - wnext[s];
			int wfirst = wpending && (!ready || (it->kind == HS_SI_FWD && held >= pp));
			if (wfirst) {
				if (out[s])
					add(out[s], wnext[s], 0, HS_SI_BWD_WEIGHT);
				wnext[s]++;
			} else if (ready) {
				if (out[s])
					add(out[s], it->mb, 0, it->kind);
				if (it->kind == HS_SI_FWD) {
					ff[(size_t)s * m + it->mb] = t + 1;
					fdone[s]++;
				} else {
					bf[(size_t)s * m + it->mb] = t + 1;
					bdone[s]++;
				}
				pos[s]++;
			} else {
				continue;
			}
			busy[s] = (int)t + 1;
			left--;
		}
	}
	for (int s = 0; s < pp; s++)
		free(base[s].v);
	free(base);
	free(pos);
	free(wnext);
	free(bdone);
	free(fdone);
	free(busy);
	free(ff);
	free(bf);
}

/* One signature for every builder: the stage's items for pp stages, m micro-batches and v chunks per rank. */
static void build_gpipe(hs_sched_list *l, int pp, int s, int m, int v) { gpipe(l, m); }
static void build_1f1b(hs_sched_list *l, int pp, int s, int m, int v) { one_f_one_b(l, pp, s, m, HS_SI_BWD); }
static void build_interleaved(hs_sched_list *l, int pp, int s, int m, int v) { interleaved(l, pp, s, m, v); }
static void build_zb_h1(hs_sched_list *l, int pp, int s, int m, int v)
{
	hs_sched_list **out = hs_xcalloc((size_t)pp, sizeof *out);
	out[s] = l;
	zb_h1(out, pp, m);
	free(out);
}
static void build_zb_v(hs_sched_list *l, int pp, int s, int m, int v) { hs_sched_zbv(l, pp, s, m); }
static void build_dualpipe(hs_sched_list *l, int pp, int s, int m, int v) { hs_sched_dualpipe(l, pp, s, m); }

/* Every stage's items at once (out[s] NULL: not wanted), where one run gives them all; NULL in the table: one
 * build per stage. */
static void all_zb_h1(hs_sched_list *const *out, int pp, int m, int v) { zb_h1(out, pp, m); }

/* Where the model chunks live. Megatron's interleaving: g = chunk pp + stage, every micro-batch the same way. */
static int chunk_of_loop(int pp, int s, int k) { return k * pp + s; }
static void place_loop(int pp, int m, int mb, int g, int *s, int *k)
{
	*s = g % pp;
	*k = g / pp;
}
/* ZB-V: chunk 0 runs down the stages and chunk 1 back up, so stage s holds g = s and 2pp-1-s, and the
 * middle of the model (g = pp-1, pp) is on the last stage, which sends nothing between its two chunks. */
static int chunk_of_v(int pp, int s, int k) { return k ? 2 * pp - 1 - s : s; }
static void place_v(int pp, int m, int mb, int g, int *s, int *k)
{
	*k = g >= pp;
	*s = *k ? 2 * pp - 1 - g : g;
}
/* DualPipe: pp model chunks, two copies. Micro-batches [0, m/2) enter at stage 0 and run chunk 0 (g = s);
 * [m/2, m) enter at stage pp-1 and run chunk 1 (g = pp-1-s). */
static int chunk_of_dual(int pp, int s, int k) { return k ? pp - 1 - s : s; }
static void place_dual(int pp, int m, int mb, int g, int *s, int *k)
{
	*k = mb >= m / 2;
	*s = *k ? pp - 1 - g : g;
}

static const char *ok_any(int pp, int m, char *buf, size_t len) { return NULL; }
static const char *ok_interleaved(int pp, int m, char *buf, size_t len)
{
	if (m % pp == 0)
		return NULL;
	snprintf(buf, len, "interleaved 1F1B needs micro-batches (%d) divisible by pp (%d)", m, pp);
	return buf;
}
/* DeepSeek's DualPipe runs an even number of ranks and at least 2 pp micro-batches, half from each end
 * (its step asserts num_ranks % 2 == 0 and num_chunks >= 2 num_ranks, num_chunks even): fewer leave its
 * steady phase with no iteration. */
static const char *ok_dualpipe(int pp, int m, char *buf, size_t len)
{
	if (pp >= 2 && pp % 2 == 0 && m % 2 == 0 && m >= 2 * pp)
		return NULL;
	snprintf(buf, len, "dualpipe needs an even pp >= 2 and an even number of micro-batches >= 2 pp (pp %d, "
		 "micro-batches %d)", pp, m);
	return buf;
}

/* A schedule: its builder, the model chunks each rank runs (0: parallelism.virtual_stages), how many copies of
 * the model the pipeline holds (the model chunks are pp x chunks / copies), where the chunks live, what
 * micro-batch counts it can run, and one line with its source (`hetsim list schedules`). */
static const struct schedule {
	void (*build)(hs_sched_list *l, int pp, int stage, int m, int v);
	void (*build_all)(hs_sched_list *const *out, int pp, int m, int v);
	int chunks;
	int copies;
	int (*chunk_of)(int pp, int stage, int chunk);
	void (*place)(int pp, int m, int mb, int g, int *stage, int *chunk);
	const char *(*infeasible)(int pp, int m, char *buf, size_t len);
	const char *about;
} schedules[HS_SCHED_COUNT] = {
	[HS_SCHED_GPIPE] = {build_gpipe, NULL, 1, 1, chunk_of_loop, place_loop, ok_any,
			    "every forward, then every backward (Huang et al. 2019, GPipe)"},
	[HS_SCHED_1F1B] = {build_1f1b, NULL, 1, 1, chunk_of_loop, place_loop, ok_any,
			   "one forward, one backward after the warm-up (Narayanan et al. 2021, PipeDream-Flush)"},
	[HS_SCHED_INTERLEAVED] = {build_interleaved, NULL, 0, 1, chunk_of_loop, place_loop, ok_interleaved,
				  "Megatron's interleaved 1F1B over parallelism.virtual_stages chunks (Narayanan et al. "
				  "2021, 2.2.2)"},
	[HS_SCHED_ZB_H1] = {build_zb_h1, all_zb_h1, 1, 1, chunk_of_loop, place_loop, ok_any,
			    "1F1B with weight gradients deferred into bubbles (Qi et al. 2023, ZB-H1)"},
	[HS_SCHED_ZB_V] = {build_zb_v, NULL, 2, 1, chunk_of_v, place_v, ok_any,
			   "two chunks per stage in a V, weight gradients filling the bubbles (Qi et al. 2024, ZB-V)"},
	[HS_SCHED_DUALPIPE] = {build_dualpipe, NULL, 2, 2, chunk_of_dual, place_dual, ok_dualpipe,
			       "two copies of the pipeline fed from both ends, forward and backward overlapped "
			       "(DeepSeek-V3 report 2024, DualPipe)"},
};

const char *hs_sched_about(enum hs_sched_kind k) { return k >= 0 && k < HS_SCHED_COUNT ? schedules[k].about : "?"; }

static int valid(enum hs_sched_kind k) { return k >= 0 && k < HS_SCHED_COUNT; }

int hs_sched_chunks(enum hs_sched_kind k, int vstages)
{
	if (!valid(k))
		return 1;
	return schedules[k].chunks ? schedules[k].chunks : vstages > 1 ? vstages : 1;
}

int hs_sched_model_chunks(enum hs_sched_kind k, int pp, int vstages)
{
	return valid(k) ? pp * hs_sched_chunks(k, vstages) / schedules[k].copies : pp;
}

int hs_sched_chunk_of(enum hs_sched_kind k, int pp, int vstages, int stage, int chunk)
{
	return valid(k) ? schedules[k].chunk_of(pp, stage, chunk) : stage;
}

int hs_sched_place_by_mb(enum hs_sched_kind k)
{
	return k == HS_SCHED_DUALPIPE; /* place_dual; place_loop and place_v read no micro-batch */
}

void hs_sched_place(enum hs_sched_kind k, int pp, int vstages, int m, int mb, int g, int *stage, int *chunk)
{
	if (valid(k))
		schedules[k].place(pp, m, mb, g, stage, chunk);
	else
		*stage = g, *chunk = 0;
}

const char *hs_sched_infeasible(enum hs_sched_kind k, int pp, int m, char *buf, size_t len)
{
	return valid(k) ? schedules[k].infeasible(pp, m, buf, len) : NULL;
}

const char *hs_sched_expected(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < HS_SCHED_COUNT && at < len; i++) {
		const char *sep = i == 0 ? "" : i == HS_SCHED_COUNT - 1 ? " or " : ", ";
		at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, hs_sched_names[i]);
	}
	return buf;
}

/* The checks every build makes before it runs (hs_sched_build's errors); all: every stage, not `stage`. */
static int check(enum hs_sched_kind k, int pp, int stage, int all, int micro_batches, int vstages, hs_err *err)
{
	if (k < 0 || k >= HS_SCHED_COUNT)
		return hs_err_set(err, HS_EINPUT, "unknown pipeline schedule %d", (int)k);
	if (pp < 1 || (!all && (stage < 0 || stage >= pp)) || micro_batches < 1)
		return hs_err_set(err, HS_EINPUT, "pipeline schedule: bad arguments (pp %d, stage %d, micro-batches %d)",
				  pp, stage, micro_batches);
	const struct schedule *sc = &schedules[k];
	if (!sc->chunks && vstages < 1)
		return hs_err_set(err, HS_EINPUT, "interleaved schedule: virtual stages %d (expected >= 1)", vstages);
	char why[160];
	if (sc->infeasible(pp, micro_batches, why, sizeof why))
		return hs_err_set(err, HS_EINFEASIBLE, "%s", why);
	return 0;
}

int hs_sched_build(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages, hs_sched_item **items,
		   size_t *n, hs_err *err)
{
	*items = NULL;
	*n = 0;
	if (check(k, pp, stage, 0, micro_batches, vstages, err))
		return -1;
	hs_sched_list l = {0};
	schedules[k].build(&l, pp, stage, micro_batches, hs_sched_chunks(k, vstages));
	*items = l.v;
	*n = l.n;
	return 0;
}

int hs_sched_build_stages(enum hs_sched_kind k, int pp, int micro_batches, int vstages, hs_sched_item **items,
			  size_t *n, hs_err *err)
{
	if (pp >= 1)
		for (int s = 0; s < pp; s++)
			items[s] = NULL, n[s] = 0;
	if (check(k, pp, 0, 1, micro_batches, vstages, err))
		return -1;
	const struct schedule *sc = &schedules[k];
	int v = hs_sched_chunks(k, vstages);
	hs_sched_list *l = hs_xcalloc((size_t)pp, sizeof *l);
	if (sc->build_all) {
		hs_sched_list **out = hs_xcalloc((size_t)pp, sizeof *out);
		for (int s = 0; s < pp; s++)
			out[s] = &l[s];
		sc->build_all(out, pp, micro_batches, v);
		free(out);
	} else {
		for (int s = 0; s < pp; s++)
			sc->build(&l[s], pp, s, micro_batches, v);
	}
	for (int s = 0; s < pp; s++)
		items[s] = l[s].v, n[s] = l[s].n;
	free(l);
	return 0;
}

double hs_sched_peak(const hs_sched_item *it, size_t n, const double *weight)
{
	double cur = 0, peak = 0;
	/* a forward's activations are held until the pass that needs them last: the whole backward, or the
	 * weight gradient where the backward is split (ZB-H1 and ZB-V always, DualPipe for some items) */
	for (size_t i = 0; i < n; i++) {
		double w = weight ? weight[it[i].chunk] : 1;
		if (it[i].kind == HS_SI_FWD && (cur += w) > peak)
			peak = cur;
		else if (it[i].kind == HS_SI_BWD || it[i].kind == HS_SI_BWD_WEIGHT)
			cur -= w;
	}
	return peak;
}

int hs_sched_in_flight(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages)
{
	return (int)hs_sched_in_flight_weighted(k, pp, stage, micro_batches, vstages, NULL);
}

double hs_sched_in_flight_weighted(enum hs_sched_kind k, int pp, int stage, int micro_batches, int vstages,
				   const double *weight)
{
	hs_sched_item *it;
	size_t n;
	hs_err e = {0};
	if (hs_sched_build(k, pp, stage, micro_batches, vstages, &it, &n, &e))
		return -1;
	double peak = hs_sched_peak(it, n, weight);
	free(it);
	return peak;
}
