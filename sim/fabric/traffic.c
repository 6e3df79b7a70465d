/* Traffic generation: open-loop sources keep one pending arrival event each; closed-loop sources issue a
 * window at time 0 and one more operation whenever one of theirs completes. */
#include "sim/fabric/traffic.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"
#include "sim/engine/rng.h"

const char *const hs_arrival_names[] = {"poisson", "periodic", "closed", "steps", NULL};

int hs_traffic_sources(const hs_traffic *t)
{
	int n = 0;
	for (int i = 0; i < t->ngroups; i++)
		n += t->g[i].nsrc;
	return n;
}

int hs_traffic_nclasses(const hs_traffic *t)
{
	int n = 0;
	for (int i = 0; i < t->ngroups; i++)
		n += t->g[i].nclasses;
	return n;
}

struct gen {
	const hs_traffic *t;
	hs_engine *eng;
	hs_fabric *f;
	hs_rng **rng;      /* per source */
	int *group;        /* per source */
	uint64_t *left;    /* per group (steps): operations of the current step not yet complete */
	uint64_t issued;
};

static int stopped(const struct gen *g)
{
	if (g->t->ops && g->issued >= g->t->ops)
		return 1;
	if (g->t->duration && hs_engine_now(g->eng) >= g->t->duration)
		return 1;
	return 0;
}

static void issue_class(struct gen *g, int src, int c)
{
	const hs_traffic_group *gr = &g->t->g[g->group[src]];
	hs_rng *r = g->rng[src];
	const hs_traffic_class *cl = &gr->cls[c];
	uint64_t region = g->t->address_space;
	if (cl->hot_frac > 0 && hs_rng_uniform(r) < cl->hot_frac)
		region = cl->hot_bytes;
	uint64_t slots = region > cl->size ? (region - cl->size) / 64 + 1 : 1;
	uint64_t addr = hs_rng_uint(r, slots) * 64;
	int record = g->issued >= g->t->warmup;
	g->issued++;
	hs_fabric_issue(g->f, src, cl->kind, cl->size, addr, cl->id, record, 0);
}

static void issue_one(struct gen *g, int src)
{
	const hs_traffic_group *gr = &g->t->g[g->group[src]];
	double total = 0;
	for (int i = 0; i < gr->nclasses; i++)
		total += gr->cls[i].weight;
	double u = hs_rng_uniform(g->rng[src]) * total;
	int c = 0;
	while (c < gr->nclasses - 1 && u >= gr->cls[c].weight) {
		u -= gr->cls[c].weight;
		c++;
	}
	issue_class(g, src, c);
}

/* One step of a bulk-synchronous group: every source issues its classes' counts, in the order listed. The
 * count is taken before issuing, since an operation can complete within hs_fabric_issue only through an
 * event, never synchronously. */
static void step_start(struct gen *g, int gi)
{
	const hs_traffic_group *gr = &g->t->g[gi];
	uint64_t n = 0;
	for (int s = gr->first_src; s < gr->first_src + gr->nsrc; s++)
		for (int c = 0; c < gr->nclasses; c++)
			for (uint32_t k = 0; k < gr->cls[c].count && !stopped(g); k++) {
				issue_class(g, s, c);
				n++;
			}
	g->left[gi] = n;
}

static void h_step(hs_engine *e, void *ctx, uint64_t gi)
{
	struct gen *g = ctx;
	if (!stopped(g))
		step_start(g, (int)gi);
}

static hs_time gap(struct gen *g, int src)
{
	const hs_traffic_group *gr = &g->t->g[g->group[src]];
	if (gr->arrival == HS_ARR_PERIODIC)
		return (hs_time)(gr->interval + 0.5);
	return (hs_time)(hs_rng_exponential(g->rng[src], gr->interval) + 0.5);
}

static void h_arrival(hs_engine *e, void *ctx, uint64_t src)
{
	struct gen *g = ctx;
	if (stopped(g))
		return;
	issue_one(g, (int)src);
	hs_engine_after(e, gap(g, (int)src), h_arrival, g, src);
}

static void on_done(void *ctx, int src, int cls, uint64_t tag)
{
	struct gen *g = ctx;
	int gi = g->group[src];
	const hs_traffic_group *gr = &g->t->g[gi];
	if (gr->arrival == HS_ARR_CLOSED && !stopped(g))
		issue_one(g, src);
	else if (gr->arrival == HS_ARR_STEPS && --g->left[gi] == 0 && !stopped(g))
		hs_engine_after(g->eng, gr->gap, h_step, g, (uint64_t)gi);
}

