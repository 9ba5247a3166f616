//===- ComposedOpImporters.cpp - ONNX ops imported as compositions --------===//
//
// Operators whose ONNX definition is itself a function of simpler operators
// (RMSNormalization-23, RotaryEmbedding-23, InstanceNormalization, variadic
// Sum and Mean) import as that composition
// of dialect ops, so they inherit the gradients, kernels and cost model of
// those ops. Each follows the operator's reference definition step by step
// (onnx/reference/ops in the onnx package) so that results match ONNX's own.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Dialect/RematOps.h"

using namespace mlir;

namespace remat::onnximport {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// Builds a chain of ops for one node; the first failure is reported once
/// and turns every later step into a no-op returning null.
class Composer {
public:
  explicit Composer(NodeImporter &n) : n(n) {}

  bool ok() const { return good; }

  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    if (!good)
      return {};
    return result(n.ic.create<OpTy>(n.loc, std::forward<Args>(args)...),
                  OpTy::getOperationName());
  }

  Value cast(Value v, Type element) {
    if (!good || typeOf(v).getElementType() == element)
      return v;
    return result(n.ic.createTyped<CastOp>(n.loc, typeOf(v).clone(element), v),
                  "remat.cast");
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (!good || typeOf(v).getShape() == shape)
      return v;
    return result(n.ic.createTyped<ReshapeOp>(
                      n.loc, RankedTensorType::get(shape, typeOf(v).getElementType()), v),
                  "remat.reshape");
  }

  /// v[..., start:limit:step] along the last axis.
  Value sliceLast(Value v, int64_t start, int64_t limit, int64_t step) {
    if (!good)
      return {};
    auto shape = typeOf(v).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape), steps(shape.size(), 1);
    starts.back() = start;
    limits.back() = limit;
    steps.back() = step;
    return op<SliceOp>(v, n.b.getDenseI64ArrayAttr(starts),
                       n.b.getDenseI64ArrayAttr(limits),
                       n.b.getDenseI64ArrayAttr(steps));
  }

  Value concatLast(ValueRange values) {
    if (!good)
      return {};
    return op<ConcatOp>(values, n.b.getI64IntegerAttr(typeOf(values[0]).getRank() - 1));
  }

  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return op<TransposeOp>(v, n.b.getDenseI64ArrayAttr(perm));
  }

  Value scalar(Type element, double value) {
    return good ? n.ic.splat(element, {}, value, n.loc) : Value();
  }

private:
  Value result(Operation *created, StringRef what) {
    if (!created) {
      (void)n.failCreate(what);
      good = false;
      return {};
    }
    return created->getResult(0);
  }

  NodeImporter &n;
  bool good = true;
};

/// RMSNormalization-23: Y = X / sqrt(mean(X^2 over [axis, rank)) + epsilon)
/// * Scale, computed in the stash type (float) and cast back before Scale.
LogicalResult importRmsNormalization(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value scale = x ? n.in(1, "scale") : Value();
  if (!scale)
    return failure();
  auto a = n.attrInt("axis", -1);
  auto eps = n.attrFloat("epsilon", 1e-5);
  auto stash = n.attrInt("stash_type", onnx::TensorProto::FLOAT);
  if (!a || !eps || !stash)
    return failure();
  if (*stash != onnx::TensorProto::FLOAT)
    return n.fail("stash_type " + Twine(*stash) +
                  " is not supported (only 1, float)");
  int64_t rank = typeOf(x).getRank();
  auto axis = n.axis(*a, rank);
  if (!axis)
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);

  Composer c(n);
  Type f32 = n.b.getF32Type();
  Value xs = c.cast(x, f32);
  Value meanSquare = c.op<ReduceMeanOp>(c.op<MulOp>(xs, xs),
                                        n.b.getDenseI64ArrayAttr(axes),
                                        n.b.getBoolAttr(true));
  Value rms = c.op<SqrtOp>(c.op<AddOp>(meanSquare, c.scalar(f32, *eps)));
  Value normalized = c.op<MulOp>(xs, c.op<ReciprocalOp>(rms));
  Value y = c.op<MulOp>(c.cast(normalized, typeOf(x).getElementType()), scale);
  return c.ok() ? n.out(0, y) : failure();
}

