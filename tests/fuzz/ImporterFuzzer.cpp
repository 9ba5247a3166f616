//===- ImporterFuzzer.cpp - libFuzzer target for the ONNX importer --------===//
//
// Feeds arbitrary bytes through the same path as `remat-opt model.onnx`:
// protobuf parsing, the ONNX checker, shape inference and import. Any crash,
// hang, sanitizer report or leak is a bug; rejected input is fine.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Frontend/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The importer reads files (it resolves external data relative to the
  // model), so write the input to a private temporary file.
  static const std::string path =
      "/tmp/remat-fuzz-" + std::to_string(getpid()) + ".onnx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data), size);
  }
  mlir::MLIRContext context;
  context.loadDialect<remat::RematDialect, mlir::func::FuncDialect>();
  // Diagnostics would flood the fuzzer's output.
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  remat::OnnxImportOptions options;
  options.batchSize = 2;
  (void)remat::importOnnxFile(context, path, options);
  return 0;
}
