//===- FoldTransposeIntoMatMul.cpp - Transposed operands as GEMM flags ----===//

#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_FOLDTRANSPOSEINTOMATMUL
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// The input of `value`'s defining transpose if that transpose swaps the
/// last two dims and keeps the others in place; null otherwise.
Value swappedLastTwoDimsOf(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPermutation();
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return {};
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return {};
  return transpose.getInput();
}

/// matmul(transpose(A), B) -> matmul(A, B) with transpose_lhs toggled, and
/// the same for B.
struct FoldTransposedOperands : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = swappedLastTwoDimsOf(op.getLhs());
    Value rhs = swappedLastTwoDimsOf(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (lhs) {
        op.getLhsMutable().assign(lhs);
        op.setTransposeLhs(!op.getTransposeLhs());
      }
      if (rhs) {
        op.getRhsMutable().assign(rhs);
        op.setTransposeRhs(!op.getTransposeRhs());
      }
    });
    return success();
  }
};

struct FoldTransposeIntoMatMulPass
    : remat::impl::FoldTransposeIntoMatMulBase<FoldTransposeIntoMatMulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposedOperands>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
