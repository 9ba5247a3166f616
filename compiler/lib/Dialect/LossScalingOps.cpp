//===- LossScalingOps.cpp - Verifiers of the loss-scaling operands --------===//
//
// fp16 mixed precision scales the loss and checks the gradients for
// overflow (remat.any_nonfinite, remat.loss_scale_update); the optimizer
// updates take the scale and the overflow flag. All of these are 0-d
// tensors: one value for the whole step.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"

using namespace mlir;
using namespace remat;

static LogicalResult requireScalar(Operation *op, Value value,
                                   StringRef what) {
  if (!value)
    return success();
  if (llvm::cast<RankedTensorType>(value.getType()).getRank() != 0)
    return op->emitOpError() << what << " must be a 0-d tensor, got "
                             << value.getType();
  return success();
}

/// The optimizer updates' optional loss scale and overflow flag.
template <typename UpdateOp>
static LogicalResult verifyLossScaling(UpdateOp op) {
  if (failed(requireScalar(op, op.getLossScale(), "loss_scale")))
    return failure();
  return requireScalar(op, op.getFoundInf(), "found_inf");
}

LogicalResult SgdOp::verify() { return verifyLossScaling(*this); }
LogicalResult SgdMomentumOp::verify() { return verifyLossScaling(*this); }
LogicalResult AdamOp::verify() { return verifyLossScaling(*this); }

LogicalResult AnyNonFiniteOp::verify() {
  if (failed(requireScalar(*this, getFound(), "found")))
    return failure();
  return requireScalar(*this, getResult(), "result");
}

LogicalResult LossScaleUpdateOp::verify() {
  for (auto [value, what] :
       {std::pair<Value, StringRef>(getScale(), "scale"),
        {getGrowthTracker(), "growth_tracker"},
        {getFoundInf(), "found_inf"}})
    if (failed(requireScalar(*this, value, what)))
      return failure();
  // The kernels multiply in fp32, which equals torch's float-times-double
  // product only for factors that fp32 holds exactly.
  for (double factor : {getGrowthFactor().convertToDouble(),
                        getBackoffFactor().convertToDouble()})
    if (!(factor > 0) ||
        static_cast<double>(static_cast<float>(factor)) != factor)
      return emitOpError("growth and backoff factors must be positive and "
                         "exact in fp32, got ")
             << factor;
  if (getGrowthInterval() < 1)
    return emitOpError("growth_interval must be at least 1, got ")
           << getGrowthInterval();
  return success();
}
