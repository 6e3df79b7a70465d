/* hs_sweep: a sweep over scenario keys (issue 7): a base scenario, fixed overrides and axes, each axis any
 * scenario key with a list of values or a range. Points are the cartesian product in a fixed order (the first
 * axis varies slowest), numbered from 0; a point's scenario is the base with `--set KEY=VALUE` for each axis.
 *
 * Points are not listed: point i is derived from its index (hs_sweep_point), so a sweep of many points costs
 * only its rows. Evaluating a point (hs_sweep_eval) is pure: an overlay of the base document parsed once
 * (copied only where the overrides change it), the overrides, the scenario (on the sweep's one cluster when no
 * axis changes it), Megatron-LM's layout rules (sim/study/sweep_rules.h), hs_simulate_scenario (the
 * step in closed form where its pattern allows, sim/exec/closed_step.c), one CSV row with the resolved layout
 * and the path the step took; so threads and MPI ranks run points independently. A point that cannot run is a
 * row too: status `infeasible` with the reason (exit status 3 cases, and input errors about divisibility such
 * as tp x pp x dp != GPUs, which the scenario loader reports as exit 2), or `invalid` (a layout Megatron-LM
 * refuses). Any other error (an unknown key, a bad value, a missing device profile) is the sweep's, not the
 * point's: hs_sweep_eval fails and the sweep stops with it.
 *
 * Rows are kept in a journal as they finish (one line per point, flushed), so an interrupted sweep resumes
 * where it stopped; the final CSV is written from the journals in point order, so it is byte-identical however
 * the work was split (threads, ranks, resumes). See docs/outputs.md. */
#ifndef HS_SWEEP_H
#define HS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "calib/profile_cache.h"
#include "sim/base/err.h"
#include <stdio.h>

#include "sim/base/strlist.h"

#define HS_SWEEP_MAX_AXES 16
/* The most points a sweep file may describe at all (the product of its axes), so that counting them cannot
 * overflow; `hetsim sweep` runs at most HS_SWEEP_MAX_POINTS of them unless --max-points raises it. */
#define HS_SWEEP_POINTS_CEILING 1000000000000ull
/* Points `hetsim sweep` runs without --max-points: each keeps its row (about 300 bytes) until the CSV is
 * ranked and written, so a million is a few hundred MiB, and at the closed form's rate (docs/outputs.md) minutes. */
#define HS_SWEEP_MAX_POINTS 1000000ull
/* The rows' format, part of the journal's hash: journals with other columns are not reused. */
#define HS_SWEEP_ROW_FORMAT "rows 2: layout columns, path"

typedef struct hs_sweep_axis {
	char key[128];
	char **values; /* text as it goes into --set */
	int n;
	int numeric;   /* every value parses as a number (for plots) */
} hs_sweep_axis;

typedef struct hs_sweep {
	char path[1024];       /* the sweep file */
	char base[1024];       /* base scenario, resolved against the sweep file's folder */
	struct hs_ydoc *base_doc; /* parsed once, frozen (config/yaml.h) */
	struct hs_ydoc *point_doc; /* the base with the fixed overrides, frozen: each point runs on an overlay of it
				    * (NULL when they fail: then each point applies them, and fails with them) */
	struct hs_cluster *cluster; /* built once from point_doc when no axis changes `cluster:`, shared by every
				     * point's scenario (read-only but for its thread-safe memo); else NULL */
	uint64_t cluster_id;   /* with cluster: the number that names it to the threads' caches (hs_workload) */
	struct hs_strlist sets; /* fixed overrides (owned strings) */
	hs_sweep_axis axes[HS_SWEEP_MAX_AXES];
	int naxes;
	size_t npoints;
	char metric[64];       /* a numeric CSV column */
	int maximise;
	char output[1024];     /* CSV path (sweep's `output:`, else <sweep>.csv in the current folder) */
	uint64_t hash;         /* of the sweep and base files and the settings: journals of another sweep are not reused */
	int closed_form;       /* HS_SIM_EVENT, HS_SIM_CLOSED or HS_SIM_CLOSED_ITEMS (the default): sim/study/simulate.h */
} hs_sweep;

/* Time every point by the event run (on 0: HS_SIM_EVENT), or in closed form where it can: on the task graph
 * (HS_SIM_CLOSED) or from the schedule's items where the step allows it (HS_SIM_CLOSED_ITEMS, the default;
 * the same rows, faster); whether the event run was asked for is part of the journal's hash. */
void hs_sweep_set_closed_form(hs_sweep *sw, int on);

/* Columns after the axes, in CSV order. The numeric ones can be metrics. */
extern const char *const hs_sweep_columns[];
int hs_sweep_metric_valid(const char *name);
/* Default goal of a metric: 1 to maximise (mfu, hfu, tokens_per_s), 0 to minimise (times, costs, energy). */
int hs_sweep_metric_maximise(const char *name);

int hs_sweep_load(const char *path, hs_sweep *sw, hs_err *err);
void hs_sweep_free(hs_sweep *sw);
/* The value index of each axis of point i. */
void hs_sweep_point(const hs_sweep *sw, size_t i, int *idx);

/* One evaluated point: the CSV row without its rank column, and the metric for ranking (NAN when not ok). */
typedef struct hs_sweep_row {
	char *text;   /* malloc'd; NULL while not done */
	double metric;
	int ok;
	int closed;   /* ok and timed in closed form (for counts; the row's path column says it too) */
	int items;    /* ... from the schedule's items, without a task graph (sim/exec/pipe_step.c) */
	uint64_t items_walked, items_extrapolated; /* of those items: hs_result's */
} hs_sweep_row;

/* Run point i. Returns -1 for errors that make the whole sweep wrong; a point that cannot run is a row with its
 * reason: status `infeasible` (it does not divide, or does not fit) or `invalid` (a layout Megatron-LM refuses:
 * sim/study/sweep_rules.h). */
int hs_sweep_eval(const hs_sweep *sw, size_t i, hs_sweep_row *row, hs_profile_cache *cache, hs_err *err);

/* Journals: "<output>.part-<R>". */
void hs_sweep_journal_name(const hs_sweep *sw, int rank, char *buf, size_t n);
/* Read every journal of this sweep beside the output into rows[npoints] (rows already set are kept). Returns
 * how many rows are set. */
size_t hs_sweep_journal_read(const hs_sweep *sw, hs_sweep_row *rows);
/* Open this rank's journal for appending (a header is written when it is new or belongs to another sweep). */
FILE *hs_sweep_journal_open(const hs_sweep *sw, int rank, hs_err *err);
/* Append one row and flush it; -1 with errno set when the write failed (a full disk). */
int hs_sweep_journal_append(FILE *f, size_t i, const hs_sweep_row *row);
void hs_sweep_journal_remove(const hs_sweep *sw);

/* Rank of each ok row by the metric (1 = best; ties by point index); 0 for rows that are not ok. */
void hs_sweep_rank(const hs_sweep *sw, const hs_sweep_row *rows, int *rank);
/* Write the CSV (atomically): header, then one line per point in point order. */
int hs_sweep_write_csv(const hs_sweep *sw, const hs_sweep_row *rows, const int *rank, const char *path, hs_err *err);
/* Is column `col` of hs_sweep_columns numeric (a metric)? The CSV and HDF5 writers type cells by it. */
int hs_sweep_column_numeric(int col);

/* Split a CSV line into fields (quotes handled); returns the count, fields malloc'd into out[max]. */
int hs_csv_split(const char *line, char **out, int max);

#endif
