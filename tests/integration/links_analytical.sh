#!/bin/sh
# Per-link bytes at analytical fidelity (issue 19): `hetsim run --json --detail` lists the same links as at flow
# fidelity with the same carried bytes (the closed forms' transfers on the flow model's routes,
# docs/outputs.md), on the default scenario (NVLS inside nodes, pipeline sends across) and on Mixtral (TP, EP
# all-to-alls across nodes, ZeRO-1's reduce-scatter and all-gather on channels per NIC). Bytes conserved over a
# collective's links: tests/unit/coll/test_coll_xgraph.c.
set -eu
HETSIM=${HETSIM:-bin/hetsim}
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
command -v "$PY" > /dev/null 2>&1 || { echo "python3 not found"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for s in scenarios/default.yaml scenarios/moe/mixtral-8x7b.yaml; do
	"$HETSIM" run --json --detail --set simulation.fidelity=analytical "$s" > "$T/a.json"
	HETSIM_NO_PROGRESS=1 "$HETSIM" run --json --detail --set simulation.fidelity=flow "$s" > "$T/f.json" 2>/dev/null
	"$PY" - "$T/a.json" "$T/f.json" "$s" <<'EOP'
import json, sys
a, f = (json.load(open(p)) for p in sys.argv[1:3])
la = {l["name"]: l["carried_bytes"] for l in a.get("links", [])}
lf = {l["name"]: l["carried_bytes"] for l in f.get("links", [])}
# The 64 busiest links are kept; where links that carried the same bytes straddle the cut, which of them
# make it may differ in the last bits of their sums: the byte counts kept must agree, and a name one side
# lacks must carry the cut's bytes.
va, vf = sorted(la.values()), sorted(lf.values())
assert la and len(va) == len(vf), (sys.argv[3], len(va), len(vf))
assert all(abs(x - y) <= 1e-9 * max(x, y) for x, y in zip(va, vf)), (sys.argv[3], "kept byte counts differ")
cut = va[0]
odd = [k for k in set(la) ^ set(lf) if abs((la.get(k) or lf.get(k)) - cut) > 1e-9 * cut]
assert not odd, (sys.argv[3], "links differ above the cut", sorted(odd)[:8])
bad = [k for k in la if k in lf and abs(la[k] - lf[k]) > 1e-9 * max(la[k], lf[k])]
assert not bad, (sys.argv[3], [(k, la[k], lf[k]) for k in bad[:8]])
for l in a["links"]:
    assert l["carried_bytes"] > 0 and l["capacity_Bps"] > 0 and l["mean_busy"] >= 0
EOP
done
exit 0
