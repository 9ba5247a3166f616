#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the bundled
# example (examples/mlp, a PyTorch export of a 784-512-512-512-10 MLP):
#   1. the forward pass on the CPU against PyTorch's reference output;
#   2. the training-step plan under a memory budget (cost model: cpu);
#   3. five Adam training steps on the CPU (the interpreter, remat-run);
#   4. the same plan compiled into a training executable (remat-opt
#      --emit=exe: CUDA when a GPU and nvcc are present, else the CPU build
#      of the same code) and run for five steps: the same losses as 3.
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

# The executable: CUDA on a GPU machine, the CPU build of the same generated
# code elsewhere.
backend=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  backend=cuda
fi
echo
echo "== 4. executable: remat-opt $EX/model.onnx --loss cross-entropy --budget 14MB --target cpu --emit=exe --backend $backend -o $out/mlp-train"
"$BIN/remat-opt" "$EX/model.onnx" --loss cross-entropy --budget 14MB \
  --target cpu --optimizer adam --lr 1e-3 --emit=exe --backend "$backend" \
  -o "$out/mlp-train" | tail -n 3
echo "== $out/mlp-train --steps 5 --inputs $EX/train_data"
"$out/mlp-train" --steps 5 --inputs "$EX/train_data"
