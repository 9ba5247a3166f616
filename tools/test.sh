#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest:
# GoogleTest unit tests, lit/FileCheck, ONNX conformance, fixtures, fuzzing,
# checks of the compiled CUDA kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/install-test-data.sh
bash tools/install-cuda-tools.sh
bash tools/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)" "$@"
