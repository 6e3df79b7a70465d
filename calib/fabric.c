/* Fabric profiles: fit, load, save, attach (calib/fabric.h). */
#include "calib/fabric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_multifit.h>

#include "config/cfg.h"
#include "config/yaml.h"
#include "sim/base/alloc.h"
#include "sim/base/outfile.h"

#define MAXENT 64

struct hs_fabprof {
	char name[64];
	hs_fab_shape shape;
	char source[1024];
	char note[2048];
	size_t n;
	hs_fab_entry e[MAXENT];
};

static const char *const scope_names[] = {"intra", "inter", NULL};
static const char *const proto_names[] = {"LL", "LL128", "Simple", "any", NULL};

/* What a regime's rows can tell (a parameter they leave undetermined stays neutral, 1): the latency scale
 * needs two rows whose model latency is at least LAT_SHARE of the model's time (large messages cannot see
 * the latency; 10%: a latency scale of 2 then moves such a row by 10% or more, well above nccl-tests' noise). */
#define LAT_SHARE 0.1

double hs_fab_entry_time(const hs_fab_entry *e, double bytes, double lat, double bw)
{
	if (!e || !(bw > 0) || !(e->eff > 0))
		return lat + (bw > 0 ? bytes / bw : 0);
	return e->lat_scale * lat + bytes / (e->eff * bw);
}

static int row_in(const hs_fab_row *r, const char *coll, int scope, const char *proto, int skip)
{
	return r->log != skip && r->t > 0 && r->bw > 0 && r->bytes > 0 && strcmp(r->collective, coll) == 0 &&
	       r->scope == scope && (strcmp(proto, "any") == 0 || strcmp(r->proto, proto) == 0);
}

/* Weighted least squares of t = x0 lat + x1 S/bw over the rows, the columns in use[] free and the others
 * fixed at fix[]; dividing by t makes every row's target 1 (relative error). */
static int lsq(const hs_fab_row *const *rw, size_t n, const int use[2], const double fix[2], double x[2])
{
	int nf = use[0] + use[1];
	if ((size_t)nf > n || nf == 0)
		return -1;
	gsl_matrix *A = gsl_matrix_alloc(n, (size_t)nf), *cov = gsl_matrix_alloc((size_t)nf, (size_t)nf);
	gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *c = gsl_vector_alloc((size_t)nf);
	for (size_t i = 0; i < n; i++) {
		const hs_fab_row *r = rw[i];
		double reg[2] = {r->lat / r->t, r->bytes / r->bw / r->t}, yi = 1;
		for (int j = 0, k = 0; j < 2; j++)
			if (use[j])
				gsl_matrix_set(A, i, (size_t)k++, reg[j]);
			else
				yi -= fix[j] * reg[j];
		gsl_vector_set(y, i, yi);
		gsl_vector_set(w, i, 1);
	}
	double chisq;
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, (size_t)nf);
	int st = gsl_multifit_wlinear(A, w, y, c, cov, &chisq, ws);
	for (int j = 0, k = 0; j < 2; j++)
		x[j] = use[j] ? gsl_vector_get(c, (size_t)k++) : fix[j];
	gsl_multifit_linear_free(ws);
	gsl_matrix_free(A);
	gsl_matrix_free(cov);
	gsl_vector_free(y);
	gsl_vector_free(w);
	gsl_vector_free(c);
	return st ? -1 : 0;
}