/// RotaryEmbedding-23 on (batch, heads, seq, head_size) or, with num_heads,
/// (batch, seq, hidden): rotates the first rotary_embedding_dim features of
/// every head by the angles in cos_cache/sin_cache (indexed by position_ids
/// when given), pairing halves or, with `interleaved`, even/odd features.
LogicalResult importRotaryEmbedding(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value cosCache = x ? n.in(1, "cos_cache") : Value();
  Value sinCache = cosCache ? n.in(2, "sin_cache") : Value();
  if (!sinCache)
    return failure();
  Value positions = n.optIn(3);
  if (n.has(3) && !positions)
    return failure();
  auto interleaved = n.attrInt("interleaved", 0);
  auto numHeads = n.attrInt("num_heads", 0);
  auto rotaryDim = n.attrInt("rotary_embedding_dim", 0);
  if (!interleaved || !numHeads || !rotaryDim)
    return failure();

  auto inShape = typeOf(x).getShape();
  if (inShape.size() != 3 && inShape.size() != 4)
    return n.fail("input X must be 3-D or 4-D, not " + Twine(inShape.size()) + "-D");
  Composer c(n);
  // Work on (batch, seq, heads, head_size).
  Value v;
  if (inShape.size() == 4) {
    v = c.transpose(x, {0, 2, 1, 3});
  } else {
    if (*numHeads <= 0 || inShape[2] % *numHeads != 0)
      return n.fail("3-D input needs num_heads dividing the hidden size " +
                    Twine(inShape[2]));
    v = c.reshape(x, {inShape[0], inShape[1], *numHeads, inShape[2] / *numHeads});
  }
  if (!c.ok())
    return failure();
  auto shape = typeOf(v).getShape();
  int64_t headSize = shape[3];
  int64_t rot = *rotaryDim == 0 ? headSize : *rotaryDim;
  if (rot <= 0 || rot > headSize || rot % 2 != 0)
    return n.fail("rotary_embedding_dim " + Twine(rot) +
                  " must be even and at most the head size " + Twine(headSize));
  int64_t half = rot / 2;

  Value cosv = cosCache, sinv = sinCache;
  if (positions) {
    cosv = c.op<GatherOp>(cosCache, positions, n.b.getI64IntegerAttr(0));
    sinv = c.op<GatherOp>(sinCache, positions, n.b.getI64IntegerAttr(0));
  }
  if (!c.ok())
    return failure();
  auto cacheShape = typeOf(cosv).getShape();
  if (cacheShape.size() != 3 || cacheShape[0] != shape[0] ||
      cacheShape[1] != shape[1] || cacheShape[2] != half ||
      typeOf(sinv).getShape() != cacheShape)
    return n.fail("cos/sin caches give shape " +
                  rt::shapeToString(std::vector<int64_t>(cacheShape)) +
                  ", expected [batch, seq, rotary_embedding_dim / 2] = [" +
                  Twine(shape[0]) + ", " + Twine(shape[1]) + ", " + Twine(half) + "]");
  cosv = c.reshape(cosv, {shape[0], shape[1], 1, half});
  sinv = c.reshape(sinv, {shape[0], shape[1], 1, half});

  Value rotate = rot == headSize ? v : c.sliceLast(v, 0, rot, 1);
  Value x1 = *interleaved ? c.sliceLast(rotate, 0, rot, 2) : c.sliceLast(rotate, 0, half, 1);
  Value x2 = *interleaved ? c.sliceLast(rotate, 1, rot, 2) : c.sliceLast(rotate, half, rot, 1);
  Value real = c.op<SubOp>(c.op<MulOp>(cosv, x1), c.op<MulOp>(sinv, x2));
  Value imag = c.op<AddOp>(c.op<MulOp>(sinv, x1), c.op<MulOp>(cosv, x2));
  if (!c.ok())
    return failure();
  Value rotated;
  if (*interleaved) {
    // Pairs (real_i, imag_i) back into even/odd positions.
    SmallVector<int64_t> pairShape(typeOf(real).getShape());
    pairShape.push_back(1);
    Value pairs = c.concatLast({c.reshape(real, pairShape), c.reshape(imag, pairShape)});
    rotated = c.reshape(pairs, {shape[0], shape[1], shape[2], rot});
  } else {
    rotated = c.concatLast({real, imag});
  }
  Value out = rot == headSize ? rotated
                              : c.concatLast({rotated, c.sliceLast(v, rot, headSize, 1)});
  out = inShape.size() == 4 ? c.transpose(out, {0, 2, 1, 3}) : c.reshape(out, inShape);
  return c.ok() ? n.out(0, out) : failure();
}

