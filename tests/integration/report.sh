#!/bin/sh
# hetsim report on each kind of result: a run (HDF5 with tasks), a sweep (HDF5 and CSV), validate --json and a
# fabric run --json. Every plot is a non-empty PNG, index.html embeds them, summary.md links them. Skipped
# (exit 77) when gnuplot is absent.
set -u
H=${HETSIM:-bin/hetsim}
command -v gnuplot > /dev/null 2>&1 || { echo "gnuplot not found"; exit 77; }
T=$(mktemp -d /tmp/hetsim-report-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
check() { # check DIR N-PLOTS
	n=$(ls "$1"/*.png 2>/dev/null | wc -l)
	[ "$n" -eq "$2" ] || no "$1: $n plots, expected $2"
	for p in "$1"/*.png; do [ -s "$p" ] || no "$p is empty"; done
	[ "$(grep -o 'data:image/png;base64' "$1/index.html" | wc -l)" -eq "$2" ] || no "$1/index.html does not embed $2 images"
	grep -q '](.*\.png)' "$1/summary.md" || no "$1/summary.md links no image"
}
"$H" run --hdf5 "$T/run.h5" --hdf5-tasks scenarios/default.yaml > /dev/null || no "run --hdf5"
"$H" report "$T/run.h5" -o "$T/run" > /dev/null || no "report run"
# breakdown, memory, timeline and the links (at analytical fidelity the closed forms' per-link bytes, one bin)
check "$T/run" 4
"$H" sweep -q scenarios/sweeps/llama3-8b-tp-pp.yaml -j 4 -o "$T/sw.csv" --hdf5 "$T/sw.h5" > /dev/null || no "sweep"
"$H" report "$T/sw.h5" -o "$T/sw" > /dev/null || no "report sweep h5"
check "$T/sw" 2
"$H" report "$T/sw.csv" -o "$T/swcsv" > /dev/null || no "report sweep csv"
check "$T/swcsv" 2
"$H" validate --json scenarios/validation/korthikanti.yaml > "$T/val.json"
"$H" report "$T/val.json" -o "$T/val" > /dev/null || no "report validate"
check "$T/val" 1
"$H" run --json scenarios/fabric/response-incast.yaml --set simulation.ops=4000 --set simulation.warmup=400 > "$T/fab.json" || no "fabric run"
"$H" report "$T/fab.json" -o "$T/fab" > /dev/null || no "report fabric"
check "$T/fab" 2
# errors: not a result (2), no -o (2)
"$H" report scenarios/default.yaml -o "$T/x" > /dev/null 2>&1; [ $? -eq 2 ] || no "a scenario is not a result: expected exit 2"
"$H" report "$T/run.h5" > /dev/null 2>&1; [ $? -eq 2 ] || no "missing -o: expected exit 2"
exit $fail
