/* A sweep's rows as HDF5 (docs/outputs.md): summary attributes on the root and /sweep, one column dataset per
 * axis and metric; numeric columns as doubles (NaN where a row has no value), the rest as strings. */
#include "traces/hdf5_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/base/alloc.h"
#include "sim/study/sweep.h"

int hs_h5_write_sweep(const hs_sweep *sw, const hs_sweep_row *rows, const int *rank, const char *path, hs_err *err)
{
	hs_h5 *h = hs_h5_create(path, "sweep", err);
	if (!h)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < sw->npoints; i++)
		n += rows[i].text != NULL;
	int ncols = sw->naxes;
	for (int i = 0; hs_sweep_columns[i]; i++)
		ncols++;
	char ***cells = hs_xcalloc((size_t)ncols, sizeof *cells);
	for (int c = 0; c < ncols; c++)
		cells[c] = hs_xcalloc(n + 1, sizeof **cells);
	int32_t *idx = hs_xcalloc(n + 1, sizeof *idx), *rk = hs_xcalloc(n + 1, sizeof *rk);
	size_t r = 0, feasible = 0;
	for (size_t i = 0; i < sw->npoints; i++) {
		if (!rows[i].text)
			continue;
		char *f[64] = {0};
		int nf = hs_csv_split(rows[i].text, f, 64);
		for (int c = 0; c < ncols; c++)
			cells[c][r] = c < nf ? f[c] : hs_xstrdup("");
		for (int c = ncols; c < nf; c++)
			free(f[c]);
		idx[r] = (int32_t)i;
		rk[r] = rank[i];
		feasible += rows[i].ok;
		r++;
	}
	const char *G = "/sweep";
	hs_h5_attr_str(h, "/", "sweep", sw->path);
	hs_h5_attr_str(h, "/", "base", sw->base);
	hs_h5_attr_str(h, "/", "metric", sw->metric);
	hs_h5_attr_str(h, "/", "goal", sw->maximise ? "max" : "min");
	hs_h5_attr_num(h, "/", "points", (double)sw->npoints);
	hs_h5_attr_num(h, "/", "feasible", (double)feasible);
	for (int a = 0; a < sw->naxes; a++) {
		char nm[32];
		snprintf(nm, sizeof nm, "axis%d", a);
		hs_h5_attr_str(h, G, nm, sw->axes[a].key);
	}
	hs_h5_attr_num(h, G, "axes", sw->naxes);
	hs_h5_col_int(h, G, "index", idx, n);
	hs_h5_col_int(h, G, "rank", rk, n);
	double *dv = hs_xcalloc(n + 1, sizeof *dv);
	for (int c = 0; c < ncols; c++) {
		int axis = c < sw->naxes;
		const char *name = axis ? sw->axes[c].key : hs_sweep_columns[c - sw->naxes];
		int numeric = axis ? sw->axes[c].numeric
				   : hs_sweep_column_numeric(c - sw->naxes);
		if (numeric) {
			for (size_t k = 0; k < n; k++) {
				char *end;
				dv[k] = strtod(cells[c][k], &end);
				if (end == cells[c][k] || *end)
					dv[k] = NAN;
			}
			hs_h5_col_num(h, G, name, dv, n);
		} else {
			hs_h5_col_str(h, G, name, (const char *const *)cells[c], n);
		}
	}
	for (int c = 0; c < ncols; c++) {
		for (size_t k = 0; k < n; k++)
			free(cells[c][k]);
		free(cells[c]);
	}
	free(cells);
	free(dv);
	free(idx);
	free(rk);
	return hs_h5_commit(h, err);
}
