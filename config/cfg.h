/* hs_cfg: typed reading of YAML mappings with errors that point at the file, line, column and key path.
 *
 * Every reader takes the mapping, the dotted path of that mapping (for messages) and a key. A key that is
 * absent takes the default; `required` readers fail instead. Each mapping's reader first calls
 * hs_cfg_known() with the keys it understands, so a misspelling is an error naming the nearest known key. */
#ifndef HS_CFG_H
#define HS_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "config/units.h"
#include "config/yaml.h"
#include "sim/base/err.h"

/* Format an error at node `n`: "file:line:col: path.key: message". Returns -1. */
int hs_cfg_err(const hs_ynode *n, hs_err *err, const char *path, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Fail on the first key of `map` that is not in the NULL-terminated `known`, suggesting the nearest one.
 * Also fails if `map` is not a mapping (expected: `what`). */
int hs_cfg_known(const hs_ynode *map, const char *path, const char *const *known, const char *what, hs_err *err);

/* Levenshtein distance (insert, delete, substitute; 99 for words over 63 characters). */
size_t hs_cfg_edit_distance(const char *a, const char *b);
/* Nearest candidate by edit distance, or NULL when nothing is close (distance > max(2, len/3)). */
const char *hs_cfg_suggest(const char *word, const char *const *cands);

/* A number with units, within [lo, hi]. `def` is used when the key is absent; pass `required` to fail. */
int hs_cfg_num(const hs_ynode *map, const char *path, const char *key, enum hs_unit u, double lo, double hi,
	       double def, int required, double *out, hs_err *err);
/* An integer (units allowed for counts: '2k'), within [lo, hi]. */
int hs_cfg_int(const hs_ynode *map, const char *path, const char *key, int64_t lo, int64_t hi, int64_t def,
	       int required, int64_t *out, hs_err *err);
int hs_cfg_bool(const hs_ynode *map, const char *path, const char *key, int def, int *out, hs_err *err);
/* A string; *out borrows from the document. */
int hs_cfg_str(const hs_ynode *map, const char *path, const char *key, const char *def, int required,
	       const char **out, hs_err *err);
/* One of the NULL-terminated `names`; *out is its index. */
int hs_cfg_enum(const hs_ynode *map, const char *path, const char *key, const char *const *names, int def,
		int *out, hs_err *err);
/* Parse a scalar node as a quantity (for sequences and computed keys). */
int hs_cfg_node_num(const hs_ynode *n, const char *path, const char *key, enum hs_unit u, double lo, double hi,
		    double *out, hs_err *err);

#endif
