//===- FunctionInlining.cpp - Inline model-local ONNX functions -----------===//

#include "FunctionInlining.h"

#include "OnnxSchemas.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace remat::onnximport {
namespace {

// Fields newer than the linked ONNX library's schema (IR 9-10): protobuf
// keeps them as unknown fields, read here by number.
constexpr int kNodeOverloadField = 8;              // NodeProto.overload
constexpr int kFunctionAttributeProtoField = 11;   // FunctionProto.attribute_proto
constexpr int kFunctionOverloadField = 13;         // FunctionProto.overload

// Calls nest at most this deep, and the inlined graph stays below this many
// nodes: a malicious model cannot make the importer loop or exhaust memory.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = 1'000'000;

std::vector<std::string> unknownStrings(const google::protobuf::Message &msg,
                                        int field) {
  std::vector<std::string> values;
  const auto &unknown = msg.GetReflection()->GetUnknownFields(msg);
  for (int i = 0; i < unknown.field_count(); ++i)
    if (unknown.field(i).number() == field &&
        unknown.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      values.push_back(unknown.field(i).length_delimited());
  return values;
}

std::string unknownString(const google::protobuf::Message &msg, int field) {
  auto values = unknownStrings(msg, field);
  return values.empty() ? std::string() : values.back();
}

using FunctionKey = std::tuple<std::string, std::string, std::string>;

std::string keyName(const FunctionKey &key) {
  std::string name = std::get<0>(key) + "." + std::get<1>(key);
  if (!std::get<2>(key).empty())
    name += " (overload '" + std::get<2>(key) + "')";
  return name;
}

class Inliner {
public:
  Inliner(onnx::ModelProto &model) : model(model) {}

  bool run(std::string &error);

private:
  bool collectFunctions(std::string &error);
  void collectNames();
  std::string freshName(const std::string &hint);
  /// Appends `node` to `out`, expanding it when it calls a function.
  bool expand(const onnx::NodeProto &node, std::vector<onnx::NodeProto> &out,
              std::vector<FunctionKey> &stack, std::string &error);
  bool expandCall(const onnx::NodeProto &call, const onnx::FunctionProto &fn,
                  const FunctionKey &key, std::vector<onnx::NodeProto> &out,
                  std::vector<FunctionKey> &stack, std::string &error);

  size_t expandedSize(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                      std::set<FunctionKey> &active);

  onnx::ModelProto &model;
  std::map<FunctionKey, const onnx::FunctionProto *> functions;
  std::map<FunctionKey, size_t> sizes;
  std::map<FunctionKey, std::vector<onnx::AttributeProto>> defaults;
  std::set<std::string> names;
};

bool Inliner::collectFunctions(std::string &error) {
  std::map<std::string, int64_t> modelOpsets;
  for (const auto &opset : model.opset_import())
    modelOpsets[canonicalDomain(opset.domain())] = opset.version();
  for (const auto &fn : model.functions()) {
    FunctionKey key{fn.domain(), fn.name(),
                    unknownString(fn, kFunctionOverloadField)};
    if (!functions.emplace(key, &fn).second) {
      error = "model-local function " + keyName(key) + " is defined twice";
      return false;
    }
    for (const std::string &bytes :
         unknownStrings(fn, kFunctionAttributeProtoField)) {
      onnx::AttributeProto attr;
      if (!attr.ParseFromString(bytes)) {
        error = "model-local function " + keyName(key) +
                ": a default attribute value does not parse";
        return false;
      }
      defaults[key].push_back(attr);
    }
    // The body is imported under the model's opsets, so they must agree.
    for (const auto &opset : fn.opset_import()) {
      std::string domain = canonicalDomain(opset.domain());
      auto it = modelOpsets.find(domain);
      if (it == modelOpsets.end()) {
        modelOpsets[domain] = opset.version();
        auto *added = model.add_opset_import();
        added->set_domain(domain);
        added->set_version(opset.version());
      } else if (it->second != opset.version()) {
        error = "model-local function " + keyName(key) + " imports " +
                displayDomain(domain) + " opset " +
                std::to_string(opset.version()) + " but the model imports " +
                std::to_string(it->second) +
                "; mixed opsets of one domain are not supported";
        return false;
      }
    }
  }
  return true;
}

void Inliner::collectNames() {
  const auto &g = model.graph();
  for (const auto &v : g.input())
    names.insert(v.name());
  for (const auto &v : g.output())
    names.insert(v.name());
  for (const auto &v : g.value_info())
    names.insert(v.name());
  for (const auto &t : g.initializer())
    names.insert(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      names.insert(o);
}

std::string Inliner::freshName(const std::string &hint) {
  std::string name = hint;
  for (int k = 1; names.count(name); ++k)
    name = hint + "__" + std::to_string(k);
  names.insert(name);
  return name;
}

bool Inliner::expand(const onnx::NodeProto &node,
                     std::vector<onnx::NodeProto> &out,
                     std::vector<FunctionKey> &stack, std::string &error) {
  FunctionKey key{node.domain(), node.op_type(),
                  unknownString(node, kNodeOverloadField)};
  auto fn = functions.find(key);
  if (fn == functions.end()) {
    out.push_back(node);
    return true;
  }
  for (const FunctionKey &active : stack)
    if (active == key) {
      std::string chain;
      for (const FunctionKey &k : stack)
        chain += keyName(k) + " -> ";
      error = "model-local function " + keyName(key) +
              " calls itself (" + chain + keyName(key) + ")";
      return false;
    }
  if (stack.size() >= static_cast<size_t>(kMaxDepth)) {
    error = "model-local function calls nest deeper than " +
            std::to_string(kMaxDepth) + " at " + keyName(key);
    return false;
  }
  stack.push_back(key);
  bool ok = expandCall(node, *fn->second, key, out, stack, error);
  stack.pop_back();
  return ok;
}

bool Inliner::expandCall(const onnx::NodeProto &call,
                         const onnx::FunctionProto &fn, const FunctionKey &key,
                         std::vector<onnx::NodeProto> &out,
                         std::vector<FunctionKey> &stack, std::string &error) {
  std::string where = "node '" + call.name() + "' (" + keyName(key) + "): ";
  if (call.input_size() > fn.input_size() ||
      call.output_size() > fn.output_size()) {
    error = where + "passes " + std::to_string(call.input_size()) +
            " inputs and " + std::to_string(call.output_size()) +
            " outputs to a function of " + std::to_string(fn.input_size()) +
            " inputs and " + std::to_string(fn.output_size()) + " outputs";
    return false;
  }
  // Caller attributes by name; each must be one the function declares.
  std::map<std::string, const onnx::AttributeProto *> given;
  std::set<std::string> declared(fn.attribute().begin(), fn.attribute().end());
  for (const auto &attr : defaults[key])
    declared.insert(attr.name());
  for (const auto &attr : call.attribute()) {
    if (!declared.count(attr.name())) {
      error = where + "attribute '" + attr.name() +
              "' is not a parameter of the function";
      return false;
    }
    given[attr.name()] = &attr;
  }
  for (const auto &attr : defaults[key])
    given.emplace(attr.name(), &attr);

  // Formal names map to the caller's actual names; all other body values
  // get fresh names, so two calls of one function never share a value.
  std::map<std::string, std::string> rename;
  for (int i = 0; i < fn.input_size(); ++i)
    rename[fn.input(i)] = i < call.input_size() ? call.input(i) : "";
  std::string prefix = (call.name().empty() ? fn.name() : call.name()) + "/";
  for (int i = 0; i < fn.output_size(); ++i)
    rename[fn.output(i)] = i < call.output_size() && !call.output(i).empty()
                               ? call.output(i)
                               : freshName(prefix + fn.output(i));
  auto actual = [&](const std::string &formal) -> std::string {
    if (formal.empty())
      return formal;
    auto it = rename.find(formal);
    if (it != rename.end())
      return it->second;
    return rename[formal] = freshName(prefix + formal);
  };

  for (const auto &bodyNode : fn.node()) {
    onnx::NodeProto node = bodyNode;
    node.set_name(prefix + (bodyNode.name().empty() ? bodyNode.op_type()
                                                    : bodyNode.name()));
    for (int i = 0; i < node.input_size(); ++i)
      node.set_input(i, actual(node.input(i)));
    for (int i = 0; i < node.output_size(); ++i)
      node.set_output(i, actual(node.output(i)));
    // Bind attribute references; an unbound one without default is absent.
    auto *attrs = node.mutable_attribute();
    for (int i = attrs->size() - 1; i >= 0; --i) {
      auto &attr = (*attrs)[i];
      if (attr.ref_attr_name().empty())
        continue;
      auto it = given.find(attr.ref_attr_name());
      if (it == given.end()) {
        attrs->DeleteSubrange(i, 1);
        continue;
      }
      std::string name = attr.name();
      attr = *it->second;
      attr.set_name(name);
    }
    if (!expand(node, out, stack, error))
      return false;
  }
  return true;
}

/// The number of nodes `nodes` expand to, saturating at kMaxNodes + 1,
/// counted before any copying (memoized per function; recursion is reported
/// by expand()).
size_t Inliner::expandedSize(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                             std::set<FunctionKey> &active) {
  size_t total = 0;
  for (const auto &node : nodes) {
    FunctionKey key{node.domain(), node.op_type(),
                    unknownString(node, kNodeOverloadField)};
    auto fn = functions.find(key);
    size_t size = 1;
    if (fn != functions.end() && !active.count(key)) {
      auto memo = sizes.find(key);
      if (memo != sizes.end()) {
        size = memo->second;
      } else {
        active.insert(key);
        size = expandedSize(fn->second->node(), active);
        active.erase(key);
        sizes[key] = size;
      }
    }
    total = std::min(total + size, kMaxNodes + 1);
  }
  return total;
}

bool Inliner::run(std::string &error) {
  if (model.functions_size() == 0)
    return true;
  if (!collectFunctions(error))
    return false;
  std::set<FunctionKey> active;
  if (expandedSize(model.graph().node(), active) > kMaxNodes) {
    error = "inlining model-local functions gives more than " +
            std::to_string(kMaxNodes) + " nodes";
    return false;
  }
  collectNames();
  std::vector<onnx::NodeProto> flat;
  std::vector<FunctionKey> stack;
  for (const auto &node : model.graph().node())
    if (!expand(node, flat, stack, error))
      return false;
  auto *nodes = model.mutable_graph()->mutable_node();
  nodes->Clear();
  nodes->Reserve(static_cast<int>(flat.size()));
  for (auto &node : flat)
    *nodes->Add() = std::move(node);
  model.clear_functions();
  return true;
}

} // namespace

bool inlineLocalFunctions(onnx::ModelProto &model, std::string &error) {
  return Inliner(model).run(error);
}

} // namespace remat::onnximport
