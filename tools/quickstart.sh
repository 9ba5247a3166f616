#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the bundled
# example (examples/mlp, a PyTorch export of a 784-512-512-512-10 MLP):
#   1. the forward pass on the CPU against PyTorch's reference output;
#   2. the training-step plan under a memory budget (cost model: cpu);
#   3. five Adam training steps on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
BIN=${BUILD_DIR:-build}/bin
EX=examples/mlp

echo
echo "== 1. forward pass: remat-run $EX/model.onnx --inputs $EX/test_data_set_0"
out=$(mktemp -d)
"$BIN/remat-run" "$EX/model.onnx" --inputs "$EX/test_data_set_0" \
  --outputs "$out" --expect "$EX/test_data_set_0"

echo
echo "== 2. plan: remat-opt $EX/model.onnx --loss cross-entropy --budget 14MB --target cpu"
"$BIN/remat-opt" "$EX/model.onnx" --loss cross-entropy --budget 14MB --target cpu

echo
echo "== 3. train: remat-run $EX/model.onnx --train --loss cross-entropy --steps 5 --optimizer adam"
"$BIN/remat-run" "$EX/model.onnx" --train --loss cross-entropy \
  --inputs "$EX/train_data" --steps 5 --optimizer adam --lr 1e-3
