/* hetsim place: a placement search over group orders and TP x PP x DP shapes (sim/cli/cmd_place.h). */
#include "sim/cli/cmd_place.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/base/alloc.h"
#include "sim/cli/cmd.h"
#include "sim/exec/exec.h"
#include "sim/exec/plan.h"
#include "sim/base/sizes.h"

#define MAXG 6 /* groups whose orders are searched; more keep the file's order */

static hs_optnum o_top = {.min = 1, .max = INT_MAX}; /* checked by hs_opt_parse (sim/cli/opt.h) */
static int o_json, o_timing;
static struct hs_strlist o_set;

static const hs_opt place_opts[] = {
	{HS_OPT_COUNT, "top", 0, &o_top, "N", "print the N fastest placements (default 5)"},
	{HS_OPT_FLAG, "json", 0, &o_json, NULL, "print one JSON object instead of text"},
	{HS_OPT_LIST, "set", 's', &o_set, "KEY=VALUE", "override a scenario key before the search (repeatable)"},
	{HS_OPT_FLAG, "timing", 0, &o_timing, NULL, "print the search's wall-clock time on stderr"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};

const hs_cmd_usage hs_usage_place = {
	"place",
	"hetsim place [options] SCENARIO.yaml",
	"Search placements of a job on a heterogeneous cluster: group order and TP x PP x DP, balanced.",
	place_opts,
	"Pipeline stages are outermost in the rank order and devices are numbered group by group, so the order\n"
	"of cluster.groups decides which group runs which stages. Every distinct order of the groups (up to 6\n"
	"groups) and every shape with TP inside a node and TP x CP x PP x DP = GPUs is simulated with\n"
	"parallelism.stage_layers: auto and dp_microbatches: auto (not under ZeRO-3); the model, training,\n"
	"recompute, ZeRO and the other keys stay as the scenario says. Device indices in variability: follow the\n"
	"order of the groups. Exit status: 0 done, 1 internal error, 2 bad input, 3 no placement fits.",
};

struct cand {
	int order[MAXG], ng;
	int tp, pp, dp;
	int as_given;
	double step, tps, mfu, mem_peak;
	double compute, exposed, bubble, exposed_k[HS_GROUP_COUNT];
	int bstage, blayers;
	double bbusy;
	char bdev[64];
	int *layers, *dpmb;
	int uneven_dp, stages_auto;
	char stages[256]; /* "0-1 h100, 2-3 a100" */
};

struct info {
	int ngpus, ngroups, layers, cp, zero3, interleaved;
	char names[MAXG][64];
	char sig[MAXG][256];
	int gpn_gcd;
	char model[64];
	long long batch;
};

static int gcd(int a, int b)
{
	while (b) {
		int t = a % b;
		a = b, b = t;
	}
	return a;
}

static int apply(hs_ydoc *doc, const char *fmt, long long v, hs_err *err)
{
	char buf[128];
	snprintf(buf, sizeof buf, fmt, v);
	return hs_yaml_set(doc, buf, err);
}

static double busy(const hs_rep_result *q)
{
	double t = q->compute_s;
	for (int k = 0; k < HS_GROUP_COUNT; k++)
		t += q->exposed_s[k];
	return t;
}

/* Runs of stages by node group: "0-1 h100, 2-3 a100"; a stage whose replicas span groups is "h100+a100". */
static void describe_stages(const hs_scenario *s, char *out, size_t n)
{
	const hs_parallel *p = &s->par;
	size_t o = 0;
	char prev[160] = "";
	int from = 0;
	out[0] = 0;
	for (int st = 0; st <= p->pp; st++) {
		char cur[160] = "";
		if (st < p->pp) {
			int seen[64] = {0};
			size_t co = 0;
			for (int d = 0; d < p->dp; d++) {
				int g = hs_cluster_group_of(s->cluster, hs_build_rank(p, 0, 0, d, st));
				if (g < 64 && !seen[g] && co < sizeof cur - 70) {
					seen[g] = 1;
					co += (size_t)snprintf(cur + co, sizeof cur - co, "%s%s", co ? "+" : "",
							       hs_cluster_group(s->cluster, g)->name);
				}
			}
		}
		if (st > 0 && (st == p->pp || strcmp(cur, prev) != 0)) {
			if (o < n - 1) {
				if (from == st - 1)
					o += (size_t)snprintf(out + o, n - o, "%s%d %s", o ? ", " : "", from, prev);
				else
					o += (size_t)snprintf(out + o, n - o, "%s%d-%d %s", o ? ", " : "", from, st - 1, prev);
			}
			from = st;
		}
		memcpy(prev, cur, sizeof prev);
	}
}

/* Simulate one candidate (tp 0: the scenario as given). Returns 0, or -1 with err. */
static int eval(const char *path, const struct info *in, const int *order, int tp, int pp, int dp, struct cand *c,
		hs_err *err)
{
	memset(c, 0, sizeof *c);
	hs_ydoc *doc = hs_yaml_load_file_set(path, o_set.v, o_set.n, err);
	if (!doc)
		return -1;
	c->ng = in->ngroups;
	for (int i = 0; i < in->ngroups; i++)
		c->order[i] = order ? order[i] : i;
	if (order) {
		hs_ynode *groups = hs_yaml_get(hs_yaml_get(hs_yaml_root(doc), "cluster"), "groups");
		if (groups && groups->kind == HS_Y_SEQ && groups->n == (size_t)in->ngroups) {
			hs_ynode *tmp[MAXG];
			for (int i = 0; i < in->ngroups; i++)
				tmp[i] = groups->vals[order[i]];
			memcpy(groups->vals, tmp, (size_t)in->ngroups * sizeof *tmp);
		}
	}
	if (tp > 0) {
		if (apply(doc, "parallelism.tp=%lld", tp, err) || apply(doc, "parallelism.pp=%lld", pp, err) ||
		    apply(doc, "parallelism.dp=%lld", dp, err) || hs_yaml_set(doc, "parallelism.stage_layers=auto", err) ||
		    (!in->zero3 && hs_yaml_set(doc, "parallelism.dp_microbatches=auto", err)) ||
		    (in->interleaved && (hs_yaml_set(doc, "parallelism.virtual_stages=1", err) ||
					 hs_yaml_set(doc, "parallelism.schedule=1f1b", err)))) {
			hs_yaml_free(doc);
			return -1;
		}
	}
	hs_scenario *s = hs_scenario_from_doc(doc, path, err);
	if (!s)
		return -1;
	hs_build b;
	hs_result r;
	int rc = -1;
	if (hs_plan_step(&s->wl, s->sim.symmetry, &b, err)) /* memory is checked before the step runs */
		goto done_s;
	if (hs_exec_step(&s->wl, &s->sim, &b, NULL, 0, &r, err))
		goto done_b;
	c->as_given = tp == 0;
	c->tp = s->par.tp, c->pp = s->par.pp, c->dp = s->par.dp;
	c->step = r.step_time_s, c->tps = r.tokens_per_s, c->mfu = r.mfu, c->mem_peak = r.mem_peak_bytes;
	const hs_rep_result *cr = &r.reps[r.critical_rep];
	c->compute = cr->compute_s, c->bubble = cr->bubble_s;
	for (int k = 0; k < HS_GROUP_COUNT; k++) {
		c->exposed_k[k] = cr->exposed_s[k];
		c->exposed += cr->exposed_s[k];
	}
	int w = 0;
	for (int i = 0; i < r.nreps; i++)
		if (busy(&r.reps[i]) > busy(&r.reps[w]))
			w = i;
	c->bstage = r.reps[w].stage;
	c->bbusy = busy(&r.reps[w]);
	snprintf(c->bdev, sizeof c->bdev, "%s", r.reps[w].device);
	c->blayers = b.part.stage_layers[c->bstage];
	c->layers = hs_xmalloc((size_t)c->pp * sizeof *c->layers);
	memcpy(c->layers, b.part.stage_layers, (size_t)c->pp * sizeof *c->layers);
	c->dpmb = hs_xmalloc((size_t)c->dp * sizeof *c->dpmb);
	memcpy(c->dpmb, b.part.dp_mb, (size_t)c->dp * sizeof *c->dpmb);
	c->uneven_dp = b.part.uneven_dp;
	c->stages_auto = b.part.stages_auto;
	describe_stages(s, c->stages, sizeof c->stages);
	rc = 0;
	hs_result_free(&r);
done_b:
	hs_build_free(&b);
done_s:
	hs_scenario_free(s);
	return rc;
}

static int cmp_step(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return (x->step > y->step) - (x->step < y->step);
}

/* Facts the search needs: the groups, the model's layers, CP, ZeRO-3, the schedule. The scenario is loaded
 * with a neutral split (TP 1, PP 1), since its own may not fit the cluster. */
static int load_info(const char *path, struct info *in, hs_err *err)
{
	memset(in, 0, sizeof *in);
	hs_ydoc *doc = hs_yaml_load_file_set(path, o_set.v, o_set.n, err);
	if (!doc)
		return -1;
	hs_ynode *par = hs_yaml_get(hs_yaml_root(doc), "parallelism");
	hs_ynode *sc = hs_yaml_get(par, "schedule"), *vs = hs_yaml_get(par, "virtual_stages");
	in->interleaved = (sc && sc->str && strcmp(sc->str, "interleaved") == 0) || (vs && vs->str && atoi(vs->str) > 1);
	if (hs_yaml_set(doc, "parallelism.tp=1", err) || hs_yaml_set(doc, "parallelism.pp=1", err) ||
	    hs_yaml_set(doc, "parallelism.dp=0", err) || hs_yaml_set(doc, "parallelism.virtual_stages=1", err) ||
	    hs_yaml_set(doc, "parallelism.schedule=1f1b", err) ||
	    hs_yaml_set(doc, "parallelism.dp_microbatches=auto", err)) {
		hs_yaml_free(doc);
		return -1;
	}
	/* dp_microbatches: auto relaxes the batch's divisibility by dp; ZeRO-3 refuses it, so retry without */
	hs_scenario *s = hs_scenario_from_doc(doc, path, err);
	if (!s && strstr(err->msg, "ZeRO-3")) {
		hs_err_clear(err);
		doc = hs_yaml_load_file(path, err);
		for (int i = 0; doc && i < o_set.n; i++)
			hs_yaml_set(doc, o_set.v[i], err);
		if (doc && !hs_yaml_set(doc, "parallelism.tp=1", err) && !hs_yaml_set(doc, "parallelism.pp=1", err) &&
		    !hs_yaml_set(doc, "parallelism.dp=0", err) && !hs_yaml_set(doc, "parallelism.virtual_stages=1", err) &&
		    !hs_yaml_set(doc, "parallelism.schedule=1f1b", err))
			s = hs_scenario_from_doc(doc, path, err);
		else
			hs_yaml_free(doc);
	}
	if (!s)
		return -1;
	in->ngpus = hs_cluster_ngpus(s->cluster);
	in->ngroups = hs_cluster_ngroups(s->cluster);
	in->layers = s->model.layers;
	in->cp = s->par.cp;
	in->zero3 = s->par.zero >= 3;
	in->batch = s->train.global_batch;
	snprintf(in->model, sizeof in->model, "%s", s->model.name);
	for (int g = 0; g < in->ngroups; g++) {
		const hs_node_group *ng = hs_cluster_group(s->cluster, g);
		in->gpn_gcd = gcd(in->gpn_gcd, ng->gpus_per_node);
		if (g < MAXG) {
			snprintf(in->names[g], sizeof in->names[g], "%s", ng->name);
			snprintf(in->sig[g], sizeof in->sig[g], "%d/%d/%s/%s/%g/%g/%d/%g", ng->nodes, ng->gpus_per_node,
				 ng->gpu.name, ng->scaleup_kind, ng->scaleup_bw, ng->nic_bw, ng->nics_per_node, ng->nic_lat);
		}
	}
	hs_scenario_free(s);
	return 0;
}

/* Distinct orders of the groups (identical groups are interchangeable). */
static int next_perm(int *a, int n)
{
	int i = n - 2;
	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return 0;
	int j = n - 1;
	while (a[j] <= a[i])
		j--;
	int t = a[i];
	a[i] = a[j], a[j] = t;
	for (int l = i + 1, r = n - 1; l < r; l++, r--)
		t = a[l], a[l] = a[r], a[r] = t;
	return 1;
}

static void print_list(FILE *f, const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (n > 16 && i == 8) {
			fprintf(f, " ..");
			i = n - 8;
		}
		fprintf(f, "%s%d", i ? " " : "", v[i]);
	}
}

