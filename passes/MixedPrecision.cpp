//===- MixedPrecision.cpp - Assign bf16/fp16 compute dtypes ---------------===//
//
// An autocast-style policy over @forward, before autodiff: every fp32
// computation gets a compute dtype by the class of its op (the table in
// precisionPolicy() below), casts are inserted where a value meets an op of
// another dtype (one cast per value and dtype, placed before its first such
// use), and the function keeps its fp32 signature (parameters stay fp32
// master weights; outputs are cast back). Autodiff then differentiates the
// casts like any op, so the gradient of a bf16 use of a weight is cast back
// to fp32 before it reaches the optimizer, as PyTorch's autocast does.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace remat {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// How an op's float operands and results get their dtype.
enum class PrecisionClass {
  /// Operands cast to the low dtype (bf16/fp16); results low, except those
  /// the op defines as at least fp32 (attention's logsumexp).
  Low,
  /// Operands cast to fp32; results fp32.
  Fp32,
  /// The data operand keeps its dtype and the result follows it; the other
  /// float operands (scale, bias, running statistics) are fp32, as are the
  /// statistics the op returns.
  DataFollowsStatsFp32,
  /// Everything else: the widest dtype among the float operands (as
  /// PyTorch's type promotion), where 0-d or splat constants do not take
  /// part (they are converted to that dtype, like Python scalars).
  Follow,
};

struct PolicyRow {
  PrecisionClass precision;
  std::vector<llvm::StringRef> ops;
  const char *reason;
};

/// The policy, in the style of PyTorch's autocast op lists. Ops not listed
/// follow their inputs.
const std::vector<PolicyRow> &precisionPolicy() {
  static const std::vector<PolicyRow> table = {
      {PrecisionClass::Low,
       {MatMulOp::getOperationName(), ConvOp::getOperationName(),
        ConvBackwardDataOp::getOperationName(),
        AttentionOp::getOperationName()},
       "GEMM-shaped work: tensor cores run 16-bit inputs with fp32 "
       "accumulation an order of magnitude faster, and the 16-bit results "
       "halve the activations kept for backward"},
      {PrecisionClass::Fp32,
       {SoftmaxOp::getOperationName(), LogSoftmaxOp::getOperationName(),
        LayerNormOp::getOperationName()},
       "normalisations: sums of exponentials and variances lose too much "
       "in 8 mantissa bits, and their inputs are often large"},
      {PrecisionClass::Fp32,
       {ReduceSumOp::getOperationName(), ReduceMeanOp::getOperationName(),
        CumSumOp::getOperationName()},
       "reductions: long sums need fp32 partial sums and an fp32 result"},
      {PrecisionClass::Fp32,
       {ExpOp::getOperationName(), LogOp::getOperationName(),
        PowOp::getOperationName(), ReciprocalOp::getOperationName(),
        SoftplusOp::getOperationName()},
       "functions whose result range or relative error grows past what 16 "
       "bits hold (PyTorch's autocast runs them in fp32 too)"},
      {PrecisionClass::Fp32,
       {SoftmaxCrossEntropyLossOp::getOperationName(),
        NllLossOp::getOperationName()},
       "losses: the loss and its gradient seed the whole backward"},
      {PrecisionClass::DataFollowsStatsFp32,
       {BatchNormTrainingOp::getOperationName(),
        BatchNormInferenceOp::getOperationName()},
       "batch norm: statistics and affine parameters in fp32, the data in "
       "its own dtype (as cuDNN's mixed-precision batch norm)"},
  };
  return table;
}

PrecisionClass classify(Operation *op) {
  StringRef name = op->getName().getStringRef();
  for (const PolicyRow &row : precisionPolicy())
    if (llvm::is_contained(row.ops, name))
      return row.precision;
  return PrecisionClass::Follow;
}

RankedTensorType tensorTypeOf(Value v) {
  return llvm::dyn_cast<RankedTensorType>(v.getType());
}

bool isFloatTensor(Value v) {
  auto type = tensorTypeOf(v);
  return type && llvm::isa<FloatType>(type.getElementType());
}

/// Float width for promotion (f64 > f32 > f16/bf16); bf16 and f16 meeting
/// promote to f32, as in PyTorch.
Type promote(Type a, Type b) {
  if (!a)
    return b;
  if (a == b)
    return a;
  auto width = [](Type t) { return t.getIntOrFloatBitWidth(); };
  if (width(a) == width(b))
    return Float32Type::get(a.getContext());
  return width(a) > width(b) ? a : b;
}

