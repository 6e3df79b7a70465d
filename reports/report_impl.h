/* Inside hetsim report: what the report kinds share. Each kind draws its plots and writes its page in a file of
 * its own (report_run.c, report_sweep.c, report_validate.c, report_fabric.c); report.c maps an input to its kind.
 * Not a public header. */
#ifndef HS_REPORT_IMPL_H
#define HS_REPORT_IMPL_H

#include <stddef.h>

#include "config/yaml.h"
#include "reports/gnuplot.h"
#include "reports/page.h"
#include "reports/report.h"
#include "sim/study/sweep.h"
#include "traces/hdf5_out.h"

/* Tableau 10: distinguishable, and readable by most colour-blind readers. */
#define HS_REPORT_PALETTE 10
extern const char *const hs_report_palette[HS_REPORT_PALETTE];
/* printf v with format f into b, or "n/a" when v is not finite. */
void hs_report_fmt(char *b, size_t n, const char *f, double v);

/* A table of strings: sweep rows read from HDF5 or CSV (reports/table.c). */
struct hs_rtable {
	int ncol;
	size_t nrow;
	char **names;
	char ***cells; /* [col][row] */
};
void hs_rtable_free(struct hs_rtable *t);
int hs_rtable_col(const struct hs_rtable *t, const char *name);
double hs_rtable_num(const struct hs_rtable *t, int c, size_t r);
/* The column group `grp`, every column read and of one length, and the columns in `need` (NULL-terminated, or
 * NULL) present; -1 when the group is absent or breaks that (then hs_h5_error(h) says how). */
int hs_rtable_from_h5(hs_h5r *h, const char *grp, const char *const *need, struct hs_rtable *t);
int hs_rtable_from_csv(const char *path, struct hs_rtable *t, hs_err *err);

/* Fields of a JSON result read as YAML (JSON is YAML): NAN or "" when absent. */
double hs_report_ynum(const hs_ynode *m, const char *k);
const char *hs_report_ystr(const hs_ynode *m, const char *k);

/* The report kinds: read their input, draw with g, write pg. */
int hs_report_run(hs_h5r *h, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err);
int hs_report_sweep(struct hs_rtable *t, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, const char *metric,
			int maximise, hs_err *err);
int hs_report_validate(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o,
			   hs_err *err);
int hs_report_fabric(const hs_ynode *root, const char *src, hs_gp *g, hs_page *pg, hs_report_opts *o, hs_err *err);

#endif
