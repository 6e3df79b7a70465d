#!/bin/sh
# Layer stacks that mix kinds (models/mixer.h): the hybrid preset runs; a bad layer_pattern exits 2 with
# file:line:col and the key.
set -u
. tests/integration/lib/expect.sh
expect 0 "step time" -- "$H" run scenarios/hybrid/qwen3-next-80b-a3b.yaml
expect 2 "pattern-unknown.yaml:8:43: model.layer_pattern\[3\]: 'fulll' is not a layer kind (expected one of full, sliding, linear, mamba2, dsa; did you mean 'full'?)" -- "$H" run $D/pattern-unknown.yaml
expect 2 "pattern-divide.yaml:8:18: model.layer_pattern: 5 kinds do not divide layers (48)" -- "$H" run $D/pattern-divide.yaml
expect 2 "pattern-empty.yaml:8:18: model.layer_pattern: empty" -- "$H" run $D/pattern-empty.yaml
expect 2 "cp (2) > 1 with linear layers is not modelled" -- "$H" run scenarios/hybrid/qwen3-next-80b-a3b.yaml --set parallelism.cp=2 --set parallelism.ep=4
exit $fail
