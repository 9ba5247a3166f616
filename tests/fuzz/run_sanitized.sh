#!/usr/bin/env bash
# Builds remat with clang + AddressSanitizer + UBSan into BUILD_DIR, runs the
# unit tests there, plans and generates code for two models with the
# instrumented remat-opt (planner and emitter under ASan), then fuzzes the
# ONNX importer (seeded with the test models) for FUZZ_SECONDS (default 20).
# Usage: run_sanitized.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
seconds=${FUZZ_SECONDS:-20}
export CCACHE_BASEDIR=$src
cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DREMAT_SANITIZE=ON -DREMAT_FUZZ=ON >/dev/null
ninja -C "$build" runtime-kernel-tests interpreter-tests importer-fuzzer remat-opt
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/bin/runtime-kernel-tests" --gtest_brief=1
"$build/bin/interpreter-tests" --gtest_brief=1

# Planning and code generation: import, autodiff, auto/sqrt plans, the
# memory-plan verifier and the C++/CUDA emitters, all instrumented.
emit=$build/asan-emit
rm -rf "$emit"
"$build/bin/remat-opt" "$src/tests/fixtures/gpt2_tiny/loss/model.onnx" \
  --budget 15MB --target cpu --optimizer adam --emit=cuda -o "$emit/gpt2_tiny"
"$build/bin/remat-opt" "$src/tests/models/pytorch/cnn/loss/model.onnx" \
  --budget 400KB --target cpu --optimizer sgd --strategy sqrt --emit=cpp \
  -o "$emit/cnn"

corpus=$build/fuzz-corpus
mkdir -p "$corpus"
find "$src/tests/models" "$src/examples" -name '*.onnx' -size -200k \
  -exec cp {} "$corpus/" \; 2>/dev/null || true
echo "fuzzing the importer for ${seconds} s"
# Rejected inputs print one importer error each; keep the log to libFuzzer's
# own lines and any sanitizer report.
set -o pipefail
"$build/bin/importer-fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -timeout=20 -max_len=65536 "$corpus" 2>&1 | grep -v "^error: .*remat-fuzz-"
