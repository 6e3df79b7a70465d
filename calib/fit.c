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
	if (st != GSL_SUCCESS || !isfinite(*a) || !isfinite(*b))
		return hs_err_set(err, HS_EINPUT, "line fit failed: %s", gsl_strerror(st));
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
		    const double *skip, hs_err *err)
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
	/* other dtypes: median ratio of their efficiency to the grid's at the same shape */
	for (int t = 0; t < HS_DTYPE_COUNT; t++) {
		p->dtype_scale[t] = 1;
		if (t == dt || !(dev->peak_flops[t] > 0))
			continue;
		double *r = hs_xmalloc((ng + 1) * sizeof *r);
		size_t nr = 0;
		for (size_t q = 0; q < ng; q++) {
			if (g[q].dt != t)
				continue;
			double w = 2 * g[q].m * g[q].n * g[q].k / dev->peak_flops[t];
			double busy = g[q].t - p->gemm_launch;
			r[nr++] = (w / (busy > w ? busy : w)) / hs_profile_gemm_eff(p, g[q].m, g[q].n, g[q].k);
		}
		if (nr)
			p->dtype_scale[t] = hs_fit_median(r, nr);
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
};

/* The points of every record set, by what they measure; dtcount counts the GEMM points of each dtype. */
struct points {
	struct gpoint *g;
	struct mpoint *mp;
	struct apoint *ap;
	struct epoint *ep;
	size_t ng, gcap, nm, mcap, na, acap, ne, ecap;
	int dtcount[HS_DTYPE_COUNT];
};

static void points_free(struct points *pt)
{
	free(pt->g);
	free(pt->mp);
	free(pt->ap);
	free(pt->ep);
}

/* One reader per record kind: add the record's points, or fail naming the file and line. `t` is the
 * record's t_med (else t, else 0). */
