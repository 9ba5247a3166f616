//===- Interpreter.cpp - Reference interpreter over the remat dialect -----===//
//
// Construction builds a Plan: the body's ops in order, each with its
// executor and the values whose last use it is. A run binds the arguments,
// executes the steps, releases values as planned, and hands back the
// results. Buffers are shared_ptr-owned so that reshape can alias its
// operand; the deleter keeps the live-byte count.
//
// Arena mode (the function carries remat.arena_bytes): values with an arena
// offset are views into one arena the Plan owns; their Slot holds a shared
// ArenaRange (shared by reshape aliases) that keeps the live-byte count and
// lets the debug check find live values overlapping a write. A result the
// plan writes over an operand that dies at its op (InPlace.h) takes that
// operand's bytes over; the check allows exactly that overlap.
//
//===----------------------------------------------------------------------===//

#include "remat/Interpreter/Interpreter.h"

#include "ExecContext.h"
#include "InterpreterCall.h"
#include "remat/Dialect/InPlace.h"
#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/TensorConversion.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/Workspace.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace mlir;

namespace remat {

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

namespace {

std::string formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string text = "'" + name.getName().str() + "'";
    if (!isa<UnknownLoc>(name.getChildLoc()))
      text += " (" + formatLocation(name.getChildLoc()) + ")";
    return text;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string text;
    for (Location part : fused.getLocations()) {
      if (isa<UnknownLoc>(part))
        continue;
      if (!text.empty())
        text += ", ";
      text += formatLocation(part);
    }
    return text.empty() ? "unknown location" : text;
  }
  if (isa<UnknownLoc>(loc))
    return "unknown location";
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// The argument's `remat.name`, or its position.
std::string argumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, RematDialect::kNameAttr))
    return "argument " + std::to_string(index) + " ('" + name.str() + "')";
  return "argument " + std::to_string(index);
}

std::string describeView(const rt::TensorView &view) {
  return std::string(rt::dtypeName(view.dtype)) + " " +
         rt::shapeToString(view.shape);
}

} // namespace

std::string describeLocation(Location loc) { return formatLocation(loc); }

std::string describeOp(Operation *op) {
  return op->getName().getStringRef().str() + " at " +
         formatLocation(op->getLoc());
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

struct Interpreter::Plan {
  struct Step {
    Operation *op;
    const OpExecutor *executor;
    /// Values to free once the op has run: operands whose last use this is,
    /// and results nobody uses.
    SmallVector<Value, 4> release;
  };
  std::vector<Step> steps;
  func::ReturnOp returnOp;
  /// Constants converted once, shared by every run (keyed by their value, so
  /// equal constants share one buffer).
  llvm::DenseMap<Attribute, std::shared_ptr<rt::Tensor>> constants;
  /// Static dtype and shape of every argument.
  std::vector<rt::DType> argDTypes;
  std::vector<rt::Shape> argShapes;

  /// Arena mode: the plan's arena size, the byte offset of every value that
  /// lives in the arena (op results and input arguments), and the arena
  /// itself, allocated once and reused by every run.
  bool arena = false;
  int64_t plannedArenaBytes = 0;
  llvm::DenseMap<Value, int64_t> arenaOffsets;
  struct FreeDeleter {
    void operator()(void *p) const { std::free(p); }
  };
  std::unique_ptr<void, FreeDeleter> arenaStorage;
  size_t arenaAllocatedBytes = 0;
  char *arenaBase() const { return static_cast<char *>(arenaStorage.get()); }

  void setUpArena(func::FuncOp func, IntegerAttr arenaBytes);
};

/// Reads the plan's offsets and allocates the arena: the planned size, or
/// more if some offset + size reaches past it (so that such a plan runs and
/// its high-water mark shows the overshoot instead of corrupting memory).
void Interpreter::Plan::setUpArena(func::FuncOp func, IntegerAttr arenaBytes) {
  arena = true;
  plannedArenaBytes = arenaBytes.getInt();
  if (plannedArenaBytes < 0)
    throw InterpreterError("function '" + func.getSymName().str() +
                           "': remat.arena_bytes is negative");
  size_t required = static_cast<size_t>(plannedArenaBytes);
  auto place = [&](Value value, int64_t offset) {
    auto type = cast<RankedTensorType>(value.getType());
    size_t bytes = static_cast<size_t>(rt::numElements(shapeOf(type))) *
                   rt::dtypeSize(dtypeOf(type));
    required = std::max(required, static_cast<size_t>(offset) + bytes);
    arenaOffsets[value] = offset;
  };
  Block &block = func.getBody().front();
  for (BlockArgument arg : block.getArguments())
    if (auto offset = func.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), RematDialect::kArenaOffsetAttr);
        offset && offset.getInt() >= 0)
      place(arg, offset.getInt());
  for (const Step &step : steps) {
    auto offsets =
        step.op->getAttrOfType<DenseI64ArrayAttr>("remat.arena_offsets");
    if (!offsets)
      continue;
    if (offsets.size() != static_cast<int64_t>(step.op->getNumResults()))
      throw InterpreterError(describeOp(step.op) + ": remat.arena_offsets has " +
                             std::to_string(offsets.size()) +
                             " entries for " +
                             std::to_string(step.op->getNumResults()) +
                             " results");
    for (auto [result, offset] :
         llvm::zip_equal(step.op->getResults(), offsets.asArrayRef()))
      if (offset >= 0)
        place(result, offset);
    // A reshape is a view: the plan must put it where its input is.
    if (auto reshape = dyn_cast<ReshapeOp>(step.op)) {
      auto in = arenaOffsets.find(reshape.getInput());
      auto out = arenaOffsets.find(reshape.getOutput());
      if (in != arenaOffsets.end() && out != arenaOffsets.end() &&
          in->second != out->second)
        throw InterpreterError(describeOp(step.op) + ": the reshape's arena "
                               "offset " + std::to_string(out->second) +
                               " differs from its input's " +
                               std::to_string(in->second));
    }
  }
  constexpr size_t kAlign = 64;
  arenaAllocatedBytes = std::max<size_t>(
      kAlign, (required + kAlign - 1) / kAlign * kAlign);
  arenaStorage.reset(std::aligned_alloc(kAlign, arenaAllocatedBytes));
  if (!arenaStorage)
    throw InterpreterError("cannot allocate the " +
                           std::to_string(arenaAllocatedBytes) +
                           "-byte arena of function '" +
                           func.getSymName().str() + "'");
}

