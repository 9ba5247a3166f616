//===- TrainingOpEmitters.cpp - Kernel calls for backward and optimizers --===//
//
// Mirrors runtime/interpreter/TrainingExecutors.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "remat/Dialect/RematOps.h"

using namespace mlir;

namespace remat {
namespace {

std::vector<int64_t> staticShape(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

/// Conv window parameters with the kernel from a weight shape [M, C/g, k...].
std::string convWindow(Value weightLike, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  std::vector<int64_t> shape = staticShape(weightLike);
  return cppWindowParams(ArrayRef<int64_t>(shape).drop_front(2), strides, pads,
                         dilations);
}

template <typename OpT>
LogicalResult withReduction(OpT op, std::string &reduction) {
  reduction = cppLossReduction(op.getReduction());
  if (reduction.empty())
    return op.emitOpError("unknown reduction '") << op.getReduction() << "'";
  return success();
}

void addBackward(OpEmitterTable &t) {
  addEmitter<GeluBackwardOp>(t, [](GeluBackwardOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("geluBackward",
             {ctx.operand(op.getInput()), ctx.operand(op.getOutputGrad()),
              ctx.result(op.getInputGrad()),
              cppBool(op.getApproximate() == "tanh")});
    return success();
  });
  addEmitter<SoftmaxBackwardOp>(t, [](SoftmaxBackwardOp op,
                                      OpEmitContext &ctx) -> LogicalResult {
    ctx.call("softmaxBackward",
             {ctx.operand(op.getOutput()), ctx.operand(op.getOutputGrad()),
              ctx.result(op.getInputGrad()), cppInt(op.getAxis())});
    return success();
  });
  addEmitter<LogSoftmaxBackwardOp>(t, [](LogSoftmaxBackwardOp op,
                                         OpEmitContext &ctx) -> LogicalResult {
    ctx.call("logSoftmaxBackward",
             {ctx.operand(op.getOutput()), ctx.operand(op.getOutputGrad()),
              ctx.result(op.getInputGrad()), cppInt(op.getAxis())});
    return success();
  });
  addEmitter<LayerNormBackwardOp>(t, [](LayerNormBackwardOp op,
                                        OpEmitContext &ctx) -> LogicalResult {
    ctx.call("layerNormBackward",
             {ctx.operand(op.getInput()), ctx.operand(op.getScale()),
              ctx.operand(op.getMean()), ctx.operand(op.getInvStdDev()),
              ctx.operand(op.getOutputGrad()),
              ctx.optionalResult(op.getInputGrad()),
              ctx.optionalResult(op.getScaleGrad()),
              ctx.optionalResult(op.getBiasGrad()), cppInt(op.getAxis())});
    return success();
  });
  addEmitter<BatchNormTrainingBackwardOp>(
      t, [](BatchNormTrainingBackwardOp op, OpEmitContext &ctx) -> LogicalResult {
        ctx.call("batchNormTrainingBackward",
                 {ctx.operand(op.getInput()), ctx.operand(op.getScale()),
                  ctx.operand(op.getSavedMean()),
                  ctx.operand(op.getSavedInvStd()),
                  ctx.operand(op.getOutputGrad()),
                  ctx.optionalResult(op.getInputGrad()),
                  ctx.optionalResult(op.getScaleGrad()),
                  ctx.optionalResult(op.getBiasGrad())});
        return success();
      });
  addEmitter<ConvBackwardDataOp>(t, [](ConvBackwardDataOp op,
                                       OpEmitContext &ctx) -> LogicalResult {
    ctx.call("convBackwardData",
             {ctx.operand(op.getOutputGrad()), ctx.operand(op.getWeight()),
              ctx.result(op.getInputGrad()),
              convWindow(op.getWeight(), op.getStrides(), op.getPads(),
                         op.getDilations()),
              cppInt(op.getGroup())});
    return success();
  });
  addEmitter<ConvBackwardFilterOp>(t, [](ConvBackwardFilterOp op,
                                         OpEmitContext &ctx) -> LogicalResult {
    ctx.call("convBackwardFilter",
             {ctx.operand(op.getInput()), ctx.operand(op.getOutputGrad()),
              ctx.result(op.getWeightGrad()),
              convWindow(op.getWeightGrad(), op.getStrides(), op.getPads(),
                         op.getDilations()),
              cppInt(op.getGroup())});
    return success();
  });
  addEmitter<MaxPoolBackwardOp>(t, [](MaxPoolBackwardOp op,
                                      OpEmitContext &ctx) -> LogicalResult {
    ctx.call("maxPoolBackward",
             {ctx.operand(op.getOutputGrad()), ctx.operand(op.getIndices()),
              ctx.result(op.getInputGrad())});
    return success();
  });
  addEmitter<AveragePoolBackwardOp>(t, [](AveragePoolBackwardOp op,
                                          OpEmitContext &ctx) -> LogicalResult {
    ctx.call("averagePoolBackward",
             {ctx.operand(op.getOutputGrad()), ctx.result(op.getInputGrad()),
              cppWindowParams(op.getKernelShape(), op.getStrides(),
                              op.getPads()),
              cppBool(op.getCountIncludePad())});
    return success();
  });
  addEmitter<GatherBackwardOp>(t, [](GatherBackwardOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("gatherBackward",
             {ctx.operand(op.getOutputGrad()), ctx.operand(op.getIndices()),
              ctx.result(op.getInputGrad()), cppInt(op.getAxis())});
    return success();
  });
  addEmitter<SliceBackwardOp>(t, [](SliceBackwardOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("sliceBackward",
             {ctx.operand(op.getOutputGrad()), ctx.result(op.getInputGrad()),
              cppIntList(op.getStarts()), cppIntList(op.getSteps())});
    return success();
  });
  addEmitter<SoftmaxCrossEntropyLossBackwardOp>(
      t, [](SoftmaxCrossEntropyLossBackwardOp op, OpEmitContext &ctx) -> LogicalResult {
        std::string reduction;
        if (failed(withReduction(op, reduction)))
          return failure();
        IntegerAttr ignore = op.getIgnoreIndexAttr();
        ctx.call("softmaxCrossEntropyLossBackward",
                 {ctx.operand(op.getLossGrad()), ctx.operand(op.getLogProb()),
                  ctx.operand(op.getLabels()), ctx.operand(op.getWeights()),
                  ctx.result(op.getScoresGrad()), reduction,
                  cppInt(ignore ? ignore.getInt() : 0),
                  cppBool(static_cast<bool>(ignore))});
        return success();
      });
  addEmitter<NllLossBackwardOp>(t, [](NllLossBackwardOp op,
                                      OpEmitContext &ctx) -> LogicalResult {
    std::string reduction;
    if (failed(withReduction(op, reduction)))
      return failure();
    IntegerAttr ignore = op.getIgnoreIndexAttr();
    ctx.call("nllLossBackward",
             {ctx.operand(op.getLossGrad()), ctx.operand(op.getTarget()),
              ctx.operand(op.getWeights()), ctx.result(op.getInputGrad()),
              reduction, cppInt(ignore ? ignore.getInt() : 0),
              cppBool(static_cast<bool>(ignore))});
    return success();
  });
}

void addOptimizers(OpEmitterTable &t) {
  addEmitter<SgdOp>(t, [](SgdOp op, OpEmitContext &ctx) -> LogicalResult {
    // Without momentum the step number does not matter (the interpreter
    // passes 1 too).
    ctx.call("sgdUpdate",
             {ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
              "remat::rt::TensorView()", ctx.result(op.getNewParam()),
              "remat::rt::TensorView()", "1",
              "remat::rt::SgdOptions{/*lr=*/" +
                  cppDouble(op.getLr().convertToDouble()) +
                  ", /*momentum=*/0.0, /*dampening=*/0.0, /*weightDecay=*/" +
                  cppDouble(op.getWeightDecay().convertToDouble()) +
                  ", /*nesterov=*/false}"});
    return success();
  });
  addEmitter<SgdMomentumOp>(t, [](SgdMomentumOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("sgdUpdate",
             {ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
              ctx.operand(op.getMomentumBuffer()), ctx.result(op.getNewParam()),
              ctx.result(op.getNewMomentumBuffer()),
              ctx.stepNumber(op.getStep()),
              "remat::rt::SgdOptions{/*lr=*/" +
                  cppDouble(op.getLr().convertToDouble()) + ", /*momentum=*/" +
                  cppDouble(op.getMomentum().convertToDouble()) +
                  ", /*dampening=*/" +
                  cppDouble(op.getDampening().convertToDouble()) +
                  ", /*weightDecay=*/" +
                  cppDouble(op.getWeightDecay().convertToDouble()) +
                  ", /*nesterov=*/" + cppBool(op.getNesterov()) + "}"});
    return success();
  });
  addEmitter<AdamOp>(t, [](AdamOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("adamUpdate",
             {ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
              ctx.operand(op.getExpAvg()), ctx.operand(op.getExpAvgSq()),
              ctx.result(op.getNewParam()), ctx.result(op.getNewExpAvg()),
              ctx.result(op.getNewExpAvgSq()), ctx.stepNumber(op.getStep()),
              "remat::rt::AdamOptions{/*lr=*/" +
                  cppDouble(op.getLr().convertToDouble()) + ", /*beta1=*/" +
                  cppDouble(op.getBeta1().convertToDouble()) + ", /*beta2=*/" +
                  cppDouble(op.getBeta2().convertToDouble()) + ", /*eps=*/" +
                  cppDouble(op.getEps().convertToDouble()) +
                  ", /*weightDecay=*/" +
                  cppDouble(op.getWeightDecay().convertToDouble()) +
                  ", /*decoupledWeightDecay=*/" + cppBool(op.getDecoupled()) +
                  "}"});
    return success();
  });
}

} // namespace

void addTrainingOpEmitters(OpEmitterTable &table) {
  addBackward(table);
  addOptimizers(table);
}

} // namespace remat
