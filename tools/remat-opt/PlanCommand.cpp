//===- PlanCommand.cpp - remat-opt --budget -------------------------------===//

#include "PlanCommand.h"

#include "remat/Analysis/MemoryProfile.h"
#include "remat/Passes/Passes.h"
#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

using namespace mlir;

namespace remat {

/// Runs `pm` with the standard command-line instrumentation
/// (--mlir-print-ir-after-all, --mlir-timing, ...).
static LogicalResult runWithCLOptions(PassManager &pm, ModuleOp module) {
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  return pm.run(module);
}

int runPlanCommand(ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os) {
  if (options.emit != "report" && options.emit != "json" && options.emit != "mlir") {
    llvm::errs() << "remat-opt: error: --emit=" << options.emit
                 << " is not supported with --budget; valid: report, json, mlir\n";
    return 1;
  }
  MLIRContext *context = module.getContext();
  if (!module.lookupSymbol("train_step")) {
    PassManager pm(context);
    pm.addNestedPass<func::FuncOp>(createFuseGelu());
    AutodiffOptions autodiff;
    autodiff.loss = options.loss;
    autodiff.labels = options.labels;
    autodiff.logits = options.logits;
    autodiff.optimizer = options.optimizer;
    autodiff.lr = options.lr;
    autodiff.momentum = options.momentum;
    autodiff.nesterov = options.nesterov;
    autodiff.weightDecay = options.weightDecay;
    pm.addPass(createAutodiff(autodiff));
    if (failed(runWithCLOptions(pm, module)))
      return 1;
  }
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  // The peak before updates move up, for the report.
  int64_t plainOrderPeak = computeMemoryProfile(step).peakBytes;

  PlanReport report;
  PlanTrainStepOptions plan;
  plan.budget = options.budget;
  plan.strategy = options.strategy;
  plan.target = options.target;
  plan.milpSeconds = options.milpSeconds;
  plan.costTable = options.costTable;
  plan.workspace = options.workspace;
  PassManager pm(context);
  pm.addNestedPass<func::FuncOp>(createScheduleUpdates());
  pm.addPass(createPlanTrainStepWithReport(plan, &report, 0));
  bool planned = succeeded(runWithCLOptions(pm, module));
  if (!planned && report.budgetBytes == 0)
    return 1; // a usage or IR error, already reported
  // The plain-order peak is measured on the same footing as the planned one:
  // persistent state + arena-style live bytes + workspace.
  if (report.plainOrderPeakBytes == 0)
    report.plainOrderPeakBytes =
        plainOrderPeak + report.persistentBytes + report.workspaceBytes;

  if (options.emit == "json")
    printPlanReportJson(report, os);
  else if (options.emit == "mlir")
    module.print(os);
  else
    printPlanReport(report, os);
  return report.feasible ? 0 : 2;
}

} // namespace remat
