#!/bin/sh
# kernels/ compiles (warnings are errors) wherever nvcc exists; skipped (exit 77) where it does not.
# Builds into a temporary folder with parallel jobs (about a minute on 2 cores) and checks that every program
# prints its usage without touching a GPU. The CUDA part runs only on a GPU (kernels/run-all.sh).
set -u
# The sanitizer run (make check-asan, BUILD=build-asan) repeats every test; kernels/ does not depend on it.
case "${BUILD:-build}" in build-asan*) echo "checked in the plain run"; exit 77 ;; esac
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null)}
if [ -z "$NVCC" ]; then
	echo "nvcc not found"
	exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# MAKEFLAGS from an outer `make -jN test` would make this submake warn about its jobserver: not a compiler
# warning, so the submake runs without them.
if ! MAKEFLAGS= MFLAGS= timeout 170 make -s -C kernels -j8 NVCC="$NVCC" BINDIR="$out" >"$out/log" 2>&1; then
	cat "$out/log"
	echo "kernels_build: make -C kernels failed"
	exit 1
fi
if grep -i 'warning' "$out/log"; then
	echo "kernels_build: compiler warnings"
	exit 1
fi
for p in gemm_bench mem_bench attn_bench nccl_bench refexec; do
	[ -x "$out/$p" ] || { echo "kernels_build: $p not built"; exit 1; }
	"$out/$p" --help | grep -q "usage: $p" || { echo "kernels_build: $p --help"; exit 1; }
done
# without nvcc, `make kernels` says so and succeeds
msg=$(make -s -C kernels NVCC= BINDIR="$out/none" 2>&1) || { echo "kernels_build: the skip path failed"; exit 1; }
echo "$msg" | grep -q "nvcc not found" || { echo "kernels_build: no skip message: $msg"; exit 1; }
echo "kernels_build: ok"
