//===- PlanPipeline.h - The drivers' planning pipeline ----------*- C++ -*-===//
//
// What `remat-opt --budget` and `remat-run --train --budget` both run on a
// module: build @train_step (remat-fuse-gelu, remat-fuse-attention,
// remat-fold-transpose-into-matmul, remat-autodiff) unless there is one,
// then remat-schedule-updates and remat-plan, with the plan's report, and
// remat-verify-memory-plan on the result.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_PLANPIPELINE_H
#define REMAT_TOOLS_PLANPIPELINE_H

#include "remat/Analysis/CostModel.h"
#include "remat/Passes/Passes.h"
#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace remat {

/// The fusions run on @forward before autodiff (remat-fuse-gelu always).
struct FusionOptions {
  /// remat-fuse-attention (the drivers' --no-fuse-attention turns it off).
  bool attention = true;
  /// Its `explain` option: one line per candidate softmax on stderr.
  bool explainAttention = false;
};

/// The cleanup every driver runs on a model's functions before anything
/// else (remat-run before interpreting, buildTrainStep before autodiff):
/// remat-fuse-gelu, remat-fuse-attention unless `fusion` says not to, then
/// remat-fold-transpose-into-matmul (after attention fusion, which matches
/// an exported K^T itself).
void addForwardCleanup(mlir::OpPassManager &pm, const FusionOptions &fusion);

/// remat-autodiff's loss-scale for --precision and --loss-scale as given
/// (empty when not given): fp16 scales dynamically unless told otherwise,
/// bf16 and fp32 do not scale.
std::string defaultLossScale(llvm::StringRef precision,
                             llvm::StringRef lossScale);

/// Builds @train_step with addForwardCleanup's passes, remat-mixed-precision
/// (when `precision` is bf16 or fp16; fp32 leaves the step as exported) and
/// remat-autodiff unless the module already has one. Failure: the
/// diagnostics have been emitted.
mlir::LogicalResult buildTrainStep(mlir::ModuleOp module,
                                   const AutodiffOptions &autodiff,
                                   const FusionOptions &fusion = {},
                                   llvm::StringRef precision = "fp32",
                                   bool commandLineOptions = false);

/// Plans @train_step in place: remat-schedule-updates, then remat-plan with
/// `options` (remat-plan's own options struct, see Passes.td). Fills
/// `report` (the plain-order peak measured before the updates move up).
/// `commandLineOptions` applies MLIR's pass-manager command-line options
/// (--mlir-print-ir-*, --mlir-timing, ...); only for drivers that registered
/// them. Returns 0 when a plan fits, 2 when none does (the report says why
/// and the IR holds the lowest-memory plan found), 1 on any other error
/// (already reported as a diagnostic).
int planTrainStepPipeline(mlir::ModuleOp module,
                          const PlanTrainStepOptions &options,
                          PlanReport &report, bool commandLineOptions = false);

/// The cost model remat-plan used for `options` (its target and cost
/// table), for the views that show a plan's estimated times. std::nullopt,
/// after an error on stderr, when the target or the table is bad.
std::optional<CostModel> planCostModel(const PlanTrainStepOptions &options);

} // namespace remat

#endif // REMAT_TOOLS_PLANPIPELINE_H
