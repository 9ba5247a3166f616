//===- PlanCommand.cpp - remat-opt --budget -------------------------------===//

#include "PlanCommand.h"

#include "remat/Planning/TrainStepPlanner.h"
#include "remat/Tools/PlanPipeline.h"

using namespace mlir;

namespace remat {

int runPlanCommand(ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os) {
  if (options.emit != "report" && options.emit != "json" && options.emit != "mlir") {
    llvm::errs() << "remat-opt: error: --emit=" << options.emit
                 << " is not supported with --budget; valid: report, json, mlir\n";
    return 1;
  }
  AutodiffOptions autodiff;
  autodiff.loss = options.loss;
  autodiff.labels = options.labels;
  autodiff.logits = options.logits;
  autodiff.optimizer = options.optimizer;
  autodiff.lr = options.lr;
  autodiff.momentum = options.momentum;
  autodiff.nesterov = options.nesterov;
  autodiff.weightDecay = options.weightDecay;
  if (failed(buildTrainStep(module, autodiff, /*commandLineOptions=*/true)))
    return 1;

  PlanPipelineOptions plan;
  plan.budget = options.budget;
  plan.strategy = options.strategy;
  plan.target = options.target;
  plan.milpSeconds = options.milpSeconds;
  plan.costTable = options.costTable;
  plan.workspace = options.workspace;
  plan.commandLineOptions = true;
  PlanReport report;
  int status = planTrainStepPipeline(module, plan, report);
  if (status == 1)
    return 1;

  if (options.emit == "json")
    printPlanReportJson(report, os);
  else if (options.emit == "mlir")
    module.print(os);
  else
    printPlanReport(report, os);
  return status;
}

} // namespace remat
