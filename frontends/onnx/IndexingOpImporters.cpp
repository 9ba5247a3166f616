//===- IndexingOpImporters.cpp - GatherND, ScatterND, Resize, Upsample ----===//
//
// The ONNX ops that import as the N-dimensional indexing and resampling ops
// of compiler/include/remat/Dialect/RematIndexingOps.td. Resize's scales,
// sizes, axes and roi, and Upsample's scales, must be compile-time values:
// they give the result's static shape. What the dialect op cannot express
// (antialiasing, TensorFlow's coordinate modes) is refused by name with the
// reason.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/Kernels.h"

#include <cmath>
#include <sstream>

using namespace mlir;

namespace remat::onnximport {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

LogicalResult importGatherND(NodeImporter &n) {
  Value data = n.in(0, "data");
  Value indices = data ? n.in(1, "indices") : Value();
  auto batchDims = indices ? n.attrInt("batch_dims", 0) : std::nullopt;
  if (!batchDims)
    return failure();
  Operation *op = n.ic.create<GatherNDOp>(n.loc, data, indices,
                                          n.b.getI64IntegerAttr(*batchDims));
  return op ? n.out(0, op->getResult(0)) : n.failCreate("remat.gather_nd");
}

LogicalResult importScatterND(NodeImporter &n) {
  Value data = n.in(0, "data");
  Value indices = data ? n.in(1, "indices") : Value();
  Value updates = indices ? n.in(2, "updates") : Value();
  auto reduction = updates ? n.attrString("reduction", "none") : std::nullopt;
  if (!reduction)
    return failure();
  bool known = *reduction == "none" || *reduction == "add" ||
               *reduction == "mul" || *reduction == "max" ||
               *reduction == "min";
  if (!known)
    return n.fail("unknown reduction '" + *reduction + "'");
  if ((*reduction == "max" || *reduction == "min") && n.ic.opset < 18)
    return n.fail("reduction '" + *reduction + "' needs opset 18");
  Operation *op = n.ic.createTyped<ScatterNDOp>(
      n.loc, typeOf(data), data, indices, updates,
      n.b.getStringAttr(*reduction));
  return op ? n.out(0, op->getResult(0)) : n.failCreate("remat.scatter_nd");
}

/// The float values of a compile-time input (Resize's scales and roi).
std::optional<std::vector<double>> floatsInput(NodeImporter &n, int i,
                                               StringRef what) {
  const rt::Tensor *t = n.known(i, what);
  if (!t)
    return std::nullopt;
  if (!rt::isFloat(t->dtype())) {
    (void)n.fail("input '" + what + "' must be a float tensor, got " +
                 rt::dtypeName(t->dtype()));
    return std::nullopt;
  }
  rt::Tensor d(rt::DType::F64, {t->numel()});
  rt::cast(t->view(), d.view());
  return std::vector<double>(d.as<double>(), d.as<double>() + t->numel());
}

/// `value` with 6 significant digits, for messages (0.6, -2, nan).
std::string shortNumber(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

/// What a Resize or Upsample node asks for, before it becomes remat.resize.
struct ResizeRequest {
  std::string mode = "nearest";
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  std::vector<double> scales; // one per dim, or empty when sizes are given
  std::vector<int64_t> sizes;  // one per dim, or empty when scales are given
  std::string aspectPolicy = "stretch";
  std::vector<int64_t> axes;   // the dims scales/sizes refer to
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
};

/// Builds remat.resize from a request: the output size and the scale of
/// each dim as ONNX's reference computes them.
LogicalResult buildResize(NodeImporter &n, Value x, ResizeRequest r) {
  auto type = typeOf(x);
  const int64_t rank = type.getRank();
  ArrayRef<int64_t> in = type.getShape();
  const size_t given = r.scales.empty() ? r.sizes.size() : r.scales.size();
  if (given != r.axes.size())
    return n.fail(Twine(r.scales.empty() ? "sizes" : "scales") + " has " +
                  Twine(given) + " values for " + Twine(r.axes.size()) +
                  " resized dims");
  SmallVector<double> scales(rank, 1.0);
  SmallVector<int64_t> out(in);
  if (!r.scales.empty()) {
    if (r.aspectPolicy != "stretch")
      return n.fail("keep_aspect_ratio_policy '" + r.aspectPolicy +
                    "' needs sizes, not scales");
    for (auto [k, d] : llvm::enumerate(r.axes)) {
      double scale = r.scales[k];
      if (!(scale > 0) || !std::isfinite(scale))
        return n.fail("scale " + Twine(shortNumber(scale)) + " of dim " + Twine(d) +
                      " must be positive");
      double size = std::floor(scale * static_cast<double>(in[d]));
      if (!(size < 1e15))
        return n.fail("scale " + Twine(shortNumber(scale)) + " of dim " + Twine(d) +
                      " makes the output too large");
      scales[d] = scale;
      out[d] = static_cast<int64_t>(size);
    }
  } else {
    for (auto [k, d] : llvm::enumerate(r.axes)) {
      if (r.sizes[k] < 0)
        return n.fail("size " + Twine(r.sizes[k]) + " of dim " + Twine(d) +
                      " is negative");
      if (in[d] == 0)
        return n.fail("dim " + Twine(d) + " of the input is empty");
      scales[d] = static_cast<double>(r.sizes[k]) / static_cast<double>(in[d]);
      out[d] = r.sizes[k];
    }
    if (r.aspectPolicy == "not_larger" || r.aspectPolicy == "not_smaller") {
      // One scale for every resized dim, the sizes rounded half up.
      double scale = scales[r.axes.front()];
      for (int64_t d : r.axes)
        scale = r.aspectPolicy == "not_larger" ? std::min(scale, scales[d])
                                               : std::max(scale, scales[d]);
      for (int64_t d : r.axes) {
        scales[d] = scale;
        out[d] = static_cast<int64_t>(scale * static_cast<double>(in[d]) + 0.5);
      }
    } else if (r.aspectPolicy != "stretch") {
      return n.fail("unknown keep_aspect_ratio_policy '" + r.aspectPolicy +
                    "'");
    }
  }
  auto dtype = dtypeFor(type.getElementType());
  if (!dtype || !shapeIsSane(out, *dtype))
    return n.fail("the output " + shapeString(out) + " is too large");
  if (r.mode != "nearest" && !llvm::isa<FloatType>(type.getElementType()))
    return n.fail(r.mode + " mode needs a float input");
  Operation *op = n.ic.createTyped<ResizeOp>(
      n.loc, RankedTensorType::get(out, type.getElementType()), x,
      n.b.getStringAttr(r.mode), n.b.getStringAttr(r.coordinates),
      n.b.getStringAttr(r.nearest), n.b.getDenseF64ArrayAttr(scales),
      n.b.getF64FloatAttr(r.cubicCoeffA), n.b.getBoolAttr(r.excludeOutside));
  return op ? n.out(0, op->getResult(0)) : n.failCreate("remat.resize");
}

/// Resize-10 and Upsample have no coordinate modes: they read as PyTorch's
/// upsampling did when it exported them, at o / scale (asymmetric), the
/// nearest mode rounding down.
ResizeRequest legacyResize(const std::string &mode, int64_t rank) {
  ResizeRequest r;
  r.mode = mode;
  r.coordinates = "asymmetric";
  r.nearest = "floor";
  for (int64_t d = 0; d < rank; ++d)
    r.axes.push_back(d);
  return r;
}

/// The mode attribute of Resize-10 and Upsample: nearest or linear
/// (Upsample-7's `bilinear` is linear).
std::optional<std::string> legacyMode(NodeImporter &n) {
  auto mode = n.attrString("mode", "nearest");
  if (!mode)
    return std::nullopt;
  if (*mode == "bilinear")
    return std::string("linear");
  if (*mode != "nearest" && *mode != "linear") {
    (void)n.fail("mode '" + *mode + "' is not supported (nearest and linear "
                 "are)");
    return std::nullopt;
  }
  return mode;
}

/// Upsample (opsets 7-9; deprecated in 10): scales as an attribute (7) or
/// an input (9).
LogicalResult importUpsample(NodeImporter &n) {
  Value x = n.in(0, "X");
  auto mode = x ? legacyMode(n) : std::nullopt;
  if (!mode)
    return failure();
  ResizeRequest r = legacyResize(*mode, typeOf(x).getRank());
  if (n.ic.opset < 9) {
    const onnx::AttributeProto *a = n.attr("scales");
    if (!a || a->type() != onnx::AttributeProto::FLOATS)
      return n.fail("attribute 'scales' must be a list of floats");
    r.scales.assign(a->floats().begin(), a->floats().end());
  } else {
    auto scales = floatsInput(n, 1, "scales");
    if (!scales)
      return failure();
    r.scales = *scales;
  }
  return buildResize(n, x, r);
}

/// Resize-10 (X, scales), Resize-11/13 (X, roi, scales, sizes) and
/// Resize-18/19 (axes, keep_aspect_ratio_policy, antialias).
LogicalResult importResize(NodeImporter &n) {
  Value x = n.in(0, "X");
  if (!x)
    return failure();
  const int64_t rank = typeOf(x).getRank();
  if (n.ic.opset < 11) {
    auto mode = legacyMode(n);
    auto scales = mode ? floatsInput(n, 1, "scales") : std::nullopt;
    if (!scales)
      return failure();
    ResizeRequest r = legacyResize(*mode, rank);
    r.scales = *scales;
    return buildResize(n, x, r);
  }
  ResizeRequest r;
  auto mode = n.attrString("mode", "nearest");
  auto coordinates = n.attrString("coordinate_transformation_mode", "half_pixel");
  auto nearest = n.attrString("nearest_mode", "round_prefer_floor");
  auto policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  auto antialias = n.attrInt("antialias", 0);
  auto cubicCoeffA = n.attrFloat("cubic_coeff_a", -0.75);
  auto excludeOutside = n.attrInt("exclude_outside", 0);
  bool hasAxes = false;
  auto axes = n.attrInts("axes", &hasAxes);
  if (!mode || !coordinates || !nearest || !policy || !antialias ||
      !cubicCoeffA || !excludeOutside || !axes)
    return failure();
  if (*mode != "nearest" && *mode != "linear" && *mode != "cubic")
    return n.fail("unknown mode '" + *mode + "'");
  if (!std::isfinite(*cubicCoeffA))
    return n.fail("cubic_coeff_a is not finite");
  if (*coordinates == "tf_crop_and_resize")
    return n.fail("coordinate_transformation_mode 'tf_crop_and_resize' is "
                  "not supported: TensorFlow's crop-and-resize (roi and "
                  "extrapolation), which no PyTorch export writes");
  if (*coordinates == "tf_half_pixel_for_nn")
    return n.fail("coordinate_transformation_mode 'tf_half_pixel_for_nn' is "
                  "not supported: a TensorFlow mode ONNX removed in opset 13");
  if (*coordinates != "half_pixel" && *coordinates != "half_pixel_symmetric" &&
      *coordinates != "pytorch_half_pixel" && *coordinates != "align_corners" &&
      *coordinates != "asymmetric")
    return n.fail("unknown coordinate_transformation_mode '" + *coordinates +
                  "'");
  if (*nearest != "round_prefer_floor" && *nearest != "round_prefer_ceil" &&
      *nearest != "floor" && *nearest != "ceil")
    return n.fail("unknown nearest_mode '" + *nearest + "'");
  r.mode = *mode;
  r.coordinates = *coordinates;
  r.nearest = *nearest;
  r.aspectPolicy = *policy;
  r.cubicCoeffA = *cubicCoeffA;
  r.excludeOutside = *excludeOutside != 0;
  if (hasAxes) {
    for (int64_t a : *axes) {
      auto d = n.axis(a, rank, "axis");
      if (!d)
        return failure();
      if (llvm::is_contained(r.axes, *d))
        return n.fail("axis " + Twine(a) + " is repeated in 'axes'");
      r.axes.push_back(*d);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      r.axes.push_back(d);
  }
  // Scales (input 2) or sizes (input 3): the one given and not empty.
  if (n.has(2)) {
    auto scales = floatsInput(n, 2, "scales");
    if (!scales)
      return failure();
    r.scales = *scales;
  }
  if (n.has(3)) {
    const rt::Tensor *t = n.known(3, "sizes");
    auto sizes = t ? n.ints(*t, "sizes") : std::nullopt;
    if (!sizes)
      return failure();
    r.sizes = *sizes;
  }
  if (r.scales.empty() == r.sizes.empty())
    return n.fail("exactly one of 'scales' and 'sizes' must be given");
  if (*antialias != 0 && r.mode != "nearest") {
    // Antialiasing changes only a downscaled dim's filter.
    bool downscales = false;
    for (auto [k, d] : llvm::enumerate(r.axes))
      downscales |= r.scales.empty()
                        ? r.sizes[k] < typeOf(x).getDimSize(d)
                        : r.scales[k] < 1.0;
    if (downscales)
      return n.fail("antialias is not supported: downscaling with an "
                    "antialiasing filter (F.interpolate(antialias=True)) is "
                    "not implemented");
  }
  return buildResize(n, x, r);
}

} // namespace

const llvm::StringMap<OpHandler> &indexingOpHandlers() {
  static const llvm::StringMap<OpHandler> table = {
      {"GatherND", importGatherND},
      {"ScatterND", importScatterND},
      {"Resize", importResize},
      {"Upsample", importUpsample},
  };
  return table;
}

} // namespace remat::onnximport