/// A 0-d or splat float constant: converted to whatever its user computes
/// in rather than widening it (PyTorch treats such values like scalars).
bool isScalarLikeConstant(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  auto type = tensorTypeOf(v);
  if (type.getRank() == 0)
    return true;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  return dense && dense.isSplat();
}

/// Follows view ops back to a function argument with role `parameter`.
bool isParameterDerived(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<ReshapeOp, ExpandOp, TransposeOp, CastOp>(def))
      return false;
    v = def->getOperand(0);
  }
  auto arg = llvm::dyn_cast<BlockArgument>(v);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  if (!func)
    return false;
  auto role =
      func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), RematDialect::kRoleAttr);
  return role && role.getValue() == "parameter";
}

bool isLowPrecisionResult(Value v, Type low) {
  Operation *def = v.getDefiningOp();
  return def && classify(def) == PrecisionClass::Low &&
         tensorTypeOf(v).getElementType() == low;
}

struct MixedPrecisionPass
    : remat::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    if (precision == "fp32")
      return;
    Builder b(&getContext());
    if (precision == "bf16")
      low = b.getBF16Type();
    else if (precision == "fp16")
      low = b.getF16Type();
    else {
      func.emitError("remat-mixed-precision: unknown precision '")
          << precision << "' (valid: fp32, bf16, fp16)";
      return signalPassFailure();
    }
    f32 = b.getF32Type();

    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      if (failed(assign(&op)))
        return signalPassFailure();
    // The signature stays: outputs are cast back to their declared types.
    Operation *ret = body.getTerminator();
    for (OpOperand &operand : ret->getOpOperands()) {
      Type declared = func.getResultTypes()[operand.getOperandNumber()];
      if (operand.get().getType() != declared)
        operand.set(castTo(operand.get(),
                           llvm::cast<RankedTensorType>(declared).getElementType(),
                           ret));
    }
    removeCancellingCasts(body);
    // Data movement whose converted copy replaced it, and constants that
    // were converted, are left without users.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
    func->setAttr(RematDialect::kPrecisionAttr, b.getStringAttr(precision));
  }

