//===- ModelLoader.cpp - Import a model and its inputs for remat-run ------===//

#include "ModelLoader.h"

#include "ToolSupport.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Frontend/OnnxImporter.h"
#include "remat/Frontend/ShapeFlags.h"
#include "remat/Passes/Passes.h"
#include "remat/runtime/TensorProtoIO.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstring>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace mlir;

namespace remat::run {
namespace {

void loadWeightSource(const std::string &path, WeightSource &source) {
  std::string error;
  source.modelPath = path;
  if (!remat::loadOnnxModel(path, source.model, error))
    throw ToolError(error.empty() ? "cannot load '" + path + "'" : error);
  for (const onnx::TensorProto &init : source.model.graph().initializer())
    source.initializers[init.name()] = &init;
  fs::path dir = fs::path(path).parent_path();
  source.modelDir = dir.empty() ? "." : dir.string();
}

bool isMlirFile(llvm::StringRef path) {
  return path.ends_with(".mlir") || path.ends_with(".mlirbc");
}

func::FuncOp findForward(ModuleOp module, const std::string &path) {
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    return forward;
  func::FuncOp only;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (only)
      throw ToolError("'" + path +
                      "' has several functions and none named @forward");
    only = func;
  }
  if (!only)
    throw ToolError("'" + path + "' has no function to run");
  return only;
}

void readInputs(LoadedModel &loaded) {
  loaded.inputProtos.resize(loaded.inputFiles.size());
  for (size_t i = 0; i < loaded.inputFiles.size(); ++i) {
    try {
      rt::readTensorProtoFile(loaded.inputFiles[i], loaded.inputProtos[i]);
      loaded.inputTensors.push_back(
          rt::tensorFromProto(loaded.inputProtos[i], ""));
    } catch (const std::exception &e) {
      throw ToolError("cannot read '" + loaded.inputFiles[i] + "': " +
                      e.what());
    }
  }
}

void importOnnx(MLIRContext &context, const Options &options,
                size_t extraInputFiles, LoadedModel &loaded) {
  loadWeightSource(options.model, loaded.weights);
  loaded.haveWeights = true;
  WeightSource &weights = loaded.weights;
  for (const onnx::ValueInfoProto &input : weights.model.graph().input()) {
    if (weights.initializers.count(input.name()))
      continue;
    if (input.has_type() && !input.type().has_tensor_type())
      throw ToolError("input '" + input.name() + "' of '" + options.model +
                      "' is not a tensor (sequence, optional or map); "
                      "remat-run supports tensor inputs only");
    loaded.dataInputs.push_back(input.name());
  }
  for (const onnx::ValueInfoProto &output : weights.model.graph().output())
    loaded.onnxOutputNames.push_back(output.name());

  // Fewer files than graph inputs is fine here: weights that are graph
  // inputs (shape-only exports) have no file, and an `input` argument left
  // without one is reported once the importer has assigned roles.
  const std::vector<std::string> &dataInputs = loaded.dataInputs;
  if (dataInputs.size() + extraInputFiles < loaded.inputFiles.size()) {
    std::string names;
    for (size_t i = 0; i < dataInputs.size() && i < 6; ++i)
      names += (i ? ", " : "") + ("'" + dataInputs[i] + "'");
    if (dataInputs.size() > 6)
      names += ", ...";
    throw ToolError(
        "'" + options.model + "' has " + std::to_string(dataInputs.size()) +
        " graph input(s)" + (names.empty() ? "" : " (" + names + ")") +
        (extraInputFiles ? " (plus " + std::to_string(extraInputFiles) +
                               " for the labels)"
                         : std::string()) +
        " but '" + options.inputsDir + "' holds " +
        std::to_string(loaded.inputFiles.size()) + " input_<i>.pb files");
  }

  readInputs(loaded);
  remat::OnnxImportOptions importOptions;
  std::string error;
  if (!remat::parseShapeFlags(options.shapeFlags, importOptions.inputShapes,
                              error))
    throw ToolError(error);
  if (!remat::parsePaddingIdxFlags(options.paddingIdx, importOptions.paddingIdx,
                                   error))
    throw ToolError(error);
  importOptions.batchSize = options.batch;
  importOptions.frozen.insert(options.frozen.begin(), options.frozen.end());
  for (size_t i = 0; i < loaded.inputFiles.size() && i < dataInputs.size();
       ++i) {
    const std::string &name = dataInputs[i];
    const rt::Shape &shape = loaded.inputTensors[i].shape();
    auto flag = importOptions.inputShapes.find(name);
    if (flag != importOptions.inputShapes.end() && flag->second != shape)
      throw ToolError("--shape " + name + " gives " +
                      rt::shapeToString(flag->second) + " but '" +
                      loaded.inputFiles[i] + "' holds " +
                      rt::shapeToString(shape));
    importOptions.inputShapes[name] = shape;
    importOptions.inputValues[name] = &loaded.inputProtos[i];
    loaded.inputByName[name] = i;
  }
  loaded.module = remat::importOnnxModel(context, weights.model, options.model,
                                         importOptions);
  if (!loaded.module)
    throw ToolError("could not import '" + options.model + "'");
}

} // namespace

