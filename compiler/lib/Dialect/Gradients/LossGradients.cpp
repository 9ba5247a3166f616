//===- LossGradients.cpp - Gradients of the losses ------------------------===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult SoftmaxCrossEntropyLossOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> dys, ArrayRef<bool> needs,
    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dScores;
  if (needs[0] && dys[0])
    dScores = b.create<SoftmaxCrossEntropyLossBackwardOp>(
        loc, getScores().getType(), dys[0], getLogProb(), getLabels(),
        getWeights(), getReductionAttr(), getIgnoreIndexAttr());
  if (needs[0] && dys[1]) {
    // log_prob is also used directly: add its log-softmax backward.
    Value viaLogProb = b.create<LogSoftmaxBackwardOp>(
        loc, getScores().getType(), getLogProb(), dys[1], b.getI64IntegerAttr(1));
    dScores = dScores ? Value(b.create<AddOp>(loc, dScores, viaLogProb)) : viaLogProb;
  }
  grads.push_back(dScores);
  grads.push_back(Value()); // labels
  if (getWeights())
    grads.push_back(Value()); // class weights are not trained
  return success();
}

LogicalResult NllLossOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<NllLossBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getTarget(), getWeights(), getReductionAttr(),
                                 getIgnoreIndexAttr())
                           : Value());
  grads.push_back(Value()); // target
  if (getWeights())
    grads.push_back(Value());
  return success();
}
