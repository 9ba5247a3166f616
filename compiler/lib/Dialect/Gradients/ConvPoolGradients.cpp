//===- ConvPoolGradients.cpp - Gradients of convolution and pooling -------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult ConvOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dy = dys[0];
  grads.push_back(needs[0] ? b.create<ConvBackwardDataOp>(
                                 loc, getInput().getType(), dy, getWeight(),
                                 getStridesAttr(), getPadsAttr(),
                                 getDilationsAttr(), getGroupAttr())
                           : Value());
  grads.push_back(needs[1] ? b.create<ConvBackwardFilterOp>(
                                 loc, getWeight().getType(), getInput(), dy,
                                 getStridesAttr(), getPadsAttr(),
                                 getDilationsAttr(), getGroupAttr())
                           : Value());
  if (getBias()) {
    // The bias is broadcast over the batch and every spatial position.
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < tensorTypeOf(dy).getRank(); ++d)
      axes.push_back(d);
    grads.push_back(needs[2] ? b.create<ReduceSumOp>(loc, dy,
                                                     b.getDenseI64ArrayAttr(axes),
                                                     b.getBoolAttr(false))
                             : Value());
  }
  return success();
}

// y = conv_backward_data(x, w) is linear in x and in w: the gradient for x
// is the forward convolution of dy by w, the one for w the filter gradient
// of a convolution whose input is dy and whose output gradient is x.
LogicalResult ConvBackwardDataOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                                ArrayRef<bool> needs,
                                                SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dy = dys[0];
  grads.push_back(needs[0] ? b.create<ConvOp>(loc, getOutputGrad().getType(), dy,
                                               getWeight(), Value(), getStridesAttr(),
                                               getPadsAttr(), getDilationsAttr(),
                                               getGroupAttr())
                                 .getResult()
                           : Value());
  grads.push_back(needs[1] ? b.create<ConvBackwardFilterOp>(
                                 loc, getWeight().getType(), dy, getOutputGrad(),
                                 getStridesAttr(), getPadsAttr(),
                                 getDilationsAttr(), getGroupAttr())
                                 .getResult()
                           : Value());
  return success();
}

LogicalResult MaxPoolOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] && dys[0]
                      ? b.create<MaxPoolBackwardOp>(
                            getLoc(), getInput().getType(), dys[0],
                            getIndices(), getKernelShapeAttr(),
                            getStridesAttr(), getPadsAttr(),
                            getDilationsAttr())
                      : Value());
  return success();
}

LogicalResult AveragePoolOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                           ArrayRef<bool> needs,
                                           SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<AveragePoolBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getKernelShapeAttr(), getStridesAttr(),
                                 getPadsAttr(), getDilationsAttr(),
                                 getCeilModeAttr(), getCountIncludePadAttr())
                           : Value());
  return success();
}

LogicalResult GlobalAveragePoolOp::buildGradient(OpBuilder &b,
                                                 ArrayRef<Value> dys,
                                                 ArrayRef<bool> needs,
                                                 SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  auto input = tensorTypeOf(getInput());
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.getRank(); ++d)
    spatial *= input.getDimSize(d);
  Value scale = scalarConstant(b, loc, input.getElementType(), 1.0 / double(spatial));
  grads.push_back(expandTo(b, loc, b.create<MulOp>(loc, dys[0], scale), input));
  return success();
}