Interpreter::Interpreter(func::FuncOp func) : func_(func), plan_(new Plan) {
  // The interpreter is not a planned executable: kernel scratch grows as
  // needed (the generated executable runs in the plan's fixed workspace).
  rt::useGrowableWorkspace();
  if (func.isExternal())
    throw InterpreterError("function '" + func.getSymName().str() +
                           "' has no body");
  Region &body = func.getBody();
  if (!body.hasOneBlock())
    throw InterpreterError("function '" + func.getSymName().str() +
                           "' has more than one block");
  Block &block = body.front();

  for (auto [index, arg] : llvm::enumerate(block.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      throw InterpreterError(argumentName(func, index) + " has type " +
                             typeToString(arg.getType()) +
                             ", expected a ranked tensor");
    try {
      plan_->argDTypes.push_back(dtypeOf(type));
      plan_->argShapes.push_back(shapeOf(type));
    } catch (const InterpreterError &e) {
      throw InterpreterError(argumentName(func, index) + ": " + e.what());
    }
  }

  // Executors, result types and constants, reporting every unsupported op.
  std::vector<std::string> unsupported;
  llvm::DenseMap<Value, size_t> lastUse;
  for (Operation &op : block) {
    const size_t index = plan_->steps.size();
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      plan_->returnOp = ret;
      break;
    }
    const OpExecutor *executor = lookupExecutor(&op);
    if (!executor || op.getNumRegions() != 0) {
      unsupported.push_back("'" + op.getName().getStringRef().str() + "' at " +
                            formatLocation(op.getLoc()));
      plan_->steps.push_back({&op, nullptr, {}});
      continue;
    }
    try {
      for (Value result : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type)
          throw InterpreterError("result type " +
                                 typeToString(result.getType()) +
                                 " is not a ranked tensor");
        (void)dtypeOf(type);
        (void)shapeOf(type);
      }
      if (auto constant = dyn_cast<remat::ConstantOp>(op)) {
        Attribute key = constant.getValue();
        if (!plan_->constants.count(key))
          plan_->constants[key] = std::make_shared<rt::Tensor>(
              tensorFromElementsAttr(constant.getValue()));
      }
    } catch (const rt::RuntimeError &e) {
      throw InterpreterError(describeOp(&op) + ": " + e.what());
    }
    plan_->steps.push_back({&op, executor, {}});
  }
  if (!unsupported.empty()) {
    std::string message = unsupported.size() == 1
                              ? "the interpreter does not support op "
                              : "the interpreter does not support ops ";
    for (size_t i = 0; i < unsupported.size(); ++i)
      message += (i ? "; " : "") + unsupported[i];
    throw InterpreterError(message);
  }
  if (!plan_->returnOp)
    throw InterpreterError("function '" + func.getSymName().str() +
                           "' does not end in func.return");
  if (auto arenaBytes = func->getAttrOfType<IntegerAttr>("remat.arena_bytes"))
    plan_->setUpArena(func, arenaBytes);

  // Release lists. Values the return uses live to the end (index == size).
  const size_t end = plan_->steps.size();
  for (size_t i = 0; i < end; ++i) {
    Plan::Step &step = plan_->steps[i];
    llvm::SmallPtrSet<void *, 8> seen;
    for (Value operand : step.op->getOperands())
      if (lastUse.lookup(operand) == i &&
          seen.insert(operand.getAsOpaquePointer()).second)
        step.release.push_back(operand);
    for (Value result : step.op->getResults())
      if (!lastUse.count(result))
        step.release.push_back(result);
  }
}

