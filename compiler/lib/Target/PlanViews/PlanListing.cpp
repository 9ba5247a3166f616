//===- PlanListing.cpp - One plan decision per line (--emit=plan) ---------===//
//
// Made for diffing two plans: no SSA names (they shift between plans), one
// line per op in schedule order and one per arena buffer under the op that
// writes it, with the decision on that buffer (kept for backward, or
// recomputed) and its place in the arena.
//
//===----------------------------------------------------------------------===//

#include "remat/Target/PlanViews.h"

#include "llvm/Support/Format.h"

namespace remat {

static void writeBuffer(const TimelineBuffer &b, llvm::raw_ostream &os) {
  os << "    buffer " << b.name << " " << b.type << " "
     << categoryName(b.category);
  if (b.recomputed)
    os << " recomputed";
  else if (b.category == MemoryCategory::Activation)
    os << " kept";
  if (b.offset >= 0)
    os << " offset " << b.offset;
  else
    os << " offset none";
  os << " size " << b.bytes << " live " << b.begin
     << ".." << b.end << "\n";
}

void writePlanListing(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os) {
  os << "# remat plan: strategy " << report.strategy << ", target "
     << report.target << ", budget " << report.budgetBytes << " B: "
     << (report.feasible ? "fits" : "does not fit") << "\n";
  os << "# peak " << report.peakBytes << " B = persistent "
     << report.persistentBytes << " + arena " << report.arenaBytes
     << " + workspace " << report.workspaceBytes << "; baseline peak "
     << report.baselinePeakBytes << " B\n";
  os << "# estimated step "
     << llvm::format("%.6g", report.estimatedStepSeconds) << " s (baseline "
     << llvm::format("%.6g", report.baselineStepSeconds) << " s), "
     << report.recomputedOps << " ops recomputed\n";
  os << "# step <n> compute|recompute <op> <node>; then each buffer it writes:"
        " name, type, category, kept|recomputed, arena offset and size"
        " (bytes), live steps\n";

  // Buffers by the step that writes them (-1: the step's inputs).
  std::vector<std::vector<const TimelineBuffer *>> written(
      timeline.ops.size() + 1);
  for (const TimelineBuffer &b : timeline.buffers)
    if (b.begin + 1 < static_cast<int>(written.size()))
      written[b.begin + 1].push_back(&b);
  os << "inputs\n";
  for (const TimelineBuffer *b : written[0])
    writeBuffer(*b, os);
  for (size_t step = 0; step < timeline.ops.size(); ++step) {
    const TimelineOp &op = timeline.ops[step];
    os << "step " << step << " "
       << (op.recomputeOf.empty() ? "compute" : "recompute") << " " << op.op
       << " " << op.name << "\n";
    for (const TimelineBuffer *b : written[step + 1])
      writeBuffer(*b, os);
  }
}

} // namespace remat
