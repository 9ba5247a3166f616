//===- IndexingOps.cpp - gather_nd, scatter_nd, resize and their backward -===//
//
// Shape rules of the N-dimensional indexing and resampling ops
// (RematIndexingOps.td). GatherND's result shape is the shared rule of
// ShapeInference.h, which the importer's constant folder also uses; the
// backward ops check that their operands are what the forward op had.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace remat;

static RankedTensorType rankedType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto input = rankedType(adaptor.getInput());
  auto indices = rankedType(adaptor.getIndices());
  std::string error;
  auto shape = gatherNDShape(input.getShape(), indices.getShape(),
                             adaptor.getBatchDims(), error);
  if (!shape)
    return emitOptionalError(loc, "gather_nd ", error);
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult GatherNDBackwardOp::verify() {
  std::string error;
  auto shape = gatherNDShape(getType().getShape(),
                             getIndices().getType().getShape(), getBatchDims(),
                             error);
  if (!shape)
    return emitOpError() << error;
  auto dy = getOutputGrad().getType();
  if (dy.getShape() != ArrayRef<int64_t>(*shape) ||
      dy.getElementType() != getType().getElementType())
    return emitOpError("output_grad must be the gathered ")
           << shapeString(*shape) << " tensor of input_grad's element type, got "
           << dy;
  return success();
}

LogicalResult ScatterNDOp::verify() {
  std::string error;
  auto shape = gatherNDShape(getInput().getType().getShape(),
                             getIndices().getType().getShape(),
                             /*batchDims=*/0, error);
  if (!shape)
    return emitOpError() << error;
  auto updates = getUpdates().getType();
  if (updates.getShape() != ArrayRef<int64_t>(*shape) ||
      updates.getElementType() != getType().getElementType())
    return emitOpError("updates must be ")
           << shapeString(*shape) << " of the input's element type, got "
           << updates;
  if (getReduction() != "none" && getType().getElementType().isInteger(1))
    return emitOpError("reduction '")
           << getReduction() << "' needs numbers, not booleans";
  return success();
}

/// Resize and its backward: `in` the forward input, `out` its output.
static LogicalResult checkResize(Operation *op, RankedTensorType in,
                                 RankedTensorType out, StringRef mode,
                                 ArrayRef<double> scales) {
  if (in.getRank() != out.getRank())
    return op->emitOpError("input rank ")
           << in.getRank() << " and output rank " << out.getRank() << " differ";
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("input and output element types differ");
  if (static_cast<int64_t>(scales.size()) != in.getRank())
    return op->emitOpError("needs one scale per dim (")
           << in.getRank() << "), got " << scales.size();
  for (auto [d, scale] : llvm::enumerate(scales))
    if (!(scale > 0) || !std::isfinite(scale))
      return op->emitOpError("scale ") << scale << " of dim " << d
                                       << " is not positive";
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (in.getDimSize(d) == 0 && out.getDimSize(d) != 0)
      return op->emitOpError("dim ") << d << " resizes an empty input";
  if (mode != "nearest" && !llvm::isa<FloatType>(in.getElementType()))
    return op->emitOpError(mode)
           << " mode needs a float element type, got " << in.getElementType();
  return success();
}

LogicalResult ResizeOp::verify() {
  return checkResize(*this, getInput().getType(), getType(), getMode(),
                     getScales());
}

LogicalResult ResizeBackwardOp::verify() {
  return checkResize(*this, getType(), getOutputGrad().getType(), getMode(),
                     getScales());
}
