#!/bin/sh
# Runs every unit test binary ($BUILD/tests/test_*) and every integration script (tests/integration/*.sh).
# Each script gets HETSIM (the binary under test) and exits non-zero on failure.
# A test that cannot run here (a tool it needs is missing) exits 77, as automake's test drivers read it, with
# the reason as its last line of output; it is counted as skipped, not passed, and printed "skip  NAME (reason)".
# Prints one closing line: "tests: N passed, N failed, N skipped".
set -u
BUILD=${BUILD:-build}
HETSIM=${HETSIM:-bin/hetsim}
export HETSIM BUILD
export CK_FORK=yes
pass=0; fail=0; skip=0; failed=""
# one test's verdict from its exit status $1 (0 ok, 77 skipped, else failed), its name $2 and its output $3
verdict() {
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1)); printf 'ok    %s\n' "$2"
	elif [ "$1" -eq 77 ]; then
		skip=$((skip + 1)); printf 'skip  %s (%s)\n' "$2" "$(printf '%s\n' "$3" | tail -1)"
	else
		fail=$((fail + 1)); failed="$failed $2"
		printf 'FAIL  %s\n%s\n' "$2" "$3"
	fi
}
# Unit tests share nothing (each is its own process over its own data): two at a time, verdicts in name order.
U=$(mktemp -d) || exit 2
trap 'rm -rf "$U"' EXIT INT TERM
for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && echo "$t"; done > "$U/list"
k=0
while IFS= read -r t; do
	k=$((k + 1))
	( "$t" > "$U/$k.out" 2>&1; echo $? > "$U/$k.rc" ) &
	[ $((k % 2)) -eq 0 ] && wait
done < "$U/list"
wait
k=0
while IFS= read -r t; do
	k=$((k + 1))
	verdict "$(cat "$U/$k.rc")" "$(basename "$t")" "$(cat "$U/$k.out")"
done < "$U/list"
for s in tests/integration/*.sh; do
	[ -f "$s" ] || continue
	out=$(sh "$s" 2>&1); verdict $? "$(basename "$s")" "$out"
done
# golden outputs of every shipped scenario, byte for byte (tests/golden/run.sh --update regenerates them)
if out=$(sh tests/golden/run.sh 2>&1); then
	pass=$((pass + 1)); printf 'ok    golden (%s)\n' "$(echo "$out" | tail -1)"
else
	fail=$((fail + 1)); failed="$failed golden"
	printf 'FAIL  golden\n%s\n' "$out"
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
