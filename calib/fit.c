/* Fitting device profiles from measurements (see fit.h and docs/calibration.md for the forms). */
#include "calib/fit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/profile_int.h"
#include "sim/base/alloc.h"

/* ---- shared tools ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double hs_fit_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct nl_wrap {
	int (*f)(const double *x, double *r, void *ctx);
	void *ctx;
	int np;
	double *buf;
};

static int nl_cb(const gsl_vector *x, void *params, gsl_vector *r)
{
	struct nl_wrap *w = params;
	double xs[16];
	for (int i = 0; i < w->np; i++)
		xs[i] = gsl_vector_get(x, (size_t)i);
	/* GSL's finite-difference Jacobian passes matrix columns (stride != 1): fill a buffer, then copy */
	if (w->f(xs, w->buf, w->ctx))
		return GSL_EDOM;
	for (size_t i = 0; i < r->size; i++) {
		if (!isfinite(w->buf[i]))
			return GSL_EDOM;
		gsl_vector_set(r, i, w->buf[i]);
	}
	return GSL_SUCCESS;
}

int hs_fit_nlinear(int np, double *x, int nobs, int (*f)(const double *x, double *r, void *ctx), void *ctx,
		   hs_err *err)
{
	if (np < 1 || np > 16 || nobs < np)
		return hs_err_set(err, HS_EINPUT, "not enough points to fit %d parameters (have %d)", np, nobs);
	/* GSL's default handler aborts the process; a library must return instead. (Process-wide; hetsim
	 * never wants GSL to abort.) */
	gsl_set_error_handler_off();
	struct nl_wrap w = {f, ctx, np, hs_xmalloc((size_t)nobs * sizeof(double))};
	gsl_multifit_nlinear_fdf fdf = {0};
	fdf.f = nl_cb;
	fdf.n = (size_t)nobs;
	fdf.p = (size_t)np;
	fdf.params = &w;
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *ws =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, (size_t)nobs, (size_t)np);
	gsl_vector_view x0 = gsl_vector_view_array(x, (size_t)np);
	int info = 0;
	int st = gsl_multifit_nlinear_init(&x0.vector, &fdf, ws);
	if (st == GSL_SUCCESS)
		st = gsl_multifit_nlinear_driver(500, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, ws);
	const gsl_vector *xr = gsl_multifit_nlinear_position(ws);
	int ok = st == GSL_SUCCESS || st == GSL_EMAXITER; /* an iteration cap still leaves the best point */
	for (int i = 0; ok && i < np; i++) {
		x[i] = gsl_vector_get(xr, (size_t)i);
		if (!isfinite(x[i]))
			ok = 0;
	}
	gsl_multifit_nlinear_free(ws);
	free(w.buf);
	if (!ok)
		return hs_err_set(err, HS_EINPUT, "least-squares fit failed: %s", gsl_strerror(st));
	return 0;
}

int hs_fit_line(const double *x, const double *y, const double *w, size_t n, double *a, double *b, hs_err *err)
{
	if (n < 2)
		return hs_err_set(err, HS_EINPUT, "need at least 2 points for a line fit (have %zu)", n);
	gsl_set_error_handler_off();
	double c00, c01, c11, chisq;
	int st = gsl_fit_wlinear(x, 1, w, 1, y, 1, n, a, b, &c00, &c01, &c11, &chisq);
	if (st != GSL_SUCCESS)
		return hs_err_set(err, HS_EINPUT, "line fit failed: %s", gsl_strerror(st));
	if (!isfinite(*a) || !isfinite(*b)) /* GSL succeeded on degenerate input (every x equal, or huge values) */
		return hs_err_set(err, HS_EINPUT, "line fit failed: the fitted line is not finite (the points' x values "
						  "are all equal, or their values overflow)");
	return 0;
}

static void report_add(hs_fit_report *rep, const char *kind, const char *label, double meas, double pred,
		       int outlier)
{
	if (!rep)
		return;
	hs_xgrow(&rep->r, &rep->cap, rep->n + 1, sizeof *rep->r);
	hs_fit_resid *r = &rep->r[rep->n++];
	snprintf(r->kind, sizeof r->kind, "%s", kind);
	snprintf(r->label, sizeof r->label, "%s", label);
	r->measured = meas;
	r->predicted = pred;
	r->outlier = outlier;
}

double hs_fit_mape(const hs_fit_report *rep, const char *kind, size_t *count)
{
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; i < rep->n; i++)
		if (strcmp(rep->r[i].kind, kind) == 0 && !rep->r[i].outlier) {
			s += fabs(rep->r[i].predicted - rep->r[i].measured) / rep->r[i].measured;
			n++;
		}
	if (count)
		*count = n;
	return n ? 100 * s / (double)n : -1;
}

void hs_fit_report_free(hs_fit_report *rep)
{
	free(rep->r);
	rep->r = NULL;
	rep->n = rep->cap = 0;
}

/* ---- GEMM ---- */

struct gpoint {
	double m, n, k, t;
	int dt;
	int line;
	int own; /* from our own kernels (back-to-back cuBLASLt), not isolated framework calls */
};

/* How well one scale per dtype represents that dtype's rows: the spread of the per-shape ratios. */
struct dscale {
	int n;          /* shapes that set the scale (not launch-bound) */
	int launch_bound; /* shapes left out: their time is mostly the floor */
	double lo, hi;  /* smallest and largest per-shape ratio */
};

static int axis_add(double *ax, int *n, double v)
{
	for (int i = 0; i < *n; i++)
		if (ax[i] == v)
			return 0;
	if (*n >= HS_PROF_MAXAX)
		return -1;
	ax[(*n)++] = v;
	qsort(ax, (size_t)*n, sizeof *ax, cmp_double);
	return 0;
}


/* Fill the NaN cells of the log-efficiency grid from their neighbours along each axis: linear in log2(size)
 * between the nearest filled cells on both sides, or the nearest one at an edge (as queries clamp). Cells with
 * two-sided estimates prefer them. Repeats until every cell is filled (cells with no filled cell in any of
 * their three lines wait for a later pass). */
