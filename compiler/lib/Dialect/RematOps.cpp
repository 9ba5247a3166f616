//===- RematOps.cpp - remat dialect operations ----------------------------===//
//
// Result-type inference, verifiers and folders. Type inference doubles as
// verification: ops with InferTypeOpInterface have their declared result
// types checked against the inferred ones.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace remat;

static RankedTensorType rankedType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

//===----------------------------------------------------------------------===//
// Constants and folders
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) == reshape(x): the layout is row-major throughout.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  return inferBroadcastResult(
      loc, {adaptor.getCondition(), adaptor.getOnTrue(), adaptor.getOnFalse()},
      rankedType(adaptor.getOnTrue()).getElementType(), types);
}

LogicalResult PReluOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  // The slope broadcasts to the input, never the other way (ONNX PRelu).
  auto input = rankedType(adaptor.getInput());
  auto slope = rankedType(adaptor.getSlope());
  if (!isBroadcastableTo(slope.getShape(), input.getShape()))
    return emitOptionalError(loc, "slope shape ", shapeString(slope.getShape()),
                             " does not broadcast to input shape ",
                             shapeString(input.getShape()));
  types.push_back(input);
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto type = rankedType(adaptor.getInput());
  types.push_back(type);
  types.push_back(type.clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = rankedType(adaptor.getLhs());
  auto rhs = rankedType(adaptor.getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "matmul operands must have rank >= 2, got ",
                             lhs.getRank(), " and ", rhs.getRank());
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  int64_t m = adaptor.getTransposeLhs() ? a[a.size() - 1] : a[a.size() - 2];
  int64_t ka = adaptor.getTransposeLhs() ? a[a.size() - 2] : a[a.size() - 1];
  int64_t kb = adaptor.getTransposeRhs() ? b[b.size() - 1] : b[b.size() - 2];
  int64_t n = adaptor.getTransposeRhs() ? b[b.size() - 2] : b[b.size() - 1];
  if (ka != kb)
    return emitOptionalError(loc, "matmul contraction sizes differ: ",
                             shapeString(a), " and ", shapeString(b));
  auto batch = broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (!batch)
    return emitOptionalError(loc, "matmul batch dims do not broadcast: ",
                             shapeString(a), " and ", shapeString(b));
  SmallVector<int64_t> shape = *batch;
  shape.push_back(m);
  shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range for rank "
                                    << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult CumSumOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "layer_norm axis ", axis,
                             " is out of range for rank ", input.getRank());
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  if (!isBroadcastableTo(rankedType(adaptor.getScale()).getShape(), normalized))
    return emitOptionalError(loc, "layer_norm scale does not broadcast to ",
                             shapeString(normalized));
  if (adaptor.getBias() &&
      !isBroadcastableTo(rankedType(adaptor.getBias()).getShape(), normalized))
    return emitOptionalError(loc, "layer_norm bias does not broadcast to ",
                             shapeString(normalized));
  SmallVector<int64_t> statShape(input.getShape());
  for (int64_t d = axis; d < input.getRank(); ++d)
    statShape[d] = 1;
  // Statistics are kept in at least fp32 (as ONNX's stash_type = 1).
  Type statElement = input.getElementType();
  if (statElement.getIntOrFloatBitWidth() < 32)
    statElement = Float32Type::get(input.getContext());
  types.push_back(input);
  types.push_back(RankedTensorType::get(statShape, statElement));
  types.push_back(RankedTensorType::get(statShape, statElement));
  return success();
}

/// BatchNorm per-channel operands are [C] for input [N, C, ...].
static LogicalResult checkChannelOperands(std::optional<Location> loc,
                                          RankedTensorType input,
                                          ArrayRef<Value> perChannel) {
  if (input.getRank() < 2)
    return emitOptionalError(loc, "batch_norm input must have rank >= 2");
  int64_t channels = input.getDimSize(1);
  for (Value v : perChannel) {
    auto t = rankedType(v);
    if (t.getRank() != 1 || t.getDimSize(0) != channels)
      return emitOptionalError(loc, "batch_norm per-channel operand has shape ",
                               shapeString(t.getShape()), ", expected ",
                               channels);
  }
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  if (failed(checkChannelOperands(
          loc, input,
          {adaptor.getScale(), adaptor.getBias(), adaptor.getRunningMean(),
           adaptor.getRunningVar()})))
    return failure();
  types.push_back(input);
  return success();
}

