//===- KernelBindings.h - Each op's runtime kernel call, declared once -*- C++ -*-===//
//
// The one table from remat ops to the runtime kernel API
// (runtime/include/remat/runtime/KernelApi.inc). An entry says which
// kernel executes the op and with which arguments, written once against an
// abstract `Call`. Two Calls exist:
//  - the interpreter's (runtime/interpreter/KernelCalls.cpp) evaluates the
//    arguments to tensor views and values and calls the CPU kernel now;
//  - the C++ emitter's (compiler/lib/Target/Cpp/KernelCallWriter.h) renders
//    the same arguments as C++ text: the kernel call in the generated program.
// So generated code calls what remat-run calls, with the same arguments, and
// adding an op means adding one entry here.
//
// What an entry may use of its Call `c`:
//   c.operand(v), c.result(v), c.optionalResult(v) (empty when unused),
//   c.resultWithShape(v, shape), c.operands(range), c.results(range),
//   c.none() (an absent optional view)            tensor arguments
//   c.stepNumber(v)  the 1-based step a 0-d i64 tensor holds (optimizers)
//   c.dropoutStep()  the steps taken before this one (dropout's RNG key)
//   c.call(REMAT_KERNEL(NAME), args...)       the call (REMAT_KERNEL_WITH_
//       SCRATCH for a kernel that takes workspace scratch); other arguments
//       are plain values of the kernel's parameter types (bool, int64_t,
//       uint64_t, double, std::vector<int64_t>, the runtime's enums,
//       UnaryParams, WindowParams, SgdOptions, AdamOptions)
//   c.alias(result, source)      result is source's buffer, reshaped
//   c.constant(result, value)    result is constant data
//   c.fail(op, message)          a malformed op (the verifiers should have
//                                excluded it): an error, not a kernel call
// Each returns what the entry returns: success, or failure after an error.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_KERNELBINDINGS_H
#define REMAT_TARGET_KERNELBINDINGS_H

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Kernels.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <utility>
#include <vector>