static void grid_fill(hs_profile *p, double *le)
{
	const int dims[3] = {p->nm, p->nn, p->nk};
	const double *axes[3] = {p->gm, p->gn, p->gk};
	size_t cells = (size_t)p->nm * p->nn * p->nk;
	double *next = hs_xmalloc(cells * sizeof *next);
	for (int pass = 0; pass < 3 * HS_PROF_MAXAX; pass++) {
		int missing = 0;
		memcpy(next, le, cells * sizeof *next);
		for (int i = 0; i < p->nm; i++)
			for (int j = 0; j < p->nn; j++)
				for (int l = 0; l < p->nk; l++) {
					size_t c = ((size_t)i * p->nn + j) * p->nk + l;
					if (!isnan(le[c]))
						continue;
					missing = 1;
					int idx[3] = {i, j, l};
					double two = 0, one = 0;
					int ntwo = 0, none = 0;
					for (int a = 0; a < 3; a++) {
						int lo = -1, hi = -1;
						for (int q = idx[a] - 1; q >= 0 && lo < 0; q--) {
							int t[3] = {i, j, l};
							t[a] = q;
							if (!isnan(le[((size_t)t[0] * p->nn + t[1]) * p->nk + t[2]]))
								lo = q;
						}
						for (int q = idx[a] + 1; q < dims[a] && hi < 0; q++) {
							int t[3] = {i, j, l};
							t[a] = q;
							if (!isnan(le[((size_t)t[0] * p->nn + t[1]) * p->nk + t[2]]))
								hi = q;
						}
						int tl[3] = {i, j, l}, th[3] = {i, j, l};
						tl[a] = lo, th[a] = hi;
						if (lo >= 0 && hi >= 0) {
							double vl = le[((size_t)tl[0] * p->nn + tl[1]) * p->nk + tl[2]];
							double vh = le[((size_t)th[0] * p->nn + th[1]) * p->nk + th[2]];
							double x0 = log2(axes[a][lo]), x1 = log2(axes[a][hi]);
							double x = log2(axes[a][idx[a]]);
							two += vl + (vh - vl) * (x - x0) / (x1 - x0);
							ntwo++;
						} else if (lo >= 0 || hi >= 0) {
							int *t = lo >= 0 ? tl : th;
							one += le[((size_t)t[0] * p->nn + t[1]) * p->nk + t[2]];
							none++;
						}
					}
					if (ntwo)
						next[c] = two / ntwo;
					else if (none)
						next[c] = one / none;
				}
		memcpy(le, next, cells * sizeof *next);
		if (!missing)
			break;
	}
	free(next);
}

/* Launch floor: the fastest of the GEMMs whose work at peak is under 1% of their time (their time is all
 * launch and fixed cost). The floor differs by shape (cuBLAS picks different kernels: 256x256 tiles take
 * ~38 us where 2048x256 take ~32 us on the H200); the part above the fastest one is shape-specific and the
 * efficiency grid carries it. Without such points: the smallest (t - work at peak), at least 0. */
static double gemm_launch(const struct gpoint *g, size_t ng, int dt, double peak, const double *skip)
{
	double *v = hs_xmalloc((ng + 1) * sizeof *v);
	size_t n = 0;
	double lo = INFINITY;
	for (size_t i = 0; i < ng; i++) {
		if (g[i].dt != dt || (skip && g[i].m == skip[0] && g[i].n == skip[1] && g[i].k == skip[2]))
			continue;
		double w = 2 * g[i].m * g[i].n * g[i].k / peak;
		if (w < 0.01 * g[i].t)
			v[n++] = g[i].t;
		if (g[i].t - w < lo)
			lo = g[i].t - w;
	}
	double L = lo > 0 && isfinite(lo) ? lo : 0;
	if (n >= 1) {
		hs_fit_median(v, n); /* sorts */
		L = v[0];
	}
	free(v);
	return L;
}

/* Fit the GEMM part of p from points g, leaving out every point of the cell `skip` (m, n, k) when non-NULL. */
static int fit_gemm(hs_profile *p, const struct gpoint *g, size_t ng, int dt, const hs_device_type *dev,
		    const double *skip, struct dscale *ds, hs_err *err)
{
	double peak = dev->peak_flops[dt];
	if (!(peak > 0))
		return hs_err_set(err, HS_EINPUT, "device %s has no %s peak to measure GEMM efficiency against",
				  dev->name, hs_dtype_name(dt));
	p->gemm_dtype = dt;
	p->nm = p->nn = p->nk = 0;
	for (size_t i = 0; i < ng; i++)
		if (g[i].dt == dt && (axis_add(p->gm, &p->nm, g[i].m) || axis_add(p->gn, &p->nn, g[i].n) ||
				      axis_add(p->gk, &p->nk, g[i].k)))
			return hs_err_set(err, HS_EINPUT, "GEMM grid has more than %d sizes on an axis", HS_PROF_MAXAX);
	p->gemm_launch = gemm_launch(g, ng, dt, peak, skip);
	size_t cells = (size_t)p->nm * p->nn * p->nk;
	double *le = hs_xmalloc(cells * sizeof *le);
	double *tv = hs_xmalloc(ng * sizeof *tv);
	for (int i = 0; i < p->nm; i++)
		for (int j = 0; j < p->nn; j++)
			for (int l = 0; l < p->nk; l++) {
				size_t c = ((size_t)i * p->nn + j) * p->nk + l, nt = 0;
				double m = p->gm[i], n = p->gn[j], k = p->gk[l];
				le[c] = NAN;
				if (skip && m == skip[0] && n == skip[1] && k == skip[2])
					continue;
				for (size_t q = 0; q < ng; q++)
					if (g[q].dt == dt && g[q].m == m && g[q].n == n && g[q].k == k)
						tv[nt++] = g[q].t;
				if (!nt)
					continue;
				double t = hs_fit_median(tv, nt), w = 2 * m * n * k / peak;
				double busy = t - p->gemm_launch;
				le[c] = log(w / (busy > w ? busy : w)); /* efficiency <= 1 */
			}
	free(tv);
	int any = 0;
	for (size_t c = 0; c < cells; c++)
		any |= !isnan(le[c]);
	if (!any) {
		free(le);
		return hs_err_set(err, HS_EINPUT, "no GEMM points to fit");
	}
	grid_fill(p, le);
	free(p->eff);
	p->eff = le;
	for (size_t c = 0; c < cells; c++)
		p->eff[c] = exp(p->eff[c]);
	/* Other dtypes: the scale multiplies the compute part only (t = launch + work / (peak * eff * scale)), so
	 * per shape it is (achieved compute rate of the dtype / that of the grid's dtype) / (datasheet peak ratio),
	 * each rate after the floor; the median over shapes. A shape whose time is mostly the floor (t < 2 x
	 * launch) says nothing about the compute rate and is left out (its residual still shows). */
	for (int t = 0; t < HS_DTYPE_COUNT; t++) {
		p->dtype_scale[t] = 1;
		if (ds)
			ds[t] = (struct dscale){0, 0, INFINITY, -INFINITY};
		if (t == dt || !(dev->peak_flops[t] > 0))
			continue;
		double *r = hs_xmalloc((ng + 1) * sizeof *r);
		size_t nr = 0;
		for (size_t q = 0; q < ng; q++) {
			if (g[q].dt != t)
				continue;
			double w = 2 * g[q].m * g[q].n * g[q].k / dev->peak_flops[t];
			double busy = g[q].t - p->gemm_launch;
			if (busy < p->gemm_launch) {
				if (ds)
					ds[t].launch_bound++;
				continue;
			}
			r[nr] = (w / (busy > w ? busy : w)) / hs_profile_gemm_eff(p, g[q].m, g[q].n, g[q].k);
			if (ds) {
				ds[t].lo = fmin(ds[t].lo, r[nr]);
				ds[t].hi = fmax(ds[t].hi, r[nr]);
			}
			nr++;
		}
		if (nr)
			p->dtype_scale[t] = hs_fit_median(r, nr);
		if (ds)
			ds[t].n = (int)nr;
		free(r);
	}
	return 0;
}

