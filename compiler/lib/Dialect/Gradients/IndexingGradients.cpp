//===- IndexingGradients.cpp - Gradients of gather_nd, scatter_nd, resize --===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult GatherNDOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needs,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<GatherNDBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getIndices(), getBatchDimsAttr())
                           : Value());
  grads.push_back(Value()); // indices
  return success();
}

LogicalResult ScatterNDOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  StringRef reduction = getReduction();
  if (reduction != "none" && reduction != "add")
    return emitOpError("has no gradient for reduction '")
           << reduction << "' (only 'none' and 'add' are differentiable)";
  Location loc = getLoc();
  Value dy = dys[0];
  // The input reaches the output where no tuple writes (none) or
  // everywhere (add): dy with the written slices zeroed, or dy itself.
  Value dInput;
  if (needs[0])
    dInput = reduction == "add"
                 ? dy
                 : b.create<ScatterNDOp>(
                        loc, dy, getIndices(),
                        zeros(b, loc, getUpdates().getType()),
                        b.getStringAttr("none"))
                       .getResult();
  grads.push_back(dInput);
  grads.push_back(Value()); // indices
  // Each update reaches the slice its tuple names (with repeated tuples
  // under `none`, whose result ONNX leaves undefined, every copy gets it,
  // as PyTorch's index_put).
  grads.push_back(needs[2] ? b.create<GatherNDOp>(loc, dy, getIndices(),
                                                   b.getI64IntegerAttr(0))
                                 .getResult()
                           : Value());
  return success();
}

LogicalResult ResizeOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<ResizeBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getModeAttr(),
                                 getCoordinateTransformationModeAttr(),
                                 getNearestModeAttr(), getScalesAttr(),
                                 getCubicCoeffAAttr(), getExcludeOutsideAttr())
                                 .getResult()
                           : Value());
  return success();
}
