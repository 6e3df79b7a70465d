#!/bin/sh
# One-shot GPU session (issue 5): build kernels/, run the GEMM, memory and attention benchmarks, run refexec on
# the 1-GPU GPT step, check nccl_bench on one GPU, and leave at most 8 files under $OUT. About 10 minutes on an
# H200 (each step has its own time limit, so one that hangs does not take the rest down; the limits add up
# to 7.5 minutes, inside a 15-minute device session with its start-up). HETSIM=1 also builds hetsim there
# (it needs libyaml, GSL and HDF5, which the device machine may lack) and writes compare.txt; otherwise run
# `hetsim calib compare-refexec` on the results afterwards.
#
#   OUT=/path/to/results sh kernels/run-all.sh          (from the repository root)
#
# Files under $OUT:
#   run-all.log            everything printed, with each step's exit status and duration
#   gemm.jsonl             gemm_bench: bf16 grid (the H200 set) + fp16, fp8, tf32, fp32 at given shapes
#   mem.jsonl              mem_bench: hbm_copy, h2d/d2h, elementwise (add, gelu, layernorm, rmsnorm, softmax, dropout)
#   attn.jsonl             attn_bench: causal attention fwd and fwd+bwd (method batched_gemm_softmax)
#   refexec-gpt-1gpu.jsonl refexec on scenarios/validation/refexec/gpt-1gpu: per task, per op, step
#   nccl.jsonl             nccl_bench on one GPU, every collective
#   nccl-tests-logs.tar.gz nccl_bench's nccl-tests tables, one log per collective (hetsim calib import-nccl-tests)
#   compare.txt            hetsim calib compare-refexec, and a profile fitted from these measurements (if hetsim builds)
set -u
OUT=${OUT:-results}
mkdir -p "$OUT"
LOG="$OUT/run-all.log"
: >"$LOG"
ROOT=$(pwd)
GRAPH=scenarios/validation/refexec/gpt-1gpu.graph
SCEN=scenarios/validation/refexec/gpt-1gpu.yaml
TMP=$(mktemp -d)
K=kernels/bin

step() { # step NAME SECONDS COMMAND...
	name=$1; secs=$2; shift 2
	echo "== $name: $*" >>"$LOG"
	t0=$(date +%s)
	timeout "$secs" "$@" >>"$LOG" 2>&1
	rc=$?
	echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" >>"$LOG"
	return $rc
}

{
	echo "run-all.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
	git -C "$ROOT" rev-parse HEAD 2>/dev/null
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1
	nvcc --version 2>&1 | tail -1
} >>"$LOG"

step build 120 make -C kernels -j16 || { echo "kernels did not build; see $LOG"; exit 1; }

# hetsim itself (for a fresh export and the comparison), if its libraries are installed here; optional
HETSIM_BIN=""
if [ "${HETSIM:-0}" = 1 ] && step hetsim-build 120 make -j16; then
	HETSIM_BIN=bin/hetsim
	# `export-graph` may not be registered in this checkout's command table yet: fall back to the stored graph
	if step export 60 "$HETSIM_BIN" export-graph "$SCEN" -o "$TMP/gpt-1gpu.graph"; then
		GRAPH=$TMP/gpt-1gpu.graph
	fi
fi

# refexec first: the measurement the issue asks for, before anything can run out of time
step refexec 90 $K/refexec "$GRAPH" --warmup 3 --reps 10 --op-times -o "$OUT/refexec-gpt-1gpu.jsonl"

step gemm-grid 100 $K/gemm_bench --dtype bf16 --grid -o "$TMP/gemm-bf16.jsonl"
step gemm-dtypes 60 $K/gemm_bench --dtype fp16,fp8,tf32,fp32 \
	--shapes "4096,4096,4096;8192,8192,8192;2048,8192,2048;8192,2048,8192;16384,2048,2048;1024,1024,1024" \
	-o "$TMP/gemm-other.jsonl"
cat "$TMP/gemm-bf16.jsonl" "$TMP/gemm-other.jsonl" 2>/dev/null >"$OUT/gemm.jsonl"

step mem 45 $K/mem_bench -o "$OUT/mem.jsonl"
step attn 45 $K/attn_bench -o "$OUT/attn.jsonl"

mkdir -p "$TMP/nccl"
: >"$OUT/nccl.jsonl"
for op in all_reduce all_gather reduce_scatter alltoall broadcast sendrecv; do
	step "nccl-$op" 15 $K/nccl_bench --op "$op" -b 8 -e 256M --gpus 1 --json "$TMP/nccl-$op.jsonl" \
		&& cat "$TMP/nccl-$op.jsonl" >>"$OUT/nccl.jsonl"
	sed -n '/^# nccl_bench/,$p' "$LOG" | sed -n "/collective: $op /,/Avg bus bandwidth/p" >"$TMP/nccl/$op.log"
done
tar -C "$TMP" -czf "$OUT/nccl-tests-logs.tar.gz" nccl

if [ -n "$HETSIM_BIN" ]; then
	{
		echo "# hetsim calib compare-refexec $OUT/refexec-gpt-1gpu.jsonl $GRAPH"
		"$HETSIM_BIN" calib compare-refexec "$OUT/refexec-gpt-1gpu.jsonl" "$GRAPH" --profile H200-SXM-141GB 2>&1
		echo "# hetsim calib fit (these measurements; attention rows are batched_gemm_softmax, not flash)"
		"$HETSIM_BIN" calib fit "$OUT/gemm.jsonl" "$OUT/mem.jsonl" --device H200-SXM-141GB --summary \
			-o "$TMP/h200-kernels.yaml" 2>&1
	} >"$OUT/compare.txt"
fi
rm -rf "$TMP"
echo "done: $(ls "$OUT" | wc -l) files in $OUT" | tee -a "$LOG"
grep '"refexec_step"' "$OUT/refexec-gpt-1gpu.jsonl" 2>/dev/null
