#!/bin/sh
# hetsim sweep: a sweep interrupted (--limit, and a real SIGKILL) and resumed writes the same CSV as one run
# straight through; threads do not change the rows; a bad sweep exits 2. MPI runs: sweep_mpi.sh.
set -u
H=${HETSIM:-bin/hetsim}
S=scenarios/sweeps/llama3-8b-tp-pp.yaml
T=$(mktemp -d /tmp/hetsim-sweep-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$H" sweep -q "$S" -o "$T/full.csv" --hdf5 "$T/full.h5" > "$T/out.txt" || no "full sweep exited $?"
grep -q "points        360: " "$T/out.txt" || no "summary line missing: $(head -3 "$T/out.txt")"
[ "$(wc -l < "$T/full.csv")" -eq 361 ] || no "full.csv has $(wc -l < "$T/full.csv") lines, expected 361"
[ -s "$T/full.h5" ] || no "no HDF5"
ls "$T"/full.csv.part-* > /dev/null 2>&1 && no "journals left behind"

"$H" sweep -q "$S" -o "$T/jobs.csv" -j 4 > /dev/null || no "threaded sweep failed"
cmp -s "$T/full.csv" "$T/jobs.csv" || no "--jobs 4 changed the CSV"

# interrupted twice by --limit, then finished
"$H" sweep -q "$S" -o "$T/lim.csv" --limit 100 -j 3 > /dev/null || no "limit 1"
[ -f "$T/lim.csv" ] && no "a CSV was written before the sweep finished"
"$H" sweep -q "$S" -o "$T/lim.csv" --limit 77 > /dev/null || no "limit 2"
"$H" sweep -q "$S" -o "$T/lim.csv" > /dev/null 2>&1 || no "resume after --limit"
cmp -s "$T/full.csv" "$T/lim.csv" || no "resumed (--limit) CSV differs"

# killed for real, then resumed
timeout -s KILL 0.15 "$H" sweep -q "$S" -o "$T/kill.csv" -j 1 > /dev/null 2>&1
"$H" sweep -q "$S" -o "$T/kill.csv" > /dev/null 2>&1 || no "resume after SIGKILL"
cmp -s "$T/full.csv" "$T/kill.csv" || no "resumed (SIGKILL) CSV differs"

# bad sweeps
printf 'base: %s/scenarios/default.yaml\naxes: {parallelism.tpp: [1, 2]}\n' "$PWD" > "$T/bad.yaml"
out=$("$H" sweep -q "$T/bad.yaml" -o "$T/bad.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || no "unknown axis key exited $rc, expected 2"
echo "$out" | grep -q "did you mean 'tp'" || no "unknown axis key message: $out"
printf 'base: %s/scenarios/default.yaml\nmetric: speed\naxes: {parallelism.tp: [1, 2]}\n' "$PWD" > "$T/bad2.yaml"
"$H" sweep -q "$T/bad2.yaml" -o "$T/bad.csv" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || no "bad metric exited $rc, expected 2"
exit $fail
