/* Chrome trace JSON (the "JSON Object Format" that Perfetto and chrome://tracing open) of one simulated step.
 *
 * Each simulated rank (rep) is a process track and each of its streams (compute, collectives, p2p) a thread
 * track; every task is a complete ("X") slice named by what it does ("fwd mb3", "bwd mb3 chunk1", "dp
 * reduce_scatter (grads)", "send act mb3 -> stage 2") with its attributes in args. Flow arrows join a
 * pipeline send to the task on the receiving rank that waited for it, and chain the members of each
 * collective rendezvous (symmetry off) so that one click shows who took part.
 *
 * Size: a slice is about 200 bytes. Traces of big runs are kept bounded by choosing ranks (`ranks`: "all",
 * a list "0,3,8-11", or "every:K") and by `max_events`: when the chosen ranks hold more tasks than that, every
 * k-th chosen rank is kept (k as small as fits) and `note` says so. The file is written atomically. */
#ifndef HS_TRACE_CHROME_H
#define HS_TRACE_CHROME_H

#include <stddef.h>

#include "sim/study/scenario.h"
#include "models/build.h"
#include "sim/exec/exec.h"

typedef struct hs_trace_opts {
	const char *ranks;  /* NULL or "all": every rep */
	size_t max_events;  /* 0: HS_TRACE_MAX_EVENTS */
	char note[256];     /* out: what was left out, or "" */
	int kept_reps;      /* out */
	size_t slices;      /* out: slices written */
	size_t flows;       /* out: flow arrows written */
	size_t counters;    /* out: counter tracks written (link utilisation, flow fidelity) */
} hs_trace_opts;

/* 2M slices is about 400 MB of JSON, about what Perfetto's UI loads comfortably in a browser tab. */
#define HS_TRACE_MAX_EVENTS 2000000

/* Parse a rank selection into keep[nreps] (1 = keep). -1 with err (HS_EINPUT) on a bad spec. */
int hs_trace_select(const char *spec, int nreps, unsigned char *keep, hs_err *err);
int hs_trace_chrome_write(const char *path, const hs_scenario *s, const hs_build *b, const hs_result *r,
			  hs_trace_opts *o, hs_err *err);

#endif
