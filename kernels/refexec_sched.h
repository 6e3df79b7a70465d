/* hsr: the reference executor's scheduling core, apart from any device: which task to issue next, and the
 * event protocol every task follows. Plain C11 with libc only (as graph_reader.c), so that refexec.cu (CUDA
 * streams and events, NCCL) and refexec_cpu.c (threads whose kernels sleep; what `make test` runs without a
 * GPU) issue a graph in the very same order with the very same waits.
 *
 * The protocol, per task: its stream waits for the end event of each dependency, records the task's start
 * event, runs the work, records its end event. Compute tasks are issued one by one, each (rank, stream)
 * queue in file order, as soon as their dependencies have been issued; the member tasks of one collective
 * instance (and both halves of a send) are issued together, when every member is at the head of its queue
 * with its dependencies issued: first every member's waits and start, then the communication of the whole
 * instance (one ncclGroupStart/End on CUDA), then every member's end. A backend supplies the four verbs. */
#ifndef HSR_REFEXEC_SCHED_H
#define HSR_REFEXEC_SCHED_H

#include <stddef.h>

#include "graph_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hsr_backend {
	void *ctx;
	/* task ti's stream waits for the end event of task dep */
	void (*wait)(void *ctx, size_t ti, size_t dep);
	/* record task ti's start (end = 0) or end (end = 1) event on its stream */
	void (*record)(void *ctx, size_t ti, int end);
	/* op k (0 .. op_count-1) of compute task ti, on its stream */
	void (*op)(void *ctx, size_t ti, unsigned k);
	/* the communication of one instance: member tasks mem[0..n-1], after their starts, before their ends */
	void (*inst)(void *ctx, const size_t *mem, int n);
} hsr_backend;

typedef struct hsr_sched {
	const hsg_graph *g;
	size_t *inst_first; /* [ninst + 1]: instance -> member tasks, CSR over inst_tasks */
	size_t *inst_tasks;
} hsr_sched;

/* Build the instance table; -1 with "what" in msg when a send/recv instance lacks a half. */
int hsr_sched_init(hsr_sched *s, const hsg_graph *g, const char *file, char *msg, size_t msglen);
void hsr_sched_free(hsr_sched *s);
/* Issue every task of one step through the backend; -1 with a message when the graph cannot be scheduled (a
 * cycle through stream order and collective instances). */
int hsr_run_step(const hsr_sched *s, const hsr_backend *b, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif
