//===- TrainStepEmitter.cpp - A planned @train_step as C++ or CUDA --------===//
//
// Layout first, then code. Every value of the step gets its storage:
//  - op results and input batches with a plan offset live in the arena;
//  - parameters, buffers, optimizer state and the step counter get slots in
//    the persistent region, in argument order; results the step returns
//    under those roles are written in place into their argument's slot
//    (checked: nothing reads the old value afterwards);
//  - constants get persistent slots too, filled by the harness at start-up;
//  - a reshape is a view of its input's storage.
// Then each op becomes the kernel call its interpreter executor makes, with
// views at those constant offsets.
//
//===----------------------------------------------------------------------===//

#include "remat/Target/Cpp/TrainStepEmitter.h"

#include "KernelCallWriter.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/Interpreter/TensorConversion.h"
#include "remat/runtime/Program.h"
#include "remat/runtime/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>

using namespace mlir;

namespace remat {
namespace {

constexpr int64_t kAlignment = 256;

int64_t alignUp(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

const char *dtypeEnumName(rt::DType dtype) {
  switch (dtype) {
  case rt::DType::F32: return "F32";
  case rt::DType::F64: return "F64";
  case rt::DType::F16: return "F16";
  case rt::DType::BF16: return "BF16";
  case rt::DType::I64: return "I64";
  case rt::DType::I32: return "I32";
  case rt::DType::I8: return "I8";
  case rt::DType::U8: return "U8";
  case rt::DType::Bool: return "Bool";
  }
  return "F32";
}


struct Storage {
  rt::Region region = rt::Region::Arena;
  int64_t offset = 0;
};

struct Constant {
  rt::Tensor tensor;
  int64_t offset = 0;
  bool splat = false;
};

class TrainStepEmitter final : public OpEmitContext {
public:
  TrainStepEmitter(func::FuncOp step, func::FuncOp forward,
                   const TrainStepEmitOptions &options)
      : step_(step), forward_(forward), options_(options), body_(bodyText_) {}

  LogicalResult run(raw_ostream &os) {
    if (failed(layOut()) || failed(emitBody()))
      return failure();
    emitFile(os);
    return success();
  }

  // OpEmitContext
  std::string operand(Value value) override {
    if (!value)
      return "remat::rt::TensorView()";
    return view(value, shapeOf(value));
  }
  std::string result(Value value) override {
    return view(value, shapeOf(value));
  }
  std::string optionalResult(Value value) override {
    if (value.use_empty())
      return "remat::rt::TensorView()";
    return result(value);
  }
  std::string resultWithShape(Value value, ArrayRef<int64_t> shape) override {
    return view(value, std::vector<int64_t>(shape.begin(), shape.end()));
  }
  std::string stepNumber(Value value) override {
    std::string pointer =
        "reinterpret_cast<const int64_t *>(" + address(value) + ")";
    return options_.backend == CodegenBackend::Cuda ? pointer : "*" + pointer;
  }
  std::string dropoutStep() override {
    return options_.backend == CodegenBackend::Cuda ? "ctx.deviceStep"
                                                    : "ctx.step";
  }
  void call(StringRef kernel, ArrayRef<std::string> args) override {
    std::string line = "  kernels::" + kernel.str() + "(";
    size_t length = line.size();
    for (const std::string &arg : args)
      length += arg.size() + 2;
    if (length <= 80) {
      for (auto [i, arg] : llvm::enumerate(args))
        line += (i ? ", " : "") + arg;
      body_ << line << ");\n";
      return;
    }
    body_ << line << "\n";
    for (auto [i, arg] : llvm::enumerate(args))
      body_ << "      " << arg << (i + 1 == args.size() ? ");\n" : ",\n");
  }

private:
  // Layout.
  LogicalResult layOut();
  LogicalResult layOutArguments();
  LogicalResult placeInPlace(Operation *op, Value result, unsigned position);
  int64_t addPersistent(int64_t bytes) {
    const int64_t offset = persistentBytes_;
    persistentBytes_ += alignUp(std::max<int64_t>(bytes, 1));
    return offset;
  }

  // Code.
  LogicalResult emitBody();
  void emitFile(raw_ostream &os);
  void emitArguments(raw_ostream &os);
  void emitResults(raw_ostream &os);
  void emitConstants(raw_ostream &os);

  std::string address(Value value) {
    const Storage &s = storage_.at(value);
    return std::string(s.region == rt::Region::Arena ? "A" : "P") + " + " +
           cppInt(s.offset);
  }
  std::string view(Value value, const std::vector<int64_t> &shape) {
    auto type = cast<RankedTensorType>(value.getType());
    return "T(DType::" + std::string(dtypeEnumName(dtypeOf(type))) + ", " +
           cppIntList(shape) + ", " + address(value) + ")";
  }
  static std::vector<int64_t> shapeOf(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  }
  static int64_t bytesOf(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    return rt::numElements(remat::shapeOf(type)) *
           static_cast<int64_t>(rt::dtypeSize(dtypeOf(type)));
  }
  std::string argString(unsigned index, StringRef attr) {
    auto value = step_.getArgAttrOfType<StringAttr>(index, attr);
    return value ? value.str() : "";
  }
  std::string resultString(unsigned index, StringRef attr) {
    auto value = step_.getResultAttrOfType<StringAttr>(index, attr);
    return value ? value.str() : "";
  }

  func::FuncOp step_, forward_;
  const TrainStepEmitOptions &options_;
  llvm::DenseMap<Value, Storage> storage_;
  llvm::DenseMap<Operation *, unsigned> position_;
  int64_t persistentBytes_ = 0;
  int64_t arenaBytes_ = 0;
  std::vector<Constant> constants_;
  llvm::DenseMap<Attribute, unsigned> constantIndex_;
  std::vector<std::string> opDescriptions_;
  std::string bodyText_;
  llvm::raw_string_ostream body_;
};

LogicalResult TrainStepEmitter::layOutArguments() {
  Block &block = step_.getBody().front();
  for (BlockArgument arg : block.getArguments()) {
    const unsigned i = arg.getArgNumber();
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !dtypeFromType(type.getElementType()))
      return step_.emitError("argument ")
             << i << " has type " << arg.getType()
             << "; generated code needs statically shaped tensors of a "
                "runtime dtype";
    const std::string role = argString(i, RematDialect::kRoleAttr);
    if (role != "input" && !rt::isPersistentRole(role))
      return step_.emitError("argument ")
             << i << " has role '" << role
             << "'; expected input, parameter, buffer, optimizer_state, step "
                "or loss_scale";
    auto offset = step_.getArgAttrOfType<IntegerAttr>(
        i, RematDialect::kArenaOffsetAttr);
    if (role == "input" && offset && offset.getInt() >= 0)
      storage_[arg] = Storage{rt::Region::Arena, offset.getInt()};
    else
      storage_[arg] = Storage{rt::Region::Persistent, addPersistent(bytesOf(arg))};
  }
  return success();
}

/// Binds a result the step returns as persistent state to its argument's
/// slot, after proving the in-place write safe.
LogicalResult TrainStepEmitter::placeInPlace(Operation *op, Value result,
                                             unsigned position) {
  auto ret = cast<func::ReturnOp>(step_.getBody().front().getTerminator());
  std::string name, role;
  for (OpOperand &use : result.getUses())
    if (use.getOwner() == ret.getOperation()) {
      const unsigned index = use.getOperandNumber();
      const std::string r = resultString(index, RematDialect::kRoleAttr);
      if (rt::isPersistentRole(r)) {
        name = resultString(index, RematDialect::kNameAttr);
        role = r;
      }
    }
  if (role.empty()) {
    if (result.use_empty())
      return success(); // no storage: optional outputs are skipped
    return op->emitOpError("result ")
           << cast<OpResult>(result).getResultNumber()
           << " has no arena offset and is not persistent state; was the "
              "function planned by remat-plan?";
  }
  BlockArgument slot;
  for (BlockArgument arg : step_.getArguments())
    if (argString(arg.getArgNumber(), RematDialect::kNameAttr) == name &&
        argString(arg.getArgNumber(), RematDialect::kRoleAttr) == role)
      slot = arg;
  if (!slot)
    return op->emitOpError("returns ")
           << role << " '" << name << "', which matches no argument";
  if (bytesOf(slot) != bytesOf(result) ||
      slot.getType() != result.getType())
    return op->emitOpError("result '")
           << name << "' has type " << result.getType()
           << " but its argument has " << slot.getType();
  // Writing the new value over the old is safe if nothing reads the old
  // value (or a view of it) after this op, and this op reads it element by
  // element.
  SmallVector<Value> oldValues{slot};
  for (size_t i = 0; i < oldValues.size(); ++i)
    for (Operation *user : oldValues[i].getUsers())
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        oldValues.push_back(reshape.getOutput());
  for (Value old : oldValues)
    for (Operation *user : old.getUsers()) {
      if (isa<ReshapeOp>(user))
        continue;
      if (user == op) {
        if (!op->hasTrait<InPlaceElementwise>())
          return op->emitOpError("would update ")
                 << role << " '" << name
                 << "' in place while reading it (not an elementwise op)";
        continue;
      }
      if (isa<func::ReturnOp>(user) || position_.lookup(user) > position)
        return user->emitOpError("reads ")
               << role << " '" << name << "' after "
               << op->getName() << " updated it in place; run "
                  "remat-schedule-updates";
    }
  if (storage_.count(result))
    return op->emitOpError("result written to two places");
  // Copied out first: inserting `result` may grow the map and move the
  // entry a reference into it would point at.
  const Storage slotStorage = storage_.at(slot);
  storage_[result] = slotStorage;
  return success();
}

LogicalResult TrainStepEmitter::layOut() {
  auto arenaBytes = step_->getAttrOfType<IntegerAttr>("remat.arena_bytes");
  if (!arenaBytes)
    return step_.emitError("@train_step has no memory plan "
                           "(remat.arena_bytes); run remat-plan (remat-opt "
                           "--budget) first");
  arenaBytes_ = arenaBytes.getInt();
  Block &block = step_.getBody().front();
  unsigned position = 0;
  for (Operation &op : block)
    position_[&op] = position++;
  if (failed(layOutArguments()))
    return failure();

  for (Operation &op : block) {
    if (isa<func::ReturnOp>(op))
      break;
    for (Value result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.hasStaticShape() ||
          !dtypeFromType(type.getElementType()))
        return op.emitOpError("result type ")
               << result.getType() << " has no runtime dtype or static shape";
    }
    if (auto constant = dyn_cast<remat::ConstantOp>(op)) {
      Attribute key = constant.getValue();
      auto [it, inserted] = constantIndex_.try_emplace(key, constants_.size());
      if (inserted) {
        Constant c;
        try {
          c.tensor = tensorFromElementsAttr(constant.getValue());
        } catch (const rt::RuntimeError &e) {
          return op.emitOpError(e.what());
        }
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        c.splat = dense && dense.isSplat();
        c.offset = addPersistent(static_cast<int64_t>(c.tensor.bytes()));
        constants_.push_back(std::move(c));
      }
      storage_[constant.getResult()] =
          Storage{rt::Region::Persistent, constants_[it->second].offset};
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      const Storage input = storage_.at(reshape.getInput()); // see above
      storage_[reshape.getOutput()] = input;
      continue;
    }
    if (op.getNumResults() == 0)
      continue;
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("remat.arena_offsets");
    if (!offsets || offsets.size() != static_cast<int64_t>(op.getNumResults()))
      return op.emitOpError("has no remat.arena_offsets entry for each result; "
                            "was the function planned by remat-plan?");
    for (auto [result, offset] :
         llvm::zip_equal(op.getResults(), offsets.asArrayRef())) {
      if (offset >= 0) {
        if (offset + bytesOf(result) > arenaBytes_)
          return op.emitOpError("arena offset ")
                 << offset << " + " << bytesOf(result)
                 << " bytes is past the plan's arena of " << arenaBytes_;
        storage_[result] = Storage{rt::Region::Arena, offset};
      } else if (failed(placeInPlace(&op, result, position_[&op]))) {
        return failure();
      }
    }
  }
  return success();
}

LogicalResult TrainStepEmitter::emitBody() {
  Block &block = step_.getBody().front();
  for (Operation &op : block) {
    if (isa<func::ReturnOp, remat::ConstantOp, ReshapeOp>(op))
      continue;
    const KernelBinding<KernelCallWriter> *binding =
        KernelBindings<KernelCallWriter>::get().lookup(&op);
    if (!binding)
      return op.emitOpError("has no kernel in generated code");
    for (Value result : op.getResults())
      if (!result.use_empty() && !storage_.count(result))
        return op.emitOpError("result without storage");
    const int index = static_cast<int>(opDescriptions_.size());
    opDescriptions_.push_back(describeOp(&op));
    body_ << "\n  // " << opDescriptions_.back() << "\n";
    body_ << "  ctx.currentOp = " << index << ";\n";
    KernelCallWriter writer(*this);
    if (failed((*binding)(&op, writer)))
      return failure();
  }
  return success();
}

void TrainStepEmitter::emitArguments(raw_ostream &os) {
  // Graph inputs in @forward's order give the input_<k>.pb numbering; an
  // appended loss's labels come after them.
  std::vector<std::string> forwardInputs;
  if (forward_)
    for (unsigned i = 0; i < forward_.getNumArguments(); ++i) {
      auto role = forward_.getArgAttrOfType<StringAttr>(i, RematDialect::kRoleAttr);
      auto name = forward_.getArgAttrOfType<StringAttr>(i, RematDialect::kNameAttr);
      if ((!role || role.getValue() == "input") && name)
        forwardInputs.push_back(name.str());
    }
  int nextExtraInput = static_cast<int>(forwardInputs.size());
  os << "const std::vector<remat::rt::ArgumentSpec> kArguments = {\n";
  for (BlockArgument arg : step_.getArguments()) {
    const unsigned i = arg.getArgNumber();
    const std::string name = argString(i, RematDialect::kNameAttr);
    const std::string role = argString(i, RematDialect::kRoleAttr);
    auto type = cast<RankedTensorType>(arg.getType());
    const Storage &s = storage_.at(arg);
    int inputFile = -1;
    int64_t bound = 0;
    if (role == "input") {
      auto it = llvm::find(forwardInputs, name);
      inputFile = it != forwardInputs.end()
                      ? static_cast<int>(it - forwardInputs.begin())
                      : nextExtraInput++;
      // Synthetic integer data must be valid indices / class labels.
      for (Operation *user : arg.getUsers()) {
        if (auto gather = dyn_cast<GatherOp>(user); gather &&
            gather.getIndices() == arg)
          bound = cast<RankedTensorType>(gather.getInput().getType())
                      .getDimSize(gather.getAxis());
        if (auto gather = dyn_cast<GatherElementsOp>(user);
            gather && gather.getIndices() == arg)
          bound = cast<RankedTensorType>(gather.getInput().getType())
                      .getDimSize(gather.getAxis());
        if (auto loss = dyn_cast<SoftmaxCrossEntropyLossOp>(user);
            loss && loss.getLabels() == arg)
          bound = cast<RankedTensorType>(loss.getScores().getType())
                      .getDimSize(1);
        if (auto loss = dyn_cast<NllLossOp>(user); loss && loss.getTarget() == arg)
          bound = cast<RankedTensorType>(loss.getInput().getType())
                      .getDimSize(1);
      }
    }
    double initial = 0;
    if (auto value = step_.getArgAttrOfType<FloatAttr>(
            i, RematDialect::kInitialValueAttr))
      initial = value.getValueAsDouble();
    os << "    {" << cppString(name) << ", " << cppString(role) << ", DType::"
       << dtypeEnumName(dtypeOf(type)) << ", " << cppIntList(shapeOf(arg))
       << ", remat::rt::Region::"
       << (s.region == rt::Region::Arena ? "Arena" : "Persistent") << ", "
       << cppInt(s.offset) << ", " << inputFile << ", " << cppInt(bound);
    if (initial != 0)
      os << ", " << cppDouble(initial);
    os << "},\n";
  }
  os << "};\n\n";
}

void TrainStepEmitter::emitResults(raw_ostream &os) {
  auto ret = cast<func::ReturnOp>(step_.getBody().front().getTerminator());
  os << "const std::vector<remat::rt::ResultSpec> kResults = {\n";
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    const std::string name = resultString(index, RematDialect::kNameAttr);
    const std::string role = resultString(index, RematDialect::kRoleAttr);
    const Storage &s = storage_.at(value);
    int argument = -1;
    if (rt::isPersistentRole(role))
      for (BlockArgument arg : step_.getArguments())
        if (argString(arg.getArgNumber(), RematDialect::kNameAttr) == name &&
            argString(arg.getArgNumber(), RematDialect::kRoleAttr) == role)
          argument = static_cast<int>(arg.getArgNumber());
    auto type = cast<RankedTensorType>(value.getType());
    os << "    {" << cppString(name) << ", " << cppString(role) << ", DType::"
       << dtypeEnumName(dtypeOf(type)) << ", " << cppIntList(shapeOf(value))
       << ", remat::rt::Region::"
       << (s.region == rt::Region::Arena ? "Arena" : "Persistent") << ", "
       << cppInt(s.offset) << ", " << argument << "},\n";
  }
  os << "};\n\n";
}

