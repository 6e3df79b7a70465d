#!/bin/sh
# The issue-4 validation: Korthikanti et al. 2022 Table 5 iteration times and Table 4 one-layer forward and
# backward times (scenarios/validation/korthikanti.yaml), and the issue-14 one: whole PyTorch eager steps on
# an H200 (scenarios/validation/pytorch-h200.yaml). Fails when the MAPE over every row exceeds 15%, and
# prints every row so a failure shows which moved. Also checks that a layer-time entry is reported as two rows
# and that a manifest entry without any measurement is bad input (exit 2).
set -u
H=${HETSIM:-bin/hetsim}
fail=0
out=$("$H" validate --max-mape 0.15 scenarios/validation/korthikanti.yaml 2>&1); st=$?
echo "$out"
[ "$st" = 0 ] || { echo "FAIL: Korthikanti validation exited $st (MAPE above 15%?)"; fail=1; }
n=$(printf '%s\n' "$out" | grep -c '^layer-22b .* \(fwd\|bwd\) ')
[ "$n" = 10 ] || { echo "FAIL: expected 10 layer rows, found $n"; fail=1; }
printf '%s\n' "$out" | grep -q '^MAPE .* over 18 entries' || { echo "FAIL: expected 18 rows in the MAPE"; fail=1; }
# JSON: every row carries its quantity
j=$("$H" validate --json scenarios/validation/korthikanti.yaml) || { echo "FAIL: --json"; fail=1; }
printf '%s' "$j" | grep -q '"quantity":"layer_bwd_s"' || printf '%s' "$j" | grep -q '"quantity": "layer_bwd_s"' ||
	{ echo "FAIL: --json lacks layer_bwd_s rows"; fail=1; }
# Issue 14's gates: Korthikanti (Megatron recipe) MAPE at most 5%; the PyTorch eager H200 steps (pytorch-amp
# recipe) at most 5% step MAPE, every entry within its tolerance (step 5%, peak memory 10%)
"$H" validate --max-mape 0.05 scenarios/validation/korthikanti.yaml >/dev/null 2>&1 ||
	{ echo "FAIL: Korthikanti MAPE above 5%"; fail=1; }
out=$("$H" validate --max-mape 0.05 scenarios/validation/pytorch-h200.yaml 2>&1); st=$?
echo "$out"
[ "$st" = 0 ] || { echo "FAIL: pytorch-h200 validation exited $st (step MAPE above 5% or an entry off tolerance)"; fail=1; }
n=$(printf '%s\n' "$out" | grep -c ' mem ')
[ "$n" = 2 ] || { echo "FAIL: expected 2 peak-memory rows, found $n"; fail=1; }
# an entry with nothing measured is bad input
tmp=$(mktemp /tmp/hetsim-val-XXXXXX.yaml)
printf 'entries:\n  - {scenario: %s/scenarios/validation/korthikanti/gpt-22b-full.yaml}\n' "$(pwd)" >"$tmp"
"$H" validate "$tmp" >/dev/null 2>&1; st=$?
[ "$st" = 2 ] || { echo "FAIL: an entry without measurements exited $st, expected 2"; fail=1; }
rm -f "$tmp"
exit $fail