static const char *const gnames[HS_GROUP_COUNT] = {"tp", "cp", "dp", "ep", "pp"};

static void why(FILE *f, const struct cand *c)
{
	double st = c->step > 0 ? c->step : 1;
	fprintf(f, "      stages %s; bottleneck stage %d on %s (%d layers, busy %.3f s of %.3f s)", c->stages,
		c->bstage, c->bdev, c->blayers, c->bbusy, c->step);
	fprintf(f, "; critical rank: compute %.0f%%, bubble %.0f%%, exposed comm %.0f%%", 100 * c->compute / st,
		100 * c->bubble / st, 100 * c->exposed / st);
	int k = 0;
	for (int i = 1; i < HS_GROUP_COUNT; i++)
		if (c->exposed_k[i] > c->exposed_k[k])
			k = i;
	if (c->exposed > 0)
		fprintf(f, " (mostly %s)", gnames[k]);
	fprintf(f, "\n");
}

int cmd_place(int argc, char **argv)
{
	const char *pos[2];
	o_top.v = 5, o_top.given = 0;
	o_json = o_timing = 0;
	int n = hs_opt_parse(&hs_usage_place, argc, argv, pos, 2);
	if (n == -2)
		return 0;
	if (n != 1) {
		if (n >= 0)
			fprintf(stderr, "hetsim place: expected one scenario\nusage: %s\n", hs_usage_place.synopsis);
		hs_strlist_free(&o_set);
		return HS_EINPUT;
	}
	int top = (int)o_top.v;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hs_err err = {0};
	struct info in;
	if (load_info(pos[0], &in, &err)) {
		int rc = hs_cmd_fail("place", &err);
		hs_strlist_free(&o_set);
		return rc;
	}
	struct cand *cs = NULL, given;
	size_t nc = 0, cap = 0;
	int invalid = 0, nofit = 0, status = 0;
	char first_invalid[256] = "", first_nofit[512] = "";
	hs_err ge = {0};
	int have_given = eval(pos[0], &in, NULL, 0, 0, 0, &given, &ge) == 0;
	int ord[MAXG];
	for (int i = 0; i < MAXG; i++)
		ord[i] = i;
	int ng = in.ngroups <= MAXG ? in.ngroups : 0;
	/* orders as permutations of group indices; skip those that reorder identical groups */
	char seen[720][MAXG];
	int nseen = 0;
	do {
		int dup = 0;
		char key[MAXG];
		for (int i = 0; i < ng; i++) /* canonical: the first group with the same signature */
			for (int j = 0; j < ng; j++)
				if (strcmp(in.sig[j], in.sig[ord[i]]) == 0) {
					key[i] = (char)j;
					break;
				}
		for (int k = 0; k < nseen && !dup; k++)
			dup = memcmp(seen[k], key, (size_t)ng) == 0;
		if (dup)
			continue;
		if (nseen < 720)
			memcpy(seen[nseen++], key, (size_t)ng);
		for (int tp = 1; tp <= in.gpn_gcd; tp++) {
			if (in.gpn_gcd % tp)
				continue;
			int per = tp * in.cp;
			if (in.ngpus % per)
				continue;
			for (int pp = 1; pp <= in.layers && pp <= in.ngpus / per; pp++) {
				if ((in.ngpus / per) % pp)
					continue;
				int dp = in.ngpus / per / pp;
				struct cand c;
				hs_err e = {0};
				if (eval(pos[0], &in, ng ? ord : NULL, tp, pp, dp, &c, &e)) {
					if (e.code == HS_EINFEASIBLE) {
						if (!nofit++)
							snprintf(first_nofit, sizeof first_nofit, "TP %d PP %d DP %d: %s", tp,
								 pp, dp, e.msg);
					} else if (e.code == HS_EINPUT) {
						if (!invalid++)
							snprintf(first_invalid, sizeof first_invalid, "TP %d PP %d DP %d: %.200s",
								 tp, pp, dp, e.msg);
					} else {
						status = hs_cmd_fail("place", &e);
						goto out;
					}
					continue;
				}
				hs_xgrow(&cs, &cap, nc + 1, sizeof *cs);
				cs[nc++] = c;
			}
		}
	} while (ng > 1 && next_perm(ord, ng));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (o_timing)
		fprintf(stderr, "hetsim place: %s: searched in %.2f s wall\n", pos[0],
			(double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	if (nc == 0) {
		fprintf(stderr, "hetsim place: no placement of %s fits (%d invalid for the model, %d do not fit in memory)%s%s\n",
			pos[0], invalid, nofit, nofit ? "; for example " : "", nofit ? first_nofit : first_invalid);
		status = nofit ? HS_EINFEASIBLE : HS_EINPUT;
		goto out;
	}
	qsort(cs, nc, sizeof *cs, cmp_step);
	if ((size_t)top > nc)
		top = (int)nc;
	FILE *f = stdout;
	if (o_json) {
		fprintf(f, "{\"scenario\":\"%s\",\"evaluated\":%zu,\"invalid\":%d,\"no_fit\":%d,", pos[0], nc, invalid, nofit);
		if (have_given)
			fprintf(f, "\"as_given_step_time_s\":%.9g,", given.step);
		fprintf(f, "\"candidates\":[");
		for (int i = 0; i < top; i++) {
			const struct cand *c = &cs[i];
			fprintf(f, "%s{\"step_time_s\":%.9g,\"tokens_per_s\":%.9g,\"mfu\":%.6g,\"order\":[", i ? "," : "",
				c->step, c->tps, c->mfu);
			for (int g = 0; g < c->ng && g < MAXG; g++)
				fprintf(f, "%s\"%s\"", g ? "," : "", in.names[c->order[g]]);
			fprintf(f, "],\"tp\":%d,\"pp\":%d,\"dp\":%d,\"stage_layers\":[", c->tp, c->pp, c->dp);
			for (int k = 0; k < c->pp; k++)
				fprintf(f, "%s%d", k ? "," : "", c->layers[k]);
			fprintf(f, "],\"dp_microbatches\":[");
			for (int k = 0; k < c->dp; k++)
				fprintf(f, "%s%d", k ? "," : "", c->dpmb[k]);
			fprintf(f, "],\"stages\":\"%s\",\"bottleneck_stage\":%d,\"bottleneck_device\":\"%s\","
				   "\"bubble_s\":%.9g,\"exposed_comm_s\":%.9g,\"memory_peak_bytes\":%.9g}",
				c->stages, c->bstage, c->bdev, c->bubble, c->exposed, c->mem_peak);
		}
		fprintf(f, "]}\n");
	} else {
		fprintf(f, "placement search  %s: %s, %d GPUs in %d groups, global batch %lld\n", pos[0], in.model, in.ngpus,
			in.ngroups, in.batch);
		fprintf(f, "evaluated         %zu placements (%d invalid for the model, %d do not fit in memory)\n",
			nc, invalid, nofit);
		if (have_given)
			fprintf(f, "as given          TP %d PP %d DP %d: %.4f s per step (stages %s)\n", given.tp, given.pp,
				given.dp, given.step, given.stages);
		else
			fprintf(f, "as given          does not run: %.200s\n", ge.msg);
		fprintf(f, "\n%4s %9s %10s %6s  %-22s %3s %3s %4s  %-24s %s\n", "rank", "step_s", "tokens/s", "MFU",
			"group order", "TP", "PP", "DP", "stage layers", "replica micro-batches");
		for (int i = 0; i < top; i++) {
			const struct cand *c = &cs[i];
			char order[160] = "";
			size_t o = 0;
			for (int g = 0; g < c->ng && g < MAXG && o < sizeof order - 70; g++)
				o += (size_t)snprintf(order + o, sizeof order - o, "%s%s", g ? "," : "", in.names[c->order[g]]);
			fprintf(f, "%4d %9.4f %10.0f %5.1f%%  %-22s %3d %3d %4d  ", i + 1, c->step, c->tps, 100 * c->mfu, order,
				c->tp, c->pp, c->dp);
			char buf[256];
			FILE *m = fmemopen(buf, sizeof buf, "w");
			print_list(m, c->layers, c->pp);
			fclose(m);
			fprintf(f, "%-24s ", buf);
			if (c->uneven_dp)
				print_list(f, c->dpmb, c->dp);
			else
				fprintf(f, "%d each", c->dpmb[0]);
			fprintf(f, "\n");
			why(f, c);
		}
		if (invalid)
			fprintf(f, "\nskipped as invalid, e.g. %s\n", first_invalid);
		if (nofit)
			fprintf(f, "%sdoes not fit, e.g. %s\n", invalid ? "" : "\n", first_nofit);
		fprintf(f, "\nto run the best: reorder cluster.groups as ");
		for (int g = 0; g < cs[0].ng && g < MAXG; g++)
			fprintf(f, "%s%s", g ? ", " : "", in.names[cs[0].order[g]]);
		fprintf(f, " and --set parallelism.tp=%d --set parallelism.pp=%d --set parallelism.dp=%d "
			   "--set parallelism.stage_layers=auto%s\n",
			cs[0].tp, cs[0].pp, cs[0].dp, in.zero3 ? "" : " --set parallelism.dp_microbatches=auto");
	}
out:
	for (size_t i = 0; i < nc; i++) {
		free(cs[i].layers);
		free(cs[i].dpmb);
	}
	free(cs);
	if (have_given) {
		free(given.layers);
		free(given.dpmb);
	}
	hs_strlist_free(&o_set);
	return hs_cmd_finish(status);
}
