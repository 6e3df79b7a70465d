#!/bin/sh
# `make fuzz` fails when a fuzzer crashes or stops early (issue 18, finding 1: fuzz_scenario stopped on its
# first, empty input under UBSan and the run still exited 0). tests/fuzz/check_log.sh judges each libFuzzer
# log; here it is fed canned logs of a good run, a crash, a run cut short and a run with too few inputs.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
C=tests/fuzz/check_log.sh
printf '#1 INITED cov: 10 ft: 10\n#9000 DONE cov: 1665 ft: 2\nDone 26646 runs in 31 second(s)\n' >"$tmp/good"
printf 'INFO: Seed: 1\n==1==ERROR: UndefinedBehaviorSanitizer\nconfig/yaml.c:57:45: runtime error: applying zero offset to null pointer\n' >"$tmp/crash"
printf '#2 INITED cov: 10\nDone 1 runs in 0 second(s)\n' >"$tmp/short"
printf '#2 INITED cov: 10\nDone 50 runs in 30 second(s)\n' >"$tmp/few"
fail=0
sh $C t "$tmp/good" 0 30 3000 >/dev/null || { echo "FAIL: a good run rejected"; fail=1; }
sh $C t "$tmp/crash" 1 30 3000 >/dev/null && { echo "FAIL: a crash (exit 1) accepted"; fail=1; }
sh $C t "$tmp/crash" 0 30 3000 >/dev/null && { echo "FAIL: a log without 'Done' accepted"; fail=1; }
sh $C t "$tmp/short" 0 30 3000 >/dev/null && { echo "FAIL: a run that stopped after 0 s accepted"; fail=1; }
sh $C t "$tmp/few" 0 30 3000 >/dev/null && { echo "FAIL: 50 runs accepted where 3000 are asked for"; fail=1; }
out=$(sh $C scenario "$tmp/good" 0 30 3000)
[ "$out" = "fuzz_scenario: 26646 runs in 31s, cov: 1665 ft: 2" ] || { echo "FAIL: summary line: $out"; fail=1; }
# without MIN, issue 18's bar: more than 10,000 inputs in 60 s (5,000 in 30 s)
printf '#2 INITED cov: 10\nDone 10000 runs in 60 second(s)\n' >"$tmp/bar"
sh $C t "$tmp/bar" 0 60 >/dev/null && { echo "FAIL: 10,000 runs in 60 s accepted (the bar is more than 10,000)"; fail=1; }
printf '#2 INITED cov: 10\nDone 10001 runs in 61 second(s)\n' >"$tmp/bar"
sh $C t "$tmp/bar" 0 60 >/dev/null || { echo "FAIL: 10,001 runs in 61 s rejected"; fail=1; }
sh $C t "$tmp/few" 0 30 >/dev/null && { echo "FAIL: 50 runs in 30 s accepted by the default bar"; fail=1; }
# the runner must not pipe the fuzzer through anything that hides its exit status
grep -q '| *tail' tests/fuzz/run.sh && { echo "FAIL: run.sh pipes the fuzzer into tail"; fail=1; }
exit $fail
