/* Device profiles: load, query, derive, save. The format is documented in docs/calibration.md. */
#include "calib/profile_int.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"
#include "sim/base/outfile.h"

hs_profile *hs_profile_new(void)
{
	hs_profile *p = hs_xcalloc(1, sizeof *p);
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		p->dtype_scale[t] = 1;
	p->gemm_dtype = HS_BF16;
	p->mem_p = 2;
	p->mem_bw_frac = 1;
	return p;
}

void hs_profile_free(hs_profile *p)
{
	if (!p)
		return;
	free(p->eff);
	free(p);
}

const char *hs_profile_name(const hs_profile *p) { return p->name; }
const char *hs_profile_provenance(const hs_profile *p) { return p->provenance; }

int hs_profile_part(const hs_profile *p, int i, const char **key, const char **val)
{
	if (i < 0 || i >= p->src.nparts)
		return -1;
	*key = p->src.part_key[i];
	*val = p->src.part_val[i];
	return 0;
}
const char *hs_profile_device(const hs_profile *p) { return p->device; }
int hs_profile_is_derived(const hs_profile *p) { return p->derived; }
double hs_profile_launch(const hs_profile *p) { return p->launch; }
double hs_profile_kernel_gap(const hs_profile *p) { return p->kernel_gap_set ? p->kernel_gap : 0; }

/* ---- provenance ---- */

void hs_profile_add_part(hs_profile *p, const char *key, const char *fmt, ...)
{
	if (p->src.nparts >= HS_PROF_MAXPARTS)
		return;
	int i = p->src.nparts++;
	snprintf(p->src.part_key[i], sizeof p->src.part_key[i], "%s", key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->src.part_val[i], sizeof p->src.part_val[i], fmt, ap);
	va_end(ap);
}

/* One line for every result that uses the profile: where its curves were measured, or from which profile and
 * by which datasheet ratios they were scaled. */
void hs_profile_set_provenance(hs_profile *p)
{
	const hs_prof_source *s = &p->src;
	if (p->derived)
		snprintf(p->provenance, sizeof p->provenance,
			 "derived from %s by datasheet ratios (bf16 x%.3g, memory x%.3g)", p->derived_from,
			 p->ratio_flops[HS_BF16], p->ratio_hbm_bw);
	else if (s->device[0] || s->date[0] || s->command[0])
		snprintf(p->provenance, sizeof p->provenance, "measured on %s%s%s%s%s%s", s->device[0] ? s->device : p->device,
			 s->date[0] ? ", " : "", s->date, s->command[0] ? " (" : "", s->command, s->command[0] ? ")" : "");
	else if (s->files[0]) {
		/* an old file: a scalar `source` naming the files only */
		char first[200];
		size_t n = strcspn(s->files, "\n");
		snprintf(first, sizeof first, "%.*s", (int)(n < 190 ? n : 190), s->files);
		snprintf(p->provenance, sizeof p->provenance, "measured on %s (%s%s)", p->device, first,
			 s->files[n] ? ", ..." : "");
	} else
		snprintf(p->provenance, sizeof p->provenance, "no source recorded");
}

/* ---- queries ---- */

/* Position of log2(x) on axis g[0..n-1] (ascending): index i and weight w so that the value is
 * (1-w) v[i] + w v[i+1]; clamped to the ends. */
static void axis_pos(const double *g, int n, double x, int *i, double *w)
{
	if (n == 1 || x <= g[0]) {
		*i = 0;
		*w = 0;
		return;
	}
	if (x >= g[n - 1]) {
		*i = n - 2;
		*w = 1;
		return;
	}
	int j = 0;
	while (j < n - 2 && x > g[j + 1])
		j++;
	*i = j;
	*w = (log2(x) - log2(g[j])) / (log2(g[j + 1]) - log2(g[j]));
}

double hs_profile_gemm_eff(const hs_profile *p, double m, double n, double k)
{
	if (!p->eff)
		return 0.5; /* no GEMM data: a plain guess, documented */
	int i, j, l;
	double wi, wj, wl;
	axis_pos(p->gm, p->nm, m, &i, &wi);
	axis_pos(p->gn, p->nn, n, &j, &wj);
	axis_pos(p->gk, p->nk, k, &l, &wl);
	/* trilinear on log(eff): efficiency is a product of per-axis factors to first order */
	double acc = 0;
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 2; b++)
			for (int c = 0; c < 2; c++) {
				double w = (a ? wi : 1 - wi) * (b ? wj : 1 - wj) * (c ? wl : 1 - wl);
				if (w == 0)
					continue;
				int ii = i + a < p->nm ? i + a : i, jj = j + b < p->nn ? j + b : j;
				int ll = l + c < p->nk ? l + c : l;
				acc += w * log(p->eff[((size_t)ii * p->nn + jj) * p->nk + ll]);
			}
	return exp(acc);
}

