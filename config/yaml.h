/* hs_yaml: a YAML document as a small tree of nodes that remember where they came from.
 *
 * libyaml parses; this module keeps every scalar, mapping and sequence with its file, line and column so
 * that any later check can say "file:line:col: key.path: what is wrong". Each mapping value also carries a
 * `used` mark: the reader marks what it consumed, and hs_cfg reports what nobody asked for as an unknown key.
 * Anchors and aliases are rejected (scenarios do not need them, and they make positions ambiguous). */
#ifndef HS_YAML_H
#define HS_YAML_H

#include <stddef.h>

#include "sim/base/err.h"

enum hs_ykind { HS_Y_SCALAR, HS_Y_MAP, HS_Y_SEQ };

typedef struct hs_ynode hs_ynode;
struct hs_ynode {
	enum hs_ykind kind;
	int line, col;       /* 1-based position of the node's start */
	const char *file;    /* borrowed from the document */
	char *str;           /* HS_Y_SCALAR: the text; NULL for others */
	int quoted;          /* scalar was quoted: never a number or a null */
	size_t n;            /* HS_Y_MAP: pairs; HS_Y_SEQ: items */
	hs_ynode **keys;     /* HS_Y_MAP: key nodes (scalars) */
	hs_ynode **vals;     /* HS_Y_MAP: values; HS_Y_SEQ: items */
	int used;            /* set by readers when consumed (for unknown-key reporting) */
	int borrowed;        /* str belongs to another document (a copy made by hs_yaml_set in an overlay) */
	int frozen;          /* the node's document is frozen (hs_yaml_freeze): overlays share it, so it never
			      * changes; hs_yaml_set changes a copy of it */
};

typedef struct hs_ydoc hs_ydoc;

/* Parse a file. NULL on error, with "file:line:col: message" in err (HS_EINPUT). */
hs_ydoc *hs_yaml_load_file(const char *path, hs_err *err);
/* Parse a string; `name` stands for the file name in messages. */
hs_ydoc *hs_yaml_load_string(const char *text, size_t len, const char *name, hs_err *err);
void hs_yaml_free(hs_ydoc *doc);
/* An explicit null: an unquoted scalar that is empty (`key:`), `~` or `null`. */
int hs_yaml_is_null(const hs_ynode *n);
/* Freeze a document: from now on it is read-only (to hs_yaml_set too) and overlays can share its nodes. */
void hs_yaml_freeze(hs_ydoc *doc);
/* A copy of a frozen document for running one of many variants of it (a sweep's point): it shares the
 * source's nodes, and hs_yaml_set copies only the mappings and lists on its path before changing them, so a copy
 * costs what its overrides touch, not the document's size. Positions and file names are the source's. The
 * source must stay alive, frozen, until its overlays are freed; threads may overlay one source at once. */
hs_ydoc *hs_yaml_overlay(const hs_ydoc *frozen);
hs_ynode *hs_yaml_root(hs_ydoc *doc);
const char *hs_yaml_name(const hs_ydoc *doc);

/* Mapping lookup by key; NULL when absent or when `map` is not a mapping. Does not mark used. */
hs_ynode *hs_yaml_get(const hs_ynode *map, const char *key);

/* Apply a `--set a.b.c=value` override: walk mappings by dotted path (creating missing ones) and put the
 * value there; the value is parsed as YAML, so `--set model={preset: gpt3-1.3b}` works. Sequence items are
 * addressed by index (`cluster.groups.0.nodes=4`). The new nodes are positioned at "<--set>:1:col". */
int hs_yaml_set(hs_ydoc *doc, const char *assignment, hs_err *err);
/* Is path[0..n) a key path as --set takes it: names (no '.', '[' or ']' in them) joined by '.', each optionally
 * followed by [N] for a list item (cluster.groups[0].nodes, cluster.groups.0.nodes)? 0 when not: an empty name
 * (a.., .a), a bracket out of place (sim]ulation, a[0, a[x]) or text after one (a[0]b). */
int hs_yaml_path_ok(const char *path, size_t n);
/* Apply n `--set` assignments in order; -1 with err at the first that fails (the document is then partly set). */
int hs_yaml_set_all(hs_ydoc *doc, const char *const *assignments, int n, hs_err *err);
/* Load a file and apply n `--set` assignments in order; NULL with err (nothing to free) on the first failure. */
hs_ydoc *hs_yaml_load_file_set(const char *path, const char *const *assignments, int n, hs_err *err);

#endif
