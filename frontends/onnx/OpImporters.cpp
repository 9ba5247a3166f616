//===- OpImporters.cpp - ONNX op -> remat dialect, one handler per op ------===//
//
// The table at the bottom maps each supported ONNX op type (default domain,
// opsets 7..17, 20 for Gelu, 23 for Attention) to its importer. Handlers read inputs and
// attributes through NodeImporter, which reports every problem with the
// node's name.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Dialect/ShapeInference.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/TensorProtoIO.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <tuple>

using namespace mlir;

namespace remat::onnximport {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

std::string opName(StringRef mnemonic) { return ("remat." + mnemonic).str(); }

/// Result `i` of an op built by ImportContext::create, or a reported error.
LogicalResult emit(NodeImporter &n, Operation *op, StringRef what,
                   std::initializer_list<std::pair<int, int>> outputs = {{0, 0}}) {
  if (!op)
    return n.failCreate(what);
  for (auto [onnxOut, result] : outputs)
    if (failed(n.out(onnxOut, op->getResult(result))))
      return failure();
  return success();
}

} // namespace

Value reshapeTo(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  auto type = typeOf(v);
  if (type.getShape() == shape)
    return v;
  Operation *op = n.ic.createTyped<ReshapeOp>(
      n.loc, RankedTensorType::get(shape, type.getElementType()), v);
  if (!op) {
    (void)n.failCreate("remat.reshape");
    return {};
  }
  return op->getResult(0);
}

namespace {

Value scalar(NodeImporter &n, Type element, double value) {
  return n.ic.splat(element, {}, value, n.loc);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult unary(NodeImporter &n) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  return emit(n, n.ic.create<OpTy>(n.loc, x), OpTy::getOperationName());
}

template <typename OpTy> LogicalResult binary(NodeImporter &n) {
  Value a = n.in(0, "A");
  Value b = a ? n.in(1, "B") : Value();
  if (!a || !b)
    return failure();
  return emit(n, n.ic.create<OpTy>(n.loc, a, b), OpTy::getOperationName());
}

/// Pow: remat.pow takes a float base. An integer base (Pow-12 and later)
/// is raised in f64 and the result cast back to its type, as ONNX's
/// reference does (numpy's power, then astype): exact while the result
/// fits f64's 53-bit mantissa, truncated toward zero for a fractional
/// exponent.
LogicalResult importPow(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value y = x ? n.in(1, "Y") : Value();
  if (!x || !y)
    return failure();
  Type base = typeOf(x).getElementType();
  if (llvm::isa<FloatType>(base))
    return emit(n, n.ic.create<PowOp>(n.loc, x, y), "remat.pow");
  Type f64 = Float64Type::get(&n.ic.ctx);
  Operation *wide =
      n.ic.createTyped<CastOp>(n.loc, typeOf(x).clone(f64), x);
  if (!wide)
    return n.failCreate("remat.cast");
  Operation *pow = n.ic.create<PowOp>(n.loc, wide->getResult(0), y);
  if (!pow)
    return n.failCreate("remat.pow");
  Value result = pow->getResult(0);
  return emit(n,
              n.ic.createTyped<CastOp>(n.loc, typeOf(result).clone(base),
                                       result),
              "remat.cast");
}

/// Max/Min with any number of inputs: a chain.
template <typename OpTy> LogicalResult variadic(NodeImporter &n) {
  if (failed(n.requireInputs(1)))
    return failure();
  Value acc = n.in(0, "data_0");
  if (!acc)
    return failure();
  for (int i = 1; i < n.numInputs(); ++i) {
    Value next = n.in(i, "data_" + std::to_string(i));
    if (!next)
      return failure();
    Operation *op = n.ic.create<OpTy>(n.loc, acc, next);
    if (!op)
      return n.failCreate(OpTy::getOperationName());
    acc = op->getResult(0);
  }
  return n.out(0, acc);
}

/// An activation whose parameters are float attributes: `defaults` are the
/// schema's (float values, as an attribute would hold them); the op is built
/// from X and one F64 attribute per parameter, in order.
template <typename OpTy, size_t N>
LogicalResult activation(
    NodeImporter &n, const std::array<std::pair<StringRef, float>, N> &defaults) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  std::array<FloatAttr, N> params;
  for (size_t i = 0; i < N; ++i) {
    auto value = n.attrFloat(defaults[i].first, defaults[i].second);
    if (!value)
      return failure();
    params[i] = n.b.getF64FloatAttr(*value);
  }
  Operation *op = std::apply(
      [&](auto... attrs) { return n.ic.create<OpTy>(n.loc, x, attrs...); },
      params);
  return emit(n, op, OpTy::getOperationName());
}