void TrainStepEmitter::emitConstants(raw_ostream &os) {
  for (auto [i, c] : llvm::enumerate(constants_)) {
    const size_t bytes =
        c.splat ? rt::dtypeSize(c.tensor.dtype()) : c.tensor.bytes();
    const auto *data = static_cast<const unsigned char *>(c.tensor.data());
    os << "alignas(16) const unsigned char kConstant" << i << "[] = {";
    for (size_t b = 0; b < std::max<size_t>(bytes, 1); ++b) {
      if (b % 16 == 0)
        os << "\n    ";
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x,", b < bytes ? data[b] : 0);
      os << hex;
    }
    os << "\n};\n";
  }
  os << "\nconst std::vector<remat::rt::ConstantSpec> kConstants = {\n";
  for (auto [i, c] : llvm::enumerate(constants_))
    os << "    {DType::" << dtypeEnumName(c.tensor.dtype()) << ", "
       << cppIntList(c.tensor.shape()) << ", " << cppInt(c.offset)
       << ", kConstant" << i << ", " << cppBool(c.splat) << "},\n";
  os << "};\n\n";
}

void TrainStepEmitter::emitFile(raw_ostream &os) {
  const bool cuda = options_.backend == CodegenBackend::Cuda;
  os << "// Generated by remat-opt from " << options_.modelPath << ".\n"
     << "// The planned training step as a straight-line sequence of "
     << (cuda ? "CUDA" : "CPU") << " runtime\n"
     << "// kernel calls at constant offsets into the arena (A, "
     << arenaBytes_ << " bytes) and the\n"
     << "// persistent region (P, " << persistentBytes_
     << " bytes: parameters, optimizer state, constants).\n\n"
     << "#include \"remat/runtime/Program.h\"\n";
  if (cuda)
    os << "#include \"remat/runtime/cuda/CudaKernels.h\"\n";
  else
    os << "#include \"remat/runtime/Kernels.h\"\n";
  os << "\n#include <cstdint>\n#include <limits>\n#include <vector>\n\n"
     << "namespace {\n\n"
     << "namespace kernels = " << (cuda ? "remat::rt::cuda" : "remat::rt")
     << ";\nusing remat::rt::DType;\n\n"
     << "remat::rt::TensorView T(DType dtype, remat::rt::Shape shape, "
        "char *data) {\n"
     << "  return remat::rt::TensorView(dtype, std::move(shape), data);\n"
     << "}\n\n";
  emitArguments(os);
  emitResults(os);
  emitConstants(os);
  os << "const std::vector<const char *> kOps = {\n";
  for (const std::string &d : opDescriptions_)
    os << "    " << cppString(d) << ",\n";
  os << "};\n\n";
  os << "void trainStep(remat::rt::StepContext &ctx) {\n"
     << "  char *const A = ctx.arena;\n"
     << "  char *const P = ctx.persistent;\n"
     << "  (void)A;\n  (void)P;\n"
     << bodyText_ << "}\n\n} // namespace\n\n";

  int64_t samples = 1;
  for (BlockArgument arg : step_.getArguments())
    if (argString(arg.getArgNumber(), RematDialect::kRoleAttr) == "input") {
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getRank() > 0)
        samples = type.getDimSize(0);
      break;
    }
  StringRef precision = "fp32";
  if (auto attr = step_->getAttrOfType<StringAttr>(RematDialect::kPrecisionAttr))
    precision = attr.getValue();
  os << "int main(int argc, char **argv) {\n"
     << "  remat::rt::ProgramSpec program;\n"
     << "  program.modelPath = " << cppString(options_.modelPath) << ";\n"
     << "  program.backend = remat::rt::Backend::" << (cuda ? "Cuda" : "Cpu")
     << ";\n"
     << "  program.optimizer = " << cppString(options_.optimizer) << ";\n"
     << "  program.strategy = " << cppString(options_.strategy) << ";\n"
     << "  program.precision = " << cppString(precision) << ";\n"
     << "  program.arenaBytes = " << cppInt(arenaBytes_) << ";\n"
     << "  program.persistentBytes = " << cppInt(persistentBytes_) << ";\n"
     << "  program.workspaceBytes = " << cppInt(options_.workspaceBytes)
     << ";\n"
     << "  program.plannedPeakBytes = " << cppInt(options_.plannedPeakBytes)
     << ";\n"
     << "  program.budgetBytes = " << cppInt(options_.budgetBytes) << ";\n"
     << "  program.samplesPerStep = " << cppInt(samples) << ";\n"
     << "  program.arguments = kArguments;\n"
     << "  program.results = kResults;\n"
     << "  program.constants = kConstants;\n"
     << "  program.ops = kOps;\n"
     << "  program.trainStep = trainStep;\n"
     << "  return remat::rt::harnessMain(argc, argv, program);\n"
     << "}\n";
}

} // namespace

