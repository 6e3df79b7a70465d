#!/bin/sh
# Heterogeneous placement (issue 8): the scenarios in scenarios/hetero/ run, `hetsim place` finds a placement
# faster than the scenario as given, and bad stage splits get exit 2 (file:line:col) or 3 (with numbers).
set -u
. tests/integration/lib/expect.sh
for f in scenarios/hetero/*.yaml; do
	expect 0 "step time" -- "$H" run "$f"
done
S=scenarios/hetero/mixed-h100-a100-13b.yaml
expect 0 "stage layers  14 14 6 6 (auto" -- "$H" run $S --set parallelism.stage_layers=auto
expect 0 "bottleneck    stage 3 (A100-SXM-80GB, 10 layers)" -- "$H" run $S
expect 0 "replica load  9 9 6 8" -- "$H" run scenarios/hetero/straggler-1024.yaml --set parallelism.dp_microbatches=auto
expect 0 "effective step" -- "$H" run scenarios/hetero/diloco-2sites.yaml
expect 0 '"diloco":{"sites":2' -- "$H" run --json scenarios/hetero/diloco-2sites.yaml
expect 0 "evaluated         40 placements" -- "$H" place $S
expect 0 '"candidates":\[{"step_time_s"' -- "$H" place --json --top 2 $S
expect 2 "expected one scenario" -- "$H" place
# the best placement beats the scenario as given
out=$("$H" place $S)
given=$(printf '%s\n' "$out" | sed -n 's/^as given .*: \([0-9.]*\) s per step.*/\1/p')
best=$(printf '%s\n' "$out" | awk '$1 == "1" {print $2; exit}')
if ! awk -v g="$given" -v b="$best" 'BEGIN {exit !(b + 0 > 0 && b + 0 <= g + 0)}'; then
	echo "FAIL: place: best $best is not faster than as given $given"; fail=1
fi
# bad input
expect 2 "stage-layers-sum.yaml:11:17: parallelism.stage_layers: 8 + 8 + 8 + 7 = 31 layers, but llama3-8b has 32" -- "$H" run $D/stage-layers-sum.yaml
expect 3 "stage-auto-too-big.yaml: parallelism.stage_layers: auto: no split of 80 layers over 2 pipeline stages fits in memory: the stages hold at most" -- "$H" run $D/stage-auto-too-big.yaml
expect 2 "parallelism.dp_microbatches: " -- "$H" run $S --set 'parallelism.dp_microbatches=[100, 100]'
expect 2 "parallelism.stage_layers: auto balances one model chunk per stage" -- "$H" run $S --set parallelism.stage_layers=auto --set parallelism.virtual_stages=2 --set parallelism.schedule=interleaved
exit $fail