namespace remat {

/// What a kernel without workspace scratch needs: nothing.
struct NoScratch {
  template <typename... Args> size_t operator()(const Args &...) const {
    return 0;
  }
};

/// A runtime kernel as a binding names it: its name in generated code, the
/// CPU function the interpreter calls, and the bytes of workspace scratch it
/// takes with those arguments (the planner sizes the workspace with it).
/// Generated code calls `kernels::NAME`, an alias of the CPU or the CUDA
/// namespace. Each Call instantiates only the member it uses, so the
/// compiler does not link the kernels.
template <typename Run, typename Scratch = NoScratch> struct KernelRef {
  const char *name;
  Run run;
  Scratch scratch;
};
template <typename Run, typename Scratch>
KernelRef(const char *, Run, Scratch) -> KernelRef<Run, Scratch>;

#define REMAT_KERNEL(NAME)                                                     \
  ::remat::KernelRef {                                                         \
    #NAME,                                                                     \
        [](auto &&...args) {                                                   \
          ::remat::rt::NAME(std::forward<decltype(args)>(args)...);            \
        },                                                                     \
        ::remat::NoScratch {}                                                  \
  }

/// A kernel that takes scratch from the workspace: rt::NAME##ScratchBytes
/// (remat/runtime/KernelScratch.h) with the kernel's own arguments.
#define REMAT_KERNEL_WITH_SCRATCH(NAME)                                        \
  ::remat::KernelRef {                                                         \
    #NAME,                                                                     \
        [](auto &&...args) {                                                   \
          ::remat::rt::NAME(std::forward<decltype(args)>(args)...);            \
        },                                                                     \
        [](const auto &...args) {                                              \
          return ::remat::rt::NAME##ScratchBytes(args...);                     \
        }                                                                      \
  }

namespace binding {

inline std::vector<int64_t> toVector(llvm::ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// Attributes hold axes and groups unsigned; kernels take int64_t.
inline int64_t i64(uint64_t value) { return static_cast<int64_t>(value); }

inline std::vector<int64_t> staticShape(mlir::Value value) {
  return toVector(llvm::cast<mlir::RankedTensorType>(value.getType()).getShape());
}

/// Window parameters of a pooling op, or of a conv whose kernel is given.
inline rt::WindowParams window(llvm::ArrayRef<int64_t> kernel,
                               llvm::ArrayRef<int64_t> strides,
                               llvm::ArrayRef<int64_t> pads,
                               llvm::ArrayRef<int64_t> dilations) {
  rt::WindowParams params;
  params.kernel = toVector(kernel);
  params.strides = toVector(strides);
  params.pads = toVector(pads);
  params.dilations = toVector(dilations);
  return params;
}

/// Conv window parameters with the kernel taken from a weight-shaped value
/// [M, C/group, k...].
inline rt::WindowParams convWindow(mlir::Value weightLike,
                                   llvm::ArrayRef<int64_t> strides,
                                   llvm::ArrayRef<int64_t> pads,
                                   llvm::ArrayRef<int64_t> dilations) {
  std::vector<int64_t> shape = staticShape(weightLike);
  return window(llvm::ArrayRef<int64_t>(shape).drop_front(2), strides, pads,
                dilations);
}

inline double f64(const llvm::APFloat &value) {
  return value.convertToDouble();
}

/// The runtime's op and parameters for remat.activation_backward's
/// `activation` (which ODS restricts to these) and attributes.
inline rt::UnaryOp activationOp(llvm::StringRef activation) {
  using rt::UnaryOp;
  if (activation == "leaky_relu") return UnaryOp::LeakyRelu;
  if (activation == "elu") return UnaryOp::Elu;
  if (activation == "selu") return UnaryOp::Selu;
  if (activation == "softplus") return UnaryOp::Softplus;
  if (activation == "softsign") return UnaryOp::Softsign;
  if (activation == "hard_sigmoid") return UnaryOp::HardSigmoid;
  if (activation == "clip") return UnaryOp::Clip;
  if (activation == "sin") return UnaryOp::Sin;
  return UnaryOp::Cos;
}
inline rt::UnaryParams activationParams(ActivationBackwardOp op) {
  rt::UnaryParams params;
  if (auto alpha = op.getAlpha()) params.alpha = f64(*alpha);
  if (auto beta = op.getBeta()) params.beta = f64(*beta);
  if (auto gamma = op.getGamma()) params.gamma = f64(*gamma);
  if (auto min = op.getMin()) params.lower = f64(*min);
  if (auto max = op.getMax()) params.upper = f64(*max);
  return params;
}

/// The runtime's pad mode for a pad op's `mode` attribute (which ODS
/// restricts to these four).
inline rt::PadMode padMode(llvm::StringRef mode) {
  if (mode == "reflect")
    return rt::PadMode::Reflect;
  if (mode == "edge")
    return rt::PadMode::Edge;
  if (mode == "wrap")
    return rt::PadMode::Wrap;
  return rt::PadMode::Constant;
}

/// The begin pads of ONNX-layout pads [begins..., ends...]: the kernels
/// take the ends from the shapes.
inline std::vector<int64_t> padBegins(llvm::ArrayRef<int64_t> pads) {
  return toVector(pads.take_front(pads.size() / 2));
}

/// The runtime's reduction for a loss op's `reduction` attribute (which ODS
/// restricts to these three).
inline rt::LossReduction lossReduction(llvm::StringRef reduction) {
  if (reduction == "none")
    return rt::LossReduction::None;
  if (reduction == "sum")
    return rt::LossReduction::Sum;
  return rt::LossReduction::Mean;
}

/// The runtime's reduction for a scatter_nd op's `reduction` attribute
/// (which ODS restricts to these five).
inline rt::ScatterReduction scatterReduction(llvm::StringRef reduction) {
  if (reduction == "add")
    return rt::ScatterReduction::Add;
  if (reduction == "mul")
    return rt::ScatterReduction::Mul;
  if (reduction == "max")
    return rt::ScatterReduction::Max;
  if (reduction == "min")
    return rt::ScatterReduction::Min;
  return rt::ScatterReduction::None;
}

/// The runtime's parameters of a resize or resize_backward op (ODS
/// restricts the modes to these).
template <typename ResizeLikeOp>
rt::ResizeParams resizeParams(ResizeLikeOp op) {
  rt::ResizeParams params;
  params.mode = op.getMode() == "linear"  ? rt::ResizeMode::Linear
                : op.getMode() == "cubic" ? rt::ResizeMode::Cubic
                                          : rt::ResizeMode::Nearest;
  llvm::StringRef coordinates = op.getCoordinateTransformationMode();
  params.coordinates =
      coordinates == "half_pixel_symmetric"
          ? rt::ResizeCoordinates::HalfPixelSymmetric
      : coordinates == "pytorch_half_pixel"
          ? rt::ResizeCoordinates::PytorchHalfPixel
      : coordinates == "align_corners" ? rt::ResizeCoordinates::AlignCorners
      : coordinates == "asymmetric"    ? rt::ResizeCoordinates::Asymmetric
                                       : rt::ResizeCoordinates::HalfPixel;
  llvm::StringRef nearest = op.getNearestMode();
  params.nearest = nearest == "round_prefer_ceil"
                       ? rt::ResizeNearest::RoundPreferCeil
                   : nearest == "floor" ? rt::ResizeNearest::Floor
                   : nearest == "ceil"  ? rt::ResizeNearest::Ceil
                                        : rt::ResizeNearest::RoundPreferFloor;
  for (double scale : op.getScales())
    params.scales.push_back(scale);
  params.cubicCoeffA = op.getCubicCoeffA().convertToDouble();
  params.excludeOutside = op.getExcludeOutside();
  return params;
}

} // namespace binding

template <typename Call>
using KernelBinding =
    std::function<mlir::LogicalResult(mlir::Operation *, Call &)>;

/// The bindings of every op that a kernel executes, for one kind of Call.
template <typename Call> class KernelBindings {
public:
  static const KernelBindings &get() {
    static const KernelBindings bindings;
    return bindings;
  }

  /// The binding of `op`, or null when no kernel executes it.
  const KernelBinding<Call> *lookup(mlir::Operation *op) const {
    std::optional<mlir::RegisteredOperationName> name =
        op->getRegisteredInfo();
    if (!name)
      return nullptr;
    auto it = table_.find(name->getTypeID());
    return it == table_.end() ? nullptr : &it->second;
  }

private:
  KernelBindings() {
    bindElementwise();
    bindCompute();
    bindConvPool();
    bindDataMovement();
    bindLosses();
    bindBackward();
    bindOptimizers();
    bindIndexing();
  }

  template <typename OpT, typename Fn> void bind(Fn fn) {
    table_[mlir::TypeID::get<OpT>()] = [fn](mlir::Operation *op, Call &c) {
      return fn(llvm::cast<OpT>(op), c);
    };
  }

  template <typename OpT> void bindUnary(rt::UnaryOp kind) {
    bind<OpT>([kind](OpT op, Call &c) {
      return c.call(REMAT_KERNEL(unary), kind, c.operand(op.getInput()),
                    c.result(op.getOutput()));
    });
  }

  /// A unary op with parameters: `params(op)` gives its rt::UnaryParams.
  template <typename OpT, typename ParamsFn>
  void bindUnary(rt::UnaryOp kind, ParamsFn params) {
    bind<OpT>([kind, params](OpT op, Call &c) {
      return c.call(REMAT_KERNEL(unary), kind, c.operand(op.getInput()),
                    c.result(op.getOutput()), params(op));
    });
  }

  template <typename OpT> void bindBinary(rt::BinaryOp kind) {
    bind<OpT>([kind](OpT op, Call &c) {
      return c.call(REMAT_KERNEL(binary), kind, c.operand(op.getLhs()),
                    c.operand(op.getRhs()), c.result(op.getOutput()));
    });
  }

  template <typename OpT> void bindReduce(rt::ReduceOp kind) {
    bind<OpT>([kind](OpT op, Call &c) {
      // The kernel writes x's rank with reduced dims set to 1; without
      // keepdims the data layout is the same, only the shape differs.
      std::vector<int64_t> kept = binding::staticShape(op.getInput());
      for (int64_t axis : op.getAxes())
        if (axis < 0 || axis >= static_cast<int64_t>(kept.size()))
          return c.fail(op, "reduction axis " + std::to_string(axis) +
                                " out of range for rank " +
                                std::to_string(kept.size()));
        else
          kept[axis] = 1;
      return c.call(REMAT_KERNEL_WITH_SCRATCH(reduce), kind, c.operand(op.getInput()),
                    c.resultWithShape(op.getOutput(), kept),
                    binding::toVector(op.getAxes()));
    });
  }

  void bindElementwise();
  void bindCompute();
  void bindConvPool();
  void bindDataMovement();
  void bindLosses();
  void bindBackward();
  void bindOptimizers();
  void bindIndexing();

  llvm::DenseMap<mlir::TypeID, KernelBinding<Call>> table_;
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindElementwise() {
  using rt::UnaryOp;
  bindUnary<NegOp>(UnaryOp::Neg);
  bindUnary<AbsOp>(UnaryOp::Abs);
  bindUnary<SqrtOp>(UnaryOp::Sqrt);
  bindUnary<ExpOp>(UnaryOp::Exp);
  bindUnary<LogOp>(UnaryOp::Log);
  bindUnary<ReciprocalOp>(UnaryOp::Reciprocal);
  bindUnary<ErfOp>(UnaryOp::Erf);
  bindUnary<TanhOp>(UnaryOp::Tanh);
  bindUnary<SigmoidOp>(UnaryOp::Sigmoid);
  bindUnary<ReluOp>(UnaryOp::Relu);
  bindUnary<NotOp>(UnaryOp::Not);
  bind<GeluOp>([](GeluOp op, Call &c) {
    return c.call(REMAT_KERNEL(unary),
                  op.getApproximate() == "tanh" ? UnaryOp::GeluTanh
                                                : UnaryOp::GeluErf,
                  c.operand(op.getInput()), c.result(op.getOutput()));
  });
  using binding::f64;
  bindUnary<LeakyReluOp>(UnaryOp::LeakyRelu, [](LeakyReluOp op) {
    rt::UnaryParams params;
    params.alpha = f64(op.getAlpha());
    return params;
  });
  bindUnary<EluOp>(UnaryOp::Elu, [](EluOp op) {
    rt::UnaryParams params;
    params.alpha = f64(op.getAlpha());
    return params;
  });
  bindUnary<SeluOp>(UnaryOp::Selu, [](SeluOp op) {
    rt::UnaryParams params;
    params.alpha = f64(op.getAlpha());
    params.gamma = f64(op.getGamma());
    return params;
  });
  bindUnary<SoftplusOp>(UnaryOp::Softplus);
  bindUnary<SoftsignOp>(UnaryOp::Softsign);
  bindUnary<HardSigmoidOp>(UnaryOp::HardSigmoid, [](HardSigmoidOp op) {
    rt::UnaryParams params;
    params.alpha = f64(op.getAlpha());
    params.beta = f64(op.getBeta());
    return params;
  });
  bindUnary<ClipOp>(UnaryOp::Clip, [](ClipOp op) {
    rt::UnaryParams params;
    params.lower = f64(op.getMin());
    params.upper = f64(op.getMax());
    return params;
  });
  bindUnary<SinOp>(UnaryOp::Sin);
  bindUnary<CosOp>(UnaryOp::Cos);

  using rt::BinaryOp;
  bindBinary<AddOp>(BinaryOp::Add);
  bindBinary<SubOp>(BinaryOp::Sub);
  bindBinary<MulOp>(BinaryOp::Mul);
  bindBinary<DivOp>(BinaryOp::Div);
  bindBinary<MaxOp>(BinaryOp::Max);
  bindBinary<MinOp>(BinaryOp::Min);
  bindBinary<AndOp>(BinaryOp::And);
  bindBinary<OrOp>(BinaryOp::Or);
  bindBinary<PowOp>(BinaryOp::Pow);
  bindBinary<EqualOp>(BinaryOp::Equal);
  bindBinary<LessOp>(BinaryOp::Less);
  bindBinary<GreaterOp>(BinaryOp::Greater);
  bind<PReluOp>([](PReluOp op, Call &c) {
    return c.call(REMAT_KERNEL(binary), BinaryOp::PRelu,
                  c.operand(op.getInput()), c.operand(op.getSlope()),
                  c.result(op.getOutput()));
  });

  bind<WhereOp>([](WhereOp op, Call &c) {
    return c.call(REMAT_KERNEL(where), c.operand(op.getCondition()),
                  c.operand(op.getOnTrue()), c.operand(op.getOnFalse()),
                  c.result(op.getOutput()));
  });
  bind<CastOp>([](CastOp op, Call &c) {
    return c.call(REMAT_KERNEL(cast), c.operand(op.getInput()),
                  c.result(op.getOutput()));
  });
  bind<DropoutOp>([](DropoutOp op, Call &c) {
    return c.call(REMAT_KERNEL(dropout), c.operand(op.getInput()),
                  c.result(op.getOutput()), c.optionalResult(op.getMask()),
                  op.getRatio().convertToDouble(),
                  static_cast<uint64_t>(op.getSeed()),
                  static_cast<uint64_t>(op.getStream()), c.dropoutStep());
  });
}

//===----------------------------------------------------------------------===//
// Constants, views, linear algebra, normalisation, reductions
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindCompute() {
  bind<ConstantOp>([](ConstantOp op, Call &c) {
    return c.constant(op.getResult(), op.getValue());
  });
  bind<ReshapeOp>([](ReshapeOp op, Call &c) {
    return c.alias(op.getOutput(), op.getInput());
  });
  bind<MatMulOp>([](MatMulOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(matmul), c.operand(op.getLhs()),
                  c.operand(op.getRhs()), c.result(op.getOutput()),
                  op.getTransposeLhs(), op.getTransposeRhs());
  });
  bind<SoftmaxOp>([](SoftmaxOp op, Call &c) {
    return c.call(REMAT_KERNEL(softmax), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::i64(op.getAxis()));
  });
  bind<LogSoftmaxOp>([](LogSoftmaxOp op, Call &c) {
    return c.call(REMAT_KERNEL(logSoftmax), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::i64(op.getAxis()));
  });
  bind<LayerNormOp>([](LayerNormOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(layerNorm), c.operand(op.getInput()),
                  c.operand(op.getScale()), c.operand(op.getBias()),
                  c.result(op.getOutput()), c.optionalResult(op.getMean()),
                  c.optionalResult(op.getInvStdDev()),
                  binding::i64(op.getAxis()),
                  op.getEpsilon().convertToDouble());
  });
  // logsumexp exists for the backward: unused without one (inference).
  bind<AttentionOp>([](AttentionOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(attention), c.operand(op.getQuery()),
                  c.operand(op.getKey()), c.operand(op.getValue()),
                  c.operand(op.getMask()), c.result(op.getOutput()),
                  c.optionalResult(op.getLogsumexp()),
                  op.getScale().convertToDouble(), op.getCausal(),
                  op.getDropoutRatio().convertToDouble(),
                  static_cast<uint64_t>(op.getSeed()),
                  static_cast<uint64_t>(op.getStream()), c.dropoutStep());
  });
  bind<BatchNormInferenceOp>([](BatchNormInferenceOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(batchNormInference), c.operand(op.getInput()),
                  c.operand(op.getScale()), c.operand(op.getBias()),
                  c.operand(op.getRunningMean()),
                  c.operand(op.getRunningVar()), c.result(op.getOutput()),
                  op.getEpsilon().convertToDouble());
  });
  bind<BatchNormTrainingOp>([](BatchNormTrainingOp op, Call &c) {
    return c.call(
        REMAT_KERNEL_WITH_SCRATCH(batchNormTraining), c.operand(op.getInput()),
        c.operand(op.getScale()), c.operand(op.getBias()),
        c.operand(op.getRunningMean()), c.operand(op.getRunningVar()),
        c.result(op.getOutput()), c.result(op.getNewRunningMean()),
        c.result(op.getNewRunningVar()), c.optionalResult(op.getSavedMean()),
        c.optionalResult(op.getSavedInvStd()),
        op.getEpsilon().convertToDouble(), op.getMomentum().convertToDouble(),
        op.getUnbiasedRunningVar());
  });
  bind<CumSumOp>([](CumSumOp op, Call &c) {
    return c.call(REMAT_KERNEL(cumSum), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::i64(op.getAxis()),
                  op.getExclusive(), op.getReverse());
  });
  bindReduce<ReduceSumOp>(rt::ReduceOp::Sum);
  bindReduce<ReduceMeanOp>(rt::ReduceOp::Mean);
  bindReduce<ReduceMaxOp>(rt::ReduceOp::Max);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindConvPool() {
  bind<ConvOp>([](ConvOp op, Call &c) {
    if (binding::staticShape(op.getWeight()).size() < 3)
      return c.fail(op, "conv weight must have rank >= 3");
    return c.call(REMAT_KERNEL_WITH_SCRATCH(conv), c.operand(op.getInput()),
                  c.operand(op.getWeight()), c.operand(op.getBias()),
                  c.result(op.getOutput()),
                  binding::convWindow(op.getWeight(), op.getStrides(),
                                      op.getPads(), op.getDilations()),
                  binding::i64(op.getGroup()));
  });
  bind<MaxPoolOp>([](MaxPoolOp op, Call &c) {
    // ceil_mode only changes the output shape, which the result type holds.
    return c.call(REMAT_KERNEL(maxPool), c.operand(op.getInput()),
                  c.result(op.getOutput()), c.optionalResult(op.getIndices()),
                  binding::window(op.getKernelShape(), op.getStrides(),
                                  op.getPads(), op.getDilations()));
  });
  bind<AveragePoolOp>([](AveragePoolOp op, Call &c) {
    return c.call(REMAT_KERNEL(averagePool), c.operand(op.getInput()),
                  c.result(op.getOutput()),
                  binding::window(op.getKernelShape(), op.getStrides(),
                                  op.getPads(), op.getDilations()),
                  op.getCountIncludePad());
  });
  bind<GlobalAveragePoolOp>([](GlobalAveragePoolOp op, Call &c) {
    return c.call(REMAT_KERNEL(globalAveragePool), c.operand(op.getInput()),
                  c.result(op.getOutput()));
  });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindDataMovement() {
  bind<TransposeOp>([](TransposeOp op, Call &c) {
    return c.call(REMAT_KERNEL(transpose), c.operand(op.getInput()),
                  c.result(op.getOutput()),
                  binding::toVector(op.getPermutation()));
  });
  bind<ConcatOp>([](ConcatOp op, Call &c) {
    return c.call(REMAT_KERNEL(concat), c.operands(op.getInputs()),
                  c.result(op.getOutput()), binding::i64(op.getAxis()));
  });
  bind<SplitOp>([](SplitOp op, Call &c) {
    return c.call(REMAT_KERNEL(split), c.operand(op.getInput()),
                  c.results(op.getOutputs()), binding::i64(op.getAxis()));
  });
  bind<SliceOp>([](SliceOp op, Call &c) {
    // The limits only determine the result shape, which the type holds.
    return c.call(REMAT_KERNEL(slice), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::toVector(op.getStarts()),
                  binding::toVector(op.getSteps()));
  });
  bind<GatherOp>([](GatherOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(gather), c.operand(op.getInput()),
                  c.operand(op.getIndices()), c.result(op.getOutput()),
                  binding::i64(op.getAxis()));
  });
  bind<GatherElementsOp>([](GatherElementsOp op, Call &c) {
    return c.call(REMAT_KERNEL(gatherElements), c.operand(op.getInput()),
                  c.operand(op.getIndices()), c.result(op.getOutput()),
                  binding::i64(op.getAxis()));
  });
  bind<ExpandOp>([](ExpandOp op, Call &c) {
    return c.call(REMAT_KERNEL(expand), c.operand(op.getInput()),
                  c.result(op.getOutput()));
  });
  bind<TileOp>([](TileOp op, Call &c) {
    // y[i] = x[i mod x.shape]: a wrap pad with no begin pads.
    std::vector<int64_t> begins(binding::staticShape(op.getInput()).size(), 0);
    return c.call(REMAT_KERNEL(pad), c.operand(op.getInput()),
                  c.result(op.getOutput()), begins, rt::PadMode::Wrap, 0.0);
  });
  bind<TriluOp>([](TriluOp op, Call &c) {
    return c.call(REMAT_KERNEL(trilu), c.operand(op.getInput()),
                  c.result(op.getOutput()), op.getUpper(),
                  static_cast<int64_t>(op.getK()));
  });
  bind<PadOp>([](PadOp op, Call &c) {
    return c.call(REMAT_KERNEL(pad), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::padBegins(op.getPads()),
                  binding::padMode(op.getMode()),
                  op.getValue().convertToDouble());
  });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindLosses() {
  bind<SoftmaxCrossEntropyLossOp>([](SoftmaxCrossEntropyLossOp op, Call &c) {
    mlir::IntegerAttr ignore = op.getIgnoreIndexAttr();
    return c.call(REMAT_KERNEL(softmaxCrossEntropyLoss), c.operand(op.getScores()),
                  c.operand(op.getLabels()), c.operand(op.getWeights()),
                  c.result(op.getLoss()), c.optionalResult(op.getLogProb()),
                  binding::lossReduction(op.getReduction()),
                  ignore ? ignore.getInt() : int64_t{0},
                  static_cast<bool>(ignore));
  });
  bind<NllLossOp>([](NllLossOp op, Call &c) {
    mlir::IntegerAttr ignore = op.getIgnoreIndexAttr();
    return c.call(REMAT_KERNEL(nllLoss), c.operand(op.getInput()),
                  c.operand(op.getTarget()), c.operand(op.getWeights()),
                  c.result(op.getLoss()),
                  binding::lossReduction(op.getReduction()),
                  ignore ? ignore.getInt() : int64_t{0},
                  static_cast<bool>(ignore));
  });
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindBackward() {
  // relu' of the output is relu' of the input (same mask): the Relu case
  // of activationBackward, given the forward's output.
  bind<ReluBackwardOp>([](ReluBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(activationBackward), rt::UnaryOp::Relu,
                  c.operand(op.getOutput()), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()), rt::UnaryParams{});
  });
  bind<GeluBackwardOp>([](GeluBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(geluBackward), c.operand(op.getInput()),
                  c.operand(op.getOutputGrad()), c.result(op.getInputGrad()),
                  op.getApproximate() == "tanh");
  });
  bind<ActivationBackwardOp>([](ActivationBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(activationBackward),
                  binding::activationOp(op.getActivation()),
                  c.operand(op.getInput()), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()), binding::activationParams(op));
  });
  bind<SoftmaxBackwardOp>([](SoftmaxBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(softmaxBackward), c.operand(op.getOutput()),
                  c.operand(op.getOutputGrad()), c.result(op.getInputGrad()),
                  binding::i64(op.getAxis()));
  });
  bind<LogSoftmaxBackwardOp>([](LogSoftmaxBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(logSoftmaxBackward), c.operand(op.getOutput()),
                  c.operand(op.getOutputGrad()), c.result(op.getInputGrad()),
                  binding::i64(op.getAxis()));
  });
  bind<LayerNormBackwardOp>([](LayerNormBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(layerNormBackward), c.operand(op.getInput()),
                  c.operand(op.getScale()), c.operand(op.getMean()),
                  c.operand(op.getInvStdDev()), c.operand(op.getOutputGrad()),
                  c.optionalResult(op.getInputGrad()),
                  c.optionalResult(op.getScaleGrad()),
                  c.optionalResult(op.getBiasGrad()),
                  binding::i64(op.getAxis()));
  });
  bind<AttentionBackwardOp>([](AttentionBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(attentionBackward),
                  c.operand(op.getQuery()), c.operand(op.getKey()),
                  c.operand(op.getValue()), c.operand(op.getMask()),
                  c.operand(op.getOutput()), c.operand(op.getLogsumexp()),
                  c.operand(op.getOutputGrad()),
                  c.optionalResult(op.getQueryGrad()),
                  c.optionalResult(op.getKeyGrad()),
                  c.optionalResult(op.getValueGrad()),
                  op.getScale().convertToDouble(), op.getCausal(),
                  op.getDropoutRatio().convertToDouble(),
                  static_cast<uint64_t>(op.getSeed()),
                  static_cast<uint64_t>(op.getStream()), c.dropoutStep());
  });
  bind<BatchNormTrainingBackwardOp>(
      [](BatchNormTrainingBackwardOp op, Call &c) {
        return c.call(REMAT_KERNEL_WITH_SCRATCH(batchNormTrainingBackward),
                      c.operand(op.getInput()), c.operand(op.getScale()),
                      c.operand(op.getSavedMean()),
                      c.operand(op.getSavedInvStd()),
                      c.operand(op.getOutputGrad()),
                      c.optionalResult(op.getInputGrad()),
                      c.optionalResult(op.getScaleGrad()),
                      c.optionalResult(op.getBiasGrad()));
      });
  bind<ConvBackwardDataOp>([](ConvBackwardDataOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(convBackwardData), c.operand(op.getOutputGrad()),
                  c.operand(op.getWeight()), c.result(op.getInputGrad()),
                  binding::convWindow(op.getWeight(), op.getStrides(),
                                      op.getPads(), op.getDilations()),
                  binding::i64(op.getGroup()));
  });
  bind<ConvBackwardFilterOp>([](ConvBackwardFilterOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(convBackwardFilter), c.operand(op.getInput()),
                  c.operand(op.getOutputGrad()), c.result(op.getWeightGrad()),
                  binding::convWindow(op.getWeightGrad(), op.getStrides(),
                                      op.getPads(), op.getDilations()),
                  binding::i64(op.getGroup()));
  });
  bind<MaxPoolBackwardOp>([](MaxPoolBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(maxPoolBackward), c.operand(op.getOutputGrad()),
                  c.operand(op.getIndices()), c.result(op.getInputGrad()),
                  binding::window(op.getKernelShape(), op.getStrides(),
                                  op.getPads(), op.getDilations()));
  });
  bind<AveragePoolBackwardOp>([](AveragePoolBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(averagePoolBackward), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()),
                  binding::window(op.getKernelShape(), op.getStrides(),
                                  op.getPads(), op.getDilations()),
                  op.getCountIncludePad());
  });
  bind<GatherBackwardOp>([](GatherBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(gatherBackward), c.operand(op.getOutputGrad()),
                  c.operand(op.getIndices()), c.result(op.getInputGrad()),
                  binding::i64(op.getAxis()));
  });
  bind<GatherElementsBackwardOp>([](GatherElementsBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(gatherElementsBackward),
                  c.operand(op.getOutputGrad()), c.operand(op.getIndices()),
                  c.result(op.getInputGrad()), binding::i64(op.getAxis()));
  });
  bind<PadBackwardOp>([](PadBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(padBackward), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()),
                  binding::padBegins(op.getPads()),
                  binding::padMode(op.getMode()));
  });
  bind<SliceBackwardOp>([](SliceBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(sliceBackward), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()),
                  binding::toVector(op.getStarts()),
                  binding::toVector(op.getSteps()));
  });
  bind<SoftmaxCrossEntropyLossBackwardOp>(
      [](SoftmaxCrossEntropyLossBackwardOp op, Call &c) {
        mlir::IntegerAttr ignore = op.getIgnoreIndexAttr();
        return c.call(REMAT_KERNEL_WITH_SCRATCH(softmaxCrossEntropyLossBackward),
                      c.operand(op.getLossGrad()), c.operand(op.getLogProb()),
                      c.operand(op.getLabels()), c.operand(op.getWeights()),
                      c.result(op.getScoresGrad()),
                      binding::lossReduction(op.getReduction()),
                      ignore ? ignore.getInt() : int64_t{0},
                      static_cast<bool>(ignore));
      });
  bind<NllLossBackwardOp>([](NllLossBackwardOp op, Call &c) {
    mlir::IntegerAttr ignore = op.getIgnoreIndexAttr();
    return c.call(REMAT_KERNEL_WITH_SCRATCH(nllLossBackward), c.operand(op.getLossGrad()),
                  c.operand(op.getTarget()), c.operand(op.getWeights()),
                  c.result(op.getInputGrad()),
                  binding::lossReduction(op.getReduction()),
                  ignore ? ignore.getInt() : int64_t{0},
                  static_cast<bool>(ignore));
  });
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindOptimizers() {
  bind<SgdOp>([](SgdOp op, Call &c) {
    rt::SgdOptions options;
    options.lr = op.getLr().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    // Without momentum the step number does not matter.
    return c.call(REMAT_KERNEL(sgdUpdate), c.operand(op.getParam()),
                  c.operand(op.getGrad()), c.none(),
                  c.result(op.getNewParam()), c.none(), int64_t{1}, options,
                  c.operand(op.getLossScale()), c.operand(op.getFoundInf()));
  });
  bind<SgdMomentumOp>([](SgdMomentumOp op, Call &c) {
    rt::SgdOptions options;
    options.lr = op.getLr().convertToDouble();
    options.momentum = op.getMomentum().convertToDouble();
    options.dampening = op.getDampening().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    options.nesterov = op.getNesterov();
    return c.call(REMAT_KERNEL(sgdUpdate), c.operand(op.getParam()),
                  c.operand(op.getGrad()), c.operand(op.getMomentumBuffer()),
                  c.result(op.getNewParam()),
                  c.result(op.getNewMomentumBuffer()),
                  c.stepNumber(op.getStep()), options,
                  c.operand(op.getLossScale()), c.operand(op.getFoundInf()));
  });
  bind<AdamOp>([](AdamOp op, Call &c) {
    rt::AdamOptions options;
    options.lr = op.getLr().convertToDouble();
    options.beta1 = op.getBeta1().convertToDouble();
    options.beta2 = op.getBeta2().convertToDouble();
    options.eps = op.getEps().convertToDouble();
    options.weightDecay = op.getWeightDecay().convertToDouble();
    options.decoupledWeightDecay = op.getDecoupled();
    return c.call(REMAT_KERNEL(adamUpdate), c.operand(op.getParam()),
                  c.operand(op.getGrad()), c.operand(op.getExpAvg()),
                  c.operand(op.getExpAvgSq()), c.result(op.getNewParam()),
                  c.result(op.getNewExpAvg()), c.result(op.getNewExpAvgSq()),
                  c.stepNumber(op.getStep()), options,
                  c.operand(op.getLossScale()), c.operand(op.getFoundInf()));
  });
  bind<AnyNonFiniteOp>([](AnyNonFiniteOp op, Call &c) {
    return c.call(REMAT_KERNEL(anyNonFinite), c.operand(op.getInput()),
                  c.operand(op.getFound()), c.result(op.getResult()));
  });
  bind<LossScaleUpdateOp>([](LossScaleUpdateOp op, Call &c) {
    return c.call(REMAT_KERNEL(lossScaleUpdate), c.operand(op.getScale()),
                  c.operand(op.getGrowthTracker()), c.operand(op.getFoundInf()),
                  c.result(op.getNewScale()), c.result(op.getNewGrowthTracker()),
                  op.getGrowthFactor().convertToDouble(),
                  op.getBackoffFactor().convertToDouble(),
                  static_cast<int64_t>(op.getGrowthInterval()));
  });
}

