#!/bin/sh
# `hetsim validate` as CI runs it (issue 17), on every manifest in scenarios/validation/ and on logs:
#   - every manifest passes (exit 0); Korthikanti et al. 2022 (Tables 4 and 5) and the PyTorch eager H200
#     steps (issue 14) with --max-mape 0.05, the nccl-tests manifest with its own 15% tolerance;
#   - tests/data/validate/logs.yaml, whose figures all come from logs (an nccl-tests log size by size and a
#     Megatron-LM-format log), passes; forced drift exits 4, not 1; --junit writes XML that python3's xml
#     module parses, with one test case per entry and the error and tolerance in a failure's message;
#   - bad input exits 2 with the file and line: a log with no recognisable line, an nccl-tests log of another
#     collective than the entry's op, an entry with nothing measured;
#   - one size grammar: a manifest's `size:` spelled 1G, 1GiB, 1Gi and 1073741824 predicts the same time and
#     1GB (10^9) a smaller one; `coll --sizes 1G` is 2^30 bytes.
# Prints every row, so a failure shows which moved.
set -u
H=${HETSIM:-bin/hetsim}
fail=0
T=$(mktemp -d /tmp/hetsim-val-XXXXXX)
trap 'rm -rf "$T"' EXIT
for m in scenarios/validation/*.yaml; do
	case "$m" in
	*/korthikanti.yaml | */pytorch-h200.yaml) gate="--max-mape 0.05" ;;
	*) gate="" ;;
	esac
	# shellcheck disable=SC2086
	out=$("$H" validate $gate "$m" 2>&1); st=$?
	echo "$out"
	[ "$st" = 0 ] || { echo "FAIL: $m ${gate:+($gate) }exited $st"; fail=1; }
done
out=$("$H" validate scenarios/validation/korthikanti.yaml 2>&1)
n=$(printf '%s\n' "$out" | grep -c '^layer-22b .* \(fwd\|bwd\) ')
[ "$n" = 10 ] || { echo "FAIL: expected 10 layer rows, found $n"; fail=1; }
printf '%s\n' "$out" | grep -q '^MAPE .* over 18 entries' || { echo "FAIL: expected 18 rows in the MAPE"; fail=1; }
n=$("$H" validate scenarios/validation/pytorch-h200.yaml 2>&1 | grep -c ' mem ')
[ "$n" = 2 ] || { echo "FAIL: expected 2 peak-memory rows, found $n"; fail=1; }
# JSON: every row carries its quantity
j=$("$H" validate --json scenarios/validation/korthikanti.yaml) || { echo "FAIL: --json"; fail=1; }
printf '%s' "$j" | grep -q '"quantity": *"layer_bwd_s"' || { echo "FAIL: --json lacks layer_bwd_s rows"; fail=1; }

# measurements from logs: nothing typed by hand
L=tests/data/validate/logs.yaml
out=$("$H" validate --junit "$T/ok.xml" "$L" 2>&1); st=$?
echo "$out"
[ "$st" = 0 ] || { echo "FAIL: $L exited $st"; fail=1; }
n=$(printf '%s\n' "$out" | grep '^a100x8 nvswitch all_reduce [0-9]*[KMG]* ' | grep -vc in-place)
[ "$n" = 6 ] || { echo "FAIL: expected 6 out-of-place nccl-tests rows (32M..1G), found $n"; fail=1; }
n=$(printf '%s\n' "$out" | grep -c '^a100x8 nvswitch all_reduce [0-9]*[KMG]* in-place ')
[ "$n" = 6 ] || { echo "FAIL: expected 6 in-place nccl-tests rows, found $n"; fail=1; }
printf '%s\n' "$out" | grep -q '^gpt-350m megatron log median .* 0\.1190 ' ||
	{ echo "FAIL: the Megatron log's median after 2 warm-up steps is 0.11895 s"; fail=1; }
printf '%s\n' "$out" | grep -q '^gpt-350m megatron log p90 .* 0\.1202 ' ||
	{ echo "FAIL: the Megatron log's P90 is 0.12024 s"; fail=1; }

# drift: the same logs with a tolerance of 1% per entry (the gpt-350m prediction is 4.9% off) exit 4
sed -e 's|\.\./\.\./\.\./|'"$(pwd)"'/|g' -e 's|\.\./nccl-tests/|'"$(pwd)"'/tests/data/nccl-tests/|' \
	-e 's|\.\./trainlogs/|'"$(pwd)"'/tests/data/trainlogs/|' -e 's/tolerance: 0\.05/tolerance: 0.01/' "$L" >"$T/drift.yaml"
