//===- MemoryProfile.cpp - Liveness and memory by category ----------------===//

#include "remat/Analysis/MemoryProfile.h"
#include "remat/Dialect/InPlace.h"
#include "remat/Dialect/RematOps.h"
#include "remat/runtime/Program.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace remat {

const char *categoryName(MemoryCategory category) {
  switch (category) {
  case MemoryCategory::Input: return "inputs";
  case MemoryCategory::Activation: return "activations";
  case MemoryCategory::Gradient: return "gradients";
  case MemoryCategory::Temporary: return "temporaries";
  case MemoryCategory::Count: break;
  }
  return "?";
}

int64_t tensorBytes(Type type, int64_t alignment) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  Type element = tensor.getElementType();
  int64_t elementBytes =
      element.isInteger(1) ? 1 : std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  int64_t bytes = tensor.getNumElements() * elementBytes;
  if (alignment > 0)
    bytes = (bytes + alignment - 1) / alignment * alignment;
  return bytes;
}

static StringRef argRole(func::FuncOp func, unsigned index) {
  auto role = func.getArgAttrOfType<StringAttr>(index, RematDialect::kRoleAttr);
  return role ? role.getValue() : "";
}

static StringRef resultRole(func::FuncOp func, unsigned index) {
  auto role = func.getResultAttrOfType<StringAttr>(index, RematDialect::kRoleAttr);
  return role ? role.getValue() : "";
}

bool isPersistentRole(StringRef role) {
  return rt::isPersistentRole(role);
}

StepRoles classifyStep(func::FuncOp func) {
  StepRoles roles;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [index, v] : llvm::enumerate(ret.getOperands())) {
    StringRef role = resultRole(func, index);
    if (isPersistentRole(role))
      roles.persistent.insert(v);
    if (role == "loss")
      roles.losses.push_back(v);
  }
  for (BlockArgument arg : func.getArguments())
    if (isPersistentRole(argRole(func, arg.getArgNumber())))
      roles.persistent.insert(arg);
  SmallVector<Value> worklist(roles.losses.begin(), roles.losses.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !roles.forward.insert(def).second)
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  return roles;
}

