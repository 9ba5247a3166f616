//===- ElementwiseGradients.cpp - Gradients of elementwise ops ------------===//
//
// Each rule is the textbook derivative, written with forward ops; operands
// that were broadcast get their gradient summed back to their shape.
//
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

#include <cmath>

using namespace mlir;
using namespace remat;

namespace {

/// For single-operand ops: appends `rule(dy)` if the operand needs a
/// gradient.
template <typename Rule>
LogicalResult unaryGradient(ArrayRef<Value> resultGradients,
                            ArrayRef<bool> needsGradient,
                            SmallVectorImpl<Value> &operandGradients,
                            Rule rule) {
  Value dy = resultGradients[0];
  operandGradients.push_back(needsGradient[0] && dy ? rule(dy) : Value());
  return success();
}

/// For two-operand broadcasting ops: appends reduceToShape(rule(dy)) for each
/// operand that needs a gradient.
template <typename LhsRule, typename RhsRule>
LogicalResult binaryGradient(OpBuilder &builder, Operation *op,
                             ArrayRef<Value> resultGradients,
                             ArrayRef<bool> needsGradient,
                             SmallVectorImpl<Value> &operandGradients,
                             LhsRule lhsRule, RhsRule rhsRule) {
  Value dy = resultGradients[0];
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  operandGradients.push_back(
      needsGradient[0] ? reduceToShape(builder, loc, lhsRule(dy), tensorTypeOf(lhs))
                       : Value());
  operandGradients.push_back(
      needsGradient[1] ? reduceToShape(builder, loc, rhsRule(dy), tensorTypeOf(rhs))
                       : Value());
  return success();
}

/// The parameters of an activation's backward: its forward op's attributes
/// of the same names (null where the activation takes none).
struct ActivationParams {
  FloatAttr alpha, beta, gamma, min, max;
};

/// dx = remat.activation_backward(x, dy): one kernel for the whole
/// derivative, from the forward input.
LogicalResult activationGradient(OpBuilder &b, Operation *op,
                                 StringRef activation,
                                 const ActivationParams &params,
                                 ArrayRef<Value> resultGradients,
                                 ArrayRef<bool> needsGradient,
                                 SmallVectorImpl<Value> &operandGradients) {
  return unaryGradient(resultGradients, needsGradient, operandGradients,
                       [&](Value dy) -> Value {
                         return b.create<ActivationBackwardOp>(
                             op->getLoc(), dy.getType(), op->getOperand(0), dy,
                             b.getStringAttr(activation), params.alpha,
                             params.beta, params.gamma, params.min,
                             params.max);
                       });
}

} // namespace

LogicalResult NegOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return unaryGradient(dys, needs, grads,
                       [&](Value dy) { return b.create<NegOp>(getLoc(), dy); });
}

LogicalResult AbsOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  // d|x| = sign(x) (0 at 0, as PyTorch).
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Type et = elementTypeOf(dy);
    Value zero = scalarConstant(b, loc, et, 0.0);
    Value pos = maskToFloat(b, loc, b.create<GreaterOp>(loc, getInput(), zero), et);
    Value neg = maskToFloat(b, loc, b.create<LessOp>(loc, getInput(), zero), et);
    Value sign = b.create<SubOp>(loc, pos, neg);
    return b.create<MulOp>(loc, dy, sign);
  });
}

LogicalResult SqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  // d sqrt(x) = 0.5 / sqrt(x)
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Value half = scalarConstant(b, loc, elementTypeOf(dy), 0.5);
    Value scaled = b.create<MulOp>(loc, dy, half);
    return b.create<DivOp>(loc, scaled, getResult());
  });
}

LogicalResult ExpOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    return b.create<MulOp>(getLoc(), dy, getResult());
  });
}

LogicalResult LogOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    return b.create<DivOp>(getLoc(), dy, getInput());
  });
}

LogicalResult ReciprocalOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needs,
                                          SmallVectorImpl<Value> &grads) {
  // d(1/x) = -1/x^2 = -y^2
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Value ySquared = b.create<MulOp>(loc, getResult(), getResult());
    return b.create<NegOp>(loc, b.create<MulOp>(loc, dy, ySquared));
  });
}

LogicalResult ErfOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  // d erf(x) = 2/sqrt(pi) * exp(-x^2)
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Value x = getInput();
    Value negSquare = b.create<NegOp>(loc, b.create<MulOp>(loc, x, x));
    Value coefficient =
        scalarConstant(b, loc, elementTypeOf(dy), 2.0 / std::sqrt(M_PI));
    Value derivative =
        b.create<MulOp>(loc, b.create<ExpOp>(loc, negSquare), coefficient);
    return b.create<MulOp>(loc, dy, derivative);
  });
}

