//===- FuseGelu.cpp - Fuse exported exact-GELU subgraphs ------------------===//

#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace remat {
#define GEN_PASS_DEF_FUSEGELU
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// True if `value` is a constant splat equal to `expected` (within the
/// precision the exporter printed it with).
static bool isSplatConstant(Value value, double expected) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return false;
  double actual = attr.getSplatValue<APFloat>().convertToDouble();
  return std::abs(actual - expected) <= 1e-6 * std::abs(expected);
}

/// Returns the operand of a commutative binary op other than `matched`
/// when one operand satisfies `pred`; null otherwise.
template <typename Op, typename Pred>
static Value otherOperand(Op op, Pred pred) {
  if (pred(op.getRhs()))
    return op.getLhs();
  if (pred(op.getLhs()))
    return op.getRhs();
  return {};
}

/// Matches Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5) in any operand order.
struct ExactGeluPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Value product = otherOperand(
        root, [](Value v) { return isSplatConstant(v, 0.5); });
    auto inner = product ? product.getDefiningOp<MulOp>() : MulOp();
    if (!inner)
      return failure();
    for (auto [x, gate] : {std::pair(inner.getLhs(), inner.getRhs()),
                           std::pair(inner.getRhs(), inner.getLhs())}) {
      auto add = gate.getDefiningOp<AddOp>();
      if (!add)
        continue;
      Value erfOut =
          otherOperand(add, [](Value v) { return isSplatConstant(v, 1.0); });
      auto erf = erfOut ? erfOut.getDefiningOp<ErfOp>() : ErfOp();
      auto div = erf ? erf.getInput().getDefiningOp<DivOp>() : DivOp();
      if (!div || div.getLhs() != x || !isSplatConstant(div.getRhs(), M_SQRT2))
        continue;
      if (x.getType() != root.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(root, root.getType(), x,
                                          rewriter.getStringAttr("none"));
      return success();
    }
    return failure();
  }
};

struct FuseGeluPass : remat::impl::FuseGeluBase<FuseGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExactGeluPattern>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
