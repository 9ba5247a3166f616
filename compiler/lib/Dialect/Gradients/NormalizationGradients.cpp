//===- NormalizationGradients.cpp - Softmax and normalisation gradients ---===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult SoftmaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<SoftmaxBackwardOp>(getLoc(), getType(),
                                                         getResult(), dys[0],
                                                         getAxisAttr())
                           : Value());
  return success();
}

LogicalResult LogSoftmaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needs,
                                          SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<LogSoftmaxBackwardOp>(
                                 getLoc(), getType(), getResult(), dys[0],
                                 getAxisAttr())
                           : Value());
  return success();
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  if (dys[1] || dys[2])
    return emitOpError("gradients through layer_norm's mean or inv_std_dev "
                       "results are not supported");
  Location loc = getLoc();
  auto backward = b.create<LayerNormBackwardOp>(
      loc, getInput(), getScale(), getMean(), getInvStdDev(), dys[0],
      getAxisAttr());
  grads.push_back(needs[0] ? backward.getInputGrad() : Value());
  grads.push_back(needs[1] ? reduceToShape(b, loc, backward.getScaleGrad(),
                                           tensorTypeOf(getScale()))
                           : Value());
  if (getBias())
    grads.push_back(needs[2] ? reduceToShape(b, loc, backward.getBiasGrad(),
                                             tensorTypeOf(getBias()))
                             : Value());
  return success();
}

/// Reshapes a per-channel [C] tensor to [1, C, 1, ...] for broadcasting
/// against an [N, C, ...] input.
static Value perChannel(OpBuilder &b, Location loc, Value channels,
                        RankedTensorType input) {
  SmallVector<int64_t> shape(input.getRank(), 1);
  shape[1] = input.getDimSize(1);
  return reshapeTo(b, loc, channels, shape);
}

LogicalResult BatchNormInferenceOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> dys, ArrayRef<bool> needs,
    SmallVectorImpl<Value> &grads) {
  // y = (x - mean) * invStd * scale + bias with fixed statistics.
  Location loc = getLoc();
  Value dy = dys[0];
  auto inputType = tensorTypeOf(getInput());
  Type et = inputType.getElementType();
  Value eps = scalarConstant(b, loc, et, getEpsilon().convertToDouble());
  Value invStd = b.create<ReciprocalOp>(
      loc, b.create<SqrtOp>(loc, b.create<AddOp>(loc, getRunningVar(), eps)));
  Value invStdC = perChannel(b, loc, invStd, inputType);
  SmallVector<int64_t> reduceAxes = {0};
  for (int64_t d = 2; d < inputType.getRank(); ++d)
    reduceAxes.push_back(d);
  auto sumToChannels = [&](Value v) -> Value {
    Value sum = b.create<ReduceSumOp>(loc, v, b.getDenseI64ArrayAttr(reduceAxes),
                                      b.getBoolAttr(false));
    return sum;
  };
  grads.push_back(needs[0] ? b.create<MulOp>(
                                 loc, dy,
                                 b.create<MulOp>(loc, invStdC,
                                                 perChannel(b, loc, getScale(), inputType)))
                           : Value());
  if (needs[1]) {
    Value centered = b.create<SubOp>(loc, getInput(),
                                     perChannel(b, loc, getRunningMean(), inputType));
    Value normalized = b.create<MulOp>(loc, centered, invStdC);
    grads.push_back(sumToChannels(b.create<MulOp>(loc, dy, normalized)));
  } else {
    grads.push_back(Value());
  }
  grads.push_back(needs[2] ? sumToChannels(dy) : Value());
  grads.push_back(Value()); // running statistics are not trained
  grads.push_back(Value());
  return success();
}

LogicalResult BatchNormTrainingOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> dys, ArrayRef<bool> needs,
    SmallVectorImpl<Value> &grads) {
  for (unsigned i = 1; i < dys.size(); ++i)
    if (dys[i])
      return emitOpError("gradients through batch statistics results are "
                         "not supported");
  auto backward = b.create<BatchNormTrainingBackwardOp>(
      getLoc(), getInput(), getScale(), getSavedMean(), getSavedInvStd(), dys[0]);
  grads.push_back(needs[0] ? backward.getInputGrad() : Value());
  grads.push_back(needs[1] ? backward.getScaleGrad() : Value());
  grads.push_back(needs[2] ? backward.getBiasGrad() : Value());
  grads.push_back(Value()); // running statistics are not trained
  grads.push_back(Value());
  return success();
}
