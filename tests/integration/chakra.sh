#!/bin/sh
# Chakra ET through the command line (docs/chakra.md): export-graph --format chakra, then run --workload
# chakra:PREFIX on the same scenario gives the built-in step time (analytical); ASTRA-sim's microbenchmark ETs
# at flow fidelity give what `hetsim coll --fidelity flow` gives for that collective; bad files exit 2 naming
# the file, the node and what was expected.
set -u
. tests/integration/lib/expect.sh
export HETSIM_NO_PROGRESS=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
step() { python3 -c "import json,sys; print(repr(json.load(sys.stdin)['step_time_s']))"; }

expect 0 "16 Chakra ET files" -- "$H" export-graph scenarios/default.yaml --format chakra -o "$T/def"
a=$("$H" run --json scenarios/default.yaml | step)
b=$("$H" run --json --workload "chakra:$T/def" scenarios/default.yaml | step)
[ "$a" = "$b" ] || { echo "FAIL: round trip: built-in $a s, through Chakra $b s"; fail=1; }

python3 tests/chakra/gen_microbench.py "$T/mb" 16 67108864
for op in all_reduce all_gather all_to_all reduce_scatter; do
	U=$(echo $op | tr a-z A-Z)
	c=$("$H" coll --op $op --sizes 64M:64M --fidelity flow --json scenarios/default.yaml |
		python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['time_us'])")
	w=$("$H" run --json --set simulation.fidelity=flow --workload "chakra:$T/mb/$U" scenarios/default.yaml | step)
	# coll prints microseconds to 3 decimals: equal within half of that last digit
	python3 -c "import sys; c,w=float('$c'),float('$w')*1e6; sys.exit(abs(c-w)>5e-4)" ||
		{ echo "FAIL: $op flow: coll $c us, Chakra ET $w s"; fail=1; }
done

# The same at 8, 64 and 1,024 ranks (1, 8 and 128 nodes of 8 H100s with a NIC each, a non-blocking fat-tree):
# the executor's collectives run the plan `hetsim coll --fidelity flow` runs (sim/coll/coll_flow.h: NCCL's
# algorithm choice, a channel per NIC), so the one-collective ET takes the time coll prints. At 1,024 ranks
# only the ring all-gather runs here (about 20 s each way on the shared 2-core machine); docs/chakra.md has
# all four.
scn() {
	cat <<EOT
name: chakra-flow
cluster:
  groups:
    - {name: h100, nodes: $1, gpus_per_node: 8, gpu: H100-SXM-80GB,
       scaleup: {kind: nvswitch, bandwidth: 450 GB/s, latency: 2 us},
       nic: {bandwidth: 400 Gb/s, per_node: 8, latency: 3 us}}
  fabric: {kind: fat-tree, tiers: 2, oversubscription: 1, latency: 1 us}
model: llama3-8b
training: {seq_len: 8192, global_batch: $(($1 * 2)), micro_batch: 1, precision: bf16, optimizer: adam}
parallelism: {tp: 8, pp: 1, dp: $1}
simulation: {fidelity: flow, seed: 1}
EOT
}
for nodes in 1 8 128; do
	n=$((nodes * 8))
	scn $nodes >"$T/s$n.yaml"
	ops="all_reduce all_gather all_to_all reduce_scatter"
	[ $n -eq 1024 ] && ops=all_gather
	python3 tests/chakra/gen_microbench.py "$T/f$n" $n 67108864 $ops
	for op in $ops; do
		U=$(echo $op | tr a-z A-Z)
		c=$("$H" coll --op $op --sizes 64M:64M --fidelity flow --json "$T/s$n.yaml" |
			python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['time_us'])")
		w=$("$H" run --json --workload "chakra:$T/f$n/$U" "$T/s$n.yaml" | step)
		python3 -c "import sys; c,w=float('$c'),float('$w')*1e6; sys.exit(abs(c-w)>5e-4)" ||
			{ echo "FAIL: $op over $n ranks, flow: coll $c us, Chakra ET $w s"; fail=1; }
	done
done

# bad input: a truncated file, a missing prefix, a rank too many for the cluster, a bad --workload
for r in $(seq 0 15); do cp "$T/def.$r.et" "$T/cut.$r.et"; done
head -c 310 "$T/def.3.et" >"$T/cut.3.et"
expect 2 "cut.3.et: byte [0-9]*: node message [0-9]* (after node [0-9]*) is cut short.*expected a complete length-delimited message" -- "$H" run --workload "chakra:$T/cut" scenarios/default.yaml
expect 2 "nothere.0.et: cannot open (expected the Chakra ET of rank 0" -- "$H" run --workload "chakra:$T/nothere" scenarios/default.yaml
python3 tests/chakra/gen_microbench.py "$T/big" 17 1024 all_reduce
expect 2 "the trace has 17 ranks .* but the scenario's cluster has 16 devices" -- "$H" run --workload "chakra:$T/big/ALL_REDUCE" scenarios/default.yaml
expect 2 "expected chakra:PREFIX" -- "$H" run --workload "astra:$T/def" scenarios/default.yaml
expect 2 "expected hsgraph or chakra" -- "$H" export-graph scenarios/default.yaml --format et -o "$T/x"
exit $fail
