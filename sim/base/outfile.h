/* hs_outfile: write a result file so that no reader ever sees it half-written (DESIGN.md: "no output file is
 * left half-written"). Output goes to "<path>.tmp.<pid>" beside the target; commit flushes, closes and renames
 * it over the target (atomic on POSIX file systems), abort removes it. Every file hetsim writes as a result
 * (traces, CSV, HDF5, report pages, plots) goes through here.
 *
 * Every failure is the environment's, not a bug: HS_EINPUT (exit 2) with the path and strerror. Writes through
 * o->f are checked at commit (stdio's error flag is sticky); hs_outfile_write also keeps the errno of the first
 * failed write, so a full disk is reported as "No space left on device" even when the flush that follows
 * succeeds.
 *
 * hs_outdir: a folder of result files (a report). It creates the folder (and sub-folders) when missing and
 * records each file written in it; hs_outdir_abort removes the recorded files, then the folders it created (only
 * those, and only when empty), so a failed report leaves nothing behind and an existing folder keeps the files
 * it had. */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "sim/base/err.h"

typedef struct hs_outfile {
	FILE *f;
	char path[1024];
	char tmp[1100];
	int werr; /* errno of the first failed hs_outfile_write; 0 when none */
} hs_outfile;

/* Open the temporary file for writing. -1 with err (HS_EINPUT: the directory cannot be written). */
int hs_outfile_open(hs_outfile *o, const char *path, hs_err *err);
/* Write n bytes; -1 on a short write (the error is kept for commit, which then fails). */
int hs_outfile_write(hs_outfile *o, const void *buf, size_t n);
/* Flush, check for write errors, close and rename over the target. -1 with err; the temporary is removed. */
int hs_outfile_commit(hs_outfile *o, hs_err *err);
void hs_outfile_abort(hs_outfile *o);
/* The temporary name for `path`. */
void hs_outfile_tmpname(const char *path, char *buf, size_t n);
/* Rename tmp over path; -1 with err (and tmp removed) on failure. */
int hs_outfile_rename(const char *tmp, const char *path, hs_err *err);

#define HS_OUTDIR_MAXDIRS 4
typedef struct hs_outdir {
	char path[1024];
	char made[HS_OUTDIR_MAXDIRS][1100]; /* folders this created, outermost first */
	int nmade;
	char **files; /* files written in it, removed by abort */
	size_t nfiles, capfiles;
} hs_outdir;

/* Use folder `path`, creating it when missing. -1 with err (HS_EINPUT) when it cannot be made or is not a
 * folder. */
int hs_outdir_open(hs_outdir *d, const char *path, hs_err *err);
/* A sub-folder "<path>/<sub>", created when missing. */
int hs_outdir_mkdir(hs_outdir *d, const char *sub, hs_err *err);
/* Record a file (full path) as written by this output, so that abort removes it. */
void hs_outdir_add(hs_outdir *d, const char *file);
/* Open "<path>/<name>" through hs_outfile and record it (the caller commits it). */
int hs_outdir_file(hs_outdir *d, hs_outfile *o, const char *name, hs_err *err);
/* Failure: remove what was recorded and the folders this made. Success: hs_outdir_close keeps it all. Both free
 * the record. */
void hs_outdir_abort(hs_outdir *d);
void hs_outdir_close(hs_outdir *d);

#endif
