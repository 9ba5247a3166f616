//===- RematGradOps.cpp - Backward ops: inference and verifiers -----------===//

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace remat;

static RankedTensorType rankedType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

LogicalResult LayerNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "layer_norm_backward axis ", axis,
                             " is out of range for rank ", input.getRank());
  auto paramType = RankedTensorType::get(input.getShape().drop_front(axis),
                                         input.getElementType());
  types.push_back(input);
  types.push_back(paramType);
  types.push_back(paramType);
  return success();
}

LogicalResult BatchNormTrainingBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "batch_norm_training_backward input needs "
                                  "rank >= 2");
  types.push_back(input);
  types.push_back(adaptor.getScale().getType());
  types.push_back(adaptor.getScale().getType());
  return success();
}

LogicalResult ActivationBackwardOp::verify() {
  // The parameters each activation takes, as its forward op's attributes.
  StringRef activation = getActivation();
  auto takes = [&](StringRef name) {
    if (activation == "leaky_relu" || activation == "elu")
      return name == "alpha";
    if (activation == "selu")
      return name == "alpha" || name == "gamma";
    if (activation == "hard_sigmoid")
      return name == "alpha" || name == "beta";
    if (activation == "clip")
      return name == "min" || name == "max";
    return false;
  };
  const std::pair<StringRef, bool> params[] = {
      {"alpha", getAlphaAttr() != nullptr}, {"beta", getBetaAttr() != nullptr},
      {"gamma", getGammaAttr() != nullptr}, {"min", getMinAttr() != nullptr},
      {"max", getMaxAttr() != nullptr}};
  for (auto [name, present] : params) {
    if (takes(name) && !present)
      return emitOpError("activation '")
             << activation << "' requires attribute '" << name << "'";
    if (!takes(name) && present)
      return emitOpError("activation '")
             << activation << "' takes no attribute '" << name << "'";
  }
  return success();
}

/// Checks that a conv with these attributes maps `input` (with `weight`) to
/// `output`: the relation both conv backward ops rely on.
static LogicalResult verifyConvShapes(Operation *op, RankedTensorType input,
                                      RankedTensorType weight,
                                      RankedTensorType output,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> pads,
                                      ArrayRef<int64_t> dilations,
                                      int64_t group) {
  int64_t spatial = input.getRank() - 2;
  if (weight.getRank() != input.getRank() || output.getRank() != input.getRank() ||
      (int64_t)strides.size() != spatial || (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return op->emitOpError("conv ranks or window attributes do not match");
  if (output.getDimSize(0) != input.getDimSize(0) ||
      output.getDimSize(1) != weight.getDimSize(0) ||
      weight.getDimSize(1) * group != input.getDimSize(1))
    return op->emitOpError("conv batch or channel dims do not match");
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t expected = windowOutputSize(input.getDimSize(d + 2),
                                        weight.getDimSize(d + 2), strides[d],
                                        pads[d], pads[d + spatial],
                                        dilations[d], /*ceilMode=*/false);
    if (expected != output.getDimSize(d + 2))
      return op->emitOpError("conv spatial dim ")
             << d << ": the forward output would have size " << expected
             << ", but the gradient has " << output.getDimSize(d + 2);
  }
  return success();
}

LogicalResult ConvBackwardDataOp::verify() {
  return verifyConvShapes(*this, getType(), getWeight().getType(),
                          getOutputGrad().getType(), getStrides(), getPads(),
                          getDilations(), getGroup());
}

LogicalResult ConvBackwardFilterOp::verify() {
  return verifyConvShapes(*this, getInput().getType(), getType(),
                          getOutputGrad().getType(), getStrides(), getPads(),
                          getDilations(), getGroup());
}
