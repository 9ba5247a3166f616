//===- ExplorerCommand.cpp - remat-opt --emit=html [--compare ...] --------===//
//
// Plans a built @train_step once per compared variant (each on its own copy
// of the module), then, for a comparison, sweeps budgets from the memory
// floor to the baseline peak for every strategy, and writes one explorer
// page. Progress goes to stderr: a sweep of a large model takes a while.
//
//===----------------------------------------------------------------------===//

#include "ExplorerCommand.h"

#include "remat/Planning/ByteSize.h"
#include "remat/Planning/PlanTimeline.h"
#include "remat/Planning/Strategies.h"
#include "remat/Target/PlanViews.h"
#include "remat/Tools/PlanPipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;

namespace remat {

namespace {

/// The variants --compare names, each a copy of the command line's plan
/// with its strategy or budget replaced. Empty with a message on bad input.
std::vector<PlanTrainStepOptions>
parseComparison(const ExplorerCommandOptions &options, std::string &error) {
  std::vector<PlanTrainStepOptions> variants;
  if (options.compare.empty())
    return {options.plan};
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(options.compare).split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    item = item.trim();
    PlanTrainStepOptions variant = options.plan;
    if (item.consume_front("budget=")) {
      std::string why;
      if (!parseByteSize(item.str(), why)) {
        error = "--compare: budget '" + item.str() + "': " + why;
        return {};
      }
      variant.budget = item.str();
    } else if (plan::parseStrategy(item)) {
      variant.strategy = item.str();
    } else {
      error = "--compare: '" + item.str() +
              "' is neither a strategy (none, all, sqrt, milp, auto) nor "
              "budget=SIZE";
      return {};
    }
    variants.push_back(variant);
  }
  if (variants.size() < 2)
    error = "--compare needs at least two plans, e.g. --compare auto,sqrt or "
            "--compare budget=6GB,budget=8GB";
  return variants;
}

/// Plans a copy of `module` with `options` and returns the planned copy
/// (its report in `report`). Fails only on a planning error: an infeasible
/// budget is a report with feasible == false. `quiet` also hides the
/// "no plan fits" error, which the page shows.
FailureOr<OwningOpRef<ModuleOp>> planCopy(ModuleOp module,
                                          const PlanTrainStepOptions &options,
                                          bool quiet, PlanReport &report) {
  OwningOpRef<ModuleOp> copy = module.clone();
  int status;
  {
    ScopedDiagnosticHandler hideInfeasible(
        module.getContext(), [&](Diagnostic &d) {
          return success(quiet || llvm::StringRef(d.str()).contains(
                                      "remat-plan: no plan fits"));
        });
    status = planTrainStepPipeline(*copy, options, report,
                                   /*commandLineOptions=*/false);
  }
  if (status == 1)
    return failure();
  return copy;
}

} // namespace

int runExplorerCommand(ModuleOp module, const ExplorerCommandOptions &options,
                       llvm::raw_ostream &os) {
  std::string error;
  std::vector<PlanTrainStepOptions> variants = parseComparison(options, error);
  if (!error.empty()) {
    llvm::errs() << "remat-opt: error: " << error << "\n";
    return 1;
  }
  // Every variant shares the command line's target and cost table.
  std::optional<CostModel> costModel = planCostModel(options.plan);
  if (!costModel)
    return 1;
  std::vector<ExplorerPlan> plans;
  bool allFit = true;
  for (auto [index, variant] : llvm::enumerate(variants)) {
    PlanTrainStepOptions withFloor = variant;
    withFloor.reportFloor = true; // the page shows each plan's memory floor
    ExplorerPlan plan;
    auto planned = planCopy(module, withFloor, false, plan.report);
    if (failed(planned))
      return 1;
    plan.timeline = buildPlanTimeline(
        (*planned)->lookupSymbol<func::FuncOp>("train_step"), plan.report,
        *costModel);
    plan.label = plan.report.strategy + " at " +
                 formatBytes(plan.report.budgetBytes);
    llvm::errs() << "remat-opt: plan " << index + 1 << "/" << variants.size()
                 << ": " << plan.label << ": "
                 << (plan.report.feasible ? "fits" : "does not fit")
                 << ", peak " << formatBytes(plan.report.peakBytes) << "\n";
    allFit &= plan.report.feasible;
    plans.push_back(std::move(plan));
  }

  // The sweep: every strategy at budgets from the floor to the baseline.
  std::vector<SweepPoint> sweep;
  if (plans.size() > 1 && options.sweepPoints > 0) {
    int64_t floor = INT64_MAX, baseline = 0;
    for (const ExplorerPlan &plan : plans) {
      if (plan.report.minimumFeasibleBytes)
        floor = std::min(floor, *plan.report.minimumFeasibleBytes);
      baseline = std::max(baseline, plan.report.baselinePeakBytes);
    }
    std::set<std::string> strategies = {"none", "all", "sqrt", "auto"};
    for (const PlanTrainStepOptions &variant : variants)
      strategies.insert(variant.strategy);
    if (floor == INT64_MAX || floor > baseline)
      floor = baseline;
    const int points = options.sweepPoints;
    int done = 0;
    for (const std::string &strategy : strategies)
      for (int i = 0; i < points; ++i) {
        const int64_t budget =
            points == 1 ? baseline
                        : floor + (baseline - floor) * i / (points - 1);
        PlanTrainStepOptions point = options.plan;
        point.strategy = strategy;
        point.budget = std::to_string(budget);
        point.reportFloor = false;
        llvm::errs() << "remat-opt: sweep " << ++done << "/"
                     << strategies.size() * points << ": " << strategy
                     << " at " << formatBytes(budget) << "\n";
        // A sweep point needs only its report, not the plan's timeline.
        PlanReport report;
        if (failed(planCopy(module, point, true, report)))
          return 1;
        sweep.push_back({strategy, budget, report.feasible,
                         report.estimatedStepSeconds});
      }
  }
  writeHtmlExplorer(options.model, plans, sweep, os);
  return allFit ? 0 : 2;
}

} // namespace remat