/* The peak a GEMM in `dt` runs at, and in *run the dtype it really runs in: a format the part lacks runs in
 * bf16 (what frameworks fall back to), or fp32 without bf16. */
static double peak_run(const hs_profile *p, const hs_device_type *dev, enum hs_dtype dt, enum hs_dtype *run)
{
	const double *pk = dev ? dev->peak_flops : p->dev_peak;
	*run = dt;
	if (pk[dt] > 0)
		return pk[dt];
	*run = pk[HS_BF16] > 0 ? HS_BF16 : HS_FP32;
	return pk[*run] > 0 ? pk[*run] : 1e12;
}

static double peak_of(const hs_profile *p, const hs_device_type *dev, enum hs_dtype dt)
{
	enum hs_dtype run;
	return peak_run(p, dev, dt, &run);
}

static double mem_bw(const hs_profile *p, const hs_device_type *dev)
{
	double bw = dev ? dev->hbm_bw : p->dev_hbm_bw;
	return p->mem_bw_frac * (bw > 0 ? bw : 1e12);
}

double hs_profile_gemm_time(const hs_profile *p, const hs_device_type *dev, double m, double n, double k,
			    enum hs_dtype dt)
{
	if (m <= 0 || n <= 0 || k <= 0)
		return 0;
	enum hs_dtype run;
	double peak = peak_run(p, dev, dt, &run);
	/* the scale of the dtype the kernel runs in (fp8 on an A100 runs as bf16, at bf16's efficiency) */
	double eff = hs_profile_gemm_eff(p, m, n, k) * p->dtype_scale[run];
	if (eff > 1)
		eff = 1;
	/* below the grid, efficiency stays at the edge value while the work shrinks: the launch dominates */
	double compute = 2 * m * n * k / (peak * eff);
	/* off the grid's low edge (a side shorter than any measured), the edge's efficiency overstates a thin
	 * GEMM, e.g. the batched attention-score GEMMs with k = head size: there it is bounded by reading its
	 * operands and writing its result once at the achievable copy bandwidth (the roofline's memory side). On
	 * the grid the measured efficiency already holds the memory effects, L2 hits included. */
	if (m < p->gm[0] || n < p->gn[0] || k < p->gk[0]) {
		double ab = hs_dtype_bytes(dt), cb = dt == HS_FP32 || dt == HS_TF32 ? 4 : 2;
		double stream = ((m * k + k * n) * ab + m * n * cb) / mem_bw(p, dev);
		if (stream > compute)
			compute = stream;
	}
	return p->gemm_launch + compute;
}

/* A saturating form: the launch floor and the streaming time, joined by a p-norm (p -> inf is max(),
 * p = 1 is Hockney's latency + size/bandwidth). */
static double mem_form(double launch, double stream, double pw)
{
	if (launch <= 0)
		return stream;
	double r = stream / launch;
	return launch * pow(1 + pow(r, pw), 1 / pw);
}

double hs_profile_gemm_batched_time(const hs_profile *p, const hs_device_type *dev, double m, double n, double k,
				    double count, enum hs_dtype dt)
{
	double one = hs_profile_gemm_time(p, dev, m, n, k, dt);
	if (count <= 1 || one <= 0)
		return one;
	double launch = hs_profile_gemm_time(p, dev, 1, 1, 1, dt);
	return launch + count * (one - launch);
}

double hs_profile_mem_time(const hs_profile *p, const hs_device_type *dev, double bytes)
{
	if (bytes <= 0)
		return 0;
	return mem_form(p->mem_launch, bytes / mem_bw(p, dev), p->mem_p);
}

double hs_profile_mem_op_time(const hs_profile *p, const hs_device_type *dev, const char *op, double bytes)
{
	double f = 1;
	for (int i = 0; op && i < p->nops; i++)
		if (strcmp(p->op_name[i], op) == 0)
			f = p->op_factor[i];
	if (bytes <= 0)
		return 0;
	return mem_form(p->mem_launch, bytes / (mem_bw(p, dev) * f), p->mem_p);
}

int hs_profile_attn_rule(const hs_profile *p)
{
	return (p->attn[HS_ATTN_FWD].rule ? 1 : 0) | (p->attn[HS_ATTN_BWD].rule ? 2 : 0);
}

