//===- PlanViews.h - A planned step in formats people read ------*- C++ -*-===//
//
// Three views of one plan (PlanTimeline), each for a different reader:
//  - the plan listing (--emit=plan): one decision per line, for diffing two
//    budgets or strategies;
//  - Chrome trace-event JSON (--emit=trace): the schedule as slices and the
//    memory by category as counters, for Perfetto and chrome://tracing;
//  - a PyTorch memory snapshot (--emit=memory-snapshot): the step's
//    allocations and frees as a pickle that pytorch.org/memory_viz opens;
//  - the plan explorer (--emit=html): one self-contained HTML page with the
//    memory timeline, the arena layout and the schedule of one or several
//    plans side by side, and a step-time/budget sweep.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_PLANVIEWS_H
#define REMAT_TARGET_PLANVIEWS_H

#include "remat/Planning/PlanTimeline.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace remat {

void writePlanListing(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os);
void writeChromeTrace(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os);
void writeMemorySnapshot(const PlanTimeline &timeline,
                         const PlanReport &report, llvm::raw_ostream &os);

/// One plan of the explorer page, labelled ("auto at 6.00 GB").
struct ExplorerPlan {
  std::string label;
  PlanReport report;
  PlanTimeline timeline;
};
/// One point of the page's step-time/budget sweep.
struct SweepPoint {
  std::string strategy;
  int64_t budgetBytes = 0;
  bool feasible = false;
  double estimatedStepSeconds = 0;
};
void writeHtmlExplorer(llvm::StringRef model,
                       const std::vector<ExplorerPlan> &plans,
                       const std::vector<SweepPoint> &sweep,
                       llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TARGET_PLANVIEWS_H
