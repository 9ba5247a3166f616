//===- PlanViews.h - A planned step in formats people read ------*- C++ -*-===//
//
// Three views of one plan (PlanTimeline), each for a different reader:
//  - the plan listing (--emit=plan): one decision per line, for diffing two
//    budgets or strategies;
//  - Chrome trace-event JSON (--emit=trace): the schedule as slices and the
//    memory by category as counters, for Perfetto and chrome://tracing;
//  - a PyTorch memory snapshot (--emit=memory-snapshot): the step's
//    allocations and frees as a pickle that pytorch.org/memory_viz opens.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_PLANVIEWS_H
#define REMAT_TARGET_PLANVIEWS_H

#include "remat/Planning/PlanTimeline.h"

#include "llvm/Support/raw_ostream.h"

namespace remat {

void writePlanListing(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os);
void writeChromeTrace(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os);
void writeMemorySnapshot(const PlanTimeline &timeline,
                         const PlanReport &report, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TARGET_PLANVIEWS_H