double hs_profile_attn_flops(double b, double h, double s, double d, int causal, int bwd)
{
	double f = 4 * b * h * s * s * d / (causal ? 2 : 1);
	return bwd ? 2.5 * f : f;
}

double hs_profile_attn_time(const hs_profile *p, const hs_device_type *dev, double b, double h, double s,
			    double d, int causal, int bwd)
{
	if (b <= 0 || h <= 0 || s <= 0 || d <= 0)
		return 0;
	const hs_attn_fit *a = &p->attn[bwd ? HS_ATTN_BWD : HS_ATTN_FWD];
	/* emax is the asymptote as s and d grow; what a real shape reaches stays below the peak */
	double eff = fmin(a->emax * s / (s + a->s_half) * d / (d + a->d_half), 1);
	if (!(eff > 0))
		eff = 0.5;
	return p->attn_launch + hs_profile_attn_flops(b, h, s, d, causal, bwd) / (peak_of(p, dev, HS_BF16) * eff);
}

/* ---- loading ---- */

static const char *const peak_keys[HS_DTYPE_COUNT + 1] = {"fp8", "bf16", "fp16", "tf32", "fp32", NULL};

static int read_name(const hs_ynode *m, const char *path, const char *key, int required, char *dst, size_t cap,
		     hs_err *err)
{
	const char *s;
	if (hs_cfg_str(m, path, key, NULL, required, &s, err))
		return -1;
	if (!s)
		return 0;
	if (strlen(s) >= cap)
		return hs_cfg_err(hs_yaml_get(m, key), err, path, key, "too long (at most %zu characters)", cap - 1);
	snprintf(dst, cap, "%s", s);
	return 0;
}

static int read_axis(const hs_ynode *g, const char *key, double *ax, int *n, hs_err *err)
{
	const hs_ynode *s = hs_yaml_get(g, key);
	if (!s)
		return hs_cfg_err(g, err, "gemm", key, "missing required key");
	if (s->kind != HS_Y_SEQ || s->n < 1 || s->n > HS_PROF_MAXAX)
		return hs_cfg_err(s, err, "gemm", key, "expected a list of 1 to %d sizes", HS_PROF_MAXAX);
	for (size_t i = 0; i < s->n; i++) {
		char kp[32];
		snprintf(kp, sizeof kp, "%s.%zu", key, i);
		if (hs_cfg_node_num(s->vals[i], "gemm", kp, HS_U_COUNT, 1, 1e12, &ax[i], err))
			return -1;
		if (i && ax[i] <= ax[i - 1])
			return hs_cfg_err(s->vals[i], err, "gemm", kp, "sizes must increase");
	}
	*n = (int)s->n;
	return 0;
}

static int read_gemm(const hs_ynode *g, hs_profile *p, hs_err *err)
{
	static const char *const known[] = {"dtype", "launch", "dtype_scale", "m", "n", "k", "efficiency", NULL};
	if (hs_cfg_known(g, "gemm", known, "a mapping", err))
		return -1;
	if (hs_cfg_enum(g, "gemm", "dtype", hs_dtype_names, HS_BF16, &p->gemm_dtype, err) ||
	    hs_cfg_num(g, "gemm", "launch", HS_U_TIME, 0, 1, 0, 1, &p->gemm_launch, err))
		return -1;
	const hs_ynode *ds = hs_yaml_get(g, "dtype_scale");
	if (ds) {
		if (hs_cfg_known(ds, "gemm.dtype_scale", peak_keys, "a mapping of dtype to factor", err))
			return -1;
		for (int t = 0; t < HS_DTYPE_COUNT; t++)
			if (hs_cfg_num(ds, "gemm.dtype_scale", peak_keys[t], HS_U_COUNT, 1e-3, 100, 1, 0,
				       &p->dtype_scale[t], err))
				return -1;
	}
	if (read_axis(g, "m", p->gm, &p->nm, err) || read_axis(g, "n", p->gn, &p->nn, err) ||
	    read_axis(g, "k", p->gk, &p->nk, err))
		return -1;
	const hs_ynode *e = hs_yaml_get(g, "efficiency");
	size_t rows = (size_t)p->nm * p->nn;
	if (!e)
		return hs_cfg_err(g, err, "gemm", "efficiency", "missing required key");
	if (e->kind != HS_Y_SEQ || e->n != rows)
		return hs_cfg_err(e, err, "gemm", "efficiency",
				  "expected a list of %zu rows (one per m, n pair, m-major), each of %d values", rows,
				  p->nk);
	p->eff = hs_xmalloc(rows * p->nk * sizeof *p->eff);
	for (size_t r = 0; r < rows; r++) {
		const hs_ynode *row = e->vals[r];
		char kp[48];
		snprintf(kp, sizeof kp, "efficiency.%zu", r);
		if (row->kind != HS_Y_SEQ || row->n != (size_t)p->nk)
			return hs_cfg_err(row, err, "gemm", kp, "expected a list of %d values (one per k)", p->nk);
		for (int l = 0; l < p->nk; l++) {
			char kq[64];
			snprintf(kq, sizeof kq, "%s.%d", kp, l);
			if (hs_cfg_node_num(row->vals[l], "gemm", kq, HS_U_COUNT, 1e-9, 1, &p->eff[r * p->nk + l],
					    err))
				return -1;
		}
	}
	return 0;
}

