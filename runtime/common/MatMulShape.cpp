//===- MatMulShape.cpp - Batched matmul dimensions ------------------------===//

#include "common/MatMulShape.h"

#include "common/Check.h"

namespace remat::rt::common {

void checkMatMul(const char *kernel, const TensorView &a, const TensorView &b,
                 const TensorView &out) {
  require(a.rank() >= 2 && b.rank() >= 2 && out.rank() >= 2, kernel,
          "operands must have rank >= 2");
  requireDType(b, a.dtype, kernel, "b");
  requireDType(out, a.dtype, kernel, "output");
}

MatMulDims matmulDims(const TensorView &a, const TensorView &b,
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
  return {M, K, N};
}

} // namespace remat::rt::common
