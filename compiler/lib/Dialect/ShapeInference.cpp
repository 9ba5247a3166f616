//===- ShapeInference.cpp - Result-shape rules shared by ops --------------===//

#include "remat/Dialect/ShapeInference.h"

#include "mlir/IR/Diagnostics.h"

#include <algorithm>

using namespace mlir;

namespace remat {

std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the trailing dimension.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

bool isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   llvm::ArrayRef<Value> operands,
                                   Type resultElement,
                                   llvm::SmallVectorImpl<Type> &types) {
  llvm::SmallVector<int64_t> shape;
  for (Value operand : operands) {
    auto type = llvm::dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return emitOptionalError(loc, "operands must be ranked tensors");
    auto merged = broadcastShapes(shape, type.getShape());
    if (!merged)
      return emitOptionalError(loc, "operand shapes ", shapeString(shape),
                               " and ", shapeString(type.getShape()),
                               " do not broadcast");
    shape = *merged;
  }
  if (!resultElement)
    resultElement =
        llvm::cast<ShapedType>(operands.front().getType()).getElementType();
  types.push_back(RankedTensorType::get(shape, resultElement));
  return success();
}

LogicalResult inferReduceResult(std::optional<Location> loc, Value input,
                                llvm::ArrayRef<int64_t> axes, bool keepdims,
                                llvm::SmallVectorImpl<Type> &types) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitOptionalError(loc, "reduction axis ", axes[i],
                               " is out of range for rank ", rank);
    if (i > 0 && axes[i] <= axes[i - 1])
      return emitOptionalError(loc, "reduction axes must be sorted and unique");
  }
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (!reduced)
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

int64_t windowOutputSize(int64_t inputSize, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = inputSize + padBegin + padEnd - span;
  if (room < 0)
    return 0;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // With ceil_mode, the last window must start inside the input or the
  // leading padding (PyTorch and ONNX drop a window starting in end padding).
  if (ceilMode && (out - 1) * stride >= inputSize + padBegin)
    --out;
  return out;
}

int64_t sliceCount(int64_t start, int64_t limit, int64_t step) {
  if (step > 0)
    return limit > start ? (limit - start + step - 1) / step : 0;
  return start > limit ? (start - limit + (-step) - 1) / (-step) : 0;
}

std::optional<llvm::SmallVector<int64_t>>
gatherNDShape(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices,
              int64_t batchDims, std::string &error) {
  const int64_t r = data.size(), q = indices.size();
  if (q < 1) {
    error = "indices must have rank >= 1";
    return std::nullopt;
  }
  if (batchDims < 0 || batchDims >= q || batchDims >= r) {
    error = "batch_dims " + std::to_string(batchDims) +
            " must be below the ranks of the input (" + std::to_string(r) +
            ") and the indices (" + std::to_string(q) + ")";
    return std::nullopt;
  }
  const int64_t depth = indices.back();
  if (depth < 1 || depth > r - batchDims) {
    error = "index tuples of " + std::to_string(depth) +
            " coordinates do not fit the input " + shapeString(data) +
            " after " + std::to_string(batchDims) + " batch dims";
    return std::nullopt;
  }
  if (data.take_front(batchDims) != indices.take_front(batchDims)) {
    error = "batch dims of the input " + shapeString(data.take_front(batchDims)) +
            " and the indices " + shapeString(indices.take_front(batchDims)) +
            " differ";
    return std::nullopt;
  }
  llvm::SmallVector<int64_t> shape(indices.drop_back());
  shape.append(data.begin() + batchDims + depth, data.end());
  return shape;
}

} // namespace remat
