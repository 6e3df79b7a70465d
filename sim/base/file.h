/* Reading a whole input file, with the messages every loader gives: "PATH: cannot open: reason", a size limit,
 * read errors. The buffer is NUL-terminated (one byte past *len) and malloc'd. */
#ifndef HS_FILE_H
#define HS_FILE_H

#include <stddef.h>

#include "sim/base/err.h"

/* NULL with err (HS_EINPUT) on failure; `max` bytes at most (what: "a scenario", for the message). */
char *hs_read_file(const char *path, size_t max, const char *what, size_t *len, hs_err *err);

#endif
