//===- DifferentiableOpInterface.td - Ops that state their gradient -------===//
//
// Reverse-mode autodiff asks each op for its vector-Jacobian product; there
// is no central switch over op kinds. An op that does not implement the
// interface is not differentiable (integer ops, comparisons, constants).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIFFERENTIABLE_OP_INTERFACE
#define REMAT_DIFFERENTIABLE_OP_INTERFACE

include "mlir/IR/OpBase.td"

def Remat_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::remat";
  let description = [{
    `buildGradient` emits, at the builder's insertion point, the ops that
    compute the gradient of the loss with respect to each operand that
    `needsGradient` marks, given the gradients of the op's results
    (`resultGradients[i]` is null for a result that does not reach the loss).
    It appends exactly one value per operand to `operandGradients`: the
    gradient, with the operand's type (broadcasts already reduced), or null
    where no gradient is needed or defined.
  }];
  let methods = [
    InterfaceMethod<"Builds the vector-Jacobian product of this op.",
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGradients,
           "::llvm::ArrayRef<bool>":$needsGradient,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

def Remat_Differentiable
    : DeclareOpInterfaceMethods<Remat_DifferentiableOpInterface>;

#endif // REMAT_DIFFERENTIABLE_OP_INTERFACE
