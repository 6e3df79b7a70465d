#!/bin/sh
# Bad workloads (issue 4): exit 2 with a message naming the numbers, file:line:col first, when the model does
# not divide as asked; exit 3 with the memory figures when it does not fit.
set -u
. tests/integration/lib/expect.sh
expect 2 "heads-tp.yaml:[0-9]*:[0-9]*: parallelism: .*heads (12) not divisible by tp (8)" -- "$H" run $D/heads-tp.yaml
expect 2 "layers-pp.yaml:[0-9]*:[0-9]*: parallelism: .*layers (30) not divisible by pp x virtual stages (4 x 2 = 8)" -- "$H" run $D/layers-pp.yaml
expect 2 "batch-dp.yaml:[0-9]*:[0-9]*: training.global_batch: 12 is not divisible by dp x micro_batch = 8 x 1 = 8" -- "$H" run $D/batch-dp.yaml
expect 2 "ep-experts.yaml:[0-9]*:[0-9]*: parallelism: .*ep (16) larger than the number of experts (8)" -- "$H" run $D/ep-experts.yaml
expect 2 "expert_imbalance.shares: expected a list of 8 shares, one per expert (found 3)" -- "$H" run $D/imbalance-shares.yaml
expect 2 "parallelism.expert_imbalance: the model has no experts" -- "$H" run $D/imbalance-dense.yaml
expect 2 "parallelism.cp_mode: " -- "$H" run scenarios/default.yaml --set parallelism.cp_mode=rings
expect 2 "fsdp: true is ZeRO stage 3, but zero: 1 is given" -- "$H" run scenarios/default.yaml --set parallelism.fsdp=true --set parallelism.zero=1
expect 2 "training.attention: " -- "$H" run scenarios/default.yaml --set training.attention=fast
# in-layer collectives on the network need the flow model; an unknown choice names the choices
expect 2 "simulation.layer_collectives: 'network' needs fidelity: flow" -- "$H" run scenarios/default.yaml --set simulation.layer_collectives=network
expect 2 "simulation.layer_collectives: 'net' is not known (expected one of: network, closed_form)" -- "$H" run scenarios/default.yaml --set simulation.fidelity=flow --set simulation.layer_collectives=net
expect 0 "step time" -- "$H" run scenarios/default.yaml --set simulation.fidelity=flow --set simulation.layer_collectives=closed_form
# does not fit: exit 3 with the figures
expect 3 "does not fit in memory: stage 0 needs [0-9.]* GiB per GPU but H100-SXM-80GB (GPU 0, of 80.0 GiB) has 78.0 GiB usable" -- "$H" run $D/too-big.yaml
# a stage on an 80 GB and a 48 GB device: the 48 GB one is named, with or without symmetry
expect 3 "but G48 (GPU 1, of 48.0 GiB) has 46.0 GiB usable" -- "$H" run $D/mixed-80-48.yaml
expect 3 "but G48 (GPU 1, of 48.0 GiB) has 46.0 GiB usable" -- "$H" run --no-symmetry $D/mixed-80-48.yaml
# uneven interleaved chunks: a list that does not sum, Megatron's split that does not divide, chunk 0 inside
expect 2 "llama31-405b-16k.yaml:[0-9]*:[0-9]*: parallelism.embedding_as_layer: 126 layers + 1 (embedding) + 1 (loss) = 128 do not split over pp x virtual_stages = 16 x 3" -- "$H" run scenarios/llama3/llama31-405b-16k.yaml --set parallelism.virtual_stages=3
expect 2 "stage-layers-chunks.yaml:[0-9]*:[0-9]*: parallelism.stage_layers: 4 + 3 = 7 layers" -- "$H" run $D/stage-layers-chunks.yaml
expect 2 "parallelism.fsdp.reshard_after_forwrd" -- "$H" run scenarios/default.yaml --set parallelism.fsdp.reshard_after_forwrd=false
expect 3 "fsdp-too-big.yaml: does not fit in memory: stage 0 needs" -- "$H" run $D/fsdp-too-big.yaml
# the shipped MoE scenarios and ZeRO-3 / ring CP variants run
expect 0 "step time" -- "$H" run scenarios/moe/mixtral-8x7b.yaml
expect 0 "step time" -- "$H" run scenarios/moe/deepseek-v3-style.yaml
expect 0 "ZeRO-3" -- "$H" run scenarios/default.yaml --set parallelism.fsdp=true
expect 0 "step time" -- "$H" run scenarios/default.yaml --set parallelism.cp=2 --set parallelism.dp=2 --set parallelism.cp_mode=ring
exit $fail
