//===- OnnxImporter.cpp - ONNX ModelProto to func.func @forward -----------===//
//
// Import in four steps: (1) report every unsupported op at once, (2) bind
// input shapes and run ONNX shape inference (a cross-check), (3) create the
// function arguments (data inputs, then weights), (4) import the nodes in
// order, folding constant ones, then return the graph outputs and verify.
//
//===----------------------------------------------------------------------===//

#include "remat/Frontend/OnnxImporter.h"

#include "FoldedParameters.h"
#include "FunctionInlining.h"
#include "ImportContext.h"
#include "ModelLoading.h"
#include "NodeImporter.h"

#include "remat/Dialect/RematDialect.h"
#include "remat/Dialect/RematOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>

using namespace mlir;

namespace remat {
namespace {

using namespace onnximport;

enum class Role { Input, Parameter, Buffer };

const char *roleName(Role role) {
  switch (role) {
  case Role::Input: return "input";
  case Role::Parameter: return "parameter";
  case Role::Buffer: return "buffer";
  }
  return "input";
}

struct ArgSpec {
  std::string name;
  Role role;
  rt::DType dtype;
  std::vector<int64_t> shape;
  const onnx::TensorProto *proto = nullptr; // initializer or input value
  bool initializer = false;
};

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? "#" + std::to_string(index)
                             : "'" + node.name() + "'";
}

/// Why a whole domain is refused, for the domains exporters write.
std::string domainHint(llvm::StringRef domain) {
  if (domain == "com.microsoft")
    return " (com.microsoft holds onnxruntime's contrib ops, which graph "
           "optimizations write; export the model without them)";
  if (domain.starts_with("pkg.onnxscript"))
    return " (an onnxscript library function the model does not define; "
           "export with the functions inlined or included in the model)";
  if (!isDefaultDomain(domain) && domain != kTrainingDomain)
    return " (only the ai.onnx and ai.onnx.preview.training domains and the "
           "model's own functions are supported)";
  return "";
}

/// The handler table for a node's domain, or null for an unsupported domain.
const llvm::StringMap<OpHandler> *handlersFor(const std::string &domain) {
  if (isDefaultDomain(domain))
    return &opHandlers();
  if (domain == kTrainingDomain)
    return &trainingOpHandlers();
  return nullptr;
}

/// The importer's handler for `node`, or null.
OpHandler handlerFor(const onnx::NodeProto &node) {
  const auto *table = handlersFor(node.domain());
  if (!table)
    return nullptr;
  auto it = table->find(node.op_type());
  return it == table->end() ? nullptr : it->second;
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &ctx, const onnx::ModelProto &model,
                llvm::StringRef path, const OnnxImportOptions &options)
      : ic(ctx, model, path.str(), modelDirOf(path), options) {}

  OwningOpRef<ModuleOp> run();

private:
  static std::string modelDirOf(llvm::StringRef path) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(std::filesystem::path(path.str()), ec);
    return ec ? std::string(".") : abs.parent_path().string();
  }
  bool checkSupported();
  bool bindShapes(onnx::ModelProto &copy);
  bool collectArgs();
  bool importNodes();

  ImportContext ic;
  const onnx::GraphProto &graph() { return ic.model.graph(); }
  std::vector<ArgSpec> args;
};

bool GraphImporter::checkSupported() {
  bool ok = true;
  for (int i = 0; i < graph().node_size(); ++i) {
    const auto &node = graph().node(i);
    if (node.domain() == kTrainingDomain && handlerFor(node) &&
        ic.trainingOpset > 1) {
      ic.error("node " + nodeLabel(node, i) + " (" + node.op_type() +
               ", domain " + node.domain() + "): unsupported opset version " +
               std::to_string(ic.trainingOpset) + " (only 1 is supported)");
      ok = false;
      continue;
    }
    if (handlerFor(node))
      continue;
    ic.error("node " + nodeLabel(node, i) + " (" + node.op_type() +
             ", domain " +
             displayDomain(node.domain()) +
             "): unsupported op" + domainHint(node.domain()));
    ok = false;
  }
  return ok;
}

