//===- remat-run.cpp - Run a model with the reference interpreter ---------===//
//
//   remat-run MODEL.onnx --inputs DIR --outputs DIR [--shape NAME=AxB ...]
//             [--batch N] [--expect DIR [--rtol R] [--atol A]] [--step N]
//             [--quiet]
//
// Imports the model (or parses a .mlir file in the remat dialect), runs the
// same cleanup as the compiler (remat-fuse-gelu, canonicalize), binds the
// inputs from DIR/input_<i>.pb (the ONNX backend-test layout) and the
// weights from the model's initializers, interprets `@forward` with the
// runtime's CPU kernels and writes DIR/output_<i>.pb. With --expect, compares
// each output with DIR/output_<i>.pb and prints PASS or FAIL.
//
// Exit status: 0 success (and PASS), 1 FAIL (outputs differ), 2 error.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"
#include "remat/Frontend/OnnxImporter.h"
#include "remat/Frontend/ShapeFlags.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/Passes/Passes.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/TensorProtoIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace mlir;

namespace {

/// Any failure the tool reports as `remat-run: error: <message>`.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitFail = 1;
constexpr int kExitError = 2;

const char *const kUsage =
    "usage: remat-run MODEL.onnx|MODEL.mlir [--inputs DIR] [--outputs DIR]\n"
    "                 [--shape NAME=AxB ...] [--batch N] [--frozen NAME ...]\n"
    "                 [--expect DIR [--rtol R] [--atol A]] [--step N] "
    "[--quiet]\n"
    "\n"
    "  --inputs DIR    input_<i>.pb files for the model's graph inputs (ONNX\n"
    "                  backend-test layout; for .mlir, the `input` arguments)\n"
    "  --outputs DIR   where to write output_<i>.pb\n"
    "  --shape N=AxB   bind an input's shape (input files bind their own)\n"
    "  --batch N       bind the symbolic batch dim of inputs\n"
    "  --frozen NAME   treat an initializer as a constant buffer\n"
    "  --expect DIR    compare with DIR/output_<i>.pb: |a-b| <= atol + "
    "rtol*|b|\n"
    "  --rtol R        relative tolerance (default 1e-4)\n"
    "  --atol A        absolute tolerance (default 1e-5)\n"
    "  --step N        training step keying the dropout RNG (default 0)\n"
    "  --quiet         no summary line\n"
    "\n"
    "exit status: 0 ok / PASS, 1 FAIL, 2 error\n";

struct Options {
  std::string model;
  std::string inputsDir, outputsDir, expectDir;
  std::vector<std::string> shapeFlags, frozen;
  int64_t batch = -1;
  double rtol = 1e-4, atol = 1e-5;
  uint64_t step = 0;
  bool quiet = false;
};

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

double parseDouble(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0)
    throw ToolError(flag + " expects a non-negative number, got '" + text +
                    "'");
  return value;
}

int64_t parseInt(const std::string &flag, const std::string &text) {
  int64_t value;
  if (llvm::StringRef(text).getAsInteger(10, value) || value < 0)
    throw ToolError(flag + " expects a non-negative integer, got '" + text +
                    "'");
  return value;
}

/// Returns nullopt when --help was asked for.
std::optional<Options> parseCommandLine(int argc, char **argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help")
      return std::nullopt;
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    // --flag=value or --flag value
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (flag.rfind("--", 0) != 0 && flag.size() > 1)
      flag = "-" + flag; // accept -inputs as --inputs
    if (flag == "--quiet" || flag == "-q" || flag == "--q") {
      if (hasValue)
        throw ToolError("--quiet takes no value");
      options.quiet = true;
      continue;
    }
    static const std::set<std::string> valued = {
        "--inputs", "--outputs", "--shape", "--batch", "--frozen",
        "--expect", "--rtol",    "--atol",  "--step"};
    if (!valued.count(flag))
      throw ToolError("unknown option '" + arg + "' (see --help)");
    if (!hasValue) {
      if (i + 1 >= argc)
        throw ToolError(flag + " expects a value");
      value = argv[++i];
    }
    if (flag == "--inputs")
      options.inputsDir = value;
    else if (flag == "--outputs")
      options.outputsDir = value;
    else if (flag == "--expect")
      options.expectDir = value;
    else if (flag == "--shape")
      options.shapeFlags.push_back(value);
    else if (flag == "--frozen")
      options.frozen.push_back(value);
    else if (flag == "--batch")
      options.batch = parseInt(flag, value);
    else if (flag == "--step")
      options.step = static_cast<uint64_t>(parseInt(flag, value));
    else if (flag == "--rtol")
      options.rtol = parseDouble(flag, value);
    else if (flag == "--atol")
      options.atol = parseDouble(flag, value);
  }
  if (positional.size() != 1)
    throw ToolError(positional.empty()
                        ? "no model given (see --help)"
                        : "expected one model file, got " +
                              std::to_string(positional.size()) +
                              " positional arguments");
  options.model = positional.front();
  return options;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

