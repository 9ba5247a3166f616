//===- ModelLoading.cpp - Read, check and shape-infer ONNX models ---------===//

#include "ModelLoading.h"

#include "FunctionInlining.h"
#include "OnnxSchemas.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <sstream>

namespace remat {

namespace {

/// The ai.onnx opset a model imports (0 when none).
int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &opset : model.opset_import())
    if (onnximport::isDefaultDomain(opset.domain()))
      return opset.version();
  return 0;
}

/// The model's opset per domain, keyed by canonicalDomain().
std::map<std::string, int64_t> opsetsOf(const onnx::ModelProto &model) {
  std::map<std::string, int64_t> opsets;
  for (const auto &opset : model.opset_import())
    opsets[onnximport::canonicalDomain(opset.domain())] = opset.version();
  return opsets;
}

/// Refuses IR versions and opsets outside what the importer knows, in one
/// line each, before anything reads the graph by rules it may not follow.
bool checkVersions(const onnx::ModelProto &model, std::string &error) {
  int64_t ir = model.ir_version();
  if (ir < onnximport::kOldestIrVersion) {
    error = "IR version " + std::to_string(ir) +
            " is not supported (the importer reads IR versions " +
            std::to_string(onnximport::kOldestIrVersion) + " to " +
            std::to_string(onnximport::newestKnownIrVersion()) + ")";
    return false;
  }
  if (ir > onnximport::newestKnownIrVersion()) {
    error = "IR version " + std::to_string(ir) +
            " is newer than the importer knows (IR versions " +
            std::to_string(onnximport::kOldestIrVersion) + " to " +
            std::to_string(onnximport::newestKnownIrVersion()) + ")";
    return false;
  }
  std::set<std::string> seen;
  for (const auto &opset : model.opset_import()) {
    std::string domain = onnximport::canonicalDomain(opset.domain());
    if (!seen.insert(domain).second) {
      error = "opset of domain " + onnximport::displayDomain(domain) +
              " is imported twice";
      return false;
    }
    if (domain.empty() && (opset.version() < 1 ||
                           opset.version() > onnximport::newestKnownOpset())) {
      error = "ai.onnx opset " + std::to_string(opset.version()) +
              " is not supported (the importer knows opsets 1 to " +
              std::to_string(onnximport::newestKnownOpset()) + ")";
      return false;
    }
  }
  return true;
}

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  return "node " +
         (node.name().empty() ? "#" + std::to_string(index)
                              : "'" + node.name() + "'") +
         " (" + node.op_type() + ")";
}

/// Validation of models the linked checker does not know whole (newer IR or
/// opset, or inlined functions): the checker for every node whose operator
/// version it knows, the generated signature table for the others, and the
/// graph's single-assignment rule.
bool checkBeyondLibrary(const onnx::ModelProto &model,
                        const std::string &modelDir, std::string &error) {
  const auto &ranges =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::map<std::string, int64_t> opsets = opsetsOf(model);
  std::unordered_map<std::string, int> clamped;
  for (const auto &[domain, version] : opsets) {
    auto range = ranges.find(domain);
    clamped[domain] = static_cast<int>(
        range == ranges.end() ? version
                              : std::min<int64_t>(version, range->second.second));
  }
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(
      std::min<int64_t>(model.ir_version(), onnx::Version::IR_VERSION)));
  ctx.set_opset_imports(clamped);
  ctx.set_model_dir(modelDir);
  onnx::checker::LexicalScopeContext scope;

  std::set<std::string> defined;
  const auto &g = model.graph();
  for (const auto &init : g.initializer()) {
    onnx::checker::check_tensor(init, ctx);
    defined.insert(init.name());
  }
  for (const auto &input : g.input())
    defined.insert(input.name());
  for (int i = 0; i < g.node_size(); ++i) {
    const auto &node = g.node(i);
    for (const auto &out : node.output())
      if (!out.empty() && !defined.insert(out).second) {
        error = nodeLabel(node, i) + ": output '" + out +
                "' is already defined (a graph assigns each value once)";
        return false;
      }
    std::string domain = onnximport::canonicalDomain(node.domain());
    auto opset = opsets.find(domain);
    if (opset == opsets.end()) {
      error = nodeLabel(node, i) + ": the model imports no opset of domain " +
              onnximport::displayDomain(domain);
      return false;
    }
    const onnximport::OpSignature *signature =
        onnximport::resolveOpVersion(domain, node.op_type(), opset->second);
    if (!signature) {
      // Other domains (exporter-specific ops) are refused by name at import.
      if (!domain.empty() && domain != onnximport::kTrainingDomain)
        continue;
      error = nodeLabel(node, i) + ": " + onnximport::displayDomain(domain) +
              " opset " + std::to_string(opset->second) +
              " has no operator " + node.op_type();
      return false;
    }
    if (signature->deprecated) {
      error = nodeLabel(node, i) + ": " + node.op_type() +
              " is deprecated at opset " + std::to_string(opset->second);
      return false;
    }
    if (onnximport::libraryHasVersion(*signature, opset->second)) {
      onnx::checker::check_node(node, ctx, scope);
      continue;
    }
    if (auto problem = onnximport::checkNodeSignature(node, *signature)) {
      error = nodeLabel(node, i) + ": " + *problem;
      return false;
    }
  }
  return true;
}

} // namespace

bool onnximport::libraryKnowsModel(const onnx::ModelProto &model) {
  if (model.ir_version() > onnx::Version::IR_VERSION ||
      model.functions_size() > 0)
    return false;
  std::map<std::string, int64_t> opsets = opsetsOf(model);
  for (const auto &node : model.graph().node()) {
    std::string domain = canonicalDomain(node.domain());
    if (!domain.empty() && domain != kTrainingDomain)
      continue;
    auto opset = opsets.find(domain);
    if (opset == opsets.end())
      return false;
    const OpSignature *signature =
        resolveOpVersion(domain, node.op_type(), opset->second);
    if (!signature || !libraryHasVersion(*signature, opset->second))
      return false;
  }
  return true;
}

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
  if (!checkVersions(model, error)) {
    error = path.str() + ": " + error;
    return false;
  }
  bool hadFunctions = model.functions_size() > 0;
  if (!onnximport::inlineLocalFunctions(model, error)) {
    error = path.str() + ": " + error;
    return false;
  }
  try {
    if (!hadFunctions && onnximport::libraryKnowsModel(model) &&
        defaultOpset(model) <= onnx::OpSchemaRegistry::DomainToVersionRange::
                                   Instance().Map().at("").second) {
      // The path form resolves external data relative to the model's
      // directory (the ModelProto form would resolve it against the working
      // directory).
      onnx::checker::check_model(path.str());
    } else {
      std::error_code ec;
      auto dir = std::filesystem::absolute(std::filesystem::path(path.str()), ec)
                     .parent_path();
      if (!checkBeyondLibrary(model, dir.string(), error)) {
        error = path.str() + ": invalid ONNX model: " + error;
        return false;
      }
    }
  } catch (const std::exception &e) {
    error = path.str() + ": invalid ONNX model: " + onnximport::oneLine(e.what());
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

std::string oneLine(std::string text) {
  for (char &c : text)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  return text;
}

bool inferShapes(onnx::ModelProto &model, std::string &error) {
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    error = "ONNX shape inference failed: " + oneLine(e.what());
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
