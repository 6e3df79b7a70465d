#!/bin/sh
# hetsim list: every built-in name a scenario may use, with its figures and provenance; a family name as a
# gpu suggests its types.
set -u
. tests/integration/lib/expect.sh
out=$("$H" list gpus) || { echo "FAIL: list gpus exited $?"; fail=1; }
for g in A100-SXM-40GB A100-SXM-80GB H100-SXM-80GB H100-PCIe-80GB H200-SXM-141GB B200 GB200 MI300X RTX-4090 \
	RTX-3090 L40S; do
	printf '%s\n' "$out" | grep -Eq "^$g .*(measured on|derived from)" || { echo "FAIL: list gpus: $g"; fail=1; }
done
expect 0 "H100-SXM-80GB  *989  *1979  *80  *3.35  *450  *700  derived from H200-SXM-141GB" -- "$H" list gpus
expect 0 "llama3-8b  *32  *4096  *32/8  *14336  *128256  *8192  *-  *8.03B" -- "$H" list models
expect 0 "mixtral-8x7b .* 8 top-2  *46.70B  *12.88B" -- "$H" list models
expect 0 "nvl72  *switch  *yes (default) 72 GPUs" -- "$H" list topologies
expect 0 "rail-optimized  *rails" -- "$H" list topologies
expect 0 "zb-h1" -- "$H" list schedules
# every schedule has its line (a schedule added without one printed "(null)")
expect 0 "dualpipe     two copies" -- "$H" list schedules
"$H" list schedules | grep -q "(null)" && { echo "FAIL: a schedule without a description"; fail=1; }
expect 0 "pytorch-amp" -- "$H" list recipes
expect 0 "source: Megatron-LM defaults" -- "$H" list --long recipes
expect 0 "nvls_tree" -- "$H" list collectives
expect 2 "did you mean 'gpus'" -- "$H" list gpu
expect 2 "what to list" -- "$H" list
expect 2 "did you mean one of 'H100-SXM-80GB', 'H100-PCIe-80GB'" -- "$H" run --set cluster.groups.0.gpu=H100 scenarios/default.yaml
exit $fail
