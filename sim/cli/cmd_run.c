/* hetsim run: simulate one training step of each scenario (or run a fabric experiment) and print a summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/cli/cmd.h"
#include "sim/exec/exec.h"
#include "sim/fabric/fabric_replay.h"
#include "sim/fabric/fabric_run.h"
#include "sim/study/simulate.h"
#include "sim/study/jobs.h"
#include "traces/chakra.h"
#include "traces/hdf5_out.h"
#include "traces/jobs_summary.h"
#include "traces/summary.h"
#include "traces/trace_chrome.h"

static int json, detail, no_symmetry, hdf5_tasks, timing;
static struct hs_strlist sets;
static const char *trace_path, *trace_ranks, *hdf5_path, *workload, *traffic_from;
static hs_optnum trace_limit = {.min = 1, .max = HS_OPT_COUNT_MAX}; /* checked by hs_opt_parse (sim/cli/opt.h) */

static const hs_opt opts[] = {
	{HS_OPT_FLAG, "json", 0, &json, NULL, "print one JSON object per scenario instead of text"},
	{HS_OPT_FLAG, "detail", 0, &detail, NULL, "add per-stage and per-rank tables"},
	{HS_OPT_LIST, "set", 's', &sets, "KEY=VALUE", "override a scenario key (repeatable): --set parallelism.tp=4"},
	{HS_OPT_FLAG, "no-symmetry", 0, &no_symmetry, NULL,
	 "simulate every data-parallel replica instead of one per stage, and every transfer as a flow"},
	{HS_OPT_STRING, "trace", 0, &trace_path, "FILE.json", "write a Chrome/Perfetto trace of the step"},
	{HS_OPT_STRING, "trace-ranks", 0, &trace_ranks, "SPEC",
	 "ranks to trace: all (default), every:K, or a list 0,3,8-11 (simulated ranks, as --detail numbers them)"},
	{HS_OPT_COUNT, "trace-limit", 0, &trace_limit, "N", "at most N slices; more ranks are sampled out (2000000)"},
	{HS_OPT_STRING, "hdf5", 0, &hdf5_path, "FILE.h5", "write the result as HDF5 (docs/outputs.md)"},
	{HS_OPT_FLAG, "hdf5-tasks", 0, &hdf5_tasks, NULL, "with --hdf5: add the per-task timeline (/tasks)"},
	{HS_OPT_STRING, "workload", 0, &workload, "chakra:PREFIX",
	 "simulate the Chakra ET files PREFIX.<rank>.et on the scenario's cluster instead of its model "
	 "(docs/chakra.md)"},
	{HS_OPT_STRING, "traffic-from", 0, &traffic_from, "SCENARIO.yaml",
	 "fabric experiments: replay one step's scale-up collectives of this training scenario (at packet fidelity) "
	 "instead of the experiment's traffic"},
	{HS_OPT_FLAG, "timing", 0, &timing, NULL,
	 "print the wall-clock time of each scenario on stderr (stdout stays byte-identical across runs)"},
	{.type = HS_OPT_END},
};

const hs_cmd_usage hs_usage_run = {
	"run", "hetsim run [options] SCENARIO.yaml...",
	"Simulate one training step of each scenario and print step time, MFU, tokens/s, memory and a breakdown.",
	opts,
	"A scenario with `kind: fabric` runs a scale-up fabric experiment instead (docs/fabric.md); one with\n"
	"`jobs:` runs several jobs on one cluster, each alone and all together (docs/scenario.md, jobs).\n"
	"Keys are documented in docs/scenario.md. Exit status: 0 done, 1 internal error, 2 bad input,\n"
	"3 infeasible (does not fit in memory)."};

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Progress of a flow-fidelity run on stderr: simulated time, events/s, the time left at the pace so far
 * against the analytical estimate of the run's length. Once a second on a terminal (rewriting one line),
 * every 10 s otherwise (a line each), and nothing for a run shorter than that. HETSIM_NO_PROGRESS=1 turns
 * it off. */
struct progress {
	double t0, last, every;
	int tty, shown;
};

