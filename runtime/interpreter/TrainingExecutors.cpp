//===- TrainingExecutors.cpp - Executors of backward and optimizer ops ----===//

#include "ExecutorRegistry.h"

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/GradKernels.h"

using namespace mlir;

namespace remat {
namespace {

/// The 1-based step number held by a 0-d i64 tensor.
int64_t stepValue(ExecContext &ctx, Value step) {
  return *ctx.operand(step).as<int64_t>();
}

void addBackward(ExecutorTable &t) {
  add<GeluBackwardOp>(t, [](GeluBackwardOp op, ExecContext &ctx) {
    rt::geluBackward(ctx.operand(op.getInput()), ctx.operand(op.getOutputGrad()),
                     ctx.result(op.getInputGrad()), op.getApproximate() == "tanh");
  });
  add<SoftmaxBackwardOp>(t, [](SoftmaxBackwardOp op, ExecContext &ctx) {
    rt::softmaxBackward(ctx.operand(op.getOutput()), ctx.operand(op.getOutputGrad()),
                        ctx.result(op.getInputGrad()), op.getAxis());
  });
  add<LogSoftmaxBackwardOp>(t, [](LogSoftmaxBackwardOp op, ExecContext &ctx) {
    rt::logSoftmaxBackward(ctx.operand(op.getOutput()),
                           ctx.operand(op.getOutputGrad()),
                           ctx.result(op.getInputGrad()), op.getAxis());
  });
  add<LayerNormBackwardOp>(t, [](LayerNormBackwardOp op, ExecContext &ctx) {
    rt::layerNormBackward(ctx.operand(op.getInput()), ctx.operand(op.getScale()),
                          ctx.operand(op.getMean()), ctx.operand(op.getInvStdDev()),
                          ctx.operand(op.getOutputGrad()),
                          ctx.optionalResult(op.getInputGrad()),
                          ctx.optionalResult(op.getScaleGrad()),
                          ctx.optionalResult(op.getBiasGrad()), op.getAxis());
  });
  add<BatchNormTrainingBackwardOp>(
      t, [](BatchNormTrainingBackwardOp op, ExecContext &ctx) {
        rt::batchNormTrainingBackward(
            ctx.operand(op.getInput()), ctx.operand(op.getScale()),
            ctx.operand(op.getSavedMean()), ctx.operand(op.getSavedInvStd()),
            ctx.operand(op.getOutputGrad()), ctx.optionalResult(op.getInputGrad()),
            ctx.optionalResult(op.getScaleGrad()),
            ctx.optionalResult(op.getBiasGrad()));
      });
  add<ConvBackwardDataOp>(t, [](ConvBackwardDataOp op, ExecContext &ctx) {
    rt::TensorView weight = ctx.operand(op.getWeight());
    rt::convBackwardData(ctx.operand(op.getOutputGrad()), weight,
                         ctx.result(op.getInputGrad()),
                         convParams(weight.shape, op.getStrides(), op.getPads(),
                                    op.getDilations()),
                         op.getGroup());
  });
  add<ConvBackwardFilterOp>(t, [](ConvBackwardFilterOp op, ExecContext &ctx) {
    rt::TensorView weightGrad = ctx.result(op.getWeightGrad());
    rt::convBackwardFilter(ctx.operand(op.getInput()),
                           ctx.operand(op.getOutputGrad()), weightGrad,
                           convParams(weightGrad.shape, op.getStrides(),
                                      op.getPads(), op.getDilations()),
                           op.getGroup());
  });
  add<MaxPoolBackwardOp>(t, [](MaxPoolBackwardOp op, ExecContext &ctx) {
    rt::maxPoolBackward(ctx.operand(op.getOutputGrad()),
                        ctx.operand(op.getIndices()), ctx.result(op.getInputGrad()));
  });
  add<AveragePoolBackwardOp>(t, [](AveragePoolBackwardOp op, ExecContext &ctx) {
    rt::averagePoolBackward(
        ctx.operand(op.getOutputGrad()), ctx.result(op.getInputGrad()),
        windowParams(op.getKernelShape(), op.getStrides(), op.getPads()),
        op.getCountIncludePad());
  });
  add<GatherBackwardOp>(t, [](GatherBackwardOp op, ExecContext &ctx) {
    rt::gatherBackward(ctx.operand(op.getOutputGrad()), ctx.operand(op.getIndices()),
                       ctx.result(op.getInputGrad()), op.getAxis());
  });
  add<SliceBackwardOp>(t, [](SliceBackwardOp op, ExecContext &ctx) {
    rt::sliceBackward(ctx.operand(op.getOutputGrad()), ctx.result(op.getInputGrad()),
                      toVector(op.getStarts()), toVector(op.getSteps()));
  });
  add<SoftmaxCrossEntropyLossBackwardOp>(
      t, [](SoftmaxCrossEntropyLossBackwardOp op, ExecContext &ctx) {
        IntegerAttr ignore = op.getIgnoreIndexAttr();
        rt::softmaxCrossEntropyLossBackward(
            ctx.operand(op.getLossGrad()), ctx.operand(op.getLogProb()),
            ctx.operand(op.getLabels()), ctx.operand(op.getWeights()),
            ctx.result(op.getScoresGrad()), lossReduction(op.getReduction()),
            ignore ? ignore.getInt() : 0, static_cast<bool>(ignore));
      });
  add<NllLossBackwardOp>(t, [](NllLossBackwardOp op, ExecContext &ctx) {
    IntegerAttr ignore = op.getIgnoreIndexAttr();
    rt::nllLossBackward(ctx.operand(op.getLossGrad()), ctx.operand(op.getTarget()),
                        ctx.operand(op.getWeights()), ctx.result(op.getInputGrad()),
                        lossReduction(op.getReduction()),
                        ignore ? ignore.getInt() : 0, static_cast<bool>(ignore));
  });
}

void addOptimizers(ExecutorTable &t) {
  add<SgdOp>(t, [](SgdOp op, ExecContext &ctx) {
    rt::SgdOptions options;
    options.lr = op.getLr().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    // Without momentum the step number does not matter.
    rt::sgdUpdate(ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
                  rt::TensorView(), ctx.result(op.getNewParam()), rt::TensorView(),
                  /*step=*/1, options);
  });
  add<SgdMomentumOp>(t, [](SgdMomentumOp op, ExecContext &ctx) {
    rt::SgdOptions options;
    options.lr = op.getLr().convertToDouble();
    options.momentum = op.getMomentum().convertToDouble();
    options.dampening = op.getDampening().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    options.nesterov = op.getNesterov();
    rt::sgdUpdate(ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
                  ctx.operand(op.getMomentumBuffer()), ctx.result(op.getNewParam()),
                  ctx.result(op.getNewMomentumBuffer()),
                  stepValue(ctx, op.getStep()), options);
  });
  add<AdamOp>(t, [](AdamOp op, ExecContext &ctx) {
    rt::AdamOptions options;
    options.lr = op.getLr().convertToDouble();
    options.beta1 = op.getBeta1().convertToDouble();
    options.beta2 = op.getBeta2().convertToDouble();
    options.eps = op.getEps().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    options.decoupledWeightDecay = op.getDecoupled();
    rt::adamUpdate(ctx.operand(op.getParam()), ctx.operand(op.getGrad()),
                   ctx.operand(op.getExpAvg()), ctx.operand(op.getExpAvgSq()),
                   ctx.result(op.getNewParam()), ctx.result(op.getNewExpAvg()),
                   ctx.result(op.getNewExpAvgSq()), stepValue(ctx, op.getStep()),
                   options);
  });
}

} // namespace

void addTrainingExecutors(ExecutorTable &table) {
  addBackward(table);
  addOptimizers(table);
}

} // namespace remat
