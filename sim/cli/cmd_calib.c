/* `hetsim calib fit | derive | import-nccl-tests` (docs/calibration.md). */
#include "sim/cli/cmd.h"
#include "sim/cli/cmd_calib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib/fabric.h"
#include "calib/fit.h"
#include "calib/jsonl.h"
#include "calib/nccl.h"
#include "calib/profile.h"
#include "calib/refexec_cmp.h"
#include "sim/base/alloc.h"
#include "config/yaml.h"
#include "sim/base/err.h"
#include "sim/base/outfile.h"
#include "sim/coll/coll_nccl.h"
#include "topology/cluster.h"
#include "topology/device.h"

static const char *fit_out, *fit_device, *fit_name;
static int fit_summary;
static const hs_opt fit_opts[] = {
	{HS_OPT_STRING, "output", 'o', &fit_out, "FILE", "write the profile here (required)"},
	{HS_OPT_STRING, "device", 0, &fit_device, "NAME", "the built-in device measured (default: from the info record)"},
	{HS_OPT_STRING, "name", 0, &fit_name, "NAME", "profile name (default: the device name)"},
	{HS_OPT_FLAG, "summary", 0, &fit_summary, NULL, "print only the MAPE of each part, not every point"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};
static const hs_cmd_usage usage_fit = {
	"calib fit", "hetsim calib fit MEASUREMENTS.jsonl|DIR... -o PROFILE.yaml [--device NAME]",
	"Fit a device profile (GEMM grid, memory curve, attention, launch) from JSON-lines measurements.", fit_opts,
	"A folder stands for every *.jsonl in it. Prints which rows fed each part of the profile, the residual of\n"
	"every point, the MAPE of each part and the leave-one-out MAPE of the GEMM grid."};

static const char *der_out;
static const hs_opt der_opts[] = {
	{HS_OPT_STRING, "output", 'o', &der_out, "FILE", "write the derived profile here (required)"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};
static const hs_cmd_usage usage_derive = {
	"calib derive", "hetsim calib derive PROFILE DEVICE -o OUT.yaml",
	"Derive a profile for a built-in DEVICE from a measured PROFILE by datasheet ratios (marked derived).",
	der_opts, NULL};

static const char *nccl_out, *nccl_coll, *nccl_scn, *nccl_name;
static int nccl_summary, nccl_rows;
static const hs_opt nccl_opts[] = {
	{HS_OPT_STRING, "output", 'o', &nccl_out, "FILE", "write the fabric fits here (required unless --rows)"},
	{HS_OPT_FLAG, "rows", 0, &nccl_rows, NULL,
	 "print each log's parsed rows as JSON, in `hetsim coll --json`'s keys, and fit nothing"},
	{HS_OPT_STRING, "collective", 0, &nccl_coll, "NAME", "the collective, when a log does not say"},
	{HS_OPT_STRING, "scenario", 0, &nccl_scn, "FILE",
	 "the cluster the logs were measured on (LOG=FILE for one log): fit a fabric profile against its model"},
	{HS_OPT_STRING, "name", 0, &nccl_name, "NAME", "the fabric profile's name (default: the GPU)"},
	{HS_OPT_FLAG, "summary", 0, &nccl_summary, NULL, "print only the fit and MAPE of each log"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};
static const hs_cmd_usage usage_nccl = {
	"calib import-nccl-tests",
	"hetsim calib import-nccl-tests LOG[=SCENARIO]... -o FABRIC.yaml [--scenario SCENARIO] | --rows LOG...",
	"Read nccl-tests logs and fit t = alpha + bytes * beta per log; with the scenario of the cluster they were\n"
	"measured on, also a fabric profile that scenarios use (cluster.fabric_profile).", nccl_opts,
	"With a scenario, each row is put beside hetsim's NCCL model of that cluster, and every (collective, scope,\n"
	"protocol) gets t = latency_scale * latency + bytes / (efficiency * bandwidth), fitted by\n"
	"weighted least squares (docs/calibration.md). With two logs or more, each is also predicted from the\n"
	"others' fit (leave-one-log-out), and the errors are printed and kept in the profile's note."};

static const char *cmp_profile;
static int cmp_summary;
static const hs_opt cmp_opts[] = {
	{HS_OPT_STRING, "profile", 0, &cmp_profile, "NAME", "also compare every timed op with this device profile"},
	{HS_OPT_FLAG, "summary", 0, &cmp_summary, NULL, "print only the MAPEs, not every row"},
	{HS_OPT_END, NULL, 0, NULL, NULL, NULL},
};
static const hs_cmd_usage usage_cmp = {
	"calib compare-refexec", "hetsim calib compare-refexec MEASURED.jsonl GRAPH [--profile NAME]",
	"Put hetsim's predicted time of every task (and the step) beside kernels/refexec's measurement.", cmp_opts,
	"GRAPH is the file `hetsim export-graph` wrote and refexec ran: its pred_s and step_pred_s are the\n"
	"predictions. With --profile, the ops refexec timed (--op-times) are compared with the profile's curves, and\n"
	"every task and the step are recomputed from the profile (ops back to back plus kernel_gap per op)."};

static const hs_opt no_opts[] = {{HS_OPT_END, NULL, 0, NULL, NULL, NULL}};
const hs_cmd_usage *const hs_calib_subs[] = {&usage_fit, &usage_derive, &usage_nccl, &usage_cmp, NULL};
const hs_cmd_usage hs_usage_calib = {
	"calib", "hetsim calib fit|derive|import-nccl-tests|compare-refexec ...",
	"Calibration: fit device profiles from measurements, derive profiles, import nccl-tests logs.", no_opts,
	"subcommands:\n"
	"  fit MEASUREMENTS.jsonl... -o PROFILE.yaml      fit a device profile\n"
	"  derive PROFILE DEVICE -o OUT.yaml              a profile for another device by datasheet ratios\n"
	"  import-nccl-tests LOG... -o FABRIC.yaml        alpha-beta fits from nccl-tests logs\n"
	"  compare-refexec MEASURED.jsonl GRAPH           predicted against refexec's measured times\n"
	"`hetsim calib SUBCOMMAND --help` for each one's options."};

static int fail(const char *sub, const hs_err *err)
{
	fprintf(stderr, "hetsim calib %s: %s\n", sub, err->msg);
	return err->code ? err->code : 1;
}

static int finish(int status)
{
	return hs_cmd_finish(status);
}

/* The built-in type an info record's device name stands for ("NVIDIA H200" -> H200-SXM-141GB). */
static const char *device_from_info(const hs_jsonl *const *sets, int n)
{
	static const struct {
		const char *needle, *dev;
	} map[] = {{"H200", "H200-SXM-141GB"}, {"H100 PCIe", "H100-PCIe-80GB"}, {"H100", "H100-SXM-80GB"},
		   {"A100-SXM4-40GB", "A100-SXM-40GB"}, {"A100", "A100-SXM-80GB"}, {"GB200", "GB200"},
		   {"B200", "B200"}, {"MI300X", "MI300X"}, {"4090", "RTX-4090"}, {"3090", "RTX-3090"},
		   {"L40S", "L40S"}, {NULL, NULL}};
	for (int s = 0; s < n; s++)
		for (size_t i = 0; i < sets[s]->n; i++) {
			const char *k = hs_jrec_str(&sets[s]->recs[i], "kind");
			const char *nm = hs_jrec_str(&sets[s]->recs[i], "name");
			if (!k || strcmp(k, "info") != 0 || !nm)
				continue;
			for (int j = 0; map[j].needle; j++)
				if (strstr(nm, map[j].needle))
					return map[j].dev;
		}
	return NULL;
}

static void print_rows(const hs_fit_report *rep, const char *kind)
{
	for (size_t i = 0; i < rep->n; i++) {
		const hs_fit_resid *r = &rep->r[i];
		if (strcmp(r->kind, kind) != 0)
			continue;
		printf("  %-12s %-36s measured %11.3f us  predicted %11.3f us  %+7.2f%%%s\n", r->kind, r->label,
		       r->measured * 1e6, r->predicted * 1e6, 100 * (r->predicted - r->measured) / r->measured,
		       r->outlier ? "  (outlier, not fitted)" : "");
	}
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The measurement files: each argument, or every *.jsonl in it (sorted) when it is a folder. Returns the
 * count, or -1 (printed) when a folder cannot be read or there are too many. */
static int expand_inputs(const char *const *pos, int np, char **files, int cap)
{
	int n = 0;
	for (int i = 0; i < np; i++) {
		struct stat st;
		if (stat(pos[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			if (n >= cap)
				goto many;
			files[n++] = hs_xstrdup(pos[i]);
			continue;
		}
		DIR *d = opendir(pos[i]);
		if (!d) {
			fprintf(stderr, "hetsim calib fit: %s: %s\n", pos[i], strerror(errno));
			return -1;
		}
		int first = n;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len < 7 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
				continue;
			if (n >= cap) {
				closedir(d);
				goto many;
			}
			size_t pl = strlen(pos[i]) + len + 2;
			files[n] = hs_xmalloc(pl);
			snprintf(files[n], pl, "%s%s%s", pos[i], pos[i][strlen(pos[i]) - 1] == '/' ? "" : "/", e->d_name);
			n++;
		}
		closedir(d);
		qsort(files + first, (size_t)(n - first), sizeof *files, cmp_str);
	}
	return n;
many:
	fprintf(stderr, "hetsim calib fit: at most %d measurement files\n", cap);
	return -1;
}

static int calib_fit(int argc, char **argv)
{
	const char *pos[256];
	char *files[32] = {0};
	fit_out = fit_device = fit_name = NULL;
	fit_summary = 0;
	int np = hs_opt_parse(&usage_fit, argc, argv, pos, 256);
	if (np == -2)
		return 0;
	if (np < 0)
		return 2;
	if (np == 0 || !fit_out) {
		fprintf(stderr, "hetsim calib fit: need measurement files and -o PROFILE.yaml\nusage: %s\n",
			usage_fit.synopsis);
		return 2;
	}
	int nf = expand_inputs(pos, np, files, 32);
	if (nf <= 0) {
		if (nf == 0)
			fprintf(stderr, "hetsim calib fit: no .jsonl files in the folders given\n");
		for (int i = 0; i < 32; i++)
			free(files[i]);
		return 2;
	}
	hs_err err;
	hs_err_clear(&err);
	hs_jsonl **sets = hs_xcalloc((size_t)nf, sizeof *sets);
	int rc = 0;
	hs_profile *p = NULL;
	hs_fit_report rep = {0};
	for (int i = 0; i < nf; i++)
		if (!(sets[i] = hs_jsonl_load(files[i], &err))) {
			rc = fail("fit", &err);
			goto out;
		}
	const char *dn = fit_device ? fit_device : device_from_info((const hs_jsonl *const *)sets, nf);
	if (!dn) {
		fprintf(stderr, "hetsim calib fit: no info record names a known device; pass --device NAME\n");
		rc = 2;
		goto out;
	}
	const hs_device_type *dev = hs_device_builtin(dn);
	if (!dev) {
		fprintf(stderr, "hetsim calib fit: unknown device '%s'\n", dn);
		rc = 2;
		goto out;
	}
	p = hs_fit_profile((const hs_jsonl *const *)sets, nf, dev, fit_name ? fit_name : dev->name, &rep, &err);
	if (!p) {
		rc = fail("fit", &err);
		goto out;
	}
	static const char *const kinds[] = {"gemm",	   "gemm-loo", "gemm-other",   "memory",
					    "elementwise", "elem-other", "attn-fwd", "attn-bwd", "refexec-task", NULL};
	printf("calib fit: %s (device %s), %d file(s)\n", hs_profile_name(p), dev->name, nf);
	printf("source: %s\n", hs_profile_provenance(p));
	printf("which rows each part came from:\n");
	const char *pk, *pv;
	for (int i = 0; hs_profile_part(p, i, &pk, &pv) == 0; i++)
		printf("  %-24s %s\n", pk, pv);
	if (!fit_summary)
		for (int k = 0; kinds[k]; k++)
			print_rows(&rep, kinds[k]);
	printf("fit quality (MAPE over the points used):\n");
	for (int k = 0; kinds[k]; k++) {
		size_t n;
		double m = hs_fit_mape(&rep, kinds[k], &n);
		if (n)
			printf("  %-12s %6.2f%%  (%zu points)%s\n", kinds[k], m, n,
			       strcmp(kinds[k], "gemm-loo") == 0	   ? "  leave-one-out over the GEMM grid"
			       : strcmp(kinds[k], "refexec-task") == 0 ? "  task time against sum of ops + kernel_gap"
			       : strcmp(kinds[k], "elem-other") == 0   ? "  the other origin's rows with these factors"
								       : "");
	}
	printf("kernel_gap %.3g us, launch %.3g us, gemm launch %.3g us (in-stream)\n", hs_profile_kernel_gap(p) * 1e6,
	       hs_profile_launch(p) * 1e6, hs_profile_gemm_time(p, NULL, 1, 1, 1, HS_BF16) * 1e6);
	if (hs_profile_save(p, fit_out, &err)) {
		rc = fail("fit", &err);
		goto out;
	}
	printf("wrote %s\n", fit_out);
out:
	for (int i = 0; i < nf; i++)
		hs_jsonl_free(sets[i]);
	for (int i = 0; i < 32; i++)
		free(files[i]);
	free(sets);
	hs_fit_report_free(&rep);
	hs_profile_free(p);
	return finish(rc);
}

static int calib_derive(int argc, char **argv)
{
	const char *pos[2];
	der_out = NULL;
	int np = hs_opt_parse(&usage_derive, argc, argv, pos, 2);
	if (np == -2)
		return 0;
	if (np < 0)
		return 2;
	if (np != 2 || !der_out) {
		fprintf(stderr, "usage: %s\n", usage_derive.synopsis);
		return 2;
	}
	hs_err err;
	hs_err_clear(&err);
	const hs_device_type *target = hs_device_builtin(pos[1]);
	if (!target) {
		fprintf(stderr, "hetsim calib derive: unknown device '%s'\n", pos[1]);
		return 2;
	}
	hs_profile *src = hs_profile_load(pos[0], &err);
	if (!src)
		return fail("derive", &err);
	const hs_device_type *sdev = hs_device_builtin(hs_profile_device(src));
	if (!sdev) {
		fprintf(stderr, "hetsim calib derive: the source profile's device '%s' is not a built-in type\n",
			hs_profile_device(src));
		hs_profile_free(src);
		return 2;
	}
	hs_profile *d = hs_profile_derive(src, sdev, target, &err);
	int rc = 0;
	if (!d || hs_profile_save(d, der_out, &err))
		rc = fail("derive", &err);
	else
		printf("wrote %s (derived from %s: bf16 peak x%.3g, memory bandwidth x%.3g)\n", der_out,
		       hs_profile_name(src), target->peak_flops[HS_BF16] / sdev->peak_flops[HS_BF16],
		       target->hbm_bw / sdev->hbm_bw);
	hs_profile_free(d);
	hs_profile_free(src);
	return finish(rc);
}

/* --rows: what the reader took from each log, one JSON object per log and line, with `hetsim coll --json`'s
 * row keys, so that a table hetsim printed can be read back and compared with the rows it came from. */
static int nccl_print_rows(const char *const *logs, int n)
{
	for (int i = 0; i < n; i++) {
		hs_err err = {0};
		hs_nccl_log l;
		if (hs_nccl_load(logs[i], &l, &err)) {
			hs_nccl_free(&l);
			return finish(fail("import-nccl-tests", &err));
		}
		printf("{\"log\":\"%s\",\"op\":\"%s\",\"ranks\":%d,\"rows\":[", logs[i], l.collective, l.ranks);
		for (size_t r = 0; r < l.n; r++) {
			const hs_nccl_row *w = &l.rows[r];
			printf("%s{\"size_bytes\":%.0f,\"count\":%.0f,\"time_us\":%.6g,\"algbw_GBps\":%.6g,"
			       "\"busbw_GBps\":%.6g,\"time_us_inplace\":%.6g}",
			       r ? "," : "", w->bytes, w->count, w->t * 1e6, w->algbw / 1e9, w->busbw / 1e9, w->t_inplace * 1e6);
		}
		printf("]}\n");
		hs_nccl_free(&l);
	}
	return finish(0);
}

/* The model's view of every row of a log measured on `scn`'s cluster: appended to *rows (log index li). The
 * rows keep pointers to static names only. Returns 0, or an exit status (printed). */
static int model_rows(const hs_nccl_log *l, const char *logname, const char *scn, int li, hs_fab_row **rows,
		      size_t *n, size_t *cap, hs_fab_shape *shape, int *have_shape)
{
	hs_err err = {0};
	hs_ydoc *d = hs_yaml_load_file(scn, &err);
	if (!d)
		return fail("import-nccl-tests", &err);
	const hs_ynode *cn = hs_yaml_get(hs_yaml_root(d), "cluster");
	hs_cluster *c = NULL;
	if (!cn)
		hs_err_set(&err, HS_EINPUT, "%s: cluster: missing (expected the cluster the log was measured on)", scn);
	else
		c = hs_cluster_from_yaml(cn, "cluster", &err);
	hs_yaml_free(d);
	if (c && hs_coll_closed_form_check(c, HS_ALGO_AUTO, &err)) { /* the fit compares the log with NCCL's model */
		hs_cluster_free(c);
		c = NULL;
	}
	if (!c)
		return fail("import-nccl-tests", &err);
	int rc = 0, ng = hs_cluster_ngpus(c), nr = l->ranks > 0 ? l->ranks : ng;
	int op = hs_coll_op_parse(l->collective);
	char al[32];
	snprintf(al, sizeof al, "%s", strcmp(l->algo, "default") == 0 ? "auto" : l->algo);
	for (char *q = al; *q; q++)
		*q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
	int algo = hs_coll_algo_parse(al);
	const hs_node_group *g0 = hs_cluster_group(c, 0);
	if (op < 0) {
		fprintf(stderr, "hetsim calib import-nccl-tests: %s: collective '%s' is not one hetsim models\n", logname,
			l->collective);
		rc = 2;
	} else if (algo < 0) {
		fprintf(stderr, "hetsim calib import-nccl-tests: %s: NCCL_ALGO=%s is not an algorithm hetsim models\n",
			logname, l->algo);
		rc = 2;
	} else if (nr > ng) {
		fprintf(stderr, "hetsim calib import-nccl-tests: %s: %d ranks, but %s has %d devices (expected the scenario "
			"of the cluster the log was measured on)\n", logname, nr, scn, ng);
		rc = 2;
	} else if (*have_shape && (shape->gpus_per_node != g0->gpus_per_node || strcmp(shape->scaleup, g0->scaleup_kind))) {
		fprintf(stderr, "hetsim calib import-nccl-tests: %s: %d GPUs per node on %s, where the first log's cluster "
			"has %d on %s (one profile holds one cluster shape)\n", scn, g0->gpus_per_node, g0->scaleup_kind,
			shape->gpus_per_node, shape->scaleup);
		rc = 2;
	}
	if (rc) {
		hs_cluster_free(c);
		return rc;
	}
	if (!*have_shape) {
		snprintf(shape->gpu, sizeof shape->gpu, "%s", g0->gpu.name);
		shape->gpus_per_node = g0->gpus_per_node;
		snprintf(shape->scaleup, sizeof shape->scaleup, "%s", g0->scaleup_kind);
		shape->nic_bw = g0->nic_bw;
		shape->nics_per_node = g0->nics_per_node;
		*have_shape = 1;
	}
	int *ranks = hs_xmalloc((size_t)nr * sizeof *ranks), scope = HS_FAB_INTRA;
	for (int i = 0; i < nr; i++) {
		ranks[i] = i;
		if (hs_cluster_domain_of(c, i) != hs_cluster_domain_of(c, 0))
			scope = HS_FAB_INTER;
	}
	for (size_t r = 0; r < l->n; r++) {
		const hs_nccl_row *w = &l->rows[r];
		if (w->bytes <= 0 || w->t <= 0)
			continue;
		hs_coll_choice ch;
		double t = hs_coll_nccl_time(c, (enum hs_coll_op)op, (enum hs_coll_algo)algo, HS_PROTO_AUTO, ranks, nr,
					     w->bytes, &ch);
		if (!(t > 0))
			continue;
		if (*n == *cap)
			*rows = hs_xrealloc(*rows, (*cap = *cap ? 2 * *cap : 64) * sizeof **rows);
		(*rows)[(*n)++] = (hs_fab_row){hs_coll_op_name((enum hs_coll_op)op), scope, hs_coll_proto_name(ch.proto),
					       w->bytes, w->t, ch.lat_s, ch.bw_Bps, li};
	}
	free(ranks);
	hs_cluster_free(c);
	return 0;
}

/* busbw MAPE (sizes >= 1 MiB, the gate of tests/unit/coll/test_coll_nccl.c) of log li's rows under profile p
 * (NULL: the model unchanged); busbw is proportional to 1/t, so a row's error is t_measured / t_predicted - 1. */
static double log_mape(const hs_fab_row *rows, size_t n, int li, const hs_fabprof *p, size_t *cnt)
{
	double s = 0;
	*cnt = 0;
	for (size_t i = 0; i < n; i++) {
		const hs_fab_row *r = &rows[i];
		if (r->log != li || r->bytes < 1048576)
			continue;
		const hs_fab_entry *e = p ? hs_fabprof_lookup(p, r->collective, r->scope, r->proto) : NULL;
		double t = e ? hs_fab_entry_time(e, r->bytes, r->lat, r->bw) : r->lat + r->bytes / r->bw;
		s += fabs(r->t / t - 1);
		(*cnt)++;
	}
	return *cnt ? 100 * s / (double)*cnt : 0;
}

/* A log argument: LOG, or LOG=SCENARIO (the cluster it was measured on; --scenario otherwise). */
static void split_log(const char *arg, char *log, size_t ll, const char **scn)
{
	const char *eq = strchr(arg, '=');
	if (eq && eq[1]) {
		snprintf(log, ll, "%.*s", (int)(eq - arg), arg);
		*scn = eq + 1;
	} else
		snprintf(log, ll, "%s", arg);
}

static int calib_nccl(int argc, char **argv)
{
	const char *pos[256];
	nccl_out = nccl_coll = nccl_scn = nccl_name = NULL;
	nccl_summary = nccl_rows = 0;
	int np = hs_opt_parse(&usage_nccl, argc, argv, pos, 256);
	if (np == -2)
		return 0;
	if (np < 0)
		return 2;
	if (nccl_rows && np > 0)
		return nccl_print_rows(pos, np);
	if (np == 0 || !nccl_out) {
		fprintf(stderr, "hetsim calib import-nccl-tests: need logs and -o FABRIC.yaml\nusage: %s\n",
			usage_nccl.synopsis);
		return 2;
	}
	hs_err err;
	hs_err_clear(&err);
	char *tab = NULL;
	size_t tablen = 0;
	FILE *f = open_memstream(&tab, &tablen);
	if (!f) {
		fprintf(stderr, "hetsim calib import-nccl-tests: out of memory\n");
		return 1;
	}
	int rc = 0, have_shape = 0, nlogs = 0, fitting = 0, nosc = 0;
	double all_s = 0;
	size_t all_n = 0, nrows = 0, caprows = 0;
	hs_fab_row *rows = NULL;
	hs_fab_shape shape = {0};
	char src[1024] = "nccl-tests logs:";
	char logs[64][512];
	for (int i = 0; i < np && !rc; i++) {
		char logname[512];
		const char *scn = nccl_scn;
		split_log(pos[i], logname, sizeof logname, &scn);
		hs_nccl_log l;
		if (hs_nccl_load(logname, &l, &err)) {
			rc = fail("import-nccl-tests", &err);
			hs_nccl_free(&l);
			break;
		}
		if (nccl_coll)
			snprintf(l.collective, sizeof l.collective, "%s", nccl_coll);
		if (!l.collective[0]) {
			fprintf(stderr, "hetsim calib import-nccl-tests: %s: cannot tell the collective; pass --collective\n",
				logname);
			hs_nccl_free(&l);
			rc = 2;
			break;
		}
		double a, b;
		if (hs_nccl_fit(&l, &a, &b, &err)) {
			rc = fail("import-nccl-tests", &err);
			hs_nccl_free(&l);
			break;
		}
		printf("%s: %s, algorithm %s, %d ranks, %zu rows: alpha %.3f us, bandwidth %.2f GB/s\n", logname,
		       l.collective, l.algo, l.ranks, l.n, a * 1e6, 1e-9 / b);
		double s = 0;
		size_t n = 0;
		for (size_t r = 0; r < l.n; r++) {
			const hs_nccl_row *w = &l.rows[r];
			if (w->bytes <= 0)
				continue;
			double pr = a + b * w->bytes, e = (pr - w->t) / w->t;
			s += fabs(e);
			n++;
			if (!nccl_summary)
				printf("  line %4d  %12.0f B  measured %11.2f us  predicted %11.2f us  %+7.2f%%\n", w->line,
				       w->bytes, w->t * 1e6, pr * 1e6, 100 * e);
		}
		printf("  MAPE %.2f%% over %zu sizes\n", n ? 100 * s / (double)n : 0, n);
		all_s += s;
		all_n += n;
		fprintf(f,
			"  - {collective: %s, algorithm: %s, ranks: %d, alpha: %.6g, beta: %.6g, bandwidth: '%.4g GB/s', "
			"points: %zu, mape: %.4g, source: \"%s\"}\n",
			l.collective, l.algo, l.ranks, a, b, 1e-9 / b, n, n ? 100 * s / (double)n : 0, logname);
		if (scn && nlogs < 64) {
			fitting = 1;
			rc = model_rows(&l, logname, scn, nlogs, &rows, &nrows, &caprows, &shape, &have_shape);
			snprintf(logs[nlogs], sizeof logs[nlogs], "%s", logname);
			size_t at = strlen(src);
			snprintf(src + at, sizeof src - at, "%s %s on %s", nlogs ? "," : "", logname, scn);
			nlogs++;
		} else
			nosc = 1;
		if (!rc && fitting && nosc) {
			fprintf(stderr, "hetsim calib import-nccl-tests: %s: every log of a fabric profile needs the scenario "
				"it was measured on (LOG=SCENARIO or --scenario)\n", logname);
			rc = 2;
		}
		hs_nccl_free(&l);
	}
	if (fclose(f) != 0 && !rc) {
		fprintf(stderr, "hetsim calib import-nccl-tests: out of memory\n");
		rc = 1;
	}
	hs_fabprof *p = NULL;
	if (!rc && fitting) {
		p = hs_fabprof_fit(rows, nrows, -1, &shape, nccl_name ? nccl_name : shape.gpu, &err);
		if (!p)
			rc = fail("import-nccl-tests", &err);
	}
	if (!rc && fitting) {
		/* the check that means something: each log predicted from the others' fit */
		char note[2048] = "";
		size_t at = 0;
		if (nlogs > 1) {
			at += (size_t)snprintf(note, sizeof note, "leave-one-log-out busbw MAPE (sizes >= 1 MiB), unfitted -> fitted:");
			printf("leave-one-log-out (each log predicted from the others' fit), busbw MAPE over sizes >= 1 MiB:\n");
		}
		for (int j = 0; j < nlogs && nlogs > 1; j++) {
			hs_fabprof *q = hs_fabprof_fit(rows, nrows, j, &shape, "loo", &err);
			size_t cnt;
			double before = log_mape(rows, nrows, j, NULL, &cnt), after = log_mape(rows, nrows, j, q, &cnt);
			printf("  %-56s unfitted %6.2f%%  fitted on the others %6.2f%%  (%zu sizes)\n", logs[j], before, after, cnt);
			if (at < sizeof note)
				at += (size_t)snprintf(note + at, sizeof note - at, "%s %s %.1f%% -> %.1f%%", j ? ";" : "",
						       logs[j], before, after);
			hs_fabprof_free(q);
			hs_err_clear(&err);
		}
		printf("fabric profile %s (%s, %d per node, %s): t = latency_scale * latency + bytes / "
		       "(efficiency * bandwidth)\n", hs_fabprof_name(p), shape.gpu, shape.gpus_per_node, shape.scaleup);
		for (size_t i = 0; i < hs_fabprof_nentries(p); i++) {
			const hs_fab_entry *e = hs_fabprof_entry(p, i);
			printf("  %-14s %-5s %-6s latency_scale %6.3f  efficiency %6.3f  %3d rows  MAPE %6.2f%%\n",
			       e->collective, e->scope == HS_FAB_INTER ? "inter" : "intra", e->proto, e->lat_scale, e->eff,
			       e->points, e->mape);
		}
		hs_fabprof_set_note(p, src, note);
	}
	if (!rc) {
		char *extra = hs_xmalloc(tablen + 64);
		snprintf(extra, tablen + 64, "collectives:\n%s", tab ? tab : "");
		if (p)
			rc = hs_fabprof_save(p, nccl_out, extra, &err) ? fail("import-nccl-tests", &err) : 0;
		else {
			hs_outfile o;
			if (hs_outfile_open(&o, nccl_out, &err))
				rc = fail("import-nccl-tests", &err);
			else {
				fprintf(o.f, "# hetsim fabric fits from nccl-tests logs (docs/calibration.md): t = alpha + bytes * beta,\n"
					     "# out-of-place times, least squares on relative error\n%s", extra);
				if (hs_outfile_commit(&o, &err))
					rc = fail("import-nccl-tests", &err);
			}
		}
		free(extra);
	}
	free(tab);
	free(rows);
	hs_fabprof_free(p);
	if (rc)
		return finish(rc);
	printf("overall MAPE %.2f%% over %zu sizes; wrote %s\n", all_n ? 100 * all_s / (double)all_n : 0, all_n,
	       nccl_out);
	return finish(0);
}

static int calib_compare(int argc, char **argv)
{
	const char *pos[3];
	cmp_profile = NULL;
	cmp_summary = 0;
	int np = hs_opt_parse(&usage_cmp, argc, argv, pos, 2);
	if (np == -2)
		return 0;
	if (np != 2) {
		if (np >= 0)
			fprintf(stderr, "hetsim calib compare-refexec: give MEASURED.jsonl and GRAPH\nusage: %s\n",
				usage_cmp.synopsis);
		return 2;
	}
	hs_err err = {0};
	hs_jsonl *m = hs_jsonl_load(pos[0], &err);
	if (!m)
		return fail("compare-refexec", &err);
	hsg_graph g;
	char msg[1024];
	if (hsg_read_file(pos[1], &g, msg, sizeof msg)) {
		hs_jsonl_free(m);
		fprintf(stderr, "hetsim calib compare-refexec: %s\n", msg);
		return 2;
	}
	hs_profile *prof = NULL;
	if (cmp_profile && !(prof = hs_profile_load(cmp_profile, &err))) {
		hs_jsonl_free(m);
		hsg_free(&g);
		return fail("compare-refexec", &err);
	}
	hs_refexec_cmp c;
	int rc = hs_refexec_compare(m, &g, prof, &c, &err);
	hs_jsonl_free(m);
	hsg_free(&g);
	hs_profile_free(prof);
	if (rc)
		return fail("compare-refexec", &err);
	static const struct {
		const char *kind, *opkind, *what;
	} parts[] = {
		{"step", NULL, "step, the graph's step_pred_s"},
		{"task", NULL, "tasks, the graph's pred_s"},
		{"op", "gemm", "GEMM ops"},
		{"op", "mem", "memory-bound ops (refexec's kernel family)"},
		{"op", "attn", "attention ops (materialised, as refexec runs it)"},
		{"op", "optimizer", "optimizer ops (copy speed)"},
		{"task-prof", NULL, "tasks from the profile (sum of ops + kernel_gap)"},
		{"step-prof", NULL, "step from the profile"},
	};
	const size_t np2 = sizeof parts / sizeof parts[0];
	if (!cmp_summary)
		for (size_t k = 0; k < np2; k++)
			for (size_t i = 0; i < c.n; i++) {
				const hs_refexec_row *r = &c.rows[i];
				if (strcmp(r->kind, parts[k].kind) == 0 && (!parts[k].opkind || strcmp(r->opkind, parts[k].opkind) == 0))
					printf("  %-12s %-44s predicted %12.3f us  measured %12.3f us  %+8.2f%%\n", r->kind, r->label,
					       r->predicted * 1e6, r->measured * 1e6,
					       100 * (r->predicted - r->measured) / r->measured);
			}
	printf("per part: MAPE, and the signed error of the totals (sum predicted vs sum measured)\n");
	for (size_t k = 0; k < np2; k++) {
		size_t n;
		double mape = hs_refexec_mape_of(&c, parts[k].kind, parts[k].opkind, &n);
		if (!n)
			continue;
		printf("  %-52s MAPE %6.2f%%  total %+7.2f%%  (%zu)\n", parts[k].what, mape,
		       hs_refexec_total_err(&c, parts[k].kind, parts[k].opkind), n);
	}
	hs_refexec_cmp_free(&c);
	return finish(0);
}

int cmd_calib(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		hs_opt_usage(&hs_usage_calib, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "fit") == 0)
		return calib_fit(argc - 1, argv + 1);
	if (strcmp(argv[1], "derive") == 0)
		return calib_derive(argc - 1, argv + 1);
	if (strcmp(argv[1], "import-nccl-tests") == 0)
		return calib_nccl(argc - 1, argv + 1);
	if (strcmp(argv[1], "compare-refexec") == 0)
		return calib_compare(argc - 1, argv + 1);
	fprintf(stderr, "hetsim calib: unknown subcommand '%s'\n", argv[1]);
	hs_opt_usage(&hs_usage_calib, stderr);
	return 2;
}