static void show_progress(void *ctx, const hs_progress *p)
{
	struct progress *g = ctx;
	double t = wall();
	if (p->final) {
		if (g->shown && g->tty)
			fprintf(stderr, "\n");
		return;
	}
	if (t - g->last < g->every)
		return;
	g->last = t;
	g->shown = 1;
	double el = t - g->t0, frac = p->horizon_s > 0 ? p->sim_s / p->horizon_s : 0;
	double left = frac > 0 && frac < 1 ? el * (1 - frac) / frac : 0;
	fprintf(stderr, "%shetsim run: simulated %.6f of ~%.6f s (%3.0f%%), %.2f M events/s, ETA %d:%02d%s",
		g->tty ? "\r" : "", p->sim_s, p->horizon_s, 100 * (frac < 1 ? frac : 1), p->events / (el > 0 ? el : 1) / 1e6,
		(int)left / 60, (int)left % 60, g->tty ? " " : "\n");
}

/* Several jobs on one cluster (sim/study/jobs.h): each alone and all together, then their summary. The
 * outputs of one step (trace, HDF5, per-rank tables) are a single job's; --no-symmetry is what jobs run with. */
static int run_jobs(hs_ydoc *doc, const char *path, hs_err *err)
{
	if (trace_path || hdf5_path || detail) {
		hs_yaml_free(doc);
		return hs_err_set(err, HS_EINPUT, "%s: --%s is for a scenario of one job (this one has jobs:; "
			   "expected no --trace, --hdf5 or --detail)", path,
			   trace_path ? "trace" : hdf5_path ? "hdf5" : "detail");
	}
	double t0 = wall();
	hs_jobs J;
	if (hs_jobs_run(doc, path, NULL, &J, err))
		return -1;
	hs_jobs_format_find(json ? "json" : "text")->write(stdout, &J);
	if (timing)
		fprintf(stderr, "hetsim run: %s: %llu events in %.3f s wall\n", path, (unsigned long long)J.events,
			wall() - t0);
	hs_jobs_free(&J);
	return 0;
}

/* A training scenario: simulate the step (sim/study/simulate.h), then write what was asked for. */
static int run_training(hs_ydoc *doc, const char *path, int index, hs_err *err)
{
	double t0 = wall();
	hs_sim sim;
	if (index > 0 && !json)
		printf("\n");
	if (hs_jobs_in(doc))
		return run_jobs(doc, path, err);
	struct progress pg = {.t0 = t0, .last = t0, .tty = isatty(2)};
	pg.every = pg.tty ? 1 : 10;
	/* HETSIM_NO_PROGRESS: off, for output compared byte for byte (tests/golden/run.sh) */
	const char *np = getenv("HETSIM_NO_PROGRESS");
	int want = !(np && *np && *np != '0');
	if (workload) {
		hs_chakra_info info;
		if (hs_chakra_simulate(doc, path, workload + strlen("chakra:"), &sim, &info, err))
			return -1;
		if (info.unpriced)
			fprintf(stderr, "hetsim run: %s: %zu compute nodes have no duration and no shapes the op-time "
					"model prices: they take 0 s\n",
				workload, info.unpriced);
		if (timing)
			fprintf(stderr, "hetsim run: %s: %d ranks, %zu nodes, %zu bytes read\n", workload, info.ranks,
				info.nodes, info.bytes);
	} else if (hs_simulate_doc_with(doc, path, no_symmetry ? 0 : -1, NULL, want ? show_progress : NULL, &pg,
					(trace_path ? HS_SIM_KEEP_INLAYER : 0) |
						(trace_path || hdf5_path || detail ? HS_SIM_KEEP_LINKS : 0),
					&sim, err)) {
		return -1;
	}
	int rc = 0;
	if (trace_path) {
		hs_trace_opts to = {.ranks = trace_ranks, .max_events = trace_limit.given ? (size_t)trace_limit.v : 0};
		rc = hs_trace_chrome_write(trace_path, sim.s, &sim.b, &sim.r, &to, err);
		if (!rc && to.note[0])
			fprintf(stderr, "hetsim run: %s\n", to.note);
	}
	if (!rc && hdf5_path) {
		hs_h5 *h = hs_h5_create(hdf5_path, "run", err);
		rc = !h ? -1 : hs_h5_write_run(h, &sim, hdf5_tasks, err);
		if (!rc && sim.r.links.nlinks > 0) {
			hs_link_series ls = {.nlinks = sim.r.links.nlinks, .nbins = sim.r.links.nbins,
					     .bin_s = sim.r.links.bin_s,
					     .names = (const char *const *)sim.r.links.names,
					     .capacity_Bps = sim.r.links.capacity_Bps, .bytes = sim.r.links.bytes,
					     .util = sim.r.links.util};
			rc = hs_h5_write_links(h, &ls, err);
		}
		if (h)
			rc = rc ? (hs_h5_abort(h), -1) : hs_h5_commit(h, err);
	}
	if (!rc && !workload && sim.s->sim.fidelity == HS_FID_PACKET) {
		/* packet fidelity runs only the ring inside one switched domain on the packet model; a step with
		 * none (NVLS chosen by auto, TP of 1, all-to-alls) is the flow model's, which a user asked for packet
		 * fidelity would otherwise not learn */
		hs_packet_use *u;
		size_t nu = hs_exec_packet_uses(&sim.s->wl, &sim.s->sim, &sim.b, &u);
		free(u);
		if (!nu)
			fprintf(stderr, "hetsim run: warning: %s: simulation.fidelity is packet, but no collective of "
					"the step runs on the packet model (it takes ring all-reduce, all-gather and "
					"reduce-scatter inside one switched scale-up domain; e.g. "
					"simulation.collective_algorithm: ring): the step is the flow model's\n",
				path);
	}
	if (!rc && sim.r.step_time_s > 86400)
		/* legal, but no real training step takes a day: most often a unit left out of a bandwidth or a peak */
		fprintf(stderr, "hetsim run: warning: %s: one step takes %.3g days, far beyond any real training step "
				"(check the units of bandwidths and peaks; docs/scenario.md, plausibility warnings)\n",
			path, sim.r.step_time_s / 86400);
	if (!rc) {
		const hs_summary_format *f = hs_summary_format_find(json ? "json" : "text");
		f->write(stdout, &sim, detail);
		if (timing)
			fprintf(stderr, "hetsim run: %s: %llu events in %.3f s wall\n", path,
				(unsigned long long)sim.r.events, wall() - t0);
	}
	hs_sim_free(&sim);
	return rc;
}

