//===- WeightWriter.cpp - Write a model with trained initializers ---------===//
//
// Moved here from remat-run so that the training executable's harness
// writes trained weights the same way (one implementation, one behaviour).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/WeightWriter.h"

#include "remat/runtime/TensorProtoIO.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace remat::rt {
namespace {

/// Re-encodes `proto` from `tensor`, keeping what the runtime encoding does
/// not carry (doc_string).
void replaceData(onnx::TensorProto &proto, const TensorView &tensor) {
  onnx::TensorProto kept = proto;
  tensorToProto(tensor, kept.name(), proto);
  if (kept.has_doc_string())
    proto.set_doc_string(kept.doc_string());
}

std::string describe(const TensorView &view) {
  return std::string(dtypeName(view.dtype)) + " " + shapeToString(view.shape);
}

} // namespace

void saveWeights(const onnx::ModelProto &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath) {
  onnx::ModelProto copy = model;
  std::set<std::string> replaced;
  for (onnx::TensorProto &init : *copy.mutable_graph()->mutable_initializer()) {
    if (auto it = trained.find(init.name()); it != trained.end()) {
      if (dtypeToOnnx(it->second->dtype) != init.data_type())
        throw RuntimeError("--save-weights: '" + init.name() + "' is " +
                           describe(*it->second) +
                           " after training but its initializer has ONNX "
                           "type " +
                           std::to_string(init.data_type()));
      replaceData(init, *it->second);
      replaced.insert(init.name());
      continue;
    }
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      try {
        Tensor tensor = tensorFromProto(init, modelDir);
        replaceData(init, tensor.view());
      } catch (const std::exception &e) {
        throw RuntimeError("--save-weights: cannot inline external data of '" +
                           init.name() + "': " + e.what());
      }
    }
  }
  for (const auto &[name, view] : trained)
    if (!replaced.count(name))
      throw RuntimeError("--save-weights: '" + name +
                         "' was trained but is not an initializer of the "
                         "model (a graph input?); it cannot be written back");

  {
    std::error_code ec;
    fs::path parent = fs::path(outPath).parent_path();
    if (!parent.empty())
      fs::create_directories(parent, ec);
    std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
    if (!out || !copy.SerializeToOstream(&out))
      throw RuntimeError("--save-weights: cannot write '" + outPath + "'");
    out.close();
    if (!out)
      throw RuntimeError("--save-weights: cannot write '" + outPath + "'");
  }
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