void loadModel(MLIRContext &context, const Options &options,
               size_t extraInputFiles, LoadedModel &loaded) {
  const Clock::time_point start = Clock::now();
  loaded.path = options.model;
  loaded.mlirInput = isMlirFile(options.model);
  if (!fs::exists(options.model))
    throw ToolError("cannot open '" + options.model + "': no such file");
  loaded.inputsDir = options.inputsDir;
  if (!options.inputsDir.empty())
    loaded.inputFiles = numberedFiles(options.inputsDir, "input");

  if (!loaded.mlirInput) {
    importOnnx(context, options, extraInputFiles, loaded);
  } else {
    if (!options.shapeFlags.empty() || options.batch >= 0 ||
        !options.frozen.empty() || !options.paddingIdx.empty())
      throw ToolError("--shape, --batch, --frozen and --padding-idx apply to "
                      "ONNX models only; a .mlir file has static shapes");
    readInputs(loaded);
    ParserConfig config(&context);
    loaded.module = parseSourceFile<ModuleOp>(options.model, config);
    if (!loaded.module)
      throw ToolError("could not parse '" + options.model + "'");
  }

  // The compiler's cleanup (fused GELU and attention, transposed matmul
  // operands as flags), then canonical forms. Training builds on this
  // module, so buildTrainStep need not fuse again.
  PassManager pm(&context);
  remat::addForwardCleanup(pm, options.fusion);
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*loaded.module)))
    throw ToolError("the remat-fuse-gelu/remat-fuse-attention/"
                    "remat-fold-transpose-into-matmul/canonicalize "
                    "pipeline failed on '" + options.model + "'");
  loaded.forward = findForward(*loaded.module, options.model);
  func::FuncOp func = loaded.forward;
  loaded.importMs = millisecondsSince(start);

  // For .mlir input, weights come from the model the function names.
  if (loaded.mlirInput) {
    if (auto path = func->getAttrOfType<StringAttr>(
            remat::RematDialect::kModelPathAttr)) {
      bool needed = false;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        std::string role = argString(func, i, remat::RematDialect::kRoleAttr);
        needed |= role == "parameter" || role == "buffer";
      }
      if (needed) {
        std::string modelPath = path.str();
        fs::path besideMlir = fs::path(options.model).parent_path() / modelPath;
        if (!fs::exists(modelPath) && fs::path(modelPath).is_relative() &&
            fs::exists(besideMlir))
          modelPath = besideMlir.string();
        loadWeightSource(modelPath, loaded.weights);
        loaded.haveWeights = true;
      }
    }
  }
}

void checkWeightsHaveData(const LoadedModel &loaded, func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const std::string name = argString(func, i, remat::RematDialect::kNameAttr);
    const std::string role = argString(func, i, remat::RematDialect::kRoleAttr);
    if (role != "parameter" && role != "buffer")
      continue;
    if (!loaded.mlirInput && loaded.inputByName.count(name))
      continue;
    if (!loaded.haveWeights || !loaded.weights.initializers.count(name))
      throw ToolError(role + " '" + name + "' has no data in " +
                      (loaded.haveWeights ? loaded.weights.modelPath
                                          : loaded.path) +
                      "; this model can be planned but not run");
  }
}

rt::Tensor loadWeight(const LoadedModel &loaded, const std::string &name,
                      const std::string &role) {
  const std::string label = "'" + name + "'";
  if (!loaded.mlirInput)
    if (auto it = loaded.inputByName.find(name); it != loaded.inputByName.end()) {
      const rt::Tensor &input = loaded.inputTensors[it->second];
      rt::Tensor copy(input.dtype(), input.shape());
      std::memcpy(copy.data(), input.data(), input.bytes());
      return copy;
    }
  const onnx::TensorProto *proto = nullptr;
  if (loaded.haveWeights)
    if (auto it = loaded.weights.initializers.find(name);
        it != loaded.weights.initializers.end())
      proto = it->second;
  if (!proto)
    throw ToolError(role + " " + label + " has no data in " +
                    (loaded.haveWeights ? loaded.weights.modelPath
                                        : loaded.path) +
                    "; this model can be planned but not run");
  try {
    return rt::tensorFromProto(*proto, loaded.weights.modelDir);
  } catch (const std::exception &e) {
    throw ToolError("cannot load " + role + " " + label + ": " + e.what());
  }
}

} // namespace remat::run