LogicalResult importLeakyRelu(NodeImporter &n) {
  return activation<LeakyReluOp, 1>(n, {{{"alpha", 0.01f}}});
}
LogicalResult importElu(NodeImporter &n) {
  return activation<EluOp, 1>(n, {{{"alpha", 1.0f}}});
}
LogicalResult importSelu(NodeImporter &n) {
  return activation<SeluOp, 2>(
      n, {{{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}});
}
LogicalResult importHardSigmoid(NodeImporter &n) {
  return activation<HardSigmoidOp, 2>(n, {{{"alpha", 0.2f}, {"beta", 0.5f}}});
}

LogicalResult importPRelu(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value slope = x ? n.in(1, "slope") : Value();
  if (!slope)
    return failure();
  // Before opset 7 a 1-D slope of C values is per channel (dim 1), as
  // PyTorch's nn.PReLU(C) exported then; from opset 7 it broadcasts from the
  // right like any other operand.
  auto xType = typeOf(x), slopeType = typeOf(slope);
  if (n.ic.opset < 7 && slopeType.getRank() == 1 && xType.getRank() > 2 &&
      slopeType.getDimSize(0) == xType.getDimSize(1) &&
      slopeType.getDimSize(0) != 1) {
    SmallVector<int64_t> perChannel(xType.getRank() - 1, 1);
    perChannel[0] = slopeType.getDimSize(0);
    slope = reshapeTo(n, slope, perChannel);
    if (!slope)
      return failure();
  }
  return emit(n, n.ic.create<PReluOp>(n.loc, x, slope), "remat.prelu");
}

/// A Clip bound given as an input (opset 11+): a compile-time scalar of the
/// input's type. Returns false after reporting an error.
bool clipBound(NodeImporter &n, int i, StringRef what, Type element,
               double &bound) {
  if (!n.has(i))
    return true; // absent: no bound on this side
  const rt::Tensor *t = n.known(i, what);
  if (!t)
    return false;
  if (t->numel() != 1) {
    (void)n.fail("input '" + what + "' must be a scalar, got shape " +
                 rt::shapeToString(t->shape()));
    return false;
  }
  if (elementTypeFor(&n.ic.ctx, t->dtype()) != element) {
    (void)n.fail("input '" + what + "' must have the element type of 'input'");
    return false;
  }
  rt::Tensor one(t->dtype(), {}), wide(rt::DType::F64, {});
  std::memcpy(one.data(), t->data(), rt::dtypeSize(t->dtype()));
  rt::cast(one.view(), wide.view());
  bound = *wide.as<double>();
  return true;
}

/// Clip: bounds are attributes before opset 11 (defaulting to float's
/// lowest and max, as that schema says), optional inputs since (absent means
/// unbounded). Either way they must be known at compile time. Float inputs
/// become remat.clip; integer inputs (opset 12+) a max and a min.
LogicalResult importClip(NodeImporter &n) {
  Value x = n.in(0, "input");
  if (!x)
    return failure();
  Type element = typeOf(x).getElementType();
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  if (n.ic.opset < 11) {
    auto min = n.attrFloat("min", std::numeric_limits<float>::lowest());
    auto max = n.attrFloat("max", std::numeric_limits<float>::max());
    if (!min || !max)
      return failure();
    lower = *min;
    upper = *max;
  } else if (!clipBound(n, 1, "min", element, lower) ||
             !clipBound(n, 2, "max", element, upper)) {
    return failure();
  }
  if (llvm::isa<FloatType>(element))
    return emit(n,
                n.ic.create<ClipOp>(n.loc, x, n.b.getF64FloatAttr(lower),
                                    n.b.getF64FloatAttr(upper)),
                "remat.clip");
  // Integers: the bound constants themselves (exact, unlike their double
  // values beyond 2^53), as 0-d tensors so that they broadcast anywhere.
  Value y = x;
  for (int i : {1, 2}) {
    if (!n.has(i))
      continue;
    Value bound = n.in(i, i == 1 ? "min" : "max");
    bound = bound ? reshapeTo(n, bound, {}) : Value();
    if (!bound)
      return failure();
    Operation *op = i == 1 ? n.ic.create<MaxOp>(n.loc, y, bound)
                           : n.ic.create<MinOp>(n.loc, y, bound);
    if (!op)
      return n.failCreate(i == 1 ? "remat.max" : "remat.min");
    y = op->getResult(0);
  }
  return n.out(0, y);
}

/// Gelu (opset 20) is remat.gelu, which remat-fuse-gelu also produces.
LogicalResult importGelu(NodeImporter &n) {
  if (n.ic.opset < 20)
    return n.fail("Gelu needs opset 20 or later (the model imports opset " +
                  Twine(n.ic.opset) + ")");
  Value x = n.in(0, "X");
  auto approximate = n.attrString("approximate", "none");
  if (!x || !approximate)
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return n.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"" +
                  *approximate + "\"");
  return emit(n,
              n.ic.create<GeluOp>(n.loc, x, n.b.getStringAttr(*approximate)),
              "remat.gelu");
}

LogicalResult importIdentity(NodeImporter &n) {
  if (!n.has(0))
    return n.fail("missing input 'input'");
  n.outAlias(0, n.inName(0));
  return success();
}

LogicalResult importWhere(NodeImporter &n) {
  Value c = n.in(0, "condition");
  Value x = c ? n.in(1, "X") : Value();
  Value y = x ? n.in(2, "Y") : Value();
  if (!y)
    return failure();
  return emit(n, n.ic.create<WhereOp>(n.loc, c, x, y), "remat.where");
}

/// Output 0 of `n` is `x` converted to `element` (an alias when it already is).
LogicalResult castTo(NodeImporter &n, Value x, Type element) {
  if (typeOf(x).getElementType() == element) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return emit(n,
              n.ic.createTyped<CastOp>(n.loc, typeOf(x).clone(element), x),
              "remat.cast");
}

LogicalResult importCast(NodeImporter &n) {
  Value x = n.in(0, "input");
  auto to = n.attrInt("to", -1);
  if (!x || !to)
    return failure();
  auto dtype = dtypeFromOnnxType(*to);
  if (!dtype)
    return n.fail("unsupported target type " + Twine(*to));
  return castTo(n, x, elementTypeFor(&n.ic.ctx, *dtype));
}

/// CastLike (opset 15): Cast to the element type of input 'target_type'.
LogicalResult importCastLike(NodeImporter &n) {
  Value x = n.in(0, "input");
  Value like = x ? n.in(1, "target_type") : Value();
  if (!like)
    return failure();
  return castTo(n, x, typeOf(like).getElementType());
}