LogicalResult TanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  // d tanh(x) = 1 - y^2
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Value one = scalarConstant(b, loc, elementTypeOf(dy), 1.0);
    Value ySquared = b.create<MulOp>(loc, getResult(), getResult());
    return b.create<MulOp>(loc, dy, b.create<SubOp>(loc, one, ySquared));
  });
}

LogicalResult SigmoidOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  // d sigmoid(x) = y * (1 - y)
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Value one = scalarConstant(b, loc, elementTypeOf(dy), 1.0);
    Value derivative = b.create<MulOp>(loc, getResult(),
                                       b.create<SubOp>(loc, one, getResult()));
    return b.create<MulOp>(loc, dy, derivative);
  });
}

LogicalResult ReluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  // Gradient 0 at x == 0, as PyTorch. One kernel keyed on the output (no
  // mask tensor), so that the input need not stay alive for backward.
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    return b.create<ReluBackwardOp>(getLoc(), dy.getType(), getResult(), dy);
  });
}

LogicalResult GeluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    return b.create<GeluBackwardOp>(getLoc(), dy.getType(), getInput(), dy,
                                    getApproximateAttr());
  });
}

LogicalResult LeakyReluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  ActivationParams params;
  params.alpha = b.getF64FloatAttr(getAlpha().convertToDouble());
  return activationGradient(b, *this, "leaky_relu", params, dys, needs, grads);
}

LogicalResult EluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  ActivationParams params;
  params.alpha = b.getF64FloatAttr(getAlpha().convertToDouble());
  return activationGradient(b, *this, "elu", params, dys, needs, grads);
}

LogicalResult SeluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  ActivationParams params;
  params.alpha = b.getF64FloatAttr(getAlpha().convertToDouble());
  params.gamma = b.getF64FloatAttr(getGamma().convertToDouble());
  return activationGradient(b, *this, "selu", params, dys, needs, grads);
}

LogicalResult SoftplusOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needs,
                                        SmallVectorImpl<Value> &grads) {
  return activationGradient(b, *this, "softplus", {}, dys, needs, grads);
}

LogicalResult SoftsignOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needs,
                                        SmallVectorImpl<Value> &grads) {
  return activationGradient(b, *this, "softsign", {}, dys, needs, grads);
}

LogicalResult HardSigmoidOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                           ArrayRef<bool> needs,
                                           SmallVectorImpl<Value> &grads) {
  ActivationParams params;
  params.alpha = b.getF64FloatAttr(getAlpha().convertToDouble());
  params.beta = b.getF64FloatAttr(getBeta().convertToDouble());
  return activationGradient(b, *this, "hard_sigmoid", params, dys, needs, grads);
}

LogicalResult ClipOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  // PyTorch's convention (torch.clamp's backward): dy passes where
  // min <= x <= max, bounds included, and is 0 elsewhere.
  ActivationParams params;
  params.min = b.getF64FloatAttr(getMin().convertToDouble());
  params.max = b.getF64FloatAttr(getMax().convertToDouble());
  return activationGradient(b, *this, "clip", params, dys, needs, grads);
}

LogicalResult SinOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return activationGradient(b, *this, "sin", {}, dys, needs, grads);
}

LogicalResult CosOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return activationGradient(b, *this, "cos", {}, dys, needs, grads);
}

LogicalResult PReluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needs,
                                     SmallVectorImpl<Value> &grads) {
  // As PyTorch: dx = x > 0 ? dy : slope * dy; dslope = x > 0 ? 0 : x * dy,
  // summed over the axes the slope was broadcast along.
  Location loc = getLoc();
  Value dy = dys[0];
  Value x = getInput();
  Value zero = scalarConstant(b, loc, elementTypeOf(dy), 0.0);
  Value positive = b.create<GreaterOp>(loc, x, zero);
  grads.push_back(needs[0] && dy
                      ? b.create<WhereOp>(loc, positive, dy,
                                          b.create<MulOp>(loc, dy, getSlope()))
                      : Value());
  grads.push_back(needs[1] && dy
                      ? reduceToShape(b, loc,
                                      b.create<WhereOp>(loc, positive, zero,
                                                        b.create<MulOp>(loc, dy, x)),
                                      tensorTypeOf(getSlope()))
                      : Value());
  return success();
}

LogicalResult AddOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  auto identity = [](Value dy) { return dy; };
  return binaryGradient(b, *this, dys, needs, grads, identity, identity);
}

LogicalResult SubOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return binaryGradient(
      b, *this, dys, needs, grads, [](Value dy) { return dy; },
      [&](Value dy) -> Value { return b.create<NegOp>(getLoc(), dy); });
}

