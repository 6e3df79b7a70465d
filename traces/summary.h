/* Step summaries of a training scenario's result, in pluggable formats (text for people, JSON for tools).
 * A format is a function table entry; hs_summary_format("json") finds one by name. */
#ifndef HS_SUMMARY_H
#define HS_SUMMARY_H

#include <stdio.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"
#include "sim/study/simulate.h"

typedef struct hs_summary_format {
	const char *name;
	void (*write)(FILE *f, const hs_sim *sim, int detail); /* deterministic: no wall-clock figures */
} hs_summary_format;

const hs_summary_format *hs_summary_format_find(const char *name);

#endif
