#!/bin/sh
# Golden tests: every shipped scenario, through the commands users run, compared byte for byte with the output
# stored in tests/golden/expected/ (as htsim's tests and SimGrid's tesh do). A case is one line of
# tests/golden/cases: `NAME | SHELL COMMAND`, run with $H (the hetsim binary) and $T (a scratch folder);
# its stdout, stderr and exit status are the output. Wall-clock figures are not in default output (`--timing`), so a
# difference is a change of behaviour.
#   tests/golden/run.sh            compare; prints one line per failing case and a diff, exits 1 on any
#   tests/golden/run.sh --update   rewrite the expected outputs (review `git diff tests/golden` before committing)
#   tests/golden/run.sh NAME...    only these cases
set -u
H=${HETSIM:-bin/hetsim}
dir=$(dirname "$0")
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
export H T
HETSIM_NO_PROGRESS=1 # a long flow run would print its progress at a wall-clock pace
export HETSIM_NO_PROGRESS
pass=0; fail=0
while IFS= read -r line; do
	case "$line" in ''|'#'*) continue ;; esac
	name=${line%% |*}; cmd=${line#*| }
	if [ $# -gt 0 ]; then
		keep=0; for a in "$@"; do [ "$a" = "$name" ] && keep=1; done
		[ $keep = 1 ] || continue
	fi
	# the scratch folder's name differs from run to run: it is written as $T
	out=$( (sh -c "$cmd" 2>&1; echo "[exit $?]") | sed "s|$T|\$T|g")
	exp="$dir/expected/$name.out"
	if [ $update = 1 ]; then
		printf '%s\n' "$out" > "$exp"; pass=$((pass + 1)); continue
	fi
	if [ -f "$exp" ] && [ "$(cat "$exp")" = "$out" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL  golden $name: $cmd"
		if [ -f "$exp" ]; then printf '%s\n' "$out" | diff "$exp" - | head -20; else echo "  (no $exp: run with --update)"; fi
	fi
	rm -rf "${T:?}"/*
done < "$dir/cases"
echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
