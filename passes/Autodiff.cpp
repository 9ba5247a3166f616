//===- Autodiff.cpp - Build the training step from @forward ---------------===//
//
// Reverse-mode differentiation: clone @forward into @train_step, append the
// loss if needed, walk the ops backwards asking each for its
// vector-Jacobian product (DifferentiableOpInterface), accumulate gradients
// of values used several times (tied weights), and finish with one fused
// optimizer op per parameter.
//
//===----------------------------------------------------------------------===//

#include "remat/Autodiff/ReverseMode.h"
#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <numeric>

namespace remat {
#define GEN_PASS_DEF_AUTODIFF
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Roles of train-step arguments and results (see RematDialect.td).
constexpr llvm::StringLiteral kRoleInput = "input";
constexpr llvm::StringLiteral kRoleParameter = "parameter";
constexpr llvm::StringLiteral kRoleBuffer = "buffer";
constexpr llvm::StringLiteral kRoleOptimizerState = "optimizer_state";
constexpr llvm::StringLiteral kRoleStep = "step";
constexpr llvm::StringLiteral kRoleLoss = "loss";
constexpr llvm::StringLiteral kRoleGradient = "gradient";
constexpr llvm::StringLiteral kRoleLossScale = "loss_scale";
/// torch.amp.GradScaler's defaults.
constexpr double kGrowthFactor = 2.0;
constexpr double kBackoffFactor = 0.5;

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element =
      llvm::isa<FloatType>(elementType)
          ? Attribute(b.getFloatAttr(elementType, value))
          : Attribute(b.getIntegerAttr(elementType, static_cast<int64_t>(value)));
  return b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, element));
}

/// `grad` as GradScaler.unscale_ leaves it: multiplied by 1/scale in its
/// own dtype. Unchanged without a scale.
Value unscaled(OpBuilder &b, Location loc, Value grad, Value scale) {
  if (!scale)
    return grad;
  Type element = tensorType(grad).getElementType();
  Value inverse = b.create<ReciprocalOp>(loc, scale);
  if (element != tensorType(scale).getElementType())
    inverse = b.create<CastOp>(loc, RankedTensorType::get({}, element), inverse);
  return b.create<MulOp>(loc, grad, inverse);
}

/// One result of the training step, with its name and role.
struct StepResult {
  Value value;
  std::string name;
  StringRef role;
};

struct AutodiffPass : remat::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("remat-autodiff: the module has no @forward function");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("remat-autodiff: @train_step already exists");
      return signalPassFailure();
    }
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
      forward.emitError("remat-autodiff: unknown optimizer '")
          << optimizer << "' (valid: sgd, adam, adamw)";
      return signalPassFailure();
    }
    func::FuncOp step = forward.clone();
    step.setSymName("train_step");
    module.push_back(step);
    if (failed(buildTrainStep(step)))
      return signalPassFailure();
  }

private:
  StringRef roleOf(func::FuncOp func, unsigned index) {
    if (auto role = func.getArgAttrOfType<StringAttr>(index, RematDialect::kRoleAttr))
      return role.getValue();
    return kRoleInput;
  }
  std::string nameOf(func::FuncOp func, unsigned index) {
    if (auto name = func.getArgAttrOfType<StringAttr>(index, RematDialect::kNameAttr))
      return name.str();
    return "arg" + std::to_string(index);
  }
  DictionaryAttr argAttrs(StringRef name, StringRef role) {
    Builder b(&getContext());
    return b.getDictionaryAttr(
        {b.getNamedAttr(RematDialect::kNameAttr, b.getStringAttr(name)),
         b.getNamedAttr(RematDialect::kRoleAttr, b.getStringAttr(role))});
  }
  /// Appends an argument at the end of the function.
  Value appendArgument(func::FuncOp func, Type type, StringRef name,
                       StringRef role) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, argAttrs(name, role), func.getLoc());
    return func.getArgument(index);
  }

  FailureOr<Value> buildLoss(func::FuncOp func, OpBuilder &b);
  LogicalResult differentiate(func::FuncOp func, OpBuilder &b, Value loss,
                              Value seedScale,
                              DenseMap<Value, Value> &gradients);
  LogicalResult buildTrainStep(func::FuncOp func);

  /// The loss scale of the step: none, the scale argument (dynamic) or a
  /// constant. Fails on a malformed --loss-scale.
  struct LossScaling {
    Value scale;                  // 0-d f32, or null without scaling
    Value scaleArg, trackerArg;   // dynamic only
  };
  FailureOr<LossScaling> buildLossScaling(func::FuncOp func, OpBuilder &b);
};

