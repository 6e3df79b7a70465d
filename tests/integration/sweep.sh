#!/bin/sh
# hetsim sweep: a sweep interrupted (--limit, and a real SIGKILL) and resumed writes the same CSV as one run
# straight through; threads do not change the rows; a bad sweep exits 2. MPI runs: sweep_mpi.sh.
set -u
H=${HETSIM:-bin/hetsim}
S=scenarios/sweeps/llama3-8b-tp-pp.yaml
T=$(mktemp -d /tmp/hetsim-sweep-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$H" sweep -q "$S" -o "$T/full.csv" --hdf5 "$T/full.h5" > "$T/out.txt" || no "full sweep exited $?"
grep -q "points        360: " "$T/out.txt" || no "summary line missing: $(head -3 "$T/out.txt")"
[ "$(wc -l < "$T/full.csv")" -eq 361 ] || no "full.csv has $(wc -l < "$T/full.csv") lines, expected 361"
[ -s "$T/full.h5" ] || no "no HDF5"
ls "$T"/full.csv.part-* > /dev/null 2>&1 && no "journals left behind"

"$H" sweep -q "$S" -o "$T/jobs.csv" -j 4 > /dev/null || no "threaded sweep failed"
cmp -s "$T/full.csv" "$T/jobs.csv" || no "--jobs 4 changed the CSV"

# interrupted twice by --limit, then finished
"$H" sweep -q "$S" -o "$T/lim.csv" --limit 100 -j 3 > /dev/null || no "limit 1"
[ -f "$T/lim.csv" ] && no "a CSV was written before the sweep finished"
"$H" sweep -q "$S" -o "$T/lim.csv" --limit 77 > /dev/null || no "limit 2"
"$H" sweep -q "$S" -o "$T/lim.csv" > /dev/null 2>&1 || no "resume after --limit"
cmp -s "$T/full.csv" "$T/lim.csv" || no "resumed (--limit) CSV differs"

# killed for real, then resumed
timeout -s KILL 0.15 "$H" sweep -q "$S" -o "$T/kill.csv" -j 1 > /dev/null 2>&1
"$H" sweep -q "$S" -o "$T/kill.csv" > /dev/null 2>&1 || no "resume after SIGKILL"
cmp -s "$T/full.csv" "$T/kill.csv" || no "resumed (SIGKILL) CSV differs"

# a damaged journal (a row cut to its index, a row of another point, a status no sweep writes): those rows are not
# taken, their points run again, and the CSV is the one of a run straight through
"$H" sweep -q "$S" -o "$T/dmg.csv" --limit 40 > /dev/null || no "damaged journal: first part"
awk -F'\t' 'NR == 3 { print $1 "\tx"; next } NR == 4 { print $1 "\t" prev; next } NR == 5 { sub(/,(ok|infeasible),/, ",fine,") }
	{ prev = $2; print }' "$T/dmg.csv.part-0" > "$T/dmg.j" && mv "$T/dmg.j" "$T/dmg.csv.part-0"
"$H" sweep -q "$S" -o "$T/dmg.csv" > "$T/dmg.out" 2>&1 || no "resume over a damaged journal exited $?"
cmp -s "$T/full.csv" "$T/dmg.csv" || no "resumed over a damaged journal, the CSV differs: $(diff "$T/full.csv" "$T/dmg.csv" | head -3)"

# a metric no ok point has (cost_per_mtok without a price): nothing is ranked, and the summary lists no row
printf 'base: %s/scenarios/default.yaml\nset: [parallelism.dp=0]\naxes: {parallelism.tp: [2, 4]}\nmetric: cost_per_mtok\n' \
	"$PWD" > "$T/nocost.yaml"
out=$("$H" sweep -q "$T/nocost.yaml" -o "$T/nocost.csv" 2>&1) || no "sweep ranked by an empty metric exited $?"
echo "$out" | grep -q "no ok point has a value of cost_per_mtok" || no "empty metric summary: $out"
echo "$out" | grep -q "^ *1 " && no "a row listed as ranked by an empty metric: $out"

# the layout and path columns: dp as resolved (dp: 0 in the sweep), every ok row timed in closed form (the base is
# analytical and symmetric), and the event run gives the same rows but for the path
head -1 "$T/full.csv" | grep -q ',status,tp,pp,dp,cp,ep,vstages,zero,micro_batch,microbatches,step_time_s,' ||
	no "layout columns missing: $(head -1 "$T/full.csv")"
head -1 "$T/full.csv" | grep -q ',profile_source,path$' || no "path column missing"
okrows=$(grep -c ',ok,' "$T/full.csv")
[ "$okrows" -gt 0 ] && [ "$(grep ',ok,' "$T/full.csv" | grep -c ',closed-form$')" -eq "$okrows" ] ||
	no "not every ok row took the closed form"
# tp x pp x dp = 8 GPUs per node: the resolved dp of point 1 (tp 1, pp 1, 2 nodes) is 16
awk -F, 'NR == 3 && $11 != 16 { exit 1 }' "$T/full.csv" || no "resolved dp of point 1: $(sed -n 3p "$T/full.csv")"
"$H" sweep -q --event "$S" -o "$T/ev.csv" > /dev/null || no "--event sweep failed"
[ "$(grep ',ok,' "$T/ev.csv" | grep -c ',event$')" -eq "$okrows" ] || no "--event rows are not all event"
sed 's/,[a-z-]*$//' "$T/full.csv" > "$T/a" && sed 's/,[a-z-]*$//' "$T/ev.csv" > "$T/b"
cmp -s "$T/a" "$T/b" || no "closed form and event run rows differ: $(diff "$T/a" "$T/b" | head -3)"

# the build's reuse within a step (models/build.c) changes no row: HETSIM_BUILD_MEMO=0 builds every step afresh,
# on this sweep and on the Llama 3 70B space of bench/bench_sweep.c (its 1F1B, interleaved and ZB-H1 points)
HETSIM_BUILD_MEMO=0 "$H" sweep -q "$S" -o "$T/nomemo.csv" > /dev/null || no "HETSIM_BUILD_MEMO=0 sweep failed"
cmp -s "$T/full.csv" "$T/nomemo.csv" || no "HETSIM_BUILD_MEMO=0 changed the CSV: $(diff "$T/full.csv" "$T/nomemo.csv" | head -3)"
S70=scenarios/sweeps/llama3-70b-1024xh100.yaml
"$H" sweep -q "$S70" -o "$T/70.csv" -j 2 > /dev/null || no "70B sweep failed"
HETSIM_BUILD_MEMO=0 "$H" sweep -q "$S70" -o "$T/70-nomemo.csv" -j 2 > /dev/null || no "70B sweep, memo off, failed"
[ "$(grep -c ',ok,' "$T/70.csv")" -gt 200 ] || no "70B sweep: $(grep -c ',ok,' "$T/70.csv") ok rows, expected 244"
cmp -s "$T/70.csv" "$T/70-nomemo.csv" || no "HETSIM_BUILD_MEMO=0 changed the 70B CSV: $(diff "$T/70.csv" "$T/70-nomemo.csv" | head -3)"

# Megatron's rule: interleaving without a pipeline is invalid, not run
printf 'base: %s/scenarios/default.yaml
set: [parallelism.dp=0, parallelism.schedule=interleaved, parallelism.virtual_stages=2]
axes: {parallelism.pp: [1, 2]}
' "$PWD" > "$T/inv.yaml"
"$H" sweep -q "$T/inv.yaml" -o "$T/inv.csv" > "$T/inv.out" || no "invalid sweep exited $?"
grep -q '^0,,1,invalid,2,1,8,1,1,2,0,1,8,.*megatron: virtual pipeline stages (2) need pp > 1' "$T/inv.csv" ||
	no "pp 1 with virtual stages not invalid: $(sed -n 2p "$T/inv.csv")"
grep -q '^1,1,2,ok,' "$T/inv.csv" || no "pp 2 interleaved did not run: $(sed -n 3p "$T/inv.csv")"
grep -q '1 ok, 0 infeasible, 1 invalid' "$T/inv.out" || no "summary: $(sed -n 2p "$T/inv.out")"

# the bound on points: exit 2 naming the limit and the option
out=$("$H" sweep -q "$S" -o "$T/max.csv" --max-points 100 2>&1); rc=$?
[ $rc -eq 2 ] || no "--max-points 100 on 360 points exited $rc, expected 2"
echo "$out" | grep -q "360 points.*limit of 100; --max-points 360" || no "--max-points message: $out"
"$H" sweep -q "$S" -o "$T/max.csv" --max-points 360 > /dev/null || no "--max-points 360 refused 360 points"
"$H" sweep -q "$S" -o "$T/max.csv" --max-points 0 > /dev/null 2>&1; [ $? -eq 2 ] || no "--max-points 0 accepted"

# progress without a terminal: lines, never a bar redrawn with carriage returns
"$H" sweep "$S" -o "$T/prog.csv" --fresh > /dev/null 2> "$T/prog.err" || no "sweep with progress failed"
tr -d '\n' < "$T/prog.err" | grep -q "$(printf '\r')" && no "a progress bar went to a non-terminal"

# bad sweeps
printf 'base: %s/scenarios/default.yaml\naxes: {parallelism.tpp: [1, 2]}\n' "$PWD" > "$T/bad.yaml"
out=$("$H" sweep -q "$T/bad.yaml" -o "$T/bad.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || no "unknown axis key exited $rc, expected 2"
echo "$out" | grep -q "did you mean 'tp'" || no "unknown axis key message: $out"
printf 'base: %s/scenarios/default.yaml\nmetric: speed\naxes: {parallelism.tp: [1, 2]}\n' "$PWD" > "$T/bad2.yaml"
"$H" sweep -q "$T/bad2.yaml" -o "$T/bad.csv" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || no "bad metric exited $rc, expected 2"
# a key path with a bracket out of place (fuzz_sweep: `sim]ulation.fidelity` was read as simulation.fidelity and
# ran every point at flow fidelity): refused at its line of the sweep file, as is such a key in `set:`
printf 'base: %s/scenarios/default.yaml\naxes:\n  parallelism.tp: [2]\n  sim]ulation.fidelity: [flow]\n' "$PWD" > "$T/bad3.yaml"
out=$("$H" sweep -q "$T/bad3.yaml" -o "$T/bad.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || no "axis key sim]ulation.fidelity exited $rc, expected 2"
echo "$out" | grep -q "bad3.yaml:4:3: axes.sim]ulation.fidelity: not a scenario key path" || no "bad axis path message: $out"
printf 'base: %s/scenarios/default.yaml\nset: ["parallelism..tp=2"]\naxes: {parallelism.pp: [1]}\n' "$PWD" > "$T/bad4.yaml"
out=$("$H" sweep -q "$T/bad4.yaml" -o "$T/bad.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || no "set key parallelism..tp exited $rc, expected 2"
echo "$out" | grep -q "bad4.yaml:2:7: set: item 0 is not KEY=VALUE" || no "bad set path message: $out"
exit $fail
