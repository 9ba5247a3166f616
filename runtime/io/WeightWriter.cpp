//===- WeightWriter.cpp - Write a model with trained initializers ---------===//
//
// remat-run's --save-weights: the wire-format writer the training
// executable uses (OnnxWire.h), then the ONNX checker on the result.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/WeightWriter.h"

#include "remat/runtime/OnnxWire.h"

#include "onnx/checker.h"

namespace remat::rt {

void saveWeights(const std::string &modelPath, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath) {
  // The training executable's writer (no protobuf), so that both tools
  // write the same bytes; remat-run, which links ONNX, also checks them.
  wire::ModelFile model;
  wire::readModel(modelPath, model);
  wire::saveWeights(model, modelDir, trained, outPath);
  try {
    onnx::checker::check_model(outPath);
  } catch (const std::exception &e) {
    // Checker messages span lines; keep ours on one.
    std::string what = e.what();
    for (char &c : what)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    throw RuntimeError("--save-weights: '" + outPath +
                       "' fails the ONNX checker: " + what);
  }
}

} // namespace remat::rt
