//===- TrainingOpImporters.cpp - ai.onnx.preview.training ops -------------===//
//
// Gradient, Adagrad, Momentum and Adam (domain ai.onnx.preview.training,
// opset 1). Gradient runs the reverse sweep (remat::buildGradients) over the
// ops imported so far; the optimizers become compositions of elementwise
// remat ops following the ONNX pseudo code, with the learning rate R and the
// step count T as runtime values.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Autodiff/ReverseMode.h"
#include "remat/Dialect/DifferentiableOpInterface.h"
#include "remat/Dialect/RematOps.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace remat::onnximport {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

bool isFloatTensor(Value v) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  return type && llvm::isa<FloatType>(type.getElementType());
}

/// Reads a STRING or STRINGS attribute.
std::optional<std::vector<std::string>> attrStrings(NodeImporter &n,
                                                    StringRef name,
                                                    bool required) {
  const onnx::AttributeProto *a = n.attr(name);
  if (!a) {
    if (required) {
      (void)n.fail("missing attribute '" + name + "'");
      return std::nullopt;
    }
    return std::vector<std::string>{};
  }
  if (a->type() != onnx::AttributeProto::STRINGS) {
    (void)n.fail("attribute '" + name + "' must be a list of strings");
    return std::nullopt;
  }
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

//===----------------------------------------------------------------------===//
// Gradient
//===----------------------------------------------------------------------===//

/// "'remat.foo' at node 'n' (Foo)" for an op, from its location.
std::string describe(Operation *op) {
  std::string where;
  llvm::raw_string_ostream os(where);
  os << "'" << op->getName() << "'";
  if (auto name = llvm::dyn_cast<NameLoc>(op->getLoc()))
    os << " (from ONNX node '" << name.getName().getValue() << "')";
  return where;
}

LogicalResult importGradient(NodeImporter &n) {
  ImportContext &ic = n.ic;
  auto xs = attrStrings(n, "xs", /*required=*/true);
  if (!xs)
    return failure();
  auto zs = attrStrings(n, "zs", /*required=*/false);
  if (!zs)
    return failure();
  auto yName = n.attrString("y", "");
  if (!yName)
    return failure();
  if (!n.hasAttr("y") || yName->empty())
    return n.fail("missing attribute 'y'");
  if (xs->empty())
    return n.fail("attribute 'xs' is empty");
  if (n.numOutputs() > (int)xs->size())
    return n.fail("has " + Twine(n.numOutputs()) + " outputs for " +
                  Twine(xs->size()) + " tensors in 'xs'");
  // The inputs give the point at which the gradient is evaluated. The
  // importer supports the usual case, where they are the very tensors
  // named in xs and zs (evaluation at other values would need a copy of the
  // differentiated subgraph).
  size_t expected = xs->size() + zs->size();
  if ((size_t)n.numInputs() != expected)
    return n.fail("has " + Twine(n.numInputs()) + " inputs; expected one per "
                  "tensor in 'xs' and 'zs' (" + Twine(expected) + ")");
  for (size_t i = 0; i < expected; ++i) {
    const std::string &named = i < xs->size() ? (*xs)[i] : (*zs)[i - xs->size()];
    if (n.inName(i) != named)
      return n.fail("input #" + Twine(i) + " ('" + n.inName(i) +
                    "') differs from '" + named + "' named in " +
                    (i < xs->size() ? "'xs'" : "'zs'") +
                    "; evaluating the gradient at other values is not "
                    "supported");
  }

  // The differentiated tensors. A compile-time constant may have been folded
  // into its consumers, which would hide its uses from the reverse sweep.
  SmallVector<Value> sources;
  for (const std::string &x : *xs) {
    ValueEntry *entry = ic.lookup(x);
    if (!entry)
      return n.fail("'" + x + "' named in 'xs' is not defined before this node");
    if (entry->constant && entry->foldable)
      return n.fail("cannot differentiate with respect to '" + x +
                    "': it is a compile-time constant (its uses may have been "
                    "folded)");
    Value v = ic.value(x, n.loc);
    if (!v)
      return n.fail("'" + x + "' named in 'xs' is not defined");
    if (!isFloatTensor(v))
      return n.fail("cannot differentiate with respect to '" + x +
                    "': it is not a floating-point tensor");
    sources.push_back(v);
  }
  if (!ic.lookup(*yName))
    return n.fail("'" + *yName + "' named in 'y' is not defined before this node");
  Value y = ic.value(*yName, n.loc);
  if (!y)
    return n.fail("'" + *yName + "' named in 'y' is not defined");
  if (!isFloatTensor(y))
    return n.fail("'" + *yName + "' named in 'y' is not a floating-point tensor");

  // The ops imported so far, in program order.
  Block *block = n.b.getInsertionBlock();
  SmallVector<Operation *> ops;
  for (Operation &op : llvm::make_range(block->begin(), n.b.getInsertionPoint()))
    ops.push_back(&op);

  llvm::DenseSet<Value> active = activeValues(ops, sources);

  // activeValues stops at ops without a gradient rule, which would make the
  // gradient silently zero: report such an op if it lies between an x and y
  // (a float result that depends on an x and reaches y).
  {
    llvm::DenseSet<Value> depends(sources.begin(), sources.end());
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return depends.contains(v); }))
        for (Value r : op->getResults())
          if (isFloatTensor(r))
            depends.insert(r);
    llvm::DenseSet<Value> reaches;
    reaches.insert(y);
    for (Operation *op : llvm::reverse(ops)) {
      bool onPath = llvm::any_of(op->getResults(), [&](Value r) {
        return reaches.contains(r) && depends.contains(r);
      });
      if (!onPath)
        continue;
      if (!isa<DifferentiableOpInterface>(op))
        return n.fail("cannot differentiate '" + *yName + "': " + describe(op) +
                      " on its path from 'xs' has no gradient rule");
      for (Value v : op->getOperands())
        reaches.insert(v);
    }
  }

  auto yType = typeOf(y);
  Value seed = ic.splat(yType.getElementType(), yType.getShape(), 1.0, n.loc);
  llvm::DenseMap<Value, Value> gradients;
  std::string diagnostics;
  LogicalResult built = success();
  {
    ScopedDiagnosticHandler handler(&ic.ctx, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        diagnostics += "; ";
      diagnostics += diag.str();
      return success();
    });
    built = buildGradients(n.b, ops, active, {{y, seed}}, gradients);
  }
  if (failed(built))
    return n.fail("cannot differentiate '" + *yName + "': " +
                  (diagnostics.empty() ? std::string("reverse sweep failed")
                                       : diagnostics));

  for (int i = 0; i < n.numOutputs(); ++i) {
    if (!n.hasOut(i))
      continue;
    Value x = sources[i];
    Value g = gradients.lookup(x);
    if (!g) {
      // x does not reach y.
      auto xType = typeOf(x);
      g = ic.splat(xType.getElementType(), xType.getShape(), 0.0, n.loc);
    }
    if (g.getType() != x.getType())
      return n.fail("internal error: the gradient of '" + (*xs)[i] +
                    "' has the wrong type");
    if (failed(n.out(i, g)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Builds elementwise ops for one optimizer node, reporting creation
/// failures once.
class Builder {
public:
  Builder(NodeImporter &n) : n(n) {}

  Value constant(Type element, double value) {
    return n.ic.splat(element, {}, value, n.loc);
  }
  template <typename OpTy> Value bin(Value a, Value b) {
    if (!a || !b)
      return {};
    Operation *op = n.ic.create<OpTy>(n.loc, a, b);
    if (!op) {
      (void)n.failCreate(OpTy::getOperationName());
      return {};
    }
    return op->getResult(0);
  }
  Value add(Value a, Value b) { return bin<AddOp>(a, b); }
  Value sub(Value a, Value b) { return bin<SubOp>(a, b); }
  Value mul(Value a, Value b) { return bin<MulOp>(a, b); }
  Value div(Value a, Value b) { return bin<DivOp>(a, b); }
  Value pow(Value a, Value b) { return bin<PowOp>(a, b); }
  Value greater(Value a, Value b) { return bin<GreaterOp>(a, b); }
  Value sqrt(Value a) {
    if (!a)
      return {};
    Operation *op = n.ic.create<SqrtOp>(n.loc, a);
    if (!op) {
      (void)n.failCreate("remat.sqrt");
      return {};
    }
    return op->getResult(0);
  }
  Value where(Value c, Value a, Value b) {
    if (!c || !a || !b)
      return {};
    Operation *op = n.ic.create<WhereOp>(n.loc, c, a, b);
    if (!op) {
      (void)n.failCreate("remat.where");
      return {};
    }
    return op->getResult(0);
  }
  Value cast(Value a, Type element) {
    if (!a)
      return {};
    auto type = typeOf(a);
    if (type.getElementType() == element)
      return a;
    Operation *op = n.ic.createTyped<CastOp>(n.loc, type.clone(element), a);
    if (!op) {
      (void)n.failCreate("remat.cast");
      return {};
    }
    return op->getResult(0);
  }
  /// c * x with a compile-time c.
  Value scale(double c, Value x) {
    if (!x)
      return {};
    return mul(constant(typeOf(x).getElementType(), c), x);
  }

private:
  NodeImporter &n;
};

/// The inputs shared by the optimizers: R (float scalar) and T (int64
/// scalar), and the per-tensor groups.
struct OptimizerInputs {
  Value r, t;
  int64_t groups = 0;
};

std::optional<OptimizerInputs> readOptimizerInputs(NodeImporter &n,
                                                   int perGroup,
                                                   int outputsPerGroup) {
  OptimizerInputs in;
  if (n.numInputs() < 2 + perGroup ||
      (n.numInputs() - 2) % perGroup != 0) {
    (void)n.fail("expects R, T and " + Twine(perGroup) +
                 " inputs per optimized tensor, got " + Twine(n.numInputs()) +
                 " inputs");
    return std::nullopt;
  }
  in.groups = (n.numInputs() - 2) / perGroup;
  if (n.numOutputs() > in.groups * outputsPerGroup) {
    (void)n.fail("has " + Twine(n.numOutputs()) + " outputs for " +
                 Twine(in.groups) + " optimized tensors (at most " +
                 Twine(in.groups * outputsPerGroup) + ")");
    return std::nullopt;
  }
  in.r = n.in(0, "R");
  in.t = in.r ? n.in(1, "T") : Value();
  if (!in.t)
    return std::nullopt;
  auto rType = typeOf(in.r), tType = typeOf(in.t);
  if (!llvm::isa<FloatType>(rType.getElementType()) ||
      rType.getNumElements() != 1) {
    (void)n.fail("input 'R' must be a float scalar");
    return std::nullopt;
  }
  if (!tType.getElementType().isInteger(64) || tType.getNumElements() != 1) {
    (void)n.fail("input 'T' must be an int64 scalar");
    return std::nullopt;
  }
  // Scalars of shape [1] (or [1, 1]) become 0-d so that they broadcast to
  // every tensor.
  auto toScalar = [&](Value v) -> Value {
    auto type = typeOf(v);
    if (type.getRank() == 0)
      return v;
    Operation *op = n.ic.createTyped<ReshapeOp>(
        n.loc, RankedTensorType::get({}, type.getElementType()), v);
    if (!op)
      (void)n.failCreate("remat.reshape");
    return op ? op->getResult(0) : Value();
  };
  in.r = toScalar(in.r);
  in.t = in.r ? toScalar(in.t) : Value();
  if (!in.t)
    return std::nullopt;
  return in;
}

/// Group k's tensors: input 2 + which * groups + k must be a float tensor of
/// the same type as X.
std::optional<SmallVector<Value>> readGroup(NodeImporter &n,
                                            const OptimizerInputs &in,
                                            ArrayRef<StringRef> names,
                                            int64_t k) {
  SmallVector<Value> values;
  for (size_t which = 0; which < names.size(); ++which) {
    int index = 2 + which * in.groups + k;
    std::string what = names[which].str();
    if (in.groups > 1)
      what += std::to_string(k + 1);
    Value v = n.in(index, what);
    if (!v)
      return std::nullopt;
    if (!isFloatTensor(v)) {
      (void)n.fail("input '" + what + "' must be a float tensor");
      return std::nullopt;
    }
    if (which > 0 && v.getType() != values[0].getType()) {
      std::string want, got;
      llvm::raw_string_ostream(want) << values[0].getType();
      llvm::raw_string_ostream(got) << v.getType();
      (void)n.fail("input '" + what + "' has type " + got + ", expected " +
                   want + " (that of " + names[0] + ")");
      return std::nullopt;
    }
    values.push_back(v);
  }
  return values;
}

std::optional<double> requiredFloat(NodeImporter &n, StringRef name) {
  if (!n.hasAttr(name)) {
    (void)n.fail("missing attribute '" + name + "'");
    return std::nullopt;
  }
  return n.attrFloat(name, 0.0);
}

/// G_regularized = norm_coefficient * X + G. A zero coefficient contributes
/// nothing (for finite X), and is left out.
Value regularized(Builder &b, double normCoefficient, Value x, Value g) {
  if (normCoefficient == 0.0)
    return g;
  return b.add(b.scale(normCoefficient, x), g);
}

LogicalResult importAdagrad(NodeImporter &n) {
  auto nc = n.attrFloat("norm_coefficient", 0.0);
  auto decay = n.attrFloat("decay_factor", 0.0);
  auto eps = n.attrFloat("epsilon", 1e-6);
  if (!nc || !decay || !eps)
    return failure();
  auto in = readOptimizerInputs(n, 3, 2);
  if (!in)
    return failure();
  Builder b(n);
  for (int64_t k = 0; k < in->groups; ++k) {
    auto group = readGroup(n, *in, {"X", "G", "H"}, k);
    if (!group)
      return failure();
    Value x = (*group)[0], g = (*group)[1], h = (*group)[2];
    Type et = typeOf(x).getElementType();
    // r = R / (1 + T * decay_factor)
    Value r = b.cast(in->r, et);
    if (*decay != 0.0)
      r = b.div(r, b.add(b.constant(et, 1.0),
                         b.scale(*decay, b.cast(in->t, et))));
    Value gr = regularized(b, *nc, x, g);
    // H_new = H + G_r * G_r; X_new = X - r * G_r / (sqrt(H_new) + epsilon)
    Value hNew = b.add(h, b.mul(gr, gr));
    Value adaptive = b.add(b.sqrt(hNew), b.constant(et, *eps));
    Value xNew = b.sub(x, b.div(b.mul(r, gr), adaptive));
    if (!xNew)
      return failure();
    if (failed(n.out(k, xNew)) || failed(n.out(in->groups + k, hNew)))
      return failure();
  }
  return success();
}

LogicalResult importMomentum(NodeImporter &n) {
  auto nc = requiredFloat(n, "norm_coefficient");
  auto alpha = nc ? requiredFloat(n, "alpha") : std::nullopt;
  auto beta = alpha ? requiredFloat(n, "beta") : std::nullopt;
  if (!beta)
    return failure();
  if (!n.hasAttr("mode"))
    return n.fail("missing attribute 'mode'");
  auto mode = n.attrString("mode", "standard");
  if (!mode)
    return failure();
  if (*mode != "standard" && *mode != "nesterov")
    return n.fail("unknown mode '" + *mode +
                  "' (expected 'standard' or 'nesterov')");
  bool nesterov = *mode == "nesterov";
  auto in = readOptimizerInputs(n, 3, 2);
  if (!in)
    return failure();
  Builder b(n);
  for (int64_t k = 0; k < in->groups; ++k) {
    auto group = readGroup(n, *in, {"X", "G", "V"}, k);
    if (!group)
      return failure();
    Value x = (*group)[0], g = (*group)[1], v = (*group)[2];
    Type et = typeOf(x).getElementType();
    Value r = b.cast(in->r, et);
    Value gr = regularized(b, *nc, x, g);
    // beta_adjusted = T > 0 ? beta : 1 (the first step takes the whole
    // gradient).
    Value betaAdjusted =
        *beta == 1.0
            ? b.constant(et, 1.0)
            : b.where(b.greater(in->t, b.constant(typeOf(in->t).getElementType(), 0)),
                      b.constant(et, *beta), b.constant(et, 1.0));
    // V_new = alpha * V + beta_adjusted * G_r
    Value vNew = b.add(b.scale(*alpha, v), b.mul(betaAdjusted, gr));
    // standard: X_new = X - R * V_new
    // nesterov: X_new = X - R * (G_r + alpha * V_new)
    Value direction = nesterov ? b.add(gr, b.scale(*alpha, vNew)) : vNew;
    Value xNew = b.sub(x, b.mul(r, direction));
    if (!xNew)
      return failure();
    if (failed(n.out(k, xNew)) || failed(n.out(in->groups + k, vNew)))
      return failure();
  }
  return success();
}

LogicalResult importAdam(NodeImporter &n) {
  auto nc = n.attrFloat("norm_coefficient", 0.0);
  auto ncPost = n.attrFloat("norm_coefficient_post", 0.0);
  auto alpha = n.attrFloat("alpha", 0.9);
  auto beta = n.attrFloat("beta", 0.999);
  auto eps = n.attrFloat("epsilon", 1e-6);
  if (!nc || !ncPost || !alpha || !beta || !eps)
    return failure();
  auto in = readOptimizerInputs(n, 4, 3);
  if (!in)
    return failure();
  Builder b(n);
  // R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R, once per
  // element type.
  llvm::DenseMap<Type, Value> rAdjusted;
  auto adjustedRate = [&](Type et) -> Value {
    Value &slot = rAdjusted[et];
    if (slot)
      return slot;
    Value r = b.cast(in->r, et);
    Value t = b.cast(in->t, et);
    Value one = b.constant(et, 1.0);
    Value biasV = b.sub(one, b.pow(b.constant(et, *alpha), t));
    Value biasH = b.sub(one, b.pow(b.constant(et, *beta), t));
    Value corrected = b.div(b.mul(r, b.sqrt(biasH)), biasV);
    Value positive =
        b.greater(in->t, b.constant(typeOf(in->t).getElementType(), 0));
    slot = b.where(positive, corrected, r);
    return slot;
  };
  for (int64_t k = 0; k < in->groups; ++k) {
    auto group = readGroup(n, *in, {"X", "G", "V", "H"}, k);
    if (!group)
      return failure();
    Value x = (*group)[0], g = (*group)[1], v = (*group)[2], h = (*group)[3];
    Type et = typeOf(x).getElementType();
    Value gr = regularized(b, *nc, x, g);
    // V_new = alpha * V + (1 - alpha) * G_r
    Value vNew = b.add(b.scale(*alpha, v), b.scale(1.0 - *alpha, gr));
    // H_new = beta * H + (1 - beta) * G_r * G_r
    Value hNew = b.add(b.scale(*beta, h), b.scale(1.0 - *beta, b.mul(gr, gr)));
    // X_new = X - R_adjusted * V_new / (sqrt(H_new) + epsilon)
    Value hSqrt = b.add(b.sqrt(hNew), b.constant(et, *eps));
    Value xNew = b.sub(x, b.mul(adjustedRate(et), b.div(vNew, hSqrt)));
    // X_final = (1 - norm_coefficient_post) * X_new
    if (*ncPost != 0.0)
      xNew = b.scale(1.0 - *ncPost, xNew);
    if (!xNew || !hNew)
      return failure();
    if (failed(n.out(k, xNew)) || failed(n.out(in->groups + k, vNew)) ||
        failed(n.out(2 * in->groups + k, hNew)))
      return failure();
  }
  return success();
}

} // namespace

const llvm::StringMap<OpHandler> &trainingOpHandlers() {
  static const llvm::StringMap<OpHandler> table = {
      {"Gradient", importGradient},
      {"Adagrad", importAdagrad},
      {"Momentum", importMomentum},
      {"Adam", importAdam},
  };
  return table;
}

} // namespace remat::onnximport