std::string describe(const remat::rt::TensorView &view) {
  return std::string(remat::rt::dtypeName(view.dtype)) + " " +
         remat::rt::shapeToString(view.shape);
}

/// DIR/input_<i>.pb (or output_<i>.pb) for i = 0, 1, ... while they exist.
std::vector<std::string> numberedFiles(const std::string &dir,
                                       const std::string &stem) {
  if (!fs::is_directory(dir))
    throw ToolError("'" + dir + "' is not a directory");
  std::vector<std::string> files;
  for (size_t i = 0;; ++i) {
    fs::path path = fs::path(dir) / (stem + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(path))
      break;
    files.push_back(path.string());
  }
  return files;
}

double elementAsDouble(const remat::rt::TensorView &view, int64_t i) {
  using remat::rt::DType;
  switch (view.dtype) {
  case DType::F32: return view.as<float>()[i];
  case DType::F64: return view.as<double>()[i];
  case DType::F16: return remat::rt::halfToFloat(view.as<uint16_t>()[i]);
  case DType::BF16: return remat::rt::bfloat16ToFloat(view.as<uint16_t>()[i]);
  case DType::I64: return static_cast<double>(view.as<int64_t>()[i]);
  case DType::I32: return view.as<int32_t>()[i];
  case DType::I8: return view.as<int8_t>()[i];
  case DType::U8:
  case DType::Bool: return view.as<uint8_t>()[i];
  }
  return 0;
}

int64_t elementAsInt(const remat::rt::TensorView &view, int64_t i) {
  using remat::rt::DType;
  switch (view.dtype) {
  case DType::I64: return view.as<int64_t>()[i];
  case DType::I32: return view.as<int32_t>()[i];
  case DType::I8: return view.as<int8_t>()[i];
  case DType::U8: return view.as<uint8_t>()[i];
  case DType::Bool: return view.as<uint8_t>()[i] != 0;
  default: return static_cast<int64_t>(elementAsDouble(view, i));
  }
}

std::string indexToString(const remat::rt::Shape &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return remat::rt::shapeToString(index);
}

std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

/// Compares one output; prints a line and returns true if it matches.
bool compareOutput(size_t index, const std::string &name,
                   const remat::rt::TensorView &got,
                   const remat::rt::TensorView &want, double rtol,
                   double atol) {
  std::string label = "output " + std::to_string(index) + " ('" + name + "')";
  if (got.dtype != want.dtype || got.shape != want.shape) {
    std::cout << label << ": got " << describe(got) << ", expected "
              << describe(want) << "\n";
    return false;
  }
  const int64_t n = got.numel();
  int64_t mismatches = 0, first = -1;
  double maxAbs = 0, maxRel = 0;
  if (remat::rt::isFloat(got.dtype)) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = elementAsDouble(got, i), b = elementAsDouble(want, i);
      if ((std::isnan(a) && std::isnan(b)) || a == b)
        continue;
      const double diff = std::fabs(a - b);
      if (!(diff <= atol + rtol * std::fabs(b))) {
        ++mismatches;
        if (first < 0)
          first = i;
      }
      if (std::isnan(diff) || std::isinf(diff)) {
        maxAbs = maxRel = INFINITY;
        continue;
      }
      maxAbs = std::max(maxAbs, diff);
      if (b != 0)
        maxRel = std::max(maxRel, diff / std::fabs(b));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = elementAsInt(got, i), b = elementAsInt(want, i);
      if (a == b)
        continue;
      ++mismatches;
      if (first < 0)
        first = i;
      const double diff = std::fabs(double(a) - double(b));
      maxAbs = std::max(maxAbs, diff);
      if (b != 0)
        maxRel = std::max(maxRel, diff / std::fabs(double(b)));
    }
  }
  std::cout << label << ": " << describe(got) << ", max abs err "
            << formatNumber(maxAbs) << ", max rel err " << formatNumber(maxRel);
  if (mismatches) {
    std::cout << ", " << mismatches << " of " << n
              << " elements out of tolerance; first at "
              << indexToString(got.shape, first) << ": got "
              << formatNumber(elementAsDouble(got, first)) << ", expected "
              << formatNumber(elementAsDouble(want, first));
  }
  std::cout << "\n";
  return mismatches == 0;
}