/// Binds every graph input's shape, writes it into `copy`, runs ONNX shape
/// inference and records the static shapes it finds.
bool GraphImporter::bindShapes(onnx::ModelProto &copy) {
  std::set<std::string> initNames;
  for (const auto &init : graph().initializer())
    initNames.insert(init.name());
  std::set<std::string> inputNames;
  for (const auto &input : graph().input())
    inputNames.insert(input.name());
  for (const auto &[name, shape] : ic.options.inputShapes)
    if (!inputNames.count(name)) {
      ic.error("--shape names '" + name + "', which is not a graph input");
      return false;
    }
  auto *g = copy.mutable_graph();
  for (int i = 0; i < g->input_size(); ++i) {
    auto *input = g->mutable_input(i);
    if (initNames.count(input->name()))
      continue;
    if (!input->type().has_tensor_type()) {
      ic.error("input '" + input->name() + "' is not a tensor");
      return false;
    }
    auto *tensorType = input->mutable_type()->mutable_tensor_type();
    std::vector<int64_t> shape;
    auto bound = ic.options.inputShapes.find(input->name());
    if (bound != ic.options.inputShapes.end()) {
      shape = bound->second;
    } else {
      if (!tensorType->has_shape()) {
        ic.error("input '" + input->name() +
                 "' has no shape; bind it with --shape " + input->name() +
                 "=AxB");
        return false;
      }
      const auto &dims = tensorType->shape().dim();
      for (int d = 0; d < dims.size(); ++d) {
        const auto &dim = dims[d];
        if (dim.has_dim_value() && dim.dim_value() >= 0) {
          shape.push_back(dim.dim_value());
          continue;
        }
        if (d == 0 && ic.options.batchSize >= 0) {
          shape.push_back(ic.options.batchSize);
          continue;
        }
        std::string sym = dim.has_dim_param() ? dim.dim_param() : "?";
        ic.error("input '" + input->name() + "' dim " + std::to_string(d) +
                 " ('" + sym + "') is not static; bind it with --shape " +
                 input->name() + "=AxB or --batch N");
        return false;
      }
    }
    auto *shapeProto = tensorType->mutable_shape();
    shapeProto->clear_dim();
    for (int64_t d : shape)
      shapeProto->add_dim()->set_dim_value(d);
  }
  // ONNX shape inference cross-checks the importer's own shapes where the
  // linked library knows every operator version; newer models rely on the
  // importer's inference alone.
  if (!libraryKnowsModel(ic.model))
    return true;
  copy.set_ir_version(std::min<int64_t>(copy.ir_version(), onnx::Version::IR_VERSION));
  std::string error;
  if (!inferShapes(copy, error)) {
    ic.error(error);
    return false;
  }
  for (const auto &vi : copy.graph().value_info())
    if (auto s = staticShape(vi.type()))
      ic.inferredShapes[vi.name()] = *s;
  for (const auto &vi : copy.graph().output())
    if (auto s = staticShape(vi.type()))
      ic.inferredShapes[vi.name()] = *s;
  return true;
}

bool GraphImporter::collectArgs() {
  // The bound shapes of data inputs were written into the copy; read them
  // back from there via inferredShapes-like logic: recompute here.
  std::map<std::string, const onnx::TensorProto *> inits;
  for (const auto &init : graph().initializer())
    inits[init.name()] = &init;
  std::vector<ArgSpec> data, weights;
  for (const auto &input : graph().input()) {
    if (inits.count(input.name()))
      continue;
    ArgSpec spec;
    spec.name = input.name();
    const auto &doc = input.doc_string();
    int elemType = input.type().tensor_type().elem_type();
    auto dtype = dtypeFromOnnxType(elemType);
    if (!dtype) {
      ic.error("input '" + input.name() + "' has unsupported element type " +
               std::to_string(elemType));
      return false;
    }
    spec.dtype = *dtype;
    auto bound = ic.options.inputShapes.find(input.name());
    if (bound != ic.options.inputShapes.end()) {
      spec.shape = bound->second;
    } else {
      for (const auto &dim : input.type().tensor_type().shape().dim())
        spec.shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                                 ? dim.dim_value()
                                 : ic.options.batchSize);
    }
    if (!shapeIsSane(spec.shape, spec.dtype)) {
      ic.error("input '" + input.name() + "' is too large or has a negative dim");
      return false;
    }
    bool isParam = doc.find("role=parameter") != std::string::npos;
    bool isBuffer = doc.find("role=buffer") != std::string::npos ||
                    ic.options.frozen.count(input.name());
    if (isParam || isBuffer) {
      spec.role = (isBuffer || !rt::isFloat(spec.dtype)) ? Role::Buffer
                                                         : Role::Parameter;
      weights.push_back(spec);
    } else {
      spec.role = Role::Input;
      auto value = ic.options.inputValues.find(input.name());
      if (value != ic.options.inputValues.end())
        spec.proto = value->second;
      data.push_back(spec);
    }
  }
  for (const auto &init : graph().initializer()) {
    ArgSpec spec;
    spec.name = init.name();
    spec.proto = &init;
    spec.initializer = true;
    auto dtype = dtypeFromOnnxType(init.data_type());
    if (!dtype) {
      ic.error("initializer '" + init.name() +
               "' has unsupported element type " +
               std::to_string(init.data_type()));
      return false;
    }
    spec.dtype = *dtype;
    spec.shape.assign(init.dims().begin(), init.dims().end());
    if (!shapeIsSane(spec.shape, spec.dtype)) {
      ic.error("initializer '" + init.name() +
               "' is too large or has a negative dim");
      return false;
    }
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      std::string error;
      if (!checkExternalData(init, ic.modelDir, error)) {
        ic.error(error);
        return false;
      }
    } else {
      // Inline data must match the dims (weights are read later, by the
      // runtime; catch a malformed file here).
      int64_t numel = 1;
      for (int64_t d : spec.shape)
        numel *= d;
      int64_t typed = init.float_data_size() + init.int32_data_size() +
                      init.int64_data_size() + init.double_data_size() +
                      init.uint64_data_size();
      bool ok = init.has_raw_data()
                    ? (int64_t)init.raw_data().size() ==
                          numel * (int64_t)rt::dtypeSize(spec.dtype)
                    : typed == numel;
      if (!ok) {
        ic.error("initializer '" + init.name() + "' holds " +
                 (init.has_raw_data()
                      ? std::to_string(init.raw_data().size()) + " bytes"
                      : std::to_string(typed) + " values") +
                 ", which does not match its shape " +
                 rt::shapeToString(spec.shape));
        return false;
      }
    }
    bool buffer = init.doc_string().find("role=buffer") != std::string::npos ||
                  ic.options.frozen.count(init.name()) ||
                  !rt::isFloat(spec.dtype);
    spec.role = buffer ? Role::Buffer : Role::Parameter;
    weights.push_back(spec);
  }
  args = std::move(data);
  args.insert(args.end(), weights.begin(), weights.end());
  std::set<std::string> seen;
  for (const auto &a : args)
    if (!seen.insert(a.name).second) {
      ic.error("value '" + a.name + "' is defined twice");
      return false;
    }
  return true;
}

