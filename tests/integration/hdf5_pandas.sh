#!/bin/sh
# HDF5 tables as pandas reads them (issue 19): every table hetsim writes (/ranks, /stages, /tasks, /links, /sweep)
# is one compound dataset, so `pd.DataFrame(h5py.File(f)[table][()])` is the whole load. Checked with Debian's
# python3-h5py and python3-pandas where they are installed (.ci/run installs them); skipped (77) elsewhere.
set -u
H=${HETSIM:-bin/hetsim}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import h5py, pandas' 2>/dev/null || { echo "python3-h5py and python3-pandas not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$H" run scenarios/default.yaml --hdf5 "$tmp/run.h5" --hdf5-tasks --json >"$tmp/run.json" || { echo "FAIL: run"; exit 1; }
"$H" run scenarios/default.yaml --hdf5 "$tmp/flow.h5" --set simulation.fidelity=flow >/dev/null ||
	{ echo "FAIL: flow run"; exit 1; }
"$H" sweep -q -o "$tmp/s.csv" --hdf5 "$tmp/sweep.h5" scenarios/sweeps/llama3-8b-tp-pp.yaml >/dev/null ||
	{ echo "FAIL: sweep"; exit 1; }
"$PY" - "$tmp" <<'PYEOF' || fail=1
import json, sys
import h5py, pandas as pd
d = sys.argv[1]
bad = []
def table(path, name):
    with h5py.File(path, "r") as f:
        ds = f[name]
        df = pd.DataFrame(ds[()])  # the one-line load the docs give
        cols = [c.decode() for c in ds.attrs["columns"]]
        units = [u.decode() for u in ds.attrs["units"]]
        if list(df.columns) != cols:
            bad.append(f"{path}:{name}: fields {list(df.columns)} != columns attribute {cols}")
        if len(units) != len(cols):
            bad.append(f"{path}:{name}: {len(units)} units for {len(cols)} fields")
        if ds.attrs["schema_version"] != 2:
            bad.append(f"{path}:{name}: schema_version {ds.attrs['schema_version']}")
        return df, dict(zip(cols, units))
run = json.load(open(f"{d}/run.json"))
ranks, u = table(f"{d}/run.h5", "/ranks")
if u.get("finish_s") != "s" or u.get("memory_bytes") != "B" or u.get("device") != "":
    bad.append(f"/ranks units {u}")
step = run["step_time_s"]
if abs(ranks["finish_s"].max() - step) > 1e-9 * step:
    bad.append(f"/ranks finish_s max {ranks['finish_s'].max()} != step time {step}")
if ranks["device"].iloc[0].decode() != "H100-SXM-80GB":
    bad.append(f"/ranks device {ranks['device'].iloc[0]}")
stages, _ = table(f"{d}/run.h5", "/stages")
if len(stages) != run["parallelism"]["pp"] or stages["layers"].sum() != sum(run["parallelism"]["stage_layers"]):
    bad.append(f"/stages: {len(stages)} rows, {stages['layers'].sum()} layers")
tasks, _ = table(f"{d}/run.h5", "/tasks")
if not (tasks["end_s"] >= tasks["start_s"]).all() or abs(tasks["end_s"].max() - step) > 1e-9 * step:
    bad.append("/tasks: spans do not end at the step time")
links, lu = table(f"{d}/flow.h5", "/links")
with h5py.File(f"{d}/flow.h5", "r") as f:
    m = f["/links_utilisation"][()]
if len(links) == 0 or m.shape[0] != len(links) or lu.get("capacity_Bps") != "B/s" or lu.get("carried_bytes") != "B" \
        or not (links["carried_bytes"] > 0).all() or not (links["carried_bytes"].diff().dropna() <= 0).all():
    bad.append(f"/links: {len(links)} rows, matrix {m.shape}, units {lu}")
sweep, _ = table(f"{d}/sweep.h5", "/sweep")
with h5py.File(f"{d}/sweep.h5", "r") as f:
    axes = f["/sweep"].attrs.get("axes")  # attributes put before the first column moved onto the table
if len(sweep) == 0 or "rank" not in sweep.columns or axes is None or axes < 1:
    bad.append(f"/sweep: {len(sweep)} rows, columns {list(sweep.columns)}, axes {axes}")
for b in bad:
    print("FAIL:", b)
print(f"hdf5_pandas: /ranks {len(ranks)}, /stages {len(stages)}, /tasks {len(tasks)}, /links {len(links)}, /sweep {len(sweep)} rows")
sys.exit(1 if bad else 0)
PYEOF
exit $fail
