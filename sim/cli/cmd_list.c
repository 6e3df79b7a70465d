/* hetsim list: the built-in names a scenario may use, each with its key figures, printed from the tables that
 * define them (topology/device.c, models/presets.c, models/recipe.c, models/schedule.c, topology/kind.c,
 * sim/coll/coll.c), so the list cannot drift from what the parser accepts. One function per kind behind a
 * table, as the commands are. */
#include "sim/cli/cmd_list.h"

#include <stdio.h>
#include <string.h>

#include "calib/profile.h"
#include "config/cfg.h"
#include "models/model.h"
#include "models/recipe.h"
#include "models/schedule.h"
#include "sim/cli/cmd.h"
#include "sim/coll/coll.h"
#include "topology/device.h"
#include "topology/kind.h"

static int o_long;

static const hs_opt opts[] = {
	{HS_OPT_FLAG, "long", 'l', &o_long, NULL, "gpus: the profile's full provenance; recipes: their sources"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_list = {
	"list", "hetsim list [options] gpus|models|topologies|schedules|recipes|collectives",
	"List the built-in GPU types, model presets, topology kinds, pipeline schedules, training recipes or "
	"collective algorithms.",
	opts,
	"gpus: dense peak FLOP/s, memory, bandwidths and power (datasheets, cited in topology/device.c) and whether\n"
	"the profile was measured or derived; models: the preset shapes and their parameter counts (sources in\n"
	"models/presets.c); topologies: the scale-up and fabric kinds with their properties (docs/topology.md);\n"
	"schedules, recipes and collectives: the names the scenario keys take (docs/scenario.md)."};

/* "measured on NVIDIA H200, 2026-11-29" or "derived from H200-SXM-141GB": the provenance up to its details,
 * or all of it with --long. */
static void provenance(const char *dev_profile, char *buf, size_t cap)
{
	hs_err err = {0};
	hs_profile *p = hs_profile_load(dev_profile, &err);
	if (!p) {
		snprintf(buf, cap, "no profile found (%s.yaml; see docs/calibration.md)", dev_profile);
		return;
	}
	snprintf(buf, cap, "%s", hs_profile_provenance(p));
	hs_profile_free(p);
	if (o_long)
		return;
	char *cut = strstr(buf, " by datasheet ratios");
	if (!cut)
		cut = strstr(buf, " (");
	if (cut)
		*cut = 0;
}

static int list_gpus(void)
{
	printf("%-16s %10s %10s %8s %8s %9s %6s  %s\n", "gpu", "bf16", "fp8", "memory", "HBM", "scale-up", "TDP",
	       "profile");
	printf("%-16s %10s %10s %8s %8s %9s %6s\n", "", "(TFLOP/s)", "(TFLOP/s)", "(GiB)", "(TB/s)", "(GB/s)", "(W)");
	for (const char *const *n = hs_device_names(); *n; n++) {
		const hs_device_type *d = hs_device_builtin(*n);
		char prov[1200], fp8[32];
		provenance(d->profile, prov, sizeof prov);
		if (d->peak_flops[HS_FP8] > 0)
			snprintf(fp8, sizeof fp8, "%.0f", d->peak_flops[HS_FP8] / 1e12);
		else
			snprintf(fp8, sizeof fp8, "-");
		printf("%-16s %10.0f %10s %8.0f %8.2f %9.0f %6.0f  %s\n", d->name, d->peak_flops[HS_BF16] / 1e12, fp8,
		       d->hbm_bytes / (1024.0 * 1024 * 1024), d->hbm_bw / 1e12, d->scaleup_bw / 1e9, d->tdp_w, prov);
	}
	printf("\nDense peaks (no sparsity); scale-up bandwidth per direction. A scenario names a type with `gpu:`,\n"
	       "or defines one inline ({name, base, peak_bf16, memory, ...}, docs/scenario.md).\n");
	return 0;
}

static int list_models(void)
{
	printf("%-22s %6s %6s %9s %6s %7s %5s %11s %9s %9s\n", "model", "layers", "hidden", "heads/kv", "ffn",
	       "vocab", "seq", "experts", "params", "active");
	for (const char *const *n = hs_model_preset_names(); *n; n++) {
		hs_model m;
		if (hs_model_preset(*n, &m))
			continue;
		char heads[32], experts[32];
		snprintf(heads, sizeof heads, "%d/%d", m.heads, m.kv_heads);
		if (m.experts)
			snprintf(experts, sizeof experts, "%d top-%d", m.experts, m.top_k);
		else
			snprintf(experts, sizeof experts, "-");
		printf("%-22s %6d %6d %9s %6d %7d %5d %11s %8.2fB %8.2fB\n", m.name, m.layers, m.hidden, heads,
		       m.experts ? m.expert_ffn : m.ffn, m.vocab, m.seq_len, experts, hs_model_params(&m) / 1e9,
		       hs_model_params_active(&m) / 1e9);
	}
	printf("\nffn is the expert's inner size for MoE models; active counts the routed experts a token uses.\n"
	       "`model: NAME` or `model: {preset: NAME, ...overrides}` (docs/models.md).\n");
	return 0;
}

static int list_topologies(void)
{
	static const char *const up_layouts[HS_UP_LAYOUTS] = {"switch", "mesh", "bridge", "pcie", "none"};
	static const char *const out_layouts[HS_OUT_LAYOUTS] = {"fat-tree", "rails", "planes", "dragonfly",
								 "torus", "wan", "explicit", "none"};
	printf("scale-up kinds (cluster.groups[].scaleup.kind):\n");
	printf("  %-15s %-8s %-13s %-8s %s\n", "kind", "layout", "in-switch", "domain", "notes");
	for (int i = 0; i < hs_kind_nscaleup(); i++) {
		const hs_scaleup_kind *k = hs_kind_scaleup(i);
		char dom[32];
		if (k->domain)
			snprintf(dom, sizeof dom, "%d GPUs", k->domain);
		else
			snprintf(dom, sizeof dom, "node");
		char notes[128] = "";
		size_t l = 0;
		if (k->spans)
			l += (size_t)snprintf(notes + l, sizeof notes - l, "%sdomain may span nodes", l ? ", " : "");
		if (k->parts > 1)
			l += (size_t)snprintf(notes + l, sizeof notes - l, "%s%d switches joined", l ? ", " : "", k->parts);
		if (k->pcie)
			l += (size_t)snprintf(notes + l, sizeof notes - l, "%sPCIe tree, p2p optional", l ? ", " : "");
		printf("  %-15s %-8s %-13s %-8s %s\n", k->name, up_layouts[k->layout],
		       k->switch_reduce ? (k->reduce_default ? "yes (default)" : "optional") : "-", dom, l ? notes : "-");
	}
	printf("\nfabric kinds (cluster.fabric.kind):\n");
	printf("  %-15s %-10s %s\n", "kind", "layout", "properties");
	for (int i = 0; i < hs_kind_nfabric(); i++) {
		const hs_fabric_kind *k = hs_kind_fabric(i);
		char props[160] = "";
		size_t l = 0;
		if (k->clos)
			l += (size_t)snprintf(props + l, sizeof props - l, "%sClos (full bisection unless oversubscribed)",
					      l ? ", " : "");
		if (k->rail_aligned)
			l += (size_t)snprintf(props + l, sizeof props - l, "%srail-aligned", l ? ", " : "");
		if (k->dims)
			l += (size_t)snprintf(props + l, sizeof props - l, "%s%d dimensions", l ? ", " : "", k->dims);
		if (k->lists_links)
			l += (size_t)snprintf(props + l, sizeof props - l, "%sswitches and links listed", l ? ", " : "");
		if (k->routed)
			l += (size_t)snprintf(props + l, sizeof props - l, "%sroute-aware collectives", l ? ", " : "");
		printf("  %-15s %-10s %s\n", k->name, out_layouts[k->layout], l ? props : "-");
	}
	printf("\ndocs/topology.md describes every kind and its keys.\n");
	return 0;
}

static int list_schedules(void)
{
	printf("%-12s %s\n", "schedule", "(parallelism.schedule)");
	for (int i = 0; i < HS_SCHED_COUNT; i++)
		printf("%-12s %s\n", hs_sched_name((enum hs_sched_kind)i), hs_sched_about((enum hs_sched_kind)i));
	return 0;
}

static int list_recipes(void)
{
	printf("%-12s %s\n", "recipe", "(training.recipe; the first is the default)");
	for (const hs_recipe *r = hs_recipes; r->name; r++) {
		printf("%-12s %s\n", r->name, r->summary);
		if (o_long && r->source)
			printf("%-12s source: %s\n", "", r->source);
	}
	return 0;
}

static int list_collectives(void)
{
	static const char *const about[HS_ALGO_COUNT] = {
		[HS_ALGO_AUTO] = "what NCCL's tuner picks for the size and group (the default)",
		[HS_ALGO_FASTEST] = "the fastest ideal closed form",
		[HS_ALGO_RING] = "ring: reductions and gathers in 2(n-1) or n-1 steps",
		[HS_ALGO_TREE] = "NCCL's double binary tree",
		[HS_ALGO_HALVING_DOUBLING] = "recursive halving then doubling (Rabenseifner)",
		[HS_ALGO_DIRECT] = "every rank to every rank at once (all-to-all, send/recv)",
		[HS_ALGO_HIERARCHICAL] = "rings inside each node, one ring per local rank across nodes, pipelined",
		[HS_ALGO_INSWITCH] = "reduction in the switch (NVSwitch inside nodes, SHARP across them), phase after phase",
		[HS_ALGO_NVLS] = "NVLink SHARP inside one scale-up domain",
		[HS_ALGO_NVLS_TREE] = "NVLS inside nodes, NCCL's tree across them, pipelined",
	};
	printf("%-18s %s\n", "algorithm", "(simulation.collective_algorithm, hetsim coll --algo)");
	for (int i = 0; i < HS_ALGO_COUNT; i++)
		printf("%-18s %s\n", hs_coll_algo_name((enum hs_coll_algo)i), about[i] ? about[i] : "");
	printf("\noperations (hetsim coll --op):");
	for (int i = 0; i < HS_COLL_OP_COUNT; i++)
		printf(" %s", hs_coll_op_name((enum hs_coll_op)i));
	printf("\nAn algorithm an operation lacks runs the operation's default, as NCCL does (docs/collectives.md).\n");
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} kinds[] = {
	{"gpus", list_gpus},         {"models", list_models},   {"topologies", list_topologies},
	{"schedules", list_schedules}, {"recipes", list_recipes}, {"collectives", list_collectives},
	{NULL, NULL},
};

int cmd_list(int argc, char **argv)
{
	const char *pos[1];
	o_long = 0;
	int n = hs_opt_parse(&hs_usage_list, argc, argv, pos, 1);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	const char *names[sizeof kinds / sizeof kinds[0]];
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		names[i] = kinds[i].name;
	if (n == 0) {
		fprintf(stderr, "hetsim list: what to list? (expected one of: gpus, models, topologies, schedules, "
				"recipes, collectives)\nusage: %s\n", hs_usage_list.synopsis);
		return HS_EINPUT;
	}
	for (int i = 0; kinds[i].name; i++)
		if (strcmp(kinds[i].name, pos[0]) == 0)
			return hs_cmd_finish(kinds[i].fn());
	const char *sug = hs_cfg_suggest(pos[0], names);
	fprintf(stderr, "hetsim list: '%s' is not a list%s%s%s (expected one of: gpus, models, topologies, schedules, "
			"recipes, collectives)\n", pos[0], sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
	return HS_EINPUT;
}
