//===- LinalgGradients.cpp - Gradient of matmul ---------------------------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

/// With Y = A' B' (A' = A or Aᵀ, B' = B or Bᵀ): dA' = dY B'ᵀ and
/// dB' = A'ᵀ dY. The transpose flags absorb every transpose, so no
/// transposed copy is ever materialised; broadcast batch dims are summed.
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
    dB = tB ? matmul(dy, getLhs(), true, tA) : matmul(getLhs(), dy, !tA, false);
    dB = reduceToShape(b, loc, dB, tensorTypeOf(getRhs()));
  }
  grads.push_back(dA);
  grads.push_back(dB);
  return success();
}
