#!/bin/sh
# check_log.sh NAME LOG STATUS SECS [MIN]: did one libFuzzer run really fuzz? Fails (exit 1, with the reason)
# when the fuzzer exited non-zero (a crash, a leak, a sanitizer report), printed no "Done N runs in T
# second(s)" line, ran for less than SECS - 2 seconds, or ran MIN inputs or fewer. MIN defaults to issue 18's
# bar: more than 10,000 inputs in 60 s, pro rata (SECS * 10000 / 60). On success prints "fuzz_NAME: N runs in
# Ts, cov: C ft: F" (libFuzzer's edges and features at the end). Split from run.sh so
# tests/integration/fuzz_check.sh can test it on canned logs without clang.
set -u
name=$1 log=$2 st=$3 secs_want=$4 min=${5:-}
[ -n "$min" ] || min=$((secs_want * 10000 / 60))
if [ "$st" != 0 ]; then
	echo "FAIL: fuzz_$name exited $st (see $log and tests/fuzz/crashes/)"; exit 1
fi
done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)
if [ -z "$done_line" ]; then
	echo "FAIL: fuzz_$name did not finish its run (no 'Done' line in $log)"; exit 1
fi
runs=$(echo "$done_line" | awk '{print $2}')
secs=$(echo "$done_line" | awk '{print $5}')
if [ "$secs" -lt $((secs_want - 2)) ] || [ "$runs" -le "$min" ]; then
	echo "FAIL: fuzz_$name stopped early or ran slowly: $runs runs in ${secs}s (want ${secs_want}s and more than" \
		"$min runs)"
	exit 1
fi
cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1)
echo "fuzz_$name: $runs runs in ${secs}s, ${cov:-cov: ?} ${ft:-ft: ?}"