LogicalResult BatchNormTrainingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  if (failed(checkChannelOperands(
          loc, input,
          {adaptor.getScale(), adaptor.getBias(), adaptor.getRunningMean(),
           adaptor.getRunningVar()})))
    return failure();
  types.push_back(input);
  Type stats = adaptor.getRunningMean().getType();
  types.append(4, stats);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Checks window attributes against the input's spatial rank and computes
/// the output spatial sizes.
static LogicalResult
inferWindowShape(std::optional<Location> loc, StringRef opName,
                 RankedTensorType input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> dilations, bool ceilMode,
                 SmallVectorImpl<int64_t> &spatialOut) {
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || spatial > 3)
    return emitOptionalError(loc, opName,
                             " supports 1 to 3 spatial dims, input has rank ",
                             input.getRank());
  if ((int64_t)kernel.size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial || (int64_t)pads.size() != 2 * spatial)
    return emitOptionalError(
        loc, opName,
        " window attributes must have one entry per spatial dim (pads two)");
  for (int64_t d = 0; d < spatial; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 ||
        pads[d + spatial] < 0)
      return emitOptionalError(loc, opName,
                               " kernel, strides and dilations must be "
                               "positive and pads non-negative");
    int64_t out = windowOutputSize(input.getDimSize(d + 2), kernel[d],
                                   strides[d], pads[d], pads[d + spatial],
                                   dilations[d], ceilMode);
    if (out < 1)
      return emitOptionalError(loc, opName, " window of size ", kernel[d],
                               " does not fit spatial dim ", d, " of size ",
                               input.getDimSize(d + 2));
    spatialOut.push_back(out);
  }
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  auto weight = rankedType(adaptor.getWeight());
  int64_t group = adaptor.getGroup();
  if (weight.getRank() != input.getRank())
    return emitOptionalError(loc, "conv weight rank ", weight.getRank(),
                             " differs from input rank ", input.getRank());
  if (group < 1 || input.getDimSize(1) % group != 0 ||
      weight.getDimSize(0) % group != 0 ||
      weight.getDimSize(1) * group != input.getDimSize(1))
    return emitOptionalError(loc, "conv channels do not match: input ",
                             shapeString(input.getShape()), ", weight ",
                             shapeString(weight.getShape()), ", group ", group);
  if (adaptor.getBias()) {
    auto bias = rankedType(adaptor.getBias());
    if (bias.getRank() != 1 || bias.getDimSize(0) != weight.getDimSize(0))
      return emitOptionalError(loc, "conv bias must have shape [",
                               weight.getDimSize(0), "]");
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), weight.getDimSize(0)};
  if (failed(inferWindowShape(loc, "conv", input, weight.getShape().drop_front(2),
                              adaptor.getStrides(), adaptor.getPads(),
                              adaptor.getDilations(), /*ceilMode=*/false, shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  if (failed(inferWindowShape(loc, "max_pool", input, adaptor.getKernelShape(),
                              adaptor.getStrides(), adaptor.getPads(),
                              adaptor.getDilations(), adaptor.getCeilMode(),
                              shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  if (failed(inferWindowShape(loc, "average_pool", input,
                              adaptor.getKernelShape(), adaptor.getStrides(),
                              adaptor.getPads(), adaptor.getDilations(),
                              adaptor.getCeilMode(), shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  if (input.getRank() < 3)
    return emitOptionalError(loc, "global_average_pool input needs rank >= 3");
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t d = 2; d < input.getRank(); ++d)
    shape[d] = 1;
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getNumElements() != getType().getNumElements())
    return emitOpError("cannot reshape ")
           << shapeString(getInput().getType().getShape()) << " ("
           << getInput().getType().getNumElements() << " elements) to "
           << shapeString(getType().getShape()) << " ("
           << getType().getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if ((int64_t)perm.size() != input.getRank())
    return emitOptionalError(loc, "transpose permutation has ", perm.size(),
                             " entries for rank ", input.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return emitOptionalError(loc, "transpose permutation is not a "
                                    "permutation of [0, rank)");
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one input");
  auto first = rankedType(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "concat axis ", axis,
                             " is out of range for rank ", first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = rankedType(v);
    if (t.getRank() != first.getRank())
      return emitOptionalError(loc, "concat inputs differ in rank");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "concat inputs differ in dim ", d, ": ",
                                 shapeString(first.getShape()), " and ",
                                 shapeString(t.getShape()));
    shape[axis] += t.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::verify() {
  auto input = getInput().getType();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, input.getRank())))
    return failure();
  int64_t total = 0;
  for (Type t : getResultTypes()) {
    auto result = llvm::cast<RankedTensorType>(t);
    if (result.getElementType() != input.getElementType() ||
        result.getRank() != input.getRank())
      return emitOpError("results must have the input's rank and element type");
    for (int64_t d = 0; d < input.getRank(); ++d)
      if (d != axis && result.getDimSize(d) != input.getDimSize(d))
        return emitOpError("result dim ") << d << " differs from the input's";
    total += result.getDimSize(axis);
  }
  if (total != input.getDimSize(axis))
    return emitOpError("split sizes add up to ")
           << total << ", but the input's axis has size "
           << input.getDimSize(axis);
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    steps = adaptor.getSteps();
  int64_t rank = input.getRank();
  if ((int64_t)starts.size() != rank || (int64_t)limits.size() != rank ||
      (int64_t)steps.size() != rank)
    return emitOptionalError(loc, "slice needs one start, limit and step per "
                                  "dim");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    bool ok = steps[d] > 0
                  ? 0 <= starts[d] && starts[d] <= limits[d] && limits[d] <= size
                  : steps[d] < 0 && -1 <= limits[d] && limits[d] <= starts[d] &&
                        starts[d] <= size - 1;
    // An empty selection along a dim may use any in-range start.
    if (!ok && !(sliceCount(starts[d], limits[d], steps[d]) == 0 && steps[d] != 0))
      return emitOptionalError(loc, "slice dim ", d, " (size ", size,
                               ") has start ", starts[d], ", limit ",
                               limits[d], ", step ", steps[d],
                               ", which is not normalised");
    shape.push_back(sliceCount(starts[d], limits[d], steps[d]));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  auto indices = rankedType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "gather axis ", axis,
                             " is out of range for rank ", input.getRank());
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::verify() {
  std::optional<int64_t> padding = getPaddingIdx();
  if (!padding)
    return success();
  if (getAxis() != 0)
    return emitOpError("padding_idx needs axis 0 (an embedding lookup), got "
                       "axis ")
           << getAxis();
  const int64_t rows = getInput().getType().getDimSize(0);
  if (*padding < 0 || *padding >= rows)
    return emitOpError("padding_idx ")
           << *padding << " is not a row of the input (" << rows << " rows)";
  return success();
}

/// Checks pads (begins then ends, one of each per dim of `input`) and
/// computes the padded shape; see PadOp's description.
static LogicalResult padShape(std::optional<Location> loc, StringRef opName,
                              ArrayRef<int64_t> input, ArrayRef<int64_t> pads,
                              StringRef mode, SmallVectorImpl<int64_t> &shape) {
  int64_t rank = input.size();
  if ((int64_t)pads.size() != 2 * rank)
    return emitOptionalError(loc, opName, " needs 2 * rank = ", 2 * rank,
                             " pads, got ", pads.size());
  // Pads come from the model file: bound them before any arithmetic, so a
  // corrupt value is an error and not an overflow.
  constexpr int64_t kMaxPad = int64_t(1) << 48;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    if (std::abs(std::max<int64_t>(begin, -kMaxPad)) >= kMaxPad ||
        std::abs(std::max<int64_t>(end, -kMaxPad)) >= kMaxPad)
      return emitOptionalError(loc, opName, " pads ", begin, " and ", end,
                               " of dim ", d, " are out of range");
    int64_t kept = input[d] - std::max<int64_t>(0, -begin) -
                   std::max<int64_t>(0, -end);
    if (kept < 0)
      return emitOptionalError(loc, opName, " pads ", begin, " and ", end,
                               " crop more than the ", input[d],
                               " elements of dim ", d);
    int64_t size;
    if (llvm::AddOverflow(input[d], begin + end, size))
      return emitOptionalError(loc, opName, " pads ", begin, " and ", end,
                               " of dim ", d, " are out of range");
    if (mode != "constant" && kept == 0 && size > 0)
      return emitOptionalError(loc, opName, " mode '", mode, "' pads dim ", d,
                               ", which has no element to read");
    shape.push_back(size);
  }
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  SmallVector<int64_t> shape;
  if (failed(padShape(loc, "pad", input.getShape(), adaptor.getPads(),
                      adaptor.getMode(), shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult PadBackwardOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(padShape(getLoc(), "pad_backward", getType().getShape(),
                      getPads(), getMode(), shape)))
    return failure();
  if (getOutputGrad().getType().getElementType() != getType().getElementType())
    return emitOpError("output_grad and input_grad differ in element type");
  if (ArrayRef<int64_t>(shape) != getOutputGrad().getType().getShape())
    return emitOpError("input_grad ")
           << shapeString(getType().getShape()) << " padded is "
           << shapeString(shape) << ", but output_grad is "
           << shapeString(getOutputGrad().getType().getShape());
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if ((int64_t)repeats.size() != input.getRank())
    return emitOptionalError(loc, "tile needs one repeat per dim (",
                             input.getRank(), "), got ", repeats.size());
  SmallVector<int64_t> shape;
  int64_t elements = 1;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (repeats[d] < 0)
      return emitOptionalError(loc, "tile repeat ", repeats[d], " of dim ", d,
                               " is negative");
    // Repeats come from the model file: a corrupt one must be an error, not
    // an overflowing shape.
    int64_t size;
    if (llvm::MulOverflow(input.getDimSize(d), repeats[d], size) ||
        llvm::MulOverflow(elements, size, elements))
      return emitOptionalError(loc, "tile repeat ", repeats[d], " of dim ", d,
                               " makes the result too large");
    shape.push_back(size);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("input must have rank >= 2, got ")
           << getType().getRank();
  return success();
}

/// GatherElements operands: indices of the input's rank, no larger than it
/// along the other dims.
static LogicalResult checkGatherElements(std::optional<Location> loc,
                                         StringRef opName,
                                         RankedTensorType input,
                                         RankedTensorType indices,
                                         int64_t axis) {
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, opName, " axis ", axis,
                             " is out of range for rank ", input.getRank());
  if (indices.getRank() != input.getRank())
    return emitOptionalError(loc, opName, " indices have rank ",
                             indices.getRank(), ", the input ",
                             input.getRank());
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > input.getDimSize(d))
      return emitOptionalError(loc, opName, " indices ",
                               shapeString(indices.getShape()),
                               " exceed the input ",
                               shapeString(input.getShape()), " along dim ", d);
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  auto indices = rankedType(adaptor.getIndices());
  if (failed(checkGatherElements(loc, "gather_elements", input, indices,
                                 adaptor.getAxis())))
    return failure();
  types.push_back(indices.clone(input.getElementType()));
  return success();
}

LogicalResult GatherElementsBackwardOp::verify() {
  if (failed(checkGatherElements(getLoc(), "gather_elements_backward",
                                 getType(), getIndices().getType(),
                                 getAxis())))
    return failure();
  auto dy = getOutputGrad().getType();
  if (dy.getElementType() != getType().getElementType() ||
      dy.getShape() != getIndices().getType().getShape())
    return emitOpError("output_grad must have the indices' shape and "
                       "input_grad's element type");
  return success();
}

LogicalResult ExpandOp::verify() {
  if (!isBroadcastableTo(getInput().getType().getShape(), getType().getShape()))
    return emitOpError("cannot broadcast ")
           << shapeString(getInput().getType().getShape()) << " to "
           << shapeString(getType().getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// scores/input [N, C, d...], labels [N, d...], weights [C].
static LogicalResult inferLossShape(std::optional<Location> loc,
                                    StringRef opName, Value scores,
                                    Value labels, Value weights,
                                    StringRef reduction,
                                    SmallVectorImpl<Type> &types) {
  auto s = rankedType(scores);
  auto l = rankedType(labels);
  if (s.getRank() < 2)
    return emitOptionalError(loc, opName, " scores must have rank >= 2");
  SmallVector<int64_t> expected{s.getDimSize(0)};
  llvm::append_range(expected, s.getShape().drop_front(2));
  if (l.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, opName, " labels have shape ",
                             shapeString(l.getShape()), ", expected ",
                             shapeString(expected));
  if (weights) {
    auto w = rankedType(weights);
    if (w.getRank() != 1 || w.getDimSize(0) != s.getDimSize(1))
      return emitOptionalError(loc, opName, " weights must have shape [",
                               s.getDimSize(1), "]");
  }
  if (reduction == "none")
    types.push_back(RankedTensorType::get(expected, s.getElementType()));
  else
    types.push_back(RankedTensorType::get({}, s.getElementType()));
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(inferLossShape(loc, "softmax_cross_entropy_loss",
                            adaptor.getScores(), adaptor.getLabels(),
                            adaptor.getWeights(), adaptor.getReduction(), types)))
    return failure();
  types.push_back(adaptor.getScores().getType());
  return success();
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferLossShape(loc, "nll_loss", adaptor.getInput(),
                        adaptor.getTarget(), adaptor.getWeights(),
                        adaptor.getReduction(), types);
}

#define GET_OP_CLASSES
#include "remat/Dialect/RematOps.cpp.inc"