static int read_memory(const hs_ynode *m, hs_profile *p, hs_err *err)
{
	static const char *const known[] = {"launch", "bandwidth_fraction", "sharpness", "ops", NULL};
	if (hs_cfg_known(m, "memory", known, "a mapping", err) ||
	    hs_cfg_num(m, "memory", "launch", HS_U_TIME, 0, 1, 0, 1, &p->mem_launch, err) ||
	    hs_cfg_num(m, "memory", "bandwidth_fraction", HS_U_COUNT, 1e-3, 2, 0, 1, &p->mem_bw_frac, err) ||
	    hs_cfg_num(m, "memory", "sharpness", HS_U_COUNT, 0.2, 50, 2, 0, &p->mem_p, err))
		return -1;
	const hs_ynode *ops = hs_yaml_get(m, "ops");
	if (!ops)
		return 0;
	if (ops->kind != HS_Y_MAP)
		return hs_cfg_err(ops, err, "memory", "ops", "expected a mapping of op name to factor");
	if (ops->n > HS_PROF_MAXOPS)
		return hs_cfg_err(ops, err, "memory", "ops", "at most %d ops", HS_PROF_MAXOPS);
	for (size_t i = 0; i < ops->n; i++) {
		const char *k = ops->keys[i]->str;
		if (strlen(k) >= sizeof p->op_name[0])
			return hs_cfg_err(ops->keys[i], err, "memory.ops", k, "name too long");
		snprintf(p->op_name[i], sizeof p->op_name[i], "%s", k);
		if (hs_cfg_node_num(ops->vals[i], "memory.ops", k, HS_U_COUNT, 1e-3, 10, &p->op_factor[i], err))
			return -1;
	}
	p->nops = (int)ops->n;
	return 0;
}

static int read_attn_pass(const hs_ynode *a, const char *key, hs_attn_fit *f, hs_err *err)
{
	static const char *const known[] = {"efficiency", "seq_half", "dim_half", "from", NULL};
	static const char *const from[] = {"measured", "rule", NULL};
	char path[32];
	snprintf(path, sizeof path, "attention.%s", key);
	const hs_ynode *m = hs_yaml_get(a, key);
	if (!m)
		return hs_cfg_err(a, err, "attention", key, "missing required key");
	int k = 0;
	if (hs_cfg_known(m, path, known, "a mapping", err) ||
	    hs_cfg_num(m, path, "efficiency", HS_U_COUNT, 1e-6, 4, 0, 1, &f->emax, err) ||
	    hs_cfg_num(m, path, "seq_half", HS_U_COUNT, 0, 1e9, 0, 0, &f->s_half, err) ||
	    hs_cfg_num(m, path, "dim_half", HS_U_COUNT, 0, 1e6, 0, 0, &f->d_half, err) ||
	    hs_cfg_enum(m, path, "from", from, 0, &k, err))
		return -1;
	f->rule = k == 1; /* a curve written without `from` is the author's own figures, as `measured` */
	return 0;
}

static int read_attention(const hs_ynode *a, hs_profile *p, hs_err *err)
{
	static const char *const known[] = {"launch", "forward", "backward", "flops", "implementation", NULL};
	/* the curves describe fused (flash) attention kernels only: materialised attention is timed as the
	 * batched GEMMs and softmax it runs, from the GEMM and memory curves (models/ops.c) */
	static const char *const impl[] = {"flash", NULL};
	const char *s;
	int k;
	return hs_cfg_known(a, "attention", known, "a mapping", err) ||
			       hs_cfg_enum(a, "attention", "implementation", impl, 0, &k, err) ||
			       hs_cfg_num(a, "attention", "launch", HS_U_TIME, 0, 1, 0, 1, &p->attn_launch, err) ||
			       hs_cfg_str(a, "attention", "flops", NULL, 0, &s, err) ||
			       read_attn_pass(a, "forward", &p->attn[HS_ATTN_FWD], err) ||
			       read_attn_pass(a, "backward", &p->attn[HS_ATTN_BWD], err)
		       ? -1
		       : 0;
}

