//===- PlanTimeline.cpp - A planned step as a schedule of ops and buffers -===//

#include "remat/Planning/PlanTimeline.h"

#include "StepGraph.h"
#include "remat/Dialect/RematOps.h"
#include "remat/Planning/MemoryPlan.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace remat {

/// "f32[4x16x8x8]".
static std::string typeText(Type type) {
  auto tensor = llvm::cast<RankedTensorType>(type);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << tensor.getElementType() << "[";
  llvm::interleave(tensor.getShape(), os, "x");
  os << "]";
  return text;
}

static std::string bufferName(func::FuncOp func, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      RematDialect::kNameAttr))
      return name.str();
    return "argument#" + std::to_string(arg.getArgNumber());
  }
  auto result = cast<OpResult>(v);
  std::string name = opDisplayName(result.getOwner());
  if (result.getOwner()->getNumResults() > 1)
    name += "#" + std::to_string(result.getResultNumber());
  return name;
}

int64_t PlanTimeline::peakLiveBytes() const {
  int64_t arena = 0;
  for (const auto &live : liveByCategory) {
    int64_t total = 0;
    for (int64_t bytes : live)
      total += bytes;
    arena = std::max(arena, total);
  }
  return persistentBytes + arena + workspaceBytes;
}

PlanTimeline buildPlanTimeline(func::FuncOp trainStep, const PlanReport &report,
                               const CostModel &costModel) {
  PlanTimeline timeline;
  timeline.persistentBytes = report.persistentBytes;
  timeline.workspaceBytes = report.workspaceBytes;
  timeline.arenaBytes = report.arenaBytes;
  timeline.budgetBytes = report.budgetBytes;

  StepRoles roles = classifyStep(trainStep);
  for (Operation &op : trainStep.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    TimelineOp entry;
    entry.op = op.getName().getStringRef().str();
    entry.name = opDisplayName(&op);
    if (auto of = op.getAttrOfType<StringAttr>("remat.recompute_of"))
      entry.recomputeOf = of.str();
    entry.forward = roles.isForward(&op);
    entry.startSeconds = timeline.stepSeconds;
    entry.seconds = costModel.estimate(&op).seconds;
    timeline.stepSeconds += entry.seconds;
    timeline.ops.push_back(std::move(entry));
  }

  // The planner's own liveness and rounding, so the figures are the report's.
  MemoryProfile profile = computeMemoryProfile(
      trainStep, plan::kDefaultAlignment, InPlaceSharing::AsAssigned);
  for (const BufferLifetime &b : profile.buffers) {
    TimelineBuffer buffer;
    buffer.name = bufferName(trainStep, b.value);
    buffer.type = typeText(b.value.getType());
    buffer.bytes = b.bytes;
    buffer.offset = arenaOffsetOf(trainStep, b.value);
    buffer.begin = b.begin;
    buffer.end = b.end;
    buffer.category = b.category;
    if (Operation *def = b.value.getDefiningOp())
      buffer.recomputed = def->hasAttr("remat.recompute_of");
    timeline.buffers.push_back(std::move(buffer));
  }
  // Per category, the difference-array sweep MemoryProfile does in total
  // (index step + 1; a buffer is live from its begin to its end step).
  auto &live = timeline.liveByCategory;
  live.assign(profile.liveBytes.size() + 1, {});
  for (const BufferLifetime &b : profile.buffers) {
    live[b.begin + 1][static_cast<size_t>(b.category)] += b.bytes;
    live[b.end + 2][static_cast<size_t>(b.category)] -= b.bytes;
  }
  for (size_t i = 1; i < live.size(); ++i)
    for (size_t c = 0; c < live[i].size(); ++c)
      live[i][c] += live[i - 1][c];
  live.pop_back();
  return timeline;
}

} // namespace remat
