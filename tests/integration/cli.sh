#!/bin/sh
# The command line as a user meets it: help, exit statuses and error messages (DESIGN.md: 0 done, 1 internal
# error, 2 usage or bad input, 3 infeasible).
set -u
. tests/integration/lib/expect.sh
expect 0 "usage: hetsim COMMAND" -- "$H" help
expect 0 "usage: hetsim run" -- "$H" help run
expect 0 "usage: hetsim run" -- "$H" run --help
expect 0 "hetsim 0" -- "$H" version
expect 2 "did you mean 'run'" -- "$H" rn
expect 2 "unknown option '--jsn' (did you mean '--json'?)" -- "$H" run --jsn scenarios/default.yaml
# options as every Unix tool takes them (getopt_long): attached and separate values, = for long ones, --
for j in -j1 "-j 1" --jobs=1 "--jobs 1"; do
	# shellcheck disable=SC2086
	expect 0 "stopped after 1 new points" -- "$H" sweep $j -q --limit 1 -o "${TMPDIR:-/tmp}/hetsim-cli-$$.csv" scenarios/sweeps/llama3-8b-tp-pp.yaml
done
rm -f "${TMPDIR:-/tmp}/hetsim-cli-$$.csv"*
expect 2 "option '--json' takes no value" -- "$H" run --json=yes scenarios/default.yaml
expect 2 "cannot open" -- "$H" run -- --json
expect 2 "no scenario given" -- "$H" run
expect 2 "cannot open" -- "$H" run /nonexistent.yaml
# a misspelled key names the key it meant, with file:line:col
expect 2 "misspelled.yaml:9:3: parallelism.tpp: unknown key (did you mean 'tp'?)" -- "$H" run $D/misspelled.yaml
expect 2 "bad-unit.yaml:8:24: cluster.groups\[0\].nic.bandwidth: unit 'GB' is a size, not a bandwidth" -- "$H" run $D/bad-unit.yaml
expect 2 "heads" -- "$H" run $D/heads-tp.yaml
expect 2 "global_batch: 12 is not divisible by dp x micro_batch" -- "$H" run $D/batch-dp.yaml
expect 2 "unit" -- "$H" run scenarios/default.yaml --set cluster.groups.0.nic.bandwidth=5parsecs
# a model that does not fit exits 3 and prints the numbers
expect 3 "does not fit in memory: stage 0 needs" -- "$H" run $D/too-big.yaml
# the default scenario runs; --set changes it; --json has the keys tools read
expect 0 "step time" -- "$H" run scenarios/default.yaml
out=$("$H" run scenarios/default.yaml --json) || { echo "FAIL: --json"; fail=1; }
for k in step_time_s mfu hfu tokens_per_s memory_peak_bytes compute_s exposed_comm_s bubble_s events; do
	printf '%s' "$out" | grep -q "\"$k\":" || { echo "FAIL: --json lacks $k"; fail=1; }
done
# a profile fitted without flash-attention rows says, in the summary and the JSON, that flash attention is
# timed by rule; the measured profile says nothing
k='cluster.groups.0.gpu={base: H200-SXM-141GB, name: H200k, profile: H200-SXM-141GB-kernels}'
expect 0 "attention   H200-SXM-141GB-kernels has no flash-attention measurements (forward and backward)" -- \
	"$H" run scenarios/default.yaml --set "$k"
expect 0 '"attention_by_rule":"forward and backward"' -- "$H" run scenarios/default.yaml --json --set "$k"
"$H" run scenarios/default.yaml | grep -q "^  attention " && { echo "FAIL: a measured profile says attention by rule"; fail=1; }
# communication volume by kind (nccl-tests' bus accounting): the pipeline sends derived by hand (16
# micro-batches of seq x hidden x 2 bytes / tp with sequence parallelism, per rank), and the DP all-reduce's
# 2(n-1)/n: from dp 2 to dp 4 (same work per replica) the per-rank DP volume grows by (3/2) / 1
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
a=$("$H" run scenarios/default.yaml --json --detail --set parallelism.dp=2 --set training.global_batch=32 --set cluster.groups.0.nodes=1)
b=$("$H" run scenarios/default.yaml --json --detail)
printf '%s\n%s\n' "$a" "$b" | "$PY" -c '
import json, sys
a, b = (json.loads(l) for l in sys.stdin)
pp = b["ranks"][0]["comm_sent_bytes"]["pp"]
assert pp == 16 * 8192 * 4096 * 2 / 2, pp
assert b["breakdown"]["comm_sent_bytes_by_kind"]["pp"] == 16 * pp, b["breakdown"]
r = b["ranks"][0]["comm_sent_bytes"]["dp"] / a["ranks"][0]["comm_sent_bytes"]["dp"]
assert abs(r - 1.5) < 1e-9, r  # bucket sizes are summed in floating point
assert b["ranks"][0]["comm_sent_bytes"]["tp"] == a["ranks"][0]["comm_sent_bytes"]["tp"]
' || { echo "FAIL: communication volume by kind"; fail=1; }
# --set takes a path as messages write it (groups[0]) as well as dotted (groups.0)
a=$("$H" run scenarios/default.yaml --json --set 'cluster.groups[0].nodes=1' --set parallelism.dp=2 --set training.global_batch=32)
b=$("$H" run scenarios/default.yaml --json --set cluster.groups.0.nodes=1 --set parallelism.dp=2 --set training.global_batch=32)
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: --set groups[0] and groups.0 differ"; fail=1; }
# determinism: the same scenario and seed give byte-identical text (wall time removed)
a=$("$H" run scenarios/default.yaml --detail | grep -v "simulated .* in ") 
b=$("$H" run scenarios/default.yaml --detail | grep -v "simulated .* in ")
[ "$a" = "$b" ] || { echo "FAIL: two runs differ"; fail=1; }
# packet fidelity with no collective on the packet model says so (the step is the flow model's); with the ring it
# runs there and says nothing
P=scenarios/packet/tp8-h100-packet.yaml
expect 0 "no collective of the step runs on the packet model" -- "$H" run $P --set simulation.collective_algorithm=nvls
if "$H" run $P 2>&1 >/dev/null | grep -q "packet model"; then echo "FAIL: $P warns, but its ring runs on the packet model"; fail=1; fi
exit $fail