/* A scale-up fabric experiment (docs/fabric.md): its own runner prints its tables. */
static int run_fabric(hs_ydoc *doc, const char *path, int index, hs_err *err)
{
	int rc = hs_fabric_run(doc, json, stdout, err);
	hs_yaml_free(doc);
	return rc;
}

/* FABRIC.yaml --traffic-from SCENARIO.yaml (docs/fabric.md): per scheme of the experiment, the scenario's step
 * at packet fidelity on the experiment's receiver (its step time), then the step's scale-up collectives
 * replayed on that receiver (fabric_replay.h prints both). */
static int run_replay(hs_ydoc *doc, const char *path, hs_err *err)
{
	hs_fabric_exp_spec spec;
	int rc = hs_fabric_exp_parse_replay(doc, &spec, err);
	char why[200];
	for (int k = 0; !rc && k < spec.nschemes; k++)
		if (hs_fcoll_check_fit(&spec.p, spec.schemes[k], &spec.credits, why, sizeof why))
			rc = hs_err_set(err, HS_EINPUT, "%s: credits: %s (expected pools of at least one packet)", path, why);
	hs_replay_row rows[HS_FABRIC_MAX_SCHEMES];
	hs_replay_coll *v = NULL;
	int nv = 0;
	char from[160] = "";
	static const char *fid[] = {"simulation.fidelity=packet"};
	for (int k = 0; !rc && k < spec.nschemes; k++) {
		hs_ydoc *sd = hs_yaml_load_file_set(traffic_from, fid, 1, err);
		hs_scenario *s = sd ? hs_scenario_from_doc(sd, traffic_from, err) : NULL;
		if (!s) {
			rc = -1;
			break;
		}
		snprintf(from, sizeof from, "%s", s->name);
		for (int g = 0; g < s->sim.npacket; g++) { /* the experiment's receiver and credits */
			s->packet[g].p = spec.p;
			s->packet[g].credits = spec.credits;
			s->packet[g].scheme = spec.schemes[k];
		}
		hs_sim sim;
		if (hs_simulate_scenario(s, traffic_from, no_symmetry ? 0 : -1, NULL, 0, &sim, err)) {
			rc = -1;
			break;
		}
		rows[k].step_s = sim.r.step_time_s;
		if (k == 0) {
			hs_packet_use *u;
			size_t nu = hs_exec_packet_uses(&sim.s->wl, &sim.s->sim, &sim.b, &u);
			v = hs_xcalloc(nu ? nu : 1, sizeof *v);
			for (size_t i = 0; i < nu; i++) {
				const hs_fcoll_cfg *c = &sim.s->packet[u[i].group];
				v[nv++] = (hs_replay_coll){.c = {.op = u[i].op, .n = u[i].n, .bytes = u[i].bytes,
								 .proto = c->proto, .signal = c->signal, .pull = c->pull,
								 .channels = c->channels},
							   .count = u[i].count};
			}
			free(u);
			if (!nv)
				rc = hs_err_set(err, HS_EINPUT,
						"%s: no collective of a step runs on the packet model (it takes ring "
						"all-reduce, all-gather and reduce-scatter inside one switched scale-up "
						"domain; expected such a collective, e.g. simulation.collective_algorithm: ring)",
						traffic_from);
		}
		hs_sim_free(&sim);
		if (rc)
			break;
		hs_fabric_replay_run(&spec, spec.schemes[k], v, nv, &rows[k]);
	}
	if (!rc)
		hs_fabric_replay_print(stdout, json, &spec, from, v, nv, rows);
	free(v);
	hs_yaml_free(doc);
	return rc;
}

