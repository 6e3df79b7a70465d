#!/bin/sh
# The reference executor without a GPU (issue 17): kernels/refexec_cpu.c runs refexec's own scheduling core
# (kernels/refexec_sched.c) and graph reader on threads whose kernels sleep for each task's pred_s.
#   - tests/data/refexec/two-streams.graph, whose step is derived by hand in its header (two ranks, two streams
#     on rank 0, a collective rendezvous, a dependency across streams, compute overlapping the all-reduce):
#     the step is 0.26 s and each task starts where the header says;
#   - the same graph with task 5's dependency on the all-reduce dropped must fail that check (0.22 s), so the
#     check would see a scheduler that lost a dependency;
#   - a graph hetsim exported (scenarios/validation/refexec/gpt-1gpu.graph) runs, its step no shorter than
#     the sum of its chain of tasks.
set -u
CC=${CC:-cc}
san=""
case "${BUILD:-build}" in build-asan*) san="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;; esac
T=$(mktemp -d /tmp/hetsim-refcpu-XXXXXX)
trap 'rm -rf "$T"' EXIT
# shellcheck disable=SC2086
$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -Wshadow -Wpedantic -Wmissing-prototypes \
	-Wstrict-prototypes -Wno-unused-parameter $san -pthread kernels/refexec_cpu.c kernels/refexec_sched.c \
	kernels/graph_reader.c -o "$T/refexec_cpu" || { echo "FAIL: refexec_cpu does not build"; exit 1; }
# check GRAPH: 0 when the step and the task starts are the hand-derived ones (within 15 ms: thread wake-ups
# on a loaded 2-core machine), else 1 with what differs
check() {
	"$T/refexec_cpu" "$1" --reps 3 -o "$T/out.jsonl" 2>/dev/null || { echo "refexec_cpu failed on $1"; return 1; }
	python3 - "$T/out.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
step = [r for r in recs if r["kind"] == "refexec_step"][0]["t_med"]
start = {r["task"]: r["start_med"] for r in recs if r["kind"] == "refexec_task"}
want = {"step": 0.26, 0: 0.0, 1: 0.0, 2: 0.10, 3: 0.14, 4: 0.10, 5: 0.22}
got = {"step": step, **start}
bad = [f"{k}: {got[k]:.4f} s, expected {v:.2f} s" for k, v in want.items() if abs(got[k] - v) > 0.015]
print("refexec_cpu: step %.4f s; starts %s" % (step, ", ".join("%d@%.3f" % (k, v) for k, v in sorted(start.items()))))
if bad:
    print("differs from the hand derivation: " + "; ".join(("task " if k != "step" else "") + b for k, b in zip([k for k, v in want.items() if abs(got[k] - v) > 0.015], bad)))
    sys.exit(1)
PY
}
fail=0
check tests/data/refexec/two-streams.graph || { echo "FAIL: the hand-derived graph"; fail=1; }
sed 's/deps=2,4 /deps=4 /' tests/data/refexec/two-streams.graph >"$T/dropped.graph"
grep -q 'deps=4 pred_s=0.04' "$T/dropped.graph" || { echo "FAIL: could not drop the dependency"; fail=1; }
if check "$T/dropped.graph"; then
	echo "FAIL: the check passes with task 5's dependency on the all-reduce dropped"; fail=1
else
	echo "refexec_cpu: a dropped dependency is caught (as it must be)"
fi
# an exported graph: one rank, a chain of three tasks
"$T/refexec_cpu" scenarios/validation/refexec/gpt-1gpu.graph --reps 1 --time-scale 0.2 -o "$T/gpt.jsonl" 2>/dev/null ||
	{ echo "FAIL: refexec_cpu on gpt-1gpu.graph"; fail=1; }
python3 - "$T/gpt.jsonl" <<'PY' || fail=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
step = [r for r in recs if r["kind"] == "refexec_step"][0]
chain = sum(r["pred_s"] for r in recs if r["kind"] == "refexec_task") * 0.2
if not (step["t_med"] >= 0.98 * chain and step["tasks"] == 3):
    sys.exit(f"FAIL: gpt-1gpu step {step['t_med']:.4f} s, shorter than its chain {chain:.4f} s")
print(f"refexec_cpu: gpt-1gpu.graph step {step['t_med']:.4f} s (chain of predictions x 0.2: {chain:.4f} s)")
PY
exit $fail
