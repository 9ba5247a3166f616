//===- MatMulShape.h - Batched matmul dimensions -----------------*- C++ -*-===//
//
// Both backends run matmul as GEMMs over broadcast batch dims; the matrix
// dimensions and their checks are worked out here once.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_MATMULSHAPE_H
#define REMAT_RUNTIME_COMMON_MATMULSHAPE_H

#include "remat/runtime/Tensor.h"

namespace remat::rt::common {

/// The leading (batch) dims of a matrix operand.
inline Shape batchDims(const Shape &shape) {
  return Shape(shape.begin(), shape.end() - 2);
}

/// matmul's operands: rank >= 2, b and out of a's dtype.
void checkMatMul(const char *kernel, const TensorView &a, const TensorView &b,
                 const TensorView &out);

/// out [.., M, N] = op(a) [.., M, K] x op(b) [.., K, N].
struct MatMulDims {
  int64_t M, K, N;
};

/// The GEMM dimensions of a (transposed) x b (transposed); checks that the
/// contraction dims agree and out's matrix shape is M x N. Operands must
/// have rank >= 2.
MatMulDims matmulDims(const TensorView &a, const TensorView &b,
                      const TensorView &out, bool transA, bool transB);

/// Whether the batched matmul is one GEMM of batch x M rows: b unbatched
/// and a, not transposed, with out's batch dims (the linear-layer case
/// [B, S, K] x [K, N]).
inline bool isOneTallGemm(const TensorView &a, const TensorView &b,
                          const TensorView &out, bool transA) {
  return !transA && numElements(batchDims(b.shape)) == 1 &&
         batchDims(a.shape) == batchDims(out.shape);
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_MATMULSHAPE_H
