//===- ReductionGradients.cpp - Gradients of reductions -------------------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

/// dy with the reduced dims restored as ones (the keepdims layout).
static Value withKeptDims(OpBuilder &b, Location loc, Value dy,
                          RankedTensorType input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  return reshapeTo(b, loc, dy, shape);
}

static int64_t reducedCount(RankedTensorType input, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= input.getDimSize(axis);
  return count;
}

LogicalResult ReduceSumOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  auto input = tensorTypeOf(getInput());
  grads.push_back(needs[0] ? expandTo(b, loc,
                                      withKeptDims(b, loc, dys[0], input, getAxes()),
                                      input)
                           : Value());
  return success();
}

LogicalResult ReduceMeanOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needs,
                                          SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  auto input = tensorTypeOf(getInput());
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  Value scale = scalarConstant(b, loc, input.getElementType(),
                               1.0 / double(reducedCount(input, getAxes())));
  Value kept = withKeptDims(b, loc, dys[0], input, getAxes());
  grads.push_back(expandTo(b, loc, b.create<MulOp>(loc, kept, scale), input));
  return success();
}

LogicalResult ReduceMaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  // The gradient is shared evenly among the elements equal to the maximum
  // (as torch.amax).
  Location loc = getLoc();
  auto input = tensorTypeOf(getInput());
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  Type et = input.getElementType();
  Value maxKept = withKeptDims(b, loc, getResult(), input, getAxes());
  Value mask = maskToFloat(b, loc, b.create<EqualOp>(loc, getInput(), maxKept), et);
  Value count = b.create<ReduceSumOp>(loc, mask, getAxesAttr(), b.getBoolAttr(true));
  Value share = b.create<DivOp>(loc, withKeptDims(b, loc, dys[0], input, getAxes()),
                                count);
  grads.push_back(b.create<MulOp>(loc, mask, share));
  return success();
}

LogicalResult CumSumOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  // x[i] reaches y[j] for every j at or after i (before, when reversed):
  // dx[i] sums dy over those j, the running sum in the other direction.
  grads.push_back(needs[0] ? b.create<CumSumOp>(
                                 getLoc(), getType(), dys[0], getAxisAttr(),
                                 getExclusiveAttr(),
                                 b.getBoolAttr(!getReverse()))
                           : Value());
  return success();
}