static int read_peaks(const hs_ynode *root, const char *key, double *out, int required, hs_err *err)
{
	const hs_ynode *m = hs_yaml_get(root, key);
	if (!m) {
		if (required)
			return hs_cfg_err(root, err, "", key, "missing required key");
		return 0;
	}
	if (hs_cfg_known(m, key, peak_keys, "a mapping of dtype to value", err))
		return -1;
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		if (hs_cfg_num(m, key, peak_keys[t], required ? HS_U_FLOPS : HS_U_COUNT, 0, 1e300, 0, 0, &out[t], err))
			return -1;
	return 0;
}

static const char *const ratio_keys[HS_DTYPE_COUNT + 2] = {"peak_fp8",  "peak_bf16", "peak_fp16", "peak_tf32",
							      "peak_fp32", "memory_bandwidth", NULL};

static int read_ratios(const hs_ynode *r, const char *path, hs_profile *p, hs_err *err)
{
	if (hs_cfg_known(r, path, ratio_keys, "a mapping", err))
		return -1;
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		if (hs_cfg_num(r, path, ratio_keys[t], HS_U_COUNT, 0, 1e6, 0, 0, &p->ratio_flops[t], err))
			return -1;
	return hs_cfg_num(r, path, "memory_bandwidth", HS_U_COUNT, 0, 1e6, 0, 0, &p->ratio_hbm_bw, err);
}

/* `source`: a mapping {kind: measured, device, date, command, files: [...], parts: {...}} or {kind: derived,
 * base, ratios: {...}}. Files written before the mapping have a scalar naming the measurement files, with
 * `derived`, `derived_from` and `ratios` at the top level; they load as before (docs/calibration.md). */
static int read_source(const hs_ynode *s, hs_profile *p, hs_err *err)
{
	hs_prof_source *q = &p->src;
	if (s->kind == HS_Y_SCALAR) {
		snprintf(q->kind, sizeof q->kind, "%s", p->derived ? "derived" : "measured");
		if (strlen(s->str) >= sizeof q->files)
			return hs_cfg_err(s, err, "", "source", "too long (at most %zu characters)", sizeof q->files - 1);
		snprintf(q->files, sizeof q->files, "%s", s->str);
		return 0;
	}
	static const char *const known[] = {"kind", "device", "date", "command", "files", "parts", "base", "ratios", NULL};
	static const char *const kinds[] = {"measured", "derived", NULL};
	int kind;
	if (s->kind != HS_Y_MAP)
		return hs_cfg_err(s, err, "", "source", "expected a mapping {kind: measured | derived, ...}");
	if (hs_cfg_known(s, "source", known, "a mapping", err) || hs_cfg_enum(s, "source", "kind", kinds, -1, &kind, err))
		return -1;
	if (kind < 0)
		return hs_cfg_err(s, err, "source", "kind", "missing required key (measured or derived)");
	snprintf(q->kind, sizeof q->kind, "%s", kinds[kind]);
	if (kind == 1) {
		p->derived = 1;
		const hs_ynode *r = hs_yaml_get(s, "ratios");
		if (read_name(s, "source", "base", 1, p->derived_from, sizeof p->derived_from, err) ||
		    (r && read_ratios(r, "source.ratios", p, err)))
			return -1;
		return 0;
	}
	if (read_name(s, "source", "device", 0, q->device, sizeof q->device, err) ||
	    read_name(s, "source", "date", 0, q->date, sizeof q->date, err) ||
	    read_name(s, "source", "command", 0, q->command, sizeof q->command, err))
		return -1;
	const hs_ynode *f = hs_yaml_get(s, "files");
	if (f) {
		if (f->kind != HS_Y_SEQ)
			return hs_cfg_err(f, err, "source", "files", "expected a list of file names");
		size_t len = 0;
		for (size_t i = 0; i < f->n; i++) {
			if (f->vals[i]->kind != HS_Y_SCALAR)
				return hs_cfg_err(f->vals[i], err, "source", "files", "expected a file name");
			len += (size_t)snprintf(q->files + len, sizeof q->files - len, "%s%s", i ? "\n" : "", f->vals[i]->str);
			if (len >= sizeof q->files)
				return hs_cfg_err(f, err, "source", "files", "too long (at most %zu characters)",
						  sizeof q->files - 1);
		}
	}
	const hs_ynode *pt = hs_yaml_get(s, "parts");
	if (pt) {
		if (pt->kind != HS_Y_MAP || pt->n > HS_PROF_MAXPARTS)
			return hs_cfg_err(pt, err, "source", "parts", "expected a mapping of at most %d part: rows entries",
					  HS_PROF_MAXPARTS);
		for (size_t i = 0; i < pt->n; i++) {
			if (pt->vals[i]->kind != HS_Y_SCALAR)
				return hs_cfg_err(pt->vals[i], err, "source.parts", pt->keys[i]->str, "expected text");
			hs_profile_add_part(p, pt->keys[i]->str, "%s", pt->vals[i]->str);
		}
	}
	return 0;
}

