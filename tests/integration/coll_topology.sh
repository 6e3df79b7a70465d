#!/bin/sh
# Every example topology (scenarios/topology/) runs through `hetsim coll` on both network models, and the
# flow model gives a positive time for all-reduce and all-to-all over the first 16 devices (kept small: fast).
set -eu
HETSIM=${HETSIM:-bin/hetsim}
for f in scenarios/topology/*.yaml; do
	n=$("$HETSIM" coll --sizes 8:8 --json "$f" | sed -n "s/.*\"ranks\":\([0-9]*\).*/\1/p"); [ "$n" -gt 16 ] && n=16
	for fid in analytical flow; do
		for op in all_reduce all_to_all; do
			out=$("$HETSIM" coll --fidelity $fid --op $op --sizes 1M:1M --ranks $n --json "$f")
			echo "$out" | grep -q '"time_us":[0-9]' || { echo "$f $fid $op: $out"; exit 1; }
		done
	done
done
# bad input: unknown fidelity is a usage error (exit 2)
set +e
"$HETSIM" coll --fidelity packet scenarios/topology/explicit.yaml >/dev/null 2>&1
[ $? -eq 2 ] || { echo "--fidelity packet should exit 2"; exit 1; }
exit 0
