//===- PlanPipeline.cpp - The drivers' planning pipeline ------------------===//

#include "remat/Tools/PlanPipeline.h"

#include "remat/Analysis/MemoryProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

using namespace mlir;

namespace remat {

/// Runs `pm`, with the standard command-line instrumentation
/// (--mlir-print-ir-after-all, --mlir-timing, ...) when asked.
static LogicalResult runPipeline(PassManager &pm, ModuleOp module,
                                 bool commandLineOptions) {
  if (commandLineOptions) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  return pm.run(module);
}

LogicalResult buildTrainStep(ModuleOp module, const AutodiffOptions &autodiff,
                             const FusionOptions &fusion,
                             bool commandLineOptions) {
  if (module.lookupSymbol("train_step"))
    return success();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createFuseGelu());
  if (fusion.attention) {
    FuseAttentionOptions attention;
    attention.explain = fusion.explainAttention;
    pm.addNestedPass<func::FuncOp>(createFuseAttention(attention));
  }
  pm.addPass(createAutodiff(autodiff));
  return runPipeline(pm, module, commandLineOptions);
}

int planTrainStepPipeline(ModuleOp module, const PlanTrainStepOptions &options,
                          PlanReport &report, bool commandLineOptions) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step) {
    module.emitError("no @train_step to plan; run remat-autodiff first");
    return 1;
  }
  // The peak before updates move up, for the report, measured like the
  // baseline: the arena that order needs (live bytes alone would leave out
  // fragmentation and understate what early updates save).
  const int64_t plainOrderPeak =
      planArena(computeMemoryProfile(step)).arenaBytes;

  report = PlanReport();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createScheduleUpdates());
  pm.addPass(createPlanTrainStepWithReport(options, &report, 0));
  // Every plan the drivers produce is proven safe from the IR itself before
  // anything runs or is generated from it.
  pm.addNestedPass<func::FuncOp>(createVerifyMemoryPlan());
  const bool planned =
      succeeded(runPipeline(pm, module, commandLineOptions));
  // A usage or IR error (reported already): the pass failed before it had
  // a report, or with a plan that fits (the IR verifier or
  // remat-verify-memory-plan rejected it).
  if (!planned && (report.budgetBytes == 0 || report.feasible))
    return 1;
  // The plain-order peak is measured on the same footing as the planned one:
  // persistent state + arena + workspace.
  if (report.plainOrderPeakBytes == 0)
    report.plainOrderPeakBytes =
        plainOrderPeak + report.persistentBytes + report.workspaceBytes;
  return report.feasible ? 0 : 2;
}

} // namespace remat