bool GraphImporter::importNodes() {
  for (int i = 0; i < graph().node_size(); ++i) {
    const auto &node = graph().node(i);
    NodeImporter n(ic, node, i);
    std::vector<const rt::Tensor *> consts;
    bool allKnown = node.input_size() > 0;
    for (int k = 0; k < node.input_size(); ++k) {
      if (node.input(k).empty()) {
        consts.push_back(nullptr);
        continue;
      }
      if (!ic.lookup(node.input(k))) {
        (void)n.fail("input '" + node.input(k) + "' is not defined before use");
        return false;
      }
      const rt::Tensor *t = ic.constant(node.input(k), /*required=*/false);
      consts.push_back(t);
      allKnown &= t != nullptr;
    }
    try {
      // Only default-domain ops fold (the training ops have no folder, and
      // Gradient must see the ops it differentiates).
      if (allKnown && node.op_type() != "Constant" &&
          isDefaultDomain(node.domain())) {
        auto results = foldNode(n, consts);
        if (ic.hadError)
          return false;
        if (results) {
          for (size_t k = 0; k < results->size(); ++k) {
            if (n.hasOut(k)) {
              auto it = ic.inferredShapes.find(node.output(k));
              if (it != ic.inferredShapes.end() &&
                  it->second != (*results)[k].shape()) {
                (void)n.fail("inconsistent shapes for '" + node.output(k) +
                       "': ONNX infers " + rt::shapeToString(it->second) +
                       ", the importer " +
                       rt::shapeToString((*results)[k].shape()));
                return false;
              }
            }
            n.outConst(k, std::move((*results)[k]));
          }
          for (int k = results->size(); k < node.output_size(); ++k)
            if (n.hasOut(k)) {
              (void)n.fail("output #" + std::to_string(k) + " is not supported");
              return false;
            }
          continue;
        }
      }
      OpHandler handler = handlerFor(node);
      if (!handler) {
        (void)n.fail("unsupported op");
        return false;
      }
      if (failed(handler(n))) {
        if (!ic.hadError)
          (void)n.fail("import failed");
        return false;
      }
    } catch (const std::exception &e) {
      (void)n.fail(e.what());
      return false;
    }
    if (ic.hadError)
      return false;
    for (int k = 0; k < node.output_size(); ++k)
      if (n.hasOut(k) && !ic.lookup(node.output(k))) {
        (void)n.fail("output #" + std::to_string(k) + " ('" + node.output(k) +
               "') is not supported");
        return false;
      }
  }
  return true;
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  MLIRContext &ctx = ic.ctx;
  ctx.getOrLoadDialect<RematDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
  ic.fromPyTorch = ic.model.producer_name() == "pytorch";
  for (const auto &opset : ic.model.opset_import())
    if (isDefaultDomain(opset.domain()))
      ic.opset = opset.version();
    else if (opset.domain() == kTrainingDomain)
      ic.trainingOpset = opset.version();

  if (!checkSupported())
    return nullptr;
  onnx::ModelProto copy;
  {
    // Shape inference on a copy without initializer data (only dims and
    // types matter), so large weights are not duplicated.
    copy.CopyFrom(ic.model);
    for (auto &init : *copy.mutable_graph()->mutable_initializer()) {
      // Small initializers keep their data: shape inference reads them
      // (Reshape shapes and the like).
      if (init.data_location() != onnx::TensorProto::EXTERNAL &&
          init.ByteSizeLong() <= 4096)
        continue;
      init.clear_raw_data();
      init.clear_float_data();
      init.clear_int32_data();
      init.clear_int64_data();
      init.clear_double_data();
      init.clear_uint64_data();
      init.clear_external_data();
      init.clear_data_location();
    }
  }
  if (!bindShapes(copy) || !collectArgs())
    return nullptr;

  Location fileLoc = FileLineColLoc::get(&ctx, ic.file, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder &b = ic.builder;
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes;
  for (const auto &a : args)
    argTypes.push_back(
        RankedTensorType::get(a.shape, elementTypeFor(&ctx, a.dtype)));
  auto func = b.create<func::FuncOp>(fileLoc, "forward",
                                     b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  for (size_t i = 0; i < args.size(); ++i) {
    func.setArgAttr(i, RematDialect::kNameAttr, b.getStringAttr(args[i].name));
    func.setArgAttr(i, RematDialect::kRoleAttr,
                    b.getStringAttr(roleName(args[i].role)));
    ValueEntry &e = ic.values[args[i].name];
    e.value = entry->getArgument(i);
    e.proto = args[i].proto;
    e.argIndex = i;
    e.argName = args[i].name;
    e.integerInitializer = args[i].initializer && !rt::isFloat(args[i].dtype);
  }

  if (!importNodes())
    return nullptr;

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &output : graph().output()) {
    const ValueEntry *entry = ic.lookup(output.name());
    if (!entry) {
      ic.error("graph output '" + output.name() + "' is not produced by any node");
      return nullptr;
    }
    if (entry->sequence) {
      ic.error("graph output '" + output.name() +
               "' is a sequence: sequences are resolved at import, so graph "
               "outputs must be tensors");
      return nullptr;
    }
    Value v = ic.value(output.name(), fileLoc);
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  b.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (int i = 0; i < graph().output_size(); ++i)
    func.setResultAttr(i, RematDialect::kNameAttr,
                       b.getStringAttr(graph().output(i).name()));

  for (const auto &[name, row] : ic.options.paddingIdx)
    if (!ic.paddingIdxApplied.count(name)) {
      ic.error("--padding-idx " + name + "=" + llvm::Twine(row) +
               ": no Gather along axis 0 reads an initializer named '" +
               name + "'");
      return nullptr;
    }

  // Arguments only ever used as compile-time values are folded away.
  llvm::BitVector erase(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (entry->getArgument(i).use_empty() && ic.usedAsConstant.count(args[i].name))
      erase.set(i);
  if (erase.any())
    (void)func.eraseArguments(erase);

  // The path as the user gave it: printed IR stays free of this machine's
  // directories (and diffs between machines); remat-run and code generation
  // resolve a relative path when they read the weights.
  func->setAttr(RematDialect::kModelPathAttr,
                b.getStringAttr(std::filesystem::path(ic.file)
                                    .lexically_normal()
                                    .string()));

  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        diagnostics += "; ";
      diagnostics += diag.str();
      return success();
    });
    if (failed(mlir::verify(*module))) {
      ic.error("internal error: the imported module does not verify: " +
               diagnostics);
      return nullptr;
    }
  }
  if (auto warning = foldedParameterWarning(graph()))
    llvm::errs() << "warning: " << ic.file << ": " << *warning << "\n";
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context,
                                      const onnx::ModelProto &model,
                                      llvm::StringRef path,
                                      const OnnxImportOptions &options) {
  try {
    if (model.functions_size() > 0) {
      // Models read by loadOnnxModel arrive inlined; others are inlined here.
      onnx::ModelProto inlined(model);
      std::string error;
      if (!inlineLocalFunctions(inlined, error)) {
        llvm::errs() << "error: " << path << ": " << error << "\n";
        return nullptr;
      }
      GraphImporter importer(context, inlined, path, options);
      return importer.run();
    }
    GraphImporter importer(context, model, path, options);
    return importer.run();
  } catch (const std::exception &e) {
    llvm::errs() << "error: " << path << ": " << oneLine(e.what()) << "\n";
    return nullptr;
  }
}

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, llvm::StringRef path,
                                     const OnnxImportOptions &options) {
  onnx::ModelProto model;
  std::string error;
  if (!loadOnnxModel(path, model, error)) {
    llvm::errs() << "error: " << error << "\n";
    return nullptr;
  }
  return importOnnxModel(context, model, path, options);
}

} // namespace remat