//===----------------------------------------------------------------------===//
// Model loading
//===----------------------------------------------------------------------===//

/// Where weights come from: an ONNX model's initializers.
struct WeightSource {
  std::string modelPath; // for messages
  std::string modelDir;  // for external data
  onnx::ModelProto model;
  std::map<std::string, const onnx::TensorProto *> initializers;

  void index() {
    for (const onnx::TensorProto &init : model.graph().initializer())
      initializers[init.name()] = &init;
    fs::path dir = fs::path(modelPath).parent_path();
    modelDir = dir.empty() ? "." : dir.string();
  }
};

void loadModel(const std::string &path, WeightSource &source) {
  std::string error;
  source.modelPath = path;
  if (!remat::loadOnnxModel(path, source.model, error))
    throw ToolError(error.empty() ? "cannot load '" + path + "'" : error);
  source.index();
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

std::string argString(func::FuncOp func, unsigned index, llvm::StringRef attr) {
  if (auto value = func.getArgAttrOfType<StringAttr>(index, attr))
    return value.str();
  return "";
}

//===----------------------------------------------------------------------===//
// The tool
//===----------------------------------------------------------------------===//

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int runTool(const Options &options) {
  const Clock::time_point start = Clock::now();
  DialectRegistry registry;
  registry.insert<remat::RematDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // MLIR diagnostics (parser, verifier, passes) as one line each.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    const char *kind = diag.getSeverity() == DiagnosticSeverity::Error
                           ? "error"
                       : diag.getSeverity() == DiagnosticSeverity::Warning
                           ? "warning"
                           : "note";
    llvm::errs() << "remat-run: " << kind << ": "
                 << remat::describeLocation(diag.getLocation()) << ": "
                 << diag.str() << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "remat-run: note: "
                   << remat::describeLocation(note.getLocation()) << ": "
                   << note.str() << "\n";
    return success();
  });

  const bool mlirInput = isMlirFile(options.model);
  if (!fs::exists(options.model))
    throw ToolError("cannot open '" + options.model + "': no such file");

  // Input files, in order (read once the model's input types are checked).
  std::vector<std::string> inputFiles;
  if (!options.inputsDir.empty())
    inputFiles = numberedFiles(options.inputsDir, "input");
  std::vector<onnx::TensorProto> inputProtos(inputFiles.size());
  std::vector<remat::rt::Tensor> inputTensors;
  auto readInputs = [&] {
    for (size_t i = 0; i < inputFiles.size(); ++i) {
      try {
        remat::rt::readTensorProtoFile(inputFiles[i], inputProtos[i]);
        inputTensors.push_back(remat::rt::tensorFromProto(inputProtos[i], ""));
      } catch (const std::exception &e) {
        throw ToolError("cannot read '" + inputFiles[i] + "': " + e.what());
      }
    }
  };

  WeightSource weights;
  bool haveWeights = false;
  OwningOpRef<ModuleOp> module;
  // For ONNX models: input name -> index into inputTensors.
  std::map<std::string, size_t> inputByName;
  std::vector<std::string> onnxOutputNames;

  if (!mlirInput) {
    loadModel(options.model, weights);
    haveWeights = true;
    std::set<std::string> initializerNames;
    for (const auto &[name, proto] : weights.initializers)
      initializerNames.insert(name);
    std::vector<std::string> dataInputs;
    for (const onnx::ValueInfoProto &input : weights.model.graph().input()) {
      if (initializerNames.count(input.name()))
        continue;
      if (input.has_type() && !input.type().has_tensor_type())
        throw ToolError("input '" + input.name() + "' of '" + options.model +
                        "' is not a tensor (sequence, optional or map); "
                        "remat-run supports tensor inputs only");
      dataInputs.push_back(input.name());
    }
    for (const onnx::ValueInfoProto &output : weights.model.graph().output())
      onnxOutputNames.push_back(output.name());

    // Fewer files than graph inputs is fine here: weights that are graph
    // inputs (shape-only exports) have no file, and an `input` argument left
    // without one is reported once the importer has assigned roles.
    if (dataInputs.size() < inputFiles.size()) {
      std::string names;
      for (size_t i = 0; i < dataInputs.size() && i < 6; ++i)
        names += (i ? ", " : "") + ("'" + dataInputs[i] + "'");
      if (dataInputs.size() > 6)
        names += ", ...";
      throw ToolError(
          "'" + options.model + "' has " + std::to_string(dataInputs.size()) +
          " graph input(s)" + (names.empty() ? "" : " (" + names + ")") +
          " but '" + options.inputsDir + "' holds " +
          std::to_string(inputFiles.size()) + " input_<i>.pb files");
    }

    readInputs();
    remat::OnnxImportOptions importOptions;
    std::string error;
    if (!remat::parseShapeFlags(options.shapeFlags, importOptions.inputShapes,
                                error))
      throw ToolError(error);
    importOptions.batchSize = options.batch;
    importOptions.frozen.insert(options.frozen.begin(), options.frozen.end());
    for (size_t i = 0; i < inputFiles.size(); ++i) {
      const std::string &name = dataInputs[i];
      const remat::rt::Shape &shape = inputTensors[i].shape();
      auto flag = importOptions.inputShapes.find(name);
      if (flag != importOptions.inputShapes.end() && flag->second != shape)
        throw ToolError("--shape " + name + " gives " +
                        remat::rt::shapeToString(flag->second) + " but '" +
                        inputFiles[i] + "' holds " +
                        remat::rt::shapeToString(shape));
      importOptions.inputShapes[name] = shape;
      importOptions.inputValues[name] = &inputProtos[i];
      inputByName[name] = i;
    }
    module = remat::importOnnxModel(context, weights.model, options.model,
                                    importOptions);
    if (!module)
      throw ToolError("could not import '" + options.model + "'");
  } else {
    if (!options.shapeFlags.empty() || options.batch >= 0 ||
        !options.frozen.empty())
      throw ToolError("--shape, --batch and --frozen apply to ONNX models "
                      "only; a .mlir file has static shapes");
    readInputs();
    ParserConfig config(&context);
    module = parseSourceFile<ModuleOp>(options.model, config);
    if (!module)
      throw ToolError("could not parse '" + options.model + "'");
  }

  // The compiler's cleanup: fused GELU and canonical forms.
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(remat::createFuseGelu());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*module)))
    throw ToolError("the remat-fuse-gelu/canonicalize pipeline failed on '" +
                    options.model + "'");
  func::FuncOp func = findForward(*module, options.model);
  const double importMs = millisecondsSince(start);

  // For .mlir input, weights come from the model the function names.
  if (mlirInput) {
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
        loadModel(modelPath, weights);
        haveWeights = true;
      }
    }
  }

  // Weights without data are the most telling problem: report them first.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const std::string name = argString(func, i, remat::RematDialect::kNameAttr);
    const std::string role = argString(func, i, remat::RematDialect::kRoleAttr);
    if (role != "parameter" && role != "buffer")
      continue;
    if (!mlirInput && inputByName.count(name))
      continue;
    if (!haveWeights || !weights.initializers.count(name))
      throw ToolError(role + " '" + name + "' has no data in " +
                      (haveWeights ? weights.modelPath : options.model) +
                      "; this model can be planned but not run");
  }

  // Bind the arguments.
  std::vector<remat::rt::Tensor> weightTensors;
  weightTensors.reserve(func.getNumArguments());
  std::vector<const remat::rt::TensorView *> args;
  size_t nextInput = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const std::string name = argString(func, i, remat::RematDialect::kNameAttr);
    std::string role = argString(func, i, remat::RematDialect::kRoleAttr);
    if (role.empty())
      role = "input";
    const std::string label =
        name.empty() ? "argument " + std::to_string(i) : "'" + name + "'";

    if (!mlirInput) {
      // A graph input with a file wins whatever role the importer gave it.
      if (auto it = inputByName.find(name); it != inputByName.end()) {
        args.push_back(&inputTensors[it->second].view());
        continue;
      }
      if (role == "input")
        throw ToolError(
            "input " + label + " of '" + options.model + "' has no value: " +
            (options.inputsDir.empty()
                 ? std::string("no --inputs directory was given")
                 : "'" + options.inputsDir + "' holds only " +
                       std::to_string(inputFiles.size()) +
                       " input_<i>.pb file(s)"));
    } else if (role == "input") {
      if (nextInput >= inputTensors.size())
        throw ToolError("'" + options.model + "' takes more inputs than the " +
                        std::to_string(inputTensors.size()) +
                        " input_<i>.pb file(s)" +
                        (options.inputsDir.empty()
                             ? std::string(" (no --inputs given)")
                             : " in '" + options.inputsDir + "'"));
      args.push_back(&inputTensors[nextInput++].view());
      continue;
    }

    if (role != "parameter" && role != "buffer")
      throw ToolError(label + " has unknown role '" + role + "'");
    const std::string &source = haveWeights ? weights.modelPath : options.model;
    const onnx::TensorProto *proto = nullptr;
    if (haveWeights)
      if (auto it = weights.initializers.find(name);
          it != weights.initializers.end())
        proto = it->second;
    if (!proto)
      throw ToolError(role + " " + label + " has no data in " + source +
                      "; this model can be planned but not run");
    try {
      weightTensors.push_back(
          remat::rt::tensorFromProto(*proto, weights.modelDir));
    } catch (const std::exception &e) {
      throw ToolError("cannot load " + role + " " + label + ": " + e.what());
    }
    args.push_back(&weightTensors.back().view());
  }
  if (mlirInput && nextInput != inputTensors.size())
    throw ToolError("'" + options.inputsDir + "' holds " +
                    std::to_string(inputTensors.size()) +
                    " input_<i>.pb files but '" + options.model + "' takes " +
                    std::to_string(nextInput) + " inputs");

  // Run.
  const Clock::time_point runStart = Clock::now();
  remat::Interpreter interpreter(func);
  interpreter.setStep(options.step);
  std::vector<remat::rt::Tensor> outputs = interpreter.run(args);
  const double runMs = millisecondsSince(runStart);

  std::vector<std::string> outputNames;
  for (unsigned i = 0; i < outputs.size(); ++i) {
    std::string name;
    if (auto attr = func.getResultAttrOfType<StringAttr>(
            i, remat::RematDialect::kNameAttr))
      name = attr.str();
    else if (i < onnxOutputNames.size())
      name = onnxOutputNames[i];
    else
      name = "output_" + std::to_string(i);
    outputNames.push_back(name);
  }

  if (!options.outputsDir.empty()) {
    std::error_code ec;
    fs::create_directories(options.outputsDir, ec);
    if (ec)
      throw ToolError("cannot create '" + options.outputsDir +
                      "': " + ec.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path =
          (fs::path(options.outputsDir) / ("output_" + std::to_string(i) + ".pb"))
              .string();
      try {
        remat::rt::writeTensorFile(path, outputs[i].view(), outputNames[i]);
      } catch (const std::exception &e) {
        throw ToolError("cannot write '" + path + "': " + e.what());
      }
    }
  }

  if (!options.quiet) {
    std::ostringstream summary;
    summary.precision(1);
    summary << std::fixed << "remat-run: " << outputs.size() << " output"
            << (outputs.size() == 1 ? "" : "s");
    if (!options.outputsDir.empty())
      summary << " written to " << options.outputsDir;
    summary << " (import " << importMs << " ms, run " << runMs
            << " ms, peak " << interpreter.peakLiveBytes() / 1024.0
            << " KiB of intermediates)";
    std::cerr << summary.str() << "\n";
  }

  if (options.expectDir.empty())
    return 0;
  std::vector<std::string> expected = numberedFiles(options.expectDir, "output");
  bool pass = true;
  if (expected.size() != outputs.size()) {
    std::cout << "the model produced " << outputs.size() << " output(s), '"
              << options.expectDir << "' holds " << expected.size() << "\n";
    pass = false;
  }
  for (size_t i = 0; i < std::min(expected.size(), outputs.size()); ++i) {
    remat::rt::Tensor want;
    try {
      want = remat::rt::readTensorFile(expected[i]);
    } catch (const std::exception &e) {
      throw ToolError("cannot read '" + expected[i] + "': " + e.what());
    }
    pass &= compareOutput(i, outputNames[i], outputs[i].view(), want.view(),
                          options.rtol, options.atol);
  }
  std::cout << (pass ? "PASS" : "FAIL") << std::endl;
  return pass ? 0 : kExitFail;
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::optional<Options> options = parseCommandLine(argc, argv);
    if (!options) {
      std::cout << kUsage;
      return 0;
    }
    return runTool(*options);
  } catch (const ToolError &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (const remat::rt::RuntimeError &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (const std::bad_alloc &) {
    std::cerr << "remat-run: error: out of memory" << std::endl;
  } catch (const std::exception &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (...) {
    std::cerr << "remat-run: error: unknown exception" << std::endl;
  }
  return kExitError;
}
