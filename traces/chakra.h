/* hs_chakra: MLCommons Chakra execution traces (ET) in and out (docs/chakra.md).
 *
 * A workload is one file per rank, PREFIX.<rank>.et for ranks 0..N-1: a GlobalMetadata message, then Node
 * messages, each preceded by its length as a varint. The field numbers below are those of the schema
 * mlcommons/chakra schema/protobuf/et_def.proto at commit 21585d8f2d65603d791d2121e3d4632351120262
 * (2026-05-20); the reader and writer are our own (traces/chakra_wire.h says why not protobuf-c).
 *
 * Reading turns the files into hetsim's task graph (models/graph.h): one rep per rank, rank r on the cluster's
 * device r; compute nodes on the compute stream, collectives on the comm stream, sends on the p2p stream, each
 * stream in a topological order of the rank's nodes (file order where the file is already topological).
 * Collectives rendezvous across the members of their group by issue order; a receive matches the send with the
 * same (source, destination, tag) in issue order and becomes a dependency on it. */
#ifndef HS_CHAKRA_H
#define HS_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "models/graph.h"
#include "sim/base/err.h"
#include "sim/study/simulate.h"

/* et_def.proto: message Node */
enum { HS_ETN_ID = 1, HS_ETN_NAME = 2, HS_ETN_TYPE = 3, HS_ETN_CTRL_DEPS = 4, HS_ETN_DATA_DEPS = 5,
       HS_ETN_START_MICROS = 6, HS_ETN_DURATION_MICROS = 7, HS_ETN_INPUTS = 8, HS_ETN_OUTPUTS = 9,
       HS_ETN_ATTR = 10 };
/* message GlobalMetadata */
enum { HS_ETG_VERSION = 1, HS_ETG_ATTR = 2 };
/* message IOInfo */
enum { HS_ETIO_VALUES = 1, HS_ETIO_SHAPES = 2, HS_ETIO_TYPES = 3 };
/* message AttributeProto: name, doc_string, and the oneof value (the *_list messages hold `values = 1`) */
enum { HS_ETA_NAME = 1, HS_ETA_DOC = 2, HS_ETA_DOUBLE = 3, HS_ETA_DOUBLE_LIST = 4, HS_ETA_FLOAT = 5,
       HS_ETA_FLOAT_LIST = 6, HS_ETA_INT32 = 7, HS_ETA_INT32_LIST = 8, HS_ETA_INT64 = 9, HS_ETA_INT64_LIST = 10,
       HS_ETA_UINT32 = 11, HS_ETA_UINT32_LIST = 12, HS_ETA_UINT64 = 13, HS_ETA_UINT64_LIST = 14,
       HS_ETA_SINT32 = 15, HS_ETA_SINT32_LIST = 16, HS_ETA_SINT64 = 17, HS_ETA_SINT64_LIST = 18,
       HS_ETA_FIXED32 = 19, HS_ETA_FIXED32_LIST = 20, HS_ETA_FIXED64 = 21, HS_ETA_FIXED64_LIST = 22,
       HS_ETA_SFIXED32 = 23, HS_ETA_SFIXED32_LIST = 24, HS_ETA_SFIXED64 = 25, HS_ETA_SFIXED64_LIST = 26,
       HS_ETA_BOOL = 27, HS_ETA_BOOL_LIST = 28, HS_ETA_STRING = 29, HS_ETA_STRING_LIST = 30, HS_ETA_BYTES = 31,
       HS_ETA_BYTES_LIST = 32 };
/* enum NodeType */
enum hs_et_node_type { HS_ET_INVALID = 0, HS_ET_METADATA = 1, HS_ET_MEM_LOAD = 2, HS_ET_MEM_STORE = 3,
		       HS_ET_COMP = 4, HS_ET_SEND = 5, HS_ET_RECV = 6, HS_ET_COLL = 7 };
/* enum CollectiveCommType */
enum hs_et_comm_type { HS_ET_ALL_REDUCE = 0, HS_ET_REDUCE = 1, HS_ET_ALL_GATHER = 2, HS_ET_GATHER = 3,
		       HS_ET_SCATTER = 4, HS_ET_BROADCAST = 5, HS_ET_ALL_TO_ALL = 6, HS_ET_REDUCE_SCATTER = 7,
		       HS_ET_REDUCE_SCATTER_BLOCK = 8, HS_ET_BARRIER = 9 };

/* What a read found, for the command's report. */
typedef struct hs_chakra_info {
	int ranks;
	size_t nodes;         /* Node messages read, every rank */
	size_t unpriced;      /* compute nodes with neither a duration nor shapes the op-time model prices: 0 s */
	size_t priced;        /* compute nodes priced by the op-time model from their op name and shapes */
	size_t skipped;       /* metadata and invalid nodes (their dependencies pass through them) */
	size_t bytes;         /* file bytes read */
} hs_chakra_info;

/* Read PREFIX.0.et, PREFIX.1.et, ... (up to the first rank without a file) into *g: one rep per rank,
 * rep r with dp_index r. `ndevices` bounds the ranks (rank r runs on device r). -1 with err (HS_EINPUT, the
 * file, the byte offset or node id, and what was expected); *g needs no freeing then. */
int hs_chakra_read(const char *prefix, int ndevices, hs_graph *g, hs_chakra_info *info, hs_err *err);
/* The same from one rank's file image per rank (files[r] of len[r] bytes, named names[r] in messages): the
 * reader without the file system (the fuzz target). */
int hs_chakra_read_mem(const uint8_t *const *files, const size_t *len, const char *const *names, int nranks,
		       int ndevices, hs_graph *g, hs_chakra_info *info, hs_err *err);

/* Write the simulated step of a built-in workload (sim->b, symmetric, and its result sim->r) for every rank of
 * the job as PREFIX.<rank>.et: compute nodes with their simulated durations (duration_micros, and hetsim's
 * exact `duration_ps`), collectives with comm_type, comm_size and comm_group, sends and receives with comm_src,
 * comm_dst and comm_tag, and control dependencies for every stream's order. *files gets the number written. */
int hs_chakra_write(const char *prefix, const hs_sim *sim, int *files, size_t *nodes, hs_err *err);

/* `hetsim run --workload chakra:PREFIX`: the scenario's cluster, fabric and simulation settings with the work of
 * the trace. The scenario's parallelism is replaced by the trace's ranks as a flat layout (tp = cp = pp = 1,
 * dp = ranks) so that every rank is its own rep on device rank. Takes the document over. */
int hs_chakra_simulate(hs_ydoc *doc, const char *path, const char *prefix, hs_sim *out, hs_chakra_info *info,
		       hs_err *err);

#endif
