/* hs_gp: drawing with gnuplot, headless. A plot is a script and its data files in the report folder; gnuplot
 * runs as a child process (no shell) and writes the image to a pipe, which hetsim copies into the image file
 * through hs_outfile, so a full disk is caught (and reported with its path) here rather than lost in gnuplot.
 * pngcairo is used where gnuplot has it, else svg.
 *
 * Every file goes into the report folder's hs_outdir: on failure hs_gp_abort removes them all, and the folders
 * hs_gp_init created. Data files (hs_gp_data) are closed, and their writes checked, by the next hs_gp_plot; a
 * data file that could not be opened is reported there too (hs_gp_data never returns NULL). */
#ifndef HS_GNUPLOT_H
#define HS_GNUPLOT_H

#include <stdio.h>

#include "sim/base/err.h"
#include "sim/base/outfile.h"

#define HS_GP_MAXDATA 8

typedef struct hs_gp {
	char dir[1024];      /* report folder */
	const char *ext;     /* "png" or "svg" */
	char term[128];      /* terminal line without size */
	hs_outdir out;       /* every file written, for hs_gp_abort */
	hs_outfile data[HS_GP_MAXDATA]; /* data files opened since the last plot */
	int ndata;
	hs_err data_err;     /* the first data file that could not be opened */
	FILE *sink;          /* /dev/null, handed out in place of a data file that could not be opened */
} hs_gp;

/* Create the folder (and data/), find gnuplot and pick the terminal (`format`: "png", "svg" or NULL for png
 * when possible). -1 with err (HS_EINPUT) when the folder cannot be made or gnuplot cannot be run; nothing is
 * left behind then. */
int hs_gp_init(hs_gp *g, const char *dir, const char *format, hs_err *err);
/* Open "<dir>/data/<name>.dat" for writing; never NULL (on failure, a stream to /dev/null, the error kept for
 * the next hs_gp_plot). Do not fclose it. */
FILE *hs_gp_data(hs_gp *g, const char *name, char *path, size_t n);
/* Close the data files, then run `script` (gnuplot commands after the terminal and output lines) drawing
 * <dir>/<name>.<ext> at w x h pixels; the script is kept as <dir>/data/<name>.gp. Fills `image` with the file
 * name relative to dir. */
int hs_gp_plot(hs_gp *g, const char *name, int w, int h, const char *script, char *image, size_t n, hs_err *err);
/* Record a file written in the folder by someone else (the report pages), so that hs_gp_abort removes it. */
void hs_gp_add(hs_gp *g, const char *name);
/* The report failed: remove every file written and the folders made. */
void hs_gp_abort(hs_gp *g);
/* The report is complete: close the data files still open (checked). -1 with err, everything removed. */
int hs_gp_done(hs_gp *g, hs_err *err);

#endif
