//===- OpExecutors.cpp - One executor per remat op ------------------------===//
//
// A dispatch table keyed by op TypeID. Each entry reads the op's attributes,
// obtains operand views and result buffers from the ExecContext, and calls
// the runtime kernels (and nothing else) for the computation.
//
//===----------------------------------------------------------------------===//

#include "ExecContext.h"
#include "ExecutorRegistry.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/runtime/Kernels.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace remat {
namespace {

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT>
void addUnary(ExecutorTable &table, rt::UnaryOp kind) {
  add<OpT>(table, [kind](OpT op, ExecContext &ctx) {
    rt::unary(kind, ctx.operand(op.getInput()), ctx.result(op.getOutput()));
  });
}

template <typename OpT>
void addBinary(ExecutorTable &table, rt::BinaryOp kind) {
  add<OpT>(table, [kind](OpT op, ExecContext &ctx) {
    rt::binary(kind, ctx.operand(op.getLhs()), ctx.operand(op.getRhs()),
               ctx.result(op.getOutput()));
  });
}

void addElementwise(ExecutorTable &t) {
  addUnary<NegOp>(t, rt::UnaryOp::Neg);
  addUnary<AbsOp>(t, rt::UnaryOp::Abs);
  addUnary<SqrtOp>(t, rt::UnaryOp::Sqrt);
  addUnary<ExpOp>(t, rt::UnaryOp::Exp);
  addUnary<LogOp>(t, rt::UnaryOp::Log);
  addUnary<ReciprocalOp>(t, rt::UnaryOp::Reciprocal);
  addUnary<ErfOp>(t, rt::UnaryOp::Erf);
  addUnary<TanhOp>(t, rt::UnaryOp::Tanh);
  addUnary<SigmoidOp>(t, rt::UnaryOp::Sigmoid);
  addUnary<ReluOp>(t, rt::UnaryOp::Relu);
  addUnary<NotOp>(t, rt::UnaryOp::Not);
  add<GeluOp>(t, [](GeluOp op, ExecContext &ctx) {
    const rt::UnaryOp kind = op.getApproximate() == "tanh"
                                 ? rt::UnaryOp::GeluTanh
                                 : rt::UnaryOp::GeluErf;
    rt::unary(kind, ctx.operand(op.getInput()), ctx.result(op.getOutput()));
  });

  addBinary<AddOp>(t, rt::BinaryOp::Add);
  addBinary<SubOp>(t, rt::BinaryOp::Sub);
  addBinary<MulOp>(t, rt::BinaryOp::Mul);
  addBinary<DivOp>(t, rt::BinaryOp::Div);
  addBinary<MaxOp>(t, rt::BinaryOp::Max);
  addBinary<MinOp>(t, rt::BinaryOp::Min);
  addBinary<AndOp>(t, rt::BinaryOp::And);
  addBinary<OrOp>(t, rt::BinaryOp::Or);
  addBinary<PowOp>(t, rt::BinaryOp::Pow);
  addBinary<EqualOp>(t, rt::BinaryOp::Equal);
  addBinary<LessOp>(t, rt::BinaryOp::Less);
  addBinary<GreaterOp>(t, rt::BinaryOp::Greater);

  add<WhereOp>(t, [](WhereOp op, ExecContext &ctx) {
    rt::where(ctx.operand(op.getCondition()), ctx.operand(op.getOnTrue()),
              ctx.operand(op.getOnFalse()), ctx.result(op.getOutput()));
  });
  add<CastOp>(t, [](CastOp op, ExecContext &ctx) {
    rt::cast(ctx.operand(op.getInput()), ctx.result(op.getOutput()));
  });
  add<DropoutOp>(t, [](DropoutOp op, ExecContext &ctx) {
    rt::dropout(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                ctx.optionalResult(op.getMask()),
                op.getRatio().convertToDouble(), op.getSeed(), op.getStream(),
                ctx.step());
  });
}

//===----------------------------------------------------------------------===//
// Constants, linear algebra, normalisation, reductions
//===----------------------------------------------------------------------===//

template <typename OpT>
void addReduce(ExecutorTable &table, rt::ReduceOp kind) {
  add<OpT>(table, [kind](OpT op, ExecContext &ctx) {
    rt::TensorView input = ctx.operand(op.getInput());
    rt::TensorView output = ctx.result(op.getOutput());
    // The kernel writes x's rank with reduced dims set to 1; without
    // keepdims the data layout is the same, only the shape differs.
    rt::Shape kept = input.shape;
    for (int64_t axis : op.getAxes()) {
      if (axis < 0 || axis >= input.rank())
        throw InterpreterError("reduction axis " + std::to_string(axis) +
                               " out of range for rank " +
                               std::to_string(input.rank()));
      kept[axis] = 1;
    }
    rt::reduce(kind, input, reshaped(output, std::move(kept)),
               toVector(op.getAxes()));
  });
}

void addCompute(ExecutorTable &t) {
  add<ConstantOp>(t, [](ConstantOp op, ExecContext &ctx) {
    ctx.constantResult(op.getResult(), op.getValue());
  });
  add<MatMulOp>(t, [](MatMulOp op, ExecContext &ctx) {
    rt::matmul(ctx.operand(op.getLhs()), ctx.operand(op.getRhs()),
               ctx.result(op.getOutput()), op.getTransposeLhs(),
               op.getTransposeRhs());
  });
  add<SoftmaxOp>(t, [](SoftmaxOp op, ExecContext &ctx) {
    rt::softmax(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                static_cast<int64_t>(op.getAxis()));
  });
  add<LogSoftmaxOp>(t, [](LogSoftmaxOp op, ExecContext &ctx) {
    rt::logSoftmax(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                   static_cast<int64_t>(op.getAxis()));
  });
  add<LayerNormOp>(t, [](LayerNormOp op, ExecContext &ctx) {
    rt::layerNorm(ctx.operand(op.getInput()), ctx.operand(op.getScale()),
                  ctx.operand(op.getBias()), ctx.result(op.getOutput()),
                  ctx.optionalResult(op.getMean()),
                  ctx.optionalResult(op.getInvStdDev()),
                  static_cast<int64_t>(op.getAxis()),
                  op.getEpsilon().convertToDouble());
  });
  add<BatchNormInferenceOp>(t, [](BatchNormInferenceOp op, ExecContext &ctx) {
    rt::batchNormInference(
        ctx.operand(op.getInput()), ctx.operand(op.getScale()),
        ctx.operand(op.getBias()), ctx.operand(op.getRunningMean()),
        ctx.operand(op.getRunningVar()), ctx.result(op.getOutput()),
        op.getEpsilon().convertToDouble());
  });
  add<BatchNormTrainingOp>(t, [](BatchNormTrainingOp op, ExecContext &ctx) {
    rt::batchNormTraining(
        ctx.operand(op.getInput()), ctx.operand(op.getScale()),
        ctx.operand(op.getBias()), ctx.operand(op.getRunningMean()),
        ctx.operand(op.getRunningVar()), ctx.result(op.getOutput()),
        ctx.result(op.getNewRunningMean()), ctx.result(op.getNewRunningVar()),
        ctx.optionalResult(op.getSavedMean()),
        ctx.optionalResult(op.getSavedInvStd()),
        op.getEpsilon().convertToDouble(), op.getMomentum().convertToDouble(),
        op.getUnbiasedRunningVar());
  });
  addReduce<ReduceSumOp>(t, rt::ReduceOp::Sum);
  addReduce<ReduceMeanOp>(t, rt::ReduceOp::Mean);
  addReduce<ReduceMaxOp>(t, rt::ReduceOp::Max);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

void addConvPool(ExecutorTable &t) {
  add<ConvOp>(t, [](ConvOp op, ExecContext &ctx) {
    rt::TensorView weight = ctx.operand(op.getWeight());
    if (weight.rank() < 3)
      throw InterpreterError("conv weight must have rank >= 3");
    rt::WindowParams params = convParams(weight.shape, op.getStrides(),
                                         op.getPads(), op.getDilations());
    rt::conv(ctx.operand(op.getInput()), weight, ctx.operand(op.getBias()),
             ctx.result(op.getOutput()), params,
             static_cast<int64_t>(op.getGroup()));
  });
  add<MaxPoolOp>(t, [](MaxPoolOp op, ExecContext &ctx) {
    rt::WindowParams params =
        windowParams(op.getKernelShape(), op.getStrides(), op.getPads(),
                     op.getDilations());
    // ceil_mode only changes the output shape, which the result type holds.
    rt::maxPool(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                ctx.optionalResult(op.getIndices()), params);
  });
  add<AveragePoolOp>(t, [](AveragePoolOp op, ExecContext &ctx) {
    rt::WindowParams params =
        windowParams(op.getKernelShape(), op.getStrides(), op.getPads());
    rt::averagePool(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                    params, op.getCountIncludePad());
  });
  add<GlobalAveragePoolOp>(t, [](GlobalAveragePoolOp op, ExecContext &ctx) {
    rt::globalAveragePool(ctx.operand(op.getInput()),
                          ctx.result(op.getOutput()));
  });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

void addDataMovement(ExecutorTable &t) {
  add<ReshapeOp>(t, [](ReshapeOp op, ExecContext &ctx) {
    ctx.aliasResult(op.getOutput(), op.getInput());
  });
  add<TransposeOp>(t, [](TransposeOp op, ExecContext &ctx) {
    rt::transpose(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
                  toVector(op.getPermutation()));
  });
  add<ConcatOp>(t, [](ConcatOp op, ExecContext &ctx) {
    std::vector<rt::TensorView> inputs;
    for (Value input : op.getInputs())
      inputs.push_back(ctx.operand(input));
    rt::concat(inputs, ctx.result(op.getOutput()),
               static_cast<int64_t>(op.getAxis()));
  });
  add<SplitOp>(t, [](SplitOp op, ExecContext &ctx) {
    std::vector<rt::TensorView> outputs;
    for (Value output : op.getOutputs())
      outputs.push_back(ctx.result(output));
    rt::split(ctx.operand(op.getInput()), outputs,
              static_cast<int64_t>(op.getAxis()));
  });
  add<SliceOp>(t, [](SliceOp op, ExecContext &ctx) {
    // The limits only determine the result shape, which the type holds.
    rt::slice(ctx.operand(op.getInput()), ctx.result(op.getOutput()),
              toVector(op.getStarts()), toVector(op.getSteps()));
  });
  add<GatherOp>(t, [](GatherOp op, ExecContext &ctx) {
    rt::gather(ctx.operand(op.getInput()), ctx.operand(op.getIndices()),
               ctx.result(op.getOutput()),
               static_cast<int64_t>(op.getAxis()));
  });
  add<ExpandOp>(t, [](ExpandOp op, ExecContext &ctx) {
    rt::expand(ctx.operand(op.getInput()), ctx.result(op.getOutput()));
  });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

void addLosses(ExecutorTable &t) {
  add<SoftmaxCrossEntropyLossOp>(
      t, [](SoftmaxCrossEntropyLossOp op, ExecContext &ctx) {
        IntegerAttr ignore = op.getIgnoreIndexAttr();
        rt::softmaxCrossEntropyLoss(
            ctx.operand(op.getScores()), ctx.operand(op.getLabels()),
            ctx.operand(op.getWeights()), ctx.result(op.getLoss()),
            ctx.optionalResult(op.getLogProb()),
            lossReduction(op.getReduction()), ignore ? ignore.getInt() : 0,
            static_cast<bool>(ignore));
      });
  add<NllLossOp>(t, [](NllLossOp op, ExecContext &ctx) {
    IntegerAttr ignore = op.getIgnoreIndexAttr();
    rt::nllLoss(ctx.operand(op.getInput()), ctx.operand(op.getTarget()),
                ctx.operand(op.getWeights()), ctx.result(op.getLoss()),
                lossReduction(op.getReduction()), ignore ? ignore.getInt() : 0,
                static_cast<bool>(ignore));
  });
}

const ExecutorTable &executorTable() {
  static const ExecutorTable table = [] {
    ExecutorTable t;
    addElementwise(t);
    addCompute(t);
    addConvPool(t);
    addDataMovement(t);
    addLosses(t);
    addTrainingExecutors(t);
    return t;
  }();
  return table;
}

} // namespace

const OpExecutor *lookupExecutor(Operation *op) {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  const ExecutorTable &table = executorTable();
  auto it = table.find(name->getTypeID());
  return it == table.end() ? nullptr : &it->second;
}

} // namespace remat