/* ---- memory ---- */

struct mpoint {
	double bytes, t;
};

struct mem_ctx {
	const struct mpoint *pt;
	int n;
};

static double mem_model(double L, double bw, double pw, double bytes)
{
	double r = bytes / bw / L;
	return L * pow(1 + pow(r, pw), 1 / pw);
}

static int mem_resid(const double *x, double *r, void *ctx)
{
	const struct mem_ctx *c = ctx;
	for (int i = 0; i < c->n; i++)
		r[i] = log(mem_model(exp(x[0]), exp(x[1]), exp(x[2]), c->pt[i].bytes)) - log(c->pt[i].t);
	return 0;
}

/* ---- attention ---- */

struct apoint {
	double b, h, s, d, t;
	int causal, outlier;
};

struct attn_ctx {
	const struct apoint *pt;
	int n, bwd, use_s, use_d;
	double launch, peak;
};

static void attn_params(const struct attn_ctx *c, const double *x, hs_attn_fit *f)
{
	int i = 0;
	f->emax = exp(x[i++]);
	f->s_half = c->use_s ? exp(x[i++]) : 0;
	f->d_half = c->use_d ? exp(x[i++]) : 0;
	f->rule = 0;
}

static double attn_model(const struct attn_ctx *c, const hs_attn_fit *f, const struct apoint *p)
{
	double eff = f->emax * p->s / (p->s + f->s_half) * p->d / (p->d + f->d_half);
	return c->launch + hs_profile_attn_flops(p->b, p->h, p->s, p->d, p->causal, c->bwd) / (c->peak * eff);
}

static int attn_resid(const double *x, double *r, void *ctx)
{
	const struct attn_ctx *c = ctx;
	hs_attn_fit f;
	attn_params(c, x, &f);
	int k = 0;
	for (int i = 0; i < c->n; i++)
		if (!c->pt[i].outlier)
			r[k++] = log(attn_model(c, &f, &c->pt[i])) - log(c->pt[i].t);
	return 0;
}

static int count_unique(const struct apoint *p, int n, int which)
{
	double seen[64];
	int ns = 0;
	for (int i = 0; i < n && ns < 64; i++) {
		double v = which ? p[i].d : p[i].s;
		int found = 0;
		for (int j = 0; j < ns; j++)
			found |= seen[j] == v;
		if (!found)
			seen[ns++] = v;
	}
	return ns;
}

/* Fit one pass; points whose log residual is beyond max(0.25, 4 robust sigmas) after the first fit are
 * marked outliers and the fit is repeated without them (one round). */
static int fit_attn(struct apoint *pt, int n, int bwd, double launch, double peak, hs_attn_fit *out,
		    hs_err *err)
{
	struct attn_ctx c = {pt, n, bwd, count_unique(pt, n, 0) > 1, count_unique(pt, n, 1) > 1, launch, peak};
	int np = 1 + c.use_s + c.use_d;
	/* a point slower than a problem of the same head_dim with at least twice its FLOPs is a measurement
	 * artefact (a first-call warm-up, a clock change): time cannot fall as work doubles */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double fi = hs_profile_attn_flops(pt[i].b, pt[i].h, pt[i].s, pt[i].d, pt[i].causal, 0);
			double fj = hs_profile_attn_flops(pt[j].b, pt[j].h, pt[j].s, pt[j].d, pt[j].causal, 0);
			if (j != i && pt[j].d == pt[i].d && fj >= 2 * fi && pt[j].t < pt[i].t)
				pt[i].outlier = 1;
		}
	for (int round = 0; round < 2; round++) {
		int nin = 0;
		for (int i = 0; i < n; i++)
			nin += !pt[i].outlier;
		double x[3] = {log(0.6), log(512), log(32)}, xs[3];
		int q = 0;
		xs[q++] = x[0];
		if (c.use_s)
			xs[q++] = x[1];
		if (c.use_d)
			xs[q++] = x[2];
		if (nin < np) {
			c.use_s = c.use_d = 0;
			np = 1;
		}
		if (hs_fit_nlinear(np, xs, nin, attn_resid, &c, err))
			return -1;
		attn_params(&c, xs, out);
		if (round == 1)
			break;
		double *res = hs_xmalloc((size_t)n * sizeof *res), *ab = hs_xmalloc((size_t)n * sizeof *ab);
		for (int i = 0; i < n; i++) {
			res[i] = log(attn_model(&c, out, &pt[i])) - log(pt[i].t);
			ab[i] = fabs(res[i]);
		}
		double mad = hs_fit_median(ab, (size_t)n);
		double lim = fmax(0.25, 4 * 1.4826 * mad);
		int any = 0;
		for (int i = 0; i < n; i++)
			if (fabs(res[i]) > lim && nin - any > np + 1) {
				pt[i].outlier = 1;
				any++;
			}
		free(res);
		free(ab);
		if (!any)
			break;
	}
	return 0;
}

/* ---- the whole profile ---- */

static double num_or(const hs_jrec *r, const char *k, double def)
{
	double v;
	return hs_jrec_num(r, k, &v) ? def : v;
}

static int need_num(const hs_jsonl *js, const hs_jrec *r, const char *k, double *out, hs_err *err)
{
	if (hs_jrec_num(r, k, out) || !(*out > 0) || !isfinite(*out))
		return hs_err_set(err, HS_EINPUT, "%s:%d: %s record needs a positive number '%s'", js->name, r->line,
				  hs_jrec_str(r, "kind"), k);
	return 0;
}

/* Elementwise rows: op name, the minimal bytes the op moves, time. */
struct epoint {
	char op[32];
	double bytes, t;
	int own, set;
};

/* refexec rows: a task's time, and the time of every op of it that was timed (task -1: not a task row) */
struct rpoint {
	int task, is_op;
	double t;
};