static int fit_entry(const hs_fab_row *rows, size_t n, int skip, const char *coll, int scope, const char *proto,
		     hs_fab_entry *e)
{
	const hs_fab_row **rw = hs_xmalloc((n ? n : 1) * sizeof *rw);
	size_t m = 0, latty = 0;
	for (size_t i = 0; i < n; i++)
		if (row_in(&rows[i], coll, scope, proto, skip)) {
			rw[m++] = &rows[i];
			if (rows[i].lat >= LAT_SHARE * (rows[i].lat + rows[i].bytes / rows[i].bw))
				latty++;
		}
	if (m == 0) {
		free(rw);
		return -1;
	}
	int use[2] = {latty >= 2, 1};
	double fix[2] = {1, 1}, x[2];
	int ok = lsq(rw, m, use, fix, x) == 0;
	/* a negative latency scale has no physical meaning: hold it at 1 and fit the efficiency alone */
	if (use[0] && (!ok || x[0] < 0)) {
		use[0] = 0;
		ok = lsq(rw, m, use, fix, x) == 0;
	}
	if (!ok || !(x[1] > 0)) {
		free(rw);
		return -1;
	}
	memset(e, 0, sizeof *e);
	snprintf(e->collective, sizeof e->collective, "%s", coll);
	e->scope = scope;
	snprintf(e->proto, sizeof e->proto, "%s", proto);
	e->lat_scale = x[0];
	e->eff = 1 / x[1];
	e->points = (int)m;
	double s = 0;
	for (size_t i = 0; i < m; i++) {
		double t = hs_fab_entry_time(e, rw[i]->bytes, rw[i]->lat, rw[i]->bw);
		s += fabs(rw[i]->t / t - 1); /* busbw error: busbw is proportional to 1/t */
	}
	e->mape = 100 * s / (double)m;
	free(rw);
	return 0;
}

hs_fabprof *hs_fabprof_fit(const hs_fab_row *rows, size_t n, int skip, const hs_fab_shape *shape, const char *name,
			   hs_err *err)
{
	hs_fabprof *p = hs_xcalloc(1, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name ? name : "fabric");
	if (shape)
		p->shape = *shape;
	/* every (collective, scope) present, in the order rows first show them; per protocol, then pooled */
	for (size_t i = 0; i < n; i++) {
		const hs_fab_row *r = &rows[i];
		if (r->log == skip)
			continue;
		int seen = 0;
		for (size_t j = 0; j < p->n; j++)
			if (strcmp(p->e[j].collective, r->collective) == 0 && p->e[j].scope == r->scope)
				seen = 1;
		if (seen)
			continue;
		for (int k = 0; proto_names[k] && p->n < MAXENT; k++)
			if (fit_entry(rows, n, skip, r->collective, r->scope, proto_names[k], &p->e[p->n]) == 0)
				p->n++;
	}
	if (p->n == 0) {
		free(p);
		hs_err_set(err, HS_EINPUT, "no measured row to fit (every row has zero bytes or time, or none is left)");
		return NULL;
	}
	return p;
}

void hs_fabprof_free(hs_fabprof *p) { free(p); }

const hs_fab_entry *hs_fabprof_lookup(const hs_fabprof *p, const char *collective, int scope, const char *proto)
{
	const hs_fab_entry *any = NULL;
	for (size_t i = 0; p && i < p->n; i++) {
		const hs_fab_entry *e = &p->e[i];
		if (e->scope != scope || strcmp(e->collective, collective) != 0)
			continue;
		if (strcmp(e->proto, proto) == 0)
			return e;
		if (strcmp(e->proto, "any") == 0)
			any = e;
	}
	return any;
}

size_t hs_fabprof_nentries(const hs_fabprof *p) { return p->n; }
const hs_fab_entry *hs_fabprof_entry(const hs_fabprof *p, size_t i) { return i < p->n ? &p->e[i] : NULL; }
const hs_fab_shape *hs_fabprof_shape(const hs_fabprof *p) { return &p->shape; }
const char *hs_fabprof_name(const hs_fabprof *p) { return p->name; }

void hs_fabprof_set_note(hs_fabprof *p, const char *source, const char *note)
{
	snprintf(p->source, sizeof p->source, "%s", source ? source : "");
	snprintf(p->note, sizeof p->note, "%s", note ? note : "");
}

