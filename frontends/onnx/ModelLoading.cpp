//===- ModelLoading.cpp - Read, check and shape-infer ONNX models ---------===//

#include "ModelLoading.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace remat {

namespace {

/// Gives the ONNX library the schema of Gelu (opset 20) when it predates it
/// (ONNX 1.12, which Debian 12 ships, knows opsets up to 17), so that its
/// checker and shape inference accept models that use it. The library
/// refuses schemas newer than the opsets it knows, so this one says "since
/// 17"; the importer itself refuses Gelu below opset 20.
void registerGeluSchemaIfMissing() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (onnx::OpSchemaRegistry::Schema("Gelu", 20, onnx::ONNX_DOMAIN))
      return;
    onnx::OpSchema schema;
    schema.SetName("Gelu")
        .SetDomain(onnx::ONNX_DOMAIN)
        .SinceVersion(17)
        .SetDoc("Gelu (opset 20), registered by remat for an ONNX library "
                "that predates it")
        .Attr("approximate", "\"none\" (erf) or \"tanh\"",
              onnx::AttributeProto::STRING, std::string("none"))
        .Input(0, "X", "input", "T")
        .Output(0, "Y", "output", "T")
        .TypeConstraint("T",
                        {"tensor(float16)", "tensor(float)", "tensor(double)",
                         "tensor(bfloat16)"},
                        "float tensors")
        .TypeAndShapeInferenceFunction(
            onnx::propagateShapeAndTypeFromFirstInput);
    onnx::RegisterSchema(std::move(schema));
  });
}

} // namespace

bool loadOnnxModel(llvm::StringRef path, onnx::ModelProto &model,
                   std::string &error) {
  std::ifstream in(path.str(), std::ios::binary);
  if (!in) {
    error = path.str() + ": cannot open file";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = path.str() + ": cannot read file";
    return false;
  }
  std::string bytes = buffer.str();
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    error = path.str() + ": not an ONNX model (protobuf parse failed)";
    return false;
  }
  if (!model.has_graph()) {
    error = path.str() + ": not an ONNX model (no graph)";
    return false;
  }
  registerGeluSchemaIfMissing();
  try {
    // The path form resolves external data relative to the model's directory
    // (the ModelProto form would resolve it against the working directory).
    onnx::checker::check_model(path.str());
  } catch (const onnx::checker::ValidationError &e) {
    std::string what = e.what();
    for (char &c : what)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    error = path.str() + ": invalid ONNX model: " + what;
    return false;
  } catch (const std::exception &e) {
    std::string what = e.what();
    for (char &c : what)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    error = path.str() + ": invalid ONNX model: " + what;
    return false;
  }
  return true;
}

namespace onnximport {

bool checkExternalData(const onnx::TensorProto &tensor,
                       const std::string &modelDir, std::string &error) {
  namespace fs = std::filesystem;
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    try {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoll(entry.value());
      else if (entry.key() == "length")
        length = std::stoll(entry.value());
    } catch (const std::exception &) {
      error = "initializer '" + tensor.name() + "': external data " +
              entry.key() + " '" + entry.value() + "' is not a number";
      return false;
    }
  }
  if (location.empty()) {
    error = "initializer '" + tensor.name() + "': external data has no location";
    return false;
  }
  fs::path rel(location);
  if (rel.is_absolute()) {
    error = "initializer '" + tensor.name() + "': external data location '" +
            location + "' is absolute; only paths inside the model's "
            "directory are allowed";
    return false;
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(modelDir), ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  auto mismatch = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || mismatch.first != base.end()) {
    error = "initializer '" + tensor.name() + "': external data location '" +
            location + "' escapes the model's directory";
    return false;
  }
  if (!fs::is_regular_file(full, ec)) {
    error = "initializer '" + tensor.name() + "': external data file '" +
            location + "' does not exist";
    return false;
  }
  auto size = static_cast<int64_t>(fs::file_size(full, ec));
  if (ec || offset < 0 || offset > size ||
      (length >= 0 && (length > size || offset > size - length))) {
    error = "initializer '" + tensor.name() + "': external data file '" +
            location + "' is too short for offset " + std::to_string(offset) +
            " and length " + std::to_string(length);
    return false;
  }
  return true;
}

bool inferShapes(onnx::ModelProto &model, std::string &error) {
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    std::string what = e.what();
    for (char &c : what)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    error = "ONNX shape inference failed: " + what;
    return false;
  }
  return true;
}

std::optional<std::vector<int64_t>>
staticShape(const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

} // namespace onnximport
} // namespace remat
