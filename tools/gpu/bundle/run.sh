#!/usr/bin/env bash
# Verifies and benchmarks remat's CUDA path on this machine's GPU, in one
# command (made by tools/gpu/bundle.sh; see README.md next to this file):
#
#   ./run.sh RESULTS_DIR [--dry-run] [--jobs N] [--prebuilt DIR]
#
# 1. builds the CUDA runtime, the generated programs and the CUDA kernel
#    tests with nvcc for sm_90 (CMake + ninja, into RESULTS_DIR/build);
# 2. runs the CUDA kernel tests (GoogleTest, bundled);
# 3. runs each program against remat-run's reference losses and parameters
#    (the tolerances of cuda_compare.py), and measures its step time and
#    peak memory against its plan and budget;
# 4. times the fused attention kernels against torch's
#    scaled_dot_product_attention (RESULTS_DIR/attention-bench.json) and
#    GPT-2 small's GEMMs (gemm-bench.jsonl), measures the memory-bound
#    kernels' bandwidth (kernel-bench.jsonl), and profiles GPT-2 small's
#    step per kernel (profile-*.txt);
# 5. runs the same models in PyTorch eager (fp32, checkpoint per block,
#    bf16 autocast) for step time and torch.cuda.max_memory_allocated;
# then writes RESULTS_DIR/results.json and results.md. Exits non-zero if
# the build, a kernel test or an equivalence check fails (the failing
# program and tensor are named). --dry-run lists the steps without running.
# --prebuilt DIR skips step 1 and runs the binaries already in DIR
# (cuda-kernel-tests, attention-bench, gemm-bench, kernel-bench, programs/*), built elsewhere with the
# same nvcc (e.g. with -DREMAT_STATIC_CUBLAS=OFF, small enough to carry):
# a short GPU window then goes to running, not compiling.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS= DRY=0 JOBS=$(nproc 2>/dev/null || echo 4) PREBUILT=
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY=1 ;;
    --jobs) JOBS=$2; shift ;;
    --prebuilt) PREBUILT=$(cd "$2" && pwd) || exit 64; shift ;;
    -*) echo "run.sh: unknown flag $1" >&2; exit 64 ;;
    *) RESULTS=$1 ;;
  esac
  shift
done
[ -n "$RESULTS" ] || { echo "usage: $0 RESULTS_DIR [--dry-run] [--jobs N]" >&2; exit 64; }
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd)
BUILD=$RESULTS/build
STATUS=$RESULTS/status # one line per stage: name, exit status, seconds

step() { # step NAME LOG COMMAND...: runs (or lists) one stage
  local name=$1 log=$2; shift 2
  if [ $DRY = 1 ]; then
    echo "would run [$name]: $*"
    case " $* " in *" --dry-run "*) "$@" | sed 's/^/    /' ;; esac # its own list
    return 0
  fi
  echo "== $name: $*"
  local start=$(date +%s)
  # REMAT_STAGE_TIMEOUT_S bounds each stage (exit 124), so that one hung
  # stage cannot spend a short GPU window.
  if [ -n "${REMAT_STAGE_TIMEOUT_S:-}" ]; then
    set -- timeout --kill-after=5 "$REMAT_STAGE_TIMEOUT_S" "$@"
  fi
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  echo "$name $rc $(( $(date +%s) - start ))" >> "$STATUS"
  echo "== $name: exit $rc in $(( $(date +%s) - start )) s"
  return $rc
}

[ $DRY = 1 ] || : > "$STATUS"
if [ $DRY = 0 ]; then
  for tool in nvcc cmake ninja python3; do
    command -v $tool >/dev/null || { echo "run.sh: FAIL: $tool not found on PATH" >&2; exit 1; }
  done
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    > "$RESULTS/gpu.txt" 2>&1 || echo "nvidia-smi failed" > "$RESULTS/gpu.txt"
  cat "$RESULTS/gpu.txt"
fi
ok=1
if [ -n "$PREBUILT" ]; then
  BUILD=$PREBUILT
  echo "run.sh: using the binaries in $BUILD (no build)"
else
  step build "$RESULTS/build.log" bash -c "cmake -G Ninja -S '$HERE' -B '$BUILD' \
      -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && ninja -C '$BUILD' -j$JOBS" || ok=0
fi
built=$ok # the later stages need the binaries, not passing kernel tests
if [ $ok = 1 ] || [ $DRY = 1 ]; then
  step kernel-tests "$RESULTS/kernel-tests.log" \
      "$BUILD/cuda-kernel-tests" --gtest_output=json:"$RESULTS/kernel-tests.json" || ok=0
  step programs "$RESULTS/programs.log" python3 "$HERE/run_programs.py" \
      --bundle "$HERE" --bin "$BUILD/programs" --out "$RESULTS" \
      $( [ $DRY = 1 ] && echo --dry-run ) || ok=0
fi
# Fused attention kernels vs torch sdpa: measured only (the kernel tests
# check them), so a failure here is reported but does not fail the run.
if [ $built = 1 ] || [ $DRY = 1 ]; then
  step attention-bench "$RESULTS/attention-bench.log" python3 "$HERE/attention_bench.py" \
      --remat "$BUILD/attention-bench" --out "$RESULTS/attention-bench.json" \
      $( [ $DRY = 1 ] && echo --dry-run ) || true
fi
# GPT-2 small's GEMMs through the runtime: measured only.
if [ $built = 1 ] || [ $DRY = 1 ]; then
  step gemm-bench "$RESULTS/gemm-bench.log" bash -c \
      "'$BUILD/gemm-bench' > '$RESULTS/gemm-bench.jsonl'" || true
fi
# The memory-bound kernels' bandwidth against a device copy: measured only.
if [ $built = 1 ] || [ $DRY = 1 ]; then
  step kernel-bench "$RESULTS/kernel-bench.log" bash -c \
      "'$BUILD/kernel-bench' > '$RESULTS/kernel-bench.jsonl'" || true
fi
# Per-kernel times of GPT-2 small's step (REMAT_CUDA_PROFILE): measured only.
if [ $built = 1 ] || [ $DRY = 1 ]; then
  step profile "$RESULTS/profile.log" python3 "$HERE/run_programs.py" --profile \
      --bundle "$HERE" --bin "$BUILD/programs" --out "$RESULTS" \
      $( [ $DRY = 1 ] && echo --dry-run ) || true
fi
# PyTorch eager: for comparison only; a missing torch or GPU is a named skip.
step torch-eager "$RESULTS/torch.log" python3 "$HERE/torch_baseline.py" \
    --bundle "$HERE" --out "$RESULTS/torch.json" $( [ $DRY = 1 ] && echo --dry-run ) || true
step report "$RESULTS/report.log" python3 "$HERE/run_programs.py" --bundle "$HERE" \
    --out "$RESULTS" --report-only $( [ $DRY = 1 ] && echo --dry-run ) || ok=0
[ $DRY = 1 ] && exit 0
if [ $ok = 1 ]; then
  echo "run.sh: PASS; results in $RESULTS/results.json and results.md"
  exit 0
fi
echo "run.sh: FAIL (see $RESULTS/results.md and the logs in $RESULTS):" >&2
grep -h "^FAIL" "$RESULTS"/*.log >&2 || awk '$2 != 0 {print "  stage " $1 " exited " $2}' "$STATUS" >&2
exit 1