static int read_gemm(struct points *pt, const hs_jsonl *js, const hs_jrec *r, double t, hs_err *err)
{
	const char *dts = hs_jrec_str(r, "dtype");
	int dt = dts ? hs_dtype_parse(dts) : -1;
	if (dt < 0)
		return hs_err_set(err, HS_EINPUT, "%s:%d: gemm record has no known dtype", js->name, r->line);
	struct gpoint q = {0, 0, 0, 0, dt, r->line};
	if (need_num(js, r, "m", &q.m, err) || need_num(js, r, "n", &q.n, err) || need_num(js, r, "k", &q.k, err))
		return -1;
	if (!(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: gemm record needs a positive t_med", js->name, r->line);
	q.t = t;
	hs_xgrow(&pt->g, &pt->gcap, pt->ng + 1, sizeof *pt->g);
	pt->g[pt->ng++] = q;
	pt->dtcount[dt]++;
	return 0;
}

static int read_hbm_copy(struct points *pt, const hs_jsonl *js, const hs_jrec *r, double t, hs_err *err)
{
	double b;
	if (need_num(js, r, "bytes", &b, err))
		return -1;
	if (!(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: hbm_copy record needs a positive t_med", js->name, r->line);
	hs_xgrow(&pt->mp, &pt->mcap, pt->nm + 1, sizeof *pt->mp);
	pt->mp[pt->nm++] = (struct mpoint){2 * b, t}; /* a copy reads and writes every byte */
	return 0;
}

static int read_elementwise(struct points *pt, const hs_jsonl *js, const hs_jrec *r, double t, hs_err *err)
{
	const char *op = hs_jrec_str(r, "op");
	double tok, hid, gbps;
	if (!op || strlen(op) >= 32 || need_num(js, r, "tokens", &tok, err) || need_num(js, r, "hidden", &hid, err) ||
	    need_num(js, r, "GBps", &gbps, err) || !(t > 0))
		return hs_err_set(err, HS_EINPUT, "%s:%d: elementwise record needs op, tokens, hidden, GBps and t_med",
				  js->name, r->line);
	hs_xgrow(&pt->ep, &pt->ecap, pt->ne + 1, sizeof *pt->ep);
	struct epoint *e = &pt->ep[pt->ne++];
	snprintf(e->op, sizeof e->op, "%s", op);
	e->bytes = gbps * 1e9 * t; /* the minimal bytes the op moves */
	e->t = t;
	return 0;
}

/* An sdpa record gives a forward row and, when the backward took time, a backward row (b < 0 marks it). */
static int read_sdpa(struct points *pt, const hs_jsonl *js, const hs_jrec *r, double t, hs_err *err)
{
	struct apoint q = {0};
	double tf, tfb;
	if (need_num(js, r, "b", &q.b, err) || need_num(js, r, "heads", &q.h, err) ||
	    need_num(js, r, "seq", &q.s, err) || need_num(js, r, "dim", &q.d, err) ||
	    need_num(js, r, "t_fwd", &tf, err) || need_num(js, r, "t_fwdbwd", &tfb, err))
		return -1;
	q.causal = num_or(r, "causal", 1) != 0;
	hs_xgrow(&pt->ap, &pt->acap, pt->na + 2, sizeof *pt->ap);
	q.t = tf;
	pt->ap[pt->na++] = q;
	q.t = tfb - tf; /* backward alone */
	q.b = -q.b;     /* marks a backward row below */
	if (q.t > 0)
		pt->ap[pt->na++] = q;
	return 0;
}

/* The record kinds the fit reads (calib/fit.h); records of other kinds are skipped. */
static const struct record_kind {
	const char *kind;
	int (*read)(struct points *pt, const hs_jsonl *js, const hs_jrec *r, double t, hs_err *err);
} record_kinds[] = {
	{"gemm", read_gemm},
	{"hbm_copy", read_hbm_copy},
	{"elementwise", read_elementwise},
	{"sdpa", read_sdpa},
};

/* Every record of every set into *pt, in order; the first bad record stops it. */
static int read_points(const hs_jsonl *const *sets, int nsets, struct points *pt, hs_err *err)
{
	for (int s = 0; s < nsets; s++) {
		const hs_jsonl *js = sets[s];
		for (size_t i = 0; i < js->n; i++) {
			const hs_jrec *r = &js->recs[i];
			const char *kind = hs_jrec_str(r, "kind");
			if (!kind)
				continue;
			double t = num_or(r, "t_med", num_or(r, "t", 0));
			for (size_t k = 0; k < sizeof record_kinds / sizeof record_kinds[0]; k++)
				if (strcmp(kind, record_kinds[k].kind) == 0) {
					if (record_kinds[k].read(pt, js, r, t, err))
						return -1;
					break;
				}
		}
	}
	return 0;
}

/* The memory curve from the hbm_copy points: launch floor, bandwidth fraction and knee; the profile's launch
 * floor is the copy's. Needs three points for three parameters. */
static int fit_memory(hs_profile *p, const struct points *pt, const hs_device_type *dev, hs_fit_report *rep,
		      hs_err *err)
{
	const struct mpoint *mp = pt->mp;
	size_t nm = pt->nm;
	if (nm < 3)
		return hs_err_set(err, HS_EINPUT, "need at least 3 hbm_copy records to fit the memory curve (have %zu)",
				  nm);
	double tmin = INFINITY, bwmax = 0;
	for (size_t i = 0; i < nm; i++) {
		tmin = fmin(tmin, mp[i].t);
		bwmax = fmax(bwmax, mp[i].bytes / mp[i].t);
	}
	double x[3] = {log(tmin), log(bwmax), log(2)};
	struct mem_ctx c = {mp, (int)nm};
	if (hs_fit_nlinear(3, x, (int)nm, mem_resid, &c, err)) {
		hs_err_prefix(err, "memory curve: ");
		return -1;
	}
	p->mem_launch = exp(x[0]);
	p->mem_bw_frac = exp(x[1]) / dev->hbm_bw;
	p->mem_p = exp(x[2]);
	p->launch = p->mem_launch;
	for (size_t i = 0; i < nm; i++) {
		char lab[96];
		snprintf(lab, sizeof lab, "copy %.0f B moved", mp[i].bytes);
		report_add(rep, "memory", lab, mp[i].t, hs_profile_mem_time(p, dev, mp[i].bytes), 0);
	}
	return 0;
}

/* Elementwise ops: each op's bandwidth relative to the copy curve (the median over its rows that are not
 * launch-bound, at most 10; 1 when all are), then every row's residual. */
static void fit_elementwise(hs_profile *p, const struct points *pt, const hs_device_type *dev, hs_fit_report *rep)
{
	const struct epoint *ep = pt->ep;
	size_t ne = pt->ne;
	for (size_t i = 0; i < ne; i++) {
		int seen = 0;
		for (int o = 0; o < p->nops; o++)
			seen |= strcmp(p->op_name[o], ep[i].op) == 0;
		if (seen || p->nops >= HS_PROF_MAXOPS)
			continue;
		double f[64];
		size_t nf = 0;
		for (size_t j = i; j < ne && nf < 64; j++) {
			if (strcmp(ep[j].op, ep[i].op) != 0 || ep[j].t < 1.5 * p->mem_launch)
				continue;
			/* invert the memory form for the streaming time, then the bandwidth factor */
			double stream = p->mem_launch * pow(pow(ep[j].t / p->mem_launch, p->mem_p) - 1, 1 / p->mem_p);
			f[nf++] = ep[j].bytes / (stream * p->mem_bw_frac * dev->hbm_bw);
		}
		snprintf(p->op_name[p->nops], sizeof p->op_name[0], "%s", ep[i].op);
		p->op_factor[p->nops++] = nf ? fmin(hs_fit_median(f, nf), 10) : 1;
	}
	for (size_t i = 0; i < ne; i++) {
		char lab[96];
		snprintf(lab, sizeof lab, "%s %.0f B", ep[i].op, ep[i].bytes);
		report_add(rep, "elementwise", lab, ep[i].t, hs_profile_mem_op_time(p, dev, ep[i].op, ep[i].bytes), 0);
	}
}

/* Leave-one-out over the GEMM grid of dtype gdt: refit without each point, predict it (the report's
 * gemm-loo rows say how well the grid generalises, not how well it fits). */
static int gemm_leave_one_out(const hs_profile *p, const struct points *pt, int gdt, const hs_device_type *dev,
			      hs_fit_report *rep, hs_err *err)
{
	const struct gpoint *g = pt->g;
	hs_profile *lp = hs_profile_new();
	*lp = *p;
	lp->eff = NULL;
	for (size_t i = 0; i < pt->ng; i++) {
		if (g[i].dt != gdt)
			continue;
		double skip[3] = {g[i].m, g[i].n, g[i].k};
		if (fit_gemm(lp, g, pt->ng, gdt, dev, skip, err)) {
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

/* GEMM: the dtype with the most points is the grid (the others scale it), then every point's residual and,
 * when a report is wanted, the leave-one-out rows. */
static int fit_gemms(hs_profile *p, const struct points *pt, const hs_device_type *dev, hs_fit_report *rep,
		     hs_err *err)
{
	const struct gpoint *g = pt->g;
	size_t ng = pt->ng;
	if (!ng)
		return hs_err_set(err, HS_EINPUT, "no gemm records to fit");
	int gdt = 0;
	for (int t = 1; t < HS_DTYPE_COUNT; t++)
		if (pt->dtcount[t] > pt->dtcount[gdt])
			gdt = t;
	if (fit_gemm(p, g, ng, gdt, dev, NULL, err))
		return -1;
	for (size_t i = 0; i < ng; i++) {
		char lab[96];
		snprintf(lab, sizeof lab, "%s m=%.0f n=%.0f k=%.0f", hs_dtype_name(g[i].dt), g[i].m, g[i].n, g[i].k);
		report_add(rep, g[i].dt == gdt ? "gemm" : "gemm-other", lab, g[i].t,
			   hs_profile_gemm_time(p, dev, g[i].m, g[i].n, g[i].k, g[i].dt), 0);
	}
	return rep ? gemm_leave_one_out(p, pt, gdt, dev, rep, err) : 0;
}

/* Attention curves, forward then backward: forward rows have b > 0, backward rows b < 0 (read_sdpa). */
static int fit_attention(hs_profile *p, const struct points *pt, const hs_device_type *dev, hs_fit_report *rep,
			 hs_err *err)
{
	p->attn_launch = p->launch;
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
			p->attn[pass] = (hs_attn_fit){pass ? 0.45 : 0.6, 512, 32};
			free(sel);
			continue;
		}
		if (fit_attn(sel, n, pass, p->attn_launch, dev->peak_flops[HS_BF16], &p->attn[pass], err)) {
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
	return 0;
}

/* Read every point, then fit the parts in the order each needs the last: the memory curve gives the launch
 * floor that elementwise ops, GEMMs and attention start from. */
hs_profile *hs_fit_profile(const hs_jsonl *const *sets, int nsets, const hs_device_type *dev, const char *name,
			   const char *source, hs_fit_report *rep, hs_err *err)
{
	struct points pt = {0};
	hs_profile *p = hs_profile_new();
	if (read_points(sets, nsets, &pt, err))
		goto fail;
	snprintf(p->name, sizeof p->name, "%s", name);
	snprintf(p->device, sizeof p->device, "%s", dev->name);
	snprintf(p->source, sizeof p->source, "%s", source ? source : "");
	memcpy(p->dev_peak, dev->peak_flops, sizeof p->dev_peak);
	p->dev_hbm_bw = dev->hbm_bw;
	if (fit_memory(p, &pt, dev, rep, err))
		goto fail;
	fit_elementwise(p, &pt, dev, rep);
	if (fit_gemms(p, &pt, dev, rep, err) || fit_attention(p, &pt, dev, rep, err))
		goto fail;
	points_free(&pt);
	return p;
fail:
	points_free(&pt);
	hs_profile_free(p);
	return NULL;
}
