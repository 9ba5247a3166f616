//===- OpEmitters.cpp - Kernel calls for forward ops ----------------------===//
//
// One entry per op, in the order of runtime/interpreter/OpExecutors.cpp and
// calling the same kernels with the same arguments, so that the generated
// CPU program computes bitwise what remat-run computes.
//
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "remat/Dialect/RematOps.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace remat {

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

std::string cppBool(bool value) { return value ? "true" : "false"; }

std::string cppInt(int64_t value) {
  // INT64_MIN has no literal form; spell it as an expression.
  if (value == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + (value > INT32_MAX || value < INT32_MIN
                                       ? "LL"
                                       : "");
}

std::string cppDouble(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  // Keep it a double literal.
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text;
}

std::string cppIntList(ArrayRef<int64_t> values) {
  std::string text = "{";
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + cppInt(v);
  return text + "}";
}

std::string cppWindowParams(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations) {
  std::vector<int64_t> ones(kernel.size(), 1);
  return "remat::rt::WindowParams{" + cppIntList(kernel) + ", " +
         cppIntList(strides) + ", " + cppIntList(pads) + ", " +
         cppIntList(dilations.empty() ? ArrayRef<int64_t>(ones) : dilations) +
         "}";
}

std::string cppLossReduction(StringRef reduction) {
  if (reduction == "none")
    return "remat::rt::LossReduction::None";
  if (reduction == "sum")
    return "remat::rt::LossReduction::Sum";
  if (reduction == "mean")
    return "remat::rt::LossReduction::Mean";
  return "";
}

std::string cppString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\%03o", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::vector<int64_t> staticShape(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT>
void addUnary(OpEmitterTable &table, const char *kind) {
  addEmitter<OpT>(table, [kind](OpT op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("unary", {std::string("remat::rt::UnaryOp::") + kind,
                       ctx.operand(op.getInput()), ctx.result(op.getOutput())});
    return success();
  });
}

template <typename OpT>
void addBinary(OpEmitterTable &table, const char *kind) {
  addEmitter<OpT>(table, [kind](OpT op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("binary",
             {std::string("remat::rt::BinaryOp::") + kind,
              ctx.operand(op.getLhs()), ctx.operand(op.getRhs()),
              ctx.result(op.getOutput())});
    return success();
  });
}

void addElementwise(OpEmitterTable &t) {
  addUnary<NegOp>(t, "Neg");
  addUnary<AbsOp>(t, "Abs");
  addUnary<SqrtOp>(t, "Sqrt");
  addUnary<ExpOp>(t, "Exp");
  addUnary<LogOp>(t, "Log");
  addUnary<ReciprocalOp>(t, "Reciprocal");
  addUnary<ErfOp>(t, "Erf");
  addUnary<TanhOp>(t, "Tanh");
  addUnary<SigmoidOp>(t, "Sigmoid");
  addUnary<ReluOp>(t, "Relu");
  addUnary<NotOp>(t, "Not");
  addEmitter<GeluOp>(t, [](GeluOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("unary", {op.getApproximate() == "tanh"
                           ? "remat::rt::UnaryOp::GeluTanh"
                           : "remat::rt::UnaryOp::GeluErf",
                       ctx.operand(op.getInput()), ctx.result(op.getOutput())});
    return success();
  });

  addBinary<AddOp>(t, "Add");
  addBinary<SubOp>(t, "Sub");
  addBinary<MulOp>(t, "Mul");
  addBinary<DivOp>(t, "Div");
  addBinary<MaxOp>(t, "Max");
  addBinary<MinOp>(t, "Min");
  addBinary<AndOp>(t, "And");
  addBinary<OrOp>(t, "Or");
  addBinary<PowOp>(t, "Pow");
  addBinary<EqualOp>(t, "Equal");
  addBinary<LessOp>(t, "Less");
  addBinary<GreaterOp>(t, "Greater");

  addEmitter<WhereOp>(t, [](WhereOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("where", {ctx.operand(op.getCondition()),
                       ctx.operand(op.getOnTrue()),
                       ctx.operand(op.getOnFalse()),
                       ctx.result(op.getOutput())});
    return success();
  });
  addEmitter<CastOp>(t, [](CastOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("cast", {ctx.operand(op.getInput()), ctx.result(op.getOutput())});
    return success();
  });
  addEmitter<DropoutOp>(t, [](DropoutOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("dropout",
             {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
              ctx.optionalResult(op.getMask()),
              cppDouble(op.getRatio().convertToDouble()),
              std::to_string(static_cast<uint64_t>(op.getSeed())) + "ULL",
              std::to_string(static_cast<uint64_t>(op.getStream())) + "ULL",
              ctx.dropoutStep()});
    return success();
  });
}

//===----------------------------------------------------------------------===//
// Linear algebra, normalisation, reductions
//===----------------------------------------------------------------------===//

template <typename OpT>
void addReduce(OpEmitterTable &table, const char *kind) {
  addEmitter<OpT>(table, [kind](OpT op, OpEmitContext &ctx) -> LogicalResult {
    // The kernel writes x's rank with reduced dims set to 1; without
    // keepdims the data layout is the same, only the shape differs.
    std::vector<int64_t> kept = staticShape(op.getInput());
    for (int64_t axis : op.getAxes()) {
      if (axis < 0 || axis >= static_cast<int64_t>(kept.size()))
        return op.emitOpError("reduction axis ")
               << axis << " out of range for rank " << kept.size();
      kept[axis] = 1;
    }
    ctx.call("reduce", {std::string("remat::rt::ReduceOp::") + kind,
                        ctx.operand(op.getInput()),
                        ctx.resultWithShape(op.getOutput(), kept),
                        cppIntList(op.getAxes())});
    return success();
  });
}

void addCompute(OpEmitterTable &t) {
  addEmitter<MatMulOp>(t, [](MatMulOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("matmul", {ctx.operand(op.getLhs()), ctx.operand(op.getRhs()),
                        ctx.result(op.getOutput()),
                        cppBool(op.getTransposeLhs()),
                        cppBool(op.getTransposeRhs())});
    return success();
  });
  addEmitter<SoftmaxOp>(t, [](SoftmaxOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("softmax", {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                         cppInt(static_cast<int64_t>(op.getAxis()))});
    return success();
  });
  addEmitter<LogSoftmaxOp>(t, [](LogSoftmaxOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("logSoftmax",
             {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
              cppInt(static_cast<int64_t>(op.getAxis()))});
    return success();
  });
  addEmitter<LayerNormOp>(t, [](LayerNormOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("layerNorm",
             {ctx.operand(op.getInput()), ctx.operand(op.getScale()),
              ctx.operand(op.getBias()), ctx.result(op.getOutput()),
              ctx.optionalResult(op.getMean()),
              ctx.optionalResult(op.getInvStdDev()),
              cppInt(static_cast<int64_t>(op.getAxis())),
              cppDouble(op.getEpsilon().convertToDouble())});
    return success();
  });
  addEmitter<BatchNormInferenceOp>(
      t, [](BatchNormInferenceOp op, OpEmitContext &ctx) -> LogicalResult {
        ctx.call("batchNormInference",
                 {ctx.operand(op.getInput()), ctx.operand(op.getScale()),
                  ctx.operand(op.getBias()), ctx.operand(op.getRunningMean()),
                  ctx.operand(op.getRunningVar()), ctx.result(op.getOutput()),
                  cppDouble(op.getEpsilon().convertToDouble())});
        return success();
      });
  addEmitter<BatchNormTrainingOp>(
      t, [](BatchNormTrainingOp op, OpEmitContext &ctx) -> LogicalResult {
        ctx.call("batchNormTraining",
                 {ctx.operand(op.getInput()), ctx.operand(op.getScale()),
                  ctx.operand(op.getBias()), ctx.operand(op.getRunningMean()),
                  ctx.operand(op.getRunningVar()), ctx.result(op.getOutput()),
                  ctx.result(op.getNewRunningMean()),
                  ctx.result(op.getNewRunningVar()),
                  ctx.optionalResult(op.getSavedMean()),
                  ctx.optionalResult(op.getSavedInvStd()),
                  cppDouble(op.getEpsilon().convertToDouble()),
                  cppDouble(op.getMomentum().convertToDouble()),
                  cppBool(op.getUnbiasedRunningVar())});
        return success();
      });
  addReduce<ReduceSumOp>(t, "Sum");
  addReduce<ReduceMeanOp>(t, "Mean");
  addReduce<ReduceMaxOp>(t, "Max");
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

void addConvPool(OpEmitterTable &t) {
  addEmitter<ConvOp>(t, [](ConvOp op, OpEmitContext &ctx) -> LogicalResult {
    std::vector<int64_t> weight = staticShape(op.getWeight());
    if (weight.size() < 3)
      return op.emitOpError("conv weight must have rank >= 3");
    ctx.call("conv", {ctx.operand(op.getInput()), ctx.operand(op.getWeight()),
                      ctx.operand(op.getBias()), ctx.result(op.getOutput()),
                      cppWindowParams(ArrayRef<int64_t>(weight).drop_front(2),
                                      op.getStrides(), op.getPads(),
                                      op.getDilations()),
                      cppInt(static_cast<int64_t>(op.getGroup()))});
    return success();
  });
  addEmitter<MaxPoolOp>(t, [](MaxPoolOp op, OpEmitContext &ctx) -> LogicalResult {
    // ceil_mode only changes the output shape, which the result type holds.
    ctx.call("maxPool", {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                         ctx.optionalResult(op.getIndices()),
                         cppWindowParams(op.getKernelShape(), op.getStrides(),
                                         op.getPads(), op.getDilations())});
    return success();
  });
  addEmitter<AveragePoolOp>(t, [](AveragePoolOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("averagePool",
             {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
              cppWindowParams(op.getKernelShape(), op.getStrides(),
                              op.getPads()),
              cppBool(op.getCountIncludePad())});
    return success();
  });
  addEmitter<GlobalAveragePoolOp>(
      t, [](GlobalAveragePoolOp op, OpEmitContext &ctx) -> LogicalResult {
        ctx.call("globalAveragePool",
                 {ctx.operand(op.getInput()), ctx.result(op.getOutput())});
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

std::string viewList(const std::vector<std::string> &views) {
  std::string text = "remat::rt::TensorViewList{"; // no heap: see Tensor.h
  for (auto [i, v] : llvm::enumerate(views))
    text += (i ? ", " : "") + v;
  return text + "}";
}

void addDataMovement(OpEmitterTable &t) {
  addEmitter<TransposeOp>(t, [](TransposeOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("transpose", {ctx.operand(op.getInput()),
                           ctx.result(op.getOutput()),
                           cppIntList(op.getPermutation())});
    return success();
  });
  addEmitter<ConcatOp>(t, [](ConcatOp op, OpEmitContext &ctx) -> LogicalResult {
    std::vector<std::string> inputs;
    for (Value input : op.getInputs())
      inputs.push_back(ctx.operand(input));
    ctx.call("concat", {viewList(inputs), ctx.result(op.getOutput()),
                        cppInt(static_cast<int64_t>(op.getAxis()))});
    return success();
  });
  addEmitter<SplitOp>(t, [](SplitOp op, OpEmitContext &ctx) -> LogicalResult {
    std::vector<std::string> outputs;
    for (Value output : op.getOutputs())
      outputs.push_back(ctx.result(output));
    ctx.call("split", {ctx.operand(op.getInput()), viewList(outputs),
                       cppInt(static_cast<int64_t>(op.getAxis()))});
    return success();
  });
  addEmitter<SliceOp>(t, [](SliceOp op, OpEmitContext &ctx) -> LogicalResult {
    // The limits only determine the result shape, which the type holds.
    ctx.call("slice", {ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                       cppIntList(op.getStarts()), cppIntList(op.getSteps())});
    return success();
  });
  addEmitter<GatherOp>(t, [](GatherOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("gather", {ctx.operand(op.getInput()),
                        ctx.operand(op.getIndices()),
                        ctx.result(op.getOutput()),
                        cppInt(static_cast<int64_t>(op.getAxis()))});
    return success();
  });
  addEmitter<ExpandOp>(t, [](ExpandOp op, OpEmitContext &ctx) -> LogicalResult {
    ctx.call("expand", {ctx.operand(op.getInput()), ctx.result(op.getOutput())});
    return success();
  });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

void addLosses(OpEmitterTable &t) {
  addEmitter<SoftmaxCrossEntropyLossOp>(
      t, [](SoftmaxCrossEntropyLossOp op, OpEmitContext &ctx) -> LogicalResult {
        std::string reduction = cppLossReduction(op.getReduction());
        if (reduction.empty())
          return op.emitOpError("unknown reduction '")
                 << op.getReduction() << "'";
        IntegerAttr ignore = op.getIgnoreIndexAttr();
        ctx.call("softmaxCrossEntropyLoss",
                 {ctx.operand(op.getScores()), ctx.operand(op.getLabels()),
                  ctx.operand(op.getWeights()), ctx.result(op.getLoss()),
                  ctx.optionalResult(op.getLogProb()), reduction,
                  cppInt(ignore ? ignore.getInt() : 0),
                  cppBool(static_cast<bool>(ignore))});
        return success();
      });
  addEmitter<NllLossOp>(t, [](NllLossOp op, OpEmitContext &ctx) -> LogicalResult {
    std::string reduction = cppLossReduction(op.getReduction());
    if (reduction.empty())
      return op.emitOpError("unknown reduction '") << op.getReduction() << "'";
    IntegerAttr ignore = op.getIgnoreIndexAttr();
    ctx.call("nllLoss", {ctx.operand(op.getInput()), ctx.operand(op.getTarget()),
                         ctx.operand(op.getWeights()), ctx.result(op.getLoss()),
                         reduction, cppInt(ignore ? ignore.getInt() : 0),
                         cppBool(static_cast<bool>(ignore))});
    return success();
  });
}

const OpEmitterTable &emitterTable() {
  static const OpEmitterTable table = [] {
    OpEmitterTable t;
    addElementwise(t);
    addCompute(t);
    addConvPool(t);
    addDataMovement(t);
    addLosses(t);
    addTrainingOpEmitters(t);
    return t;
  }();
  return table;
}

} // namespace

const OpEmitter *lookupOpEmitter(Operation *op) {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  const OpEmitterTable &table = emitterTable();
  auto it = table.find(name->getTypeID());
  return it == table.end() ? nullptr : &it->second;
}

} // namespace remat
