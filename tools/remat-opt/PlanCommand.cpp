//===- PlanCommand.cpp - remat-opt --budget -------------------------------===//

#include "PlanCommand.h"
#include "ExplorerCommand.h"
#include "PlannedIrPrinter.h"

#include "llvm/Support/raw_ostream.h"

#include "remat/Planning/PlanTimeline.h"
#include "remat/Planning/TrainStepPlanner.h"
#include "remat/Target/PlanViews.h"
#include "remat/Tools/PlanPipeline.h"

using namespace mlir;

namespace remat {

int runPlanCommand(ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os) {
  const bool codegen = options.emit == "cpp" || options.emit == "cuda" ||
                       options.emit == "exe";
  const bool view = options.emit == "plan" || options.emit == "trace" ||
                    options.emit == "memory-snapshot";
  const bool html = options.emit == "html";
  if (options.emit != "report" && options.emit != "json" &&
      options.emit != "mlir" && !codegen && !view && !html) {
    llvm::errs() << "remat-opt: error: --emit=" << options.emit
                 << " is not supported with --budget; valid: report, json, "
                    "mlir, plan, trace, memory-snapshot, html, cpp, cuda, exe\n";
    return 1;
  }
  if (failed(buildTrainStep(module, options.autodiff, options.fusion,
                            options.precision, /*commandLineOptions=*/true)))
    return 1;
  if (html) {
    ExplorerCommandOptions explorer;
    explorer.plan = options.plan;
    explorer.compare = options.compare;
    explorer.sweepPoints = options.sweepPoints;
    explorer.model = options.model;
    return runExplorerCommand(module, explorer, os);
  }
  if (!options.compare.empty()) {
    llvm::errs() << "remat-opt: error: --compare needs --emit=html\n";
    return 1;
  }
  PlanReport report;
  int status = planTrainStepPipeline(module, options.plan, report,
                                     /*commandLineOptions=*/true);
  if (status == 1)
    return 1;

  // Output that is not the report (the IR, a view) still leaves the user
  // the report's verdict when nothing fits: tools that discard the output of
  // a failed run (Compiler Explorer) show stderr.
  if (status == 2 && options.emit != "report" && options.emit != "json" &&
      !codegen)
    printPlanReport(report, llvm::errs());

  if (codegen) {
    // The plan first (what the executable will run), then the code; a plan
    // that does not fit is reported and nothing is generated.
    printPlanReport(report, llvm::outs());
    if (status != 0)
      return status;
    return runEmitCommand(module, report, options.autodiff.optimizer,
                          options.codegen);
  }
  if (view) {
    // The views show the plan that remat-plan chose (for an infeasible
    // budget, its lowest-memory plan), with the cost model it used.
    std::optional<CostModel> costModel = planCostModel(options.plan);
    if (!costModel)
      return 1;
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    PlanTimeline timeline = buildPlanTimeline(step, report, *costModel);
    if (options.emit == "plan")
      writePlanListing(timeline, report, os);
    else if (options.emit == "trace")
      writeChromeTrace(timeline, report, os);
    else
      writeMemorySnapshot(timeline, report, os);
    return status;
  }
  if (options.emit == "json")
    printPlanReportJson(report, os);
  else if (options.emit == "mlir")
    printPlannedModule(module, report, os);
  else
    printPlanReport(report, os);
  return status;
}

} // namespace remat