/// Finds the model's scalar loss, or appends one to the logits.
FailureOr<Value> AutodiffPass::buildLoss(func::FuncOp func, OpBuilder &b) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Location loc = func.getLoc();
  if (loss == "auto") {
    for (Value v : ret.getOperands()) {
      auto type = tensorType(v);
      if (type.getRank() == 0 && llvm::isa<FloatType>(type.getElementType()))
        return v;
    }
    func.emitError("remat-autodiff: the model has no scalar output to use as "
                   "the loss; pass --loss cross-entropy|mse (with --labels "
                   "NAME)");
    return failure();
  }
  if (loss != "cross-entropy" && loss != "mse") {
    func.emitError("remat-autodiff: unknown loss '")
        << loss << "' (valid: auto, cross-entropy, mse)";
    return failure();
  }
  // The logits: the named output, or the only one.
  Value logitsValue;
  for (auto [index, v] : llvm::enumerate(ret.getOperands())) {
    auto name = func.getResultAttrOfType<StringAttr>(index, RematDialect::kNameAttr);
    if (!logits.empty() ? (name && name.getValue() == logits)
                        : ret.getNumOperands() == 1)
      logitsValue = v;
  }
  if (!logitsValue) {
    func.emitError("remat-autodiff: ")
        << (logits.empty()
                ? "the model has several outputs; name the logits with --logits"
                : "no output named '" + logits + "'");
    return failure();
  }
  auto logitsType = tensorType(logitsValue);
  Type floatType = logitsType.getElementType();
  if (loss == "mse") {
    Value labelsArg = appendArgument(func, logitsType, labels, kRoleInput);
    Value diff = b.create<SubOp>(loc, logitsValue, labelsArg);
    Value square = b.create<MulOp>(loc, diff, diff);
    SmallVector<int64_t> axes(logitsType.getRank());
    std::iota(axes.begin(), axes.end(), 0);
    return Value(b.create<ReduceMeanOp>(loc, square, b.getDenseI64ArrayAttr(axes),
                                        b.getBoolAttr(false)));
  }
  // Cross-entropy: [N, C] logits take [N] labels; for rank >= 3 the last dim
  // holds the classes ([B, T, V] language-model logits, [B, T] labels).
  if (logitsType.getRank() < 2) {
    func.emitError("remat-autodiff: cross-entropy needs logits of rank >= 2");
    return failure();
  }
  ArrayRef<int64_t> shape = logitsType.getShape();
  SmallVector<int64_t> labelShape(shape.drop_back());
  Value labelsArg = appendArgument(
      func, RankedTensorType::get(labelShape, b.getI64Type()), labels, kRoleInput);
  Value scores = logitsValue, targets = labelsArg;
  if (logitsType.getRank() > 2) {
    int64_t rows = 1;
    for (int64_t d : labelShape)
      rows *= d;
    scores = b.create<ReshapeOp>(
        loc, RankedTensorType::get({rows, shape.back()}, floatType), logitsValue);
    targets = b.create<ReshapeOp>(
        loc, RankedTensorType::get({rows}, b.getI64Type()), labelsArg);
  }
  auto sce = b.create<SoftmaxCrossEntropyLossOp>(
      loc, scores, targets, /*weights=*/Value(), b.getStringAttr("mean"),
      /*ignore_index=*/b.getI64IntegerAttr(-100));
  return sce.getLoss();
}

/// Reverse sweep from `loss` over the body, filling `gradients` for every
/// value that depends on a parameter.
LogicalResult AutodiffPass::differentiate(func::FuncOp func, OpBuilder &b,
                                          Value loss, Value seedScale,
                                          DenseMap<Value, Value> &gradients) {
  SmallVector<Value> parameters;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (roleOf(func, i) == kRoleParameter)
      parameters.push_back(func.getArgument(i));
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  llvm::DenseSet<Value> active = activeValues(ops, parameters);
  if (!active.contains(loss))
    return func.emitError("remat-autodiff: the loss does not depend on any "
                          "trainable parameter");
  // d(loss)/d(loss) = 1, or the loss scale: every gradient is then scaled.
  Type lossElement = tensorType(loss).getElementType();
  Value seed = scalar(b, loss.getLoc(), lossElement, 1.0);
  if (seedScale)
    seed = tensorType(seedScale).getElementType() == lossElement
               ? seedScale
               : Value(b.create<CastOp>(loss.getLoc(),
                                        RankedTensorType::get({}, lossElement),
                                        seedScale));
  return buildGradients(b, ops, active, {{loss, seed}}, gradients);
}

