/* Summaries of several jobs run together on one cluster (sim/study/jobs.h): each job's placement, its step
 * time alone and beside the others, and its slowdown, as text for people or JSON for tools
 * (docs/outputs.md, "Several jobs"). A format is a function table entry, found by name. */
#ifndef HS_JOBS_SUMMARY_H
#define HS_JOBS_SUMMARY_H

#include <stdio.h>

#include "sim/study/jobs.h"

typedef struct hs_jobs_format {
	const char *name;
	void (*write)(FILE *f, const hs_jobs *J); /* deterministic: no wall-clock figures */
} hs_jobs_format;

const hs_jobs_format *hs_jobs_format_find(const char *name);

#endif