LogicalResult MulOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return binaryGradient(
      b, *this, dys, needs, grads,
      [&](Value dy) -> Value { return b.create<MulOp>(getLoc(), dy, getRhs()); },
      [&](Value dy) -> Value { return b.create<MulOp>(getLoc(), dy, getLhs()); });
}

LogicalResult DivOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -y/b
  return binaryGradient(
      b, *this, dys, needs, grads,
      [&](Value dy) -> Value { return b.create<DivOp>(getLoc(), dy, getRhs()); },
      [&](Value dy) -> Value {
        Location loc = getLoc();
        Value quotient = b.create<DivOp>(loc, getResult(), getRhs());
        return b.create<NegOp>(loc, b.create<MulOp>(loc, dy, quotient));
      });
}

/// Max/Min: the gradient goes to the selected operand; ties split it evenly
/// (as torch.maximum / torch.minimum).
template <typename CompareOp, typename Op>
static LogicalResult selectGradient(Op op, OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Type et = elementTypeOf(op.getResult());
  auto shares = [&](Value first, Value second) -> Value {
    Value wins = maskToFloat(b, loc, b.create<CompareOp>(loc, first, second), et);
    Value ties = maskToFloat(b, loc, b.create<EqualOp>(loc, first, second), et);
    Value half = scalarConstant(b, loc, et, 0.5);
    return b.create<AddOp>(loc, wins, b.create<MulOp>(loc, ties, half));
  };
  return binaryGradient(
      b, op, dys, needs, grads,
      [&](Value dy) -> Value {
        return b.create<MulOp>(loc, dy, shares(op.getLhs(), op.getRhs()));
      },
      [&](Value dy) -> Value {
        return b.create<MulOp>(loc, dy, shares(op.getRhs(), op.getLhs()));
      });
}

LogicalResult MaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return selectGradient<GreaterOp>(*this, b, dys, needs, grads);
}

LogicalResult MinOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  return selectGradient<LessOp>(*this, b, dys, needs, grads);
}

LogicalResult PowOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Type et = elementTypeOf(getResult());
  // d(a^e)/da = e * a^(e-1); d(a^e)/de = y * log(a) (float exponents only).
  Value exponent = getRhs();
  if (elementTypeOf(exponent) != et)
    exponent = b.create<CastOp>(loc, tensorTypeOf(exponent).clone(et), exponent);
  bool rhsIsFloat = llvm::isa<FloatType>(elementTypeOf(getRhs()));
  return binaryGradient(
      b, *this, dys, {needs[0], needs[1] && rhsIsFloat}, grads,
      [&](Value dy) -> Value {
        Value one = scalarConstant(b, loc, et, 1.0);
        Value lowered = b.create<PowOp>(loc, getLhs(),
                                        b.create<SubOp>(loc, exponent, one));
        return b.create<MulOp>(loc, dy, b.create<MulOp>(loc, exponent, lowered));
      },
      [&](Value dy) -> Value {
        Value logBase = b.create<LogOp>(loc, getLhs());
        return b.create<MulOp>(loc, dy, b.create<MulOp>(loc, getResult(), logBase));
      });
}

LogicalResult WhereOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needs,
                                     SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dy = dys[0];
  Value zero = scalarConstant(b, loc, elementTypeOf(dy), 0.0);
  grads.push_back(Value()); // the condition
  grads.push_back(needs[1] ? reduceToShape(b, loc,
                                           b.create<WhereOp>(loc, getCondition(), dy, zero),
                                           tensorTypeOf(getOnTrue()))
                           : Value());
  grads.push_back(needs[2] ? reduceToShape(b, loc,
                                           b.create<WhereOp>(loc, getCondition(), zero, dy),
                                           tensorTypeOf(getOnFalse()))
                           : Value());
  return success();
}

LogicalResult CastOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  // Only float-to-float casts carry a gradient (cast back to the source type).
  bool floatToFloat = llvm::isa<FloatType>(elementTypeOf(getInput())) &&
                      llvm::isa<FloatType>(elementTypeOf(getResult()));
  return unaryGradient(dys, {needs[0] && floatToFloat}, grads,
                       [&](Value dy) -> Value {
                         return b.create<CastOp>(getLoc(), getInput().getType(), dy);
                       });
}

LogicalResult DropoutOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  // dx = dy * mask / (1 - ratio): the same mask the forward drew.
  return unaryGradient(dys, needs, grads, [&](Value dy) -> Value {
    Location loc = getLoc();
    Type et = elementTypeOf(dy);
    double ratio = getRatio().convertToDouble();
    Value kept = b.create<MulOp>(loc, dy, maskToFloat(b, loc, getMask(), et));
    return b.create<MulOp>(loc, kept, scalarConstant(b, loc, et, 1.0 / (1.0 - ratio)));
  });
}
