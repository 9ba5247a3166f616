//===- ScheduleUpdates.cpp - Apply updates as soon as gradients are ready -===//

#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace remat {
#define GEN_PASS_DEF_SCHEDULEUPDATES
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Moves `op` to just after the last op in its block that defines one of its
/// operands, or that still reads one of `overwritten` (state the op updates
/// in place: it must not run before the old value's last read). To the block
/// start if there is none. Pure ops only, so the move changes nothing but the
/// schedule.
void hoist(Operation *op, ValueRange overwritten = {}) {
  Block *block = op->getBlock();
  Operation *last = nullptr;
  auto consider = [&](Operation *other) {
    if (other && other != op && other->getBlock() == block &&
        (!last || last->isBeforeInBlock(other)))
      last = other;
  };
  for (Value operand : op->getOperands())
    consider(operand.getDefiningOp());
  for (Value old : overwritten)
    for (Operation *user : old.getUsers())
      if (!isa<func::ReturnOp>(user))
        consider(user);
  if (last)
    op->moveAfter(last);
  else
    op->moveBefore(&block->front());
}

/// The operands an optimizer update overwrites in place: the parameter and
/// its optimizer state (the loss scale and its tracker for the scale update).
SmallVector<Value> updatedInPlace(Operation *update) {
  if (auto scaleUpdate = dyn_cast<LossScaleUpdateOp>(update))
    return {scaleUpdate.getScale(), scaleUpdate.getGrowthTracker()};
  if (auto sgd = dyn_cast<SgdOp>(update))
    return {sgd.getParam()};
  if (auto sgd = dyn_cast<SgdMomentumOp>(update))
    return {sgd.getParam(), sgd.getMomentumBuffer()};
  auto adam = cast<AdamOp>(update);
  return {adam.getParam(), adam.getExpAvg(), adam.getExpAvgSq()};
}

/// Ops that only depend on arguments and constants (the step counter's
/// increment and its constant), which updates read besides the gradient.
bool isLeafComputation(Operation *op) {
  return llvm::all_of(op->getOperands(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || isa<ConstantOp>(def);
  });
}

struct ScheduleUpdatesPass
    : remat::impl::ScheduleUpdatesBase<ScheduleUpdatesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> updates;
    getOperation().walk([&](Operation *op) {
      if (op->hasTrait<OptimizerUpdate>())
        updates.push_back(op);
    });
    for (Operation *update : updates) {
      for (Value operand : update->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !isLeafComputation(def))
          continue;
        for (Value inner : def->getOperands())
          if (Operation *constant = inner.getDefiningOp())
            hoist(constant);
        hoist(def);
      }
      hoist(update, updatedInPlace(update));
    }
  }
};

} // namespace
