//===- VerifyMemoryPlan.cpp - Prove a planned arena safe ------------------===//
//
// remat-verify-memory-plan: checks the static memory plan as the runtimes
// will read it, from the IR's attributes (`remat.arena_bytes` on the
// function, `remat.arena_offsets` on ops, `remat.arena_offset` on input
// arguments), independently of the planner that wrote them. Lifetimes come
// from the same liveness the planner uses (computeMemoryProfile: body order,
// inputs live from the start, returned values to the end, reshapes views of
// their input's buffer), and the overlap sweep is the planning library's
// (plan::findOverlap); the offsets are the IR's own. A result the IR puts at
// the offset of an operand is accepted exactly when it is a legal in-place
// pair (compiler/include/remat/Dialect/InPlace.h: the result has the
// operand's type, hence its bytes, the op's kernel may write it there (an
// elementwise op's first result, a row-wise op's over its first operand),
// and the op is the operand's last use); the pair is then one buffer, and
// any other shared bytes are an overlap.
//
//===----------------------------------------------------------------------===//

#include "remat/Passes/Passes.h"

#include "remat/Analysis/MemoryProfile.h"
#include "remat/Dialect/RematOps.h"
#include "remat/Planning/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace remat {
#define GEN_PASS_DEF_VERIFYMEMORYPLAN
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

constexpr llvm::StringLiteral kPrefix = "remat-verify-memory-plan: ";

/// The op's name for messages: a `remat.name` attribute, else its ONNX node
/// name (the NameLoc the importer gives it), else empty.
StringRef opLabel(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>(RematDialect::kNameAttr))
    return name.getValue();
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  return "";
}

class PlanChecker {
public:
  PlanChecker(func::FuncOp func, int64_t alignment)
      : func(func), alignment(alignment) {}

  LogicalResult run();

private:
  /// "argument #3 'labels'", "result #1 of 'remat.softmax_cross_entropy_loss'
  /// 'loss/Softmax' (step 7)".
  std::string describe(Value v) const;
  std::string describe(Operation *op) const;
  /// Where a diagnostic about `v` goes: its op, or the function.
  InFlightDiagnostic error(Value v) const;
  /// The offset the IR gives `v`, or nullopt when it has none (no attribute,
  /// or a negative entry).
  std::optional<int64_t> offsetOf(Value v) const;
  bool isUsed(Value v) const { return !v.use_empty(); }
  static std::string range(int64_t offset, int64_t bytes) {
    return "bytes [" + std::to_string(offset) + ", " +
           std::to_string(offset + bytes) + ")";
  }

  mutable func::FuncOp func; // MLIR op handles are not const-correct
  int64_t alignment;
  int64_t arenaBytes = 0;
  llvm::DenseMap<Operation *, int> stepOf;
};

std::string PlanChecker::describe(Value v) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    os << "argument #" << arg.getArgNumber();
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      RematDialect::kNameAttr))
      os << " '" << name.getValue() << "'";
    return text;
  }
  auto result = cast<OpResult>(v);
  if (result.getOwner()->getNumResults() > 1)
    os << "result #" << result.getResultNumber() << " of ";
  os << describe(result.getOwner());
  return text;
}

std::string PlanChecker::describe(Operation *op) const {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  if (StringRef label = opLabel(op); !label.empty())
    text += " '" + label.str() + "'";
  return text + " (step " + std::to_string(stepOf.lookup(op)) + ")";
}

InFlightDiagnostic PlanChecker::error(Value v) const {
  if (Operation *op = v.getDefiningOp())
    return op->emitError(kPrefix);
  return func.emitError(kPrefix);
}

std::optional<int64_t> PlanChecker::offsetOf(Value v) const {
  int64_t offset = arenaOffsetOf(func, v);
  if (offset < 0)
    return std::nullopt;
  return offset;
}