out=$("$H" validate --junit "$T/drift.xml" "$T/drift.yaml" 2>&1); st=$?
[ "$st" = 4 ] || { echo "$out"; echo "FAIL: drift beyond tolerance exited $st, expected 4"; fail=1; }
printf '%s\n' "$out" | grep -q 'median .*FAIL' || { echo "FAIL: the drifting row is not marked FAIL"; fail=1; }
"$H" validate --max-mape 0.01 "$L" >/dev/null 2>&1; st=$?
[ "$st" = 4 ] || { echo "FAIL: MAPE above --max-mape exited $st, expected 4"; fail=1; }
python3 - "$T/ok.xml" "$T/drift.xml" <<'PY' || fail=1
import sys, xml.etree.ElementTree as ET
ok, drift = (ET.parse(p).getroot() for p in sys.argv[1:3])
for name, root, nfail in (("ok", ok, 0), ("drift", drift, 1)):
    cases = root.findall(".//testcase")
    if len(cases) != 2:
        sys.exit(f"FAIL: {name}.xml has {len(cases)} test cases, expected 2 (one per entry)")
    bad = [c for c in cases if c.find("failure") is not None]
    if len(bad) != nfail:
        sys.exit(f"FAIL: {name}.xml has {len(bad)} failures, expected {nfail}")
    if root.get("tests") != "2" or root.get("failures") != str(nfail):
        sys.exit(f"FAIL: {name}.xml counts tests={root.get('tests')} failures={root.get('failures')}")
msg = drift.find(".//failure").get("message")
if "error +" not in msg or "tolerance 1.0%" not in msg:
    sys.exit(f"FAIL: the failure message lacks the error and tolerance: {msg}")
print("junit: ok (" + msg + ")")
PY

# bad input: exit 2 with file and line
printf 'entries:\n  - {scenario: %s/scenarios/validation/pytorch-h200/gpt-350m.yaml, training_log: %s/tests/data/trainlogs/no-steps.log}\n' \
	"$(pwd)" "$(pwd)" >"$T/nolog.yaml"
err=$("$H" validate "$T/nolog.yaml" 2>&1 >/dev/null); st=$?
[ "$st" = 2 ] || { echo "FAIL: a log with no recognisable line exited $st, expected 2"; fail=1; }
echo "$err" | grep -q 'no-steps.log:3: no step times found' || { echo "FAIL: no file:line in: $err"; fail=1; }
printf 'entries:\n  - {scenario: %s/scenarios/validation/nccl/a100x8-nvswitch.yaml, op: all_gather, nccl_tests: %s/tests/data/nccl-tests/a100x8-sxm4-80gb-nvswitch-allreduce.txt}\n' \
	"$(pwd)" "$(pwd)" >"$T/wrongop.yaml"
err=$("$H" validate "$T/wrongop.yaml" 2>&1 >/dev/null); st=$?
[ "$st" = 2 ] || { echo "FAIL: an nccl-tests log of another op exited $st, expected 2"; fail=1; }
echo "$err" | grep -q 'allreduce.txt:[0-9]*: the log ran all_reduce, the entry.s op is all_gather' ||
	{ echo "FAIL: no file:line in: $err"; fail=1; }
printf 'entries:\n  - {scenario: %s/scenarios/validation/korthikanti/gpt-22b-full.yaml}\n' "$(pwd)" >"$T/none.yaml"
"$H" validate "$T/none.yaml" >/dev/null 2>&1; st=$?
[ "$st" = 2 ] || { echo "FAIL: an entry without measurements exited $st, expected 2"; fail=1; }

# one size grammar: the manifest's size:
pred() {
	printf 'entries:\n  - {scenario: %s/scenarios/validation/nccl/a100x8-nvswitch.yaml, op: all_reduce, size: "%s", collective_time_s: 1 ms}\n' \
		"$(pwd)" "$1" >"$T/size.yaml"
	"$H" validate --json "$T/size.yaml" | python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["entries"][0]["predicted_s"]))'
}
ref=$(pred 1073741824)
for s in 1G 1GiB 1Gi "1 GiB" 1024M 1048576K 1024MiB; do
	[ "$(pred "$s")" = "$ref" ] || { echo "FAIL: size: $s predicts $(pred "$s") s, 1073741824 predicts $ref s"; fail=1; }
done
ref=$(pred 1000000000)
for s in 1GB "1 GB" 1000MB 1000000kB 1000000KB; do
	[ "$(pred "$s")" = "$ref" ] || { echo "FAIL: size: $s is not 10^9 bytes"; fail=1; }
done
# coll --sizes: nccl-tests' K/M/G (2^10, 2^20, 2^30)
out=$("$H" coll --op all_reduce --sizes 1G:1G scenarios/validation/nccl/a100x8-nvswitch.yaml 2>&1)
printf '%s\n' "$out" | grep -q '1073741824' || { echo "$out"; echo "FAIL: coll --sizes 1G is not 1073741824 bytes"; fail=1; }
out=$("$H" coll --op all_reduce --sizes 4K:4K scenarios/validation/nccl/a100x8-nvswitch.yaml 2>&1)
printf '%s\n' "$out" | grep -q '^ *4096 ' || { echo "$out"; echo "FAIL: coll --sizes 4K is not 4096 bytes"; fail=1; }
exit $fail
