//===- ComposedOpImporters.cpp - ONNX ops imported as compositions --------===//
//
// Operators whose ONNX definition is itself a function of simpler operators
// (RMSNormalization-23, RotaryEmbedding-23, InstanceNormalization, variadic
// Sum and Mean, GreaterOrEqual, LessOrEqual, HardSwish, ReduceSumSquare), and
// ConvTranspose (a convolution's input gradient), import as that composition
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
    if (!good)
      return {};
    Value reshaped = reshapeTo(n, v, shape);
    good = static_cast<bool>(reshaped);
    return reshaped;
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
    cosv = c.op<GatherOp>(cosCache, positions, n.b.getI64IntegerAttr(0),
                          IntegerAttr());
    sinv = c.op<GatherOp>(sinCache, positions, n.b.getI64IntegerAttr(0),
                          IntegerAttr());
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

/// ConvTranspose: the gradient of a convolution with respect to its input,
/// taken with the ConvTranspose input as the output gradient (the weight
/// layout (C_in, C_out / group, k...) is that convolution's), plus the bias.
/// Output size per spatial dim: stride * (in - 1) + output_padding +
/// (kernel - 1) * dilation + 1 - pad_begin - pad_end.
LogicalResult importConvTranspose(NodeImporter &n) {
  Value x = n.in(0, "X");
  Value w = x ? n.in(1, "W") : Value();
  if (!w)
    return failure();
  Value bias = n.optIn(2);
  if (n.has(2) && !bias)
    return failure();
  auto xShape = typeOf(x).getShape();
  auto wShape = typeOf(w).getShape();
  int64_t spatial = (int64_t)xShape.size() - 2;
  if (spatial < 1 || spatial > 3 || wShape.size() != xShape.size())
    return n.fail("needs 1 to 3 spatial dims and a weight of the input's rank");
  auto group = n.attrInt("group", 1);
  auto autoPad = n.attrString("auto_pad", "NOTSET");
  if (!group || !autoPad)
    return failure();
  if (*group < 1 || wShape[0] != xShape[1] || wShape[0] % *group != 0)
    return n.fail("weight dim 0 (" + Twine(wShape[0]) +
                  ") must equal the input channels (" + Twine(xShape[1]) +
                  ") and divide into group " + Twine(*group));
  auto listOr = [&](StringRef name, int64_t fill) -> std::optional<std::vector<int64_t>> {
    bool present = false;
    auto v = n.attrInts(name, &present);
    if (!v)
      return std::nullopt;
    if (!present)
      return std::vector<int64_t>(spatial, fill);
    if ((int64_t)v->size() != spatial) {
      (void)n.fail("attribute '" + name + "' needs " + Twine(spatial) + " values");
      return std::nullopt;
    }
    return v;
  };
  auto strides = listOr("strides", 1), dilations = listOr("dilations", 1),
       outputPadding = listOr("output_padding", 0);
  if (!strides || !dilations || !outputPadding)
    return failure();
  bool kernelPresent = false;
  auto kernel = n.attrInts("kernel_shape", &kernelPresent);
  if (!kernel)
    return failure();
  for (int64_t d = 0; d < spatial; ++d) {
    if (kernelPresent && (*kernel)[d] != wShape[d + 2])
      return n.fail("kernel_shape does not match the weight");
    if ((*strides)[d] < 1 || (*dilations)[d] < 1 || (*outputPadding)[d] < 0 ||
        (*outputPadding)[d] >= std::max((*strides)[d], (*dilations)[d]))
      return n.fail("strides and dilations must be positive and output_padding "
                    "smaller than the stride or dilation");
  }

  // Full output size before padding, then the pads by the attribute rules.
  std::vector<int64_t> full(spatial), pads(2 * spatial, 0);
  for (int64_t d = 0; d < spatial; ++d)
    full[d] = (*strides)[d] * (xShape[d + 2] - 1) + (*outputPadding)[d] +
              (wShape[d + 2] - 1) * (*dilations)[d] + 1;
  bool shapePresent = false;
  auto outputShape = n.attrInts("output_shape", &shapePresent);
  if (!outputShape)
    return failure();
  if (shapePresent || *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    if (shapePresent && (int64_t)outputShape->size() != spatial)
      return n.fail("output_shape needs " + Twine(spatial) + " values");
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t target = shapePresent ? (*outputShape)[d] : xShape[d + 2] * (*strides)[d];
      int64_t total = full[d] - target;
      if (total < 0) {
        // A larger output_shape adds rows at the end that only the bias
        // reaches, as output_padding does (and under the same bound).
        if ((*outputPadding)[d] - total >= std::max((*strides)[d], (*dilations)[d]))
          return n.fail("output_shape exceeds the transposed convolution by "
                        "at least the stride along spatial dim " + Twine(d));
        full[d] = target;
        continue;
      }
      bool upper = *autoPad == "SAME_UPPER";
      pads[d] = upper ? total / 2 : total - total / 2;
      pads[d + spatial] = total - pads[d];
    }
  } else if (*autoPad == "NOTSET") {
    bool present = false;
    auto given = n.attrInts("pads", &present);
    if (!given)
      return failure();
    if (present) {
      if ((int64_t)given->size() != 2 * spatial)
        return n.fail("attribute 'pads' needs " + Twine(2 * spatial) + " values");
      pads = *given;
    }
  } else if (*autoPad != "VALID") {
    return n.fail("unknown auto_pad '" + *autoPad + "'");
  }
  SmallVector<int64_t> outShape = {xShape[0], wShape[1] * *group};
  for (int64_t d = 0; d < spatial; ++d) {
    if (pads[d] < 0 || pads[d + spatial] < 0)
      return n.fail("negative pads are not supported");
    outShape.push_back(full[d] - pads[d] - pads[d + spatial]);
    if (outShape.back() < 1)
      return n.fail("the pads leave no output along spatial dim " + Twine(d));
  }

  Composer c(n);
  Operation *op = n.ic.createTyped<ConvBackwardDataOp>(
      n.loc, RankedTensorType::get(outShape, typeOf(x).getElementType()), x, w,
      n.b.getDenseI64ArrayAttr(*strides), n.b.getDenseI64ArrayAttr(pads),
      n.b.getDenseI64ArrayAttr(*dilations), n.b.getI64IntegerAttr(*group));
  if (!op)
    return n.failCreate("remat.conv_backward_data");
  Value y = op->getResult(0);
  if (bias) {
    SmallVector<int64_t> perChannel(outShape.size(), 1);
    perChannel[1] = outShape[1];
    y = c.op<AddOp>(y, c.reshape(bias, perChannel));
  }
  return c.ok() ? n.out(0, y) : failure();
}

