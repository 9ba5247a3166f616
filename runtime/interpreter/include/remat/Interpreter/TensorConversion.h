//===- TensorConversion.h - MLIR types and attributes <-> runtime -*- C++ -*-===//
//
// The mapping between MLIR element types and runtime dtypes
// (f32 f64 f16 bf16 i64 i32 i8 ui8 i1 <-> F32 F64 F16 BF16 I64 I32 I8 U8
// Bool), and the conversion of constant attributes (DenseElementsAttr,
// DenseResourceElementsAttr) into runtime tensors.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERPRETER_TENSORCONVERSION_H
#define REMAT_INTERPRETER_TENSORCONVERSION_H

#include "remat/runtime/Tensor.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace remat {

/// The runtime dtype of an MLIR element type, or nullopt if there is none.
std::optional<rt::DType> dtypeFromType(mlir::Type elementType);

/// The MLIR element type of a runtime dtype.
mlir::Type typeFromDType(rt::DType dtype, mlir::MLIRContext *context);

/// dtype and static shape of a ranked tensor type; throws InterpreterError
/// for dynamic shapes or unsupported element types.
rt::DType dtypeOf(mlir::ShapedType type);
rt::Shape shapeOf(mlir::ShapedType type);

/// "tensor<2x3xf32>"-style text for messages.
std::string typeToString(mlir::Type type);

/// Converts a constant's value into an owned tensor of its type's dtype and
/// shape. Handles DenseElementsAttr (splat or not) and
/// DenseResourceElementsAttr; throws InterpreterError otherwise (and for a
/// resource whose blob is missing or has the wrong size).
rt::Tensor tensorFromElementsAttr(mlir::ElementsAttr attr);

} // namespace remat

#endif // REMAT_INTERPRETER_TENSORCONVERSION_H
