//===- MatMul.cpp - Batched matrix multiplication on BLAS -----------------===//
//
// F32 and F64 call BLAS on the operands; F16 and BF16 go through fp32
// panels in the workspace (HalfGemm.h), sized by matmulScratchBytes.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "HalfGemm.h"
#include "Scratch.h"
#include "common/MatMulShape.h"
#include "common/StridedLoop.h"

namespace remat::rt {
using namespace cpu;

namespace {

template <typename T>
void matmulImpl(const TensorView &a, const TensorView &b,
                const TensorView &out, bool transA, bool transB,
                const MatMulDims &dims, Scratch &scratch) {
  const int64_t M = dims.M, K = dims.K, N = dims.N;

  const Shape outBatch = batchDims(out.shape);
  const T *pa = a.as<const T>();
  const T *pb = b.as<const T>();
  T *po = out.as<T>();

  // A shared (unbatched) b with a non-transposed a of the full batch shape
  // (the linear-layer case [B, S, K] x [K, N]) is one tall GEMM.
  if (isOneTallGemm(a, b, out, transA)) {
    const int64_t rows = numElements(outBatch) * M;
    GemmFor<T> gemm(scratch, rows, N, K);
    gemm(false, transB, rows, N, K, pa, pb, po);
    return;
  }

  // Otherwise one GEMM per output matrix; strides count whole matrices.
  GemmFor<T> gemm(scratch, M, N, K);
  std::array<Strides, 3> strides = {
      broadcastStrides(batchDims(a.shape), outBatch, "matmul"),
      broadcastStrides(batchDims(b.shape), outBatch, "matmul"),
      contiguousStrides(outBatch)};
  const int64_t sizeA = M * K, sizeB = K * N, sizeO = M * N;
  forEachRun<3>(outBatch, strides,
                [&](const std::array<int64_t, 3> &off,
                    const std::array<int64_t, 3> &st, int64_t count) {
                  for (int64_t i = 0; i < count; ++i)
                    gemm(transA, transB, M, N, K,
                         pa + (off[0] + i * st[0]) * sizeA,
                         pb + (off[1] + i * st[1]) * sizeB,
                         po + (off[2] + i * st[2]) * sizeO);
                });
}

} // namespace

void matmul(const TensorView &a, const TensorView &b, const TensorView &out,
            bool transA, bool transB) {
  const char *kernel = "matmul";
  checkMatMul(kernel, a, b, out);
  const MatMulDims dims = matmulDims(a, b, out, transA, transB);
  Scratch scratch(kernel, matmulScratchBytes(a, b, out, transA, transB));
  dispatchFloatStorage(a.dtype, kernel, [&](auto tag) {
    matmulImpl<typename decltype(tag)::type>(a, b, out, transA, transB, dims,
                                             scratch);
  });
}

} // namespace remat::rt
