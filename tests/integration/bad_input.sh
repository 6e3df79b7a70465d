#!/bin/sh
# Bad input is exit 2 with file:line:col and the key path, never exit 1 or a signal (issue 18, findings 7 and
# 8). One case per class; under `make check-asan` the binary carries LeakSanitizer, so a leak on an error path
# (the sweep's axis parser once leaked its half-read axis) turns the expected 2 into 1 and fails here.
set -u
. tests/integration/lib/expect.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/fifo"
# files that are not regular files: refused by name, never read as empty or waited on
expect 2 "^hetsim run: /tmp: is a folder, not a scenario" -- "$H" run /tmp
expect 2 "$tmp/fifo: is a FIFO, not a scenario" -- timeout 10 "$H" run "$tmp/fifo"
expect 2 "/dev/null: is a device, not a scenario" -- "$H" run /dev/null
expect 2 "$tmp/fifo: is a FIFO, not an nccl-tests log" -- timeout 10 "$H" calib import-nccl-tests "$tmp/fifo" --rows
expect 2 "/tmp/: is a folder, not a result" -- "$H" report /tmp/ -o "$tmp/rep"
printf 'base: /tmp\naxes:\n  parallelism.tp: [1]\n' >"$tmp/sw.yaml"
expect 2 "sw.yaml:1:7: base: /tmp: is a folder, not a scenario" -- "$H" sweep "$tmp/sw.yaml" -o "$tmp/s.csv"
# gpu.profile: a missing file and a folder, at the key's position
expect 2 "cluster.groups.0.gpu:1:32: cluster.groups\[0\].gpu.profile: /tmp: is a folder, not a device profile" -- \
	"$H" run scenarios/default.yaml --set 'cluster.groups.0.gpu={base: H100-SXM-80GB, profile: /tmp}'
expect 2 "cluster.groups\[0\].gpu.profile: $tmp/none.yaml: cannot open: No such file or directory" -- \
	"$H" run scenarios/default.yaml --set "cluster.groups.0.gpu={base: H100-SXM-80GB, profile: $tmp/none.yaml}"
# a topology that is not connected names the fabric's position
expect 2 "not-connected.yaml:7:5: cluster.fabric: the topology is not connected: gpu0 has no path to gpu2" -- \
	"$H" coll $D/not-connected.yaml --fidelity flow
# an explicit graph that does not join every device, at analytical fidelity (which routes over it, issue 16
# item 6): the topology's error at the fabric
expect 2 "cluster.fabric:1:1: cluster.fabric: the topology is not connected: gpu0 has no path to gpu1" -- \
	"$H" run scenarios/default.yaml --set 'cluster.fabric={kind: explicit, switches: [s], links: [{from: gpu0, to: s, bandwidth: 25 GB/s}]}'
# an algorithm the closed forms do not route on a graph: refused at the fabric, naming the flow fidelity
expect 2 "cluster.fabric:1:1: cluster.fabric: kind explicit: algorithm nvls reduces in a switch" -- \
	"$H" run scenarios/default.yaml --set simulation.collective_algorithm=nvls --set 'cluster.fabric={kind: explicit, switches: [s], links: [{from: gpu0, to: s, bandwidth: 25 GB/s}]}'
# validate naming a scenario that is not there: the manifest's position
printf 'entries:\n  - {scenario: nope.yaml, step_time_s: 1.0}\n' >"$tmp/man.yaml"
expect 2 "man.yaml:2:16: entries\[0\].scenario: $tmp/nope.yaml: cannot open: No such file or directory" -- \
	"$H" validate "$tmp/man.yaml"
# sweep axes: each error at its item, none leaking
for ax in "parallelism.tp: [1, [2]]|:3:23: axes.parallelism.tp: item 1 is not a scalar" \
	"parallelism.tp: {from: 1, to: 4, times: 0}|:3:19: axes.parallelism.tp: give exactly one of step" \
	"parallelism.tp: []|:3:19: axes.parallelism.tp: an empty list" \
	"parallelism.tp: 3|:3:19: axes.parallelism.tp: expected a list of values or a range" \
	"parallelism.tp: {from: 1, to: 1e9, step: 1}|:3:19: axes.parallelism.tp: more than 100000 values"; do
	printf 'base: %s/scenarios/default.yaml\naxes:\n  %s\n' "$PWD" "${ax%%|*}" >"$tmp/ax.yaml"
	expect 2 "ax.yaml${ax#*|}" -- "$H" sweep "$tmp/ax.yaml" -o "$tmp/ax.csv"
done
# wrong text, now right: a range from high to low
expect 2 "variability.slowdown\[0\].gpus: '7-3' runs from high to low (expected 3-7)" -- \
	"$H" run scenarios/default.yaml --set 'variability.slowdown=[{gpus: 7-3, speed: 0.5}]'
# explicit nulls: an error naming the key, never the default (docs/scenario.md: no key takes null)
expect 2 "parallelism.pp:1:1: parallelism.pp: null (expected a value; leave the key out for its default)" -- \
	"$H" run scenarios/default.yaml --set parallelism.pp=~
