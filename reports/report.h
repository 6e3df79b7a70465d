/* hs_report: plots and a report page from a result (issue 7, part 3).
 *
 * RESULT is what run, sweep or validate wrote:
 *   - an HDF5 file of `hetsim run --hdf5` (kind run): step-time breakdown per rank (stacked bars), the
 *     pipeline timeline of the step (a Gantt chart, when the file has /tasks: --hdf5-tasks), memory per stage
 *     against capacity, and link utilisation when the network model recorded links;
 *   - an HDF5 file of `hetsim sweep --hdf5` (kind sweep) or the sweep's CSV: a heat map of the metric over
 *     the first two numeric axes (best over the other axes) and the Pareto front of cost against step time;
 *   - the JSON of `hetsim validate --json`: predicted against measured step time;
 *   - the JSON of `hetsim run --json` on a fabric experiment: latency tail (CCDF through the percentiles) and
 *     receive-buffer occupancy over time, per scheme.
 * Output: DIR/<plot>.png (or .svg), DIR/index.html (images embedded), DIR/summary.md, DIR/data/ (the data and
 * the gnuplot script of every plot, to redraw them). */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include "sim/base/err.h"

typedef struct hs_report_opts {
	const char *format; /* "png", "svg" or NULL */
	const char *title;  /* NULL: from the result */
	int plots;          /* out: images drawn */
	char kind[32];      /* out: run, sweep, validate, fabric */
} hs_report_opts;

int hs_report_make(const char *result, const char *dir, hs_report_opts *o, hs_err *err);

#endif
