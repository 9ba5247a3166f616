//===- OpScratch.cpp - Workspace scratch of a step's ops ------------------===//

#include "OpScratch.h"

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/KernelScratch.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;

namespace remat {
namespace {

rt::DType dtypeOf(Type element) {
  if (element.isF64())
    return rt::DType::F64;
  if (element.isF16())
    return rt::DType::F16;
  if (element.isBF16())
    return rt::DType::BF16;
  if (element.isInteger(1))
    return rt::DType::Bool;
  if (element.isInteger(64))
    return rt::DType::I64;
  if (element.isInteger(32))
    return rt::DType::I32;
  if (element.isInteger(8))
    return rt::DType::I8;
  return rt::DType::F32;
}

/// A view with the value's dtype and shape and no data: what the scratch
/// functions read. An absent optional value is an empty view.
rt::TensorView view(Value value) {
  if (!value)
    return rt::TensorView();
  auto type = cast<ShapedType>(value.getType());
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  // Non-null so that the view does not read as absent; never dereferenced.
  static char marker;
  return rt::TensorView(dtypeOf(type.getElementType()), shape, &marker);
}

rt::Dims dims(ArrayRef<int64_t> values) {
  return rt::Dims(values.begin(), values.end());
}

/// Window parameters with the kernel from a weight shape [M, C/g, k...].
rt::WindowParams convParams(Value weightLike, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations) {
  ArrayRef<int64_t> shape = cast<ShapedType>(weightLike.getType()).getShape();
  return {dims(shape.drop_front(2)), dims(strides), dims(pads),
          dims(dilations)};
}

template <typename ReduceOpT> size_t reduceScratch(ReduceOpT op) {
  return rt::reduceScratchBytes(view(op.getInput()), view(op.getOutput()),
                                dims(op.getAxes()));
}

} // namespace

int64_t opScratchBytes(Operation *op) {
  size_t bytes =
      llvm::TypeSwitch<Operation *, size_t>(op)
          .Case([](ConvOp op) {
            return rt::convScratchBytes(
                view(op.getInput()), view(op.getWeight()), view(op.getOutput()),
                convParams(op.getWeight(), op.getStrides(), op.getPads(),
                           op.getDilations()),
                static_cast<int64_t>(op.getGroup()));
          })
          .Case([](ConvBackwardDataOp op) {
            return rt::convBackwardDataScratchBytes(
                view(op.getOutputGrad()), view(op.getWeight()),
                view(op.getInputGrad()),
                convParams(op.getWeight(), op.getStrides(), op.getPads(),
                           op.getDilations()),
                static_cast<int64_t>(op.getGroup()));
          })
          .Case([](ConvBackwardFilterOp op) {
            return rt::convBackwardFilterScratchBytes(
                view(op.getInput()), view(op.getOutputGrad()),
                view(op.getWeightGrad()),
                convParams(op.getWeightGrad(), op.getStrides(), op.getPads(),
                           op.getDilations()),
                static_cast<int64_t>(op.getGroup()));
          })
          .Case([](MaxPoolBackwardOp op) {
            return rt::poolBackwardScratchBytes(view(op.getInputGrad()));
          })
          .Case([](AveragePoolBackwardOp op) {
            return rt::poolBackwardScratchBytes(view(op.getInputGrad()));
          })
          .Case([](ReduceSumOp op) { return reduceScratch(op); })
          .Case([](ReduceMeanOp op) { return reduceScratch(op); })
          .Case([](ReduceMaxOp op) { return reduceScratch(op); })
          .Case([](LayerNormOp op) {
            return rt::layerNormScratchBytes(
                view(op.getInput()), view(op.getScale()), view(op.getBias()),
                static_cast<int64_t>(op.getAxis()));
          })
          .Case([](LayerNormBackwardOp op) {
            return rt::layerNormBackwardScratchBytes(
                view(op.getInput()), view(op.getScale()),
                static_cast<int64_t>(op.getAxis()));
          })
          .Case([](BatchNormInferenceOp op) {
            return rt::batchNormInferenceScratchBytes(view(op.getInput()));
          })
          .Case([](BatchNormTrainingOp op) {
            return rt::batchNormTrainingScratchBytes(view(op.getInput()));
          })
          .Case([](BatchNormTrainingBackwardOp op) {
            return rt::batchNormTrainingBackwardScratchBytes(
                view(op.getInput()));
          })
          .Case([](GatherOp op) {
            return rt::gatherScratchBytes(view(op.getIndices()));
          })
          .Case([](GatherBackwardOp op) {
            return rt::gatherBackwardScratchBytes(view(op.getIndices()),
                                                  view(op.getInputGrad()));
          })
          .Case([](SoftmaxCrossEntropyLossBackwardOp op) {
            return rt::lossBackwardScratchBytes(view(op.getLabels()));
          })
          .Case([](NllLossBackwardOp op) {
            return rt::lossBackwardScratchBytes(view(op.getTarget()));
          })
          .Default([](Operation *) { return size_t(0); });
  return static_cast<int64_t>(bytes);
}

int64_t maxOpScratchBytes(func::FuncOp func) {
  int64_t most = 0;
  func.walk([&](Operation *op) { most = std::max(most, opScratchBytes(op)); });
  return most;
}

} // namespace remat
