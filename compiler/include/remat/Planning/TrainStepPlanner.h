//===- TrainStepPlanner.h - Plan a training step under a budget -*- C++ -*-===//
//
// The planning pipeline on a @train_step (after remat-autodiff and
// remat-schedule-updates): build the rematerialization problem from the IR,
// solve it with a strategy, materialise the plan in the IR (recomputed ops
// are clones marked `remat.recompute_of`), assign every arena tensor a byte
// offset, and describe the result in a PlanReport.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_TRAINSTEPPLANNER_H
#define REMAT_PLANNING_TRAINSTEPPLANNER_H

#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/MemoryProfile.h"
#include "remat/Planning/MemoryPlan.h"
#include "remat/Planning/Strategies.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <optional>
#include <string>

namespace remat {

struct PlannerOptions {
  int64_t budgetBytes = 0;
  plan::Strategy strategy = plan::Strategy::Auto;
  plan::StrategyOptions strategyOptions;
  /// Device memory the runtime needs besides tensors (cuBLAS workspace,
  /// allocator reserve): counted against the budget.
  int64_t workspaceBytes = 0;
  int64_t alignment = 256;
  /// Peak of the same step before remat-schedule-updates (plain order), for
  /// the report; 0 if unknown.
  int64_t plainOrderPeakBytes = 0;
  /// The optimizer, for the infeasibility explanation ("x 16 bytes with
  /// Adam").
  std::string optimizer;
  /// Run the floor search (PlanReport::minimumFeasibleBytes) even when the
  /// budget fits. It always runs when the budget does not fit; elsewhere it
  /// costs about as much as planning at the floor (seconds on big models).
  bool reportFloor = false;
};

/// Everything DESIGN.md's "What every plan reports" lists. Byte figures are
/// whole-step peaks (persistent + arena + workspace) unless named otherwise.
struct PlanReport {
  bool feasible = false;
  std::string strategy;
  std::string target;
  std::string strategyNote;
  int64_t budgetBytes = 0;
  int64_t peakBytes = 0;            // planned
  /// No recomputation, same schedule, measured like peakBytes (the arena
  /// of that schedule): `--strategy none` fits exactly this budget.
  int64_t baselinePeakBytes = 0;
  /// The chosen plan's peak as the strategy simulated it (live bytes, before
  /// the arena layout); detail only: feasible and peakBytes use the arena.
  int64_t simulatedPeakBytes = 0;
  int64_t plainOrderPeakBytes = 0;  // before remat-schedule-updates
  /// The floor search's result: the lowest whole-step peak (measured like
  /// peakBytes) among the strategy's, all's and sqrt's lowest-memory plans,
  /// i.e. the smallest budget known to work. Searched when the budget does
  /// not fit or PlannerOptions::reportFloor; otherwise unset.
  std::optional<int64_t> minimumFeasibleBytes;
  int64_t persistentBytes = 0;
  int64_t workspaceBytes = 0;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0; // max over time of live arena bytes
  double fragmentation = 0;    // arena / lower bound - 1
  std::string memoryAlgorithm;
  std::map<std::string, int64_t> peakBreakdown; // by category, at the peak
  int64_t parameterCount = 0;
  int64_t parameterBytes = 0;
  double forwardFlops = 0, backwardFlops = 0, recomputeFlops = 0;
  double baselineStepSeconds = 0, estimatedStepSeconds = 0;
  int64_t recomputedOps = 0;
  std::map<std::string, int64_t> recomputedByType;
  /// remat-fuse-attention's figures, from the step's attributes: blocks
  /// fused, and the bytes of seq x seq tensors (probabilities, dropout
  /// output and mask) the unfused step would have kept for backward.
  int64_t fusedAttention = 0;
  int64_t fusedAttentionBytes = 0;
  /// The baseline peak the step would have without remat-fuse-attention
  /// (drivers that built both; 0: not measured).
  int64_t unfusedAttentionBaselineBytes = 0;
  /// Mixed precision, from the step: remat.precision (fp32 when absent)
  /// and the loss scaling autodiff built (none, dynamic or the fixed
  /// scale).
  std::string precision = "fp32";
  std::string lossScale = "none";
  /// The planned peak by element type ("f32", "bf16", ...): persistent
  /// state, and the arena tensors live at the arena's peak (the workspace
  /// and the arena's fragmentation have no dtype).
  std::map<std::string, int64_t> persistentBytesByDType;
  std::map<std::string, int64_t> peakArenaBytesByDType;
  bool milpProvedOptimal = false;
  double milpGap = 0;
  /// The step-time bound at the budget (StepTimeBound.h): no plan whose
  /// peak, counted as the planner simulates it (simulatedPeakBytes), fits
  /// the budget is faster than this by the cost model. Unset when proven
  /// that no plan fits.
  std::optional<double> optimalityBoundSeconds;
  /// estimatedStepSeconds / optimalityBoundSeconds - 1, for a plan that
  /// fits and lies in the bound's class (its simulated peak fits too).
  std::optional<double> optimalityGap;
  std::string optimalityBoundNote;
  double plannerSeconds = 0;
  int numOps = 0;
  std::string infeasibleReason;
};

/// Plans `trainStep` in place. Fails (with a diagnostic) only on malformed
/// IR; an infeasible budget is a report with feasible == false, and the IR is
/// left as the lowest-memory plan found.
mlir::FailureOr<PlanReport> planTrainStep(mlir::func::FuncOp trainStep,
                                          const CostModel &costModel,
                                          const PlannerOptions &options);

/// Arena offsets (plan::planMemory) for the buffers of `profile`, whose
/// sizes and lifetimes it computed with `alignment`.
plan::MemoryPlan planArena(const MemoryProfile &profile,
                           int64_t alignment = plan::kDefaultAlignment);

void printPlanReport(const PlanReport &report, llvm::raw_ostream &os);
void printPlanReportJson(const PlanReport &report, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_PLANNING_TRAINSTEPPLANNER_H