LogicalResult PlanChecker::run() {
  auto arenaAttr = func->getAttrOfType<IntegerAttr>("remat.arena_bytes");
  if (!arenaAttr)
    return success(); // not planned: nothing to check
  if (!func.getBody().hasOneBlock())
    return func.emitError(kPrefix)
           << "a planned function must have one block (the schedule)";
  arenaBytes = arenaAttr.getInt();
  if (arenaBytes < 0)
    return func.emitError(kPrefix)
           << "remat.arena_bytes is negative (" << arenaBytes << ")";
  Block &body = func.getBody().front();
  int step = 0;
  for (Operation &op : body)
    stepOf[&op] = step++;

  // Lifetimes with unrounded sizes: the checks below are about the bytes
  // kernels really touch. (With aligned offsets, unrounded ranges overlap
  // exactly when rounded ones do.)
  MemoryProfile profile = computeMemoryProfile(func, /*alignment=*/0,
                                               InPlaceSharing::AsAssigned);
  StepRoles roles = classifyStep(func);
  bool ok = true;

  // 1. Every value's entry: present where needed, views at their source.
  // rootOffset[b]: the offset of arena buffer b, -1 while none.
  std::vector<int64_t> rootOffset(profile.buffers.size(), -1);
  auto check = [&](Value v) {
    std::optional<int64_t> offset = offsetOf(v);
    if (roles.persistent.contains(v)) {
      // Persistent state has its own region; the plan marks results written
      // in place into it with -1.
      if (offset) {
        error(v) << describe(v) << " is persistent state (updated in place) "
                 << "but has arena offset " << *offset << "; expected -1";
        ok = false;
      }
      return;
    }
    auto it = profile.bufferOf.find(v);
    if (it == profile.bufferOf.end())
      return; // not an arena tensor
    const unsigned buffer = it->second;
    Value root = profile.buffers[buffer].value;
    if (root != v) {
      // A view (remat.reshape) of its input's buffer. (A result written in
      // place shares its operand's buffer only at the operand's offset.)
      std::optional<int64_t> rootAt = offsetOf(root);
      if ((offset || isUsed(v)) && rootAt && offset != rootAt) {
        error(v) << describe(v) << " is a view of " << describe(root)
                 << " at arena offset " << *rootAt << " but has "
                 << (offset ? "arena offset " + std::to_string(*offset)
                            : std::string("no arena offset"));
        ok = false;
      }
      return;
    }
    if (!offset) {
      if (isUsed(v)) {
        error(v) << describe(v) << " is used but has no arena offset";
        ok = false;
      }
      return;
    }
    rootOffset[buffer] = *offset;
  };
  for (BlockArgument arg : func.getArguments())
    check(arg);
  for (Operation &op : body.without_terminator()) {
    // Constants are set up once in the persistent region.
    if (isa<ConstantOp>(op) || op.getNumResults() == 0)
      continue;
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("remat.arena_offsets");
    if (!offsets || offsets.size() != static_cast<int64_t>(op.getNumResults())) {
      op.emitError(kPrefix)
          << describe(&op)
          << (offsets ? " has " + std::to_string(offsets.size()) +
                            " remat.arena_offsets entries for " +
                            std::to_string(op.getNumResults()) + " results"
                      : std::string(" has no remat.arena_offsets"));
      ok = false;
      continue;
    }
    for (Value result : op.getResults())
      check(result);
  }

  // 2. Alignment and bounds of every placed buffer.
  for (size_t b = 0; b < profile.buffers.size(); ++b) {
    int64_t offset = rootOffset[b];
    if (offset < 0)
      continue;
    Value v = profile.buffers[b].value;
    int64_t bytes = profile.buffers[b].bytes;
    if (offset % alignment != 0) {
      error(v) << describe(v) << " is at arena offset " << offset
               << ", which is not a multiple of " << alignment << " bytes";
      ok = false;
    } else if (offset + bytes > arenaBytes) {
      error(v) << describe(v) << " at " << range(offset, bytes)
               << " lies past the end of the arena (remat.arena_bytes = "
               << arenaBytes << ")";
      ok = false;
    }
  }
  if (!ok)
    return failure();

  // 3. No two placed buffers live at the same time overlap.
  std::vector<plan::Buffer> buffers;
  std::vector<int64_t> offsets;
  std::vector<unsigned> index;
  for (size_t b = 0; b < profile.buffers.size(); ++b) {
    if (rootOffset[b] < 0)
      continue;
    const BufferLifetime &life = profile.buffers[b];
    buffers.push_back({life.bytes, life.begin, life.end, ""});
    offsets.push_back(rootOffset[b]);
    index.push_back(b);
  }
  if (auto hit = plan::findOverlap(buffers, offsets, alignment)) {
    auto [later, earlier] = *hit;
    const BufferLifetime &a = profile.buffers[index[later]];
    const BufferLifetime &b = profile.buffers[index[earlier]];
    int at = std::max(a.begin, b.begin);
    auto diag = error(a.value);
    diag << describe(a.value) << " at " << range(offsets[later], a.bytes)
         << " overlaps " << describe(b.value) << " at "
         << range(offsets[earlier], b.bytes) << "; both are live at "
         << (at < 0 ? std::string("function entry")
                    : "step " + std::to_string(at));
    Location other = b.value.getDefiningOp() ? b.value.getDefiningOp()->getLoc()
                                             : func.getLoc();
    diag.attachNote(other) << "the other tensor, " << describe(b.value)
                           << ", is live over steps [" << b.begin << ", "
                           << b.end << "]";
    return failure();
  }
  return success();
}

struct VerifyMemoryPlanPass
    : remat::impl::VerifyMemoryPlanBase<VerifyMemoryPlanPass> {
  using VerifyMemoryPlanBase::VerifyMemoryPlanBase;

  void runOnOperation() override {
    if (alignment <= 0) {
      getOperation().emitError(kPrefix) << "alignment must be positive";
      return signalPassFailure();
    }
    if (failed(PlanChecker(getOperation(), alignment).run()))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