FailureOr<AutodiffPass::LossScaling>
AutodiffPass::buildLossScaling(func::FuncOp func, OpBuilder &b) {
  LossScaling scaling;
  if (lossScale == "none")
    return scaling;
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  if (lossScale == "dynamic") {
    if (growthInterval < 1) {
      func.emitError("remat-autodiff: growth-interval must be at least 1");
      return failure();
    }
    if (!(initLossScale > 0) ||
        !std::isfinite(static_cast<float>(initLossScale))) {
      func.emitError("remat-autodiff: init-loss-scale must be a positive "
                     "number that fits fp32, got ")
          << initLossScale;
      return failure();
    }
    scaling.scaleArg =
        appendArgument(func, f32Scalar, "loss_scale", kRoleLossScale);
    func.setArgAttr(scaling.scaleArg.cast<BlockArgument>().getArgNumber(),
                    RematDialect::kInitialValueAttr,
                    b.getF64FloatAttr(static_cast<float>(initLossScale)));
    scaling.trackerArg =
        appendArgument(func, RankedTensorType::get({}, b.getI32Type()),
                       "loss_scale_growth_tracker", kRoleLossScale);
    scaling.scale = scaling.scaleArg;
    return scaling;
  }
  double fixed = 0;
  if (StringRef(lossScale).getAsDouble(fixed) || !(fixed > 0) ||
      !std::isfinite(static_cast<float>(fixed))) {
    func.emitError("remat-autodiff: loss-scale must be none, dynamic or a "
                   "positive number that fits fp32, got '")
        << lossScale << "'";
    return failure();
  }
  scaling.scale = scalar(b, func.getLoc(), b.getF32Type(), fixed);
  return scaling;
}

