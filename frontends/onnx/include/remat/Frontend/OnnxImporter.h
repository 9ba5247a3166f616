//===- OnnxImporter.h - ONNX ModelProto to the remat dialect ----*- C++ -*-===//
//
// Imports an ONNX model into `func.func @forward` in the remat dialect with
// static shapes (DESIGN.md, pipeline step 1). Weight data never enters the
// IR: initializers and weight graph inputs become function arguments that
// carry their ONNX name and role.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNXIMPORTER_H
#define REMAT_FRONTEND_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace remat {

struct OnnxImportOptions {
  /// Static shapes for graph inputs, by input name (from `--shape
  /// NAME=2x64`). Dims given here override the model's declared dims.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Binds every symbolic (or unknown) leading dim of data inputs: `--batch N`.
  /// -1 means unset.
  int64_t batchSize = -1;
  /// Values of graph inputs that the compiler may treat as constants where a
  /// static value is required (a Reshape shape, Slice starts, ...). Used by
  /// remat-run, which knows its inputs, and by the conformance tests.
  std::map<std::string, const onnx::TensorProto *> inputValues;
  /// Extra names to treat as frozen (role `buffer`) besides `role=buffer`
  /// doc strings: `--frozen NAME`.
  std::set<std::string> frozen;
  /// Embedding rows that get no gradient, as torch.nn.Embedding's
  /// padding_idx, which PyTorch's exporters drop: `--padding-idx NAME=ROW`
  /// marks every Gather along axis 0 of initializer NAME.
  std::map<std::string, int64_t> paddingIdx;
};

/// Imports the model at `path`. On failure, returns null after printing one
/// error line per problem to stderr, each naming the file and, where it
/// applies, the node (name and op type) and value. Unsupported ops are all
/// reported at once.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const OnnxImportOptions &options);

/// Same, for an already parsed model. `path` is used in messages and to
/// resolve external data (relative to its directory).
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext &context, const onnx::ModelProto &model,
                llvm::StringRef path, const OnnxImportOptions &options);

/// Loads and parses a model file, checking that it is a well-formed ONNX
/// model (onnx::checker). Errors go to `error` as one line.
bool loadOnnxModel(llvm::StringRef path, onnx::ModelProto &model,
                   std::string &error);

} // namespace remat

#endif // REMAT_FRONTEND_ONNXIMPORTER_H
