#!/bin/sh
# Every scenario shipped in scenarios/ runs: training scenarios and fabric experiments through `hetsim run`,
# validation manifests through `hetsim validate`, cluster-only scenarios (nccl-tests hardware) through
# `hetsim coll`, sweeps (scenarios/sweeps/) through `hetsim sweep`. Each must exit 0.
set -u
H=${HETSIM:-bin/hetsim}
fail=0; n=0
for f in $(find scenarios -name '*.yaml' | sort); do
	if grep -q '^entries:' "$f"; then
		cmd="$H validate $f"
	elif grep -q '^axes:' "$f"; then
		cmd="$H sweep -q -j 2 $f -o ${TMPDIR:-/tmp}/hetsim-scenarios-sweep-$$.csv"
	elif grep -q '^model:' "$f" || grep -q '^jobs:' "$f" || grep -q '^kind: *fabric' "$f"; then
		cmd="$H run $f"
	elif grep -q 'kind: explicit' "$f"; then
		# an explicit graph is timed on the routed flow model only (analytical refuses it)
		cmd="$H coll $f --fidelity flow --sizes 1M:64M --factor 8"
	else
		cmd="$H coll $f --sizes 1M:64M --factor 8"
	fi
	n=$((n + 1))
	if ! out=$($cmd 2>&1); then
		echo "FAIL: $cmd"; echo "$out" | tail -5; fail=1
	fi
done
rm -f "${TMPDIR:-/tmp}/hetsim-scenarios-sweep-$$.csv"
echo "$n scenarios run"
[ "$n" -gt 0 ] || fail=1
exit $fail
