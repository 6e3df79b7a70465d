#!/bin/sh
# Golden tests: every shipped scenario, through the commands users run, compared byte for byte with the output
# stored in tests/golden/expected/ (as htsim's tests and SimGrid's tesh do). A case is one line of
# tests/golden/cases: `NAME | SHELL COMMAND`, run with $H (the hetsim binary) and $T (a scratch folder);
# its stdout, stderr and exit status are the output. Wall-clock figures are not in default output (`--timing`), so a
# difference is a change of behaviour.
#   tests/golden/run.sh            compare; prints one line per failing case and a diff, exits 1 on any
#   tests/golden/run.sh --update   rewrite the expected outputs (review `git diff tests/golden` before committing)
#   tests/golden/run.sh NAME...    only these cases
#   GOLDEN_JOBS=N                  cases run N at a time (default: the CPUs, at most 4); output is in case order
set -u
H=${HETSIM:-bin/hetsim}
dir=$(cd "$(dirname "$0")" && pwd)
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }
R=$(mktemp -d) || exit 2
trap 'rm -rf "$R"' EXIT INT TERM
HETSIM_NO_PROGRESS=1 # a long flow run would print its progress at a wall-clock pace
export H HETSIM_NO_PROGRESS
jobs=${GOLDEN_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
[ "$jobs" -lt 1 ] && jobs=1

# One case: run it in a scratch folder of its own (its name differs from run to run: written as $T), compare or
# update, and leave R/<index>.res ("pass" or "fail") and R/<index>.log (what to print) behind.
one() { # one INDEX NAME CMD
	T="$R/t$1"
	mkdir -p "$T"
	export T
	out=$( (sh -c "$3" 2>&1; echo "[exit $?]") | sed "s|$T|\$T|g")
	exp="$dir/expected/$2.out"
	if [ $update = 1 ]; then
		printf '%s\n' "$out" > "$exp"; echo pass > "$R/$1.res"
	elif [ -f "$exp" ] && [ "$(cat "$exp")" = "$out" ]; then
		echo pass > "$R/$1.res"
	else
		echo fail > "$R/$1.res"
		{ echo "FAIL  golden $2: $3"
		  if [ -f "$exp" ]; then printf '%s\n' "$out" | diff "$exp" - | head -20; else echo "  (no $exp: run with --update)"; fi
		} > "$R/$1.log"
	fi
	rm -rf "$T"
}

# the selected cases, numbered in file order
i=0
while IFS= read -r line; do
	case "$line" in ''|'#'*) continue ;; esac
	name=${line%% |*}
	if [ $# -gt 0 ]; then
		keep=0; for a in "$@"; do [ "$a" = "$name" ] && keep=1; done
		[ $keep = 1 ] || continue
	fi
	i=$((i + 1))
	printf '%s\n' "$line" > "$R/$i.case"
done < "$dir/cases"
n=$i
# worker w takes cases w, w + jobs, w + 2 jobs, ...
w=1
while [ $w -le "$jobs" ]; do
	( k=$w
	  while [ $k -le $n ]; do
		line=$(cat "$R/$k.case")
		one "$k" "${line%% |*}" "${line#*| }"
		k=$((k + jobs))
	  done ) &
	w=$((w + 1))
done
wait
pass=0; fail=0
k=1
while [ $k -le $n ]; do
	if [ "$(cat "$R/$k.res" 2>/dev/null)" = pass ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		if [ -f "$R/$k.log" ]; then cat "$R/$k.log"; else echo "FAIL  golden case $k: no result"; fi
	fi
	k=$((k + 1))
done
echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