hs_profile *hs_profile_from_yaml(const hs_ynode *root, hs_err *err)
{
	static const char *const known[] = {"name",	    "device", "derived",   "derived_from", "source",
					    "device_peak", "device_memory_bandwidth", "ratios", "launch", "kernel_gap",
					    "gemm",	    "memory", "attention", NULL};
	if (hs_cfg_known(root, "", known, "a profile mapping", err))
		return NULL;
	hs_profile *p = hs_profile_new();
	const hs_ynode *g, *m, *a, *r;
	if (read_name(root, "", "name", 1, p->name, sizeof p->name, err) ||
	    read_name(root, "", "device", 1, p->device, sizeof p->device, err) ||
	    hs_cfg_bool(root, "", "derived", 0, &p->derived, err) ||
	    read_name(root, "", "derived_from", p->derived, p->derived_from, sizeof p->derived_from, err) ||
	    read_peaks(root, "device_peak", p->dev_peak, 1, err) ||
	    hs_cfg_num(root, "", "device_memory_bandwidth", HS_U_BW, 1, 1e300, 0, 1, &p->dev_hbm_bw, err) ||
	    hs_cfg_num(root, "", "launch", HS_U_TIME, 0, 1, 0, 1, &p->launch, err))
		goto fail;
	if (hs_yaml_get(root, "kernel_gap")) {
		if (hs_cfg_num(root, "", "kernel_gap", HS_U_TIME, 0, 1, 0, 1, &p->kernel_gap, err))
			goto fail;
		p->kernel_gap_set = 1;
	}
	if ((r = hs_yaml_get(root, "ratios")) && read_ratios(r, "ratios", p, err))
		goto fail;
	if ((r = hs_yaml_get(root, "source")) && read_source(r, p, err))
		goto fail;
	if (!p->src.kind[0])
		snprintf(p->src.kind, sizeof p->src.kind, "%s", p->derived ? "derived" : "measured");
	/* each section is checked as it is read, so the first problem in file order is the one reported */
	if (!(g = hs_yaml_get(root, "gemm"))) {
		hs_cfg_err(root, err, "", "gemm", "missing required key");
		goto fail;
	}
	if (read_gemm(g, p, err))
		goto fail;
	if (!(m = hs_yaml_get(root, "memory"))) {
		hs_cfg_err(root, err, "", "memory", "missing required key");
		goto fail;
	}
	if (read_memory(m, p, err))
		goto fail;
	if (!(a = hs_yaml_get(root, "attention"))) {
		hs_cfg_err(root, err, "", "attention", "missing required key");
		goto fail;
	}
	if (read_attention(a, p, err))
		goto fail;
	hs_profile_set_provenance(p);
	return p;
fail:
	hs_profile_free(p);
	return NULL;
}

static int is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0);
}

static hs_profile *load_file(const char *path, hs_err *err)
{
	if (hs_file_check(path, "a device profile", err))
		return NULL;
	hs_ydoc *doc = hs_yaml_load_file(path, err);
	if (!doc)
		return NULL;
	hs_profile *p = hs_profile_from_yaml(hs_yaml_root(doc), err);
	hs_yaml_free(doc);
	return p;
}

