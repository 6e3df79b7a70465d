/* hs_gp: drawing with gnuplot, headless. A plot is a script and its data files in the report folder; gnuplot
 * runs as a child process (no shell), writes to a temporary name, and the image is renamed into place once
 * gnuplot succeeded and the file is not empty. pngcairo is used where gnuplot has it, else svg. */
#ifndef HS_GNUPLOT_H
#define HS_GNUPLOT_H

#include <stdio.h>

#include "sim/base/err.h"

typedef struct hs_gp {
	char dir[1024];      /* report folder */
	const char *ext;     /* "png" or "svg" */
	char term[128];      /* terminal line without size */
} hs_gp;

/* Find gnuplot and pick the terminal (`format`: "png", "svg" or NULL for png when possible). -1 with err
 * (HS_EINPUT) when gnuplot cannot be run. */
int hs_gp_init(hs_gp *g, const char *dir, const char *format, hs_err *err);
/* Open "<dir>/data/<name>.dat" for writing. */
FILE *hs_gp_data(hs_gp *g, const char *name, char *path, size_t n);
/* Run `script` (gnuplot commands after the terminal and output lines) drawing <dir>/<name>.<ext> at w x h
 * pixels; the script is kept as <dir>/data/<name>.gp. Fills `image` with the file name relative to dir. */
int hs_gp_plot(hs_gp *g, const char *name, int w, int h, const char *script, char *image, size_t n, hs_err *err);

#endif
