//===- FoldedParameters.cpp - Spot weights an exporter folded away --------===//
//
// Two signs, as PyTorch 2.x's exporters leave them (tests/models/hf: every
// export with folded parameters shows one, no export without does):
//  - a MatMul/Gemm operand or Conv weight of at least kMinElements floats
//    that is a Constant node's output or an initializer named by the
//    exporter rather than after a module (`val_12` from the dynamo
//    exporter's optimizer, `onnx::MatMul_575` from the TorchScript
//    exporter's constant folding);
//  - a Conv bias named after the Conv's weight plus `_bias`: the onnxscript
//    optimizer fused a BatchNormalization into the convolution (the weight
//    keeps its name but holds other values).
//
//===----------------------------------------------------------------------===//

#include "FoldedParameters.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>

namespace remat::onnximport {
namespace {

/// Smaller constant operands are scales and masks, not weights.
constexpr int64_t kMinElements = 64;

bool isLargeFloat(const onnx::TensorProto &t) {
  if (t.data_type() != onnx::TensorProto::FLOAT &&
      t.data_type() != onnx::TensorProto::DOUBLE &&
      t.data_type() != onnx::TensorProto::FLOAT16 &&
      t.data_type() != onnx::TensorProto::BFLOAT16)
    return false;
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  return n >= kMinElements;
}

/// A name the exporter generated for a folded value (the dynamo exporter's
/// `val_<n>`, TorchScript's `onnx::<Op>_<n>`).
bool isExporterName(llvm::StringRef name) {
  if (name.starts_with("onnx::"))
    return true;
  return name.consume_front("val_") && !name.empty() &&
         name.find_first_not_of("0123456789") == llvm::StringRef::npos;
}

/// The operand slots that hold weights: both MatMul/Gemm operands (either
/// may be the transposed weight), Conv's filter.
llvm::ArrayRef<int> weightSlots(llvm::StringRef op) {
  static const int both[] = {0, 1}, second[] = {1};
  if (op == "MatMul" || op == "Gemm")
    return both;
  if (op == "Conv")
    return second;
  return {};
}

} // namespace

std::optional<std::string> foldedParameterWarning(const onnx::GraphProto &graph) {
  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const auto &init : graph.initializer())
    initializers[init.name()] = &init;
  std::map<std::string, const onnx::TensorProto *> constants;
  for (const auto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const auto &a : node.attribute())
        if (a.name() == "value" && a.has_t())
          constants[node.output(0)] = &a.t();

  int folded = 0, fusedNorms = 0;
  std::string example, normExample;
  for (const auto &node : graph.node()) {
    for (int slot : weightSlots(node.op_type())) {
      if (slot >= node.input_size())
        continue;
      const std::string &name = node.input(slot);
      auto init = initializers.find(name);
      auto constant = constants.find(name);
      bool made = (init != initializers.end() && isExporterName(name) &&
                   isLargeFloat(*init->second)) ||
                  (constant != constants.end() && isLargeFloat(*constant->second));
      if (!made)
        continue;
      if (folded++ == 0)
        example = "'" + name + "', the weight of " + node.op_type() + " '" +
                  node.name() + "'";
    }
    if (node.op_type() == "Conv" && node.input_size() > 2 &&
        node.input(2) == node.input(1) + "_bias" &&
        initializers.count(node.input(2)) && fusedNorms++ == 0)
      normExample = "'" + node.input(2) + "'";
  }
  if (folded == 0 && fusedNorms == 0)
    return std::nullopt;
  std::string what;
  if (folded > 0)
    what = std::to_string(folded) + " weight" + (folded > 1 ? "s" : "") +
           " into constants (e.g. " + example + ")";
  if (fusedNorms > 0)
    what += (what.empty() ? "" : " and ") + std::to_string(fusedNorms) +
            " BatchNormalization" + (fusedNorms > 1 ? "s" : "") +
            " into convolutions (e.g. bias " + normExample + ")";
  return "the export folded trainable parameters: " + what +
         "; training cannot update the model's own parameters through them. "
         "Export without folding: torch.onnx.export(..., dynamo=True, "
         "optimize=False), or do_constant_folding=False with the TorchScript "
         "exporter";
}

} // namespace remat::onnximport
