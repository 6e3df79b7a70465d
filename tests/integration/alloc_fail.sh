#!/bin/sh
# Fault injection, as SQLite tests its allocation paths (issue 18): make the N-th allocation fail
# (HETSIM_FAIL_ALLOC=N, sim/base/alloc.c) for N walked over a run of the default scenario that writes a trace
# and an HDF5 file. Every run must end in exit 0, or in exit 1 with "hetsim: out of memory" last on stderr;
# never a signal or another status, and never a temporary "<file>.tmp.<pid>" left behind. Under
# `make check-asan` the same walk runs on the sanitized binary, so an allocation path that reads freed or
# uninitialised memory fails here. The walk: every N to 40, then N x 1.25 until a run needs fewer allocations.
set -u
H=${HETSIM:-bin/hetsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0
n=1
while :; do
	rm -f "$tmp"/*
	HETSIM_FAIL_ALLOC=$n "$H" run scenarios/default.yaml --trace "$tmp/t.json" --hdf5 "$tmp/r.h5" \
		>"$tmp/out" 2>"$tmp/err"
	st=$?
	runs=$((runs + 1))
	left=$(find "$tmp" -name '*.tmp.*' | head -1)
	[ -z "$left" ] || { echo "FAIL: N=$n left $left behind"; fail=1; }
	if [ "$st" -eq 0 ]; then
		break
	elif [ "$st" -ne 1 ] || ! tail -1 "$tmp/err" | grep -q "^hetsim: out of memory"; then
		echo "FAIL: N=$n exited $st:"; tail -3 "$tmp/err"; fail=1
		break
	fi
	if [ "$n" -lt 40 ]; then n=$((n + 1)); else n=$((n + n / 4)); fi
	[ "$n" -lt 100000000 ] || { echo "FAIL: the walk never reached a run that succeeds"; fail=1; break; }
done
# the walk must have reached the end of the run: a success after at least one injected failure
[ "$runs" -gt 1 ] || { echo "FAIL: the first run succeeded: HETSIM_FAIL_ALLOC is not honoured"; fail=1; }
echo "alloc_fail: $runs runs, the last with N=$n succeeded"
exit $fail
