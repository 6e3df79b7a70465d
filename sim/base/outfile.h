/* hs_outfile: write a result file so that no reader ever sees it half-written (DESIGN.md: "no output file is
 * left half-written"). Output goes to "<path>.tmp.<pid>" beside the target; commit flushes, closes and renames
 * it over the target (atomic on POSIX file systems), abort removes it. Every file hetsim writes as a result
 * (traces, CSV, HDF5, report pages) goes through here or through hs_outfile_tmpname + rename. */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <stdio.h>

#include "sim/base/err.h"

typedef struct hs_outfile {
	FILE *f;
	char path[1024];
	char tmp[1100];
} hs_outfile;

/* Open the temporary file for writing. -1 with err (HS_EINPUT: the directory cannot be written). */
int hs_outfile_open(hs_outfile *o, const char *path, hs_err *err);
/* Flush, check for write errors, close and rename over the target. -1 with err; the temporary is removed. */
int hs_outfile_commit(hs_outfile *o, hs_err *err);
void hs_outfile_abort(hs_outfile *o);
/* The temporary name for `path` (for writers that open files themselves, such as HDF5). */
void hs_outfile_tmpname(const char *path, char *buf, size_t n);
/* Rename tmp over path; -1 with err (and tmp removed) on failure. */
int hs_outfile_rename(const char *tmp, const char *path, hs_err *err);

#endif