/// GreaterOrEqual / LessOrEqual (opset 12, 16): the strict comparison or
/// equality, which is also false for NaN operands as ONNX requires.
template <typename StrictOp> LogicalResult importOrEqual(NodeImporter &n) {
  Value a = n.in(0, "A");
  Value b = a ? n.in(1, "B") : Value();
  if (!b)
    return failure();
  Composer c(n);
  Value y = c.op<OrOp>(c.op<StrictOp>(a, b), c.op<EqualOp>(a, b));
  return c.ok() ? n.out(0, y) : failure();
}

/// HardSwish (opset 14): x * HardSigmoid(x) with alpha 1/6, beta 0.5
/// (MobileNetV3's activation).
LogicalResult importHardSwish(NodeImporter &n) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  Composer c(n);
  Value gate = c.op<HardSigmoidOp>(x, n.b.getF64FloatAttr(1.0 / 6.0),
                                   n.b.getF64FloatAttr(0.5));
  Value y = c.op<MulOp>(x, gate);
  return c.ok() ? n.out(0, y) : failure();
}

/// ReduceSumSquare (opsets 1, 11, 13, 18): ReduceSum(X * X), with axes an
/// attribute before opset 18 and an input from 18 (NodeImporter::reduceAxes).
/// With noop_with_empty_axes and no axes the result is X * X: ONNX's
/// reference squares and then skips only the reduction.
LogicalResult importReduceSumSquare(NodeImporter &n) {
  Value x = n.in(0, "data");
  if (!x)
    return failure();
  bool noop = false;
  auto axes = n.reduceAxes(typeOf(x).getRank(), noop);
  auto keep = n.attrInt("keepdims", 1);
  if (!axes || !keep)
    return failure();
  Composer c(n);
  Value y = c.op<MulOp>(x, x);
  if (!noop)
    y = c.op<ReduceSumOp>(y, n.b.getDenseI64ArrayAttr(*axes),
                          n.b.getBoolAttr(*keep != 0));
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
      {"ConvTranspose", importConvTranspose},
      {"GreaterOrEqual", importOrEqual<GreaterOp>},
      {"LessOrEqual", importOrEqual<LessOp>},
      {"HardSwish", importHardSwish},
      {"ReduceSumSquare", importReduceSumSquare},
  };
  return table;
}

} // namespace remat::onnximport