/* A YAML double-quoted scalar of s. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	fputc('"', f);
}

int hs_fabprof_save(const hs_fabprof *p, const char *path, const char *extra, hs_err *err)
{
	hs_outfile o;
	if (hs_outfile_open(&o, path, err))
		return -1;
	FILE *f = o.f;
	fprintf(f, "# hetsim fabric profile (docs/calibration.md): nccl-tests logs against hetsim's NCCL model of the\n"
		   "# cluster they were measured on. Per collective, scope and protocol regime of the model:\n"
		   "#   t = latency_scale * latency + bytes / (efficiency * bandwidth)\n"
		   "# (latency, bandwidth: the model's for the call). A scenario uses it with cluster.fabric_profile.\n");
	fprintf(f, "fabric_profile:\n  name: ");
	put_quoted(f, p->name);
	fprintf(f, "\n  measured_on: {gpu: %s, gpus_per_node: %d, scaleup: %s, nic_bandwidth: %.6g, nics_per_node: %d}\n",
		p->shape.gpu, p->shape.gpus_per_node, p->shape.scaleup, p->shape.nic_bw, p->shape.nics_per_node);
	fprintf(f, "  source: ");
	put_quoted(f, p->source);
	fprintf(f, "\n  note: ");
	put_quoted(f, p->note);
	fprintf(f, "\n  entries:\n");
	for (size_t i = 0; i < p->n; i++) {
		const hs_fab_entry *e = &p->e[i];
		fprintf(f,
			"    - {collective: %s, scope: %s, protocol: %s, latency_scale: %.6g, efficiency: %.6g, points: %d, "
			"mape: %.2f}\n",
			e->collective, scope_names[e->scope], e->proto, e->lat_scale, e->eff, e->points, e->mape);
	}
	if (extra)
		fputs(extra, f);
	return hs_outfile_commit(&o, err);
}

static int load_entry(const hs_ynode *m, const char *path, hs_fab_entry *e, hs_err *err)
{
	static const char *const known[] = {"collective", "scope", "protocol", "latency_scale", "efficiency", "points",
					    "mape", NULL};
	if (hs_cfg_known(m, path, known, "an entry {collective, scope, protocol, latency_scale, efficiency}",
			 err))
		return -1;
	const char *coll;
	int proto;
	int64_t pts;
	memset(e, 0, sizeof *e);
	if (hs_cfg_str(m, path, "collective", NULL, 1, &coll, err) ||
	    hs_cfg_enum(m, path, "scope", scope_names, -1, &e->scope, err) ||
	    hs_cfg_enum(m, path, "protocol", proto_names, 3, &proto, err) ||
	    hs_cfg_num(m, path, "latency_scale", HS_U_COUNT, 0, 1e6, 1, 0, &e->lat_scale, err) ||
	    hs_cfg_num(m, path, "efficiency", HS_U_COUNT, 1e-6, 1e6, 1, 1, &e->eff, err) ||
	    hs_cfg_int(m, path, "points", 0, 1 << 30, 0, 0, &pts, err) ||
	    hs_cfg_num(m, path, "mape", HS_U_COUNT, 0, 1e9, 0, 0, &e->mape, err))
		return -1;
	if (e->scope < 0)
		return hs_cfg_err(m, err, path, "scope", "missing required key (expected intra or inter)");
	if (strlen(coll) >= sizeof e->collective)
		return hs_cfg_err(hs_yaml_get(m, "collective"), err, path, "collective", "'%s' is too long", coll);
	snprintf(e->collective, sizeof e->collective, "%s", coll);
	snprintf(e->proto, sizeof e->proto, "%s", proto_names[proto]);
	e->points = (int)pts;
	return 0;
}

static int load_shape(const hs_ynode *m, const char *path, hs_fab_shape *s, hs_err *err)
{
	static const char *const known[] = {"gpu", "gpus_per_node", "scaleup", "nic_bandwidth", "nics_per_node", NULL};
	if (hs_cfg_known(m, path, known, "{gpu, gpus_per_node, scaleup, nic_bandwidth, nics_per_node}", err))
		return -1;
	const char *gpu, *su;
	int64_t gpn, nics;
	if (hs_cfg_str(m, path, "gpu", "", 0, &gpu, err) || hs_cfg_int(m, path, "gpus_per_node", 1, 1 << 20, 0, 1, &gpn, err) ||
	    hs_cfg_str(m, path, "scaleup", NULL, 1, &su, err) ||
	    hs_cfg_num(m, path, "nic_bandwidth", HS_U_COUNT, 0, 1e18, 0, 0, &s->nic_bw, err) ||
	    hs_cfg_int(m, path, "nics_per_node", 0, 1 << 20, 0, 0, &nics, err))
		return -1;
	snprintf(s->gpu, sizeof s->gpu, "%s", gpu);
	snprintf(s->scaleup, sizeof s->scaleup, "%s", su);
	s->gpus_per_node = (int)gpn;
	s->nics_per_node = (int)nics;
	return 0;
}

hs_fabprof *hs_fabprof_load(const char *path, hs_err *err)
{
	hs_ydoc *doc = hs_yaml_load_file(path, err);
	if (!doc)
		return NULL;
	hs_fabprof *p = hs_fabprof_from_doc(doc, path, err);
	hs_yaml_free(doc);
	return p;
}

hs_fabprof *hs_fabprof_from_doc(hs_ydoc *doc, const char *path, hs_err *err)
{
	hs_fabprof *p = hs_xcalloc(1, sizeof *p);
	const hs_ynode *root = hs_yaml_root(doc);
	const hs_ynode *fp = root && root->kind == HS_Y_MAP ? hs_yaml_get(root, "fabric_profile") : NULL;
	static const char *const known[] = {"name", "measured_on", "source", "note", "entries", NULL};
	const char *name, *src, *note;
	if (!fp) {
		hs_err_set(err, HS_EINPUT,
			   "%s:%d:%d: fabric_profile: missing (expected a fabric profile, as `hetsim calib import-nccl-tests "
			   "--scenario` writes; a file of alpha-beta fits alone cannot time a cluster)",
			   path, root ? root->line : 1, root ? root->col : 1);
		goto fail;
	}
	if (hs_cfg_known(fp, "fabric_profile", known, "a fabric profile {name, measured_on, source, note, entries}", err) ||
	    hs_cfg_str(fp, "fabric_profile", "name", "fabric", 0, &name, err) ||
	    hs_cfg_str(fp, "fabric_profile", "source", "", 0, &src, err) ||
	    hs_cfg_str(fp, "fabric_profile", "note", "", 0, &note, err))
		goto fail;
	snprintf(p->name, sizeof p->name, "%s", name);
	hs_fabprof_set_note(p, src, note);
	const hs_ynode *mo = hs_yaml_get(fp, "measured_on");
	if (!mo) {
		hs_cfg_err(fp, err, "fabric_profile", "measured_on", "missing required key (expected the cluster shape)");
		goto fail;
	}
	if (load_shape(mo, "fabric_profile.measured_on", &p->shape, err))
		goto fail;
	const hs_ynode *es = hs_yaml_get(fp, "entries");
	if (!es || es->kind != HS_Y_SEQ || es->n == 0) {
		hs_cfg_err(es ? es : fp, err, "fabric_profile", "entries", "expected a non-empty list of fitted entries");
		goto fail;
	}
	if (es->n > MAXENT) {
		hs_cfg_err(es, err, "fabric_profile", "entries", "%zu entries (expected at most %d)", es->n, MAXENT);
		goto fail;
	}
	for (size_t i = 0; i < es->n; i++) {
		char sub[64];
		snprintf(sub, sizeof sub, "fabric_profile.entries[%zu]", i);
		if (load_entry(es->vals[i], sub, &p->e[p->n], err))
			goto fail;
		p->n++;
	}
	return p;
fail:
	free(p);
	return NULL;
}

static void free_fab(struct hs_fabprof *p) { hs_fabprof_free(p); }

int hs_fabprof_attach(hs_cluster *c, hs_err *err)
{
	for (int g = 0; g < hs_cluster_ngroups(c); g++) {
		const hs_node_group *ng = hs_cluster_group(c, g);
		if (!ng->fabric_profile[0])
			continue;
		hs_err e2 = {0};
		hs_fabprof *p = hs_fabprof_load(ng->fabric_profile, &e2);
		if (!p)
			return hs_err_set(err, HS_EINPUT, "%s: fabric_profile: %s", ng->fabric_profile_at, e2.msg);
		const hs_fab_shape *s = &p->shape;
		if (s->gpus_per_node != ng->gpus_per_node || strcmp(s->scaleup, ng->scaleup_kind) != 0) {
			hs_err_set(err, HS_EINPUT,
				   "%s: fabric_profile: %s was measured on another cluster shape: %d GPUs per node on %s, "
				   "where group '%s' has %d on %s (expected a profile of the same GPUs per node and scale-up)",
				   ng->fabric_profile_at, ng->fabric_profile, s->gpus_per_node, s->scaleup, ng->name,
				   ng->gpus_per_node, ng->scaleup_kind);
			hs_fabprof_free(p);
			return -1;
		}
		hs_cluster_set_fabprof(c, g, p, free_fab);
	}
	return 0;
}