/* The runner of each scenario kind, in the order of hs_scenario_kinds. A runner takes the parsed document
 * (overrides applied) over and frees it. */
static int (*const runners[HS_KIND_COUNT])(hs_ydoc *doc, const char *path, int index, hs_err *err) = {
	[HS_KIND_TRAINING] = run_training,
	[HS_KIND_FABRIC] = run_fabric,
};

int cmd_run(int argc, char **argv)
{
	const char *pos[256];
	json = detail = no_symmetry = hdf5_tasks = timing = 0;
	trace_path = trace_ranks = hdf5_path = workload = traffic_from = NULL;
	trace_limit.given = 0, trace_limit.v = 0;
	int n = hs_opt_parse(&hs_usage_run, argc, argv, pos, 256);
	if (n == -2)
		return 0;
	if (n < 0)
		return HS_EINPUT;
	if (n == 0) {
		fprintf(stderr, "hetsim run: no scenario given\nusage: %s\n", hs_usage_run.synopsis);
		return HS_EINPUT;
	}
	if ((trace_path || hdf5_path) && n > 1) {
		fprintf(stderr, "hetsim run: --trace and --hdf5 take one scenario (%d given)\n", n);
		return HS_EINPUT;
	}
	/* options that only shape an output no other option asks for would be ignored without a word */
	if ((trace_ranks || trace_limit.given) && !trace_path) {
		fprintf(stderr, "hetsim run: --%s shapes the trace: add --trace FILE.json\n",
			trace_ranks ? "trace-ranks" : "trace-limit");
		return HS_EINPUT;
	}
	if (hdf5_tasks && !hdf5_path) {
		fprintf(stderr, "hetsim run: --hdf5-tasks adds to the HDF5 file: add --hdf5 FILE.h5\n");
		return HS_EINPUT;
	}
	if (workload && (strncmp(workload, "chakra:", 7) != 0 || !workload[7])) {
		fprintf(stderr, "hetsim run: --workload '%s': expected chakra:PREFIX (the files PREFIX.0.et, ...)\n",
			workload);
		return HS_EINPUT;
	}
	int status = 0;
	for (int i = 0; i < n; i++) {
		hs_err err = {0};
		/* parsed once, overrides applied once, then handed to the runner of its kind */
		hs_ydoc *doc = hs_yaml_load_file_set(pos[i], sets.v, sets.n, &err);
		int kind = doc ? (int)hs_scenario_kind(doc) : -1;
		int rc;
		if (doc && traffic_from && kind != HS_KIND_FABRIC) {
			hs_yaml_free(doc);
			rc = hs_err_set(&err, HS_EINPUT, "%s: --traffic-from replays traffic in a fabric experiment "
							 "(expected a scenario with kind: fabric)",
					pos[i]);
		} else if (doc && traffic_from) {
			rc = run_replay(doc, pos[i], &err);
		} else {
			rc = doc ? runners[kind](doc, pos[i], i, &err) : -1;
		}
		if (rc) {
			status = hs_cmd_fail("run", &err);
			break; /* stop at the first failure: nothing half-done is reported as a result */
		}
	}
	hs_strlist_free(&sets);
	return hs_cmd_finish(status);
}
