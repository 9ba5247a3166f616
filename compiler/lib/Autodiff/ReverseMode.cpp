//===- ReverseMode.cpp - Reverse-mode differentiation of remat ops --------===//

#include "remat/Autodiff/ReverseMode.h"
#include "remat/Dialect/RematOps.h"

using namespace mlir;

namespace remat {

static bool isFloatTensor(Value v) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  return type && llvm::isa<FloatType>(type.getElementType());
}

llvm::DenseSet<Value> activeValues(ArrayRef<Operation *> ops,
                                   ArrayRef<Value> sources) {
  llvm::DenseSet<Value> active(sources.begin(), sources.end());
  for (Operation *op : ops) {
    if (!isa<DifferentiableOpInterface>(op))
      continue;
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r))
          active.insert(r);
  }
  return active;
}

LogicalResult buildGradients(OpBuilder &b, ArrayRef<Operation *> ops,
                             const llvm::DenseSet<Value> &active,
                             ArrayRef<std::pair<Value, Value>> seeds,
                             DenseMap<Value, Value> &gradients) {
  auto accumulate = [&](Value target, Value grad, Location loc) {
    Value &slot = gradients[target];
    // A value used several times (tied weights) gets the sum.
    slot = slot ? Value(b.create<AddOp>(loc, slot, grad)) : grad;
  };
  for (auto [value, seed] : seeds)
    accumulate(value, seed, value.getLoc());

  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      Value g = gradients.lookup(r);
      resultGrads.push_back(g);
      any |= static_cast<bool>(g);
    }
    if (!any)
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitError("'") << op->getName() << "' has no gradient rule";
    SmallVector<bool> needs;
    for (Value v : op->getOperands())
      needs.push_back(active.contains(v));
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildGradient(b, resultGrads, needs, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError("gradient rule returned ")
             << operandGrads.size() << " gradients for " << op->getNumOperands()
             << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !active.contains(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError("gradient rule produced ")
               << grad.getType() << " for an operand of type "
               << operand.getType();
      accumulate(operand, grad, op->getLoc());
    }
  }
  return success();
}

} // namespace remat
