//===- GradientUtils.h - Helpers shared by the ops' gradient rules --------===//

#ifndef REMAT_DIALECT_GRADIENTS_GRADIENTUTILS_H
#define REMAT_DIALECT_GRADIENTS_GRADIENTUTILS_H

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Builders.h"

namespace remat {

/// A 0-d constant of `elementType` holding `value` (broadcasts anywhere).
mlir::Value scalarConstant(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Type elementType, double value);

/// A zero tensor of `type` (a splat constant; no data is materialised).
mlir::Value zeros(mlir::OpBuilder &builder, mlir::Location loc,
                  mlir::RankedTensorType type);

/// Sums `grad` over the dims along which a value of type `target` was
/// broadcast to produce it, and reshapes to `target` (numpy broadcasting in
/// reverse). Returns `grad` unchanged when the shapes already agree.
mlir::Value reduceToShape(mlir::OpBuilder &builder, mlir::Location loc,
                          mlir::Value grad, mlir::RankedTensorType target);

/// Broadcasts `value` to `target`'s shape (no-op when equal).
mlir::Value expandTo(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Value value, mlir::RankedTensorType target);

/// Reshapes `value` to `shape`, keeping its element type (no-op when equal).
mlir::Value reshapeTo(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value value, llvm::ArrayRef<int64_t> shape);

/// Casts a boolean mask to `elementType` (1 where true, 0 where false).
mlir::Value maskToFloat(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value mask, mlir::Type elementType);

/// The element type of a ranked tensor value.
mlir::Type elementTypeOf(mlir::Value value);
mlir::RankedTensorType tensorTypeOf(mlir::Value value);

} // namespace remat

#endif // REMAT_DIALECT_GRADIENTS_GRADIENTUTILS_H
