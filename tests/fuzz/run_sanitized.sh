#!/usr/bin/env bash
# Builds remat with clang + AddressSanitizer + UBSan into BUILD_DIR, runs
# every unit-test binary there (the list CMake writes to
# unit-test-binaries.txt), runs the lit suite with the instrumented remat-opt
# and remat-run (less the tests that repeat auto's searches), plans and
# generates code for two models (planner and emitters under ASan), then
# fuzzes the ONNX importer (seeded with the test models) for FUZZ_SECONDS
# (default 20).
# Usage: run_sanitized.sh SOURCE_DIR BUILD_DIR PYTHON LIT_PY
set -euo pipefail
src=$1
build=$2
python=$3
lit=$4
seconds=${FUZZ_SECONDS:-20}
export CCACHE_BASEDIR=$src
cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DREMAT_SANITIZE=ON -DREMAT_FUZZ=ON >/dev/null
mapfile -t unit_tests < "$build/unit-test-binaries.txt"
ninja -C "$build" "${unit_tests[@]}" importer-fuzzer remat-opt remat-run
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Left out here only: the strategies' search-quality comparisons and their
# printed budget table, minutes each under ASan on 2 busy cores
# (AutoNeverWorseThanSqrtAndAll ~400 s, BudgetSweepTable ~500 s, the
# heuristic against the MILP ~260 s, the step-time bound against every
# strategy and the MILP ~100 s unsanitized), which rerun the searches that
# the binary's other tests and the lit suite's plans already run
# instrumented (the bound's random-plan test among them).
declare -A skip=(
  [planning-tests]="Strategies.AutoNeverWorseThanSqrtAndAll:Strategies.BudgetSweepTable:Strategies.AutoHeuristicWithinFivePercentOfProvenMilp:StepTimeBound.NeverAboveAnyStrategyAndCloseToTheProvenOptimum"
)
for test in "${unit_tests[@]}"; do
  echo "sanitized: $test"
  "$build/bin/$test" --gtest_brief=1 --gtest_filter="-${skip[$test]:-}"
done

# The lit suite runs the tools it finds in this tree: instrumented. Except
# the tests whose time goes to auto's searches over and over (impossible
# budgets, each a floor search; budget sweeps), which the unsanitized suite
# runs in full: arena-near-bound (~100 plans, the Llama-7B shape's among
# them: 17 minutes under ASan on 2 busy cores), plan-explorer (1614 s),
# report (1163 s), plan-views (819 s), resnet-floor (503 s), floor (474 s)
# and compiler-explorer (471 s), 84 minutes of ASan time on a loaded
# machine. GPT-2 small's floor search below stands in for their searches;
# the paths of their own (views, reports, refusals, MLIR input) run once
# each after the suite.
heavy='arena-near-bound|plan-explorer|planning/report|plan-views|resnet-floor'
heavy+='|planning/floor|compiler-explorer'
echo "sanitized: lit"
"$python" "$lit" -s --filter-out "$heavy" "$build/tests/lit"

# Planning and code generation: import, autodiff, auto/sqrt plans, the
# memory-plan verifier and the C++/CUDA emitters, all instrumented.
emit=$build/asan-emit
rm -rf "$emit"
cnn=$src/tests/models/pytorch/cnn/loss/model.onnx
gpt2_tiny=$src/tests/fixtures/gpt2_tiny/loss/model.onnx
"$build/bin/remat-opt" "$gpt2_tiny" --budget 15MB --target cpu --optimizer adam \
  --emit=cuda -o "$emit/gpt2_tiny"
"$build/bin/remat-opt" "$cnn" --budget 400KB --target cpu --optimizer sgd \
  --strategy sqrt --emit=cpp -o "$emit/cnn"
# A 932-op step: auto's grouped search, the arena search and the floor search.
"$build/bin/remat-opt" "$src/tests/fixtures/scale/gpt2_small/model_loss.onnx" \
  --budget 6GB --target h100 --report-floor > /dev/null
# The views, reports and refusals of the lit tests left out above.
"$build/bin/remat-opt" "$cnn" --budget 520KB --target cpu --strategy sqrt \
  --emit=html --compare budget=500KB,budget=560KB --sweep-points 2 \
  -o "$emit/cnn.html" 2> /dev/null
for view in plan json; do
  "$build/bin/remat-opt" "$cnn" --budget 520KB --target cpu --strategy sqrt \
    --emit=$view > "$emit/cnn.$view"
done
"$build/bin/remat-opt" "$cnn" --budget 1MB --target cpu --precision bf16 \
  > /dev/null
status=0
"$build/bin/remat-opt" "$src/tests/fixtures/mlp/loss/model.onnx" --budget 1KB \
  --target cpu > /dev/null 2> "$emit/refusal.log" || status=$?
if [ "$status" -ne 2 ]; then
  tail -40 "$emit/refusal.log"
  echo "remat-opt exits $status on an impossible budget, not 2"
  exit 1
fi
"$build/bin/remat-opt" "$gpt2_tiny" > "$emit/gpt2_tiny.mlir"
"$build/bin/remat-opt" --budget 14MB --target cpu "$emit/gpt2_tiny.mlir" \
  -o "$emit/gpt2_tiny.planned.mlir"

corpus=$build/fuzz-corpus
mkdir -p "$corpus"
find "$src/tests/models" "$src/examples" -name '*.onnx' -size -200k \
  -exec cp {} "$corpus/" \; 2>/dev/null || true
# Inputs that once crashed the importer run first, one by one (a file
# argument makes libFuzzer execute it instead of fuzzing).
for regression in "$src"/tests/fuzz/regressions/*.onnx; do
  if ! "$build/bin/importer-fuzzer" "$regression" > "$build/regression.log" 2>&1; then
    grep -a -v "^error: " "$build/regression.log" | tail -40
    echo "importer-fuzzer fails on $regression"
    exit 1
  fi
done
cp "$src"/tests/fuzz/regressions/*.onnx "$corpus/"
echo "fuzzing the importer for ${seconds} s"
# Rejected inputs print one importer error each; keep the log to libFuzzer's
# own lines and any sanitizer report (-a: fuzzed bytes in an error line
# must not turn the log into "binary file matches" and hide a crash report).
set -o pipefail
"$build/bin/importer-fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -timeout=20 -max_len=65536 "$corpus" 2>&1 | grep -a -v "^error: .*remat-fuzz-"
