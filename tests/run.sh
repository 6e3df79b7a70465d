#!/bin/sh
# Runs every unit test binary ($BUILD/tests/test_*) and every integration script (tests/integration/*.sh).
# Each script gets HETSIM (the binary under test) and exits non-zero on failure.
# Prints one closing line: "tests: N passed, N failed".
set -u
BUILD=${BUILD:-build}
HETSIM=${HETSIM:-bin/hetsim}
export HETSIM BUILD
export CK_FORK=yes
pass=0; fail=0; failed=""
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	if out=$("$t" 2>&1); then
		pass=$((pass + 1)); printf 'ok    %s\n' "$(basename "$t")"
	else
		fail=$((fail + 1)); failed="$failed $(basename "$t")"
		printf 'FAIL  %s\n%s\n' "$(basename "$t")" "$out"
	fi
done
for s in tests/integration/*.sh; do
	[ -f "$s" ] || continue
	if out=$(sh "$s" 2>&1); then
		pass=$((pass + 1)); printf 'ok    %s\n' "$(basename "$s")"
	else
		fail=$((fail + 1)); failed="$failed $(basename "$s")"
		printf 'FAIL  %s\n%s\n' "$(basename "$s")" "$out"
	fi
done
# golden outputs of every shipped scenario, byte for byte (tests/golden/run.sh --update regenerates them)
if out=$(sh tests/golden/run.sh 2>&1); then
	pass=$((pass + 1)); printf 'ok    golden (%s)\n' "$(echo "$out" | tail -1)"
else
	fail=$((fail + 1)); failed="$failed golden"
	printf 'FAIL  golden\n%s\n' "$out"
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