LogicalResult AutodiffPass::buildTrainStep(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  Location loc = func.getLoc();

  FailureOr<Value> lossValue = buildLoss(func, b);
  if (failed(lossValue))
    return failure();
  FailureOr<LossScaling> scaling = buildLossScaling(func, b);
  if (failed(scaling))
    return failure();
  DenseMap<Value, Value> gradients;
  if (failed(differentiate(func, b, *lossValue, scaling->scale, gradients)))
    return failure();

  // Parameters and buffers, in argument order (before any state is added).
  SmallVector<unsigned> parameters, buffers;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    StringRef role = roleOf(func, i);
    if (role == kRoleParameter)
      parameters.push_back(i);
    else if (role == kRoleBuffer)
      buffers.push_back(i);
  }

  bool adam = optimizer != "sgd";
  double learningRate = lr >= 0 ? lr : (adam ? 1e-3 : 0.01);
  double decay = weightDecay >= 0 ? weightDecay : (optimizer == "adamw" ? 0.01 : 0.0);
  bool sgdMomentum = !adam && momentum != 0.0;
  if (nesterov && (!sgdMomentum || dampening != 0.0))
    return func.emitError("remat-autodiff: Nesterov momentum requires a "
                          "momentum and zero dampening (as torch.optim.SGD)");

  // Optimizer state arguments, then the step counter.
  struct ParamState {
    Value momentum, expAvg, expAvgSq;
  };
  SmallVector<ParamState> states(parameters.size());
  for (auto [k, index] : llvm::enumerate(parameters)) {
    Type type = func.getArgument(index).getType();
    std::string name = nameOf(func, index);
    if (sgdMomentum)
      states[k].momentum = appendArgument(func, type, name + ".momentum_buffer",
                                          kRoleOptimizerState);
    if (adam) {
      states[k].expAvg = appendArgument(func, type, name + ".exp_avg", kRoleOptimizerState);
      states[k].expAvgSq =
          appendArgument(func, type, name + ".exp_avg_sq", kRoleOptimizerState);
    }
  }
  Value stepArg = appendArgument(func, RankedTensorType::get({}, b.getI64Type()),
                                 "step", kRoleStep);
  // The optimizer sees the 1-based number of the step being taken.
  Value newStep = b.create<AddOp>(loc, stepArg, scalar(b, loc, b.getI64Type(), 1));

  // With loss scaling, one overflow in any gradient skips the whole step
  // (GradScaler's found_inf): every update waits for the check of all of
  // them, and a skipped step does not count.
  Value foundInf;
  Value stepResult = newStep;
  if (scaling->scale) {
    auto flagType = RankedTensorType::get({}, b.getI1Type());
    foundInf = b.create<ConstantOp>(
        loc, flagType, DenseElementsAttr::get(flagType, false));
    for (unsigned index : parameters)
      if (Value grad = gradients.lookup(func.getArgument(index)))
        foundInf = b.create<AnyNonFiniteOp>(grad.getLoc(), grad, foundInf);
    stepResult = b.create<WhereOp>(loc, foundInf, stepArg, newStep);
  }

  SmallVector<StepResult> results;
  results.push_back({*lossValue, "loss", kRoleLoss});
  SmallVector<StepResult> stateResults, gradientResults;
  for (auto [k, index] : llvm::enumerate(parameters)) {
    Value param = func.getArgument(index);
    std::string name = nameOf(func, index);
    Value grad = gradients.lookup(param);
    ParamState &s = states[k];
    Value newParam = param;
    ParamState newState = s;
    if (grad) {
      Location ploc = param.getLoc();
      if (adam) {
        auto update = b.create<AdamOp>(
            ploc, param, grad, s.expAvg, s.expAvgSq, newStep, scaling->scale,
            foundInf, b.getF64FloatAttr(learningRate), b.getF64FloatAttr(beta1),
            b.getF64FloatAttr(beta2), b.getF64FloatAttr(eps),
            b.getF64FloatAttr(decay), b.getBoolAttr(optimizer == "adamw"));
        newParam = update.getNewParam();
        newState.expAvg = update.getNewExpAvg();
        newState.expAvgSq = update.getNewExpAvgSq();
      } else if (sgdMomentum) {
        auto update = b.create<SgdMomentumOp>(
            ploc, param, grad, s.momentum, newStep, scaling->scale, foundInf,
            b.getF64FloatAttr(learningRate),
            b.getF64FloatAttr(momentum), b.getF64FloatAttr(dampening),
            b.getF64FloatAttr(decay), b.getBoolAttr(nesterov));
        newParam = update.getNewParam();
        newState.momentum = update.getNewMomentumBuffer();
      } else {
        newParam = b.create<SgdOp>(ploc, param.getType(), param, grad,
                                   scaling->scale, foundInf,
                                   b.getF64FloatAttr(learningRate),
                                   b.getF64FloatAttr(decay));
      }
      if (returnGradients)
        gradientResults.push_back(
            {unscaled(b, ploc, grad, scaling->scale), name, kRoleGradient});
    }
    results.push_back({newParam, name, kRoleParameter});
    if (s.momentum)
      stateResults.push_back({newState.momentum, name + ".momentum_buffer",
                              kRoleOptimizerState});
    if (s.expAvg) {
      stateResults.push_back({newState.expAvg, name + ".exp_avg", kRoleOptimizerState});
      stateResults.push_back(
          {newState.expAvgSq, name + ".exp_avg_sq", kRoleOptimizerState});
    }
  }

  // Buffers a training-mode BatchNorm updates get their new running stats.
  DenseMap<Value, Value> bufferUpdates;
  func.walk([&](BatchNormTrainingOp bn) {
    bufferUpdates[bn.getRunningMean()] = bn.getNewRunningMean();
    bufferUpdates[bn.getRunningVar()] = bn.getNewRunningVar();
  });
  for (unsigned index : buffers) {
    Value buffer = func.getArgument(index);
    if (Value updated = bufferUpdates.lookup(buffer))
      results.push_back({updated, nameOf(func, index), kRoleBuffer});
  }
  results.append(stateResults.begin(), stateResults.end());
  results.push_back({stepResult, "step", kRoleStep});
  if (scaling->scaleArg) {
    auto update = b.create<LossScaleUpdateOp>(
        loc, scaling->scaleArg, scaling->trackerArg, foundInf,
        b.getF64FloatAttr(kGrowthFactor), b.getF64FloatAttr(kBackoffFactor),
        b.getI64IntegerAttr(growthInterval));
    results.push_back({update.getNewScale(), "loss_scale", kRoleLossScale});
    results.push_back({update.getNewGrowthTracker(),
                       "loss_scale_growth_tracker", kRoleLossScale});
  }
  results.append(gradientResults.begin(), gradientResults.end());

  // Replace the forward's return with the training step's.
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (const StepResult &r : results) {
    values.push_back(r.value);
    types.push_back(r.value.getType());
    attrs.push_back(argAttrs(r.name, r.role));
  }
  b.create<func::ReturnOp>(ret.getLoc(), values);
  ret.erase();
  func.setFunctionType(
      FunctionType::get(&getContext(), func.getArgumentTypes(), types));
  func.setAllResultAttrs(attrs);

  // The optimizer, for reports ("16 bytes per parameter with adam"), and
  // the loss scaling.
  func->setAttr("remat.optimizer", b.getStringAttr(optimizer));
  if (scaling->scale)
    func->setAttr(RematDialect::kLossScaleAttr, b.getStringAttr(lossScale));

  // Forward values that neither the loss nor backward needs are dropped.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

} // namespace