hs_profile *hs_profile_load(const char *name_or_path, hs_err *err)
{
	if (is_path(name_or_path))
		return load_file(name_or_path, err);
	for (const char *c = name_or_path; *c; c++)
		if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
		      (*c >= 'A' && *c <= 'Z'))) {
			hs_err_set(err, HS_EINPUT, "profile name '%s' has characters a profile name cannot have",
				   name_or_path);
			return NULL;
		}
	/* $HETSIM_PROFILES first (an explicit choice overrides what is shipped, docs/calibration.md), then the
	 * shipped profiles relative to the executable: PREFIX/share/hetsim/profiles as `make install` lays them out
	 * (PREFIX/bin/hetsim), TREE/calib/profiles in a source tree (TREE/bin/hetsim); then ./calib/profiles. */
	char dirs[4][4096];
	int nd = 0;
	const char *env = getenv("HETSIM_PROFILES");
	if (env && *env)
		snprintf(dirs[nd++], sizeof dirs[0], "%s", env);
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0; /* .../bin */
			snprintf(dirs[nd++], sizeof dirs[0], "%s/../share/hetsim/profiles", exe);
			snprintf(dirs[nd++], sizeof dirs[0], "%s/../calib/profiles", exe);
		}
	}
	snprintf(dirs[nd++], sizeof dirs[0], "calib/profiles");
	char tried[4 * 600] = "";
	size_t tl = 0;
	for (int i = 0; i < nd; i++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name_or_path);
		if (access(path, R_OK) == 0)
			return load_file(path, err);
		tl += (size_t)snprintf(tried + tl, sizeof tried - tl, "%s%.580s", i ? ", " : "", path);
		if (tl >= sizeof tried)
			tl = sizeof tried - 1;
	}
	hs_err_set(err, HS_EINPUT, "profile '%s' not found (looked in: %s; set HETSIM_PROFILES to a folder)",
		   name_or_path, tried);
	return NULL;
}

/* ---- derive and save ---- */

hs_profile *hs_profile_derive(const hs_profile *src, const hs_device_type *src_dev, const hs_device_type *target,
			      hs_err *err)
{
	if (!src->eff) {
		hs_err_set(err, HS_EINPUT, "profile '%s' has no GEMM grid to derive from", src->name);
		return NULL;
	}
	hs_profile *p = hs_profile_new();
	size_t cells = (size_t)src->nm * src->nn * src->nk;
	*p = *src;
	p->eff = hs_xmalloc(cells * sizeof *p->eff);
	memcpy(p->eff, src->eff, cells * sizeof *p->eff);
	snprintf(p->name, sizeof p->name, "%s", target->name);
	snprintf(p->device, sizeof p->device, "%s", target->name);
	snprintf(p->derived_from, sizeof p->derived_from, "%s", src->name);
	p->derived = 1;
	for (int t = 0; t < HS_DTYPE_COUNT; t++) {
		p->dev_peak[t] = target->peak_flops[t];
		p->ratio_flops[t] = src_dev->peak_flops[t] > 0 ? target->peak_flops[t] / src_dev->peak_flops[t] : 0;
	}
	p->dev_hbm_bw = target->hbm_bw;
	p->ratio_hbm_bw = target->hbm_bw / src_dev->hbm_bw;
	/* a derived profile's source is its base; the base's own source is in the base's file */
	memset(&p->src, 0, sizeof p->src);
	snprintf(p->src.kind, sizeof p->src.kind, "derived");
	hs_profile_set_provenance(p);
	return p;
}

static void put_peaks(FILE *f, const char *key, const double *v)
{
	fprintf(f, "%s: {", key);
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		fprintf(f, "%s%s: %.6g", t ? ", " : "", peak_keys[t], v[t]);
	fprintf(f, "}\n");
}

static void put_axis(FILE *f, const char *key, const double *ax, int n)
{
	fprintf(f, "  %s: [", key);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.10g", i ? ", " : "", ax[i]);
	fprintf(f, "]\n");
}

/* A YAML double-quoted string: the characters profiles hold need only these escapes. */
static void put_quoted(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fputc('\\', f);
		fputc(s[i], f);
	}
	fputc('"', f);
}

static void write_source(FILE *f, const hs_profile *p)
{
	const hs_prof_source *s = &p->src;
	fprintf(f, "# %s\n", p->provenance);
	if (p->derived) {
		fprintf(f, "# the base's efficiency curves with this device's datasheet figures; times scale by the ratios\n"
			   "# (target / base datasheet figures)\n");
		fprintf(f, "source:\n  kind: derived\n  base: %s\n", p->derived_from);
		fprintf(f, "  ratios: {");
		for (int t = 0; t < HS_DTYPE_COUNT; t++)
			fprintf(f, "%s: %.6g, ", ratio_keys[t], p->ratio_flops[t]);
		fprintf(f, "memory_bandwidth: %.6g}\n", p->ratio_hbm_bw);
		return;
	}
	fprintf(f, "source:\n  kind: measured\n");
	if (s->device[0]) {
		fprintf(f, "  device: ");
		put_quoted(f, s->device, sizeof s->device);
		fprintf(f, "\n");
	}
	if (s->date[0])
		fprintf(f, "  date: \"%s\"\n", s->date);
	if (s->command[0]) {
		fprintf(f, "  command: ");
		put_quoted(f, s->command, sizeof s->command);
		fprintf(f, "\n");
	}
	if (s->files[0]) {
		fprintf(f, "  files:\n");
		for (const char *c = s->files; *c;) {
			size_t n = strcspn(c, "\n");
			fprintf(f, "    - ");
			put_quoted(f, c, n);
			fprintf(f, "\n");
			c += n + (c[n] != 0);
		}
	}
	if (s->nparts) {
		fprintf(f, "  # which rows each part of the profile was fitted from\n  parts:\n");
		for (int i = 0; i < s->nparts; i++) {
			fprintf(f, "    %s: ", s->part_key[i]);
			put_quoted(f, s->part_val[i], sizeof s->part_val[i]);
			fprintf(f, "\n");
		}
	}
}