/* The points of every record set, by what they measure. `own` marks rows of our own kernels (kernels/: their
 * info record names the `tool`), the rest are framework calls (the PyTorch microbenchmarks). Per origin, the
 * files each kind of row came from (bit s: set s), for the summary. */
struct points {
	struct gpoint *g;
	struct mpoint *mp;
	struct apoint *ap;
	struct epoint *ep;
	struct rpoint *rp;
	int *mown; /* per mp: own */
	size_t ng, gcap, nm, mcap, mocap, na, acap, ne, ecap, nr, rcap;
	int materialised; /* sdpa rows of materialised attention, left out of the flash curves */
	int aframework;   /* some flash rows are framework calls (isolated: their floor is the framework's) */
	unsigned gfiles[2], mfiles[2], afiles, rfiles, efiles[2];
	unsigned used; /* files some part of the profile was fitted from: the ones `source` names */
};

static void points_free(struct points *pt)
{
	free(pt->g);
	free(pt->mp);
	free(pt->mown);
	free(pt->ap);
	free(pt->ep);
	free(pt->rp);
}

/* What a reader knows about a record besides the record: its file, the file's index and the info record
 * that describes it (the last one before it in the file, else the file's first). */
struct rctx {
	const hs_jsonl *js;
	int set;
	const hs_jrec *info;
};

/* Our own kernels write "tool" (gemm_bench, mem_bench, refexec, ...) in their info record, and the GEMM bench
 * "library": "cuBLASLt"; the PyTorch microbenchmarks write neither. */
static int is_own(const hs_jrec *info)
{
	const char *lib = info ? hs_jrec_str(info, "library") : NULL;
	return info && (hs_jrec_str(info, "tool") || (lib && strcmp(lib, "cuBLASLt") == 0));
}

