/* The collectives inside a built-in workload's compute tasks (TP, CP and EP collectives in a layer), placed for
 * the Chakra ET writer (traces/chakra_write.c): which compute task is written as pieces, and each piece's
 * duration in picoseconds, so that the pieces of a task add up to the simulated task exactly.
 *
 * A compute task with collectives inside it becomes compute, collective, compute, ..., compute: the collectives
 * are COMM_COLL_NODEs that a Chakra consumer times itself (hetsim's reader re-times them by the closed forms or
 * on the network), the compute pieces are COMP_NODEs with the simulated time between them. Where each
 * collective falls is where the simulation put it (hs_result.inl, hs_simopts.record_inlayer). A collective's
 * piece is its time on replay (the same closed form at analytical fidelity); the compute pieces are the
 * task's simulated time less its collectives', split in proportion to the kernel time between them, the last
 * taking the rounding, so that the task's end is the same picosecond.
 *
 * A gradient-bucket slice of a backward pass (a compute task of scale 1/n, traces/graph_export.h) runs 1/n of
 * every op of the pass at analytical fidelity, but no consumer can run 1/n of a collective for 1/n of its
 * time (a collective's latency does not shrink with its bytes). So slice k is written with the collectives of
 * its own k-th share of the op list, whole (as the network path runs a slice, sim/exec/exec.c), and its
 * compute pieces are the slice's simulated time less those collectives. Each slice keeps its length, and every
 * collective of the pass runs once, whole: the bytes of each kind are the pass's.
 *
 * Not written as nodes: ring attention's KV send/recv steps (CP, a collective of type sendrecv, which has no
 * Chakra comm_type and overlaps the next attention kernel); their time stays in the compute pieces. */
#ifndef HS_CHAKRA_INLAYER_H
#define HS_CHAKRA_INLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/err.h"
#include "sim/study/simulate.h"

typedef struct hs_chakra_piece {
	uint32_t op; /* the collective's op (hs_graph.ops), or UINT32_MAX for a compute piece */
	uint64_t ps; /* a compute piece's duration */
} hs_chakra_piece;

typedef struct hs_chakra_inl {
	uint32_t *first;        /* [ntasks + 1]: task i's pieces are pieces[first[i] .. first[i + 1]) */
	hs_chakra_piece *pieces;
	size_t ntasks;
	size_t short_tasks;     /* tasks whose collectives' replay time exceeds the simulated task (their compute
				 * pieces are 0 and the task runs longer on replay) */
} hs_chakra_inl;

/* Place the in-layer collectives of sim's graph. The step must have been simulated keeping them
 * (hs_simulate_doc_traced); one whose graph has in-layer collectives but no record is an internal error. */
int hs_chakra_inl_plan(const hs_sim *sim, hs_chakra_inl *il, hs_err *err);
void hs_chakra_inl_free(hs_chakra_inl *il);

/* Task i's pieces (0: it is written as one compute node). */
static inline int hs_chakra_inl_npieces(const hs_chakra_inl *il, uint32_t i)
{
	return i < il->ntasks ? (int)(il->first[i + 1] - il->first[i]) : 0;
}
static inline const hs_chakra_piece *hs_chakra_inl_pieces(const hs_chakra_inl *il, uint32_t i)
{
	return il->pieces + il->first[i];
}

/* The Chakra CollectiveCommType of hetsim's collective `coll` (enum hs_coll_op), or -1 when it has none. */
int hs_chakra_comm_type(int coll);

#endif