printf 'cluster:\n  groups:\n    - name: a\n      nodes:\n      gpus_per_node: 8\n      gpu: H100-SXM-80GB\nmodel: llama3-8b\n' >"$tmp/null.yaml"
expect 2 "null.yaml:4:13: cluster.groups\[0\].nodes: null (expected a value" -- "$H" run "$tmp/null.yaml"
printf 'name: x\ncluster: ~\n' >"$tmp/null2.yaml"
expect 2 "null2.yaml:2:10: .*found null" -- "$H" run "$tmp/null2.yaml"
# options that shape an output nobody asked for, a trace of ranks that are not simulated, a negative limit
expect 2 "rank 999 is not simulated (the step simulates ranks 0-1" -- "$H" run scenarios/default.yaml --trace "$tmp/t.json" --trace-ranks 999
expect 2 "^hetsim run: --trace-limit '-1': expected a whole number from 1 to" -- "$H" run scenarios/default.yaml --trace "$tmp/t.json" --trace-limit -1
expect 2 "add --trace FILE.json" -- "$H" run scenarios/default.yaml --trace-ranks 0
expect 2 "add --hdf5 FILE.h5" -- "$H" run scenarios/default.yaml --hdf5-tasks
[ -e "$tmp/t.json" ] && { echo "FAIL: a refused trace left $tmp/t.json"; fail=1; }
# a manifest with no entries would pass with nothing checked
printf 'entries: []\n' >"$tmp/empty.yaml"
expect 2 "empty.yaml:1:10: entries: empty (expected at least one entry" -- "$H" validate "$tmp/empty.yaml"
# legal but implausible values run with a warning naming the position
expect 0 "warning: --set cluster.groups.0.nic.bandwidth:1:1: cluster.groups\[0\].nic.bandwidth: '400' is below 1 MB/s" -- \
	"$H" run scenarios/default.yaml --set cluster.groups.0.nic.bandwidth=400
expect 0 "warning: scenarios/default.yaml: one step takes .* days" -- \
	"$H" run scenarios/default.yaml --set cluster.groups.0.nic.bandwidth=400
# unbounded work from values each check allows alone: refused before any of it, naming the way out
expect 2 "asks for more than 10000 rows (the limit" -- timeout 20 "$H" coll scenarios/default.yaml --op all_reduce --sizes 1M:1G --factor 1.0000001
expect 2 "slices per transfer at the largest size (the limit is 1e6" -- timeout 20 "$H" coll scenarios/default.yaml --op all_reduce --sizes 1G --fidelity flow --chunk 1
expect 2 "resilience:1:29: resilience.horizon: 1e+12 s over a system MTBF of 0.0625 s" -- \
	timeout 20 "$H" run scenarios/default.yaml --set 'resilience={mtbf: {gpu: 1 s}, horizon: 1e12 s}'
expect 2 "model.layers: 10000000 is above hetsim's limit of 10000 layers" -- \
	timeout 20 "$H" run scenarios/default.yaml --set 'model={preset: llama3-8b, layers: 10000000}'
# a checkpoint interval of 0 s (leaving the key out means none), a kernel time of 1e300 s
expect 2 "resilience.checkpoint.interval: 0 s is not a checkpoint interval" -- \
	"$H" run scenarios/default.yaml --set 'resilience={mtbf: {gpu: 50000 h}, checkpoint: {interval: 0 s}}'
(cat calib/measurements/h200/kernels-2026-11-30/mem.jsonl
 printf '{"kind": "gemm", "dtype": "bf16", "m": 1024, "n": 1024, "k": 1024, "t_med": 1e300}\n') >"$tmp/t.jsonl"
expect 2 "t.jsonl:33: gemm record: t_med 1e+300 s is not a kernel time" -- \
	"$H" calib fit "$tmp/t.jsonl" --device H200-SXM-141GB -o "$tmp/p.yaml"
# offload needs the node's host link: named at the offload key, with the group and the key to add
printf 'cluster:\n  groups:\n    - {name: bare, nodes: 1, gpus_per_node: 8, gpu: H100-SXM-80GB}\nmodel: llama3-8b\ntraining: {global_batch: 8}\nparallelism:\n  zero: 1\n  offload: {optimizer: cpu}\n' >"$tmp/nohost.yaml"
expect 2 "nohost.yaml:8:24: parallelism.offload.optimizer: node group 'bare' describes no host link (expected cluster.groups.0.host" -- \
	"$H" run "$tmp/nohost.yaml"
# ZeRO-3's bucket settings are DeepSpeed's, FSDP's are PyTorch's: not both
expect 2 "parallelism.zero3: zero3 is DeepSpeed's ZeRO-3 and fsdp is PyTorch's" -- \
	"$H" run scenarios/default.yaml --set 'parallelism.zero3={prefetch_bucket: 50M}' --set parallelism.fsdp=true
