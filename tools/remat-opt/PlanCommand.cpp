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
  if (failed(buildTrainStep(module, options.autodiff, options.fusion,
                            /*commandLineOptions=*/true)))
    return 1;
  PlanReport report;
  int status = planTrainStepPipeline(module, options.plan, report,
                                     /*commandLineOptions=*/true);
  if (status == 1)
    return 1;

  if (codegen) {
    // The plan first (what the executable will run), then the code; a plan
    // that does not fit is reported and nothing is generated.
    printPlanReport(report, llvm::outs());
    if (status != 0)
      return status;
    return runEmitCommand(module, report, options.autodiff.optimizer,
                          options.codegen);
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