Interpreter::~Interpreter() = default;

bool Interpreter::usesArena() const { return plan_->arena; }
int64_t Interpreter::plannedArenaBytes() const {
  return plan_->plannedArenaBytes;
}

//===----------------------------------------------------------------------===//
// Run
//===----------------------------------------------------------------------===//

class Interpreter::Run final : public ExecContext {
public:
  explicit Run(Interpreter &interp) : interp_(interp) {}
  ~Run() override { slots_.clear(); }

  void bindArgument(Value arg, const rt::TensorView &view) {
    if (interp_.plan_->arena) {
      auto it = interp_.plan_->arenaOffsets.find(arg);
      if (it != interp_.plan_->arenaOffsets.end()) {
        // An input the plan places in the arena: copied into its slot.
        rt::TensorView slot = bindInArena(arg, it->second, view.dtype,
                                          view.shape, nullptr);
        if (slot.bytes())
          std::memcpy(slot.data, view.data, slot.bytes());
        return;
      }
    }
    slots_[arg] = Slot{nullptr, view, nullptr};
  }

  void execute(const Plan::Step &step) {
    current_ = &step;
    try {
      InterpreterCall call(*this);
      (void)(*step.executor)(step.op, call);
      for (Value result : step.op->getResults())
        if (!result.use_empty() && !slots_.count(result))
          throw InterpreterError("internal error: the executor produced no "
                                 "value for result " +
                                 std::to_string(cast<OpResult>(result)
                                                    .getResultNumber()));
    } catch (const rt::RuntimeError &e) {
      throw InterpreterError(describeOp(step.op) + ": " + e.what());
    } catch (const std::bad_alloc &) {
      throw InterpreterError(describeOp(step.op) +
                             ": out of memory allocating its results");
    }
    for (Value value : step.release)
      slots_.erase(value);
  }

  /// Moves (or copies) the returned values out.
  std::vector<rt::Tensor> collect(func::ReturnOp ret) {
    std::vector<rt::Tensor> outputs;
    llvm::DenseMap<Value, size_t> firstIndex;
    for (Value value : ret.getOperands()) {
      auto [it, inserted] = firstIndex.try_emplace(value, outputs.size());
      if (!inserted) {
        const rt::Tensor &first = outputs[it->second];
        rt::Tensor copy(first.dtype(), first.shape());
        rt::copy(first.view(), copy.view());
        outputs.push_back(std::move(copy));
        continue;
      }
      Slot &slot = lookup(value);
      // Sole owner with the value's own shape: hand the buffer over.
      if (slot.buffer && slot.buffer.use_count() == 1 &&
          slot.buffer->shape() == slot.view.shape) {
        outputs.push_back(std::move(*slot.buffer));
        continue;
      }
      rt::Tensor copy(slot.view.dtype, slot.view.shape);
      rt::copy(slot.view, copy.view());
      outputs.push_back(std::move(copy));
    }
    slots_.clear();
    return outputs;
  }

