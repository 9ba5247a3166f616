//===- ConstantEval.cpp - Evaluate small constant subgraphs ---------------===//

#include "ConstantEval.h"

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace remat {

static int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double ConstantTensor::at(ArrayRef<int64_t> index) const {
  int64_t flat = 0;
  const size_t offset = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[offset + d]);
  return values[flat];
}

/// `x` rounded to the element type `type` (floats to their precision,
/// integers truncated, booleans to 0/1), as a kernel would store it.
static double roundTo(Type type, double x) {
  if (auto f = llvm::dyn_cast<FloatType>(type)) {
    llvm::APFloat v(x);
    bool lost;
    v.convert(f.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return v.convertToDouble();
  }
  if (type.isInteger(1))
    return x != 0 ? 1 : 0;
  return std::trunc(x);
}

/// Applies `fn` elementwise over the broadcast of `operands` into `type`.
static std::optional<ConstantTensor>
elementwise(RankedTensorType type, ArrayRef<ConstantTensor> operands,
            const std::function<double(ArrayRef<double>)> &fn) {
  ConstantTensor out;
  out.shape.assign(type.getShape().begin(), type.getShape().end());
  const int64_t n = numElements(out.shape);
  out.values.resize(n);
  SmallVector<int64_t> index(out.shape.size(), 0);
  SmallVector<double> args(operands.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    for (size_t i = 0; i < operands.size(); ++i)
      args[i] = operands[i].at(index);
    out.values[flat] = roundTo(type.getElementType(), fn(args));
    for (int64_t d = (int64_t)index.size() - 1; d >= 0; --d) {
      if (++index[d] < out.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

static std::optional<ConstantTensor> fromAttr(ConstantOp op) {
  auto attr = llvm::dyn_cast<DenseElementsAttr>(op.getValue());
  if (!attr)
    return std::nullopt;
  auto type = llvm::cast<RankedTensorType>(attr.getType());
  ConstantTensor out;
  out.shape.assign(type.getShape().begin(), type.getShape().end());
  Type element = type.getElementType();
  if (llvm::isa<FloatType>(element)) {
    for (const APFloat &v : attr.getValues<APFloat>())
      out.values.push_back(v.convertToDouble());
  } else if (element.isInteger(1)) {
    for (bool v : attr.getValues<bool>())
      out.values.push_back(v ? 1 : 0);
  } else if (llvm::isa<IntegerType>(element)) {
    for (const APInt &v : attr.getValues<APInt>())
      out.values.push_back((double)v.getSExtValue());
  } else {
    return std::nullopt;
  }
  return out;
}

/// True if `op` is one of the ops `evaluate` knows.
static bool isEvaluable(Operation *op) {
  return llvm::isa<ConstantOp, AddOp, SubOp, MulOp, DivOp, NegOp, SqrtOp,
                   ReciprocalOp, EqualOp, LessOp, GreaterOp, AndOp, OrOp,
                   NotOp, WhereOp, CastOp, ExpandOp, ReshapeOp>(op);
}

/// True if `value` is computed from constants by evaluable ops alone: one
/// walk over the slice, so that a mask computed from run-time values is
/// rejected without evaluating (or recursing through) any of it.
static bool isConstantSlice(Value value) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val().getDefiningOp();
    if (!op || !isEvaluable(op))
      return false;
    if (seen.insert(op).second)
      work.append(op->operand_begin(), op->operand_end());
  }
  return true;
}

static std::optional<ConstantTensor> evaluate(Value value,
                                              int64_t maxElements) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  Operation *op = value.getDefiningOp();
  if (!type || !type.hasStaticShape() || !op ||
      numElements(type.getShape()) > maxElements)
    return std::nullopt;
  if (auto constant = llvm::dyn_cast<ConstantOp>(op))
    return fromAttr(constant);

  SmallVector<ConstantTensor> operands;
  for (Value operand : op->getOperands()) {
    auto evaluated = evaluate(operand, maxElements);
    if (!evaluated)
      return std::nullopt;
    operands.push_back(std::move(*evaluated));
  }
  using Fn = std::function<double(ArrayRef<double>)>;
  auto apply = [&](Fn fn) { return elementwise(type, operands, fn); };
  return llvm::TypeSwitch<Operation *, std::optional<ConstantTensor>>(op)
      .Case([&](AddOp) { return apply([](auto a) { return a[0] + a[1]; }); })
      .Case([&](SubOp) { return apply([](auto a) { return a[0] - a[1]; }); })
      .Case([&](MulOp) { return apply([](auto a) { return a[0] * a[1]; }); })
      .Case([&](DivOp) { return apply([](auto a) { return a[0] / a[1]; }); })
      .Case([&](NegOp) { return apply([](auto a) { return -a[0]; }); })
      .Case([&](SqrtOp) { return apply([](auto a) { return std::sqrt(a[0]); }); })
      .Case([&](ReciprocalOp) { return apply([](auto a) { return 1 / a[0]; }); })
      .Case([&](EqualOp) { return apply([](auto a) { return double(a[0] == a[1]); }); })
      .Case([&](LessOp) { return apply([](auto a) { return double(a[0] < a[1]); }); })
      .Case([&](GreaterOp) { return apply([](auto a) { return double(a[0] > a[1]); }); })
      .Case([&](AndOp) { return apply([](auto a) { return double(a[0] && a[1]); }); })
      .Case([&](OrOp) { return apply([](auto a) { return double(a[0] || a[1]); }); })
      .Case([&](NotOp) { return apply([](auto a) { return double(!a[0]); }); })
      .Case([&](WhereOp) {
        return apply([](auto a) { return a[0] != 0 ? a[1] : a[2]; });
      })
      .Case([&](CastOp) { return apply([](auto a) { return a[0]; }); })
      .Case([&](ExpandOp) { return apply([](auto a) { return a[0]; }); })
      .Case([&](ReshapeOp) {
        // Same row-major data, new shape.
        ConstantTensor out = std::move(operands[0]);
        out.shape.assign(type.getShape().begin(), type.getShape().end());
        return std::optional<ConstantTensor>(std::move(out));
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<ConstantTensor> evaluateConstant(Value value,
                                               int64_t maxElements) {
  if (!isConstantSlice(value))
    return std::nullopt;
  return evaluate(value, maxElements);
}

} // namespace remat
