//===- ShapeInference.h - Result-shape rules shared by ops ------*- C++ -*-===//
//
// The shape rules here are used both by the ops' type inference (verifiers)
// and by the ONNX importer, so the two can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_SHAPEINFERENCE_H
#define REMAT_DIALECT_SHAPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace remat {

/// "2x3x4" ("scalar" for rank 0), for diagnostics.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Numpy broadcast of two shapes; std::nullopt when incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// True when `from` broadcasts to exactly `to`.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// Result type of an elementwise op over `operands`: the broadcast shape,
/// with `resultElement` (or the first operand's element type if null).
mlir::LogicalResult inferBroadcastResult(std::optional<mlir::Location> loc,
                                         llvm::ArrayRef<mlir::Value> operands,
                                         mlir::Type resultElement,
                                         llvm::SmallVectorImpl<mlir::Type> &types);

/// Result type of a reduction over sorted, unique, in-range `axes`.
mlir::LogicalResult inferReduceResult(std::optional<mlir::Location> loc,
                                      mlir::Value input,
                                      llvm::ArrayRef<int64_t> axes,
                                      bool keepdims,
                                      llvm::SmallVectorImpl<mlir::Type> &types);

/// Output spatial size of a convolution or pooling window along one dim.
int64_t windowOutputSize(int64_t inputSize, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode);

/// Number of elements a normalised slice (see remat.slice) selects.
int64_t sliceCount(int64_t start, int64_t limit, int64_t step);

/// Result shape of ONNX GatherND (remat.gather_nd): indices.shape[:-1] +
/// data.shape[batchDims + k:] with k = indices.shape[-1]; std::nullopt with
/// `error` set when the operands do not fit.
std::optional<llvm::SmallVector<int64_t>>
gatherNDShape(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices,
              int64_t batchDims, std::string &error);

} // namespace remat

#endif // REMAT_DIALECT_SHAPEINFERENCE_H
