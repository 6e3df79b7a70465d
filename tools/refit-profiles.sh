#!/bin/sh
# Refit the shipped device profiles from calib/measurements/ and derive the others by datasheet ratios.
# Usage: tools/refit-profiles.sh [HETSIM]   (default bin/hetsim; run from the repository root after `make`)
set -eu
HETSIM=${1:-${HETSIM:-bin/hetsim}}
"$HETSIM" calib fit calib/measurements/h200/h200-microbench-2026-11-29.jsonl \
	--device H200-SXM-141GB -o calib/profiles/H200-SXM-141GB.yaml --summary
for d in A100-SXM-40GB A100-SXM-80GB H100-SXM-80GB H100-PCIe-80GB B200 GB200 MI300X RTX-4090 RTX-3090 L40S; do
	"$HETSIM" calib derive calib/profiles/H200-SXM-141GB.yaml "$d" -o "calib/profiles/$d.yaml"
done
