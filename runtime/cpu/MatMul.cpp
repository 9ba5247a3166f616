//===- MatMul.cpp - Batched matrix multiplication on BLAS -----------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Gemm.h"
#include "StridedLoop.h"

namespace remat::rt {
using namespace cpu;

namespace {

Shape batchDims(const Shape &shape) {
  return Shape(shape.begin(), shape.end() - 2);
}

template <typename T>
void matmulImpl(const TensorView &a, const TensorView &b,
                const TensorView &out, bool transA, bool transB) {
  const int64_t ra = a.rank(), rb = b.rank(), ro = out.rank();
  const int64_t M = transA ? a.shape[ra - 1] : a.shape[ra - 2];
  const int64_t K = transA ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t KB = transB ? b.shape[rb - 1] : b.shape[rb - 2];
  const int64_t N = transB ? b.shape[rb - 2] : b.shape[rb - 1];
  if (K != KB)
    fail("matmul", "contraction dims differ: " + shapeToString(a.shape) +
                       " x " + shapeToString(b.shape));
  if (out.shape[ro - 2] != M || out.shape[ro - 1] != N)
    fail("matmul", "output shape " + shapeToString(out.shape) +
                       " does not match " + std::to_string(M) + "x" +
                       std::to_string(N));

  const Shape outBatch = batchDims(out.shape);
  const T *pa = a.as<const T>();
  const T *pb = b.as<const T>();
  T *po = out.as<T>();

  // A shared (unbatched) b with a non-transposed a of the full batch shape
  // (the linear-layer case [B, S, K] x [K, N]) is one tall GEMM.
  if (!transA && numElements(batchDims(b.shape)) == 1 &&
      batchDims(a.shape) == outBatch) {
    gemm(false, transB, numElements(outBatch) * M, N, K, pa, pb, po);
    return;
  }

  // Otherwise one GEMM per output matrix; strides count whole matrices.
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
  require(a.rank() >= 2 && b.rank() >= 2 && out.rank() >= 2, "matmul",
          "operands must have rank >= 2");
  requireDType(b, a.dtype, "matmul", "b");
  requireDType(out, a.dtype, "matmul", "output");
  dispatchFloat(a.dtype, "matmul", [&](auto tag) {
    matmulImpl<typename decltype(tag)::type>(a, b, out, transA, transB);
  });
}

} // namespace remat::rt
