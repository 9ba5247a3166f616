//===- PlanCommand.cpp - remat-opt --budget -------------------------------===//

#include "PlanCommand.h"

#include "llvm/Support/raw_ostream.h"

#include "remat/Planning/TrainStepPlanner.h"
#include "remat/Tools/PlanPipeline.h"

using namespace mlir;

namespace remat {

int runPlanCommand(ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os) {
  const bool codegen = options.emit == "cpp" || options.emit == "cuda" ||
                       options.emit == "exe";
  if (options.emit != "report" && options.emit != "json" &&
      options.emit != "mlir" && !codegen) {
    llvm::errs() << "remat-opt: error: --emit=" << options.emit
                 << " is not supported with --budget; valid: report, json, "
                    "mlir, cpp, cuda, exe\n";
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

  if (codegen) {
    // The plan first (what the executable will run), then the code; a plan
    // that does not fit is reported and nothing is generated.
    printPlanReport(report, llvm::outs());
    if (status != 0)
      return status;
    return runEmitCommand(module, report, options.codegen);
  }
  if (options.emit == "json")
    printPlanReportJson(report, os);
  else if (options.emit == "mlir")
    module.print(os);
  else
    printPlanReport(report, os);
  return status;
}

} // namespace remat