uint64_t hs_traffic_run(const hs_traffic *t, hs_engine *eng, hs_fabric *f)
{
	int n = hs_traffic_sources(t);
	struct gen g = {.t = t, .eng = eng, .f = f};
	g.rng = hs_xcalloc((size_t)n, sizeof *g.rng);
	g.group = hs_xcalloc((size_t)n, sizeof *g.group);
	g.left = hs_xcalloc((size_t)t->ngroups + 1, sizeof *g.left);
	for (int i = 0; i < t->ngroups; i++)
		for (int s = t->g[i].first_src; s < t->g[i].first_src + t->g[i].nsrc; s++)
			g.group[s] = i;
	for (int s = 0; s < n; s++)
		g.rng[s] = hs_rng_create(t->seed, 1000 + (uint64_t)s);
	hs_fabric_on_done(f, on_done, &g);
	for (int gi = 0; gi < t->ngroups; gi++)
		if (t->g[gi].arrival == HS_ARR_STEPS)
			step_start(&g, gi);
	for (int s = 0; s < n; s++) {
		const hs_traffic_group *gr = &t->g[g.group[s]];
		if (gr->arrival == HS_ARR_STEPS)
			continue;
		if (gr->arrival == HS_ARR_CLOSED) {
			for (int w = 0; w < gr->window && !stopped(&g); w++)
				issue_one(&g, s);
		} else {
			/* Periodic sources start at a random phase so that they do not all fire together. */
			hs_time first = gr->arrival == HS_ARR_PERIODIC
						? (hs_time)(hs_rng_uniform(g.rng[s]) * gr->interval)
						: gap(&g, s);
			hs_engine_at(eng, hs_engine_now(eng) + first, h_arrival, &g, (uint64_t)s);
		}
	}
	hs_engine_run(eng, HS_TIME_MAX);
	hs_fabric_on_done(f, NULL, NULL);
	for (int s = 0; s < n; s++)
		hs_rng_destroy(g.rng[s]);
	free(g.rng);
	free(g.group);
	free(g.left);
	return g.issued;
}

/* ---- named mixes ----
 * Each is the `groups:` list of one published experiment's shape, written down before any run (none was
 * tuned to reproduce a published figure). Loads refer to the default fabric (docs/fabric.md): 4 x 50 GB/s
 * paths, 8 x 100 GB/s HBM partitions, a 20 ns atomic engine, a 150 GB/s response engine. */

static const char mix_hbm_hotspot[] =
	"- {name: hot, sources: 8, arrival: closed, window: 8,\n"
	"   ops: [{op: write, size: 256 B, hot: {fraction: 1, bytes: 256 B}}]}\n"
	"- {name: stream, sources: 4, arrival: closed, window: 4,\n"
	"   ops: [{op: write, size: 4 KiB}, {op: read, size: 4 KiB}]}\n"
	"- {name: victims, sources: 4, arrival: poisson, rate: 2 M/s,\n"
	"   ops: [{op: read, size: 64 B}, {op: notify, size: 8 B}]}\n";

static const char mix_atomic_contention[] =
	"- {name: atomics, sources: 12, arrival: closed, window: 16,\n"
	"   ops: [{op: atomic, size: 8 B, hot: {fraction: 1, bytes: 64 B}}]}\n"
	"- {name: victims, sources: 4, arrival: poisson, rate: 2 M/s,\n"
	"   ops: [{op: read, size: 64 B}, {op: notify, size: 8 B}]}\n";

static const char mix_response_incast[] =
	"- {name: incast, sources: 12, arrival: closed, window: 8,\n"
	"   ops: [{op: read, size: 4 KiB}]}\n"
	"- {name: victims, sources: 4, arrival: poisson, rate: 2 M/s,\n"
	"   ops: [{op: read, size: 64 B}, {op: atomic, size: 8 B}]}\n";

/* All-reduce-shaped (docs/fabric.md, "reasoning written before the runs"): a collective is step-synchronous.
 * Per step each of 16 peers writes 8 channel slices of 4 KiB, increments each channel's arrival counter
 * (8 B atomics on 8 counters) and sets one 8 B step flag; the next step starts when the step has landed. */
static const char mix_allreduce_shaped[] =
	"- {name: peers, sources: 16, arrival: steps,\n"
	"   ops: [{op: write, size: 4 KiB, count: 8, name: slice-4KiB},\n"
	"         {op: atomic, size: 8 B, count: 8, hot: {fraction: 1, bytes: 64 B}, name: signal-8B},\n"
	"         {op: notify, size: 8 B, count: 1, name: flag-8B}]}\n";

/* Remote-read-shaped: bulk page/block fetches kept outstanding by memory-level parallelism (closed loop,
 * twice the bandwidth-delay product of the response engine) beside latency-critical small gathers,
 * counters and flags (open loop). */
static const char mix_remote_read_shaped[] =
	"- {name: bulk, sources: 8, arrival: closed, window: 8,\n"
	"   ops: [{op: read, size: 4 KiB, weight: 3}, {op: read, size: 16 KiB, weight: 1}]}\n"
	"- {name: gather, sources: 8, arrival: poisson, rate: 4 M/s,\n"
	"   ops: [{op: read, size: 256 B, weight: 6}, {op: read, size: 64 B, weight: 2},\n"
	"         {op: atomic, size: 8 B, weight: 1, hot: {fraction: 1, bytes: 1 KiB}},\n"
	"         {op: notify, size: 8 B, weight: 1}]}\n";

static const char mix_moe_dispatch_shaped[] =
	"- {name: experts, sources: 16, arrival: closed, window: 4,\n"
	"   ops: [{op: write, size: 8 KiB, weight: 3, hot: {fraction: 0.3, bytes: 64 KiB}},\n"
	"         {op: write, size: 32 KiB, weight: 1},\n"
	"         {op: notify, size: 8 B, weight: 1}]}\n";

const char *const hs_traffic_mix_names[] = {"hbm_hotspot",	   "atomic_contention", "response_incast",
					    "allreduce_shaped",	   "remote_read_shaped", "moe_dispatch_shaped",
					    NULL};
static const char *const mix_text[] = {mix_hbm_hotspot,	  mix_atomic_contention,  mix_response_incast,
				       mix_allreduce_shaped, mix_remote_read_shaped, mix_moe_dispatch_shaped};

const char *hs_traffic_mix(const char *name)
{
	for (int i = 0; hs_traffic_mix_names[i]; i++)
		if (strcmp(hs_traffic_mix_names[i], name) == 0)
			return mix_text[i];
	return NULL;
}
