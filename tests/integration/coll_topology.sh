#!/bin/sh
# Every example topology (scenarios/topology/) runs through `hetsim coll` on both network models, and the
# flow model gives a positive time for all-reduce and all-to-all over the first 16 devices (kept small: fast).
set -eu
HETSIM=${HETSIM:-bin/hetsim}
for f in scenarios/topology/*.yaml; do
	n=$("$HETSIM" coll --sizes 8:8 --json "$f" | sed -n "s/.*\"ranks\":\([0-9]*\).*/\1/p"); [ "$n" -gt 16 ] && n=16
	for fid in analytical flow; do
		for op in all_reduce all_to_all; do
			out=$("$HETSIM" coll --fidelity $fid --op $op --sizes 1M:1M --ranks $n --json "$f")
			echo "$out" | grep -q '"time_us":[0-9]' || { echo "$f $fid $op: $out"; exit 1; }
		done
	done
done
# On two 8-GPU nodes with a NIC per GPU, the flow model's defaults follow NCCL: a channel per NIC and the
# algorithm NCCL's tuner picks (the ring at 1 GiB). A ring's busbw is then bounded by a node's NICs, 8 x 200 Gb/s
# = 200 GB/s, and lies well above one NIC's 25 GB/s (what a single channel gave).
out=$("$HETSIM" coll --fidelity flow --sizes 1G:1G --json scenarios/validation/nccl/a100x16-azure-hdr.yaml)
bus=$(echo "$out" | sed -n 's/.*"busbw_GBps":\([0-9.]*\).*/\1/p')
echo "$out" | grep -q '"algo":"ring"' || { echo "flow AUTO on 2 A100 nodes should run NCCL's ring: $out"; exit 1; }
awk -v b="$bus" 'BEGIN { exit !(b > 150 && b <= 200 * 1.000001) }' || { echo "flow busbw $bus GB/s, expected 150-200"; exit 1; }
# bad input: unknown fidelity is a usage error (exit 2)
set +e
"$HETSIM" coll --fidelity packet scenarios/topology/explicit.yaml >/dev/null 2>&1
[ $? -eq 2 ] || { echo "--fidelity packet should exit 2"; exit 1; }
exit 0
