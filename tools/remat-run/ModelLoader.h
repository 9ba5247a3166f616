//===- ModelLoader.h - Import a model and its inputs for remat-run -*- C++ -*-===//
//
// Reads the model (ONNX, imported with input shapes bound from the input
// files; or .mlir in the remat dialect), runs the compiler's cleanup
// (remat-fuse-gelu, remat-fuse-attention, remat-fold-transpose-into-matmul,
// canonicalize), and finds the
// weights: the ONNX model's initializers, or for .mlir the model its
// function names (`remat.model_path`).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMAT_RUN_MODELLOADER_H
#define REMAT_TOOLS_REMAT_RUN_MODELLOADER_H

#include "Options.h"

#include "remat/runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <string>
#include <vector>

namespace remat::run {

/// Where weights come from: an ONNX model's initializers.
struct WeightSource {
  std::string modelPath; // for messages
  std::string modelDir;  // for external data
  onnx::ModelProto model;
  std::map<std::string, const onnx::TensorProto *> initializers;
};

struct LoadedModel {
  std::string path;
  bool mlirInput = false;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// @forward (or the module's only function).
  mlir::func::FuncOp forward;

  WeightSource weights;
  bool haveWeights = false;

  /// input_<i>.pb files, in order, and their tensors.
  std::string inputsDir;
  std::vector<std::string> inputFiles;
  std::vector<onnx::TensorProto> inputProtos;
  std::vector<rt::Tensor> inputTensors;
  /// ONNX only: the graph's data inputs (not initializers), in order, and
  /// the index into inputTensors of those that have a file. Files past the
  /// data inputs (at most `extraInputFiles`) are bound by the caller.
  std::vector<std::string> dataInputs;
  std::map<std::string, size_t> inputByName;
  std::vector<std::string> onnxOutputNames;

  double importMs = 0;
};

/// Loads `options.model` and the files in `options.inputsDir`. For ONNX
/// models, up to `extraInputFiles` files beyond the graph's data inputs are
/// accepted (the labels of an appended loss).
void loadModel(mlir::MLIRContext &context, const Options &options,
               size_t extraInputFiles, LoadedModel &loaded);

/// The tensor of a `parameter` or `buffer` argument named `name`: the input
/// file of that name if there is one, else the initializer. Throws ToolError
/// when there is no data ("can be planned but not run").
rt::Tensor loadWeight(const LoadedModel &loaded, const std::string &name,
                      const std::string &role);

/// Throws for the first parameter or buffer argument of `func` without data.
void checkWeightsHaveData(const LoadedModel &loaded, mlir::func::FuncOp func);

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_MODELLOADER_H