static int write_profile(FILE *f, const hs_profile *p)
{
	fprintf(f, "# hetsim device profile (docs/calibration.md). Times in seconds, rates in SI units.\n");
	fprintf(f, "name: %s\ndevice: %s\n", p->name, p->device);
	write_source(f, p);
	fprintf(f, "# datasheet figures of the device (dense FLOP/s, bytes/s)\n");
	put_peaks(f, "device_peak", p->dev_peak);
	fprintf(f, "device_memory_bandwidth: %.6g\n", p->dev_hbm_bw);
	fprintf(f, "# in-stream GPU times: the floor of the smallest memory-bound kernels, and what one more kernel\n"
		   "# queued behind others costs (docs/calibration.md); no host dispatch is in this profile\n");
	fprintf(f, "launch: %.6g\n", p->launch);
	if (p->kernel_gap_set)
		fprintf(f, "kernel_gap: %.6g\n", p->kernel_gap);
	fprintf(f, "gemm:\n  dtype: %s\n  launch: %.6g\n", hs_dtype_name(p->gemm_dtype), p->gemm_launch);
	fprintf(f, "  dtype_scale: {");
	for (int t = 0; t < HS_DTYPE_COUNT; t++)
		fprintf(f, "%s%s: %.4g", t ? ", " : "", peak_keys[t], p->dtype_scale[t]);
	fprintf(f, "}\n");
	put_axis(f, "m", p->gm, p->nm);
	put_axis(f, "n", p->gn, p->nn);
	put_axis(f, "k", p->gk, p->nk);
	fprintf(f, "  # achieved / peak of the GEMM's dtype, after the launch; one row per (m, n), one value per k\n");
	fprintf(f, "  efficiency:\n");
	for (int i = 0; i < p->nm; i++)
		for (int j = 0; j < p->nn; j++) {
			fprintf(f, "    - [");
			for (int l = 0; l < p->nk; l++)
				fprintf(f, "%s%.4g", l ? ", " : "", p->eff[((size_t)i * p->nn + j) * p->nk + l]);
			fprintf(f, "]  # m=%g n=%g\n", p->gm[i], p->gn[j]);
		}
	fprintf(f, "memory:\n  launch: %.6g\n  bandwidth_fraction: %.4g\n  sharpness: %.4g\n", p->mem_launch,
		p->mem_bw_frac, p->mem_p);
	if (p->nops) {
		fprintf(f, "  ops: {");
		for (int i = 0; i < p->nops; i++)
			fprintf(f, "%s%s: %.4g", i ? ", " : "", p->op_name[i], p->op_factor[i]);
		fprintf(f, "}\n");
	}
	fprintf(f, "attention:\n  flops: \"causal forward 2*b*h*s^2*d (4bhs^2d/2), non-causal 4bhs^2d; backward 2.5x "
		   "forward\"\n");
	fprintf(f, "  implementation: flash\n  launch: %.6g\n", p->attn_launch);
	static const char *const pass[2] = {"forward", "backward"};
	for (int i = 0; i < 2; i++)
		fprintf(f, "  %s: {efficiency: %.4g, seq_half: %.4g, dim_half: %.4g, from: %s}\n", pass[i],
			p->attn[i].emax, p->attn[i].s_half, p->attn[i].d_half, p->attn[i].rule ? "rule" : "measured");
	return ferror(f) ? -1 : 0;
}

int hs_profile_save(const hs_profile *p, const char *path, hs_err *err)
{
	/* through hs_outfile: a failed write (a full disk) says why, and no half-written profile is left, also when
	 * the process exits in the middle (out of memory) */
	hs_outfile o;
	if (hs_outfile_open(&o, path, err))
		return -1;
	write_profile(o.f, p); /* its errors are stdio's sticky flag, which commit checks */
	return hs_outfile_commit(&o, err);
}
