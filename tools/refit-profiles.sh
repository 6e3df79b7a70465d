#!/bin/sh
# Refit the shipped device profiles from calib/measurements/ and derive the others by datasheet ratios.
# Usage: tools/refit-profiles.sh [HETSIM]   (default bin/hetsim; run from the repository root after `make`)
#
# H200-SXM-141GB: our own kernel run (back-to-back cuBLASLt GEMMs, copies and memory ops, refexec's kernel
# gap) with the PyTorch microbenchmarks (framework memory-op factors, flash attention); the fit says which
# rows fed each part (docs/calibration.md). H200-SXM-141GB-kernels: the kernel run alone, the profile that
# prices the kernels refexec runs (`hetsim calib compare-refexec ... --profile H200-SXM-141GB-kernels`).
set -eu
HETSIM=${1:-${HETSIM:-bin/hetsim}}
M=calib/measurements/h200
"$HETSIM" calib fit $M/kernels-2026-11-30 $M/h200-microbench-2026-11-29.jsonl \
	--device H200-SXM-141GB -o calib/profiles/H200-SXM-141GB.yaml --summary
"$HETSIM" calib fit $M/kernels-2026-11-30 --device H200-SXM-141GB --name H200-SXM-141GB-kernels \
	-o calib/profiles/H200-SXM-141GB-kernels.yaml --summary
for d in A100-SXM-40GB A100-SXM-80GB H100-SXM-80GB H100-PCIe-80GB B200 GB200 MI300X RTX-4090 RTX-3090 L40S; do
	"$HETSIM" calib derive calib/profiles/H200-SXM-141GB.yaml "$d" -o "calib/profiles/$d.yaml"
done
