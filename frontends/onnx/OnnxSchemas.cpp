//===- OnnxSchemas.cpp - Operator versions of current ONNX ----------------===//

#include "OnnxSchemas.h"

#include "onnx/defs/schema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace remat::onnximport {
namespace {

#define REMAT_ONNX_LIMITS(ir, opset)
#define REMAT_ONNX_SCHEMA(domain, op, since, deprecated, minIn, maxIn, minOut,  \
                          maxOut, attrs)                                        \
  OpSignature{domain, op, since, deprecated != 0, minIn, maxIn, minOut, maxOut, \
              attrs},
// Sorted by (domain, op, since_version), as the generator writes them.
const OpSignature kSignatures[] = {
#include "OnnxSchemas.inc"
};
#undef REMAT_ONNX_SCHEMA
#undef REMAT_ONNX_LIMITS

#define REMAT_ONNX_SCHEMA(...)
#define REMAT_ONNX_LIMITS(ir, opset) constexpr int64_t kLimits[] = {ir, opset};
#include "OnnxSchemas.inc"
#undef REMAT_ONNX_SCHEMA
#undef REMAT_ONNX_LIMITS

const char *attributeTypeName(int type) {
  using A = onnx::AttributeProto;
  switch (type) {
  case A::FLOAT: return "float";
  case A::INT: return "int";
  case A::STRING: return "string";
  case A::TENSOR: return "tensor";
  case A::GRAPH: return "graph";
  case A::FLOATS: return "floats";
  case A::INTS: return "ints";
  case A::STRINGS: return "strings";
  case A::TENSORS: return "tensors";
  case A::GRAPHS: return "graphs";
  case A::SPARSE_TENSOR: return "sparse tensor";
  case A::SPARSE_TENSORS: return "sparse tensors";
  case A::TYPE_PROTO: return "type";
  case A::TYPE_PROTOS: return "types";
  default: return "unknown";
  }
}

/// The type an attribute carries: its declared type, or for files that
/// leave `type` unset (IR < 2 style), the one field that is filled.
int attributeType(const onnx::AttributeProto &attr) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return attr.type();
  using A = onnx::AttributeProto;
  if (attr.has_f()) return A::FLOAT;
  if (attr.has_i()) return A::INT;
  if (attr.has_s()) return A::STRING;
  if (attr.has_t()) return A::TENSOR;
  if (attr.has_g()) return A::GRAPH;
  if (attr.floats_size()) return A::FLOATS;
  if (attr.ints_size()) return A::INTS;
  if (attr.strings_size()) return A::STRINGS;
  return A::UNDEFINED;
}

std::string countRange(int min, int max) {
  if (min == max)
    return std::to_string(min);
  if (max == std::numeric_limits<int32_t>::max())
    return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

} // namespace

int64_t newestKnownIrVersion() { return kLimits[0]; }
int64_t newestKnownOpset() { return kLimits[1]; }

bool isDefaultDomain(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string canonicalDomain(llvm::StringRef domain) {
  return isDefaultDomain(domain) ? std::string() : domain.str();
}

std::string displayDomain(llvm::StringRef domain) {
  return isDefaultDomain(domain) ? std::string("ai.onnx") : domain.str();
}

const OpSignature *resolveOpVersion(llvm::StringRef domain, llvm::StringRef op,
                                    int64_t opset) {
  llvm::StringRef key = isDefaultDomain(domain) ? "" : domain;
  auto less = [](const OpSignature &s, std::pair<llvm::StringRef, llvm::StringRef> k) {
    int c = llvm::StringRef(s.domain).compare(k.first);
    return c < 0 || (c == 0 && llvm::StringRef(s.op) < k.second);
  };
  const OpSignature *first = std::lower_bound(
      std::begin(kSignatures), std::end(kSignatures), std::make_pair(key, op), less);
  const OpSignature *found = nullptr;
  for (const OpSignature *s = first; s != std::end(kSignatures) &&
                                     key == s->domain && op == s->op;
       ++s)
    if (s->sinceVersion <= opset)
      found = s;
  return found;
}

bool libraryHasVersion(const OpSignature &signature, int64_t opset) {
  const auto &ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = ranges.find(signature.domain);
  if (range == ranges.end())
    return false;
  int64_t clamped = std::min<int64_t>(opset, range->second.second);
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      signature.op, static_cast<int>(clamped), signature.domain);
  return schema && schema->SinceVersion() == signature.sinceVersion;
}

std::optional<std::string> checkNodeSignature(const onnx::NodeProto &node,
                                              const OpSignature &signature) {
  std::string version = std::string(signature.op) + "-" +
                        std::to_string(signature.sinceVersion);
  // Trailing empty names are absent optional inputs.
  int inputs = node.input_size();
  while (inputs > 0 && node.input(inputs - 1).empty())
    --inputs;
  if (inputs < signature.minInputs || node.input_size() > signature.maxInputs)
    return version + " takes " +
           countRange(signature.minInputs, signature.maxInputs) +
           " inputs, the node has " + std::to_string(node.input_size());
  if (node.output_size() < signature.minOutputs ||
      node.output_size() > signature.maxOutputs)
    return version + " has " +
           countRange(signature.minOutputs, signature.maxOutputs) +
           " outputs, the node has " + std::to_string(node.output_size());

  struct Declared {
    llvm::StringRef name;
    int type;
    bool required;
    bool seen = false;
  };
  llvm::SmallVector<Declared> declared;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(signature.attributes).split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    auto [name, rest] = part.split(':');
    bool required = rest.consume_back("!");
    int type = 0;
    (void)rest.getAsInteger(10, type);
    declared.push_back({name, type, required});
  }
  for (const auto &attr : node.attribute()) {
    auto *d = llvm::find_if(declared, [&](const Declared &d) {
      return d.name == attr.name();
    });
    if (d == declared.end())
      return version + " has no attribute '" + attr.name() + "'";
    if (d->seen)
      return "attribute '" + attr.name() + "' is given twice";
    d->seen = true;
    // A reference to a function attribute is typed by the function.
    if (!attr.ref_attr_name().empty())
      continue;
    int type = attributeType(attr);
    if (type != d->type)
      return "attribute '" + attr.name() + "' of " + version + " must be " +
             attributeTypeName(d->type) + ", not " + attributeTypeName(type);
  }
  for (const Declared &d : declared)
    if (d.required && !d.seen)
      return version + " requires attribute '" + d.name.str() + "'";
  return std::nullopt;
}

} // namespace remat::onnximport