LogicalResult importDropout(NodeImporter &n) {
  if (!n.has(0))
    return n.fail("missing input 'data'");
  double ratio = 0.5;
  bool training = false;
  if (n.ic.opset >= 12) {
    if (n.has(1)) {
      const rt::Tensor *r = n.known(1, "ratio");
      if (!r)
        return failure();
      if (r->numel() != 1 || !rt::isFloat(r->dtype()))
        return n.fail("input 'ratio' must be a float scalar");
      rt::Tensor d(rt::DType::F64, {});
      rt::Tensor one(r->dtype(), {});
      std::memcpy(one.data(), r->data(), rt::dtypeSize(r->dtype()));
      rt::cast(one.view(), d.view());
      ratio = *d.as<double>();
    }
    if (n.has(2)) {
      const rt::Tensor *t = n.known(2, "training_mode");
      if (!t)
        return failure();
      if (t->numel() != 1 || t->dtype() != rt::DType::Bool)
        return n.fail("input 'training_mode' must be a bool scalar");
      training = *t->as<uint8_t>() != 0;
    }
  } else {
    auto r = n.attrFloat("ratio", 0.5);
    if (!r)
      return failure();
    ratio = *r;
  }
  if (!training) {
    n.outAlias(0, n.inName(0));
    if (n.hasOut(1)) {
      auto t = n.typeIn(0);
      if (!t)
        return n.fail("input 'data' is not defined");
      if (rt::numElements(t->shape) <= kMaxFoldElements) {
        rt::Tensor mask(rt::DType::Bool, t->shape);
        rt::fill(mask.view(), 1.0);
        n.outConst(1, std::move(mask));
      } else if (failed(n.out(1, n.ic.splat(n.b.getI1Type(), t->shape, 1.0,
                                             n.loc)))) {
        return failure();
      }
    }
    return success();
  }
  if (!(ratio >= 0.0 && ratio < 1.0))
    return n.fail("ratio " + std::to_string(ratio) + " is not in [0, 1)");
  auto seed = n.attrInt("seed", 0);
  Value x = n.in(0, "data");
  if (!seed || !x)
    return failure();
  Operation *op = n.ic.create<DropoutOp>(
      n.loc, x, n.b.getF64FloatAttr(ratio), n.b.getI64IntegerAttr(*seed),
      n.b.getI64IntegerAttr(n.ic.nextDropoutStream++));
  return emit(n, op, "remat.dropout", {{0, 0}, {1, 1}});
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult importMatMul(NodeImporter &n) {
  Value a = n.in(0, "A");
  Value b = a ? n.in(1, "B") : Value();
  if (!b)
    return failure();
  auto at = typeOf(a), bt = typeOf(b);
  if (at.getRank() == 0 || bt.getRank() == 0)
    return n.fail("MatMul operands must have rank >= 1");
  bool aVec = at.getRank() == 1, bVec = bt.getRank() == 1;
  if (aVec)
    a = reshapeTo(n, a, {1, at.getDimSize(0)});
  if (bVec)
    b = reshapeTo(n, b, {bt.getDimSize(0), 1});
  if (!a || !b)
    return failure();
  Operation *op = n.ic.create<MatMulOp>(n.loc, a, b, n.b.getBoolAttr(false),
                                        n.b.getBoolAttr(false));
  if (!op)
    return n.failCreate("remat.matmul");
  Value y = op->getResult(0);
  if (aVec || bVec) {
    SmallVector<int64_t> shape(typeOf(y).getShape());
    if (bVec)
      shape.erase(shape.end() - 1);
    if (aVec)
      shape.erase(shape.end() - (bVec ? 1 : 2));
    y = reshapeTo(n, y, shape);
  }
  return n.out(0, y);
}

LogicalResult importGemm(NodeImporter &n) {
  Value a = n.in(0, "A");
  Value b = a ? n.in(1, "B") : Value();
  if (!b)
    return failure();
  auto transA = n.attrInt("transA", 0), transB = n.attrInt("transB", 0);
  auto alpha = n.attrFloat("alpha", 1.0), beta = n.attrFloat("beta", 1.0);
  if (!transA || !transB || !alpha || !beta)
    return failure();
  if (typeOf(a).getRank() != 2 || typeOf(b).getRank() != 2)
    return n.fail("Gemm operands must be 2-D");
  Operation *op = n.ic.create<MatMulOp>(n.loc, a, b, n.b.getBoolAttr(*transA),
                                        n.b.getBoolAttr(*transB));
  if (!op)
    return n.failCreate("remat.matmul");
  Value y = op->getResult(0);
  Type element = typeOf(y).getElementType();
  if (*alpha != 1.0) {
    Operation *mul = n.ic.create<MulOp>(n.loc, y, scalar(n, element, *alpha));
    if (!mul)
      return n.failCreate("remat.mul");
    y = mul->getResult(0);
  }
  if (n.has(2)) {
    Value c = n.in(2, "C");
    if (!c)
      return failure();
    if (*beta != 1.0) {
      Operation *mul = n.ic.create<MulOp>(n.loc, c, scalar(n, element, *beta));
      if (!mul)
        return n.failCreate("remat.mul");
      c = mul->getResult(0);
    }
    auto shape = typeOf(y).getShape();
    Operation *add = n.ic.create<AddOp>(n.loc, y, c);
    if (!add)
      return n.failCreate("remat.add");
    if (typeOf(add->getResult(0)).getShape() != shape)
      return n.fail("C does not broadcast to the product's shape");
    y = add->getResult(0);
  }
  return n.out(0, y);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// [B, S, H * D] -> [B, H, S, D] (Attention's 3-D inputs).
Value splitHeads(NodeImporter &n, Value x, int64_t heads) {
  auto shape = typeOf(x).getShape();
  Value split =
      reshapeTo(n, x, {shape[0], shape[1], heads, shape[2] / heads});
  if (!split)
    return {};
  Operation *op = n.ic.create<TransposeOp>(
      n.loc, split, n.b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  if (!op) {
    (void)n.failCreate("remat.transpose");
    return {};
  }
  return op->getResult(0);
}

/// Attention (opset 23) is remat.attention. 4-D inputs are [B, H, S, D];
/// 3-D ones [B, S, H * D] with q_num_heads/kv_num_heads are split into heads
/// and the output merged back. A boolean attn_mask (true: attend) becomes
/// where(mask, 0, -inf); a float one is added as is. The KV cache, softcap
/// and the qk_matmul_output output are refused by name.
LogicalResult importAttention(NodeImporter &n) {
  auto softcap = n.attrFloat("softcap", 0.0);
  auto mode = n.attrInt("qk_matmul_output_mode", 0);
  auto causal = n.attrInt("is_causal", 0);
  auto qHeads = n.attrInt("q_num_heads", 0);
  auto kvHeads = n.attrInt("kv_num_heads", 0);
  if (!softcap || !mode || !causal || !qHeads || !kvHeads)
    return failure();
  if (*softcap != 0.0) {
    std::ostringstream value;
    value << *softcap;
    return n.fail("attribute 'softcap' (" + Twine(value.str()) +
                  ") is not supported; only softcap = 0");
  }
  if (*mode != 0)
    return n.fail("attribute 'qk_matmul_output_mode' (" + Twine(*mode) +
                  ") is not supported; only 0");
  if (n.has(4) || n.has(5))
    return n.fail("inputs 'past_key'/'past_value' (a KV cache) are not "
                  "supported");
  if (n.has(6))
    return n.fail("input 'nonpad_kv_seqlen' is not supported");
  if (n.hasOut(1) || n.hasOut(2))
    return n.fail("outputs 'present_key'/'present_value' (a KV cache) are "
                  "not supported");
  if (n.hasOut(3))
    return n.fail("output 'qk_matmul_output' is not supported");
  Value q = n.in(0, "Q");
  Value k = q ? n.in(1, "K") : Value();
  Value v = k ? n.in(2, "V") : Value();
  if (!v)
    return failure();
  const int64_t rank = typeOf(q).getRank();
  if (typeOf(k).getRank() != rank || typeOf(v).getRank() != rank ||
      (rank != 3 && rank != 4))
    return n.fail("Q, K and V must all be 4-D [batch, heads, seq, dim] or "
                  "all 3-D [batch, seq, heads * dim]");
  SmallVector<int64_t> mergedShape;
  if (rank == 3) {
    if (*qHeads <= 0 || *kvHeads <= 0)
      return n.fail("3-D inputs need attributes 'q_num_heads' and "
                    "'kv_num_heads'");
    auto qs = typeOf(q).getShape(), ks = typeOf(k).getShape(),
         vs = typeOf(v).getShape();
    if (qs[2] % *qHeads || ks[2] % *kvHeads || vs[2] % *kvHeads)
      return n.fail("the hidden sizes of Q, K and V are not multiples of "
                    "q_num_heads and kv_num_heads");
    mergedShape = {qs[0], qs[1], *qHeads * (vs[2] / *kvHeads)};
    q = splitHeads(n, q, *qHeads);
    k = q ? splitHeads(n, k, *kvHeads) : Value();
    v = k ? splitHeads(n, v, *kvHeads) : Value();
    if (!v)
      return failure();
  }
  const int64_t headDim = typeOf(q).getDimSize(3);
  auto scale = n.attrFloat("scale", 1.0 / std::sqrt((double)headDim));
  if (!scale)
    return failure();

  Value mask = n.optIn(3);
  if (mask) {
    Type element = typeOf(q).getElementType();
    auto maskType = typeOf(mask);
    if (maskType.getDimSize(maskType.getRank() - 1) != typeOf(k).getDimSize(2))
      return n.fail("input 'attn_mask' covers " +
                    Twine(maskType.getDimSize(maskType.getRank() - 1)) +
                    " keys, not all " + Twine(typeOf(k).getDimSize(2)) +
                    " (a padded mask is not supported)");
    if (maskType.getElementType().isInteger(1)) {
      Operation *op = n.ic.create<WhereOp>(
          n.loc, mask, scalar(n, element, 0.0),
          scalar(n, element, -std::numeric_limits<double>::infinity()));
      if (!op)
        return n.failCreate("remat.where");
      mask = op->getResult(0);
    } else if (maskType.getElementType() != element) {
      return n.fail("input 'attn_mask' must be bool or Q's element type");
    }
  }
  Operation *op = n.ic.create<AttentionOp>(
      n.loc, q, k, v, mask, n.b.getF64FloatAttr(*scale),
      n.b.getBoolAttr(*causal != 0), n.b.getF64FloatAttr(0.0),
      n.b.getI64IntegerAttr(0), n.b.getI64IntegerAttr(0));
  if (!op)
    return n.failCreate("remat.attention");
  Value y = op->getResult(0);
  if (rank == 3) {
    Operation *t = n.ic.create<TransposeOp>(
        n.loc, y, n.b.getDenseI64ArrayAttr({0, 2, 1, 3}));
    if (!t)
      return n.failCreate("remat.transpose");
    y = reshapeTo(n, t->getResult(0), mergedShape);
    if (!y)
      return failure();
  }
  return n.out(0, y);
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult importSoftmax(NodeImporter &n) {
  Value x = n.in(0, "input");
  if (!x)
    return failure();
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  auto a = n.attrInt("axis", n.ic.opset >= 13 ? -1 : 1);
  if (!a)
    return failure();
  if (rank == 0)
    return n.fail("input must have rank >= 1");
  auto axis = n.axis(*a, rank);
  if (!axis)
    return failure();
  if (n.ic.opset >= 13 || *axis == rank - 1) {
    return emit(n, n.ic.create<OpTy>(n.loc, x, n.b.getI64IntegerAttr(*axis)),
                OpTy::getOperationName());
  }
  // Before opset 13 the input is coerced to 2-D [prod(:axis), prod(axis:)].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < *axis ? outer : inner) *= type.getDimSize(d);
  Value flat = reshapeTo(n, x, {outer, inner});
  if (!flat)
    return failure();
  Operation *op = n.ic.create<OpTy>(n.loc, flat, n.b.getI64IntegerAttr(1));
  if (!op)
    return n.failCreate(OpTy::getOperationName());
  Value y = reshapeTo(n, op->getResult(0), type.getShape());
  return y ? n.out(0, y) : failure();
}

LogicalResult importLayerNorm(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value scale = x ? n.in(1, "Scale") : Value();
  if (!scale)
    return failure();
  Value bias = n.optIn(2);
  if (n.has(2) && !bias)
    return failure();
  auto a = n.attrInt("axis", -1);
  auto eps = n.attrFloat("epsilon", 1e-5);
  if (!a || !eps)
    return failure();
  auto axis = n.axis(*a, typeOf(x).getRank());
  if (!axis)
    return failure();
  Operation *op = n.ic.create<LayerNormOp>(n.loc, x, scale, bias,
                                           n.b.getI64IntegerAttr(*axis),
                                           n.b.getF64FloatAttr(*eps));
  return emit(n, op, "remat.layer_norm", {{0, 0}, {1, 1}, {2, 2}});
}

LogicalResult importBatchNorm(NodeImporter &n) {
  if (failed(n.requireInputs(5)))
    return failure();
  Value x = n.in(0, "X"), scale = x ? n.in(1, "scale") : Value(),
        bias = scale ? n.in(2, "B") : Value(),
        mean = bias ? n.in(3, "input_mean") : Value(),
        var = mean ? n.in(4, "input_var") : Value();
  if (!var)
    return failure();
  auto eps = n.attrFloat("epsilon", 1e-5);
  auto momentum = n.attrFloat("momentum", 0.9);
  auto trainingAttr = n.attrInt("training_mode", 0);
  if (!eps || !momentum || !trainingAttr)
    return failure();
  bool training = n.ic.opset >= 14
                      ? *trainingAttr != 0
                      : (n.hasOut(1) || n.hasOut(2) || n.hasOut(3) || n.hasOut(4));
  if (!training) {
    for (int i = 1; i < n.numOutputs(); ++i)
      if (n.hasOut(i))
        return n.fail("inference-mode BatchNormalization has only output Y");
    return emit(n,
                n.ic.create<BatchNormInferenceOp>(n.loc, x, scale, bias, mean,
                                                  var, n.b.getF64FloatAttr(*eps)),
                "remat.batch_norm_inference");
  }
  if (n.ic.opset < 14 && n.hasOut(4))
    return n.fail("output 'saved_var' of opset < 14 is not supported");
  Operation *op = n.ic.create<BatchNormTrainingOp>(
      n.loc, x, scale, bias, mean, var, n.b.getF64FloatAttr(*eps),
      n.b.getF64FloatAttr(*momentum), n.b.getBoolAttr(n.ic.fromPyTorch));
  return emit(n, op, "remat.batch_norm_training",
              {{0, 0}, {1, 1}, {2, 2}, {3, 3}});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult importReduce(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  bool noop = false;
  auto axes = n.reduceAxes(typeOf(x).getRank(), noop);
  auto keep = n.attrInt("keepdims", 1);
  if (!axes || !keep)
    return failure();
  if (noop) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return emit(n,
              n.ic.create<OpTy>(n.loc, x, n.b.getDenseI64ArrayAttr(*axes),
                                n.b.getBoolAttr(*keep != 0)),
              OpTy::getOperationName());
}

/// CumSum-11/14: the axis input must be a compile-time value.
LogicalResult importCumSum(NodeImporter &n) {
  Value x = n.in(0, "x");
  if (!x)
    return failure();
  auto exclusive = n.attrInt("exclusive", 0);
  auto reverse = exclusive ? n.attrInt("reverse", 0) : std::nullopt;
  if (!reverse)
    return failure();
  const rt::Tensor *t = n.known(1, "axis");
  auto values = t ? n.ints(*t, "axis") : std::nullopt;
  if (!values)
    return failure();
  if (values->size() != 1)
    return n.fail("input 'axis' must hold one element, got " +
                  Twine(values->size()));
  auto axis = n.axis(values->front(), typeOf(x).getRank());
  if (!axis)
    return failure();
  return emit(n,
              n.ic.createTyped<CumSumOp>(n.loc, typeOf(x), x,
                                         n.b.getI64IntegerAttr(*axis),
                                         n.b.getBoolAttr(*exclusive != 0),
                                         n.b.getBoolAttr(*reverse != 0)),
              "remat.cumsum");
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

/// Reads strides, dilations, pads and auto_pad for `spatial` dims with the
/// given kernel; SAME_* pads are made explicit.
std::optional<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> inShape,
                                 std::vector<int64_t> kernel) {
  size_t k = kernel.size();
  Window w;
  w.kernel = kernel;
  bool has = false;
  auto strides = n.attrInts("strides", &has);
  if (!strides)
    return std::nullopt;
  w.strides = has ? *strides : std::vector<int64_t>(k, 1);
  auto dil = n.attrInts("dilations", &has);
  if (!dil)
    return std::nullopt;
  w.dilations = has ? *dil : std::vector<int64_t>(k, 1);
  auto pads = n.attrInts("pads", &has);
  if (!pads)
    return std::nullopt;
  w.pads = has ? *pads : std::vector<int64_t>(2 * k, 0);
  auto autoPad = n.attrString("auto_pad", "NOTSET");
  if (!autoPad)
    return std::nullopt;
  if (w.strides.size() != k || w.dilations.size() != k || w.pads.size() != 2 * k ||
      inShape.size() != k + 2) {
    (void)n.fail("window attributes must have one entry per spatial dim (pads two), "
           "for " + Twine(k) + " spatial dims");
    return std::nullopt;
  }
  for (size_t d = 0; d < k; ++d)
    if (w.strides[d] < 1 || w.dilations[d] < 1 || w.kernel[d] < 1) {
      (void)n.fail("kernel, strides and dilations must be positive");
      return std::nullopt;
    }
  if (*autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (size_t d = 0; d < k; ++d) {
      int64_t in = inShape[d + 2];
      int64_t out = (in + w.strides[d] - 1) / w.strides[d];
      int64_t effective = (w.kernel[d] - 1) * w.dilations[d] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + effective - in);
      int64_t small = total / 2, large = total - small;
      w.pads[d] = *autoPad == "SAME_UPPER" ? small : large;
      w.pads[d + k] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    (void)n.fail("unknown auto_pad '" + *autoPad + "'");
    return std::nullopt;
  }
  return w;
}

LogicalResult importConv(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value w = x ? n.in(1, "W") : Value();
  if (!w)
    return failure();
  Value bias = n.optIn(2);
  if (n.has(2) && !bias)
    return failure();
  auto wt = typeOf(w);
  if (wt.getRank() < 3)
    return n.fail("weight must have rank >= 3");
  std::vector<int64_t> kernel(wt.getShape().begin() + 2, wt.getShape().end());
  bool has = false;
  auto ks = n.attrInts("kernel_shape", &has);
  if (!ks)
    return failure();
  if (has && *ks != kernel)
    return n.fail("kernel_shape does not match the weight's spatial dims");
  auto group = n.attrInt("group", 1);
  if (!group)
    return failure();
  auto win = readWindow(n, typeOf(x).getShape(), kernel);
  if (!win)
    return failure();
  Operation *op = n.ic.create<ConvOp>(
      n.loc, x, w, bias, n.b.getDenseI64ArrayAttr(win->strides),
      n.b.getDenseI64ArrayAttr(win->pads), n.b.getDenseI64ArrayAttr(win->dilations),
      n.b.getI64IntegerAttr(*group));
  return emit(n, op, "remat.conv");
}

LogicalResult importMaxPool(NodeImporter &n) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  bool has = false;
  auto kernel = n.attrInts("kernel_shape", &has);
  if (!kernel)
    return failure();
  if (!has)
    return n.fail("missing attribute 'kernel_shape'");
  auto ceil = n.attrInt("ceil_mode", 0);
  auto order = n.attrInt("storage_order", 0);
  if (!ceil || !order)
    return failure();
  if (*order != 0)
    return n.fail("storage_order " + Twine(*order) + " is not supported");
  auto win = readWindow(n, typeOf(x).getShape(), *kernel);
  if (!win)
    return failure();
  Operation *op = n.ic.create<MaxPoolOp>(
      n.loc, x, n.b.getDenseI64ArrayAttr(win->kernel),
      n.b.getDenseI64ArrayAttr(win->strides), n.b.getDenseI64ArrayAttr(win->pads),
      n.b.getDenseI64ArrayAttr(win->dilations), n.b.getBoolAttr(*ceil != 0));
  return emit(n, op, "remat.max_pool", {{0, 0}, {1, 1}});
}

LogicalResult importAveragePool(NodeImporter &n) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  bool has = false;
  auto kernel = n.attrInts("kernel_shape", &has);
  if (!kernel)
    return failure();
  if (!has)
    return n.fail("missing attribute 'kernel_shape'");
  auto ceil = n.attrInt("ceil_mode", 0);
  auto countPad = n.attrInt("count_include_pad", 0);
  if (!ceil || !countPad)
    return failure();
  auto win = readWindow(n, typeOf(x).getShape(), *kernel);
  if (!win)
    return failure();
  Operation *op = n.ic.create<AveragePoolOp>(
      n.loc, x, n.b.getDenseI64ArrayAttr(win->kernel),
      n.b.getDenseI64ArrayAttr(win->strides), n.b.getDenseI64ArrayAttr(win->pads),
      n.b.getDenseI64ArrayAttr(win->dilations), n.b.getBoolAttr(*ceil != 0),
      n.b.getBoolAttr(*countPad != 0));
  return emit(n, op, "remat.average_pool");
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult reshapeOut(NodeImporter &n, Value x, std::optional<rt::Shape> shape) {
  if (!shape)
    return failure();
  Value y = reshapeTo(n, x, *shape);
  return y ? n.out(0, y) : failure();
}

LogicalResult importReshape(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  const rt::Tensor *s = n.known(1, "shape");
  if (!s)
    return failure();
  auto shape = n.ints(*s, "shape");
  auto allowZero = n.attrInt("allowzero", 0);
  if (!shape || !allowZero)
    return failure();
  auto in = typeOf(x).getShape();
  return reshapeOut(n, x,
                    n.reshapeTarget(rt::Shape(in.begin(), in.end()), *shape,
                                    *allowZero != 0));
}

LogicalResult importFlatten(NodeImporter &n) {
  Value x = n.in(0, "input");
  auto a = n.attrInt("axis", 1);
  if (!x || !a)
    return failure();
  auto in = typeOf(x).getShape();
  return reshapeOut(n, x, n.flattenShape(rt::Shape(in.begin(), in.end()), *a));
}

std::optional<std::optional<std::vector<int64_t>>> axesOperand(NodeImporter &n) {
  if (n.ic.opset >= 13) {
    if (!n.has(1))
      return std::optional<std::vector<int64_t>>();
    const rt::Tensor *t = n.known(1, "axes");
    if (!t)
      return std::nullopt;
    auto v = n.ints(*t, "axes");
    if (!v)
      return std::nullopt;
    return std::optional<std::vector<int64_t>>(*v);
  }
  bool present = false;
  auto v = n.attrInts("axes", &present);
  if (!v)
    return std::nullopt;
  if (!present)
    return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(*v);
}

LogicalResult importSqueeze(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  auto axes = axesOperand(n);
  if (!axes)
    return failure();
  auto in = typeOf(x).getShape();
  return reshapeOut(n, x, n.squeezeShape(rt::Shape(in.begin(), in.end()), *axes));
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  auto axes = axesOperand(n);
  if (!axes)
    return failure();
  if (!*axes)
    return n.fail("missing axes");
  auto in = typeOf(x).getShape();
  return reshapeOut(n, x, n.unsqueezeShape(rt::Shape(in.begin(), in.end()), **axes));
}

LogicalResult importTranspose(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  auto perm = n.transposePerm(typeOf(x).getRank());
  if (!perm)
    return failure();
  return emit(n,
              n.ic.create<TransposeOp>(n.loc, x, n.b.getDenseI64ArrayAttr(*perm)),
              "remat.transpose");
}

LogicalResult importConcat(NodeImporter &n) {
  if (failed(n.requireInputs(1)))
    return failure();
  SmallVector<Value> inputs;
  for (int i = 0; i < n.numInputs(); ++i) {
    Value v = n.in(i, "inputs#" + std::to_string(i));
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  auto a = n.attrInt("axis", 0);
  if (!a)
    return failure();
  if (!n.hasAttr("axis"))
    return n.fail("missing attribute 'axis'");
  auto axis = n.axis(*a, typeOf(inputs[0]).getRank());
  if (!axis)
    return failure();
  return emit(n,
              n.ic.create<ConcatOp>(n.loc, ValueRange(inputs),
                                    n.b.getI64IntegerAttr(*axis)),
              "remat.concat");
}

LogicalResult importSplit(NodeImporter &n) {
  Value x = n.in(0, "input");
  auto a = n.attrInt("axis", 0);
  if (!x || !a)
    return failure();
  auto type = typeOf(x);
  if (type.getRank() == 0)
    return n.fail("input 'input' is a scalar; Split needs rank >= 1");
  auto axis = n.axis(*a, type.getRank());
  if (!axis)
    return failure();
  auto sizes = n.splitSizes(type.getDimSize(*axis));
  if (!sizes)
    return failure();
  SmallVector<Type> types;
  for (int64_t s : *sizes) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = s;
    types.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  Operation *op = n.ic.createTyped<SplitOp>(n.loc, TypeRange(types), x,
                                            n.b.getI64IntegerAttr(*axis));
  if (!op)
    return n.failCreate("remat.split");
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    if (failed(n.out(i, op->getResult(i))))
      return failure();
  return success();
}

LogicalResult importSlice(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  auto in = typeOf(x).getShape();
  auto p = n.sliceParams(rt::Shape(in.begin(), in.end()));
  if (!p)
    return failure();
  Operation *op = n.ic.create<SliceOp>(n.loc, x, n.b.getDenseI64ArrayAttr(p->starts),
                                       n.b.getDenseI64ArrayAttr(p->limits),
                                       n.b.getDenseI64ArrayAttr(p->steps));
  return emit(n, op, "remat.slice");
}

LogicalResult importGather(NodeImporter &n) {
  Value x = n.in(0, "data");
  Value idx = x ? n.in(1, "indices") : Value();
  auto a = n.attrInt("axis", 0);
  if (!idx || !a)
    return failure();
  auto axis = n.axis(*a, typeOf(x).getRank());
  if (!axis)
    return failure();
  // --padding-idx: an embedding lookup whose padding row gets no gradient.
  IntegerAttr padding;
  auto flag = n.ic.options.paddingIdx.find(n.inName(0));
  if (flag != n.ic.options.paddingIdx.end() && *axis == 0) {
    const int64_t rows = typeOf(x).getDimSize(0);
    const int64_t row = flag->second < 0 ? flag->second + rows : flag->second;
    if (row < 0 || row >= rows)
      return n.fail("--padding-idx " + flag->first + "=" +
                    Twine(flag->second) + " is not a row of '" +
                    flag->first + "' (" + Twine(rows) + " rows)");
    padding = n.b.getI64IntegerAttr(row);
    n.ic.paddingIdxApplied.insert(flag->first);
  }
  return emit(n,
              n.ic.create<GatherOp>(n.loc, x, idx,
                                    n.b.getI64IntegerAttr(*axis), padding),
              "remat.gather");
}

LogicalResult importGatherElements(NodeImporter &n) {
  Value x = n.in(0, "data");
  Value idx = x ? n.in(1, "indices") : Value();
  auto a = idx ? n.attrInt("axis", 0) : std::nullopt;
  if (!a)
    return failure();
  auto axis = n.axis(*a, typeOf(x).getRank());
  if (!axis)
    return failure();
  return emit(n,
              n.ic.create<GatherElementsOp>(n.loc, x, idx,
                                            n.b.getI64IntegerAttr(*axis)),
              "remat.gather_elements");
}

LogicalResult importExpand(NodeImporter &n) {
  Value x = n.in(0, "input");
  if (!x)
    return failure();
  auto in = typeOf(x).getShape();
  auto shape = n.expandShape(rt::Shape(in.begin(), in.end()), 1);
  if (!shape)
    return failure();
  if (ArrayRef<int64_t>(*shape) == in) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return emit(n,
              n.ic.createTyped<ExpandOp>(
                  n.loc, RankedTensorType::get(*shape, typeOf(x).getElementType()), x),
              "remat.expand");
}

/// The one element of a compile-time scalar input, as double.
std::optional<double> scalarInput(NodeImporter &n, int i, StringRef what) {
  const rt::Tensor *t = n.known(i, what);
  if (!t)
    return std::nullopt;
  if (t->numel() != 1) {
    (void)n.fail("input '" + what + "' must hold one element, got " +
                 Twine(t->numel()));
    return std::nullopt;
  }
  rt::Tensor one(t->dtype(), {}), d(rt::DType::F64, {});
  std::memcpy(one.data(), t->data(), rt::dtypeSize(t->dtype()));
  rt::cast(one.view(), d.view());
  return *d.as<double>();
}

/// Pad-1 (`paddings`, `value` attributes), Pad-2 (`pads`, `value`), Pad-11
/// (pads and constant_value inputs), Pad-18 (`axes` input), Pad-19 (wrap).
/// pads, axes and the constant must be compile-time values.
LogicalResult importPad(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  int64_t rank = typeOf(x).getRank();
  auto mode = n.attrString("mode", "constant");
  if (!mode)
    return failure();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge" &&
      !(*mode == "wrap" && n.ic.opset >= 19))
    return n.fail("unknown mode '" + *mode + "'" +
                  (*mode == "wrap" ? " (wrap needs opset 19)" : ""));
  std::vector<int64_t> pads;
  double value = 0.0;
  std::vector<int64_t> axes;
  bool hasAxes = false;
  if (n.ic.opset < 11) {
    const char *name = n.ic.opset < 2 ? "paddings" : "pads";
    bool present = false;
    auto p = n.attrInts(name, &present);
    auto v = n.attrFloat("value", 0.0);
    if (!p || !v)
      return failure();
    if (!present)
      return n.fail(Twine("missing attribute '") + name + "'");
    pads = *p;
    value = *v;
  } else {
    const rt::Tensor *p = n.known(1, "pads");
    if (!p)
      return failure();
    auto values = n.ints(*p, "pads");
    if (!values)
      return failure();
    pads = *values;
    if (n.has(2)) {
      auto v = scalarInput(n, 2, "constant_value");
      if (!v)
        return failure();
      value = *v;
    }
    if (n.has(3)) {
      if (n.ic.opset < 18)
        return n.fail("input 'axes' needs opset 18");
      const rt::Tensor *a = n.known(3, "axes");
      auto given = a ? n.ints(*a, "axes") : std::nullopt;
      if (!given)
        return failure();
      axes = *given;
      hasAxes = true;
    }
  }
  // Expand pads over `axes` to one begin and one end per dim.
  if (!hasAxes)
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    return n.fail("pads has " + Twine(pads.size()) + " entries, expected " +
                  Twine(2 * axes.size()) + " (two per " +
                  (hasAxes ? "axis" : "dim") + ")");
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    auto axis = n.axis(axes[k], rank, "axes entry");
    if (!axis)
      return failure();
    if (seen[*axis])
      return n.fail("axes names dim " + Twine(*axis) + " twice");
    seen[*axis] = true;
    full[*axis] = pads[k];
    full[rank + *axis] = pads[axes.size() + k];
  }
  if (llvm::all_of(full, [](int64_t p) { return p == 0; })) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return emit(n,
              n.ic.create<PadOp>(n.loc, x, n.b.getDenseI64ArrayAttr(full),
                                 n.b.getStringAttr(*mode),
                                 n.b.getF64FloatAttr(value)),
              "remat.pad");
}

/// Tile-6/13: the repeats input must be a compile-time value.
LogicalResult importTile(NodeImporter &n) {
  Value x = n.in(0, "input");
  if (!x)
    return failure();
  if (n.ic.opset < 6)
    return n.fail("Tile before opset 6 (tiles and axis inputs) is not "
                  "supported");
  const rt::Tensor *r = n.known(1, "repeats");
  auto repeats = r ? n.ints(*r, "repeats") : std::nullopt;
  if (!repeats)
    return failure();
  if (r->shape().size() != 1)
    return n.fail("input 'repeats' must be 1-D, got rank " +
                  Twine(r->shape().size()));
  if (llvm::all_of(*repeats, [](int64_t v) { return v == 1; }) &&
      (int64_t)repeats->size() == typeOf(x).getRank()) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return emit(n,
              n.ic.create<TileOp>(n.loc, x, n.b.getDenseI64ArrayAttr(*repeats)),
              "remat.tile");
}

/// Trilu-14: the optional k input must be a compile-time value.
LogicalResult importTrilu(NodeImporter &n) {
  Value x = n.in(0, "input");
  auto upper = x ? n.attrInt("upper", 1) : std::nullopt;
  if (!upper)
    return failure();
  int64_t k = 0;
  if (n.has(1)) {
    const rt::Tensor *t = n.known(1, "k");
    auto values = t ? n.ints(*t, "k") : std::nullopt;
    if (!values)
      return failure();
    if (values->size() != 1)
      return n.fail("input 'k' must hold one element, got " +
                    Twine(values->size()));
    k = values->front();
  }
  if (typeOf(x).getRank() < 2)
    return n.fail("input must have rank >= 2, got " +
                  Twine(typeOf(x).getRank()));
  return emit(n,
              n.ic.createTyped<TriluOp>(n.loc, typeOf(x), x,
                                        n.b.getBoolAttr(*upper != 0),
                                        n.b.getI64IntegerAttr(k)),
              "remat.trilu");
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult importLoss(NodeImporter &n) {
  Value scores = n.in(0, "scores");
  Value labels = scores ? n.in(1, "labels") : Value();
  if (!labels)
    return failure();
  Value weights = n.optIn(2);
  if (n.has(2) && !weights)
    return failure();
  auto reduction = n.attrString("reduction", "mean");
  if (!reduction)
    return failure();
  if (*reduction != "none" && *reduction != "sum" && *reduction != "mean")
    return n.fail("unknown reduction '" + *reduction + "'");
  IntegerAttr ignore;
  if (n.hasAttr("ignore_index")) {
    auto v = n.attrInt("ignore_index", 0);
    if (!v)
      return failure();
    ignore = n.b.getI64IntegerAttr(*v);
  }
  Operation *op = n.ic.create<OpTy>(n.loc, scores, labels, weights,
                                    n.b.getStringAttr(*reduction), ignore);
  if constexpr (std::is_same_v<OpTy, SoftmaxCrossEntropyLossOp>)
    return emit(n, op, OpTy::getOperationName(), {{0, 0}, {1, 1}});
  else
    return emit(n, op, OpTy::getOperationName());
}

//===----------------------------------------------------------------------===//
// Compile-time only: constants and shape arithmetic
//===----------------------------------------------------------------------===//

LogicalResult importConstant(NodeImporter &n) {
  const onnx::AttributeProto *a = nullptr;
  for (const auto &attr : n.node.attribute()) {
    if (a)
      return n.fail("must have exactly one attribute");
    a = &attr;
  }
  if (!a)
    return n.fail("has no value attribute");
  const std::string &name = a->name();
  if (name == "value") {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return n.fail("attribute 'value' must be a tensor");
    auto dtype = dtypeFromOnnxType(a->t().data_type());
    if (!dtype)
      return n.fail("unsupported tensor element type " +
                    Twine(a->t().data_type()));
    for (int64_t d : a->t().dims())
      if (d < 0)
        return n.fail("tensor has a negative dim");
    std::vector<int64_t> dims(a->t().dims().begin(), a->t().dims().end());
    if (!shapeIsSane(dims, *dtype))
      return n.fail("tensor is too large");
    n.outConst(0, rt::tensorFromProto(a->t(), n.ic.modelDir));
    return success();
  }
  if (name == "value_float" || name == "value_int") {
    bool isFloat = name == "value_float";
    if (a->type() != (isFloat ? onnx::AttributeProto::FLOAT : onnx::AttributeProto::INT))
      return n.fail("attribute '" + name + "' has the wrong type");
    rt::Tensor t(isFloat ? rt::DType::F32 : rt::DType::I64, {});
    if (isFloat)
      *t.as<float>() = a->f();
    else
      *t.as<int64_t>() = a->i();
    n.outConst(0, std::move(t));
    return success();
  }
  if (name == "value_floats" || name == "value_ints") {
    bool isFloat = name == "value_floats";
    if (a->type() != (isFloat ? onnx::AttributeProto::FLOATS : onnx::AttributeProto::INTS))
      return n.fail("attribute '" + name + "' has the wrong type");
    int64_t count = isFloat ? a->floats_size() : a->ints_size();
    rt::Tensor t(isFloat ? rt::DType::F32 : rt::DType::I64, {count});
    for (int64_t i = 0; i < count; ++i) {
      if (isFloat)
        t.as<float>()[i] = a->floats(i);
      else
        t.as<int64_t>()[i] = a->ints(i);
    }
    n.outConst(0, std::move(t));
    return success();
  }
  return n.fail("attribute '" + name + "' is not supported");
}

LogicalResult importShape(NodeImporter &n) {
  auto shape = n.shapeIn(0, "data");
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  auto start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  if (!start || !end)
    return failure();
  int64_t s = *start < 0 ? *start + rank : *start;
  int64_t e = *end < 0 ? *end + rank : *end;
  s = std::clamp<int64_t>(s, 0, rank);
  e = std::clamp<int64_t>(e, 0, rank);
  int64_t count = std::max<int64_t>(0, e - s);
  rt::Tensor t(rt::DType::I64, {count});
  for (int64_t i = 0; i < count; ++i)
    t.as<int64_t>()[i] = (*shape)[s + i];
  n.outConst(0, std::move(t));
  return success();
}

LogicalResult importSize(NodeImporter &n) {
  auto shape = n.shapeIn(0, "data");
  if (!shape)
    return failure();
  rt::Tensor t(rt::DType::I64, {});
  *t.as<int64_t>() = rt::numElements(*shape);
  n.outConst(0, std::move(t));
  return success();
}

/// Ops with no IR equivalent: every input must be known; evaluated here.
/// Range and ConstantOfShape fold or fail: with an input known only at run
/// time, their result's size would depend on data.
LogicalResult importFoldOnly(NodeImporter &n) {
  std::vector<const rt::Tensor *> inputs;
  const bool range = n.opType() == "Range";
  static const char *const rangeNames[] = {"start", "limit", "delta"};
  static const char *const names[] = {"input", "#1", "#2", "#3", "#4"};
  for (int i = 0; i < n.numInputs(); ++i) {
    if (!n.has(i)) {
      inputs.push_back(nullptr);
      continue;
    }
    const char *what = range && i < 3 ? rangeNames[i] : i < 5 ? names[i] : "input";
    const rt::Tensor *t = n.foldable(i);
    if (!t && (range || n.opType() == "ConstantOfShape") &&
        !n.ic.constant(n.inName(i), /*required=*/true))
      return n.fail(Twine("input '") + what + "' ('" + n.inName(i) +
                    "') is only known at run time, so the " +
                    (range ? "length of the range" : "output shape") +
                    " would depend on data: the compiler plans static "
                    "shapes, so it must be computable at import");
    t = n.known(i, what);
    if (!t)
      return failure();
    inputs.push_back(t);
  }
  auto results = foldNode(n, inputs);
  if (n.ic.hadError)
    return failure();
  if (!results) {
    // Too large to evaluate: ConstantOfShape becomes a splat constant.
    if (n.opType() == "ConstantOfShape" && !inputs.empty() && inputs[0]) {
      auto shape = n.ints(*inputs[0], "input");
      if (!shape)
        return failure();
      rt::DType dtype = rt::DType::F32;
      double value = 0;
      if (const auto *a = n.attr("value")) {
        if (a->type() != onnx::AttributeProto::TENSOR)
          return n.fail("attribute 'value' must be a tensor");
        rt::Tensor v = rt::tensorFromProto(a->t(), "");
        if (v.numel() != 1)
          return n.fail("attribute 'value' must hold one element");
        dtype = v.dtype();
        rt::Tensor d(rt::DType::F64, {});
        rt::cast(v.view(), d.view());
        value = *d.as<double>();
      }
      if (!shapeIsSane(*shape, dtype))
        return n.fail("shape " + rt::shapeToString(*shape) + " is too large");
      return n.out(0, n.ic.splat(elementTypeFor(&n.ic.ctx, dtype), *shape,
                                 value, n.loc));
    }
    return n.fail("is supported only on compile-time values (int64 for "
                  "ReduceProd)");
  }
  for (size_t i = 0; i < results->size(); ++i)
    n.outConst(i, std::move((*results)[i]));
  return success();
}

} // namespace

const llvm::StringMap<OpHandler> &opHandlers() {
  static const llvm::StringMap<OpHandler> table = [] {
    llvm::StringMap<OpHandler> handlers = {
      // Elementwise.
      {"Add", binary<AddOp>},
      {"Sub", binary<SubOp>},
      {"Mul", binary<MulOp>},
      {"Div", binary<DivOp>},
      {"Pow", importPow},
      {"And", binary<AndOp>},
      {"Or", binary<OrOp>},
      {"Equal", binary<EqualOp>},
      {"Less", binary<LessOp>},
      {"Greater", binary<GreaterOp>},
      {"Max", variadic<MaxOp>},
      {"Min", variadic<MinOp>},
      {"Neg", unary<NegOp>},
      {"Abs", unary<AbsOp>},
      {"Sqrt", unary<SqrtOp>},
      {"Exp", unary<ExpOp>},
      {"Log", unary<LogOp>},
      {"Reciprocal", unary<ReciprocalOp>},
      {"Erf", unary<ErfOp>},
      {"Tanh", unary<TanhOp>},
      {"Sigmoid", unary<SigmoidOp>},
      {"Relu", unary<ReluOp>},
      {"LeakyRelu", importLeakyRelu},
      {"Elu", importElu},
      {"Selu", importSelu},
      {"Softplus", unary<SoftplusOp>},
      {"Softsign", unary<SoftsignOp>},
      {"HardSigmoid", importHardSigmoid},
      {"PRelu", importPRelu},
      {"Clip", importClip},
      {"Gelu", importGelu},
      {"Sin", unary<SinOp>},
      {"Cos", unary<CosOp>},
      {"Not", unary<NotOp>},
      {"Where", importWhere},
      {"Cast", importCast},
      {"CastLike", importCastLike},
      {"Identity", importIdentity},
      {"Dropout", importDropout},
      // Linear algebra.
      {"MatMul", importMatMul},
      {"Gemm", importGemm},
      // Normalisation and softmax.
      {"Softmax", importSoftmax<SoftmaxOp>},
      {"Attention", importAttention},
      {"LogSoftmax", importSoftmax<LogSoftmaxOp>},
      {"LayerNormalization", importLayerNorm},
      {"BatchNormalization", importBatchNorm},
      // Reductions.
      {"ReduceSum", importReduce<ReduceSumOp>},
      {"ReduceMean", importReduce<ReduceMeanOp>},
      {"ReduceMax", importReduce<ReduceMaxOp>},
      {"ReduceProd", importFoldOnly},
      {"CumSum", importCumSum},
      // Convolution and pooling.
      {"Conv", importConv},
      {"MaxPool", importMaxPool},
      {"AveragePool", importAveragePool},
      {"GlobalAveragePool", unary<GlobalAveragePoolOp>},
      // Data movement.
      {"Reshape", importReshape},
      {"Flatten", importFlatten},
      {"Squeeze", importSqueeze},
      {"Unsqueeze", importUnsqueeze},
      {"Transpose", importTranspose},
      {"Concat", importConcat},
      {"Split", importSplit},
      {"Slice", importSlice},
      {"Gather", importGather},
      {"GatherElements", importGatherElements},
      {"Expand", importExpand},
      {"Pad", importPad},
      {"Tile", importTile},
      {"Trilu", importTrilu},
      // Losses.
      {"SoftmaxCrossEntropyLoss", importLoss<SoftmaxCrossEntropyLossOp>},
      {"NegativeLogLikelihoodLoss", importLoss<NllLossOp>},
      // Compile-time values.
      {"Constant", importConstant},
      {"Shape", importShape},
      {"Size", importSize},
      {"Range", importFoldOnly},
      {"ConstantOfShape", importFoldOnly},
    };
    // Ops imported as compositions (ComposedOpImporters.cpp), the indexing
    // ops (IndexingOpImporters.cpp) and the sequence ops
    // (SequenceOpImporters.cpp) share the table.
    for (const auto *more :
         {&composedOpHandlers(), &indexingOpHandlers(), &sequenceOpHandlers()})
      for (const auto &entry : *more) {
        bool inserted =
            handlers.insert({entry.getKey(), entry.getValue()}).second;
        assert(inserted && "an op has two importers");
        (void)inserted;
      }
    return handlers;
  }();
  return table;
}

} // namespace remat::onnximport
