#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the bundled
# example (examples/mlp): import, show the IR summary, and run the forward
# pass on CPU against the PyTorch reference output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
BIN=${BUILD_DIR:-build}/bin
EX=examples/mlp
echo
echo "== remat-opt $EX/model.onnx (imported IR, first lines)"
"$BIN/remat-opt" "$EX/model.onnx" | head -n 12
echo
echo "== remat-run $EX/model.onnx --inputs $EX/test_data_set_0 (CPU)"
out=$(mktemp -d)
"$BIN/remat-run" "$EX/model.onnx" --inputs "$EX/test_data_set_0" \
  --outputs "$out" --expect "$EX/test_data_set_0"
