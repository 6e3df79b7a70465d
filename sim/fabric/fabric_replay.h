/* hs_fabric_replay: a fabric experiment on recorded collective traffic (hetsim run FABRIC.yaml --traffic-from
 * SCENARIO.yaml, docs/fabric.md). The caller gives the step's scale-up collectives (what packet fidelity puts
 * on the fabric model, with how often a step runs each) and, per scheme of the experiment, the step time the
 * scenario takes at packet fidelity on the experiment's receiver; this runs each collective once per scheme
 * on that receiver, weighs its operations' latencies by its count, and prints the comparison: per class of
 * operation (data, tail flag, head update) P50/P99/P99.9, the scale-up communication per step and the step
 * time, scheme beside scheme; and the bytes per receiver against the collectives' closed form. */
#ifndef HS_FABRIC_REPLAY_H
#define HS_FABRIC_REPLAY_H

#include <stdio.h>

#include "sim/fabric/fabric_coll.h"
#include "sim/fabric/fabric_exp.h"

typedef struct hs_replay_coll {
	hs_fcoll c;   /* op, ranks, bytes, protocol */
	double count; /* per step */
} hs_replay_coll;

typedef struct hs_replay_row {
	hs_fabric_lat cls[HS_FCOLL_NCLS];
	double comm_s;        /* sum over the collectives of count x its time */
	double step_s;        /* the caller's */
	double rx_bytes;      /* per receiver per step: payload of data operations (count-weighted) */
	double closed_bytes;  /* the same from the closed form */
	uint64_t events;
} hs_replay_row;

/* Run every collective under scheme `sch` of spec s; row->step_s is left as it is. */
void hs_fabric_replay_run(const hs_fabric_exp_spec *s, const hs_credit_scheme *sch, const hs_replay_coll *v, int n,
			  hs_replay_row *row);
/* Print rows[s->nschemes] (text, or one JSON object). `from`: the scenario's name. */
void hs_fabric_replay_print(FILE *out, int json, const hs_fabric_exp_spec *s, const char *from,
			    const hs_replay_coll *v, int n, const hs_replay_row *rows);

#endif