# --set into a preset name says how to keep the preset and change one key
expect 2 "set it whole as a mapping: --set 'model={preset: llama3-8b, layers: ...}'" -- \
	"$H" run scenarios/default.yaml --set model.layers=4
# numeric options (sim/cli/opt.h, hs_optnum): not a number, trailing junk, a sign, overflow, out of range, inf
# and nan are exit 2 naming the option and its range, never atoi's 0 or strtoull's wrap (--limit -1 ran every
# point, -j 2x ran two threads, --top x printed none, --rank-wait x waited 0 s)
SW=scenarios/sweeps/llama3-8b-tp-pp.yaml
for c in "--limit|abc|a whole number from 0 to 9007199254740992" "--limit|-1|a whole number from 0 to" \
	"--limit|4x|a whole number from 0" "--limit|99999999999999999999999|a whole number from 0 to 9007199254740992" \
	"--limit| 4|a whole number" "--limit|+4|a whole number" "--limit||a whole number" \
	"-j|2x|a whole number from 0 to 1024" "-j|-1|a whole number from 0 to 1024" "--jobs|1025|a whole number from 0 to 1024" \
	"--top|x|a whole number from 0 to 2147483647" "--top|1.5|a whole number" "--top|4294967297|a whole number from 0 to 2147483647" \
	"--max-points|0|a whole number from 1 to" "--max-points|1e6|a whole number from 1 to" \
	"--rank-wait|x|a finite number of at least 0" "--rank-wait|-5|a finite number of at least 0" \
	"--rank-wait|nan|a finite number" "--rank-wait|inf|a finite number" "--rank-wait|1e999|a finite number" \
	"--rank-wait|5s|a finite number"; do
	o=${c%%|*} r=${c#*|} v=${r%%|*} want=${r#*|}
	expect 2 "^hetsim sweep: $o '$v': expected $want" -- "$H" sweep -q "$o" "$v" -o "$tmp/n.csv" $SW
done
expect 2 "^hetsim sweep: --limit '-1': expected a whole number" -- "$H" sweep -q --limit=-1 -o "$tmp/n.csv" $SW
expect 2 "^hetsim sweep: -j '0x10': expected a whole number" -- "$H" sweep -q -j0x10 -o "$tmp/n.csv" $SW
[ -e "$tmp/n.csv" ] || [ -e "$tmp/n.csv.part-0" ] && { echo "FAIL: a refused option left a sweep output"; fail=1; }
expect 2 "^hetsim place: --top '3x': expected a whole number from 1 to 2147483647" -- "$H" place --top 3x scenarios/default.yaml
expect 2 "^hetsim place: --top '0': expected a whole number from 1" -- "$H" place --top 0 scenarios/default.yaml
expect 2 "^hetsim coll: --channels '65': expected a whole number from 1 to 64" -- "$H" coll --channels 65 scenarios/default.yaml
expect 2 "^hetsim coll: --window ' 8': expected a whole number from 1 to 1024" -- "$H" coll --window ' 8' scenarios/default.yaml
expect 2 "^hetsim coll: --factor '1': expected a finite number above 1" -- "$H" coll --factor 1 scenarios/default.yaml
expect 2 "^hetsim coll: --factor 'inf': expected a finite number above 1" -- "$H" coll --factor inf scenarios/default.yaml
expect 2 "^hetsim coll: --ranks '2.5': expected a whole number from 1 to" -- "$H" coll --ranks 2.5 scenarios/default.yaml
expect 2 "^hetsim coll: --ranks 4096: the cluster has 16 devices (expected 1 to 16)" -- "$H" coll --ranks 4096 scenarios/default.yaml
expect 2 "^hetsim export-graph: --node '-1': expected a whole number from 0 to 1073741824" -- \
	"$H" export-graph --node -1 -o "$tmp/g" scenarios/default.yaml
expect 2 "^hetsim validate: --max-mape '': expected a finite number of at least 0" -- "$H" validate --max-mape '' "$tmp/man.yaml"
expect 2 "^hetsim validate: --max-mape '15%': expected a finite number of at least 0" -- "$H" validate --max-mape 15% "$tmp/man.yaml"
# the MPI launcher's rank and size, read from the environment, parsed as strictly (read as rank 0 of 1, every rank
# of a job would run every point)
expect 2 "^hetsim sweep: OMPI_COMM_WORLD_RANK='x' (the MPI launcher's rank): expected a whole number from 0 to 0" -- \
	env OMPI_COMM_WORLD_RANK=x "$H" sweep -q -o "$tmp/n.csv" $SW
expect 2 "^hetsim sweep: OMPI_COMM_WORLD_RANK='3' (the MPI launcher's rank): expected a whole number from 0 to 1 (OMPI_COMM_WORLD_SIZE=2)" -- \
	env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=2 "$H" sweep -q -o "$tmp/n.csv" $SW
expect 2 "^hetsim sweep: PMI_SIZE='2 ' (the MPI launcher's job size): expected a whole number from 1" -- \
	env PMI_SIZE='2 ' "$H" sweep -q -o "$tmp/n.csv" $SW
exit $fail