static int read_gemm(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err)
{
	const char *dts = hs_jrec_str(r, "dtype");
	int dt = dts ? hs_dtype_parse(dts) : -1;
	if (dt < 0)
		return hs_err_set(err, HS_EINPUT, "%s:%d: gemm record has no known dtype", c->js->name, r->line);
	struct gpoint q = {0, 0, 0, 0, dt, r->line, is_own(c->info)};
	if (need_num(c->js, r, "m", &q.m, err) || need_num(c->js, r, "n", &q.n, err) ||
	    need_num(c->js, r, "k", &q.k, err))
		return -1;
	if (!(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: gemm record needs a positive t_med", c->js->name, r->line);
	q.t = t;
	hs_xgrow(&pt->g, &pt->gcap, pt->ng + 1, sizeof *pt->g);
	pt->g[pt->ng++] = q;
	pt->gfiles[q.own] |= 1u << c->set;
	return 0;
}

static int read_hbm_copy(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err)
{
	double b;
	if (need_num(c->js, r, "bytes", &b, err))
		return -1;
	if (!(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: hbm_copy record needs a positive t_med", c->js->name, r->line);
	hs_xgrow(&pt->mp, &pt->mcap, pt->nm + 1, sizeof *pt->mp);
	hs_xgrow(&pt->mown, &pt->mocap, pt->nm + 1, sizeof *pt->mown);
	pt->mown[pt->nm] = is_own(c->info);
	pt->mp[pt->nm++] = (struct mpoint){2 * b, t}; /* a copy reads and writes every byte */
	pt->mfiles[is_own(c->info)] |= 1u << c->set;
	return 0;
}

static int read_elementwise(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err)
{
	const char *op = hs_jrec_str(r, "op");
	double tok, hid, gbps;
	if (!op || strlen(op) >= 32 || need_num(c->js, r, "tokens", &tok, err) ||
	    need_num(c->js, r, "hidden", &hid, err) || need_num(c->js, r, "GBps", &gbps, err) || !(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: elementwise record needs op, tokens, hidden, GBps and t_med",
				  c->js->name, r->line);
	hs_xgrow(&pt->ep, &pt->ecap, pt->ne + 1, sizeof *pt->ep);
	struct epoint *e = &pt->ep[pt->ne++];
	snprintf(e->op, sizeof e->op, "%s", op);
	e->bytes = gbps * 1e9 * t; /* the minimal bytes the op moves */
	e->t = t;
	e->own = is_own(c->info);
	e->set = c->set;
	pt->efiles[e->own] |= 1u << c->set;
	return 0;
}

/* The attention implementations a record may name in "method", by family. Flash-family kernels (tiled,
 * fused, no s x s scores in memory: FlashAttention 1-3, cuDNN's fused attention, xFormers' memory-efficient
 * kernel) are the points of the flash curves; materialised attention (kernels/attn_bench: batched GEMMs and
 * a softmax) does the full s x s work in other kernels, which op timing prices from the GEMM and memory
 * curves (models/ops.c), so its rows are counted and left out. */
static const struct attn_method {
	const char *name;
	int flash;
} attn_methods[] = {
	{"flash", 1},	     {"flash_attention", 1}, {"flash_attention_2", 1}, {"flash_attention_3", 1},
	{"cudnn", 1},	     {"efficient", 1},	     {"mem_efficient", 1},	 {"batched_gemm_softmax", 0},
	{"materialized", 0}, {"materialised", 0},    {"math", 0},
};

/* An sdpa record gives a forward row and, when the backward took time, a backward row (b < 0 marks it).
 * Its implementation is its "method" (or its file's info record's). A record that names none and comes from
 * a framework harness (PyTorch's scaled_dot_product_attention, ../shared/data/README.md) is taken as the flash
 * family: on sm80 and later with bf16 inputs PyTorch dispatches it to the flash, cuDNN or memory-efficient
 * fused kernels, never the math path (PyTorch docs, torch.nn.functional.scaled_dot_product_attention). Our own
 * kernels always name their method, so one of ours without it is an error. */
static int read_sdpa(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err)
{
	(void)t;
	const char *m = hs_jrec_str(r, "method");
	if (!m && c->info)
		m = hs_jrec_str(c->info, "method");
	if (!m && is_own(c->info))
		return hs_err_set(err, HS_EINPUT,
				  "%s:%d: sdpa record of our kernels names no \"method\" (the attention implementation)",
				  c->js->name, r->line);
	if (m) {
		size_t k = 0, n = sizeof attn_methods / sizeof attn_methods[0];
		while (k < n && strcmp(attn_methods[k].name, m) != 0)
			k++;
		if (k == n)
			return hs_err_set(err, HS_EINPUT,
					  "%s:%d: sdpa record: unknown attention method '%s' (expected flash, "
					  "flash_attention_2, flash_attention_3, cudnn, efficient, or batched_gemm_softmax, "
					  "math for materialised attention)",
					  c->js->name, r->line, m);
		if (!attn_methods[k].flash) {
			pt->materialised++;
			return 0;
		}
	}
	struct apoint q = {0};
	double tf, tfb;
	if (need_num(c->js, r, "b", &q.b, err) || need_num(c->js, r, "heads", &q.h, err) ||
	    need_num(c->js, r, "seq", &q.s, err) || need_num(c->js, r, "dim", &q.d, err) ||
	    need_num(c->js, r, "t_fwd", &tf, err) || need_num(c->js, r, "t_fwdbwd", &tfb, err))
		return -1;
	q.causal = num_or(r, "causal", 1) != 0;
	hs_xgrow(&pt->ap, &pt->acap, pt->na + 2, sizeof *pt->ap);
	q.t = tf;
	pt->ap[pt->na++] = q;
	q.t = tfb - tf; /* backward alone */
	q.b = -q.b;     /* marks a backward row below */
	if (q.t > 0)
		pt->ap[pt->na++] = q;
	pt->afiles |= 1u << c->set;
	pt->aframework |= !is_own(c->info);
	return 0;
}

/* refexec_task and refexec_op rows (kernels/refexec --op-times): the kernel gap. */
static int read_refexec(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err)
{
	double task;
	if (hs_jrec_num(r, "task", &task) || task < 0 || task != floor(task) || task > 1e9 || !(t >= 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: %s record needs a task id and t_med", c->js->name, r->line,
				  hs_jrec_str(r, "kind"));
	hs_xgrow(&pt->rp, &pt->rcap, pt->nr + 1, sizeof *pt->rp);
	pt->rp[pt->nr++] = (struct rpoint){(int)task, strcmp(hs_jrec_str(r, "kind"), "refexec_op") == 0, t};
	pt->rfiles |= 1u << c->set;
	return 0;
}

/* The record kinds the fit reads (calib/fit.h); records of other kinds are skipped. */
static const struct record_kind {
	const char *kind;
	int (*read)(struct points *pt, const struct rctx *c, const hs_jrec *r, double t, hs_err *err);
} record_kinds[] = {
	{"gemm", read_gemm},
	{"hbm_copy", read_hbm_copy},
	{"elementwise", read_elementwise},
	{"sdpa", read_sdpa},
	{"refexec_task", read_refexec},
	{"refexec_op", read_refexec},
};

/* Every record of every set into *pt, in order; the first bad record stops it. */
static int read_points(const hs_jsonl *const *sets, int nsets, struct points *pt, hs_err *err)
{
	if (nsets > 32)
		return hs_err_set(err, HS_EINPUT, "at most 32 measurement files (have %d)", nsets);
	for (int s = 0; s < nsets; s++) {
		const hs_jsonl *js = sets[s];
		struct rctx c = {js, s, NULL};
		for (size_t i = 0; i < js->n && !c.info; i++) {
			const char *k = hs_jrec_str(&js->recs[i], "kind");
			if (k && strcmp(k, "info") == 0)
				c.info = &js->recs[i];
		}
		for (size_t i = 0; i < js->n; i++) {
			const hs_jrec *r = &js->recs[i];
			const char *kind = hs_jrec_str(r, "kind");
			if (!kind)
				continue;
			if (strcmp(kind, "info") == 0) {
				c.info = r;
				continue;
			}
			double t = num_or(r, "t_med", num_or(r, "t", 0));
			/* seconds of one kernel or one task: an hour is far beyond any record a benchmark writes, so
			 * a larger value is a unit slip or a corrupt row, not a point to fit (issue 18, finding 5) */
			if (t > 3600 || t < 0)
				return hs_err_set(err, HS_EINPUT,
						  "%s:%d: %s record: t_med %g s is not a kernel time (expected seconds, 0 "
						  "to 3600)",
						  js->name, r->line, kind, t);
			for (size_t k = 0; k < sizeof record_kinds / sizeof record_kinds[0]; k++)
				if (strcmp(kind, record_kinds[k].kind) == 0) {
					if (record_kinds[k].read(pt, &c, r, t, err))
						return -1;
					break;
				}
		}
	}
	return 0;
}

/* ---- where the rows came from ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* "gemm.jsonl, mem.jsonl": the files of the bit set `files`. */
static void file_list(char *dst, size_t cap, const hs_jsonl *const *sets, int nsets, unsigned files)
{
	size_t len = 0;
	dst[0] = 0;
	for (int s = 0; s < nsets && len < cap; s++)
		if (files & (1u << s))
			len += (size_t)snprintf(dst + len, cap - len, "%s%s", len ? ", " : "", base_name(sets[s]->name));
}

static void add_unique(char *dst, size_t cap, const char *item)
{
	size_t n = strlen(item);
	for (const char *c = dst; (c = strstr(c, item)); c++)
		if ((c == dst || c[-2] == ',') && (c[n] == 0 || c[n] == ','))
			return;
	size_t len = strlen(dst);
	if (len + n + 3 < cap)
		snprintf(dst + len, cap - len, "%s%s", len ? ", " : "", item);
}

/* The profile's source from the files' info records: the device they name, the dates (an info record's
 * `date`, else a YYYY-MM-DD in the file name), the measuring programs (the first word of `command`, else
 * "PyTorch <version>" from `torch`) and the files. */
static int cmp_day(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void set_source(hs_profile *p, const hs_jsonl *const *sets, int nsets, unsigned used)
{
	char days[32][11];
	int nd = 0;
	hs_prof_source *q = &p->src;
	snprintf(q->kind, sizeof q->kind, "measured");
	size_t fl = 0;
	for (int s = 0; s < nsets; s++) {
		const hs_jsonl *js = sets[s];
		if (!(used & (1u << s)))
			continue;
		fl += (size_t)snprintf(q->files + fl, sizeof q->files - fl, "%s%s", fl ? "\n" : "", js->name);
		if (fl >= sizeof q->files)
			fl = sizeof q->files - 1;
		int dated = 0;
		for (size_t i = 0; i < js->n; i++) {
			const hs_jrec *r = &js->recs[i];
			const char *k = hs_jrec_str(r, "kind");
			if (!k || strcmp(k, "info") != 0)
				continue;
			const char *dv = hs_jrec_str(r, "device"), *nm = hs_jrec_str(r, "name");
			if (dv || nm)
				add_unique(q->device, sizeof q->device, dv ? dv : nm);
			const char *d = hs_jrec_str(r, "date"), *cmd = hs_jrec_str(r, "command"), *th = hs_jrec_str(r, "torch");
			if (d && strlen(d) >= 10 && nd < 32) {
				snprintf(days[nd++], sizeof days[0], "%.10s", d);
				dated = 1;
			}
			char prog[96];
			if (cmd) {
				snprintf(prog, sizeof prog, "%.*s", (int)strcspn(cmd, " "), cmd);
				add_unique(q->command, sizeof q->command, prog);
			} else if (th) {
				snprintf(prog, sizeof prog, "PyTorch %.80s", th);
				add_unique(q->command, sizeof q->command, prog);
			}
		}
		const char *b = base_name(js->name);
		for (const char *c = b; !dated && *c; c++)
			if (strlen(c) >= 10 && c[4] == '-' && c[7] == '-' && c[0] >= '0' && c[0] <= '9' &&
			    c[5] >= '0' && c[5] <= '9' && c[8] >= '0' && c[8] <= '9') {
				if (nd < 32)
					snprintf(days[nd++], sizeof days[0], "%.10s", c);
				dated = 1;
			}
	}
	qsort(days, (size_t)nd, sizeof days[0], cmp_day);
	for (int i = 0; i < nd; i++)
		add_unique(q->date, sizeof q->date, days[i]);
}

/* ---- the memory curve ---- */

/* A copy curve (launch floor, bandwidth fraction, knee) from hbm_copy points of one origin. */
struct memcurve {
	int ok;
	size_t n;
	double L, bwf, pw;
};

static int fit_copy_curve(const struct points *pt, int own, const hs_device_type *dev, struct memcurve *mc,
			  hs_err *err)
{
	struct mpoint *mp = hs_xmalloc((pt->nm + 1) * sizeof *mp);
	size_t nm = 0;
	double tmin = INFINITY, bwmax = 0;
	for (size_t i = 0; i < pt->nm; i++)
		if (pt->mown[i] == own) {
			mp[nm++] = pt->mp[i];
			tmin = fmin(tmin, pt->mp[i].t);
			bwmax = fmax(bwmax, pt->mp[i].bytes / pt->mp[i].t);
		}
	mc->ok = 0;
	mc->n = nm;
	if (nm < 3) {
		free(mp);
		return 0;
	}
	double x[3] = {log(tmin), log(bwmax), log(2)};
	struct mem_ctx c = {mp, (int)nm};
	int rc = hs_fit_nlinear(3, x, (int)nm, mem_resid, &c, err);
	free(mp);
	if (rc) {
		hs_err_prefix(err, "memory curve: ");
		return -1;
	}
	*mc = (struct memcurve){1, nm, exp(x[0]), exp(x[1]) / dev->hbm_bw, exp(x[2])};
	return 0;
}

/* The profile's copy curve: from our own kernels' hbm_copy rows when there are at least three (in-stream
 * times), else from the framework's (isolated calls: their floor includes the host's dispatch). */
static int fit_memory(hs_profile *p, const struct points *pt, const hs_device_type *dev, struct memcurve mc[2],
		      const hs_jsonl *const *sets, int nsets, hs_fit_report *rep, hs_err *err)
{
	if (fit_copy_curve(pt, 1, dev, &mc[1], err) || fit_copy_curve(pt, 0, dev, &mc[0], err))
		return -1;
	int o = mc[1].ok ? 1 : 0;
	if (!mc[o].ok)
		return hs_err_set(err, HS_EINPUT,
				  "need at least 3 hbm_copy records of one origin to fit the memory curve (have %zu of "
				  "our kernels, %zu of framework calls)",
				  mc[1].n, mc[0].n);
	((struct points *)pt)->used |= pt->mfiles[o];
	p->mem_launch = mc[o].L;
	p->mem_bw_frac = mc[o].bwf;
	p->mem_p = mc[o].pw;
	p->launch = p->mem_launch;
	char fl[256];
	file_list(fl, sizeof fl, sets, nsets, pt->mfiles[o]);
	hs_profile_add_part(p, "memory", "%s: %zu hbm_copy rows, %s", fl, mc[o].n,
			    o ? "our kernels (in-stream floor)" : "framework calls (isolated: floor includes dispatch)");
	for (size_t i = 0; i < pt->nm; i++) {
		if (pt->mown[i] != o)
			continue;
		char lab[96];
		snprintf(lab, sizeof lab, "copy %.0f B moved", pt->mp[i].bytes);
		report_add(rep, "memory", lab, pt->mp[i].t, hs_profile_mem_time(p, dev, pt->mp[i].bytes), 0);
	}
	return 0;
}

/* Memory-bound ops: each op's bandwidth at large sizes relative to a copy measured by the same harness (the
 * memory form inverted for the streaming time of every row over 1.5 x that harness's floor; the median ratio,
 * at most 10). Framework kernels are what training steps run, so an op with framework rows takes its factor
 * from them; an op only our kernels measured (rmsnorm) takes ours. Each row's residual is against its own
 * harness's curve times the factor. */
static void fit_elementwise(hs_profile *p, const struct points *pt, const struct memcurve mc[2],
			    const hs_device_type *dev, const hs_jsonl *const *sets, int nsets, hs_fit_report *rep)
{
	const struct epoint *ep = pt->ep;
	size_t ne = pt->ne;
	int origin[HS_PROF_MAXOPS];
	for (size_t i = 0; i < ne; i++) {
		int seen = 0;
		for (int o = 0; o < p->nops; o++)
			seen |= strcmp(p->op_name[o], ep[i].op) == 0;
		if (seen || p->nops >= HS_PROF_MAXOPS)
			continue;
		/* which origin: framework rows (with a framework copy curve) first */
		int fw = 0, own = 0;
		for (size_t j = 0; j < ne; j++)
			if (strcmp(ep[j].op, ep[i].op) == 0) {
				fw |= !ep[j].own && mc[0].ok;
				own |= ep[j].own && mc[1].ok;
			}
		if (!fw && !own)
			continue;
		int o = fw ? 0 : 1;
		const struct memcurve *c = &mc[o];
		double f[64];
		size_t nf = 0, nrows = 0;
		unsigned files = 0;
		for (size_t j = i; j < ne && nf < 64; j++) {
			if (strcmp(ep[j].op, ep[i].op) != 0 || ep[j].own != o)
				continue;
			nrows++;
			files |= 1u << ep[j].set;
			if (ep[j].t < 1.5 * c->L)
				continue;
			/* invert the memory form for the streaming time, then the bandwidth factor */
			double stream = c->L * pow(pow(ep[j].t / c->L, c->pw) - 1, 1 / c->pw);
			f[nf++] = ep[j].bytes / (stream * c->bwf * dev->hbm_bw);
		}
		((struct points *)pt)->used |= files;
		int k = p->nops++;
		origin[k] = o;
		snprintf(p->op_name[k], sizeof p->op_name[0], "%s", ep[i].op);
		p->op_factor[k] = nf ? fmin(hs_fit_median(f, nf), 10) : 1;
		char key[48], fl[160];
		snprintf(key, sizeof key, "memory.ops.%s", ep[i].op);
		file_list(fl, sizeof fl, sets, nsets, files);
		hs_profile_add_part(p, key, "%s: %zu of %zu rows above 1.5 x the floor, %s", fl, nf, nrows,
				    o ? "our kernels" : "framework kernels");
	}
	/* rows of the origin that set the op's factor are its fit ("elementwise"); the other origin's rows, with
	 * the same factor on their own harness's curve, show how far the two implementations differ */
	for (size_t i = 0; i < ne; i++) {
		int k = -1;
		for (int o = 0; o < p->nops; o++)
			if (strcmp(p->op_name[o], ep[i].op) == 0)
				k = o;
		const struct memcurve *c = &mc[ep[i].own];
		if (k < 0 || !c->ok)
			continue;
		char lab[96];
		snprintf(lab, sizeof lab, "%s %.0f B (%s)", ep[i].op, ep[i].bytes, ep[i].own ? "ours" : "framework");
		report_add(rep, origin[k] == ep[i].own ? "elementwise" : "elem-other", lab, ep[i].t,
			   mem_model(c->L, c->bwf * dev->hbm_bw * p->op_factor[k], c->pw, ep[i].bytes), 0);
	}
}

/* ---- GEMM ---- */

/* Leave-one-out over the GEMM grid of dtype gdt: refit without each point, predict it (the report's
 * gemm-loo rows say how well the grid generalises, not how well it fits). */
static int gemm_leave_one_out(const hs_profile *p, const struct gpoint *g, size_t ng, int gdt,
			      const hs_device_type *dev, hs_fit_report *rep, hs_err *err)
{
	hs_profile *lp = hs_profile_new();
	*lp = *p;
	lp->eff = NULL;
	for (size_t i = 0; i < ng; i++) {
		if (g[i].dt != gdt)
			continue;
		double skip[3] = {g[i].m, g[i].n, g[i].k};
		if (fit_gemm(lp, g, ng, gdt, dev, skip, NULL, err)) {
			hs_profile_free(lp);
			return -1;
		}
		char lab[96];
		snprintf(lab, sizeof lab, "%s m=%.0f n=%.0f k=%.0f", hs_dtype_name(gdt), g[i].m, g[i].n, g[i].k);
		report_add(rep, "gemm-loo", lab, g[i].t, hs_profile_gemm_time(lp, dev, g[i].m, g[i].n, g[i].k, gdt), 0);
	}
	hs_profile_free(lp);
	return 0;
}

/* GEMM: the rows of our own back-to-back kernels when there are any (in-stream times), else the framework's
 * isolated calls. Of those, the dtype with the most points is the grid (the others scale it); then every
 * point's residual and, when a report is wanted, the leave-one-out rows. */
static int fit_gemms(hs_profile *p, const struct points *pt, const hs_device_type *dev, const hs_jsonl *const *sets,
		     int nsets, hs_fit_report *rep, hs_err *err)
{
	if (!pt->ng)
		return hs_err_set(err, HS_EINPUT, "no gemm records to fit");
	int own = 0;
	for (size_t i = 0; i < pt->ng; i++)
		own |= pt->g[i].own;
	struct gpoint *g = hs_xmalloc(pt->ng * sizeof *g);
	size_t ng = 0;
	int dtcount[HS_DTYPE_COUNT] = {0};
	for (size_t i = 0; i < pt->ng; i++)
		if (pt->g[i].own == own) {
			g[ng++] = pt->g[i];
			dtcount[pt->g[i].dt]++;
		}
	int gdt = 0;
	for (int t = 1; t < HS_DTYPE_COUNT; t++)
		if (dtcount[t] > dtcount[gdt])
			gdt = t;
	struct dscale ds[HS_DTYPE_COUNT];
	int rc = fit_gemm(p, g, ng, gdt, dev, NULL, ds, err);
	if (!rc) {
		char fl[256];
		((struct points *)pt)->used |= pt->gfiles[own];
		file_list(fl, sizeof fl, sets, nsets, pt->gfiles[own]);
		hs_profile_add_part(p, "gemm", "%s: %d %s rows, %s; floor %.3g us", fl, dtcount[gdt], hs_dtype_name(gdt),
				    own ? "back-to-back cuBLASLt (in-stream)" : "isolated framework calls",
				    p->gemm_launch * 1e6);
		for (int t = 0; t < HS_DTYPE_COUNT; t++) {
			if (t == gdt || !dtcount[t])
				continue;
			char key[32];
			snprintf(key, sizeof key, "gemm.dtype_scale.%s", hs_dtype_name(t));
			if (ds[t].n)
				hs_profile_add_part(p, key,
						    "%d shapes against %s (%d launch-bound left out): median %.3g, "
						    "range %.3g to %.3g",
						    ds[t].n, hs_dtype_name(gdt), ds[t].launch_bound, p->dtype_scale[t], ds[t].lo,
						    ds[t].hi);
			else
				hs_profile_add_part(p, key, "%d shapes, all launch-bound: scale 1", ds[t].launch_bound);
		}
		for (size_t i = 0; i < ng; i++) {
			char lab[96];
			snprintf(lab, sizeof lab, "%s m=%.0f n=%.0f k=%.0f", hs_dtype_name(g[i].dt), g[i].m, g[i].n,
				 g[i].k);
			report_add(rep, g[i].dt == gdt ? "gemm" : "gemm-other", lab, g[i].t,
				   hs_profile_gemm_time(p, dev, g[i].m, g[i].n, g[i].k, g[i].dt), 0);
		}
		if (rep)
			rc = gemm_leave_one_out(p, g, ng, gdt, dev, rep, err);
	}
	free(g);
	return rc;
}

/* ---- attention ---- */

/* Attention curves, forward then backward (forward rows have b > 0, backward rows b < 0: read_sdpa), from
 * flash rows only. Those are framework calls timed in isolation, so the fit holds their floor at the
 * framework's copy floor when there is one (the same harness's dispatch), and the profile keeps the in-stream
 * floor: the efficiency curves carry over, the host's part does not. */
static int fit_attention(hs_profile *p, const struct points *pt, const hs_device_type *dev, double fit_launch,
			 const hs_jsonl *const *sets, int nsets, hs_fit_report *rep, hs_err *err)
{
	char fl[256];
	file_list(fl, sizeof fl, sets, nsets, pt->afiles);
	((struct points *)pt)->used |= pt->afiles;
	if (pt->na)
		hs_profile_add_part(p, "attention", "%s: %zu flash sdpa rows (forward and backward)%s", fl, pt->na,
				    pt->materialised ? "; materialised-attention rows left out" : "");
	else
		hs_profile_add_part(p, "attention",
				    "no flash rows%s: FlashAttention-2 rule (0.6 forward, 0.45 backward of the bf16 peak)",
				    pt->materialised ? " (materialised-attention rows left out)" : "");
	p->attn_launch = fit_launch;
	for (int pass = 0; pass < 2; pass++) {
		struct apoint *sel = hs_xmalloc((pt->na + 1) * sizeof *sel);
		int n = 0;
		for (size_t i = 0; i < pt->na; i++)
			if ((pt->ap[i].b < 0) == pass) {
				sel[n] = pt->ap[i];
				sel[n].b = fabs(sel[n].b);
				n++;
			}
		if (n == 0) {
			/* no attention data: flash attention forward runs near 60% of the dense peak on H100-class
			 * parts at long sequences (FlashAttention-2 paper, 2023); keep it visible as a guess */
			p->attn[pass] = (hs_attn_fit){pass ? 0.45 : 0.6, 512, 32, 1};
			free(sel);
			continue;
		}
		if (fit_attn(sel, n, pass, fit_launch, dev->peak_flops[HS_BF16], &p->attn[pass], err)) {
			free(sel);
			hs_err_prefix(err, "attention %s: ", pass ? "backward" : "forward");
			return -1;
		}
		for (int i = 0; i < n; i++) {
			char lab[96];
			snprintf(lab, sizeof lab, "b=%.0f h=%.0f s=%.0f d=%.0f%s", sel[i].b, sel[i].h, sel[i].s, sel[i].d,
				 sel[i].causal ? " causal" : "");
			report_add(rep, pass ? "attn-bwd" : "attn-fwd", lab, sel[i].t,
				   hs_profile_attn_time(p, dev, sel[i].b, sel[i].h, sel[i].s, sel[i].d, sel[i].causal, pass),
				   sel[i].outlier);
		}
		free(sel);
	}
	p->attn_launch = p->launch;
	return 0;
}

/* ---- the kernel gap ---- */

static int cmp_rpoint(const void *a, const void *b)
{
	const struct rpoint *x = a, *y = b;
	return x->task != y->task ? (x->task < y->task ? -1 : 1) : x->is_op - y->is_op;
}

/* From refexec's rows: per task that has op rows, (task time - sum of its ops' times) / ops, clamped at 0
 * (timing every op separately adds event records between kernels, so the sum may exceed the task), the
 * median over tasks. Each task is also a report row: measured task time against the sum of ops + the gap. */
static void fit_kernel_gap(hs_profile *p, const struct points *pt, const hs_jsonl *const *sets, int nsets,
			   hs_fit_report *rep)
{
	if (!pt->nr)
		return;
	struct rpoint *r = hs_xmalloc(pt->nr * sizeof *r);
	memcpy(r, pt->rp, pt->nr * sizeof *r);
	qsort(r, pt->nr, sizeof *r, cmp_rpoint);
	double *gap = hs_xmalloc(pt->nr * sizeof *gap), *tt = hs_xmalloc(pt->nr * 3 * sizeof *tt);
	size_t ng = 0, nops = 0;
	for (size_t i = 0; i < pt->nr;) {
		size_t j = i;
		double task = -1, sum = 0;
		int ops = 0;
		for (; j < pt->nr && r[j].task == r[i].task; j++) {
			if (r[j].is_op) {
				sum += r[j].t;
				ops++;
			} else
				task = r[j].t;
		}
		if (task >= 0 && ops) {
			gap[ng] = fmax(0, (task - sum) / ops);
			tt[3 * ng] = task, tt[3 * ng + 1] = sum, tt[3 * ng + 2] = ops;
			ng++;
			nops += (size_t)ops;
		}
		i = j;
	}
	if (ng) {
		double *g2 = hs_xmalloc(ng * sizeof *g2);
		memcpy(g2, gap, ng * sizeof *g2);
		p->kernel_gap = hs_fit_median(g2, ng);
		p->kernel_gap_set = 1;
		free(g2);
		((struct points *)pt)->used |= pt->rfiles;
		char fl[256];
		file_list(fl, sizeof fl, sets, nsets, pt->rfiles);
		hs_profile_add_part(p, "kernel_gap", "%s: %zu tasks, %zu ops: median of max(0, (task - sum of ops) / ops)",
				    fl, ng, nops);
		for (size_t i = 0; i < ng; i++) {
			char lab[96];
			snprintf(lab, sizeof lab, "task %.0f ops: %.0f x %.3g us gap", (double)i, tt[3 * i + 2],
				 (tt[3 * i] - tt[3 * i + 1]) / tt[3 * i + 2] * 1e6);
			report_add(rep, "refexec-task", lab, tt[3 * i], tt[3 * i + 1] + tt[3 * i + 2] * p->kernel_gap, 0);
		}
	}
	free(r);
	free(gap);
	free(tt);
}

/* Read every point, then fit the parts in the order each needs the last: the memory curve gives the launch
 * floor that elementwise ops, GEMMs and attention start from. */
hs_profile *hs_fit_profile(const hs_jsonl *const *sets, int nsets, const hs_device_type *dev, const char *name,
			   hs_fit_report *rep, hs_err *err)
{
	struct points pt = {0};
	struct memcurve mc[2];
	hs_profile *p = hs_profile_new();
	if (read_points(sets, nsets, &pt, err))
		goto fail;
	snprintf(p->name, sizeof p->name, "%s", name);
	snprintf(p->device, sizeof p->device, "%s", dev->name);
	memcpy(p->dev_peak, dev->peak_flops, sizeof p->dev_peak);
	p->dev_hbm_bw = dev->hbm_bw;
	if (fit_memory(p, &pt, dev, mc, sets, nsets, rep, err))
		goto fail;
	fit_elementwise(p, &pt, mc, dev, sets, nsets, rep);
	if (fit_gemms(p, &pt, dev, sets, nsets, rep, err) ||
	    fit_attention(p, &pt, dev, pt.aframework && mc[0].ok ? mc[0].L : p->launch, sets, nsets, rep, err))
		goto fail;
	fit_kernel_gap(p, &pt, sets, nsets, rep);
	set_source(p, sets, nsets, pt.used);
	hs_profile_set_provenance(p);
	points_free(&pt);
	return p;
fail:
	points_free(&pt);
	hs_profile_free(p);
	return NULL;
}
