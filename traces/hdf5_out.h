/* HDF5 results (docs/outputs.md has the schema). A result file is a tree of groups whose attributes hold
 * scalars (the summary) and whose tables ("/ranks", "/stages", "/tasks", "/links", "/sweep") are compound
 * datasets: one field per column (float64, int32 or fixed-length strings), with `columns` (the field order),
 * `units` (one per field) and `schema_version` attributes, so that a table is one pandas call
 * (`pd.DataFrame(h5py.File(f)['/ranks'][()])`). Schema 1 stored a table as a group of column datasets; the
 * readers below read both.
 *
 * Writing goes to a temporary file renamed over the target on hs_h5_commit, so no reader sees half a file.
 * HDF5's own error stack printing is switched off; failures come back as hs_err. */
#ifndef HS_HDF5_OUT_H
#define HS_HDF5_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"
#include "sim/study/simulate.h"

typedef struct hs_h5 hs_h5;

/* The schema written (the root's and each table's `schema_version`). */
#define HS_H5_SCHEMA 2

/* Create a result file of `kind` ("run", "sweep", ...). NULL with err when it cannot be created. */
hs_h5 *hs_h5_create(const char *path, const char *kind, hs_err *err);
int hs_h5_commit(hs_h5 *h, hs_err *err); /* close and rename into place; frees h */
void hs_h5_abort(hs_h5 *h);              /* close and remove; frees h */

/* Scalar attributes on a group ("/" or "/summary"); the group is created when missing. */
int hs_h5_attr_num(hs_h5 *h, const char *group, const char *name, double v);
int hs_h5_attr_str(hs_h5 *h, const char *group, const char *name, const char *v);
/* A column of the table at `group` ("/ranks"): kept until the table is written as one compound dataset, at
 * commit or when an attribute is put on the table; every column of a table has the same length. */
int hs_h5_col_num(hs_h5 *h, const char *group, const char *name, const double *v, size_t n);
int hs_h5_col_int(hs_h5 *h, const char *group, const char *name, const int32_t *v, size_t n);
int hs_h5_col_str(hs_h5 *h, const char *group, const char *name, const char *const *v, size_t n);

/* One training step's result: summary attributes on "/" and "/cost", "/ranks", "/stages", and with `tasks`
 * the "/tasks" timeline. */
int hs_h5_write_run(hs_h5 *h, const hs_sim *sim, int tasks, hs_err *err);

/* Link utilisation over time, the hook for network models that track links (the flow model). The analytical
 * model has no links, so `hetsim run` writes none today and sets the root attribute links = 0; a model that
 * fills this struct gets the "/links" table (name, capacity_Bps; attribute bin_s) and beside it the
 * [links x bins] matrix "/links_utilisation". */
typedef struct hs_link_series {
	int nlinks;
	int nbins;
	double bin_s;                 /* width of a time bin */
	const char *const *names;     /* [nlinks] "node3.nic0->leaf1" */
	const double *capacity_Bps;   /* [nlinks] bytes/s */
	const double *bytes;          /* [nlinks] carried over the run; NULL: not known */
	const double *util;           /* [nlinks * nbins] busy fraction, row per link */
} hs_link_series;
int hs_h5_write_links(hs_h5 *h, const hs_link_series *ls, hs_err *err);

/* Reading back (reports, tests). A file opened for reading; NULL with err. */
typedef struct hs_h5r hs_h5r;
hs_h5r *hs_h5_open(const char *path, hs_err *err);
void hs_h5_close(hs_h5r *h);
/* Reads check every shape, type and size against the schema; an object that breaks it makes that read fail
 * and sets this error (HS_EINPUT, with the path and the object), which then sticks. NULL while none. */
const hs_err *hs_h5_error(const hs_h5r *h);
/* Set that error from a reader above this one (a table whose columns disagree): "FILE: obj: what". */
void hs_h5_fail(hs_h5r *h, const char *obj, const char *what);
/* Attribute of an object ("/", "/cost"): 0 and the value, or -1 when absent. */
int hs_h5_get_num(hs_h5r *h, const char *obj, const char *name, double *v);
int hs_h5_get_str(hs_h5r *h, const char *obj, const char *name, char *buf, size_t n);
/* Column names of a column group, malloc'd (free each and the array); -1 when the group is absent. */
int hs_h5_columns(hs_h5r *h, const char *group, char ***names, int *n);
/* A numeric column as doubles (malloc'd); -1 (and *v NULL, *n 0) when absent or malformed. A string column:
 * a malloc'd array of malloc'd strings. */
int hs_h5_read_num(hs_h5r *h, const char *group, const char *name, double **v, size_t *n);
int hs_h5_read_str(hs_h5r *h, const char *group, const char *name, char ***v, size_t *n);
int hs_h5_is_str(hs_h5r *h, const char *group, const char *name);
/* A 2-D dataset ("/links_utilisation"; schema 1: "/links/utilisation") as doubles, row-major; -1 when absent. */
int hs_h5_read_matrix(hs_h5r *h, const char *path, double **v, size_t *rows, size_t *cols);

/* A sweep's rows (traces/sweep_hdf5.c): /sweep (a column group) and summary attributes, committed atomically. */
struct hs_sweep;
struct hs_sweep_row;
int hs_h5_write_sweep(const struct hs_sweep *sw, const struct hs_sweep_row *rows, const int *rank, const char *path,
		      hs_err *err);

#endif