  // ExecContext
  rt::TensorView operand(Value value) override {
    if (!value)
      return rt::TensorView();
    return lookup(value).view;
  }

  rt::TensorView result(Value value) override {
    auto type = cast<RankedTensorType>(value.getType());
    if (interp_.plan_->arena) {
      auto it = interp_.plan_->arenaOffsets.find(value);
      if (it != interp_.plan_->arenaOffsets.end())
        return bindInArena(value, it->second, dtypeOf(type), shapeOf(type),
                           value.getDefiningOp());
    }
    std::shared_ptr<rt::Tensor> buffer = allocate(dtypeOf(type), shapeOf(type));
    rt::TensorView view = buffer->view();
    slots_[value] = Slot{std::move(buffer), view, nullptr};
    return view;
  }

  rt::TensorView optionalResult(Value value) override {
    if (value.use_empty())
      return rt::TensorView();
    return result(value);
  }

  void aliasResult(Value result, Value source) override {
    const Slot &from = lookup(source);
    auto type = cast<RankedTensorType>(result.getType());
    rt::TensorView view(dtypeOf(type), shapeOf(type), from.view.data);
    if (view.dtype != from.view.dtype || view.numel() != from.view.numel())
      throw InterpreterError("cannot view " + describeView(from.view) +
                             " as " + describeView(view));
    slots_[result] = Slot{from.buffer, std::move(view), from.range};
  }

  void constantResult(Value result, ElementsAttr value) override {
    std::shared_ptr<rt::Tensor> &cached = interp_.plan_->constants[value];
    if (!cached)
      cached = std::make_shared<rt::Tensor>(tensorFromElementsAttr(value));
    slots_[result] = Slot{cached, cached->view(), nullptr};
  }

  uint64_t step() const override { return interp_.step_; }

private:
  /// The bytes of the arena a value (and the reshapes aliasing it) holds,
  /// and who wrote them: an op, or the input argument (writer null).
  /// `counted` is what it adds to the live bytes: its size, or 0 once a
  /// result written over it in place has taken its bytes over.
  struct ArenaRange {
    int64_t offset = 0;
    size_t bytes = 0;
    Operation *writer = nullptr;
    Value value;
    size_t counted = 0;
  };

  struct Slot {
    std::shared_ptr<rt::Tensor> buffer; // null for borrowed arguments and
                                        // arena values
    rt::TensorView view;
    std::shared_ptr<ArenaRange> range; // arena values only
  };

  /// Binds `value` to arena + offset (after the debug check) and returns
  /// the view to write.
  rt::TensorView bindInArena(Value value, int64_t offset, rt::DType dtype,
                             rt::Shape shape, Operation *writer) {
    rt::TensorView view(dtype, std::move(shape),
                        interp_.plan_->arenaBase() + offset);
    const size_t bytes = view.bytes();
    Interpreter *interp = &interp_;
    std::shared_ptr<ArenaRange> range(
        new ArenaRange{offset, bytes, writer, value, bytes},
        [interp](ArenaRange *r) {
          interp->liveBytes_ -= r->counted;
          delete r;
        });
    // A result written over a dying operand holds that operand's bytes.
    ArenaRange *source = writer ? inPlaceSource(*range) : nullptr;
    if (source)
      source->counted = 0;
    else
      interp->liveBytes_ += bytes;
    interp->peakLiveBytes_ =
        std::max(interp->peakLiveBytes_, interp->liveBytes_);
    if (bytes) {
      if (interp->checkArena_) {
        checkOverlap(*range, source);
        // Poisoned, so that a kernel reading what it has not written shows;
        // not an in-place result, whose bytes are still its operand's.
        if (!source)
          std::memset(view.data, 0xFF, bytes);
      }
      interp->arenaHighWater_ = std::max(
          interp->arenaHighWater_, static_cast<size_t>(offset) + bytes);
    }
    slots_[value] = Slot{nullptr, view, std::move(range)};
    return view;
  }

  std::string describeWriter(const ArenaRange &range) {
    if (!range.writer)
      return "input " +
             argumentName(interp_.func_,
                          cast<BlockArgument>(range.value).getArgNumber());
    std::string text = describeOp(range.writer);
    if (range.writer->getNumResults() > 1)
      text += " (result " +
              std::to_string(cast<OpResult>(range.value).getResultNumber()) +
              ")";
    return text;
  }