private:
  /// A cast of `value` to `element`, made once per value and dtype before
  /// the first op that needs it; a constant is converted at compile time.
  Value castTo(Value value, Type element, Operation *user) {
    auto type = tensorTypeOf(value);
    if (type.getElementType() == element)
      return value;
    auto key = std::make_pair(value, element);
    if (Value cached = casts.lookup(key))
      return cached;
    auto target = type.clone(element);
    OpBuilder builder(user);
    // A view or copy of one value (a transposed weight, a reshaped
    // activation) used only here: convert its source and redo the data
    // movement in the new dtype, which gives the same values and moves and
    // keeps half the bytes (one cast of a weight serves all its views).
    Operation *def = value.getDefiningOp();
    if (def && isa<TransposeOp, ReshapeOp, ExpandOp, SliceOp>(def) &&
        value.hasOneUse() && isFloatTensor(def->getOperand(0))) {
      Value source = castTo(def->getOperand(0), element, user);
      Operation *moved = builder.clone(*def);
      moved->setOperand(0, source);
      moved->getResult(0).setType(target);
      casts[key] = moved->getResult(0);
      return moved->getResult(0);
    }
    Value cast;
    DenseFPElementsAttr constant;
    if (matchPattern(value, m_Constant(&constant))) {
      auto converted = constant.mapValues(element, [&](const APFloat &v) {
        APFloat c = v;
        bool lost;
        c.convert(llvm::cast<FloatType>(element).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
        return c.bitcastToAPInt();
      });
      cast = builder.create<ConstantOp>(value.getLoc(), target, converted);
    } else {
      cast = builder.create<CastOp>(value.getLoc(), target, value);
    }
    casts[key] = cast;
    return cast;
  }

  LogicalResult assign(Operation *op) {
    if (isa<CastOp, ConstantOp>(op))
      return success(); // explicit conversions keep their target; constants
                        // are converted where they are used
    // Only fp32 computations are reassigned: f64 and existing 16-bit
    // computations keep the dtype the model chose.
    bool anyF32 = llvm::any_of(op->getOperands(), [&](Value v) {
      return isFloatTensor(v) && tensorTypeOf(v).getElementType() == f32;
    });
    bool onlyFloat32OrLow = llvm::all_of(op->getOperands(), [&](Value v) {
      if (!isFloatTensor(v))
        return true;
      Type t = tensorTypeOf(v).getElementType();
      return t == f32 || t == low;
    });
    bool anyLow = llvm::any_of(op->getOperands(), [&](Value v) {
      return isFloatTensor(v) && tensorTypeOf(v).getElementType() == low;
    });
    if ((!anyF32 && !anyLow) || !onlyFloat32OrLow)
      return success();

    PrecisionClass precision = classify(op);
    Type compute;
    switch (precision) {
    case PrecisionClass::Low: compute = low; break;
    case PrecisionClass::Fp32: compute = f32; break;
    case PrecisionClass::DataFollowsStatsFp32:
      compute = tensorTypeOf(op->getOperand(0)).getElementType();
      break;
    case PrecisionClass::Follow: compute = followDType(op); break;
    }
    if (!compute)
      return success();

    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isFloatTensor(v))
        continue;
      Type want = compute;
      if (precision == PrecisionClass::DataFollowsStatsFp32 &&
          operand.getOperandNumber() != 0)
        want = f32;
      if (tensorTypeOf(v).getElementType() != want)
        operand.set(castTo(v, want, op));
    }
    for (OpResult result : op->getResults()) {
      if (!isFloatTensor(result) || tensorTypeOf(result).getElementType() != f32)
        continue;
      if (keepsFp32Result(op, result, precision))
        continue;
      result.setType(tensorTypeOf(result).clone(compute));
    }
    if (failed(verify(op)))
      return op->emitError("remat-mixed-precision: the op does not accept ")
             << compute << " operands";
    return success();
  }

  /// The dtype a Follow op computes in: the widest float operand, constants
  /// aside; a bias added to a low-precision GEMM joins it (PyTorch's
  /// linear and conv cast their bias with the weight).
  Type followDType(Operation *op) {
    Type widest;
    for (Value v : op->getOperands())
      if (isFloatTensor(v) && !isScalarLikeConstant(v))
        widest = promote(widest, tensorTypeOf(v).getElementType());
    if (!widest || widest == low)
      return widest;
    if (auto add = dyn_cast<AddOp>(op)) {
      Value lhs = add.getLhs(), rhs = add.getRhs();
      if ((isLowPrecisionResult(lhs, low) && isParameterDerived(rhs)) ||
          (isLowPrecisionResult(rhs, low) && isParameterDerived(lhs)))
        return low;
    }
    return widest;
  }

  /// Results an op defines as at least fp32 whatever its inputs.
  static bool keepsFp32Result(Operation *op, OpResult result,
                              PrecisionClass precision) {
    if (precision == PrecisionClass::DataFollowsStatsFp32)
      return result.getResultNumber() != 0;
    if (auto attention = dyn_cast<AttentionOp>(op))
      return result == attention.getLogsumexp();
    return false;
  }

  /// cast(cast(x)) where the inner cast is exact (a widening) reads x
  /// directly: the value is the same, and a cast back to x's own type
  /// disappears.
  void removeCancellingCasts(Block &body) {
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
      auto outer = dyn_cast<CastOp>(&op);
      if (!outer)
        continue;
      auto inner = outer.getInput().getDefiningOp<CastOp>();
      if (!inner || !isExactWidening(inner))
        continue;
      Value source = inner.getInput();
      if (source.getType() == outer.getType())
        outer.getResult().replaceAllUsesWith(source);
      else
        outer.getInputMutable().assign(source);
      if (outer->use_empty())
        outer->erase();
      if (inner->use_empty())
        inner->erase();
    }
  }

  static bool isExactWidening(CastOp cast) {
    auto from = llvm::dyn_cast<FloatType>(tensorTypeOf(cast.getInput()).getElementType());
    auto to = llvm::dyn_cast<FloatType>(tensorTypeOf(cast.getResult()).getElementType());
    if (!from || !to || from.getWidth() >= to.getWidth())
      return false;
    // Every bf16/f16 value is an f32 and f64 value; every f32 an f64 one.
    return true;
  }

  Type low, f32;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

} // namespace
