//===- PlanListing.cpp - One plan decision per line (--emit=plan) ---------===//
//
// Made for diffing two plans. The decisions come first: one line per op in
// schedule order (computed or recomputed) and one per buffer it writes
// (kept for backward, or recomputed), with no SSA names or step numbers,
// which shift whenever a plan inserts a recomputation. The arena layout
// (offset, size, live steps) follows in its own section, so that a change
// of layout does not hide a change of decisions.
//
//===----------------------------------------------------------------------===//

#include "remat/Target/PlanViews.h"

#include "llvm/Support/Format.h"

namespace remat {

static const char *decision(const TimelineBuffer &b) {
  if (b.recomputed)
    return " recomputed";
  if (b.category == MemoryCategory::Activation)
    return " kept";
  return "";
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

  // Buffers by the step that writes them (-1: the step's inputs).
  std::vector<std::vector<const TimelineBuffer *>> written(
      timeline.ops.size() + 1);
  for (const TimelineBuffer &b : timeline.buffers)
    if (b.begin + 1 < static_cast<int>(written.size()))
      written[b.begin + 1].push_back(&b);
  auto writeBuffers = [&](size_t index) {
    for (const TimelineBuffer *b : written[index])
      os << "  buffer " << b->name << " " << b->type << " "
         << categoryName(b->category) << decision(*b) << "\n";
  };

  os << "# decisions: each op in schedule order (compute or recompute, op, "
        "node), then each buffer it writes (name, type, category; kept: an "
        "activation held for backward)\n";
  os << "inputs\n";
  writeBuffers(0);
  for (size_t step = 0; step < timeline.ops.size(); ++step) {
    const TimelineOp &op = timeline.ops[step];
    os << (op.recomputeOf.empty() ? "compute " : "recompute ") << op.op << " "
       << op.name << "\n";
    writeBuffers(step + 1);
  }

  os << "# arena: each buffer in the same order: offset and size in bytes "
        "(offset none: not in the arena), live steps (-1: a step input)\n";
  for (const auto &buffers : written)
    for (const TimelineBuffer *b : buffers) {
      os << "arena " << b->name << decision(*b);
      if (b->offset >= 0)
        os << " offset " << b->offset;
      else
        os << " offset none";
      os << " size " << b->bytes << " live " << b->begin << ".." << b->end
         << "\n";
    }
}

} // namespace remat
