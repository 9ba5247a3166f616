//===- ImportContext.h - State shared while importing one ONNX graph -*- C++ -*-===//
//
// The value map (ONNX name -> SSA value and/or compile-time constant), error
// reporting, locations, and a builder helper that creates type-inferring ops
// without aborting when inference fails.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNX_IMPORTCONTEXT_H
#define REMAT_FRONTEND_ONNX_IMPORTCONTEXT_H

#include "remat/Frontend/OnnxImporter.h"
#include "remat/runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat::onnximport {

/// Elements above which a fully constant node is not folded at import.
constexpr int64_t kMaxFoldElements = 65536;
/// Largest tensor (in bytes) the importer accepts anywhere.
constexpr double kMaxTensorBytes = 1099511627776.0; // 2^40

struct SequenceValue;

/// What is known about one ONNX value.
struct ValueEntry {
  /// The SSA value, if materialized (block argument, op result, constant).
  mlir::Value value;
  /// A compile-time value, if known.
  std::shared_ptr<rt::Tensor> constant;
  /// True when `constant` may be used for opportunistic folding (Constant
  /// nodes, folded results, Shape/Size). Weights and test-provided input
  /// values are only used where a compile-time value is required.
  bool foldable = false;
  /// An integer initializer: exporters that fold constants store Reshape
  /// targets and axes this way, so small ones fold like Constant nodes.
  bool integerInitializer = false;
  /// Lazily decoded initializer / input value (see constant()).
  const onnx::TensorProto *proto = nullptr;
  /// The function argument index, or -1.
  int argIndex = -1;
  /// The argument this value is (an alias of), for bookkeeping of
  /// compile-time uses of argument data.
  std::string argName;
  /// Set for an ONNX sequence (SequenceConstruct, SplitToSequence, ...),
  /// which exists only while importing: a list of tensor entries.
  std::shared_ptr<const SequenceValue> sequence;
};

/// An ONNX sequence as the importer resolves it: its elements, in order,
/// each an entry like any tensor value, and their element type.
struct SequenceValue {
  rt::DType dtype = rt::DType::F32;
  std::vector<ValueEntry> elements;
};

/// mlir element type <-> runtime dtype.
mlir::Type elementTypeFor(mlir::MLIRContext *ctx, rt::DType dtype);
std::optional<rt::DType> dtypeFor(mlir::Type type);
/// ONNX TensorProto data type -> runtime dtype (nullopt if unsupported).
std::optional<rt::DType> dtypeFromOnnxType(int onnxType);

/// The shape and element type of a value known either way.
struct TypeInfo {
  rt::DType dtype = rt::DType::F32;
  rt::Shape shape;
};

class ImportContext {
public:
  ImportContext(mlir::MLIRContext &ctx, const onnx::ModelProto &model,
                std::string file, std::string modelDir,
                const OnnxImportOptions &options);

  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  const onnx::ModelProto &model;
  std::string file;     // as given, for messages
  std::string modelDir; // for external data
  const OnnxImportOptions &options;
  int64_t opset = 1;    // default-domain opset
  /// Opset of ai.onnx.preview.training; 0 when the model does not import it.
  int64_t trainingOpset = 0;
  /// The model was exported by PyTorch: ops whose ONNX spec differs from
  /// PyTorch's behaviour (BatchNorm's running variance) follow PyTorch, so
  /// that training matches the framework the model came from.
  bool fromPyTorch = false;
  int64_t nextDropoutStream = 0;
  bool hadError = false;

  /// Prints "error: FILE: MSG" and marks the import failed.
  void error(const llvm::Twine &message);

  /// ONNX value map.
  std::map<std::string, ValueEntry> values;
  /// Static shapes ONNX shape inference found (name -> shape).
  std::map<std::string, std::vector<int64_t>> inferredShapes;
  /// Initializer / input names consumed as compile-time values.
  std::set<std::string> usedAsConstant;
  /// The `paddingIdx` initializers some Gather applied (the rest are errors).
  std::set<std::string> paddingIdxApplied;

  ValueEntry *lookup(const std::string &name);
  /// The compile-time value of `name`, decoding protos on demand; null if
  /// unknown. `required` includes weights and input values; otherwise only
  /// foldable constants are returned. Throws rt::RuntimeError on bad data.
  const rt::Tensor *constant(const std::string &name, bool required);
  /// The SSA value of `name`, materializing a constant if needed.
  mlir::Value value(const std::string &name, mlir::Location loc);
  std::optional<TypeInfo> typeOf(const std::string &name);

  /// remat.constant holding `tensor`.
  mlir::Value materialize(const rt::Tensor &tensor, mlir::Location loc);
  /// remat.constant of `shape` filled with `value`.
  mlir::Value splat(mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                    double value, mlir::Location loc);

  mlir::Location nodeLocation(const std::string &nodeLabel);

  /// Creates an op whose result types are inferred, reporting an inference
  /// failure as an error (with the op's diagnostic) instead of aborting.
  /// `numResults` dummy types are passed to the explicit-type builder and
  /// then replaced by the inferred ones.
  template <typename OpTy, typename... Args>
  mlir::Operation *create(mlir::Location loc, Args &&...args) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    llvm::SmallVector<mlir::Type, 4> dummy(numResultsOf<OpTy>(),
                                           builder.getNoneType());
    OpTy::build(builder, state, mlir::TypeRange(dummy),
                std::forward<Args>(args)...);
    return finishInferred(state, [&](llvm::SmallVectorImpl<mlir::Type> &types) {
      return OpTy::inferReturnTypes(
          &ctx, state.location, state.operands,
          state.attributes.getDictionary(&ctx), state.getRawProperties(),
          state.regions, types);
    });
  }

  /// Creates an op with explicit result types and verifies it; null (op
  /// erased, diagnostic in lastDiagnostic) if it does not verify.
  template <typename OpTy, typename... Args>
  mlir::Operation *createTyped(mlir::Location loc, Args &&...args) {
    mlir::Operation *op =
        builder.create<OpTy>(loc, std::forward<Args>(args)...).getOperation();
    return verifyNew(op) ? op : nullptr;
  }
  /// Verifies a freshly built op (not recursively); erases it on failure.
  bool verifyNew(mlir::Operation *op);

  /// Diagnostics emitted while inferring (collected, not printed).
  std::string lastDiagnostic;

private:
  template <typename OpTy> static constexpr unsigned numResultsOf() {
    if constexpr (OpTy::template hasTrait<mlir::OpTrait::OneResult>())
      return 1;
    else if constexpr (OpTy::template hasTrait<
                           mlir::OpTrait::NResults<2>::Impl>())
      return 2;
    else if constexpr (OpTy::template hasTrait<
                           mlir::OpTrait::NResults<3>::Impl>())
      return 3;
    else if constexpr (OpTy::template hasTrait<
                           mlir::OpTrait::NResults<5>::Impl>())
      return 5;
    else
      return 1;
  }
  mlir::Operation *finishInferred(
      mlir::OperationState &state,
      llvm::function_ref<mlir::LogicalResult(llvm::SmallVectorImpl<mlir::Type> &)>
          infer);
};

/// Static check of a shape's size: non-negative dims, at most 2^40 bytes.
bool shapeIsSane(llvm::ArrayRef<int64_t> shape, rt::DType dtype);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_IMPORTCONTEXT_H