LogicalResult emitTrainStepSource(func::FuncOp trainStep, func::FuncOp forward,
                                  const TrainStepEmitOptions &options,
                                  raw_ostream &os) {
  try {
    TrainStepEmitter emitter(trainStep, forward, options);
    return emitter.run(os);
  } catch (const rt::RuntimeError &e) {
    return trainStep.emitError(e.what());
  }
}

std::string sourceFileName(CodegenBackend backend) {
  return backend == CodegenBackend::Cuda ? "train_step.cu" : "train_step.cpp";
}

std::string emitCMakeProject(CodegenBackend backend,
                             const std::string &sourceFile,
                             const std::string &target) {
  const bool cuda = backend == CodegenBackend::Cuda;
  std::string text =
      "# Generated by remat-opt: builds the training executable against the\n"
      "# remat runtime (configure with -DRematRuntime_DIR=<prefix>/lib/cmake/"
      "RematRuntime\n# if it is not installed in a default prefix).\n"
      "cmake_minimum_required(VERSION 3.20)\n";
  if (cuda)
    text += "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)\n"
            "  set(CMAKE_CUDA_ARCHITECTURES 80 90)\n"
            "endif()\n"
            "project(" + target + " LANGUAGES CXX CUDA)\n";
  else
    text += "project(" + target + " LANGUAGES CXX)\n";
  text += "if(NOT CMAKE_BUILD_TYPE)\n"
          "  set(CMAKE_BUILD_TYPE Release)\n"
          "endif()\n"
          "set(CMAKE_CXX_STANDARD 17)\n"
          "find_package(RematRuntime CONFIG REQUIRED)\n"
          "add_executable(" + target + " " + sourceFile + ")\n"
          "target_link_libraries(" + target + " PRIVATE Remat::Harness" +
          (cuda ? "CUDA" : "CPU") + ")\n";
  return text;
}

} // namespace remat