/// Sum and Mean (variadic, broadcasting): a chain of adds, then for Mean a
/// division by the count.
LogicalResult importVariadicSum(NodeImporter &n) {
  if (n.numInputs() == 0)
    return n.fail("needs at least one input");
  Composer c(n);
  Value total = n.in(0, "data_0");
  if (!total)
    return failure();
  for (int i = 1; i < n.numInputs(); ++i) {
    Value next = n.in(i, "data_" + std::to_string(i));
    if (!next)
      return failure();
    total = c.op<AddOp>(total, next);
  }
  if (n.opType() == "Mean" && n.numInputs() > 1)
    total = c.op<DivOp>(total, c.scalar(typeOf(total).getElementType(),
                                        n.numInputs()));
  if (!c.ok())
    return failure();
  if (n.numInputs() == 1 && total == n.optIn(0)) {
    n.outAlias(0, n.inName(0));
    return success();
  }
  return n.out(0, total);
}

/// InstanceNormalization: per (batch, channel), normalize over the spatial
/// dims with the biased variance, then scale and shift per channel.
LogicalResult importInstanceNormalization(NodeImporter &n) {
  Value x = n.in(0, "input");
  Value scale = x ? n.in(1, "scale") : Value();
  Value bias = scale ? n.in(2, "B") : Value();
  if (!bias)
    return failure();
  auto eps = n.attrFloat("epsilon", 1e-5);
  if (!eps)
    return failure();
  auto shape = typeOf(x).getShape();
  if (shape.size() < 3)
    return n.fail("input must have a batch, a channel and spatial dims");
  SmallVector<int64_t> spatial, perChannel(shape.size(), 1);
  for (int64_t d = 2; d < (int64_t)shape.size(); ++d)
    spatial.push_back(d);
  perChannel[1] = shape[1];
  Composer c(n);
  Type element = typeOf(x).getElementType();
  auto axes = n.b.getDenseI64ArrayAttr(spatial);
  Value mean = c.op<ReduceMeanOp>(x, axes, n.b.getBoolAttr(true));
  Value centered = c.op<SubOp>(x, mean);
  Value variance = c.op<ReduceMeanOp>(c.op<MulOp>(centered, centered), axes,
                                      n.b.getBoolAttr(true));
  Value stddev = c.op<SqrtOp>(c.op<AddOp>(variance, c.scalar(element, *eps)));
  Value normalized = c.op<DivOp>(centered, stddev);
  Value y = c.op<AddOp>(c.op<MulOp>(normalized, c.reshape(scale, perChannel)),
                        c.reshape(bias, perChannel));
  return c.ok() ? n.out(0, y) : failure();
}

} // namespace

const llvm::StringMap<OpHandler> &composedOpHandlers() {
  static const llvm::StringMap<OpHandler> table = {
      {"RMSNormalization", importRmsNormalization},
      {"RotaryEmbedding", importRotaryEmbedding},
      {"Sum", importVariadicSum},
      {"Mean", importVariadicSum},
      {"InstanceNormalization", importInstanceNormalization},
  };
  return table;
}

} // namespace remat::onnximport
