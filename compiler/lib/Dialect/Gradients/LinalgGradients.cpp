//===- LinalgGradients.cpp - Gradient of matmul ---------------------------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

/// With Y = A' B' (A' = A or Aᵀ, B' = B or Bᵀ): dA' = dY B'ᵀ and
/// dB' = A'ᵀ dY. The transpose flags absorb every transpose, so no
/// transposed copy is ever materialised; broadcast batch dims are summed.
///
/// The linear-layer case, A [..., M, K] (not transposed) times a matrix B:
/// the sum over the batch of A_bᵀ dY_b is one GEMM over the flattened rows,
/// [B*M, K]ᵀ [B*M, N]. Reshapes are views, so this writes B's gradient
/// once instead of a [..., K, N] partial per batch element plus a
/// reduction (a weight-sized temporary times the batch, and a third of
/// the step's GEMM time spent at a batch-sized K).
LogicalResult MatMulOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dy = dys[0];
  bool tA = getTransposeLhs(), tB = getTransposeRhs();
  auto matmul = [&](Value lhs, Value rhs, bool transposeLhs,
                    bool transposeRhs) -> Value {
    return b.create<MatMulOp>(loc, lhs, rhs, b.getBoolAttr(transposeLhs),
                              b.getBoolAttr(transposeRhs));
  };
  Value dA, dB;
  if (needs[0]) {
    dA = tA ? matmul(getRhs(), dy, tB, true) : matmul(dy, getRhs(), false, !tB);
    dA = reduceToShape(b, loc, dA, tensorTypeOf(getLhs()));
  }
  if (needs[1]) {
    RankedTensorType lhsType = tensorTypeOf(getLhs()),
                     dyType = tensorTypeOf(dy);
    if (!tA && tensorTypeOf(getRhs()).getRank() == 2 &&
        lhsType.getRank() > 2 && lhsType.hasStaticShape() &&
        dyType.hasStaticShape() &&
        lhsType.getShape().drop_back(2) == dyType.getShape().drop_back(2)) {
      const int64_t rows = lhsType.getNumElements() / lhsType.getShape().back();
      Value lhs2d = reshapeTo(b, loc, getLhs(), {rows, lhsType.getShape().back()});
      Value dy2d = reshapeTo(b, loc, dy, {rows, dyType.getShape().back()});
      dB = tB ? matmul(dy2d, lhs2d, true, false) : matmul(lhs2d, dy2d, true, false);
    } else {
      dB = tB ? matmul(dy, getLhs(), true, tA)
              : matmul(getLhs(), dy, !tA, false);
      dB = reduceToShape(b, loc, dB, tensorTypeOf(getRhs()));
    }
  }
  grads.push_back(dA);
  grads.push_back(dB);
  return success();
}
