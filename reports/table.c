/* Sweep rows as a table of strings, from an HDF5 /sweep group or a CSV file, for the sweep report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_impl.h"
#include "sim/base/alloc.h"
#include "sim/base/file.h"
#include "sim/base/sizes.h"

void hs_rtable_free(struct hs_rtable *t)
{
	for (int c = 0; c < t->ncol; c++) {
		for (size_t r = 0; r < t->nrow; r++)
			free(t->cells[c][r]);
		free(t->cells[c]);
		free(t->names[c]);
	}
	free(t->cells);
	free(t->names);
	memset(t, 0, sizeof *t);
}

int hs_rtable_col(const struct hs_rtable *t, const char *name)
{
	for (int c = 0; c < t->ncol; c++)
		if (strcmp(t->names[c], name) == 0)
			return c;
	return -1;
}

double hs_rtable_num(const struct hs_rtable *t, int c, size_t r)
{
	if (c < 0)
		return NAN;
	char *end;
	double v = strtod(t->cells[c][r], &end);
	return end == t->cells[c][r] || *end ? NAN : v;
}

/* One column as strings (numbers printed with %.10g, NaN as ""); -1 when it cannot be read. */
static int read_cells(hs_h5r *h, const char *grp, const char *name, char ***cells, size_t *n)
{
	if (hs_h5_is_str(h, grp, name))
		return hs_h5_read_str(h, grp, name, cells, n);
	double *v = NULL;
	if (hs_h5_read_num(h, grp, name, &v, n))
		return -1;
	*cells = hs_xcalloc(*n + 1, sizeof **cells);
	for (size_t r = 0; r < *n; r++) {
		char b[64] = "";
		if (isfinite(v[r]))
			snprintf(b, sizeof b, "%.10g", v[r]);
		(*cells)[r] = hs_xstrdup(b);
	}
	free(v);
	return 0;
}

static void free_cells(char **cells, size_t n)
{
	for (size_t r = 0; cells && r < n; r++)
		free(cells[r]);
	free(cells);
}

int hs_rtable_from_h5(hs_h5r *h, const char *grp, const char *const *need, struct hs_rtable *t)
{
	memset(t, 0, sizeof *t);
	char **names;
	int ncol;
	if (hs_h5_columns(h, grp, &names, &ncol))
		return -1;
	t->names = names;
	t->cells = hs_xcalloc((size_t)ncol + 1, sizeof *t->cells);
	char p[512];
	int c;
	for (c = 0; c < ncol; c++) {
		size_t n = 0;
		char **cells = NULL;
		snprintf(p, sizeof p, "%s/%s", grp, names[c]);
		/* a column that the `columns` list names is not optional, and each has the first one's length */
		if (read_cells(h, grp, names[c], &cells, &n)) {
			if (!hs_h5_error(h))
				hs_h5_fail(h, p, "listed in the columns attribute but missing");
			break;
		}
		if (c > 0 && n != t->nrow) {
			hs_h5_fail(h, p, "a column of a different length from the table's first");
			free_cells(cells, n);
			break;
		}
		t->cells[c] = cells;
		t->nrow = n;
		t->ncol = c + 1;
	}
	for (int k = 0; c == ncol && need && need[k]; k++)
		if (hs_rtable_col(t, need[k]) < 0) {
			snprintf(p, sizeof p, "%s/%s", grp, need[k]);
			hs_h5_fail(h, p, "a required column is missing");
			c = -1;
			break;
		}
	if (c == ncol)
		return 0;
	for (int k = t->ncol; k < ncol; k++)
		free(names[k]);
	hs_rtable_free(t);
	return -1;
}

int hs_rtable_from_csv(const char *path, struct hs_rtable *t, hs_err *err)
{
	memset(t, 0, sizeof *t);
	FILE *f = hs_file_open(path, "a sweep CSV", err);
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		char *fl[64];
		int n = hs_csv_split(line, fl, 64);
		if (!t->names) {
			t->ncol = n;
			t->names = hs_xcalloc((size_t)n, sizeof *t->names);
			t->cells = hs_xcalloc((size_t)n, sizeof *t->cells);
			for (int c = 0; c < n; c++)
				t->names[c] = fl[c];
			continue;
		}
		if (t->nrow == rcap) {
			rcap = rcap ? 2 * rcap : 64;
			for (int c = 0; c < t->ncol; c++)
				t->cells[c] = hs_xrealloc(t->cells[c], rcap * sizeof **t->cells);
		}
		for (int c = 0; c < t->ncol; c++)
			t->cells[c][t->nrow] = c < n ? fl[c] : hs_xstrdup("");
		for (int c = t->ncol; c < n; c++)
			free(fl[c]);
		t->nrow++;
	}
	free(line);
	fclose(f);
	if (!t->names || hs_rtable_col(t, "status") < 0) {
		hs_rtable_free(t);
		return hs_err_set(err, HS_EINPUT, "%s: not a hetsim sweep CSV (no status column)", path);
	}
	return 0;
}
