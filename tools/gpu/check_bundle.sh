#!/usr/bin/env bash
# CI check of the GPU bundle (ctest gpu-bundle/*), on any machine with nvcc:
#
#   tools/gpu/check_bundle.sh WORK_DIR [PROGRAM...]
#
# builds the bundle into WORK_DIR/bundle, then configures and compiles it
# with nvcc in a clean WORK_DIR/build, with a "poison" directory first on the
# include path whose onnx/, google/protobuf/, mlir/ and cblas.h headers
# #error, and no remat, MLIR, ONNX or protobuf paths or libraries given: a
# bundled source that needs anything beyond the CUDA toolkit and the C++
# standard library fails here rather than on the GPU machine. Builds only the
# PROGRAMs named (all when none; CI names a few to stay quick), the kernel
# tests always. Then checks that run.sh --dry-run lists every stage and
# every program.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 WORK_DIR [PROGRAM...]" >&2; exit 64; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$1; shift
rm -rf "$WORK"; mkdir -p "$WORK"; WORK=$(cd "$WORK" && pwd)
bash "$ROOT/tools/gpu/bundle.sh" "$WORK/bundle"

POISON=$WORK/poison
for header in onnx/onnx_pb.h onnx/checker.h onnx/onnx-ml.pb.h google/protobuf/message.h \
              google/protobuf/stubs/common.h mlir/IR/MLIRContext.h llvm/Support/raw_ostream.h \
              cblas.h openblas_config.h; do
  mkdir -p "$POISON/$(dirname "$header")"
  echo "#error \"the GPU bundle must not need <$header>: the GPU machine lacks it\"" \
    > "$POISON/$header"
done

programs=$(IFS=';'; echo "$*")
start=$(date +%s)
cmake -G Ninja -S "$WORK/bundle" -B "$WORK/build" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DREMAT_POISON_DIR="$POISON" -DREMAT_PROGRAMS="$programs" >"$WORK/configure.log"
ninja -C "$WORK/build" -j"${JOBS:-2}"
echo "check_bundle: compiled with nvcc in $(( $(date +%s) - start )) s (programs: ${programs:-all})"
for name in "$@"; do
  [ -x "$WORK/build/programs/$name" ] || { echo "FAIL: program $name was not built" >&2; exit 1; }
done
[ -x "$WORK/build/cuda-kernel-tests" ] || { echo "FAIL: cuda-kernel-tests was not built" >&2; exit 1; }
[ -x "$WORK/build/attention-bench" ] || { echo "FAIL: attention-bench was not built" >&2; exit 1; }
[ -x "$WORK/build/gemm-bench" ] || { echo "FAIL: gemm-bench was not built" >&2; exit 1; }
[ -x "$WORK/build/kernel-bench" ] || { echo "FAIL: kernel-bench was not built" >&2; exit 1; }
# Nothing built may link protobuf, ONNX, MLIR or BLAS.
for exe in "$WORK/build/cuda-kernel-tests" "$WORK/build/attention-bench" "$WORK/build/gemm-bench" "$WORK/build/kernel-bench" "$WORK"/build/programs/*; do
  if ldd "$exe" 2>/dev/null | grep -Ei 'protobuf|onnx|mlir|openblas|libblas|libcblas'; then
    echo "FAIL: $exe links a library the GPU machine lacks" >&2; exit 1
  fi
done

dry=$("$WORK/bundle/run.sh" "$WORK/results" --dry-run)
echo "$dry"
for stage in build kernel-tests programs attention-bench gemm-bench kernel-bench profile torch-eager report; do
  grep -q "would run \[$stage\]" <<<"$dry" || { echo "FAIL: run.sh --dry-run does not list stage $stage" >&2; exit 1; }
done
for name in $(python3 -c "import json,sys; print(' '.join(p['name'] for p in json.load(open(sys.argv[1]))))" "$WORK/bundle/programs.json"); do
  grep -q "/$name " <<<"$dry" || { echo "FAIL: run.sh --dry-run does not list program $name" >&2; exit 1; }
done
echo "PASS: the bundle builds with nvcc alone and run.sh --dry-run lists every stage and program"
