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
                             bool commandLineOptions) {
  if (module.lookupSymbol("train_step"))
    return success();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createFuseGelu());
  pm.addPass(createAutodiff(autodiff));
  return runPipeline(pm, module, commandLineOptions);
}

int planTrainStepPipeline(ModuleOp module, const PlanPipelineOptions &options,
                          PlanReport &report) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step) {
    module.emitError("no @train_step to plan; run remat-autodiff first");
    return 1;
  }
  // The peak before updates move up, for the report.
  const int64_t plainOrderPeak = computeMemoryProfile(step).peakBytes;

  report = PlanReport();
  PlanTrainStepOptions plan;
  plan.budget = options.budget;
  plan.strategy = options.strategy;
  plan.target = options.target;
  plan.milpSeconds = options.milpSeconds;
  plan.costTable = options.costTable;
  plan.workspace = options.workspace;
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createScheduleUpdates());
  pm.addPass(createPlanTrainStepWithReport(plan, &report, 0));
  const bool planned =
      succeeded(runPipeline(pm, module, options.commandLineOptions));
  // A usage or IR error (reported already): the pass failed before it had
  // a report, or with a plan that fits (the verifier rejected the IR).
  if (!planned && (report.budgetBytes == 0 || report.feasible))
    return 1;
  // The plain-order peak is measured on the same footing as the planned one:
  // persistent state + arena-style live bytes + workspace.
  if (report.plainOrderPeakBytes == 0)
    report.plainOrderPeakBytes =
        plainOrderPeak + report.persistentBytes + report.workspaceBytes;
  return report.feasible ? 0 : 2;
}

} // namespace remat
