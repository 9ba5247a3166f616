//===- ReverseMode.h - Reverse-mode differentiation of remat ops -*- C++ -*-===//
//
// The reverse sweep shared by the remat-autodiff pass (training steps) and
// the ONNX importer (ai.onnx.preview.training Gradient nodes).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_AUTODIFF_REVERSEMODE_H
#define REMAT_AUTODIFF_REVERSEMODE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace remat {

/// Values that depend, through differentiable ops among `ops` (in program
/// order), on one of `sources`. Only float-typed results are active.
llvm::DenseSet<mlir::Value> activeValues(llvm::ArrayRef<mlir::Operation *> ops,
                                         llvm::ArrayRef<mlir::Value> sources);

/// Builds, at the builder's insertion point, the gradients of the seeded
/// values with respect to every active value: walks `ops` backwards asking
/// each for its vector-Jacobian product (DifferentiableOpInterface) and sums
/// the contributions to values used several times. `seeds` maps values to
/// their cotangents (e.g. the loss to 1.0). On return `gradients` holds the
/// gradient of each active value that reaches a seed. Fails, with an error
/// on the op, if an op on the path has no gradient rule.
mlir::LogicalResult
buildGradients(mlir::OpBuilder &builder, llvm::ArrayRef<mlir::Operation *> ops,
               const llvm::DenseSet<mlir::Value> &active,
               llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> seeds,
               llvm::DenseMap<mlir::Value, mlir::Value> &gradients);

} // namespace remat

#endif // REMAT_AUTODIFF_REVERSEMODE_H