  /// The live range the result `range` may be written over in place: an
  /// operand's with the same bytes, which its op may overwrite (InPlace.h),
  /// that holds no input argument and no value read after this step.
  ArenaRange *inPlaceSource(const ArenaRange &range) {
    Operation *op = range.writer;
    auto result = cast<OpResult>(range.value);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!mayWriteInPlace(op, result, operand))
        continue;
      auto it = slots_.find(operand.get());
      if (it == slots_.end())
        continue;
      const std::shared_ptr<ArenaRange> &other = it->second.range;
      if (!other || !other->writer || other->offset != range.offset ||
          other->bytes != range.bytes)
        continue;
      // It dies here if every slot holding it (the operand and the views of
      // it) is released after this step.
      long releasedHolders = 0;
      for (Value released : current_->release) {
        auto held = slots_.find(released);
        if (held != slots_.end() && held->second.range == other)
          ++releasedHolders;
      }
      if (releasedHolders == other.use_count())
        return other.get();
    }
    return nullptr;
  }

  /// Throws if a live value other than `range`'s own, or the operand it is
  /// written over in place (`inPlace`), occupies any of its bytes.
  void checkOverlap(const ArenaRange &range, const ArenaRange *inPlace) {
    const int64_t begin = range.offset;
    const int64_t end = begin + static_cast<int64_t>(range.bytes);
    for (auto &entry : slots_) {
      const ArenaRange *other = entry.second.range.get();
      if (!other || other == &range || other == inPlace || other->bytes == 0)
        continue;
      const int64_t otherEnd = other->offset + static_cast<int64_t>(other->bytes);
      if (begin < otherEnd && other->offset < end)
        throw InterpreterError(
            "arena overlap: " + describeWriter(range) + " writes arena bytes [" +
            std::to_string(begin) + ", " + std::to_string(end) + ") while " +
            describeWriter(*other) + " still needs [" +
            std::to_string(other->offset) + ", " + std::to_string(otherEnd) +
            ")");
    }
  }

  Slot &lookup(Value value) {
    auto it = slots_.find(value);
    if (it == slots_.end())
      throw InterpreterError("internal error: a value was used after it was "
                             "released, or before it was defined");
    return it->second;
  }

  std::shared_ptr<rt::Tensor> allocate(rt::DType dtype, rt::Shape shape) {
    auto *tensor = new rt::Tensor(dtype, std::move(shape));
    const size_t bytes = tensor->bytes();
    Interpreter *interp = &interp_;
    interp->liveBytes_ += bytes;
    interp->peakLiveBytes_ = std::max(interp->peakLiveBytes_, interp->liveBytes_);
    return std::shared_ptr<rt::Tensor>(tensor, [interp, bytes](rt::Tensor *t) {
      interp->liveBytes_ -= bytes;
      delete t;
    });
  }

  Interpreter &interp_;
  llvm::DenseMap<Value, Slot> slots_;
  /// The step being executed (its release list says what dies there).
  const Plan::Step *current_ = nullptr;
};

std::vector<rt::Tensor>
Interpreter::run(const std::vector<const rt::TensorView *> &args) {
  Block &block = func_.getBody().front();
  if (args.size() != block.getNumArguments())
    throw InterpreterError("function '" + func_.getSymName().str() +
                           "' takes " +
                           std::to_string(block.getNumArguments()) +
                           " arguments, got " + std::to_string(args.size()));
  peakLiveBytes_ = liveBytes_;
  Run run(*this);
  for (unsigned i = 0; i < args.size(); ++i) {
    const rt::TensorView *arg = args[i];
    if (!arg)
      throw InterpreterError(argumentName(func_, i) + " is missing");
    if (arg->dtype != plan_->argDTypes[i] || arg->shape != plan_->argShapes[i])
      throw InterpreterError(
          argumentName(func_, i) + ": expected " +
          rt::dtypeName(plan_->argDTypes[i]) + " " +
          rt::shapeToString(plan_->argShapes[i]) + ", got " +
          describeView(*arg));
    if (arg->empty() && arg->numel() != 0)
      throw InterpreterError(argumentName(func_, i) + " has no data");
    run.bindArgument(block.getArgument(i), *arg);
  }
  for (const Plan::Step &step : plan_->steps)
    run.execute(step);
  return run.collect(plan_->returnOp);
}

} // namespace remat
