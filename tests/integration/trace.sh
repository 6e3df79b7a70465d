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
# Trace Event Format as the viewers read it: complete slices with integer-nanosecond times (three decimals of
# a microsecond), no two slices on one track overlapping, and every flow event's id started and finished
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
"$PY" - "$T/all.json" <<'PYEOF' || no "trace format"
import json, sys, re
raw = open(sys.argv[1]).read()
d = json.loads(raw)
assert d["displayTimeUnit"] == "ns", d["displayTimeUnit"]
ev = d["traceEvents"]
xs = [e for e in ev if e["ph"] == "X"]
assert xs, "no slices"
for k in ("name", "cat", "pid", "tid", "ts", "dur", "args"):
    assert all(k in e for e in xs), k
# times written with at most three decimals (whole nanoseconds)
for m in re.finditer(r'"(ts|dur)":(-?[0-9.]+)', raw):
    assert re.fullmatch(r"-?[0-9]+(\.[0-9]{3})?", m.group(2)), m.group(0)
tracks = {}
for e in xs:
    tracks.setdefault((e["pid"], e["tid"]), []).append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
for k, v in tracks.items():
    v.sort()
    for (a0, a1), (b0, b1) in zip(v, v[1:]):
        assert b0 >= a1, f"track {k}: [{a0},{a1}] overlaps [{b0},{b1}] ns"
ids = {}
for e in ev:
    if e["ph"] in "stf" and e.get("cat") == "flow":
        ids.setdefault(e["id"], []).append(e["ph"])
for i, phs in ids.items():
    assert phs[0] == "s" and phs[-1] == "f", (i, phs)
print(f"trace: {len(xs)} slices on {len(tracks)} tracks, {len(ids)} flows")
PYEOF
# at flow fidelity the busiest links are counter tracks, busy fractions in [0, 1] over the run
"$H" run --trace "$T/flow.json" --set simulation.fidelity=flow scenarios/default.yaml > /dev/null || no "flow --trace"
"$PY" - "$T/flow.json" <<'PYEOF' || no "link counters"
import json, sys
d = json.load(open(sys.argv[1]))
c = [e for e in d["traceEvents"] if e["ph"] == "C"]
names = {e["name"] for e in c}
assert len(names) >= 8 and all(n.startswith("link ") for n in names), names
assert all(0 <= e["args"]["busy"] <= 1 for e in c)
assert max(e["args"]["busy"] for e in c) > 0.1, "no link was busy"
assert max(e["ts"] for e in c) >= d["otherData"]["step_time_s"] * 1e6 * 0.99
print(f"trace: {len(names)} link counter tracks")
PYEOF
# every collective inside a layer is a slice on its rank's "collectives in layers" track, inside its compute
# task's slice, and on the critical rank they add up to the exposed TP communication of the summary
"$H" run --json --trace "$T/sym.json" scenarios/default.yaml > "$T/run.json" || no "run --json --trace"
"$PY" - "$T/sym.json" "$T/run.json" <<'PYEOF' || no "in-layer collectives"
import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
tasks = {e["args"]["task"]: e for e in d["traceEvents"] if e["ph"] == "X" and names.get((e["pid"], e["tid"])) == "compute"}
inl = [e for e in d["traceEvents"] if e["ph"] == "X" and names.get((e["pid"], e["tid"])) == "collectives in layers"]
assert inl, "no in-layer collective slices"
for e in inl:
    t = tasks[e["args"]["task"]]
    assert e["pid"] == t["pid"] and e["ts"] >= t["ts"] - 1e-3 and e["ts"] + e["dur"] <= t["ts"] + t["dur"] + 1e-3, (e, t)
    assert e["args"]["group"] in ("tp", "cp", "ep") and e["args"]["bytes"] > 0, e
crit = s["breakdown"]["critical_stage"] + 1  # symmetry: one simulated rank per stage, pid = stage + 1
tp = sum(e["dur"] for e in inl if e["pid"] == crit and e["args"]["group"] == "tp") / 1e6
want = s["breakdown"]["exposed_comm_by_kind_s"]["tp"]
assert abs(tp - want) < 1e-5, (tp, want)
print(f"trace: {len(inl)} in-layer collective slices; critical rank's TP {tp:.6f} s = summary {want:.6f} s")
PYEOF
exit $fail
