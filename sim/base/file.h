/* Reading input files, with the messages every loader gives: "PATH: cannot open: reason", "PATH: is a folder,
 * not a scenario", a size limit, read errors.
 *
 * Only regular files are read (a folder, a FIFO or a device is refused with exit 2, rather than read as
 * empty, blocking forever on a FIFO, or reading /dev/zero until memory runs out); `what` names what the file
 * should have been ("a scenario"). Readers that hand a path to a library (HDF5) call hs_file_check first. */
#ifndef HS_FILE_H
#define HS_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "sim/base/err.h"

/* 0 when path is a regular file that can be opened for reading; else -1 with err (HS_EINPUT). */
int hs_file_check(const char *path, const char *what, hs_err *err);
/* fopen(path, "rb") of a regular file; NULL with err (HS_EINPUT). Never blocks on a FIFO. */
FILE *hs_file_open(const char *path, const char *what, hs_err *err);
/* Read the whole file; NULL with err (HS_EINPUT) on failure; `max` bytes at most. The buffer is
 * NUL-terminated (one byte past *len) and malloc'd. */
char *hs_read_file(const char *path, size_t max, const char *what, size_t *len, hs_err *err);
/* The first n bytes (fewer when the file is shorter: *got). */
int hs_file_head(const char *path, const char *what, unsigned char *buf, size_t n, size_t *got, hs_err *err);

#endif