MemoryProfile computeMemoryProfile(func::FuncOp func, int64_t alignment,
                                   InPlaceSharing sharing) {
  MemoryProfile profile;
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // Steps: op positions in the body; the return is the last step.
  llvm::DenseMap<Operation *, int> stepOf;
  int step = 0;
  for (Operation &op : body)
    stepOf[&op] = step++;
  profile.numSteps = step;
  const int endStep = step - 1;

  StepRoles roles = classifyStep(func);
  const llvm::DenseSet<Value> &persistent = roles.persistent;
  for (BlockArgument arg : func.getArguments())
    if (persistent.contains(arg))
      profile.persistentBytes += tensorBytes(arg.getType(), alignment);
  bool training = !roles.losses.empty();
  auto isBackward = [&](Operation *op) {
    return training && !roles.forward.contains(op) && !isa<func::ReturnOp>(op);
  };
  // Parameter gradients: what the optimizer updates read as `grad`.
  llvm::DenseSet<Value> gradients;
  for (Operation &op : body) {
    if (auto u = dyn_cast<SgdOp>(op))
      gradients.insert(u.getGrad());
    else if (auto u = dyn_cast<SgdMomentumOp>(op))
      gradients.insert(u.getGrad());
    else if (auto u = dyn_cast<AdamOp>(op))
      gradients.insert(u.getGrad());
  }
  for (auto [index, v] : llvm::enumerate(ret.getOperands()))
    if (resultRole(func, index) == "gradient")
      gradients.insert(v);

  // Last reads; returned values live to the end.
  llvm::DenseMap<Value, int> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = isa<func::ReturnOp>(op) ? endStep : stepOf[&op];
  auto lastUseOr = [&](Value v, int unused) {
    auto it = lastUse.find(v);
    return it == lastUse.end() ? unused : it->second;
  };

  auto addBuffer = [&](Value v, int begin, MemoryCategory category) {
    BufferLifetime b;
    b.value = v;
    b.bytes = tensorBytes(v.getType(), alignment);
    b.begin = begin;
    b.end = std::max(begin, lastUseOr(v, begin));
    b.category = category;
    profile.bufferOf[v] = profile.buffers.size();
    profile.buffers.push_back(b);
  };
  // `v` occupies buffer `index` too (a view, or a result written in place).
  auto join = [&](Value v, unsigned index) {
    profile.bufferOf[v] = index;
    BufferLifetime &b = profile.buffers[index];
    b.end = std::max(b.end, lastUseOr(v, b.end));
  };
  // The buffer `op` may write `result` over: an operand's whose last read is
  // `op` (the lifetimes so far include every value that will share it, since
  // a later one would read it later), not a function argument's (constants
  // have none: they live outside the arena), and, for an assigned plan, at
  // the result's offset.
  auto inPlaceBuffer = [&](Operation &op,
                           OpResult result) -> std::optional<unsigned> {
    for (OpOperand &operand : op.getOpOperands()) {
      if (!mayWriteInPlace(&op, result, operand))
        continue;
      auto it = profile.bufferOf.find(operand.get());
      if (it == profile.bufferOf.end())
        continue;
      const BufferLifetime &b = profile.buffers[it->second];
      if (isa<BlockArgument>(b.value) || b.end != stepOf[&op])
        continue;
      if (sharing == InPlaceSharing::AsAssigned) {
        int64_t offset = arenaOffsetOf(func, result);
        if (offset < 0 || offset != arenaOffsetOf(func, b.value))
          continue;
      }
      return it->second;
    }
    return std::nullopt;
  };
  // A buffer shared in place is an activation if any value in it is, else
  // a gradient if any is.
  auto merge = [](MemoryCategory a, MemoryCategory b) {
    for (MemoryCategory c : {MemoryCategory::Activation,
                             MemoryCategory::Gradient, MemoryCategory::Input})
      if (a == c || b == c)
        return c;
    return MemoryCategory::Temporary;
  };

  for (BlockArgument arg : func.getArguments())
    if (!persistent.contains(arg))
      addBuffer(arg, -1, MemoryCategory::Input);
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    // Constants are set up once in the persistent region (the emitter and
    // the interpreter), which the step graph counts them in; an arena
    // buffer besides would count them twice.
    if (isa<ConstantOp>(op))
      continue;
    for (OpResult r : op.getResults()) {
      if (persistent.contains(r))
        continue;
      // A reshape is a view of its input's buffer, or of storage outside
      // the arena (persistent state, a constant) when its input has none.
      if (auto reshape = dyn_cast<ReshapeOp>(op)) {
        auto it = profile.bufferOf.find(reshape.getInput());
        if (it != profile.bufferOf.end())
          join(r, it->second);
        continue;
      }
      MemoryCategory category = MemoryCategory::Temporary;
      if (gradients.contains(r))
        category = MemoryCategory::Gradient;
      else if (training && roles.forward.contains(&op) &&
               llvm::any_of(r.getUsers(), isBackward))
        category = MemoryCategory::Activation;
      if (std::optional<unsigned> shared = inPlaceBuffer(op, r)) {
        join(r, *shared);
        BufferLifetime &b = profile.buffers[*shared];
        b.category = merge(b.category, category);
        continue;
      }
      addBuffer(r, stepOf[&op], category);
    }
  }
  // A forward value aliased by a reshape that backward reads is an
  // activation too.
  for (Operation &op : body) {
    if (!isBackward(&op))
      continue;
    for (Value operand : op.getOperands()) {
      auto it = profile.bufferOf.find(operand);
      if (it == profile.bufferOf.end())
        continue;
      BufferLifetime &b = profile.buffers[it->second];
      Operation *def = b.value.getDefiningOp();
      if (b.category == MemoryCategory::Temporary && def &&
          roles.forward.contains(def))
        b.category = MemoryCategory::Activation;
    }
  }

  // The profile: difference array over steps -1..endStep.
  std::vector<int64_t> delta(profile.numSteps + 2, 0);
  for (const BufferLifetime &b : profile.buffers) {
    delta[b.begin + 1] += b.bytes;
    delta[b.end + 2] -= b.bytes;
  }
  profile.liveBytes.assign(profile.numSteps + 1, 0);
  int64_t live = 0;
  for (int i = 0; i <= profile.numSteps; ++i) {
    live += delta[i];
    profile.liveBytes[i] = live;
    if (live > profile.peakBytes) {
      profile.peakBytes = live;
      profile.peakStep = i - 1;
    }
  }
  for (const BufferLifetime &b : profile.buffers)
    if (b.begin <= profile.peakStep && profile.peakStep <= b.end)
      profile.peakByCategory[static_cast<size_t>(b.category)] += b.bytes;
  return profile;
}

int64_t arenaOffsetOf(func::FuncOp func, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto attr = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), RematDialect::kArenaOffsetAttr);
    return attr ? attr.getInt() : -1;
  }
  auto result = cast<OpResult>(v);
  auto offsets = result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(
      "remat.arena_offsets");
  if (!offsets || result.getResultNumber() >= offsets.size())
    return -1;
  return offsets[result.getResultNumber()];
}

} // namespace remat
