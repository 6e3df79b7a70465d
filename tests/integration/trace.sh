#!/bin/sh
# hetsim run --trace: the trace is written atomically and is JSON; --trace-ranks and --trace-limit bound it;
# bad values exit 2 and leave no file.
set -u
H=${HETSIM:-bin/hetsim}
T=$(mktemp -d /tmp/hetsim-trace-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
"$H" run --no-symmetry --trace "$T/all.json" scenarios/default.yaml > /dev/null || no "run --trace"
grep -q '"traceEvents":\[' "$T/all.json" || no "no traceEvents"
grep -q '"ph":"f"' "$T/all.json" || no "no flow events"
ls "$T" | grep -q tmp && no "temporary file left behind"
"$H" run --no-symmetry --trace "$T/two.json" --trace-ranks 0,4 scenarios/default.yaml > /dev/null || no "--trace-ranks"
[ "$(wc -c < "$T/two.json")" -lt "$(wc -c < "$T/all.json")" ] || no "--trace-ranks did not shrink the trace"
"$H" run --no-symmetry --trace "$T/lim.json" --trace-limit 100 scenarios/default.yaml 2> "$T/err" > /dev/null || no "--trace-limit"
grep -q "kept every" "$T/err" || no "--trace-limit did not say what it left out"
"$H" run --trace "$T/bad.json" --trace-ranks 0,x scenarios/default.yaml > /dev/null 2>&1; [ $? -eq 2 ] || no "bad --trace-ranks: expected 2"
[ -e "$T/bad.json" ] && no "a bad --trace-ranks left a file"
"$H" run --trace "$T/bad.json" --trace-limit 0 scenarios/default.yaml > /dev/null 2>&1; [ $? -eq 2 ] || no "bad --trace-limit: expected 2"
"$H" run --trace /nonexistent-dir/t.json scenarios/default.yaml > /dev/null 2>&1; [ $? -eq 2 ] || no "unwritable trace: expected 2"
exit $fail
