//===- remat-opt.cpp - The remat compiler driver --------------------------===//
//
// An `mlir-opt`-style driver (MlirOptMain) that also accepts ONNX models:
// a `.onnx` input is imported into the remat dialect first, then handed to the
// standard driver, so every MLIR flag (--pass-pipeline,
// --mlir-print-ir-after-all, --split-input-file, ...) works on both.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Frontend/OnnxImporter.h"
#include "remat/Frontend/ShapeFlags.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::OptionCategory importCategory("ONNX import options");

static llvm::cl::list<std::string>
    shapeFlags("shape", llvm::cl::desc("Bind an input's shape: NAME=2x64"),
               llvm::cl::value_desc("NAME=DIMS"), llvm::cl::cat(importCategory));
static llvm::cl::opt<int64_t>
    batchFlag("batch", llvm::cl::desc("Bind the symbolic batch dim of inputs"),
              llvm::cl::init(-1), llvm::cl::cat(importCategory));
static llvm::cl::list<std::string>
    frozenFlags("frozen",
                llvm::cl::desc("Treat this initializer as a constant buffer"),
                llvm::cl::value_desc("NAME"), llvm::cl::cat(importCategory));

static llvm::cl::opt<std::string>
    emitFlag("emit", llvm::cl::desc("What to produce: mlir (the IR after the "
                                    "requested passes)"),
             llvm::cl::init("mlir"));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DialectRegistry registry;
  registry.insert<remat::RematDialect, func::FuncDialect>();
  registerTransformsPasses();
  remat::registerRematPasses();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "remat: training-graph compiler driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (emitFlag != "mlir") {
    llvm::errs() << "remat-opt: error: --emit=" << emitFlag
                 << " is not supported; valid: mlir\n";
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (llvm::StringRef(inputFilename).ends_with(".onnx")) {
    remat::OnnxImportOptions options;
    if (!remat::parseShapeFlags(shapeFlags, options.inputShapes, errorMessage)) {
      llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
      return 1;
    }
    options.batchSize = batchFlag;
    options.frozen.insert(frozenFlags.begin(), frozenFlags.end());
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    OwningOpRef<ModuleOp> module =
        remat::importOnnxFile(context, inputFilename, options);
    if (!module)
      return 1;
    // Hand the imported module to the standard driver as text, keeping the
    // locations (ONNX node names) so diagnostics still point at nodes.
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
    input = llvm::MemoryBuffer::getMemBufferCopy(text, inputFilename);
  } else {
    input = openInputFile(inputFilename, &errorMessage);
    if (!input) {
      llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
      return 1;
    }
  }

  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
