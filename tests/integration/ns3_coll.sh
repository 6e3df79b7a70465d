#!/bin/sh
# simulation.network: ns3 (docs/network.md). Where the build has the ns-3 model: `hetsim coll --fidelity flow`
# runs on it, says so in its banner, and gives the same output twice. Where it does not: selecting it exits 2
# with "not built: install libns3-dev". A flow-fidelity training step runs on it too: a two-node DP step's time
# within 1% of the flow model's (packet headers, tests/unit/net/test_net_ns3.c derives them). Either way: ns3
# at analytical fidelity, coll without --fidelity flow, and a value not in the table, each exit 2 at the key.
set -u
. tests/integration/lib/expect.sh
S=scenarios/validation/nccl/h100x16-ndr.yaml
if ar t "${BUILD:-build}/libhetsim.a" 2>/dev/null | grep -qx net_ns3.o; then
	expect 0 "(ns3 model)" -- "$H" coll --fidelity flow --algo ring --sizes 1M:4M --set simulation.network=ns3 $S
	expect 0 "algo/proto: ring/ns3" -- "$H" coll --fidelity flow --algo ring --sizes 1M:1M --set simulation.network=ns3 $S
	a=$("$H" coll --fidelity flow --sizes 1M:4M --json --set simulation.network=ns3 $S)
	b=$("$H" coll --fidelity flow --sizes 1M:4M --json --set simulation.network=ns3 $S)
	[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: two ns3 runs differ"; fail=1; }
	# a training scenario's --set overrides are checked as `hetsim run` checks them, the network key aside
	expect 0 "(ns3 model)" -- "$H" coll --fidelity flow --sizes 1M:1M --set simulation.network=ns3 scenarios/default.yaml
	expect 2 "parallelism.tpp: unknown key" -- \
		"$H" coll --fidelity flow --sizes 1M:1M --set simulation.network=ns3 --set parallelism.tpp=2 scenarios/default.yaml
	D=tests/data/ns3/dp2-step.yaml
	tn=$("$H" run --json $D | sed -n 's/.*"step_time_s":\([0-9.e+-]*\).*/\1/p' | head -1)
	tf=$("$H" run --json --set simulation.network=flow $D | sed -n 's/.*"step_time_s":\([0-9.e+-]*\).*/\1/p' | head -1)
	ok=$(awk -v a="$tn" -v b="$tf" 'BEGIN { print (a > 0 && b > 0 && a >= b && (a - b) / b < 0.01) ? 1 : 0 }')
	[ "$ok" = 1 ] || { echo "FAIL: DP step on ns3 $tn s, flow $tf s (expected ns3 >= flow, within 1%)"; fail=1; }
else
	expect 2 "simulation.network: 'ns3': .*not built: install libns3-dev (make deps)" -- \
		"$H" coll --fidelity flow --sizes 1M:1M --set simulation.network=ns3 $S
fi
expect 2 "simulation.network: 'ns3' carries the transfers of flow fidelity" -- \
	"$H" run scenarios/default.yaml --set simulation.network=ns3
expect 2 "simulation.network: 'ns3' runs the collective step by step on ns-3 (expected --fidelity flow" -- \
	"$H" coll --sizes 1M:1M --set simulation.network=ns3 $S
expect 2 "simulation.network: 'tcp' is not known (expected one of: flow, ns3)" -- \
	"$H" coll --fidelity flow --sizes 1M:1M --set simulation.network=tcp $S
expect 0 "(flow model)" -- "$H" coll --fidelity flow --sizes 1M:1M --set simulation.network=flow $S
exit $fail
