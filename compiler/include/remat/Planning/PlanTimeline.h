//===- PlanTimeline.h - A planned step as a schedule of ops and buffers -*- C++ -*-===//
//
// What a planned @train_step does, in the order it runs: each op (computed
// or recomputed, with its estimated time) and each arena buffer (offset,
// size, live range, category), read back from the planned IR's attributes
// the way the runtimes read them. The plan's views (--emit=plan, trace,
// memory-snapshot) are written from this one structure, so they agree with
// each other and with the report.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_PLANTIMELINE_H
#define REMAT_PLANNING_PLANTIMELINE_H

#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/MemoryProfile.h"
#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <string>
#include <vector>

namespace remat {

struct TimelineOp {
  std::string op;          // "remat.matmul"
  std::string name;        // the ONNX node name, else the op name
  std::string recomputeOf; // non-empty: a recomputation of this node
  bool forward = false;    // the loss depends on it
  double startSeconds = 0; // estimated, from the step's start
  double seconds = 0;      // estimated duration
};

struct TimelineBuffer {
  std::string name;  // "<node name>" or "<node name>#<result>", or an input's
  std::string type;  // "f32[4x16x8x8]"
  int64_t bytes = 0; // rounded to the arena's alignment
  int64_t offset = -1;
  int begin = 0;     // step that writes it (-1: a step input)
  int end = 0;       // last step that reads it
  MemoryCategory category = MemoryCategory::Temporary;
  bool recomputed = false; // written by a recomputation
};

struct PlanTimeline {
  std::vector<TimelineOp> ops;
  std::vector<TimelineBuffer> buffers;
  /// Live arena bytes per category before step 0 (index 0) and after each
  /// step's allocations (index step + 1), as MemoryProfile counts them.
  std::vector<std::array<int64_t, static_cast<size_t>(MemoryCategory::Count)>>
      liveByCategory;
  int64_t persistentBytes = 0;
  int64_t workspaceBytes = 0;
  int64_t arenaBytes = 0;
  int64_t budgetBytes = 0;
  double stepSeconds = 0;
  /// Peak of persistent + live arena bytes + workspace: the lower bound the
  /// arena layout is measured against (the report's peak adds fragmentation).
  int64_t peakLiveBytes() const;
};

/// Reads the plan of `trainStep` (planned by remat-plan: remat.arena_offsets
/// on ops, remat.arena_offset on inputs, remat.arena_bytes on the function)
/// with the report that planning produced and the cost model it used.
PlanTimeline buildPlanTimeline(mlir::func::FuncOp trainStep,
                               const PlanReport &report,
                               const CostModel &costModel);

} // namespace remat

#endif // REMAT_PLANNING_PLANTIMELINE_H