//===----------------------------------------------------------------------===//
// N-dimensional indexing and resampling
//===----------------------------------------------------------------------===//

template <typename Call> void KernelBindings<Call>::bindIndexing() {
  bind<GatherNDOp>([](GatherNDOp op, Call &c) {
    return c.call(REMAT_KERNEL(gatherND), c.operand(op.getInput()),
                  c.operand(op.getIndices()), c.result(op.getOutput()),
                  static_cast<int64_t>(op.getBatchDims()));
  });
  bind<GatherNDBackwardOp>([](GatherNDBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL_WITH_SCRATCH(gatherNDBackward),
                  c.operand(op.getOutputGrad()), c.operand(op.getIndices()),
                  c.result(op.getInputGrad()),
                  static_cast<int64_t>(op.getBatchDims()));
  });
  bind<ScatterNDOp>([](ScatterNDOp op, Call &c) {
    return c.call(REMAT_KERNEL(scatterND), c.operand(op.getInput()),
                  c.operand(op.getIndices()), c.operand(op.getUpdates()),
                  c.result(op.getOutput()),
                  binding::scatterReduction(op.getReduction()));
  });
  bind<ResizeOp>([](ResizeOp op, Call &c) {
    return c.call(REMAT_KERNEL(resize), c.operand(op.getInput()),
                  c.result(op.getOutput()), binding::resizeParams(op));
  });
  bind<ResizeBackwardOp>([](ResizeBackwardOp op, Call &c) {
    return c.call(REMAT_KERNEL(resizeBackward), c.operand(op.getOutputGrad()),
                  c.result(op.getInputGrad()), binding::resizeParams(op));
  });
}

} // namespace remat

#undef REMAT_KERNEL
#undef REMAT_KERNEL_WITH_SCRATCH

#endif // REMAT_TARGET_KERNELBINDINGS_H
