#!/bin/sh
# An error writing stdout is caught: `hetsim run` into /dev/full exits non-zero. Skipped (exit 77) where there
# is no writable /dev/full (it is Linux's).
set -u
H=${HETSIM:-bin/hetsim}
[ -w /dev/full ] || { echo "no writable /dev/full"; exit 77; }
"$H" run scenarios/default.yaml >/dev/full 2>/dev/null; st=$?
[ "$st" != 0 ] || { echo "FAIL: writing to a full disk exited 0"; exit 1; }
exit 0
