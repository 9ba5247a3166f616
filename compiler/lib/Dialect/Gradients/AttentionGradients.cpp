//===- AttentionGradients.cpp - Gradient of the fused attention op --------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult AttentionOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  // logsumexp exists for the backward only; nothing differentiates it.
  if (dys[1])
    return emitOpError("gradients through attention's logsumexp result are "
                       "not supported");
  // A mask gradient would be the seq x seq score gradient the fused op
  // exists to avoid; the fusion pass leaves trainable masks unfused.
  if (getMask() && needs[3])
    return emitOpError("the attention mask needs a gradient (it depends on "
                       "a trained value); such attention must stay unfused");
  if (!dys[0]) {
    grads.append({Value(), Value(), Value()});
    if (getMask())
      grads.push_back(Value());
    return success();
  }
  auto backward = b.create<AttentionBackwardOp>(
      getLoc(), getQuery(), getKey(), getValue(), getOutput(), getLogsumexp(),
      dys[0], getMask(), getScaleAttr(), getCausalAttr(),
      getDropoutRatioAttr(), getSeedAttr(), getStreamAttr());
  grads.push_back(needs[0] ? backward.getQueryGrad() : Value());
  grads.push_back(needs[1] ? backward.getKeyGrad() : Value());
  grads.push_back(needs[2] ? backward.getValueGrad() : Value());
  if (getMask())
    grads.push_back(Value());
  return success();
}
