/* hs_fabric_run: the `hetsim run` entry point for scenarios whose root has `kind: fabric`.
 *
 * Parses the document (every key checked; quantities with units), runs the traffic once per scheme listed
 * under `schemes:` (same seed, so the same operations), and prints a comparison table across schemes (text)
 * or the same as one JSON object (json = 1) to `out`. Deterministic: a seed gives byte-identical output; no
 * wall-clock figure is printed. Returns 0, or -1 with err filled (HS_EINPUT for bad input, with
 * "file:line:col: key.path: what (expected ...)"); nothing is printed on error. Keys: docs/fabric.md. */
#ifndef HS_FABRIC_RUN_H
#define HS_FABRIC_RUN_H

#include <stdio.h>

#include "config/yaml.h"
#include "sim/base/err.h"

int hs_fabric_run(hs_ydoc *doc, int json, FILE *out, hs_err *err);

#endif
