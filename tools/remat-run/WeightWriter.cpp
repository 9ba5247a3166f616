//===- WeightWriter.cpp - Write a model with trained initializers ---------===//

#include "WeightWriter.h"

#include "ToolSupport.h"

#include "remat/runtime/TensorProtoIO.h"

#include "onnx/checker.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace remat::run {
namespace {

/// Re-encodes `proto` from `tensor`, keeping what the runtime encoding does
/// not carry (doc_string).
void replaceData(onnx::TensorProto &proto, const rt::TensorView &tensor) {
  onnx::TensorProto kept = proto;
  rt::tensorToProto(tensor, kept.name(), proto);
  if (kept.has_doc_string())
    proto.set_doc_string(kept.doc_string());
}

} // namespace

void saveWeights(const onnx::ModelProto &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath) {
  onnx::ModelProto copy = model;
  std::set<std::string> replaced;
  for (onnx::TensorProto &init : *copy.mutable_graph()->mutable_initializer()) {
    if (auto it = trained.find(init.name()); it != trained.end()) {
      if (rt::dtypeToOnnx(it->second->dtype) != init.data_type())
        throw ToolError("--save-weights: '" + init.name() + "' is " +
                        describe(*it->second) +
                        " after training but its initializer has ONNX type " +
                        std::to_string(init.data_type()));
      replaceData(init, *it->second);
      replaced.insert(init.name());
      continue;
    }
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      try {
        rt::Tensor tensor = rt::tensorFromProto(init, modelDir);
        replaceData(init, tensor.view());
      } catch (const std::exception &e) {
        throw ToolError("--save-weights: cannot inline external data of '" +
                        init.name() + "': " + e.what());
      }
    }
  }
  for (const auto &[name, view] : trained)
    if (!replaced.count(name))
      throw ToolError("--save-weights: '" + name +
                      "' was trained but is not an initializer of the model "
                      "(a graph input?); it cannot be written back");

  {
    std::error_code ec;
    fs::path parent = fs::path(outPath).parent_path();
    if (!parent.empty())
      fs::create_directories(parent, ec);
    std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
    if (!out || !copy.SerializeToOstream(&out))
      throw ToolError("--save-weights: cannot write '" + outPath + "'");
    out.close();
    if (!out)
      throw ToolError("--save-weights: cannot write '" + outPath + "'");
  }
  try {
    onnx::checker::check_model(outPath);
  } catch (const std::exception &e) {
    std::string what = e.what();
    for (char &c : what)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    throw ToolError("--save-weights: '" + outPath +
                    "' fails the ONNX checker: " + what);
  }
}

} // namespace remat::run
